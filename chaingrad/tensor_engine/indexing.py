"""Entries picked and placed by index or by mask, as torch does: ``gather``, ``scatter_add``,
``roll``, ``flip``, ``masked_fill`` (and ``masked_fill_``), ``tril`` and ``triu`` (the
``Indexing`` part of ``Tensor``).

Each is composed of the primitives that move entries, so none has a rule of its own:
``gather``, ``roll`` and ``flip`` are a getitem (``tensor_engine.rules.GETITEM``: the gradient goes
back to the entries picked), ``scatter_add`` a scatter (``SCATTER``: it reads the gradient
back at the index), ``masked_fill``, ``tril`` and ``triu`` a where (``WHERE``: the gradient
goes where the mask keeps x). ``x[index]`` itself, the getitem, is in ``tensor.py``.

Example:
    >>> from chaingrad import Tensor
    >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.gather(1, np.array([[1], [0]])).tolist(), x.roll(1, 0).tolist()
    ([[2.0], [3.0]], [[3.0, 4.0], [1.0, 2.0]])
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from .arrays import SelfTensor, normalize_axis, quietly
from .promotion import lift
from .rules import SCATTER, WHERE


class Indexing:
    """The methods of ``Tensor`` that pick or place entries by index or by mask."""

    __slots__ = ()

    def gather(self: SelfTensor, dim: int, index: Any) -> SelfTensor:
        """The entries along ``dim`` at ``index`` (an int64 tensor with this tensor's number
        of dims), as torch.gather: ``out[i][j] = x[i][index[i][j]]`` for dim 1; a getitem,
        whose gradient goes back to the entries picked.

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]])
            >>> x.gather(1, np.array([[1], [0]])).tolist()
            [[2.0], [3.0]]
        """
        picks = self._index_along("gather", dim, index)
        return self[picks]

    def scatter_add(self: SelfTensor, dim: int, index: Any, src: Any) -> SelfTensor:
        """x with the entries of ``src`` added along ``dim`` at ``index``, as
        torch.scatter_add (out of place): ``out[i][index[i][j]] += src[i][j]`` for dim 1. The
        additions are a ``scatter`` node (entries that meet add up), whose gradient reads
        g back at ``index``; x's gradient is g.

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor(np.zeros(3))
            >>> x.scatter_add(0, np.array([0, 0, 2]), Tensor([1.0, 2.0, 3.0])).tolist()
            [3.0, 0.0, 3.0]
        """
        picks = self._index_along("scatter_add", dim, index)
        source = lift(src, self, numbers=False)
        if source is None:
            raise TypeError(f"scatter_add: src must be a Tensor, got {type(src).__name__}")
        shape = np.broadcast_shapes(*(np.shape(p) for p in picks))
        if source.ndim != self.ndim or any(s < n for s, n in zip(source.shape, shape)):
            raise RuntimeError(f"scatter_add: src of shape {tuple(source.shape)} is smaller than "
                               f"index of shape {shape}")
        part = source[tuple(slice(0, n) for n in shape)] if tuple(source.shape) != shape \
            else source
        if part._value.dtype != self._value.dtype:
            part = part.to(self.dtype)
        rule = SCATTER.bind(picks, tuple(self.shape))
        return self + self._node(quietly(SCATTER.on_arrays, part._value, *rule.params), (part,),
                                rule)

    def _index_along(self, op: str, dim: int, index: Any) -> tuple:
        """gather's and scatter_add's index: the full index that picks, for each entry of
        ``index``, the entry of this tensor that it names along ``dim``."""
        array = index._value if isinstance(index, Indexing) else np.asarray(index)
        if self.ndim == 0:
            raise RuntimeError(f"{op}: needs a tensor of at least one dim, got a 0-d tensor")
        if array.dtype != np.int64:
            raise RuntimeError(f"{op}: Expected dtype int64 for index, got {array.dtype}")
        ax = normalize_axis(dim, self.ndim, op)
        if array.ndim != self.ndim:
            raise RuntimeError(f"{op}: Index tensor must have the same number of dimensions as "
                               f"input tensor ({array.ndim} and {self.ndim})")
        shape = self.shape
        if any(m > n for i, (m, n) in enumerate(zip(array.shape, shape)) if i != ax):
            raise RuntimeError(f"{op}: Size does not match at dimension {ax}: index "
                               f"{array.shape} is larger than input {tuple(self.shape)} away "
                               f"from dim {dim}")
        outside = (array < -shape[ax]) | (array >= shape[ax])
        if outside.any():
            raise RuntimeError(f"{op}: index {int(array[outside].flat[0])} is out of bounds for "
                               f"dimension {ax} with size {shape[ax]}")
        grid = list(np.indices(array.shape, sparse=True))
        grid[ax] = array
        return tuple(grid)

    def roll(self: SelfTensor, shifts: Any, dims: Any = None) -> SelfTensor:
        """The entries moved ``shifts`` places along ``dims``, those pushed off one end
        coming back at the other, as torch.roll (with no ``dims``, over the flattened
        tensor): entry i of the result is x[(i - shift) mod n], a getitem.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([1.0, 2.0, 3.0]).roll(1).tolist()
            [3.0, 1.0, 2.0]
        """
        shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
        if dims is None:
            if len(shifts) != 1:
                raise RuntimeError(f"roll: with no dims, give one shift, got {shifts}")
            return self.reshape(-1).roll(shifts, 0).reshape(self.shape)
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        if len(shifts) != len(dims):
            raise RuntimeError(f"roll: shifts and dimensions must align. shifts: "
                               f"{len(shifts)}, dims:{len(dims)}")
        out = self
        for shift, dim in zip(shifts, dims):
            if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)):
                raise TypeError(f"roll: shifts must be ints, got {shift!r}")
            ax = normalize_axis(dim, self.ndim, "roll")
            n = self.shape[ax]
            if n:
                out = out[(slice(None),) * ax + ((np.arange(n) - int(shift)) % n,)]
        return out

    def flip(self: SelfTensor, *dims: Any) -> SelfTensor:
        """The entries in reverse order along each of ``dims``, as torch.flip (``x.flip(0)``,
        ``x.flip(0, 1)`` or ``x.flip([0, 1])``): a getitem of reversed slices, whose gradient
        goes back where each entry came from. A copy, as torch's (not a view).

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]])
            >>> x.flip(0).tolist(), x.flip([0, 1]).tolist()
            ([[3.0, 4.0], [1.0, 2.0]], [[4.0, 3.0], [2.0, 1.0]])
        """
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        axes = [normalize_axis(d, max(self.ndim, 1), "flip") for d in dims]
        for ax in axes:
            if axes.count(ax) > 1:
                raise RuntimeError(f"flip: dim {ax} appears multiple times in the list of dims")
        if self.ndim == 0 or not axes:
            return self.clone()
        # every dim indexed by an array (reversed where flipped): a copy, as torch's flip
        out = self[np.ix_(*(np.arange(n - 1, -1, -1) if ax in axes else np.arange(n)
                            for ax, n in enumerate(self.shape)))]
        if out._rule is not None:  # named for grad_fn and explain: FlipBackward0, as torch's
            out._rule = out._rule.primitive.bind(*out._rule.params, name="flip")
        return out

    def masked_fill(self: SelfTensor, mask: Any, value: Any) -> SelfTensor:
        """``value`` where ``mask`` is True, x elsewhere, as torch.masked_fill: a bool
        ``mask`` broadcast to x's shape; ``value`` any number (inf, -inf and nan too, as
        attention's mask uses them) or a 0-d tensor, in x's dtype. Composed of ``where``:
        the gradient is g where the mask is False (and, to a value that requires grad, the
        sum of g where it is True).

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]])
            >>> x.masked_fill(Tensor(np.eye(2)) == 0, float("-inf"))
            tensor([[1., -inf],
                    [-inf, 4.]])
        """
        where_mask = self._broadcast_mask("masked_fill", mask)
        fill = self._fill_tensor("masked_fill", value)
        data = np.where(where_mask, fill._value, self._value).astype(self._value.dtype, copy=False)
        return self._node(data, (fill, self), WHERE.bind(where_mask))

    def masked_fill_(self: SelfTensor, mask: Any, value: Any) -> SelfTensor:
        """``masked_fill`` in place (recorded in a graph as every in-place op: see
        ``InPlace._in_place``)."""
        self._broadcast_mask("masked_fill_", mask)
        self._fill_tensor("masked_fill_", value)
        return self._in_place("masked_fill_", lambda x: x.masked_fill(mask, value), value)

    def _broadcast_mask(self, op: str, mask: Any) -> np.ndarray:
        """A boolean mask (a Tensor or an array) broadcast to this tensor's shape. (Not
        named ``_mask``, nor the next ``_fill_value``: numpy's masked arrays, which
        matplotlib makes of a Tensor, read those attributes of any object.)"""
        array = mask._value if isinstance(mask, Indexing) else np.asarray(mask)
        if array.dtype != np.bool_:
            raise RuntimeError(f"{op}: only supports boolean masks, but got mask with dtype "
                               f"{array.dtype}")
        try:
            return np.broadcast_to(array, self._value.shape)
        except ValueError:
            raise RuntimeError(f"{op}: the mask of shape {array.shape} does not broadcast to "
                               f"the tensor's shape {tuple(self.shape)}") from None

    def _fill_tensor(self: SelfTensor, op: str, value: Any) -> SelfTensor:
        """masked_fill's value as a 0-d tensor of this tensor's dtype."""
        if isinstance(value, Indexing):
            if value.ndim != 0:
                raise RuntimeError(f"{op}: only supports a 0-dimensional value tensor, but got "
                                   f"tensor with {value.ndim} dimension(s)")
            return value if value._value.dtype == self._value.dtype else value.to(self.dtype)
        if isinstance(value, (Real, np.number)) and not isinstance(value, (bool, np.bool_)) \
                or isinstance(value, (bool, np.bool_)):
            return self._constant(quietly(np.asarray(value).astype, self._value.dtype))
        raise TypeError(f"{op}: value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__}")

    def tril(self: SelfTensor, diagonal: int = 0) -> SelfTensor:
        """The entries on and below the ``diagonal`` of the last two dims, zeros above, as
        torch.tril (``diagonal`` > 0 keeps that many diagonals above too); composed of
        ``where``, so the gradient is g on and below the diagonal.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor(np.ones((3, 3))).tril().tolist()
            [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
        """
        return self._triangle("tril", diagonal, lower=True)

    def triu(self: SelfTensor, diagonal: int = 0) -> SelfTensor:
        """The entries on and above the ``diagonal`` of the last two dims, zeros below, as
        torch.triu (see ``tril``)."""
        return self._triangle("triu", diagonal, lower=False)

    def _triangle(self: SelfTensor, op: str, diagonal: int, lower: bool) -> SelfTensor:
        if self.ndim < 2:
            raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, got shape "
                               f"{tuple(self.shape)}")
        if isinstance(diagonal, bool) or not isinstance(diagonal, (int, np.integer)):
            raise TypeError(f"{op}: diagonal must be an int, got {diagonal!r}")
        rows, cols = self.shape[-2:]
        keep = np.tri(rows, cols, int(diagonal) if lower else int(diagonal) - 1, dtype=bool)
        return self.masked_fill(keep if not lower else ~keep, 0)
