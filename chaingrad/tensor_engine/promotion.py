"""Which dtype an op computes in, as torch decides it, its operands made Tensors of it, and
the binary ops that compute so (``broadcasting``, and the nodes of ``promoted``, ``compare``
and ``logical``, which the Tensor's operators make).

torch's result dtype for ``x op other`` (``dtypes.promote``): a Python number takes the
tensor's dtype unless it is of a higher kind (``int64 tensor * 2.5`` is float32); two
tensors give the wider dtype, a 0-d tensor counting less than one with dimensions. An
operand that needs no gradient is cast (a constant copy); one that needs a gradient keeps
its dtype, and the result is cast instead.

Example:
    >>> from chaingrad import tensor
    >>> x, y, dtype = operands("*", tensor([1, 2]), 2.5)
    >>> dtype, y
    (dtype('float32'), tensor(2.5000))
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from .. import autodiff
from . import dtypes
from .arrays import ARRAY_TYPES, quietly, to_array


def number(x: object) -> float | None:
    """x if it is a plain real number (int, float, bool, numpy scalar, ...), else None."""
    if type(x) is float or type(x) is int:
        return x
    if isinstance(x, Real) and not isinstance(x, (autodiff.Node, np.ndarray)):
        return x
    return None


def lift(x: object, like: Any, numbers: bool = True) -> Any:
    """``x`` as a constant Tensor: a number takes ``like``'s dtype (as in ``x * 2``), an
    array keeps its own; None for anything else (the operator then refuses)."""
    if isinstance(x, autodiff.Node):  # a Tensor; a Value (a float's node) is refused
        return x if isinstance(x._value, np.ndarray) else None
    if numbers and number(x) is not None:
        return like._constant(np.asarray(x, dtype=like._value.dtype))
    if isinstance(x, ARRAY_TYPES):  # arrays, and numpy scalars such as np.bool_
        return like._constant(to_array(x, None, "Tensor", copy=False))
    return None


def rank(t: Any) -> int:
    return dtypes.DIMENSIONED if t._value.ndim else dtypes.ZERO_DIM


def operands(op: str, x: Any, other: object, floating: bool = False) -> Any:
    """``x`` and ``other`` as Tensors of torch's result dtype for ``op``, and that dtype
    (with ``floating``, an integer result becomes the default floating dtype, as ``/``
    wants). A number becomes a constant; an input that needs no gradient is cast; one
    that needs a gradient keeps its dtype (the result is cast instead). NotImplemented
    for a type it doesn't know (Python then asks ``other``), but a TypeError for a list,
    tuple or string, which Python would otherwise repeat or refuse with a message that
    hides the op."""
    xd = x._value.dtype
    if type(other) is type(x) and other._value.dtype is xd and (not floating or xd.kind == "f"):
        return x, other, xd  # the common case, first
    if type(other) is float and xd.kind == "f":  # x * 0.5: the number takes x's dtype
        return x, x._constant(np.asarray(other, dtype=xd)), xd
    n = number(other)
    if n is not None:
        nd = dtypes.number_dtype(n)
        dtype = xd if dtypes.kind(nd) <= dtypes.kind(xd) else nd
        if floating and not dtypes.is_floating_dtype(dtype):
            dtype = dtypes.get_default_dtype().dtype
        return cast(x, dtype), x._constant(np.asarray(n, dtype=dtype)), dtype
    y = lift(other, x, numbers=False)
    if y is None:
        if isinstance(other, (str, bytes, list, tuple)):
            raise TypeError(f"{op}: needs a number, an array or a Tensor, got "
                            f"{type(other).__name__} {other!r}")
        return NotImplemented
    dtype = dtypes.promote([(xd, rank(x)), (y._value.dtype, rank(y))])
    if floating and not dtypes.is_floating_dtype(dtype):
        dtype = dtypes.get_default_dtype().dtype
    return cast(x, dtype), cast(y, dtype), dtype


def cast(t: Any, dtype: np.dtype) -> Any:
    """``t`` in ``dtype``, if it needs no gradient (a constant copy); else ``t`` itself, but
    for a bfloat16 ``t``: a differentiable cast, whose gradient is rounded to bfloat16 on
    its way back, as torch rounds every gradient to its input's dtype."""
    if t._value.dtype == dtype:
        return t
    if t.requires_grad:
        return t if t._value.dtype.kind != "V" else t.to(dtypes.of(dtype))
    return t._constant(quietly(t._value.astype, dtype))


def floating(t: Any) -> Any:
    """``t``, or for an integer or bool tensor its values in the default floating dtype
    (as torch's exp, sqrt, ... compute them). A bfloat16 tensor: its values in float32 (a
    differentiable cast), where torch's kernels compute bfloat16; ``rounded_back`` gives
    the op's result bfloat16 again, and the cast's gradient is rounded to bfloat16 on its
    way back, as torch's kernels round theirs."""
    if t._value.dtype.kind == "f":
        return t
    if dtypes.is_floating_dtype(t._value.dtype):
        return t.to(dtypes.float32)
    return t._constant(t._value.astype(dtypes.get_default_dtype().dtype))


def rounded_back(out: Any, t: Any) -> Any:
    """``out``, an op's result on ``floating(t)``, cast back to bfloat16 if ``t`` is
    bfloat16: torch's kernels compute bfloat16 in float32 and round their result once, so
    the op gives torch's numbers in torch's dtype. The float32 node ``out`` (just made)
    holds its result so rounded, as a rule that reuses the output (softmax's) reads
    torch's rounded one. Any other ``out`` as it is.

    Example:
        >>> import chaingrad
        >>> chaingrad.tensor([1.0, 2.0]).bfloat16().exp()
        tensor([2.7188, 7.3750], dtype=chaingrad.bfloat16)
    """
    if t._value.dtype.kind == "f" or not dtypes.is_floating_dtype(t._value.dtype):
        return out
    out._value = out._value.astype(t._value.dtype).astype(out._value.dtype)
    return out.to(t.dtype)


def by_a_number(op: str, x: Any, other: object) -> Any:
    """``x * other`` or ``x / other`` (``op``) for a bfloat16 ``x`` and a Python number:
    computed in float32 with the number as it is, the result rounded once, and its gradient
    so too, as torch's kernels compute them (``+`` and ``-`` round the number to bfloat16
    first, as chaingrad's promotion does). None for any other operands.

    Example:
        >>> import chaingrad
        >>> x = chaingrad.tensor([3.0]).bfloat16()
        >>> (x * 0.3).item(), (x * chaingrad.tensor(0.3).bfloat16()).item()
        (0.8984375, 0.90234375)
    """
    if x._value.dtype.kind != "V" or isinstance(other, bool) or number(other) is None:
        return None
    wide = floating(x)
    return rounded_back(wide * other if op == "*" else wide / other, x)


# ---- the ops that compute in that dtype: tensor.py's operators call these ----


def promoted(op: str, ufunc: Any, rule: Any, x: Any, other: object) -> Any:
    """The node of ``x op other`` for a number, an array or a Tensor of another dtype:
    both made Tensors of torch's result dtype first (``operands``). ``+`` and ``*`` come
    here only then: two tensors of one dtype (most calls) need no promotion, and they skip
    this call (T3 in benchmarks/versions.py)."""
    if op == "*" and (scaled := by_a_number(op, x, other)) is not None:
        return scaled
    both = operands(op, x, other)
    if both is NotImplemented:
        return both
    x, y, dtype = both
    return x._node(broadcasting(op, ufunc, x, y, dtype), (x, y), rule)


def compare(op: str, ufunc: Any, x: Any, other: object) -> Any:
    """``x op other`` entry by entry, as a bool Tensor (no gradient)."""
    if other is None or isinstance(other, (str, bytes)):
        return NotImplemented
    if isinstance(other, (list, tuple)):
        other = to_array(other, None, op)
    both = operands(op, x, other)
    if both is NotImplemented:
        return both
    a, b, _ = both
    return x._constant(np.asarray(broadcasting(op, ufunc, a, b, None)))


def logical(op: str, ufunc: Any, x: Any, other: object) -> Any:
    """``x op other`` for ``&``, ``|`` and ``^``: bitwise on integers, logical on bools, in
    torch's result dtype (no gradient); floats are refused, as torch refuses them."""
    both = operands(op, x, other)
    if both is NotImplemented:
        return both
    a, b, dtype = both
    if dtype.kind == "f":
        raise TypeError(f"{op}: needs bool or integer tensors, got {dtypes.of(dtype)}")
    return x._constant(np.asarray(broadcasting(op, ufunc, a, b, dtype)))


def broadcasting(op: str, ufunc: Any, a: Any, b: Any, dtype: np.dtype | None) -> Any:
    """``ufunc(a, b)`` with numpy broadcasting, in ``dtype`` (None: as numpy gives it),
    numpy's warnings off (``quietly``: inf and nan are torch's results), and chaingrad's
    errors."""
    try:
        data = quietly(ufunc, a._value, b._value)
    except ValueError:
        raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         "broadcast") from None
    if dtype is not None and data.dtype is not dtype and data.dtype != dtype:
        data = data.astype(dtype)  # (``is`` first: numpy's built-in dtypes are singletons)
    return data
