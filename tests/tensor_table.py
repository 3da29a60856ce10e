"""The one table of Tensor ops that the tensor tests are driven by.

Each row names an op, how to call it on chaingrad Tensors, how to call it on torch tensors
(the oracle), and a hypothesis strategy of ``Case``s: input arrays (float64, drawn from the
op's safe domain, away from kinks, ties and singularities) plus the op's parameters
(axes, indices, shapes, ...). Finite differences, the PyTorch comparison and the
second-derivative tests all read this table.
Rows at ties (``finite_differences=False``: the derivative jumps there) are checked against
torch only, rows torch lacks (``torch_fn=None``: negative-step slices) by finite
differences only: ``FD_OPS`` and ``TORCH_OPS`` are the rows each check runs.

torch is never imported here at module level: ``T.relu`` looks ``torch.relu`` up when the
callable runs, so the finite-difference tests run without torch installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numerics import ANY, CLIP_SAFE, EPS, EXPONENT, NONZERO, POSITIVE, Interval, T
from ops_table import OPS as SCALAR_OPS

import chaingrad
from chaingrad import Tensor
from chaingrad.nn.functional import conv2d, max_pool2d
from chaingrad.nn.modules.rnn import gru_recurrence, lstm_recurrence, rnn_recurrence
from chaingrad.rules import FUNCTIONS
from chaingrad.tensor_engine.functions import concatenate, stack, where


@dataclass(frozen=True)
class Case:
    """Inputs (float64 arrays) and parameters for one call of an op."""

    arrays: tuple[np.ndarray, ...]
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class TensorOp:
    """One row: an op on Tensors, its torch oracle and the cases to try it at."""

    name: str
    fn: Callable[..., Tensor]  # fn(*tensors, **params)
    torch_fn: Callable | None  # torch_fn(*torch_tensors, **params); None: torch lacks it
    cases: Callable[[], st.SearchStrategy[Case]]
    finite_differences: bool = True  # False for cases at ties, where the derivative jumps


# ---- strategies ----

SMALL = {"min_side": 1, "max_side": 4}


def _elements(domain: tuple[Interval, ...]) -> st.SearchStrategy[float]:
    return st.one_of(*(st.floats(lo, hi, allow_nan=False, allow_infinity=False)
                       for lo, hi in domain))


def _array(shape: tuple[int, ...], domain: tuple[Interval, ...] = ANY):
    return hnp.arrays(np.float64, shape, elements=_elements(domain))


def _distinct(shape: tuple[int, ...]):
    """Values at least 0.25 apart (no ties, so max/min have one clear winner)."""
    size = int(np.prod(shape))
    return st.permutations(range(size)).map(
        lambda p: (np.array(p, dtype=np.float64) * 0.25 - size * 0.125).reshape(shape))


@st.composite
def elementwise(draw, arity: int = 1, domains: tuple = (ANY, ANY), min_dims: int = 0):
    """Inputs of mutually broadcastable shapes (scalars, rows, columns, leading axes)."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=arity, min_dims=min_dims,
                                                    max_dims=3, **SMALL)).input_shapes
    return Case(tuple(draw(_array(s, domains[i])) for i, s in enumerate(shapes)))


@st.composite
def matmul_cases(draw):
    n, k, m, b = (draw(st.integers(1, 4)) for _ in range(4))
    pairs = [((k,), (k,)), ((k,), (k, m)), ((n, k), (k,)), ((n, k), (k, m)),
             ((b, n, k), (k, m)), ((n, k), (b, k, m)), ((2, 1, n, k), (b, k, m)),
             ((k,), (b, k, m)), ((b, n, k), (k,))]
    a, c = draw(st.sampled_from(pairs))
    return Case((draw(_array(a)), draw(_array(c))))


def _tied(shape: tuple[int, ...]):
    """Values from {-1, 0, 1}: most reductions and windows have tied extremes."""
    return hnp.arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0, -1.0]))


@st.composite
def reduce_cases(draw, values: str = "any"):
    """An array and the axes to reduce; ``values`` "any", "distinct" (no ties) or "tied"."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    axes = st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                     st.lists(st.integers(0, len(shape) - 1), min_size=1,
                              unique=True).map(tuple))
    x = draw({"any": _array, "distinct": _distinct, "tied": _tied}[values](shape))
    return Case((x,), {"axis": draw(axes), "keepdims": draw(st.booleans())})


@st.composite
def softmax_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    return Case((draw(_array(shape)),), {"axis": draw(st.integers(-len(shape),
                                                                  len(shape) - 1))})


@st.composite
def reshape_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, **SMALL))
    size = int(np.prod(shape))
    new = draw(st.sampled_from([(size,), (-1,), (1, size), (size, 1, 1), shape[::-1]]))
    return Case((draw(_array(shape)),), {"shape": new})


@st.composite
def transpose_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, **SMALL))
    return Case((draw(_array(shape)),),
                {"axes": tuple(draw(st.permutations(range(len(shape)))))})


@st.composite
def dim_cases(draw, values: str = "distinct"):
    """An array, one dim to reduce along and keepdim, for ``max(dim)``/``min(dim)``."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    x = draw({"distinct": _distinct, "tied": _tied}[values](shape))
    return Case((x,), {"dim": draw(st.integers(-len(shape), len(shape) - 1)),
                       "keepdim": draw(st.booleans())})


def _grid(shape: tuple[int, ...], offset: float):
    """Multiples of 0.25 plus ``offset``: two grids with different offsets never tie."""
    return hnp.arrays(np.float64, shape, elements=st.integers(-12, 12).map(
        lambda k: k * 0.25 + offset))


@st.composite
def apart_cases(draw):
    """Two inputs of broadcastable shapes that are nowhere equal (maximum has a kink there)."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3,
                                                    **SMALL)).input_shapes
    return Case((draw(_grid(shapes[0], 0.0)), draw(_grid(shapes[1], 0.125))))


@st.composite
def tied_pair_cases(draw):
    """Two inputs of one shape from {-1, 0, 1}: many entries tie."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, **SMALL))
    return Case((draw(_tied(shape)), draw(_tied(shape))))


@st.composite
def swap_cases(draw):
    """An array and two dims to swap (possibly the same one, possibly negative)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, **SMALL))
    dims = st.integers(-len(shape), len(shape) - 1)
    return Case((draw(_array(shape)),), {"dim0": draw(dims), "dim1": draw(dims)})


@st.composite
def spread_cases(draw):
    """Distinct values (a nonzero spread) with at least 2 along the dim (None: all)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4))
    dim = draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    return Case((draw(_distinct(shape)),), {"dim": dim, "keepdim": draw(st.booleans())})


@st.composite
def norm_cases(draw):
    """An array away from 0 (where the 2-norm has a kink) and a dim (None: all)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    dim = draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    return Case((draw(_array(shape, NONZERO)),), {"dim": dim, "keepdim": draw(st.booleans())})


@st.composite
def index_cases(draw, negative_steps: bool = False):
    """Ints, slices, integer arrays with repeats, boolean masks, ``...``, None (newaxis),
    and mixtures; or, with ``negative_steps`` (numpy has them, torch does not), slices
    with a negative step, alone or with ints, ``...`` and None (their ends clip)."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    n, last = shape[0], shape[-1]
    kind = "back" if negative_steps else draw(st.sampled_from(
        ["int", "slice", "repeats", "mask", "mixed", "pair", "ellipsis", "newaxis"]))
    if kind == "back":
        ends = st.none() | st.integers(-6, 6)
        back = slice(draw(ends), draw(ends), draw(st.integers(-3, -1)))
        options = [back, (back, None), (..., back), (None, back, ...)]
        if len(shape) > 1:
            options += [(slice(None, None, -1), back), (draw(st.integers(-n, n - 1)), ..., back)]
        index = draw(st.sampled_from(options))
    elif kind == "ellipsis":  # ... stands for every axis the index does not name
        rows = np.array(draw(st.lists(st.integers(0, last - 1), min_size=1, max_size=4)))
        index = draw(st.sampled_from([(..., draw(st.integers(-last, last - 1))),
                                      (draw(st.integers(-n, n - 1)), ...), (..., rows),
                                      (..., slice(1, None)), ...]))
    elif kind == "newaxis":  # None inserts an axis of size 1
        rows = np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
        index = draw(st.sampled_from([None, (None, slice(draw(st.integers(0, n - 1)), None)),
                                      (slice(None), None), (..., None), (None, rows),
                                      (draw(st.integers(-n, n - 1)), None, ...)]))
    elif kind == "int":
        index = draw(st.integers(-n, n - 1))
    elif kind == "slice":
        index = slice(draw(st.integers(0, n - 1)), None, draw(st.integers(1, 2)))
    elif kind == "repeats":
        index = np.array(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=6)))
    elif kind == "mask":
        index = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    elif kind == "mixed" and len(shape) > 1:
        index = (slice(None), np.array(draw(st.lists(st.integers(0, shape[1] - 1),
                                                      min_size=1, max_size=5))))
    else:  # two integer arrays, broadcast together, repeats allowed
        rows = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
        index = (np.array(rows), np.array(rows[::-1])) if len(shape) > 1 and n <= shape[1] \
            else np.array(rows)
    return Case((draw(_array(shape)),), {"index": index})


@st.composite
def join_cases(draw, same_shape: bool):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    count = draw(st.integers(1, 3))
    axis = draw(st.integers(-len(shape), len(shape) - 1 + (1 if same_shape else 0)))
    shapes = []
    for _ in range(count):
        s = list(shape)
        if not same_shape:
            s[axis] = draw(st.integers(1, 3))
        shapes.append(tuple(s))
    return Case(tuple(draw(_array(s)) for s in shapes), {"axis": axis})


@st.composite
def where_cases(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3,
                                                    **SMALL)).input_shapes
    cond = draw(hnp.arrays(np.bool_, shapes[0]))
    return Case((draw(_array(shapes[1])), draw(_array(shapes[2]))), {"cond": cond})


@st.composite
def pair_shaped(draw):
    """Inputs that broadcast against an array of shape (2,), from either side."""
    shape = draw(st.sampled_from([(), (1,), (2,), (3, 1), (3, 2), (2, 1, 2)]))
    return Case((draw(_array(shape)),))


def _pair_or_int(low: int, high: int):
    """An int, or an (h, w) pair of ints, each in [low, high] (as conv2d and pools take)."""
    return st.one_of(st.integers(low, high), st.tuples(st.integers(low, high),
                                                       st.integers(low, high)))


def _as_pair(value: int | tuple[int, int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else value


@st.composite
def conv_cases(draw):
    """NCHW input, (O, C, kh, kw) weight, maybe a bias; strides and paddings of either form;
    some inputs wide enough for outputs of at least 8 columns (the fast twins' other
    layout, kernels.SHORT_ROW)."""
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride, padding = draw(_pair_or_int(1, 3)), draw(_pair_or_int(0, 2))
    (ph, pw), sw = _as_pair(padding), _as_pair(stride)[1]
    h = draw(st.integers(max(1, kh - 2 * ph), 5))
    w = draw(st.integers(8 * sw + kw, 8 * sw + kw + 2) if draw(st.booleans()) else
             st.integers(max(1, kw - 2 * pw), 5))
    arrays = [draw(_array((n, c, h, w))), draw(_array((o, c, kh, kw)))]
    if draw(st.booleans()):
        arrays.append(draw(_array((o,))))
    return Case(tuple(arrays), {"stride": stride, "padding": padding})


@st.composite
def layer_norm_cases(draw):
    """An input with distinct values (a variance away from 0) normalized over its last one
    or two axes, with a weight and a bias, a weight only, or neither; eps drawn too."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4))
    normalized = shape[len(shape) - draw(st.integers(1, min(2, len(shape)))):]
    arrays = [draw(_distinct(shape))]
    for _ in range(draw(st.integers(0, 2))):
        arrays.append(draw(_array(normalized)))
    return Case(tuple(arrays), {"normalized_shape": normalized,
                                "eps": draw(st.sampled_from([1e-5, 0.1]))})


@st.composite
def pool_cases(draw, tied: bool = False):
    """NCHW input with distinct values (one clear largest entry per window); or ``tied``, a
    ReLU's output: windows of zeros, partly tied windows, overlapping windows (stride <
    kernel) picking the same entry. torch gives a window's gradient to its first largest
    entry; finite differences do not apply at a tie, so tied cases go to torch only."""
    kernel = draw(_pair_or_int(1, 3))
    kh, kw = _as_pair(kernel)
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(kh, 6)),
             draw(st.integers(kw, 6)))
    x = np.maximum(draw(_tied(shape)), 0.0) if tied else draw(_distinct(shape))
    stride = st.sampled_from([1, (1, 2), (2, 1)]) | st.none() | _pair_or_int(1, 3)
    return Case((x,), {"kernel_size": kernel, "stride": draw(stride)})


@st.composite
def einsum_cases(draw):
    """An equation of one, two or three operands (products, batched and attention-shaped
    products, sums, transposes, outer products, ``...``) and operands of its shapes."""
    n, m, k, b = (draw(st.integers(1, 3)) for _ in range(4))
    equation, shapes = draw(st.sampled_from([
        ("ij,jk->ik", [(n, m), (m, k)]), ("bij,bjk->bik", [(b, n, m), (b, m, k)]),
        ("i,i->", [(n,), (n,)]), ("ij->ji", [(n, m)]), ("ij->", [(n, m)]),
        ("ij,ij->i", [(n, m), (n, m)]), ("i,j->ij", [(n,), (m,)]),
        ("bhtd,bhsd->bhts", [(b, 2, n, m), (b, 2, k, m)]), ("...ij,jk->...ik", [(b, n, m), (m, k)]),
        ("ij,jk,kl->il", [(n, m), (m, k), (k, b)]), ("ijk->kj", [(n, m, k)]),
        ("ij,jk", [(n, m), (m, k)]), ("bi,bj->b", [(b, n), (b, n)][:1] + [(b, m)]),
    ]))
    return Case(tuple(draw(_array(s)) for s in shapes), {"equation": equation})


@st.composite
def bmm_cases(draw):
    b, n, m, k = (draw(st.integers(1, 3)) for _ in range(4))
    return Case((draw(_array((b, n, m))), draw(_array((b, m, k)))))


@st.composite
def sort_cases(draw):
    """Distinct values (a sort has one order), a dim and a direction."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    return Case((draw(_distinct(shape)),), {"dim": draw(st.integers(-len(shape), len(shape) - 1)),
                                            "descending": draw(st.booleans())})


@st.composite
def topk_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return Case((draw(_distinct(shape)),), {"k": draw(st.integers(0, shape[dim])), "dim": dim,
                                            "largest": draw(st.booleans())})


@st.composite
def triangle_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=3, **SMALL))
    return Case((draw(_array(shape)),), {"diagonal": draw(st.integers(-3, 3))})


@st.composite
def masked_fill_cases(draw):
    """An array, a bool mask that broadcasts to it, and a number to put where it is True."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                    **SMALL))
    shape = shapes.result_shape
    mask_shape = shapes.input_shapes[1][-len(shape):] if shapes.input_shapes[1] else ()
    return Case((draw(_array(shape)),), {"mask": draw(hnp.arrays(np.bool_, mask_shape)),
                                         "value": draw(st.floats(-3, 3))})


@st.composite
def split_cases(draw):
    """An array, a dim, and a piece size or a list of sizes that sum to that dim's."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    if draw(st.booleans()):
        sizes = draw(st.integers(1, n + 1))
    else:
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
        sizes = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
    return Case((draw(_array(shape)),), {"sizes": sizes, "dim": dim})


@st.composite
def shift_cases(draw):
    """An array, shifts (negative, larger than the dim) and their dims, or none: flattened."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    dims = draw(st.none() | st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1,
                                     max_size=2).map(tuple))
    shifts = tuple(draw(st.integers(-5, 5)) for _ in (dims or (0,)))
    return Case((draw(_array(shape)),), {"shifts": shifts if dims else shifts[0], "dims": dims})


@st.composite
def repeat_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, **SMALL))
    sizes = tuple(draw(st.integers(1, 3)) for _ in range(len(shape) + draw(st.integers(0, 1))))
    return Case((draw(_array(shape)),), {"sizes": sizes or (2,)})


@st.composite
def gather_cases(draw, scatter: bool = False):
    """An array, a dim and an index of its number of dims (repeats allowed), no larger than
    the array away from the dim; for scatter_add, a source of the index's shape too."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = tuple(draw(st.integers(1, 4)) if i == dim % len(shape) else
                        draw(st.integers(1, n)) for i, n in enumerate(shape))
    index = draw(hnp.arrays(np.int64, index_shape, elements=st.integers(0, shape[dim] - 1)))
    arrays = (draw(_array(shape)),) + ((draw(_array(index_shape)),) if scatter else ())
    return Case(arrays, {"dim": dim, "index": index})


@st.composite
def probability_cases(draw):
    """Probabilities away from 0 and 1 and targets in [0, 1] (away from the ends by more than
    a finite difference's nudge: beyond them torch's binary_cross_entropy refuses), of one
    shape."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, **SMALL))
    return Case((draw(_array(shape, ((0.05, 0.95),))), draw(_array(shape, ((0.001, 0.999),)))))


@st.composite
def flip_cases(draw):
    """An array and one or more distinct dims to flip."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    dims = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                         unique=True))
    return Case((draw(_array(shape)),), {"dims": [d - len(shape) * draw(st.booleans())
                                                  for d in dims]})


@st.composite
def narrow_cases(draw):
    """An array, a dim, a start (negative too) and a length that fits."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, **SMALL))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    start = draw(st.integers(0, shape[dim]))
    length = draw(st.integers(0, shape[dim] - start))
    if draw(st.booleans()) and start < shape[dim]:
        start -= shape[dim]
    return Case((draw(_array(shape)),), {"dim": dim, "start": start, "length": length})


@st.composite
def matrix_cases(draw, rhs: str = ""):
    """Square matrices (n of 1 to 3, a batch of them or not), far from singular: entries in
    [-1, 1] plus 4 on the diagonal; with ``rhs``, a right-hand side B: "vector" (n,) or
    (batch, n), "matrix" (n, k) or (batch, n, k), "broadcast" (n, k) against a batch."""
    n = draw(st.integers(1, 3))
    batch = draw(st.sampled_from([(), (2,)]))
    a = draw(_array(batch + (n, n), ((-1.0, 1.0),))) + 4 * np.eye(n)
    if not rhs:
        return Case((a,))
    k = draw(st.integers(1, 3))
    shape = {"vector": batch + (n,), "matrix": batch + (n, k), "broadcast": (n, k)}[rhs]
    return Case((a, draw(_array(shape))))


@st.composite
def lstm_recurrence_cases(draw):
    """An LSTM layer's steps' inputs: the input's part of the gates x_parts (T, N, 4H) of 1
    to 3 steps, W_hh (4H, H), h0 and c0 (N, H), entries in [-1, 1]; the steps run forwards
    or, ``reverse``, backwards."""
    steps, batch, hidden = (draw(st.integers(1, 3)) for _ in range(3))
    shapes = [(steps, batch, 4 * hidden), (4 * hidden, hidden), (batch, hidden), (batch, hidden)]
    arrays = tuple(draw(_array(shape, ((-1.0, 1.0),))) for shape in shapes)
    return Case(arrays, {"reverse": draw(st.booleans())})


def _torch_lstm_recurrence(x_parts, w_hh, h0, c0, reverse):
    """torch's LSTM steps, composed: the starting state's row (its gates zeros), then each
    step's gates, c and h side by side (the output of chaingrad's ``lstm_recurrence``)."""
    n, h, c = h0.shape[-1], h0, c0
    rows = [None] * len(x_parts)
    for t in reversed(range(len(x_parts))) if reverse else range(len(x_parts)):
        z = x_parts[t] + h @ w_hh.T
        i, f, o = (z[:, k * n:(k + 1) * n].sigmoid() for k in (0, 1, 3))
        g = z[:, 2 * n:3 * n].tanh()
        c = f * c + i * g
        h = o * c.tanh()
        rows[t] = T.cat([i, f, g, o, c, h], -1)
    start = T.cat([T.zeros_like(x_parts[0]), c0, h0], -1)
    return T.stack(rows + [start] if reverse else [start] + rows)


@st.composite
def gru_recurrence_cases(draw):
    """A GRU layer's steps' inputs: x_parts (T, N, 3H) of 1 to 3 steps, W_hh (3H, H), h0
    (N, H) and, or not, b_hh (3H,), entries in [-1, 1]; forwards or backwards."""
    steps, batch, hidden = (draw(st.integers(1, 3)) for _ in range(3))
    shapes = [(steps, batch, 3 * hidden), (3 * hidden, hidden), (batch, hidden)] + [
        (3 * hidden,)] * draw(st.integers(0, 1))
    arrays = tuple(draw(_array(shape, ((-1.0, 1.0),))) for shape in shapes)
    return Case(arrays, {"reverse": draw(st.booleans())})


def _torch_gru_recurrence(x_parts, w_hh, h0, *b_hh, reverse):
    """torch's GRU steps, composed: the starting state's row (its other blocks zeros), then
    each step's r, z, n, h W_hn^T + b_hn and h (the output of chaingrad's
    ``gru_recurrence``)."""
    n, h = h0.shape[-1], h0
    rows = [None] * len(x_parts)
    for t in reversed(range(len(x_parts))) if reverse else range(len(x_parts)):
        h_part = h @ w_hh.T + (b_hh[0] if b_hh else 0)
        x_part = x_parts[t]
        r = (h_part[:, :n] + x_part[:, :n]).sigmoid()
        z = (h_part[:, n:2 * n] + x_part[:, n:2 * n]).sigmoid()
        new = (x_part[:, 2 * n:] + h_part[:, 2 * n:] * r).tanh()
        h = (h - new) * z + new  # as torch's GRU kernel computes it (ATen's gru_cell)
        rows[t] = T.cat([r, z, new, h_part[:, 2 * n:], h], -1)
    start = T.cat([T.zeros_like(h0).repeat(1, 4), h0], -1)
    return T.stack(rows + [start] if reverse else [start] + rows)


@st.composite
def rnn_recurrence_cases(draw, relu: bool = False):
    """An Elman RNN layer's steps' inputs: x_parts (T, N, H) of 1 to 3 steps, W_hh (H, H)
    and h0 (N, H), tanh (or ``relu``), forwards or backwards; entries in [-1, 1], but for
    relu away from its kink: |x_parts| >= 0.25 and |W_hh| <= 0.05, so that no step's sum
    is within 0.05 of 0."""
    steps, batch, hidden = (draw(st.integers(1, 3)) for _ in range(3))
    domains = [((-1.0, -0.25), (0.25, 1.0)), ((-0.05, 0.05),)] if relu else [((-1.0, 1.0),)] * 2
    shapes = [(steps, batch, hidden), (hidden, hidden), (batch, hidden)]
    arrays = tuple(draw(_array(shape, domain))
                   for shape, domain in zip(shapes, [*domains, ((-1.0, 1.0),)]))
    return Case(arrays, {"relu": relu, "reverse": draw(st.booleans())})


def _torch_rnn_recurrence(x_parts, w_hh, h0, relu, reverse):
    """torch's Elman RNN steps, composed: the starting state, then each step's h (the
    output of chaingrad's ``rnn_recurrence``)."""
    h, rows = h0, [None] * len(x_parts)
    for t in reversed(range(len(x_parts))) if reverse else range(len(x_parts)):
        h = h @ w_hh.T + x_parts[t]
        h = h.relu() if relu else h.tanh()
        rows[t] = h
    return T.stack(rows + [h0] if reverse else [h0] + rows)


def _untied(shape: tuple[int, ...]):
    """Values away from 0 whose sums over any dims never tie (a norm's max, min and |x|
    have a clear winner): ``_distinct``'s, each moved by its own power of pi."""
    size = int(np.prod(shape))
    return st.permutations(range(size)).map(lambda p: (
        np.array(p, dtype=np.float64) * 0.25 - size * 0.125 + 0.1
        + 0.01 * np.pi ** (np.array(p) / size)).reshape(shape))


@st.composite
def linalg_norm_cases(draw, matrix: bool = False):
    """An array away from 0 (its norms' kinks: |x| at 0), with an ord and dims: one or two
    dims for a vector norm (or all, None), two for a matrix norm."""
    shape = draw(hnp.array_shapes(min_dims=2 if matrix else 1, max_dims=3, **SMALL))
    if matrix:
        dims = tuple(draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=2,
                                   max_size=2, unique_by=lambda d: d % len(shape))))
        ord_ = draw(st.sampled_from(["fro", 1, -1, float("inf"), -float("inf")]))
        return Case((draw(_untied(shape)),), {"ord": ord_, "dim": dims})
    dims = draw(st.none() | st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1,
                                     max_size=2, unique_by=lambda d: d % len(shape)
                                     ).map(tuple))
    ord_ = draw(st.sampled_from([2, 1, 3, 0.5, -1, float("inf"), -float("inf")]))
    return Case((draw(_untied(shape)),), {"ord": ord_, "dim": dims})


@st.composite
def spread_matrix_cases(draw, ords: tuple = (), shape: str = "any", rhs: bool = False):
    """Matrices (m and n of 1 to 4, a batch of them or not) whose singular values are far
    apart and from 0 (where U, S and Vh are smooth, and so are the eigenvectors of
    A + A^T): entries in [-0.5, -0.05] or [0.05, 0.5] (none 0, where Householder's QR flips
    a sign) plus 5, 10, 15, 20 down the diagonal, so that each singular value is within 2
    of its own. ``shape``: "any", "square" or "tall" (m >= n); ``rhs``: with a right-hand
    side B (m x k). With ``ords``, a matrix norm's ord (one of them) and its two dims."""
    m, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    if shape != "any":
        m = n if shape == "square" else max(m, n)
    batch = draw(st.sampled_from([(), (2,)]))
    noise = draw(_array(batch + (m, n), ((-0.5, -0.05), (0.05, 0.5))))
    a = noise + 5 * np.eye(m, n) * np.arange(1, n + 1)
    if rhs:
        return Case((a, draw(_array(batch + (m, draw(st.integers(1, 3)))))))
    if not ords:
        return Case((a,))
    dims = draw(st.sampled_from([(-2, -1), (-1, -2)] + [(1, 2), (2, 1)] * bool(batch)))
    return Case((a,), {"ord": draw(st.sampled_from(ords)), "dim": dims})


def _squares_of_svd(lib: Any, a: Any, full_matrices: bool = False) -> Any:
    """The singular values with the squares of U's and Vh's first k columns and rows,
    side by side: what does not depend on the sign of each singular vector (torch's and
    LAPACK builds' choices differ)."""
    u, s, vh = lib.linalg.svd(a, full_matrices=full_matrices)
    k, batch = s.shape[-1], tuple(s.shape[:-1])
    return lib.cat([(u[..., :k] ** 2).reshape(batch + (-1,)), s,
                    (vh[..., :k, :] ** 2).reshape(batch + (-1,))], -1)


@st.composite
def matrix_power_cases(draw):
    """A matrix far from singular (``matrix_cases``) divided by 4, and a power n."""
    case = draw(matrix_cases())
    return Case((case.arrays[0] / 4,), {"n": draw(st.sampled_from([-3, -1, 0, 1, 2, 3, 5, 6]))})


@st.composite
def multi_dot_cases(draw):
    """Two to four matrices of chained sizes, the first may be a vector (a row), the last a
    vector (a column)."""
    count = draw(st.integers(2, 4))
    sizes = [draw(st.integers(1, 4)) for _ in range(count + 1)]
    shapes = [(sizes[i], sizes[i + 1]) for i in range(count)]
    if draw(st.booleans()):
        shapes[0] = shapes[0][1:]
    if draw(st.booleans()):
        shapes[-1] = shapes[-1][:1]
    return Case(tuple(draw(_array(shape)) for shape in shapes))


@st.composite
def cross_cases(draw):
    """Two arrays that broadcast, of a size-3 dim ``dim``."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3,
                                                    **SMALL)).input_shapes
    ndim = max(len(shape) for shape in shapes)
    shapes = [(1,) * (ndim - len(shape)) + shape for shape in shapes]
    dim = draw(st.integers(-ndim, ndim - 1))
    shapes = [shape[:dim % ndim] + (3,) + shape[dim % ndim + 1:] for shape in shapes]
    return Case(tuple(draw(_array(shape)) for shape in shapes), {"dim": dim})


@st.composite
def diagonal_cases(draw):
    """An array of 2 or 3 dims, two of them, and an offset (within them or not)."""
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=3, **SMALL))
    dims = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=2, max_size=2,
                         unique_by=lambda d: d % len(shape)))
    return Case((draw(_array(shape)),), {"offset": draw(st.integers(-3, 3)), "dim1": dims[0],
                                         "dim2": dims[1]})


@st.composite
def triangular_cases(draw):
    """A matrix far from singular and a right-hand side (``matrix_cases``), and which of
    its triangles to read, from which side, with a unit diagonal or not."""
    case = draw(matrix_cases("matrix"))
    left = draw(st.booleans())
    b = case.arrays[1] if left else case.arrays[1].swapaxes(-1, -2)
    return Case((case.arrays[0], b), {"upper": draw(st.booleans()), "left": left,
                                      "unitriangular": draw(st.booleans())})


@st.composite
def vander_cases(draw):
    """An array of 1 or 2 dims (its last at least 2 long, as N defaults to it), away from
    0 (where torch's cumprod backward divides by an x that underflows), and N: None or 2
    to 5."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=2, max_side=4))
    return Case((draw(_array(shape, NONZERO)),), {"N": draw(st.none() | st.integers(2, 5))})


@st.composite
def tensor_matrix_cases(draw, rhs: bool = False):
    """A 4 x 4 matrix far from singular, for the tensor solvers to see as (2, 2, 4): entries
    in [-1, 1] plus 5 on the diagonal, so that each row's diagonal outweighs the rest (with
    4, as ``matrix_cases`` adds for n <= 3, -1 everywhere else is singular); with ``rhs``, a
    right-hand side of 4 entries."""
    a = draw(_array((4, 4), ((-1.0, 1.0),))) + 5 * np.eye(4)
    return Case((a, draw(_array((4,)))) if rhs else (a,))


@st.composite
def pivoted_cases(draw, rhs: bool = False):
    """``spread_matrix_cases``' matrices with their rows shuffled, so that LU's partial
    pivoting swaps rows (each column's largest entry well clear of the others); with
    ``rhs``, a square one and a right-hand side."""
    case = draw(spread_matrix_cases(shape="square" if rhs else "any", rhs=rhs))
    a = case.arrays[0]
    order = draw(st.permutations(range(a.shape[-2])))
    return Case((a[..., order, :],) + case.arrays[1:])


def _side_by_side(lib: Any, *parts: Any) -> Any:
    """Outputs of one matrix (or batch) side by side in one tensor, each flattened."""
    batch = tuple(parts[0].shape[:-2])
    return lib.cat([part.reshape(batch + (-1,)) for part in parts], -1)


def _eigh(lib: Any, a: Any, uplo: str) -> Any:
    """eigh of the symmetric A + A^T: the eigenvalues, and the eigenvectors squared (their
    signs are LAPACK's)."""
    values, vectors = lib.linalg.eigh(a + a.mT, UPLO=uplo)
    return _side_by_side(lib, values[..., None], vectors ** 2)


def _weighted(pieces: Any, lib: Any, dim: int) -> Any:
    """The pieces of a split joined again, each scaled by its place (so that a gradient that
    reached the wrong piece would show)."""
    return lib.cat([p * (i + 1) for i, p in enumerate(pieces)], dim)


def _method(name: str) -> Callable[[Tensor], Tensor]:
    return lambda x: getattr(x, name)()


def _unary(domain: tuple[Interval, ...] = ANY):
    return lambda: elementwise(1, (domain,))


def _binary(left: tuple[Interval, ...] = ANY, right: tuple[Interval, ...] = ANY):
    return lambda: elementwise(2, (left, right))


def _torch_index(index: Any) -> Any:
    def convert(part: Any) -> Any:
        return T.as_tensor(part) if isinstance(part, np.ndarray) else part

    return tuple(map(convert, index)) if isinstance(index, tuple) else convert(index)


def _count(sizes: Any) -> int:
    """A number of chunks, from a split case's sizes."""
    return sizes if isinstance(sizes, int) else max(len(sizes), 1)


def _dims(axis: Any, ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)


_MAX = (lambda x, axis, keepdims: x.amax(axis, keepdims),
        lambda x, axis, keepdims: T.amax(x, _dims(axis, x.ndim), keepdims))
_MIN = (lambda x, axis, keepdims: x.amin(axis, keepdims),
        lambda x, axis, keepdims: T.amin(x, _dims(axis, x.ndim), keepdims))
SCALAR_ROWS = {op.name: op for op in SCALAR_OPS}
_POOL = (lambda x, kernel_size, stride: max_pool2d(x, kernel_size, stride),
         lambda x, kernel_size, stride: T.nn.functional.max_pool2d(x, kernel_size, stride))

OPS: list[TensorOp] = [
    # elementwise operators, with broadcasting in both directions
    TensorOp("add", lambda x, y: x + y, lambda x, y: x + y, _binary()),
    TensorOp("sub", lambda x, y: x - y, lambda x, y: x - y, _binary()),
    TensorOp("mul", lambda x, y: x * y, lambda x, y: x * y, _binary()),
    TensorOp("div", lambda x, y: x / y, lambda x, y: x / y, _binary(ANY, NONZERO)),
    TensorOp("pow", lambda x, y: x**y, lambda x, y: x**y, _binary(POSITIVE, EXPONENT)),
    TensorOp("neg", lambda x: -x, lambda x: -x, _unary()),
    TensorOp("pow_2", lambda x: x**2, lambda x: x**2, _unary()),
    TensorOp("pow_-1.5", lambda x: x**-1.5, lambda x: x**-1.5, _unary(POSITIVE)),
    TensorOp("pow_0.5", lambda x: x**0.5, lambda x: x**0.5, _unary(POSITIVE)),
    TensorOp("radd", lambda x: 2 + x, lambda x: 2 + x, _unary()),
    TensorOp("rsub", lambda x: 2 - x, lambda x: 2 - x, _unary()),
    TensorOp("rmul", lambda x: 0.5 * x, lambda x: 0.5 * x, _unary()),
    TensorOp("rtruediv", lambda x: 2 / x, lambda x: 2 / x, _unary(NONZERO)),
    TensorOp("rpow", lambda x: 2**x, lambda x: 2**x, _unary()),
    TensorOp("div_number", lambda x: x / 4.0, lambda x: x / 4.0, _unary()),
    TensorOp("array_left", lambda x: np.array([1.0, -2.0]) * x,
             lambda x: T.tensor([1.0, -2.0], dtype=T.float64) * x, lambda: pair_shaped()),
    TensorOp("matmul", lambda x, y: x @ y, lambda x, y: x @ y, matmul_cases),
    # the elementwise primitives, each from its row of ops_table (its domain, torch's function)
    *(TensorOp(name, _method(name), SCALAR_ROWS[name].torch_fn,
               _unary(SCALAR_ROWS[name].domains[0])) for name in FUNCTIONS),
    # and with parameters other than their defaults
    *(TensorOp(name, SCALAR_ROWS[name].fn, SCALAR_ROWS[name].torch_fn,
               _unary(SCALAR_ROWS[name].domains[0]))
      for name in ("leaky_relu_0.2", "softplus_beta_2")),
    TensorOp("clip", lambda x: x.clip(-1.0, 1.0), lambda x: x.clamp(-1.0, 1.0),
             _unary(CLIP_SAFE)),
    TensorOp("clip_min", lambda x: x.clip(min=-1.0), lambda x: x.clamp(min=-1.0),
             _unary(CLIP_SAFE)),
    # reductions and softmax
    TensorOp("sum", lambda x, axis, keepdims: x.sum(axis, keepdims),
             lambda x, axis, keepdims: x.sum(_dims(axis, x.ndim), keepdims), reduce_cases),
    TensorOp("mean", lambda x, axis, keepdims: x.mean(axis, keepdims),
             lambda x, axis, keepdims: x.mean(_dims(axis, x.ndim), keepdims), reduce_cases),
    TensorOp("max", *_MAX, lambda: reduce_cases("distinct")),
    TensorOp("min", *_MIN, lambda: reduce_cases("distinct")),
    # ties share the gradient evenly, as in torch.amax / amin (torch only: not smooth there)
    TensorOp("max_ties", *_MAX, lambda: reduce_cases("tied"), finite_differences=False),
    TensorOp("min_ties", *_MIN, lambda: reduce_cases("tied"), finite_differences=False),
    # torch's max(dim) and min(dim): the values, whose gradient goes to the returned index
    TensorOp("max_dim", lambda x, dim, keepdim: x.max(dim, keepdim).values,
             lambda x, dim, keepdim: x.max(dim, keepdim).values, dim_cases),
    TensorOp("min_dim", lambda x, dim, keepdim: x.min(dim=dim, keepdim=keepdim)[0],
             lambda x, dim, keepdim: x.min(dim=dim, keepdim=keepdim)[0], dim_cases),
    TensorOp("max_dim_ties", lambda x, dim, keepdim: x.max(dim, keepdim).values,
             lambda x, dim, keepdim: x.max(dim, keepdim).values, lambda: dim_cases("tied"),
             finite_differences=False),
    TensorOp("maximum", lambda x, y: x.maximum(y), lambda x, y: T.maximum(x, y), apart_cases),
    TensorOp("minimum", lambda x, y: chaingrad.minimum(x, y), lambda x, y: T.minimum(x, y),
             apart_cases),
    TensorOp("maximum_ties", lambda x, y: chaingrad.max(x, y), lambda x, y: T.max(x, y),
             tied_pair_cases, finite_differences=False),
    TensorOp("norm", lambda x, dim, keepdim: x.norm(dim=dim, keepdim=keepdim),
             lambda x, dim, keepdim: x.norm(dim=dim, keepdim=keepdim), norm_cases),
    TensorOp("norm_1", lambda x: x.norm(p=1), lambda x: x.norm(p=1), _unary(NONZERO)),
    TensorOp("var", lambda x, dim, keepdim: x.var(dim, keepdim),
             lambda x, dim, keepdim: x.var(dim, keepdim=keepdim), lambda: spread_cases()),
    TensorOp("std", lambda x, dim, keepdim: chaingrad.std(x, dim, keepdim, correction=0),
             lambda x, dim, keepdim: T.std(x, dim, keepdim=keepdim, correction=0),
             lambda: spread_cases()),
    TensorOp("softmax", lambda x, axis: x.softmax(axis), lambda x, axis: x.softmax(axis),
             softmax_cases),
    TensorOp("log_softmax", lambda x, axis: x.log_softmax(axis),
             lambda x, axis: x.log_softmax(axis), softmax_cases),
    # shapes and indexing
    TensorOp("reshape", lambda x, shape: x.reshape(shape), lambda x, shape: x.reshape(shape),
             reshape_cases),
    TensorOp("permute", lambda x, axes: x.permute(*axes),
             lambda x, axes: x.permute(*axes), transpose_cases),
    TensorOp("transpose", lambda x, dim0, dim1: x.transpose(dim0, dim1),
             lambda x, dim0, dim1: x.transpose(dim0, dim1), swap_cases),
    TensorOp("mT", lambda x: x.mT, lambda x: x.mT, lambda: elementwise(1, (ANY,), min_dims=2)),
    TensorOp("flatten", lambda x: chaingrad.flatten(x, 1), lambda x: T.flatten(x, 1),
             lambda: elementwise(1, (ANY,), min_dims=2)),
    TensorOp("unsqueeze", lambda x: x.unsqueeze(-1).squeeze(0), lambda x: x.unsqueeze(-1)
             .squeeze(0), _unary()),
    TensorOp("clone", lambda x: x.clone() * x, lambda x: x.clone() * x, _unary()),
    # a round trip through float32: rounded as torch rounds it, so torch's check only
    TensorOp("to_float32", lambda x: x.float().double(), lambda x: x.float().double(),
             _unary(), finite_differences=False),
    TensorOp("T", lambda x: x.T, lambda x: x.permute(*reversed(range(x.ndim))),
             lambda: elementwise(1, (ANY,), min_dims=1)),
    TensorOp("getitem", lambda x, index: x[index],
             lambda x, index: x[_torch_index(index)], index_cases),
    TensorOp("getitem_reversed", lambda x, index: x[index], None,
             lambda: index_cases(negative_steps=True)),
    TensorOp("concatenate", lambda *xs, axis: concatenate(list(xs), axis),
             lambda *xs, axis: T.cat(list(xs), axis), lambda: join_cases(False)),
    TensorOp("stack", lambda *xs, axis: stack(list(xs), axis),
             lambda *xs, axis: T.stack(list(xs), axis), lambda: join_cases(True)),
    TensorOp("where", lambda x, y, cond: where(cond, x, y),
             lambda x, y, cond: T.where(T.as_tensor(cond), x, y), where_cases),
    # running sums, sorting, einsum and the shapes of attention
    TensorOp("cumsum", lambda x, axis: x.cumsum(axis), lambda x, axis: x.cumsum(axis),
             softmax_cases),
    TensorOp("logsumexp", lambda x, axis, keepdims: x.logsumexp(_dims(axis, x.ndim), keepdims),
             lambda x, axis, keepdims: x.logsumexp(_dims(axis, x.ndim), keepdims),
             reduce_cases),
    TensorOp("einsum", lambda *xs, equation: chaingrad.einsum(equation, *xs),
             lambda *xs, equation: T.einsum(equation, *xs), einsum_cases),
    TensorOp("bmm", lambda x, y: chaingrad.bmm(x, y), lambda x, y: T.bmm(x, y), bmm_cases),
    TensorOp("sort", lambda x, dim, descending: x.sort(dim, descending).values,
             lambda x, dim, descending: x.sort(dim, descending).values, sort_cases),
    TensorOp("topk", lambda x, k, dim, largest: chaingrad.topk(x, k, dim, largest).values,
             lambda x, k, dim, largest: T.topk(x, k, dim, largest).values, topk_cases),
    TensorOp("tril", lambda x, diagonal: x.tril(diagonal), lambda x, diagonal: x.tril(diagonal),
             triangle_cases),
    TensorOp("triu", lambda x, diagonal: chaingrad.triu(x, diagonal),
             lambda x, diagonal: T.triu(x, diagonal), triangle_cases),
    TensorOp("masked_fill", lambda x, mask, value: x.masked_fill(Tensor._constant(mask), value),
             lambda x, mask, value: x.masked_fill(T.as_tensor(mask), value),
             masked_fill_cases),
    TensorOp("split", lambda x, sizes, dim: _weighted(x.split(sizes, dim), chaingrad, dim),
             lambda x, sizes, dim: _weighted(x.split(sizes, dim), T, dim), split_cases),
    TensorOp("chunk", lambda x, sizes, dim: _weighted(chaingrad.chunk(x, _count(sizes), dim),
                                                      chaingrad, dim),
             lambda x, sizes, dim: _weighted(T.chunk(x, _count(sizes), dim), T, dim),
             split_cases),
    TensorOp("unbind", lambda x, axis: _weighted([t.unsqueeze(axis) for t in x.unbind(axis)],
                                                 chaingrad, axis),
             lambda x, axis: _weighted([t.unsqueeze(axis) for t in x.unbind(axis)], T, axis),
             softmax_cases),
    TensorOp("roll", lambda x, shifts, dims: x.roll(shifts, dims),
             lambda x, shifts, dims: x.roll(shifts, dims), shift_cases),
    TensorOp("repeat", lambda x, sizes: x.repeat(*sizes), lambda x, sizes: x.repeat(*sizes),
             repeat_cases),
    TensorOp("gather", lambda x, dim, index: x.gather(dim, index),
             lambda x, dim, index: x.gather(dim, T.as_tensor(index)), gather_cases),
    TensorOp("scatter_add", lambda x, src, dim, index: chaingrad.scatter_add(x, dim, index, src),
             lambda x, src, dim, index: T.scatter_add(x, dim, T.as_tensor(index), src),
             lambda: gather_cases(scatter=True)),
    TensorOp("flip", lambda x, dims: x.flip(dims), lambda x, dims: x.flip(dims), flip_cases),
    TensorOp("torch.flip", lambda x, dims: chaingrad.flip(x, dims),
             lambda x, dims: T.flip(x, dims), flip_cases),
    TensorOp("narrow", lambda x, dim, start, length: x.narrow(dim, start, length),
             lambda x, dim, start, length: x.narrow(dim, start, length), narrow_cases),
    TensorOp("Tensor.where", lambda x, y: x.where(x.detach() > 0, y),
             lambda x, y: x.where(x.detach() > 0, y), _binary(NONZERO, ANY)),
    # torch.linalg: inv, det and solve are primitives (chaingrad/tensor_engine/linalg.py)
    TensorOp("linalg.inv", lambda a: chaingrad.linalg.inv(a), lambda a: T.linalg.inv(a),
             matrix_cases),
    TensorOp("linalg.det", lambda a: chaingrad.linalg.det(a), lambda a: T.linalg.det(a),
             matrix_cases),
    *(TensorOp(f"linalg.solve_{rhs}", lambda a, b: chaingrad.linalg.solve(a, b),
               lambda a, b: T.linalg.solve(a, b), lambda rhs=rhs: matrix_cases(rhs))
      for rhs in ("vector", "matrix", "broadcast")),
    TensorOp("linalg.solve_left_false",
             lambda a, b: chaingrad.linalg.solve(a, b.mT, left=False),
             lambda a, b: T.linalg.solve(a, b.mT, left=False), lambda: matrix_cases("matrix")),
    TensorOp("linalg.vector_norm", lambda x, ord, dim: chaingrad.linalg.vector_norm(x, ord, dim),
             lambda x, ord, dim: T.linalg.vector_norm(x, ord, dim), linalg_norm_cases),
    TensorOp("linalg.matrix_norm",
             lambda x, ord, dim: chaingrad.linalg.matrix_norm(x, ord, dim),
             lambda x, ord, dim: T.linalg.matrix_norm(x, ord, dim),
             lambda: linalg_norm_cases(matrix=True)),
    TensorOp("linalg.norm", lambda x, ord, dim: chaingrad.linalg.norm(x, ord, dim),
             lambda x, ord, dim: T.linalg.norm(x, ord, dim),
             lambda: linalg_norm_cases(matrix=True)),
    # the singular values and vectors: svd's three outputs, each a primitive
    TensorOp("linalg.svdvals", lambda a: chaingrad.linalg.svdvals(a),
             lambda a: T.linalg.svdvals(a), spread_matrix_cases),
    *(TensorOp(f"linalg.svd{'_full' * full}", lambda a, full=full: _squares_of_svd(
        chaingrad, a, full), lambda a, full=full: _squares_of_svd(T, a, full),
        spread_matrix_cases) for full in (False, True)),
    TensorOp("linalg.matrix_norm_svd",
             lambda x, ord, dim: chaingrad.linalg.matrix_norm(x, ord, dim),
             lambda x, ord, dim: T.linalg.matrix_norm(x, ord, dim),
             lambda: spread_matrix_cases(("nuc", 2, -2))),
    TensorOp("linalg.norm_svd", lambda x, ord, dim: chaingrad.linalg.norm(x, ord, dim),
             lambda x, ord, dim: T.linalg.norm(x, ord, dim),
             lambda: spread_matrix_cases(("nuc", 2, -2))),
    # the everyday torch.linalg names: slogdet, cholesky, qr, eigh, eigvalsh and pinv are
    # primitives (cholesky and eigh read one triangle: here of a symmetric matrix, where
    # finite differences agree with torch's symmetric gradient); the others composed
    TensorOp("linalg.slogdet", lambda a: chaingrad.linalg.slogdet(a).logabsdet,
             lambda a: T.linalg.slogdet(a).logabsdet, matrix_cases),
    *(TensorOp(f"linalg.cholesky{'_upper' * upper}",
               lambda a, upper=upper: chaingrad.linalg.cholesky(a @ a.mT, upper=upper),
               lambda a, upper=upper: T.linalg.cholesky(a @ a.mT, upper=upper), matrix_cases)
      for upper in (False, True)),
    TensorOp("linalg.qr", lambda a: _side_by_side(chaingrad, *chaingrad.linalg.qr(a)),
             lambda a: _side_by_side(T, *T.linalg.qr(a)), spread_matrix_cases),
    *(TensorOp(f"linalg.eigh_{uplo}", lambda a, uplo=uplo: _eigh(chaingrad, a, uplo),
               lambda a, uplo=uplo: _eigh(T, a, uplo),
               lambda: spread_matrix_cases(shape="square")) for uplo in "LU"),
    TensorOp("linalg.eigvalsh", lambda a: chaingrad.linalg.eigvalsh(a + a.mT, "U"),
             lambda a: T.linalg.eigvalsh(a + a.mT, "U"), lambda: spread_matrix_cases(
                 shape="square")),
    TensorOp("linalg.pinv", lambda a: chaingrad.linalg.pinv(a), lambda a: T.linalg.pinv(a),
             spread_matrix_cases),
    TensorOp("linalg.lstsq", lambda a, b: chaingrad.linalg.lstsq(a, b).solution,
             lambda a, b: T.linalg.lstsq(a, b).solution,
             lambda: spread_matrix_cases(shape="tall", rhs=True)),
    TensorOp("linalg.matrix_power", lambda a, n: chaingrad.linalg.matrix_power(a, n),
             lambda a, n: T.linalg.matrix_power(a, n), matrix_power_cases),
    TensorOp("linalg.multi_dot", lambda *ms: chaingrad.linalg.multi_dot(ms),
             lambda *ms: T.linalg.multi_dot(ms), multi_dot_cases),
    TensorOp("linalg.cross", lambda a, b, dim: chaingrad.linalg.cross(a, b, dim=dim),
             lambda a, b, dim: T.linalg.cross(a, b, dim=dim), cross_cases),
    TensorOp("linalg.vecdot", lambda a, b, dim: chaingrad.linalg.vecdot(a, b, dim=dim),
             lambda a, b, dim: T.linalg.vecdot(a, b, dim=dim), cross_cases),
    TensorOp("linalg.diagonal", lambda a, **where: chaingrad.linalg.diagonal(a, **where),
             lambda a, **where: T.linalg.diagonal(a, **where), diagonal_cases),
    TensorOp("linalg.cond", lambda a, ord, dim: chaingrad.linalg.cond(a, ord),
             lambda a, ord, dim: T.linalg.cond(a, ord),
             lambda: spread_matrix_cases((None, 2, -2))),
    TensorOp("linalg.cond_nuc", lambda a, ord, dim: chaingrad.linalg.cond(a, ord),
             lambda a, ord, dim: T.linalg.cond(a, ord),
             lambda: spread_matrix_cases(("nuc",), shape="square")),
    # torch 2.13's backward of these raises (its composition changes A^-1 in place): their
    # values are checked against torch's in test_linalg.py
    TensorOp("linalg.cond_of_inverse", lambda a, ord, dim: chaingrad.linalg.cond(a, ord),
             None, lambda: spread_matrix_cases(("fro", 1, -1, float("inf"), -float("inf")),
                                               shape="square")),
    TensorOp("linalg.vander", lambda x, N: chaingrad.linalg.vander(x, N=N),
             lambda x, N: T.linalg.vander(x, N=N), vander_cases),
    TensorOp("linalg.tensorinv", lambda a: chaingrad.linalg.tensorinv(a.reshape(2, 2, 4), 2),
             lambda a: T.linalg.tensorinv(a.reshape(2, 2, 4), 2), tensor_matrix_cases),
    TensorOp("linalg.tensorsolve",
             lambda a, b: chaingrad.linalg.tensorsolve(a.reshape(2, 2, 4), b.reshape(2, 2)),
             lambda a, b: T.linalg.tensorsolve(a.reshape(2, 2, 4), b.reshape(2, 2)),
             lambda: tensor_matrix_cases(rhs=True)),
    *(TensorOp(f"linalg.matrix_exp{suffix}", lambda a, scale=scale: chaingrad.linalg.matrix_exp(
        a * scale), lambda a, scale=scale: T.linalg.matrix_exp(a * scale), matrix_cases)
      for suffix, scale in (("", 0.25), ("_squared", 2.0))),  # squared 0 times, then 1 or 2
    TensorOp("linalg.lu", lambda a: _side_by_side(chaingrad, *chaingrad.linalg.lu(a)),
             lambda a: _side_by_side(T, *T.linalg.lu(a)), pivoted_cases),
    TensorOp("linalg.lu_factor", lambda a: chaingrad.linalg.lu_factor(a).LU,
             lambda a: T.linalg.lu_factor(a).LU, pivoted_cases),
    *(TensorOp(f"linalg.lu_solve_{'left' if left else 'right'}{'_adjoint' * adjoint}",
               lambda a, b, left=left, adjoint=adjoint: chaingrad.linalg.lu_solve(
                   *chaingrad.linalg.lu_factor(a), b if left else b.mT, left=left,
                   adjoint=adjoint),
               lambda a, b, left=left, adjoint=adjoint: T.linalg.lu_solve(
                   *T.linalg.lu_factor(a), b if left else b.mT, left=left, adjoint=adjoint),
               lambda: pivoted_cases(rhs=True))
      for left in (True, False) for adjoint in (False, True)),
    TensorOp("linalg.solve_triangular",
             lambda a, b, **how: chaingrad.linalg.solve_triangular(a, b, **how),
             lambda a, b, **how: T.linalg.solve_triangular(a, b, **how), triangular_cases),
    TensorOp("binary_cross_entropy",
             lambda x, t: chaingrad.nn.functional.binary_cross_entropy(x, t, reduction="none"),
             lambda x, t: T.nn.functional.binary_cross_entropy(x, t, reduction="none"),
             probability_cases),
    # the layers' ops, NCHW as torch.nn.functional
    TensorOp("conv2d", lambda x, w, *b, stride, padding: conv2d(
                 x, w, b[0] if b else None, stride, padding),
             lambda x, w, *b, stride, padding: T.nn.functional.conv2d(
                 x, w, b[0] if b else None, stride, padding), conv_cases),
    TensorOp("layer_norm", lambda *xs, normalized_shape, eps: chaingrad.nn.functional.layer_norm(
                 xs[0], normalized_shape, *xs[1:], eps=eps),
             lambda *xs, normalized_shape, eps: T.nn.functional.layer_norm(
                 xs[0], normalized_shape, *xs[1:], eps=eps), layer_norm_cases),
    TensorOp("max_pool2d", *_POOL, pool_cases),
    TensorOp("lstm_recurrence", lambda *xs, reverse: lstm_recurrence(*xs, reverse),
             _torch_lstm_recurrence, lstm_recurrence_cases),
    TensorOp("gru_recurrence",
             lambda x_parts, w_hh, h0, *b_hh, reverse: gru_recurrence(
                 x_parts, w_hh, h0, b_hh[0] if b_hh else None, reverse),
             _torch_gru_recurrence, gru_recurrence_cases),
    TensorOp("rnn_recurrence", lambda *xs, relu, reverse: rnn_recurrence(*xs, relu, reverse),
             _torch_rnn_recurrence, rnn_recurrence_cases),
    TensorOp("rnn_recurrence_relu",
             lambda *xs, relu, reverse: rnn_recurrence(*xs, relu, reverse),
             _torch_rnn_recurrence, lambda: rnn_recurrence_cases(relu=True)),
    TensorOp("max_pool2d_ties", *_POOL, lambda: pool_cases(tied=True),
             finite_differences=False),
]

OP_IDS = [op.name for op in OPS]
OPS_BY_NAME = {op.name: op for op in OPS}
FD_OPS = [op for op in OPS if op.finite_differences]
TORCH_OPS = [op for op in OPS if op.torch_fn is not None]


# ---- the three ways to get a gradient ----


def upstream(case: Case, op: TensorOp, seed: int = 0) -> np.ndarray:
    """A fixed random d(loss)/d(output), so that every entry of the Jacobian counts."""
    with chaingrad.no_grad():
        shape = op.fn(*map(Tensor, case.arrays), **case.params).shape
    return np.random.default_rng(seed).standard_normal(shape)


def engine_grads(op: TensorOp, case: Case, w: np.ndarray) -> tuple[np.ndarray, list]:
    """The output and d(sum(w * output))/d(input) for each input, from ``backward()``."""
    leaves = [Tensor(a, requires_grad=True) for a in case.arrays]
    out = op.fn(*leaves, **case.params)
    (out * Tensor(w)).sum().backward()
    return out.detach().numpy(), [np.zeros_like(a) if t.grad is None else t.grad
                      for a, t in zip(case.arrays, leaves)]


def numeric_grads(op: TensorOp, case: Case, w: np.ndarray) -> list[np.ndarray]:
    """Central finite differences of sum(w * output), one array per input."""
    def loss(arrays: list[np.ndarray]) -> float:
        return float((op.fn(*map(Tensor, arrays), **case.params).numpy() * w).sum())

    grads = []
    with chaingrad.no_grad():
        for i, a in enumerate(case.arrays):
            g = np.zeros_like(a)
            for idx in np.ndindex(a.shape):
                up = [x.copy() for x in case.arrays]
                down = [x.copy() for x in case.arrays]
                up[i][idx] += EPS
                down[i][idx] -= EPS
                g[idx] = (loss(up) - loss(down)) / (2 * EPS)
            grads.append(g)
    return grads


def torch_grads(op: TensorOp, case: Case, w: np.ndarray) -> tuple[np.ndarray, list]:
    """The torch oracle's output and gradients, in float64."""
    leaves = [T.tensor(a, dtype=T.float64, requires_grad=True) for a in case.arrays]
    out = op.torch_fn(*leaves, **case.params)
    (out * T.as_tensor(w)).sum().backward()
    return out.detach().numpy(), [np.zeros_like(a) if t.grad is None else t.grad.numpy()
                                  for a, t in zip(case.arrays, leaves)]
