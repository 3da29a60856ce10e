"""Tensor ops, part 2: shapes and indexing (a mixin of ``Tensor``).

These ops move entries around without changing them, so each rule moves the gradient
back: ``reshape`` reshapes it, ``transpose`` applies the inverse permutation, indexing
scatters it into zeros (adding up entries picked twice), and ``broadcast_to`` returns it
as it is, for the engine's ``sum_to_shape`` to sum over the repeated axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import ARRAY_TYPES, check_index, scatter_array


class ShapeOps:
    """reshape, transpose / .T, broadcast_to, flatten and indexing."""

    __slots__ = ()

    def reshape(self, *shape: Any) -> Any:
        """The same entries in a new shape (one dimension may be -1), as ndarray.reshape.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([1.0, 2.0, 3.0, 4.0]).reshape(2, -1).shape
            (2, 2)
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape):
            raise TypeError(f"reshape: the shape must be ints, got {shape!r}")
        try:
            data = self.data.reshape(shape)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape a tensor of shape {self.shape} "
                             f"into {tuple(shape)}") from None
        return self._make(data, (self,), "reshape", _reshape_vjp)

    def flatten(self, start_dim: int = 0) -> Any:
        """Merge the axes from ``start_dim`` on into one (a reshape)."""
        if not -self.ndim <= start_dim < max(self.ndim, 1):
            raise ValueError(f"flatten: start_dim {start_dim} is out of range for shape "
                             f"{self.shape}")
        return self.reshape(self.shape[:start_dim % max(self.ndim, 1)] + (-1,))

    def transpose(self, *axes: Any) -> Any:
        """Permute the axes (reverse them if none are given), as ndarray.transpose."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        ndim = self.ndim
        if not axes:
            axes = inverse = tuple(range(ndim - 1, -1, -1))  # reversing is its own inverse
        else:
            if not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                       for a in axes):
                raise TypeError(f"transpose: axes must be ints, got {axes!r}")
            if len(axes) != ndim or any(not -ndim <= a < ndim for a in axes) or len(
                    {a % ndim for a in axes}) != ndim:
                raise ValueError(f"transpose: axes {axes} are not a permutation of the {ndim} "
                                 f"axes of shape {self.shape}")
            axes = tuple(int(a) % ndim for a in axes)
            inverse = tuple(sorted(range(ndim), key=axes.__getitem__))
        out = self._make(self.data.transpose(axes), (self,), "transpose", None)
        if out.requires_grad:  # build no rule for a node that records no graph
            out._vjp = lambda xs, out, g: (g.transpose(inverse),)
        return out

    @property
    def T(self) -> Any:
        """The transpose: all axes reversed."""
        return self.transpose()

    def broadcast_to(self, shape: tuple[int, ...]) -> Any:
        """Repeat along new or size-1 axes, as np.broadcast_to; the engine sums it back."""
        try:
            data = np.broadcast_to(self.data, shape)
        except (ValueError, TypeError):
            raise ValueError(f"broadcast_to: cannot broadcast shape {self.shape} "
                             f"to {shape!r}") from None
        return self._make(data, (self,), "broadcast_to", _broadcast_vjp)

    def __getitem__(self, index: Any) -> Any:
        """x[index] with ints, slices, None, ..., integer arrays or boolean masks.

        The gradient is scattered back into zeros; an entry picked twice gets both.

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> x[[0, 0, 2]].sum().backward()
            >>> x.grad.tolist()
            [2.0, 0.0, 1.0]
        """
        index = check_index(index)
        try:
            data = self.data[index]
        except IndexError as exc:
            raise IndexError(f"getitem: {exc} (tensor of shape {self.shape})") from None
        out = self._make(data, (self,), "getitem", None)
        if out.requires_grad:
            shape = self.shape
            out._vjp = lambda xs, out, g: (_scatter(g, index, shape),)
        return out


def _reshape_vjp(xs, out, g):
    return (g.reshape(xs[0].shape),)


def _broadcast_vjp(xs, out, g):
    return (g,)


def _scatter(g: Any, index: Any, shape: tuple[int, ...]) -> Any:
    """``g`` added into zeros of ``shape`` at ``index``; on a Tensor, an op of its own
    whose rule is indexing again (so indexing can be differentiated twice)."""
    if isinstance(g, ARRAY_TYPES):
        return scatter_array(g, index, shape)
    return g._make(scatter_array(g.data, index, shape), (g,), "scatter",
                   lambda xs, out, gg: (gg[index],))
