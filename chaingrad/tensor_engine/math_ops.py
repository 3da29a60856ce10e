"""Tensor ops, part 1: matmul, elementwise functions, reductions (a mixin of ``Tensor``).

Each op computes its array, then makes its node with ``self._make(data, inputs, op, rule)``;
the rule sits right under the op. Rules use only what ndarrays and Tensors share (operators,
``.sum``, ``.reshape``) or the small ``_exp``-style helpers below, so that the one rule
serves ``backward()`` and ``backward(create_graph=True)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .arrays import (
    ARRAY_TYPES,
    all_finite,
    domain_error,
    keepdims_shape,
    normalize_axes,
    normalize_axis,
)

Axis = Any  # an int, a tuple of ints, or None


class MathOps:
    """@, exp log sqrt abs tanh sigmoid relu clip, sum mean max min, softmax log_softmax."""

    __slots__ = ()

    def __matmul__(self, other: Any) -> Any:
        """x @ y as np.matmul (1-D, 2-D, batched);  d/dx = g @ y^T, d/dy = x^T @ g.

        Example:
            >>> from chaingrad import Tensor
            >>> (Tensor([[1.0, 2.0]]) @ Tensor([[3.0], [4.0]])).data.tolist()
            [[11.0]]
        """
        other = self._as_operand(other, self, numbers=False)
        if other is None:
            return NotImplemented
        a, b = self.data, other.data
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape}: both operands need at "
                             "least one dimension")
        ka, kb = a.shape[-1], b.shape[-2 if b.ndim > 1 else 0]
        if ka != kb:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align "
                             f"({ka} != {kb})")
        try:
            data = np.matmul(a, b)
        except ValueError:
            raise ValueError(f"matmul: the batch dimensions of shapes {a.shape} and {b.shape} "
                             "do not broadcast") from None
        if not all_finite(data):
            raise domain_error("matmul", data, (), None)
        rule = _MATMUL_RULES[self.requires_grad, other.requires_grad]
        return self._make(data, (self, other), "matmul", rule)

    def __rmatmul__(self, other: Any) -> Any:  # other @ self
        lifted = self._as_operand(other, self, numbers=False)
        return NotImplemented if lifted is None else lifted @ self

    def exp(self) -> Any:
        """e ** x;  d/dx = e ** x, reusing the output."""
        with np.errstate(over="ignore"):
            data = np.exp(self.data)
        if not all_finite(data):
            limit = math.log(np.finfo(data.dtype).max)
            raise domain_error("exp", data, (self.data,),
                               f"x <= {limit:.4f} ({data.dtype} overflows beyond)")
        return self._make(data, (self,), "exp", _exp_vjp)

    def log(self) -> Any:
        """ln(x);  d/dx = 1 / x."""
        with np.errstate(divide="ignore", invalid="ignore"):
            data = np.log(self.data)
        if not all_finite(data):
            raise domain_error("log", data, (self.data,), "x > 0")
        return self._make(data, (self,), "log", _log_vjp)

    def sqrt(self) -> Any:
        """sqrt(x);  d/dx = 1 / (2 * sqrt(x)), reusing the output (unbounded at 0)."""
        with np.errstate(invalid="ignore"):
            data = np.sqrt(self.data)
        if not all_finite(data):
            raise domain_error("sqrt", data, (self.data,), "x >= 0")
        return self._make(data, (self,), "sqrt", _sqrt_vjp)

    def abs(self) -> Any:
        """|x|;  d/dx = sign(x), taken as 0 at x = 0 (as PyTorch does)."""
        return self._make(np.abs(self.data), (self,), "abs", _abs_vjp)

    def tanh(self) -> Any:
        """tanh(x);  d/dx = 1 - tanh(x)**2, reusing the output."""
        return self._make(np.tanh(self.data), (self,), "tanh", _tanh_vjp)

    def sigmoid(self) -> Any:
        """1 / (1 + exp(-x));  d/dx = s * (1 - s), reusing the output s."""
        x = self.data
        e = np.exp(-np.abs(x))  # never overflows; both branches below use it
        data = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return self._make(data, (self,), "sigmoid", _sigmoid_vjp)

    def relu(self) -> Any:
        """max(0, x);  d/dx = 1 if x > 0 else 0."""
        return self._make(np.maximum(self.data, 0), (self,), "ReLU", _relu_vjp)

    def clip(self, min: float | None = None, max: float | None = None) -> Any:  # noqa: A002
        """Clamp into [min, max];  d/dx = 1 where min <= x <= max, else 0 (as torch.clamp).

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([-2.0, 0.5, 3.0]).clip(-1, 1).data.tolist()
            [-1.0, 0.5, 1.0]
        """
        bounds = []
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and (not isinstance(bound, (int, float, np.number))
                                      or isinstance(bound, bool) or math.isnan(bound)):
                raise TypeError(f"clip: {name} must be a number or None, got {bound!r}")
            bounds.append(bound)
        low, high = bounds
        if low is None and high is None:
            raise ValueError("clip: needs min, max or both")
        if low is not None and high is not None and low > high:
            raise ValueError(f"clip: min {low} is greater than max {high}")
        x = self.data
        out = self._make(np.clip(x, low, high), (self,), "clip", None)
        if out.requires_grad:  # build no rule for a node that records no graph
            inside = np.ones(x.shape, dtype=bool)
            if low is not None:
                inside &= x >= low
            if high is not None:
                inside &= x <= high
            out._vjp = lambda xs, out, g: (inside * g,)
        return out

    # ---- reductions ----

    def sum(self, axis: Axis = None, keepdims: bool = False) -> Any:
        """Sum over ``axis`` (an int, a tuple, or None for all);  d/dx = 1 for every entry."""
        axes = normalize_axes(axis, self.ndim, "sum")
        data = self.data.sum(axis=axes, keepdims=keepdims)
        if not all_finite(data):
            raise domain_error("sum", np.asarray(data), (), None)
        out = self._make(data, (self,), "sum", None)
        if out.requires_grad:
            shape = self.shape
            kept = keepdims_shape(shape, axes)
            out._vjp = lambda xs, out, g: (_broadcast(g.reshape(kept), shape),)
        return out

    def mean(self, axis: Axis = None, keepdims: bool = False) -> Any:
        """The mean over ``axis``, as sum * (1 / count)."""
        axes = normalize_axes(axis, self.ndim, "mean")
        count = math.prod(self.shape[a] for a in axes)
        if count == 0:
            raise ValueError(f"mean: nothing to average over axis {axis} of shape {self.shape}")
        return self.sum(axes, keepdims) * (1.0 / count)

    def max(self, axis: Axis = None, keepdims: bool = False) -> Any:
        """The largest entry over ``axis`` (an int, a tuple, or None for all).

        Tied largest entries share the gradient equally, as with ``torch.amax`` and the
        full ``torch.max(x)``. ``torch.max(x, dim)``, which also returns indices, gives it
        all to the one index it returns instead; so does ``max_pool2d`` (to the first).

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([1.0, 3.0, 3.0], requires_grad=True)
            >>> x.max().backward()
            >>> x.grad.tolist()
            [0.0, 0.5, 0.5]
        """
        return self._extreme("max", np.max, axis, keepdims)

    def min(self, axis: Axis = None, keepdims: bool = False) -> Any:
        """The smallest entry over ``axis`` (an int, a tuple, or None for all).

        Tied smallest entries share the gradient equally, as with ``torch.amin`` and the
        full ``torch.min(x)``; ``torch.min(x, dim)`` gives it all to the index it returns.
        """
        return self._extreme("min", np.min, axis, keepdims)

    def _extreme(self, op: str, reduce: Any, axis: Axis, keepdims: bool) -> Any:
        """max or min;  d/dx = 1 / (number of ties) at the extreme entries, 0 elsewhere."""
        axes = normalize_axes(axis, self.ndim, op)
        if any(self.shape[a] == 0 for a in axes):
            raise ValueError(f"{op}: got an empty axis in shape {self.shape}")
        x = self.data
        data = reduce(x, axis=axes, keepdims=keepdims)
        out = self._make(data, (self,), op, None)
        if out.requires_grad:
            kept = keepdims_shape(x.shape, axes)
            hits = x == data.reshape(kept)
            share = hits / hits.sum(axis=axes, keepdims=True)  # split equally among ties
            share = share.astype(x.dtype, copy=False)
            out._vjp = lambda xs, out, g: (share * g.reshape(kept),)
        return out

    def softmax(self, axis: int = -1) -> Any:
        """exp(x) / sum(exp(x)) along ``axis``, computed stably;  vjp: s * (g - sum(g * s))."""
        ax = normalize_axis(axis, self.ndim, "softmax")
        x = self.data
        e = np.exp(x - x.max(axis=ax, keepdims=True))
        out = self._make(e / e.sum(axis=ax, keepdims=True), (self,), "softmax", None)
        if out.requires_grad:
            out._vjp = lambda xs, out, g: (out * (g - (g * out).sum(axis=ax, keepdims=True)),)
        return out

    def log_softmax(self, axis: int = -1) -> Any:
        """x - log(sum(exp(x))) along ``axis``, computed stably;  vjp: g - softmax * sum(g).

        Example:
            >>> from chaingrad import Tensor
            >>> Tensor([0.0, 1000.0]).log_softmax().data.tolist()
            [-1000.0, 0.0]
        """
        ax = normalize_axis(axis, self.ndim, "log_softmax")
        z = self.data - self.data.max(axis=ax, keepdims=True)
        data = z - np.log(np.exp(z).sum(axis=ax, keepdims=True))
        out = self._make(data, (self,), "log_softmax", None)
        if out.requires_grad:
            out._vjp = lambda xs, out, g: (g - _exp(out) * g.sum(axis=ax, keepdims=True),)
        return out


# ---- the rules shared by every node of an op ----


def _exp_vjp(xs, out, g):
    return (out * g,)


def _log_vjp(xs, out, g):
    return (g / xs[0],)


def _sqrt_vjp(xs, out, g):
    return (g / (2 * out),)


def _abs_vjp(xs, out, g):
    return (np.sign(_data(xs[0])) * g,)


def _tanh_vjp(xs, out, g):
    return ((1 - out * out) * g,)


def _sigmoid_vjp(xs, out, g):
    return (out * (1 - out) * g,)


def _relu_vjp(xs, out, g):
    return ((_data(out) > 0) * g,)


# ---- matmul: one rule per "which inputs need a gradient", so that none is wasted ----


def _matmul_grads(a: Any, b: Any, g: Any, need_a: bool, need_b: bool) -> tuple:
    """d/da = g @ b^T and d/db = a^T @ g, with 1-D operands as numpy's matmul treats them.

    A 1-D ``a`` acts as a row (1, k) and a 1-D ``b`` as a column (k, 1); the gradients
    come back with the broadcast batch axes still there, which the engine sums away.
    """
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = a.reshape(1, -1)
    if b_vec:
        b = b.reshape(-1, 1)
    if a_vec or b_vec:  # give g the two trailing axes of the matrix product
        g = g.reshape(g.shape[:-1] + (1,) + g.shape[-1:] if a_vec and not b_vec
                      else g.shape + (1,) if b_vec and not a_vec else (1, 1))
    ga = g @ _swap_last(b) if need_a else None
    gb = _swap_last(a) @ g if need_b else None
    if b_vec and gb is not None:
        gb = gb.reshape(gb.shape[:-1])
    return ga, gb


def _swap_last(x: Any) -> Any:
    """x with its last two axes swapped (the matrix transpose, batched)."""
    axes = list(range(x.ndim))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return x.transpose(axes)


_MATMUL_RULES = {
    (True, True): lambda xs, out, g: _matmul_grads(xs[0], xs[1], g, True, True),
    (True, False): lambda xs, out, g: _matmul_grads(xs[0], xs[1], g, True, False),
    (False, True): lambda xs, out, g: _matmul_grads(xs[0], xs[1], g, False, True),
    (False, False): None,
}


# ---- helpers that let one rule run on arrays and on Tensors ----


def _data(x: Any) -> np.ndarray:
    """The array of an array or of a Tensor."""
    return x if isinstance(x, ARRAY_TYPES) else x.data


def _exp(x: Any) -> Any:
    return np.exp(x) if isinstance(x, ARRAY_TYPES) else x.exp()


def _log(x: Any) -> Any:
    return np.log(x) if isinstance(x, ARRAY_TYPES) else x.log()


def _broadcast(x: Any, shape: tuple[int, ...]) -> Any:
    return np.broadcast_to(x, shape) if isinstance(x, ARRAY_TYPES) else x.broadcast_to(shape)
