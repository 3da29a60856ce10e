"""Sorting and counting a tensor's entries, as torch does: ``sort``, ``argsort``, ``topk``,
``nonzero``, ``unique``, ``bincount``, ``histc`` and ``histogram`` (the ``Sorting`` part of
``Tensor``).

None of them is a primitive: ``sort`` and ``topk`` pick their values with a getitem, whose
rule sends the gradient back to the entries picked; the others give indices or counts,
which take no gradient (torch has none for ``unique`` and ``bincount`` either: its
backward raises). ``values_indices`` and ``histogram_result`` are what they return,
as torch's ``torch.return_types``.

Example:
    >>> from chaingrad import Tensor
    >>> Tensor([3.0, 1.0, 2.0]).sort()
    values_indices(values=tensor([1., 2., 3.]), indices=tensor([1, 2, 0]))
"""

from __future__ import annotations

from collections import namedtuple
from fractions import Fraction
from typing import Any

import numpy as np

from . import dtypes
from .arrays import SelfTensor, normalize_axis
from .promotion import lift

values_indices = namedtuple("values_indices", ["values", "indices"])
"""What ``max(dim)``, ``min(dim)``, ``sort`` and ``topk`` return, as torch's
``torch.return_types.max`` (and ``sort``, ``topk``)."""

histogram_result = namedtuple("histogram_result", ["hist", "bin_edges"])
"""What ``histogram`` returns, as torch's ``torch.return_types.histogram``."""


class Sorting:
    """The sorting and counting methods of ``Tensor``."""

    __slots__ = ()

    def sort(self, dim: int = -1, descending: bool = False, *,
             stable: bool = False) -> values_indices:
        """The entries along ``dim`` in order, and where each came from, as torch.sort:
        ``(values, indices)``. Equal entries keep their order (a stable sort, which torch
        gives with ``stable=True``); the gradient of ``values`` goes back to the entries
        they came from (a ``getitem``).

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([3.0, 1.0, 2.0])
            >>> x.sort().values.tolist(), x.sort(descending=True).indices.tolist()
            ([1.0, 2.0, 3.0], [0, 2, 1])
        """
        indices = self.argsort(dim, descending, stable=stable)
        return values_indices(self._take_along(indices._value, dim, "sort"), indices)

    def argsort(self: SelfTensor, dim: int = -1, descending: bool = False, *,
                stable: bool = False) -> SelfTensor:
        """Where each entry of ``sort(dim, descending)`` comes from, int64, as torch.argsort
        (equal entries in their order)."""
        if self.ndim == 0:
            return self._constant(np.zeros((), dtype=np.int64))
        ax = normalize_axis(dim, self.ndim, "sort")
        x = self._value
        if descending:  # stable: the last of equal entries of the flipped array comes first
            n = x.shape[ax]
            order = n - 1 - np.flip(np.argsort(np.flip(x, ax), axis=ax, kind="stable"), ax)
        else:
            order = np.argsort(x, axis=ax, kind="stable")
        return self._constant(order.astype(np.int64))

    def topk(self, k: int, dim: int = -1, largest: bool = True,
             sorted: bool = True) -> values_indices:  # noqa: A002 - torch's name
        """The ``k`` largest entries along ``dim`` (the smallest with ``largest=False``),
        best first, and where they came from, as torch.topk: ``(values, indices)``; the
        gradient goes to the entries picked. Equal entries are taken in their order.

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([1.0, 5.0, 3.0], requires_grad=True)
            >>> top = x.topk(2)
            >>> top.values.sum().backward()
            >>> top.indices.tolist(), x.grad.tolist()
            ([1, 2], [0.0, 1.0, 1.0])
        """
        n = self.shape[normalize_axis(dim, self.ndim, "topk")] if self.ndim else 1
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"topk: k must be an int, got {k!r}")
        if not 0 <= k <= n:
            raise RuntimeError(f"topk: selected index k out of range (k={k}, the dim has {n} "
                               "entries)")
        order = self.argsort(dim, descending=largest)
        if self.ndim:
            ax = normalize_axis(dim, self.ndim, "topk")
            order = self._constant(np.take(order._value, np.arange(k), axis=ax))
        return values_indices(self._take_along(order._value, dim, "topk"), order)

    def _take_along(self: SelfTensor, indices: np.ndarray, dim: int, op: str) -> SelfTensor:
        """The entries at ``indices`` along ``dim`` (numpy's take_along_axis), as a getitem
        whose gradient goes back to them."""
        if self.ndim == 0:
            return self.reshape(())
        ax = normalize_axis(dim, self.ndim, op)
        grid = list(np.indices(indices.shape, sparse=True))
        grid[ax] = indices
        return self[tuple(grid)]

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """The indices of the nonzero entries, as torch.nonzero: an int64 tensor of one row
        per entry, in row-major order, or (``as_tuple=True``) one 1-D tensor per dim. No
        gradient.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([[0.0, 2.0], [3.0, 0.0]]).nonzero().tolist()
            [[0, 1], [1, 0]]
        """
        found = np.nonzero(self._value.reshape(self.shape or (1,)))
        if as_tuple:
            return tuple(self._constant(i.astype(np.int64)) for i in found)
        if self.ndim == 0:
            return self._constant(np.zeros((int(found[0].size), 0), dtype=np.int64))
        return self._constant(np.stack(found, axis=1).astype(np.int64))

    def unique(self, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
               return_counts: bool = False, dim: int | None = None) -> Any:
        """The distinct entries in ascending order (of all, flattened; or with ``dim``, the
        distinct slices along ``dim``, ordered as tuples), as torch.unique: the tensor, or
        with ``return_inverse`` and/or ``return_counts`` a tuple adding where each entry
        (slice) went, in the input's shape (``dim``'s length), and how often each occurs,
        both int64. ``sorted=False`` is accepted and sorts too, as torch's on the CPU; each
        nan is distinct, as in torch. No gradient.

        Example:
            >>> from chaingrad import Tensor
            >>> out, inverse, counts = Tensor([3.0, 1.0, 3.0]).unique(return_inverse=True,
            ...                                                        return_counts=True)
            >>> out.tolist(), inverse.tolist(), counts.tolist()
            ([1.0, 3.0], [1, 0, 1], [1, 2])
        """
        x = self._value
        if dim is None:
            values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True,
                                                return_counts=True, equal_nan=False)
            inverse = inverse.reshape(x.shape)
        else:
            ax = normalize_axis(dim, max(self.ndim, 1), "unique")
            if any(n == 0 for i, n in enumerate(x.shape) if i != ax):
                raise RuntimeError("unique: There are 0 sized dimensions, and they aren't "
                                   "selected, so unique cannot be applied")
            if x.shape[ax] == 0:
                values, inverse, counts = x, np.zeros(0, np.int64), np.zeros(0, np.int64)
            else:
                values, inverse, counts = np.unique(x.reshape(x.shape or (1,)), axis=ax,
                                                    return_inverse=True, return_counts=True,
                                                    equal_nan=False)
            inverse = inverse.reshape(-1)
        out = self._constant(np.ascontiguousarray(values))
        found = ((self._constant(inverse.astype(np.int64)),) if return_inverse else ()) + (
            (self._constant(counts.astype(np.int64)),) if return_counts else ())
        return (out, *found) if found else out

    def bincount(self: SelfTensor, weights: Any = None, minlength: int = 0) -> SelfTensor:
        """How often each of 0, 1, ..., max(x) occurs in this 1-D tensor of integers >= 0
        (at least ``minlength`` counts), as torch.bincount: int64 counts, or with
        ``weights`` (one per entry) the weights' sums, float32 for float32 weights and
        float64 for any other, as torch's. No gradient.

        Example:
            >>> from chaingrad import Tensor
            >>> import chaingrad as torch
            >>> x = torch.tensor([1, 1, 3])
            >>> x.bincount().tolist(), x.bincount(torch.tensor([0.5, 1.0, 2.0])).tolist()
            ([0, 2, 0, 1], [0.0, 1.5, 0.0, 2.0])
        """
        x = self._value
        if x.dtype.kind not in "iu":
            raise NotImplementedError(f"bincount: \"bincount_cpu\" not implemented for "
                                      f"'{dtypes.scalar_type(x.dtype)}'")
        if x.ndim != 1 or (x.size and x.min() < 0):
            raise RuntimeError("bincount: bincount only supports 1-d non-negative integral "
                               "inputs.")
        if isinstance(minlength, bool) or not isinstance(minlength, (int, np.integer)):
            raise TypeError(f"bincount: minlength must be an int, got {minlength!r}")
        if minlength < 0:
            raise RuntimeError("bincount: minlength should be >= 0")
        if weights is None:
            return self._constant(np.bincount(x, minlength=int(minlength)).astype(np.int64))
        w = lift(weights, self)
        if w is None:
            raise TypeError(f"bincount: weights must be a Tensor, got {type(weights).__name__}")
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise RuntimeError("bincount: weights should be 1-d and have the same length as "
                               "input")
        dtype = np.float32 if w._value.dtype == np.float32 else np.float64
        sums = np.zeros(max(int(minlength), int(x.max()) + 1 if x.size else 0), dtype=dtype)
        np.add.at(sums, x, w._value.astype(dtype))  # in order, in that dtype: torch's sums
        return self._constant(sums)

    def histc(self: SelfTensor, bins: int = 100, min: float = 0,  # noqa: A002
              max: float = 0) -> SelfTensor:  # noqa: A002
        """How many entries fall in each of ``bins`` equal bins from ``min`` to ``max`` (the
        smallest and largest entry if both are 0), as torch.histc, in this tensor's dtype;
        entries outside are not counted, one equal to ``max`` goes in the last bin. An entry
        x goes in bin int((x - min) / (max - min) * bins), computed in x's dtype as torch
        computes it. No gradient.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([1.0, 2.0, 1.0]).histc(bins=4, min=0, max=3).tolist()
            [0.0, 2.0, 1.0, 0.0]
        """
        if self._value.dtype.kind != "f":
            raise RuntimeError(f"histc: \"histogram_cpu\" not implemented for "
                               f"'{dtypes.of(self._value.dtype).name}' (use a floating tensor)")
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
            raise RuntimeError(f"histc: bins must be > 0, got {bins!r}")
        x = self._value.reshape(-1)
        dtype = x.dtype.type
        low, high = dtype(min), dtype(max)
        if low == high and x.size:
            low, high = x.min(), x.max()
        if low == high:
            low, high = low - 1, high + 1
        if low > high:
            raise RuntimeError(f"histc: max must be larger than min, got min={min}, max={max}")
        inside = x[(x >= low) & (x <= high)]
        # torch's bin, in x's dtype: the right edge itself goes in the last bin
        place = ((inside - low) / (high - low) * dtype(bins)).astype(np.int64)
        counts = np.bincount(np.minimum(place, bins - 1), minlength=bins)
        return self._constant(counts.astype(x.dtype))

    def histogram(self, bins: Any = 100, *, range: Any = None,  # noqa: A002
                  weight: Any = None, density: bool = False) -> histogram_result:
        """A histogram, as torch.histogram: ``bins`` equal bins over ``range`` (the entries'
        smallest and largest by default), or the bin edges as a 1-D tensor; ``weight``
        counts each entry by its weight, ``density`` divides by the total times the bin
        width. Returns ``(hist, bin_edges)``; no gradient.

        Example:
            >>> from chaingrad import Tensor
            >>> h = Tensor([1.0, 2.0, 1.0]).histogram(2, range=(0.0, 2.0))
            >>> h.hist.tolist(), h.bin_edges.tolist()
            ([0.0, 3.0], [0.0, 1.0, 2.0])
        """
        if self._value.dtype.kind != "f":
            raise RuntimeError("histogram: needs a floating tensor, got "
                               f"{dtypes.of(self._value.dtype).name}")
        edges = bins._value if isinstance(bins, Sorting) else bins
        if not (isinstance(edges, np.ndarray) and edges.ndim == 1 and edges.size > 1) and (
                isinstance(edges, bool) or not isinstance(edges, (int, np.integer)) or edges < 1):
            raise RuntimeError(f"histogram: bins must be an int > 0 or a 1-D tensor of edges, "
                               f"got {bins!r}")
        x, dtype = self._value.reshape(-1), self._value.dtype
        if isinstance(edges, np.ndarray):
            edges = edges.astype(dtype)
        else:
            low, high = (x.min(), x.max()) if range is None and x.size else \
                (0, 0) if range is None else range
            low, high = dtype.type(low), dtype.type(high)
            if low == high:  # torch's: a bin of width 1 around the one value
                low, high = low - dtype.type(0.5), high + dtype.type(0.5)
            edges = _spaced(low, high, int(edges) + 1)
        inside = (x >= edges[0]) & (x <= edges[-1])
        bins = len(edges) - 1
        place = np.minimum(np.searchsorted(edges, x[inside], side="right") - 1, bins - 1)
        weights = None if weight is None else \
            np.asarray(lift(weight, self)._value, dtype=dtype).reshape(-1)[inside]
        counts = np.bincount(place, weights=weights, minlength=bins).astype(dtype)
        if density:
            counts = counts / (counts.sum() * np.diff(edges))
        return histogram_result(self._constant(counts.astype(dtype)), self._constant(edges))


def _spaced(low: np.floating, high: np.floating, count: int) -> np.ndarray:
    """``count`` evenly spaced numbers from low to high, both included, in their dtype, as
    torch's linspace computes them (its kernel compiled with fused multiply-adds): low +
    step * i for the first half, high - step * (count - 1 - i) for the rest, each product
    and sum rounded once (computed exactly with fractions)."""
    dtype = np.asarray(low).dtype
    step = (high - low) / dtype.type(max(count - 1, 1))

    def fused(a: float, k: int, c: float) -> float:
        return float(Fraction(float(a)) * k + Fraction(float(c)))

    half = count // 2
    return np.array([fused(step, i, low) if i < half else fused(-step, count - 1 - i, high)
                     for i in range(count)], dtype=dtype)
