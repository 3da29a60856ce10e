"""Reductions composed of the primitives, as torch has them: ``var``, ``std``, ``norm``,
``logsumexp``, and ``nansum`` and ``nanmean``, which leave the nan entries out (the
``Reductions`` part of ``Tensor``).

None has a rule of its own: each is made of ``sum``, ``mean``, ``*``, ``sqrt``, ``exp``,
``log``, ``masked_fill``, ..., whose rules give its gradient (``backward()`` walks them).
The reductions that are primitives (``sum``, ``mean``, ``max``, ``min``, ``amax``,
``amin``) are in ``tensor.py``.

Example:
    >>> from chaingrad import Tensor
    >>> x = Tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> x.var().backward()
    >>> [round(g, 4) for g in x.grad.tolist()]
    [-1.0, -0.3333, 0.3333, 1.0]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .arrays import Dims, SelfTensor, normalize_axes
from .promotion import floating, rounded_back
from .reduction_order import norm_sum


class Reductions:
    """The reductions of ``Tensor`` composed of its primitive ops."""

    __slots__ = ()

    def nansum(self: SelfTensor, dim: Dims = None, keepdim: bool = False, *,
               dtype: Any = None) -> SelfTensor:
        """The sum over ``dim`` with the nan entries taken as 0, as torch.nansum; they take
        no gradient (a ``masked_fill``, then a sum).

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([1.0, float("nan"), 2.0]).nansum()
            tensor(3.)
        """
        x = self if self._value.dtype.kind != "f" else self.masked_fill(self.isnan(), 0)
        return x.sum(dim, keepdim, dtype=dtype)

    def nanmean(self: SelfTensor, dim: Dims = None, keepdim: bool = False, *,
                dtype: Any = None) -> SelfTensor:
        """The mean over ``dim`` of the entries that are not nan, as torch.nanmean (nan where
        all are); the nan entries take no gradient.

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([1.0, float("nan"), 2.0]).nanmean()
            tensor(1.5000)
        """
        x = self if dtype is None else self.to(dtype)
        if x._value.dtype.kind != "f":
            raise RuntimeError("nanmean(): expected input to have floating point or complex "
                               f"dtype but got {x.dtype}")
        counted = ~x.isnan()
        return x.nansum(dim, keepdim) / counted.sum(dim, keepdim).to(x.dtype)

    def var(self: SelfTensor, dim: Dims = None, keepdim: bool = False, *, correction: int = 1,
            unbiased: bool | None = None) -> SelfTensor:
        """The variance over ``dim``: sum((x - mean)**2) / (n - correction), Bessel's
        correction by default (``unbiased=False`` is ``correction=0``), as torch.var;
        composed of primitives.

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([1.0, 2.0, 3.0, 4.0])
            >>> round(x.var().item(), 4), x.var(unbiased=False).item()
            (1.6667, 1.25)
        """
        if unbiased is not None:
            correction = 1 if unbiased else 0
        x = floating(self)
        axes = normalize_axes(dim, x.ndim, "var")
        count = math.prod(x.shape[a] for a in axes)
        if count - correction <= 0:
            raise ValueError(f"var: {count} entries over dim {dim} leave no degrees of freedom "
                             f"with correction={correction}")
        centred = x - x.mean(axes, keepdim=True)
        out = (centred * centred).sum(axes, keepdim) * (1.0 / (count - correction))
        return rounded_back(out, self)

    def std(self: SelfTensor, dim: Dims = None, keepdim: bool = False, *, correction: int = 1,
            unbiased: bool | None = None) -> SelfTensor:
        """The standard deviation over ``dim``: ``var(...).sqrt()``."""
        return self.var(dim, keepdim, correction=correction, unbiased=unbiased).sqrt()

    def norm(self: SelfTensor, p: Any = "fro", dim: Dims = None,
             keepdim: bool = False) -> SelfTensor:
        """The p-norm over ``dim`` (all entries if None): p=2 (or 'fro') is
        sqrt(sum(x**2)), p=1 sum(|x|), else sum(|x|**p)**(1/p); composed of primitives,
        float32 and float64 sums added in torch's order (``reduction_order.norm_sum``).

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([3.0, 4.0]).norm().item()
            5.0
        """
        x = floating(self)
        axes = normalize_axes(dim, x.ndim, "norm")
        if p in ("fro", 2):
            return rounded_back(norm_sum(x, 2, axes, keepdim, x._value).sqrt(), self)
        if p == 1:
            return rounded_back(norm_sum(x, 1, axes, keepdim, x._value), self)
        if isinstance(p, (int, float)) and not isinstance(p, bool) and p > 0:
            return rounded_back(norm_sum(x, p, axes, keepdim, x._value) ** (1.0 / p), self)
        raise NotImplementedError(f"chaingrad.Tensor has no norm(p={p!r}) yet "
                                  "(p may be 'fro', or a number > 0)")

    def logsumexp(self: SelfTensor, dim: Dims, keepdim: bool = False) -> SelfTensor:
        """log(sum(exp(x))) over ``dim``, computed stably as m + log(sum(exp(x - m))) with
        m the largest entry (a constant: the gradient is softmax(x) either way); composed
        of primitives.

        Example:
            >>> from chaingrad import Tensor
            >>> round(Tensor([0.0, 1000.0]).logsumexp(0).item(), 4)
            1000.0
        """
        x = floating(self)
        axes = normalize_axes(dim, x.ndim, "logsumexp")
        if not axes and x.ndim:
            raise RuntimeError("logsumexp: dim must name at least one dim (torch's dim=() "
                               "reduces nothing)")
        if any(x.shape[a] == 0 for a in axes):
            raise ValueError(f"logsumexp: got an empty dim in shape {tuple(x.shape)}")
        top = x._value.max(axis=axes, keepdims=True)
        top = self._constant(np.where(np.isfinite(top), top, 0).astype(top.dtype))  # inf: torch's
        total = (x - top).exp().sum(axes, keepdim=True).log() + top
        return rounded_back(total if keepdim else total.squeeze(axes), self)
