"""In what order does torch's CPU kernel add up a float norm, and which nodes add so?

``torch.linalg.vector_norm`` (so ``Tensor.norm``, ``torch.norm`` and the norms of
``clip_grad_norm_``) adds its terms (``x * x`` for ord 2, ``|x|`` for ord 1, ``|x| ** p``
for another p) in the tensor's own float type, each addition rounded, in an order of its
own. Over millions of entries the roundings add up: the 2-norm of 2,000,000 float32
entries of ``randn * 1e-4`` is 0.14128007 on torch and 0.1412849 exactly. A program whose
printout depends on such a norm (``clip_grad_norm_`` deciding how much to clip) prints
torch's numbers only if chaingrad adds in torch's order. Measured on torch 2.13 (CPU, one
thread), bit for bit, over sizes, layouts and dims, in float32 and float64
(tests/tensor_engine/test_reduction_order.py):

- ord 2, where the entries of each norm are one contiguous block of memory (a whole
  contiguous tensor, or its last dims): **in lanes** (ATen's ``norm_kernel`` on
  ``binary_kernel_reduce_lastdim``). The block is cut into rows of ``LANE_BYTES`` (8
  float32 or 4 float64 entries); lane j adds the square of the j-th entry of every row, row
  after row; lane 0 then adds lanes 1, 2, ... one at a time, then the squares of the entries
  left over after the last whole row, one at a time, by fused multiply-adds (the square
  not rounded before it is added: how the compiler built that loop), except the first
  ``ROUNDED_TAIL`` when there are that many, squared and rounded as everywhere else.
- ord 2 anywhere else (a strided view, dims that are not the last ones), ord 1 and any
  other p: **one at a time**, in memory order, fastest-moving dim first (ATen's
  ``binary_kernel_reduce``), each square rounded; a norm of all of a tensor, of
  ``GRAIN_SIZE`` entries or more, split between torch's threads (``get_num_threads()``:
  the same on one thread and on several when chaingrad is told torch's number).

The root is taken in the same float type; ``ord`` inf, -inf and 0 have no rounding to
order. 32 bytes is the width of ATen's vectors on x86-64 for every CPU capability (torch's
``default``, ``AVX2`` and ``AVX512`` kernels, ``ATEN_CPU_CAPABILITY``, measured the same).
The fused tail is that of its ``AVX2`` and ``AVX512`` kernels, which torch runs on any
x86-64 CPU of the last ten years; its ``default`` kernel (a CPU without AVX2) rounds every
square. chaingrad follows the AVX2 kernel, with or without torch installed. torch built
for another architecture (ARM) may add in lanes of another width.

``exact_sum`` is the reference: the sum in float64, rounded once, as chaingrad summed before.

Example:
    >>> import numpy as np
    >>> x = np.full(1000, 0.1, dtype=np.float32)      # 1000 squares of 0.1: about 10
    >>> print(sum_of_squares_in_lanes(x), sum_one_at_a_time(x * x), exact_sum(x * x))
    9.999993 10.0001335 10.000001
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .. import reference
from ..declaration import define
from .arrays import quietly
from .rules import expand, kept_shape
from .threads import get_num_threads

LANE_BYTES = 32
"""The width of torch's vectors as its reductions use them on x86-64 (ATen's
``Vectorized<float>::size()`` is 8)."""

GRAIN_SIZE = 32768
"""The fewest entries torch gives each of its threads when it splits one sum between them
(ATen's ``GRAIN_SIZE``): a sum of one output added one at a time, of this many entries or
more, on several threads."""

ROUNDED_TAIL = 4
"""Of the entries left over after the lanes' last whole row, if there are at least this
many, the first this many have their squares rounded before they are added (torch's AVX2
kernel squares four at a time); the others are added by fused multiply-adds."""


# ---- the orders, on the rows of an array: each row's sum ----


def exact_sum(rows: np.ndarray) -> np.ndarray:
    """The reference: each row's sum (over the last axis) in float64, rounded once to the
    rows' type."""
    return rows.sum(axis=-1, dtype=np.float64).astype(rows.dtype)


def sum_one_at_a_time(rows: np.ndarray) -> np.ndarray:
    """Each row's sum (over the last axis), adding its entries one at a time in order, every
    addition rounded to the rows' type (numpy's running sum: its last entry). One row of
    ``GRAIN_SIZE`` entries or more, on several threads (``get_num_threads()``), is cut
    into as many pieces as torch's threads take (at most one per ``GRAIN_SIZE`` entries),
    each added from 0, then the pieces' sums added in order."""
    n = rows.shape[-1]
    total = np.zeros(rows.shape[:-1], dtype=rows.dtype)
    if n == 0:
        return total
    one_row = rows.size == n
    pieces = min(get_num_threads(), -(-n // GRAIN_SIZE)) if one_row and n >= GRAIN_SIZE else 1
    size = -(-n // pieces)
    for start in range(0, n, size):
        total = total + np.add.accumulate(rows[..., start:start + size], axis=-1)[..., -1]
    return total


def sum_of_squares_in_lanes(rows: np.ndarray) -> np.ndarray:
    """The sum of the squares of each row (over the last axis) as torch's 2-norm adds a
    contiguous block: in lanes of ``LANE_BYTES``, each adding down its column; then the
    lanes one at a time; then the entries left over one at a time, by fused
    multiply-adds but for the first ``ROUNDED_TAIL`` when there are that many."""
    width = LANE_BYTES // rows.dtype.itemsize
    n = rows.shape[-1]
    whole = n - n % width
    steps = rows[..., :whole].reshape(rows.shape[:-1] + (whole // width, width))
    lanes = lane_sums_of_squares(steps)
    total = lanes[..., 0]
    for j in range(1, width):
        total = total + lanes[..., j]
    rounded = ROUNDED_TAIL if n - whole >= ROUNDED_TAIL else 0
    for k in range(whole, n):
        entry = rows[..., k]
        total = (total + entry * entry if k < whole + rounded
                 else fused_square_add(total, entry))
    return total


def lane_sums_of_squares(steps: np.ndarray) -> np.ndarray:
    """Lane j's sum steps[..., 0, j]**2 + steps[..., 1, j]**2 + ..., added one row at a time,
    each square rounded: numpy reduces over an outer axis of an array row after row (its
    pairwise summation applies only along an inner axis it reduces). Its fast twin, unless
    ``chaingrad.use_reference()`` is on: ``np.einsum``'s sum of products over the rows, the
    same additions in the same order, without the array of squares and numpy's loop of
    one short row at a time (``clip_grad_norm_`` over a word-level LSTM's million gradient
    entries: 1.4 ms where it took 3.3, ``benchmarks/updates.py``); used where it gives the
    reference's bits (``einsum_rounds_each_product``)."""
    if not reference.only and einsum_rounds_each_product():
        return np.einsum("...ij,...ij->...j", steps, steps)
    return np.add.reduce(np.ascontiguousarray(steps * steps), axis=-2)


@functools.cache
def einsum_rounds_each_product() -> bool:
    """Whether this numpy's ``einsum`` sums products over the rows as
    ``lane_sums_of_squares``'s reference does, bit for bit, on a probe of 32,768 float32
    and float64 entries of many magnitudes: each product rounded, then added in order. A
    build whose einsum fused each multiply and add (an FMA, which would round once) would
    differ at most entries, and runs the reference."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        probe = (rng.standard_normal((4096, 8)) * 10.0 ** rng.integers(-4, 4, (4096, 1)))
        probe = probe.astype(dtype).reshape(2, 2048, 8)
        if not np.array_equal(np.einsum("...ij,...ij->...j", probe, probe),
                              np.add.reduce(probe * probe, axis=-2)):
            return False
    return True


def fused_square_add(total: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``total + x * x`` rounded once (a fused multiply-add), entry by entry, in their
    float type (inf and nan as the hardware gives them, without numpy's warnings)."""
    return quietly(_fused_square_add, total, x)


def _fused_square_add(total: np.ndarray, x: np.ndarray) -> np.ndarray:
    if total.dtype != np.float32:  # float64: exactly, in rationals (a handful of entries)
        exact = [float(Fraction(t) + Fraction(v) ** 2) if math.isfinite(t + v * v) else t + v * v
                 for t, v in zip(np.ravel(total).tolist(), np.ravel(x).tolist())]
        return np.asarray(exact, dtype=total.dtype).reshape(np.shape(total))
    t, square = total.astype(np.float64), x.astype(np.float64) ** 2  # exact: 48 bits
    s = t + square
    shift = s - t
    error = (t - (s - shift)) + (square - shift)  # s + error == t + square exactly (TwoSum)
    near = s.astype(np.float32)
    # s rounds to float32 as t + square does, unless s is halfway between two float32s and
    # the error says on which side of halfway the exact sum lies
    above, below = error > 0, error < 0  # neither where inf or nan made the error nan
    other = np.nextafter(near, np.where(above, np.float32(np.inf), np.float32(-np.inf)))
    halfway = (near.astype(np.float64) + other.astype(np.float64)) / 2 == s
    return np.where(halfway & (above | below), other, near)


# ---- which order torch takes for an input ----


def summation_order(x: np.ndarray, axes: tuple[int, ...]) -> tuple[tuple[int, ...], bool]:
    """How torch walks ``x`` to sum its norm over ``axes``: those axes in memory order
    (the slowest-moving first: flattened in this order, the entries come in the order
    torch visits them), and whether they are one contiguous block (torch's lanes, for
    ord 2)."""
    in_memory = sorted(axes, key=lambda a: (x.shape[a] != 1, -abs(x.strides[a])))
    step, block = x.dtype.itemsize, True
    for a in reversed(in_memory):
        if x.shape[a] != 1:
            block = block and x.strides[a] == step
            step *= x.shape[a]
    return tuple(in_memory), block


def _rows(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """x with the axes it keeps first and ``axes``, in their order, flattened into one last
    axis: one row per output of the reduction."""
    kept = [a for a in range(x.ndim) if a not in axes]
    return x.transpose(kept + list(axes)).reshape(
        [x.shape[a] for a in kept] + [math.prod(x.shape[a] for a in axes)])


def _shaped(total: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...],
            keepdims: bool) -> np.ndarray:
    return total.reshape(kept_shape(shape, axes)) if keepdims else total


def sum_of_squares_on_arrays(x: np.ndarray, axes: tuple[int, ...], keepdims: bool,
                             in_lanes: bool) -> np.ndarray:
    """The sum of the squares of ``x`` over ``axes``, the entries taken in the order of
    ``axes`` (as ``summation_order`` gives them), in lanes or one at a time."""
    rows = _rows(x, axes)
    total = sum_of_squares_in_lanes(rows) if in_lanes else sum_one_at_a_time(rows * rows)
    return _shaped(total, x.shape, axes, keepdims)


def sum_in_order_on_arrays(terms: np.ndarray, axes: tuple[int, ...],
                           keepdims: bool) -> np.ndarray:
    """The sum of ``terms`` over ``axes``, one at a time in the order of ``axes`` (as
    ``summation_order`` gives them)."""
    return _shaped(sum_one_at_a_time(_rows(terms, axes)), terms.shape, axes, keepdims)


# ---- the nodes: a 2-norm's sum of squares, and the sum of other norms' terms ----


@define("sum_of_squares",
        array=sum_of_squares_on_arrays, forward=sum_of_squares_on_arrays,
        params=("axes", "keepdims", "in_lanes"), saves=("x",))
def SUM_OF_SQUARES(xs, out, g, axes, keepdims, in_lanes):
    """The sum of x * x over ``axes``, added in torch's order;  d/dx = 2x (the gradient
    ``(x * x).sum()`` gets, to the bit)."""
    return (2 * xs[0] * expand(g, axes, xs[0].shape),)


@define("sum_in_order",
        array=sum_in_order_on_arrays, forward=sum_in_order_on_arrays,
        params=("axes", "keepdims"), saves=("",))
def SUM_IN_ORDER(xs, out, g, axes, keepdims):
    """The sum over ``axes``, one entry at a time in the order of ``axes``;  d/dx = 1 for
    every entry, as the sum's: g repeated along the summed axes."""
    return (expand(g, axes, xs[0].shape),)


def norm_sum(x: Any, ord: float, axes: tuple[int, ...], keepdim: bool,  # noqa: A002
             layout: np.ndarray) -> Any:
    """The node of the sum of the ``ord``-norm's terms of the Tensor ``x`` over ``axes``
    (``x * x`` for ord 2, ``|x|`` for 1, ``|x| ** ord`` else), added as torch adds them
    for an input laid out in memory as ``layout`` (the array the norm was asked of, which
    ``x`` may be a copy of). Only float32 and float64 (``torch_orders``): other types sum
    as ``Tensor.sum`` does."""
    terms = x if ord == 2 else x.abs() if ord == 1 else x.abs() ** ord
    if not torch_orders(layout.dtype):
        return (terms * terms if ord == 2 else terms).sum(axes, keepdim)
    order, in_lanes = summation_order(layout, axes)
    if ord == 2:
        return x._apply(SUM_OF_SQUARES.bind(order, keepdim, in_lanes))
    return terms._apply(SUM_IN_ORDER.bind(order, keepdim))


# ---- a norm's value, as torch computes it ----


def torch_orders(dtype: Any) -> bool:
    """Whether chaingrad adds a norm of ``dtype`` in torch's order: float32 and float64
    (torch adds float16 and bfloat16 in float32, in orders of their own)."""
    return np.dtype(dtype).type in (np.float32, np.float64)


def norm_in_torch_order(x: np.ndarray, ord: float) -> np.ndarray:  # noqa: A002 - torch's name
    """The ``ord``-norm of all of ``x`` (a float32 or float64 array) in its own type, as
    ``torch.linalg.vector_norm`` computes it: a 0-d array (what ``clip_grad_norm_``
    takes the norm of, gradient by gradient, then of their norms); inf and nan as torch
    gives them, without numpy's warnings.

    Example:
        >>> import numpy as np
        >>> norm_in_torch_order(np.array([3.0, -4.0], dtype=np.float32), 2.0)
        array(5., dtype=float32)
    """
    return quietly(_norm_in_torch_order, x, ord)


def _norm_in_torch_order(x: np.ndarray, ord: float) -> np.ndarray:  # noqa: A002
    axes, in_lanes = summation_order(x, tuple(range(x.ndim)))
    if ord == 2 and x.size != 1:  # the usual norm first: it needs no |x|
        return np.asarray(np.sqrt(sum_of_squares_on_arrays(x, axes, False, in_lanes)))
    magnitudes = np.abs(x)
    if ord == math.inf:
        return np.asarray(magnitudes.max(initial=0), dtype=x.dtype)
    if ord == -math.inf:
        return np.asarray(magnitudes.min(initial=math.inf), dtype=x.dtype)
    if ord == 0:
        return np.asarray(np.count_nonzero(x), dtype=x.dtype)
    if x.size == 1:  # torch's |x| for one entry (no square to overflow)
        return magnitudes.reshape(())
    if ord == 1:
        return np.asarray(sum_in_order_on_arrays(magnitudes, axes, False))
    # torch raises each |x| to ord with C's pow (powf in float32: the same as pow's float64
    # result rounded once), as Python's ** does; numpy's power may differ in the last bit
    terms = np.array([_pow(m, ord) for m in magnitudes.ravel().tolist()]).astype(x.dtype)
    terms = terms.reshape(x.shape)
    root = float(np.float32(1) / np.float32(ord)) if x.dtype == np.float32 else 1.0 / ord
    return np.asarray(_pow(float(sum_in_order_on_arrays(terms, axes, False)), root),
                      dtype=x.dtype)


def _pow(base: float, exponent: float) -> float:
    """C's pow(base, exponent) for a base >= 0: Python's ``**``, with inf for 0 to a
    negative power (where Python raises)."""
    return math.inf if base == 0 and exponent < 0 else base**exponent
