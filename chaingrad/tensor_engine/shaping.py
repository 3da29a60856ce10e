"""A tensor's entries in another shape, as torch gives them: views (``view``, ``flatten``,
``squeeze``, ``unsqueeze``, ``transpose``, ``t``, ``T``, ``mT``, ``expand``, ...),
``repeat``, and the pieces of ``split``, ``chunk``, ``unbind`` and ``narrow`` (the
``Shaping`` part of ``Tensor``).

Each is composed of the four primitives that move entries, in ``tensor.py``: ``reshape``,
``permute``, ``broadcast_to`` and the getitem ``x[index]`` (a piece is a slice), whose rules
move the gradient back; none has a rule of its own.

Example:
    >>> from chaingrad import Tensor
    >>> x = Tensor(np.zeros((2, 3)))
    >>> x.T.shape, x.unsqueeze(0).shape, [tuple(p.shape) for p in x.split(2, dim=1)]
    (chaingrad.Size([3, 2]), chaingrad.Size([1, 2, 3]), [(2, 2), (2, 1)])
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

from . import dtypes
from .arrays import Dims, SelfTensor, normalize_axes, normalize_axis


class Shaping:
    """The methods of ``Tensor`` that give its entries in another shape, or in pieces."""

    __slots__ = ()

    def view(self: SelfTensor, *shape: Any) -> SelfTensor:
        """``reshape`` (chaingrad's arrays can always be viewed so; ``view(dtype)`` is not
        supported)."""
        if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
            raise NotImplementedError("chaingrad.Tensor has no view(dtype) yet")
        return self.reshape(*shape)

    def ravel(self: SelfTensor) -> SelfTensor:
        """The entries as one dim (a reshape)."""
        return self.reshape(-1)

    def view_as(self: SelfTensor, other: Any) -> SelfTensor:
        """This tensor in ``other``'s shape (a reshape)."""
        return self.reshape(other.shape)

    def reshape_as(self: SelfTensor, other: Any) -> SelfTensor:
        """This tensor in ``other``'s shape (a reshape)."""
        return self.reshape(other.shape)

    def flatten(self: SelfTensor, start_dim: int = 0, end_dim: int = -1) -> SelfTensor:
        """Merge the dims from ``start_dim`` to ``end_dim`` into one (a reshape).

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor(np.zeros((2, 3, 4))).flatten(1).shape
            chaingrad.Size([2, 12])
        """
        if self.ndim == 0:
            return self.reshape(1)
        start = normalize_axis(start_dim, self.ndim, "flatten")
        end = normalize_axis(end_dim, self.ndim, "flatten")
        if start > end:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                             f"for shape {tuple(self.shape)}")
        return self.reshape(self.shape[:start] + (-1,) + self.shape[end + 1:])

    def unflatten(self: SelfTensor, dim: int, sizes: tuple[int, ...]) -> SelfTensor:
        """Dim ``dim`` split into ``sizes`` (a reshape)."""
        ax = normalize_axis(dim, self.ndim, "unflatten")
        return self.reshape(self.shape[:ax] + tuple(sizes) + self.shape[ax + 1:])

    def unsqueeze(self: SelfTensor, dim: int) -> SelfTensor:
        """A new dim of size 1 at ``dim`` (a reshape)."""
        ax = normalize_axis(dim, self.ndim + 1, "unsqueeze")
        return self.reshape(self.shape[:ax] + (1,) + self.shape[ax:])

    def squeeze(self: SelfTensor, dim: Dims = None) -> SelfTensor:
        """Without the dims of size 1 (only ``dim``'s, if given: a dim of another size
        stays, as in torch) (a reshape)."""
        axes = normalize_axes(dim, self.ndim, "squeeze") if self.ndim else ()
        shape = tuple(n for i, n in enumerate(self.shape) if not (i in axes and n == 1))
        return self.reshape(shape)

    def transpose(self: SelfTensor, dim0: int, dim1: int) -> SelfTensor:
        """``dim0`` and ``dim1`` swapped, as torch.transpose (a 2-D ``x.transpose(0, 1)`` is
        its transpose); ``permute`` reorders all dims at once.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([[1.0, 2.0]]).transpose(0, 1).tolist()
            [[1.0], [2.0]]
        """
        ndim = max(self.ndim, 1)
        a, b = normalize_axis(dim0, ndim, "transpose"), normalize_axis(dim1, ndim, "transpose")
        if self.ndim == 0:
            return self
        dims = list(range(self.ndim))
        dims[a], dims[b] = dims[b], dims[a]
        return self.permute(dims)

    def t(self: SelfTensor) -> SelfTensor:
        """The transpose of a tensor of at most 2 dims."""
        if self.ndim > 2:
            raise RuntimeError(f"t: expects a tensor with <= 2 dimensions, got shape "
                               f"{tuple(self.shape)} (use transpose(dim0, dim1) or mT)")
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def T(self: SelfTensor) -> SelfTensor:
        """All dims reversed (a 2-D tensor's transpose)."""
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self: SelfTensor) -> SelfTensor:
        """The last two dims swapped (a batch of matrices, each transposed)."""
        if self.ndim < 2:
            raise RuntimeError(f"mT: needs at least 2 dims, got shape {tuple(self.shape)}")
        return self.transpose(-2, -1)

    def expand(self: SelfTensor, *sizes: Any) -> SelfTensor:
        """``broadcast_to``, where -1 keeps a dim's size (torch.expand)."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        lead = len(sizes) - self.ndim
        shape = tuple(self.shape[i - lead] if n == -1 and i >= lead else n
                      for i, n in enumerate(sizes))
        return self.broadcast_to(shape)

    def expand_as(self: SelfTensor, other: Any) -> SelfTensor:
        """Broadcast to ``other``'s shape."""
        return self.broadcast_to(other.shape)

    def repeat(self: SelfTensor, *sizes: Any) -> SelfTensor:
        """The tensor tiled ``sizes`` times along each dim (new leading dims if there are
        more sizes than dims), as torch.Tensor.repeat: a reshape, a broadcast_to and a
        reshape, so the gradient is g summed over the copies.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([1.0, 2.0]).repeat(2, 2).tolist()
            [[1.0, 2.0, 1.0, 2.0], [1.0, 2.0, 1.0, 2.0]]
        """
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0
                   for n in sizes):
            raise TypeError(f"repeat: sizes must be ints >= 0, got {sizes!r}")
        if len(sizes) < self.ndim:
            raise RuntimeError(f"repeat: number of dimensions of repeat dims ({len(sizes)}) "
                               f"can not be smaller than number of dimensions of tensor "
                               f"({self.ndim})")
        shape = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
        spread = tuple(d for n in shape for d in (1, n))  # a 1 before each dim ...
        copies = tuple(d for r, n in zip(sizes, shape) for d in (r, n))  # ... to repeat
        return self.reshape(spread).broadcast_to(copies).reshape(
            tuple(r * n for r, n in zip(sizes, shape)))

    def split(self: SelfTensor, split_size_or_sections: Any,
              dim: int = 0) -> tuple[SelfTensor, ...]:
        """Pieces along ``dim``: of ``split_size_or_sections`` entries each (the last may be
        smaller), or of the sizes in that list, as torch.split; each piece is a slice,
        whose gradient goes back where it came from.

        Example:
            >>> from chaingrad import Tensor
            >>> [p.tolist() for p in Tensor([1.0, 2.0, 3.0]).split(2)]
            [[1.0, 2.0], [3.0]]
        """
        ax = normalize_axis(dim, self.ndim, "split")
        n = self.shape[ax]
        sizes = split_size_or_sections
        if isinstance(sizes, (int, np.integer)) and not isinstance(sizes, bool):
            if sizes <= 0 and not (sizes == 0 and n == 0):
                raise RuntimeError(f"split: split_size must be positive, got {sizes}")
            sizes = [int(sizes)] * (n // sizes) + ([n % sizes] if n % sizes else []) \
                if sizes else [0]
        elif isinstance(sizes, (list, tuple)) and all(
                isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
                for s in sizes):
            if sum(sizes) != n:
                raise RuntimeError(f"split: split_with_sizes expects split_sizes to sum exactly "
                                   f"to {n} (input tensor's size at dimension {ax}), but got "
                                   f"split_sizes={list(sizes)}")
        else:
            raise TypeError(f"split: expected an int or a list of ints >= 0, got "
                            f"{split_size_or_sections!r}")
        ends = list(accumulate(int(s) for s in sizes))
        return tuple(self[(slice(None),) * ax + (slice(end - size, end),)]
                     for size, end in zip(sizes, ends))

    def chunk(self: SelfTensor, chunks: int, dim: int = 0) -> tuple[SelfTensor, ...]:
        """At most ``chunks`` pieces along ``dim``, each of ceil(n / chunks) entries (the
        last may be smaller; fewer pieces when they run out), as torch.chunk.

        Example:
            >>> from chaingrad import Tensor
            >>> [p.shape[0] for p in Tensor(np.zeros(5)).chunk(3)]
            [2, 2, 1]
        """
        if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks < 1:
            raise RuntimeError(f"chunk: chunk expects `chunks` to be greater than 0, got: "
                               f"{chunks!r}")
        n = self.shape[normalize_axis(dim, self.ndim, "chunk")]
        return self.split(max(-(-n // int(chunks)), 1), dim)

    def unbind(self: SelfTensor, dim: int = 0) -> tuple[SelfTensor, ...]:
        """The slices along ``dim``, each without that dim, as torch.unbind.

        Example:
            >>> from chaingrad import Tensor
            >>> [t.tolist() for t in Tensor([[1.0, 2.0], [3.0, 4.0]]).unbind(1)]
            [[1.0, 3.0], [2.0, 4.0]]
        """
        ax = normalize_axis(dim, self.ndim, "unbind")
        return tuple(self[(slice(None),) * ax + (i,)] for i in range(self.shape[ax]))

    def narrow(self: SelfTensor, dim: int, start: Any, length: int) -> SelfTensor:
        """The ``length`` entries from ``start`` along ``dim`` (a negative ``start`` counts
        from the end), as torch.narrow: a slice, whose gradient goes back where it came from.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).narrow(1, 1, 2).tolist()
            [[2.0, 3.0], [5.0, 6.0]]
        """
        if self.ndim == 0:
            raise RuntimeError("narrow: narrow() cannot be applied to a 0-dim tensor.")
        ax = normalize_axis(dim, self.ndim, "narrow")
        if hasattr(start, "_value"):  # torch takes a 0-dim integer tensor too
            start = start.item()
        if isinstance(start, bool) or not isinstance(start, (int, np.integer)):
            raise TypeError(f"narrow: start must be an int, got {start!r}")
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)):
            raise TypeError(f"narrow: length must be an int, got {length!r}")
        n = self.shape[ax]
        if not -n <= start <= n:
            raise IndexError(f"narrow: start out of range (expected to be in range of "
                             f"[{-n}, {n}], but got {start})")
        start = start + n if start < 0 else start
        if length < 0:
            raise RuntimeError("narrow: narrow(): length must be non-negative.")
        if start + length > n:
            raise RuntimeError(f"narrow: start ({start}) + length ({length}) exceeds dimension "
                               f"size ({n}).")
        return self[(slice(None),) * ax + (slice(int(start), int(start + length)),)]
