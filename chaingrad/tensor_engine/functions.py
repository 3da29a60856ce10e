"""Functions of tensors: ``concatenate``, ``stack``, ``where``, ``einsum``, ``zero_pad``, and the
nodes of convolution and pooling (``conv2d``, ``max_pool2d``), which ``chaingrad.nn.functional``'s
functions of the same names, their one entry, check the arguments of and call.

Convolution is a primitive, as in torch: its forward lays the windows a kernel sees out as
columns (im2col) and applies every filter with one matrix product; its gradients are two
primitives of their own (``conv2d_input_grad``, ``conv2d_weight_grad``), so that it can be
differentiated again. Max pooling's rule gives each window's gradient to one entry, its
first largest, as torch's does. Every rule is in ``chaingrad/tensor_engine/rules.py``,
named in each function's docstring, beside the readable form of each forward.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

import numpy as np

from . import autocast_state, dtypes
from .arrays import normalize_axis, quietly
from .factories import tensor_argument, with_out
from .promotion import cast
from .rules import (
    CONCATENATE,
    EINSUM,
    PAD,
    STACK,
)
from .tensor import Tensor, constant, make_node, where_node


def _tensors(tensors: Any, where: str) -> list[Tensor]:
    """A list of tensors (or arrays), in one dtype: torch's result dtype for them all."""
    if isinstance(tensors, (Tensor, np.ndarray)) or not isinstance(tensors, Sequence):
        raise TypeError(f"{where}: expected a list of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise ValueError(f"{where}: needs at least one tensor, got an empty list")
    ts = [tensor_argument(t, where, numbers=True) for t in tensors]
    if any(t._value.dtype != ts[0]._value.dtype for t in ts):
        dtype = dtypes.promote([(t._value.dtype, dtypes.DIMENSIONED) for t in ts])
        ts = [cast(t, dtype) for t in ts]
    return ts


@with_out
def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing ``dim``, as torch.cat;  each input's gradient is its
    slice of g (``rules.CONCATENATE``).

    Example:
        >>> a, b = Tensor([[1.0, 2.0]]), Tensor([[3.0, 4.0], [5.0, 6.0]])
        >>> cat([a, b]).shape
        chaingrad.Size([3, 2])
    """
    dim = _dim_or_axis("cat", dim, axis)
    ts = _tensors(tensors, "cat")
    first = ts[0]
    if first.ndim == 0:
        raise ValueError("cat: zero-dimensional tensors cannot be concatenated; use stack")
    ax = normalize_axis(dim, first.ndim, "cat")
    for t in ts[1:]:
        if t.ndim != first.ndim or any(
                n != m for i, (n, m) in enumerate(zip(t.shape, first.shape)) if i != ax):
            raise ValueError(f"cat: shapes {tuple(first.shape)} and {tuple(t.shape)} "
                             f"differ outside dim {ax}")
    data = np.concatenate([t._value for t in ts], axis=ax)
    ends = list(accumulate(t.shape[ax] for t in ts))  # (np.cumsum of a list: 5 us more)
    pieces = tuple((slice(None),) * ax + (slice(end - t.shape[ax], end),)
                   for t, end in zip(ts, ends))
    return make_node(data, tuple(ts), CONCATENATE.bind(ax, pieces))


@with_out
def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """``cat`` under numpy's name (``axis`` for ``dim``)."""
    return cat(tensors, axis)


@with_out
def stack(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join same-shaped tensors along a new ``dim``;  input i's gradient is g[..., i, ...]
    (``rules.STACK``).

    Example:
        >>> stack([Tensor([1.0, 2.0]), Tensor([3.0, 4.0])], dim=1).tolist()
        [[1.0, 3.0], [2.0, 4.0]]
    """
    dim = _dim_or_axis("stack", dim, axis)
    ts = _tensors(tensors, "stack")
    for t in ts[1:]:
        if t.shape != ts[0].shape:
            raise ValueError(f"stack: shapes {tuple(ts[0].shape)} and {tuple(t.shape)} "
                             "differ; stack needs equal shapes")
    ax = normalize_axis(dim, ts[0].ndim + 1, "stack")
    picks = tuple((slice(None),) * ax + (i,) for i in range(len(ts)))
    return make_node(np.stack([t._value for t in ts], axis=ax), tuple(ts), STACK.bind(ax, picks))


def _dim_or_axis(op: str, dim: int, axis: int | None) -> int:
    if axis is None:
        return dim
    if dim != 0:
        raise TypeError(f"{op}: got both dim= and axis= (the same argument)")
    return axis


@with_out
def where(condition: Any, x: Any, y: Any) -> Tensor:
    """``x`` where ``condition`` holds, else ``y`` (broadcasting, torch's result dtype);
    g goes to the one chosen (``rules.WHERE``).

    Args:
        condition: Booleans (a bool Tensor, an array, a list; numbers are read as ``!= 0``);
            no gradient.
        x, y: Tensors, arrays or numbers.

    Example:
        >>> x = Tensor([-1.0, 2.0], requires_grad=True)
        >>> where(x > 0, x, 0.0).sum().backward()
        >>> x.grad.tolist()
        [0.0, 1.0]
    """
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = tensor_argument(x, "where", numbers=True)
    return where_node(condition, x, y)


LETTERS = string.ascii_letters
"""The letters that name axes in an einsum equation (torch's: a-z and A-Z)."""


@autocast_state.casts("einsum")
def einsum(equation: str, *operands: Any) -> Tensor:
    """Sums of products of the operands' entries, their axes named by the letters of
    ``equation``, as torch.einsum: ``"ij,jk->ik"`` is a matrix product, ``"bij,bjk->bik"``
    a batched one, ``"i,i->"`` a dot product, ``"ij->ji"`` a transpose; ``...`` stands for
    the dims no letter names (aligned on the right, as broadcasting aligns them); without
    ``->`` the output has ``...`` and then each letter used once, in alphabetical order.

    Each step is the ``einsum`` primitive of two operands, whose gradients are einsums
    too (``rules.EINSUM``): one operand is paired with the number 1, three or more are
    taken two at a time, left to right, each product keeping the letters still needed.
    What chaingrad lacks is refused by name: a letter repeated within one operand (a
    diagonal), a letter of size 1 in one operand and more in another (broadcasting), the
    sublist form ``einsum(x, [0, 1], ...)``.

    Example:
        >>> x, y = Tensor(np.ones((2, 3))), Tensor(np.ones((3, 4)))
        >>> einsum("ij,jk->ik", x, y).shape, einsum("ij->", x).item()
        (chaingrad.Size([2, 4]), 6.0)
    """
    if not isinstance(equation, str):
        raise NotImplementedError("einsum with the sublist format (einsum(x, [0, 1], ...)) is "
                                  "not in chaingrad yet; write the equation as a string")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = _tensors(list(operands), "einsum")
    subscripts, result = einsum_subscripts(equation, [t.ndim for t in ts])
    sizes: dict[str, int] = {}
    for t, letters in zip(ts, subscripts):
        for letter, n in zip(letters, t.shape):
            known = sizes.setdefault(letter, n)
            if known != n:
                if 1 in (known, n):
                    raise NotImplementedError(
                        f"einsum: {letter!r} is of size {known} in one operand and {n} in "
                        "another; broadcasting a dim of size 1 in einsum is not in chaingrad "
                        "yet (expand it first)")
                raise ValueError(f"einsum: {letter!r} is of size {known} in one operand and "
                                 f"{n} in another in {equation!r}")
    if len(ts) == 1:  # x alone: its product with the number 1
        ts.append(constant(np.ones((), dtype=ts[0]._value.dtype)))
        subscripts.append("")
    left, left_letters = ts[0], subscripts[0]
    for i in range(1, len(ts)):
        still_needed = set(result).union(*subscripts[i + 1:])
        kept = result if i == len(ts) - 1 else "".join(dict.fromkeys(
            c for c in left_letters + subscripts[i] if c in still_needed))
        pair = f"{left_letters},{subscripts[i]}->{kept}"
        data = quietly(_einsum, pair, left._value, ts[i]._value)
        needs = (left.requires_grad, ts[i].requires_grad)
        left = make_node(data, (left, ts[i]), EINSUM.bind(pair, needs))
        left_letters = kept
    return left


def einsum_subscripts(equation: str, ndims: list[int]) -> tuple[list[str], str]:
    """Each operand's letters and the output's, with ``...`` spelt out as letters the
    equation does not use and the implicit output (no ``->``) made explicit.

    Example:
        >>> einsum_subscripts("...ij,jk", [3, 2])
        (['aij', 'jk'], 'aik')
    """
    text = equation.replace(" ", "")
    if text.count("->") > 1:
        raise ValueError(f"einsum: {equation!r} has more than one '->'")
    left, arrow, right = text.partition("->")
    inputs = left.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(f"einsum: {equation!r} names {len(inputs)} operand(s), got "
                         f"{len(ndims)}")
    for part in inputs + [right]:
        if part.count("...") > 1 or any(c not in LETTERS for c in part.replace("...", "")):
            raise ValueError(f"einsum: {part!r} in {equation!r}: subscripts are letters a-z, "
                             "A-Z and at most one '...'")
    free = [c for c in LETTERS if c not in text]
    spans = []
    for k, (part, ndim) in enumerate(zip(inputs, ndims)):
        named = len(part.replace("...", ""))
        span = ndim - named
        if span < 0 or (span > 0 and "..." not in part):
            raise ValueError(f"einsum: the subscripts {part!r} of operand {k} do not match "
                             f"its {ndim} dim(s)")
        spans.append(span if "..." in part else 0)
    ellipsis = "".join(free[:max(spans, default=0)])
    subscripts = [part.replace("...", ellipsis[len(ellipsis) - span:])
                  for part, span in zip(inputs, spans)]
    for k, letters in enumerate(subscripts):
        if len(set(letters)) != len(letters):
            raise NotImplementedError(
                f"einsum: operand {k} repeats a letter ({inputs[k]!r}: a diagonal), which is "
                "not in chaingrad yet")
    everything = "".join(subscripts)
    if arrow:
        result = right.replace("...", ellipsis)
    else:
        result = ellipsis + "".join(sorted(c for c in set(everything) - set(ellipsis)
                                           if everything.count(c) == 1))
    if len(set(result)) != len(result) or any(c not in everything for c in result):
        raise ValueError(f"einsum: the output {right!r} of {equation!r} must use each letter "
                         "of the operands at most once")
    return subscripts, result


def zero_pad(x: Tensor, pad_width: Sequence[tuple[int, int]]) -> Tensor:
    """Zeros around ``x``: ``pad_width`` holds (before, after) for every axis;
    the gradient is g without the border (``rules.PAD``).

    Example:
        >>> zero_pad(Tensor([1.0, 2.0]), [(1, 2)]).tolist()
        [0.0, 1.0, 2.0, 0.0, 0.0]
    """
    x = tensor_argument(x, "pad", numbers=True)
    widths = tuple(tuple(int(n) for n in w) for w in pad_width)
    if len(widths) != x.ndim or any(len(w) != 2 or min(w) < 0 for w in widths):
        raise ValueError(f"pad: needs one (before, after) pair of ints >= 0 per axis of shape "
                         f"{tuple(x.shape)}, got {pad_width!r}")
    return make_node(PAD.on_arrays(x._value, widths), (x,), PAD.bind(widths))


def _einsum(equation: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.einsum`` of two operands, its contraction order optimized."""
    return np.einsum(equation, a, b, optimize=True)
