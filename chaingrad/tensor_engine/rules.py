"""The Tensor engine's own primitives: matmul, reductions, shapes, indexing, convolution.

Written as ``chaingrad/rules.py`` writes the primitives both engines share (``+``, ``*``,
tanh, exp, ...): a name, the forward on arrays, the rule ``vjp(xs, out, g, *params)`` and
its formula, one expression per input (a primitive with any number of inputs,
``concatenate`` and ``stack``, has one formula in ``k``, the input's position). Parameters
(axes, shapes, an index) are passed to the rule explicitly, as the node's bound values.

A rule returns each gradient in the output's shape or the input's; the driver sums a
broadcast gradient back (``autodiff.sum_to_shape``). Rules use what arrays and Tensors
share (operators, ``.sum``, ``.reshape``, ``.transpose``, indexing) or the functions at the
bottom of this module, each of which is an op of its own on a Tensor, so that the same rule
serves ``backward()`` on arrays and ``backward(create_graph=True)`` on Tensors.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from ..functional import data, exp
from ..rules import Primitive, define
from .arrays import ARRAY_TYPES

# ---- matmul ----


@define("matmul", ("out.grad @ y.data.mT", "x.data.mT @ out.grad"),
        forward=lambda a, b, needs: np.matmul(a, b), params=("needs",))
def MATMUL(xs, out, g, needs):
    """x @ y as np.matmul (1-D, 2-D, batched);  d/dx = g @ y^T, d/dy = x^T @ g.

    ``needs`` says which inputs take a gradient, so that no product is made for nobody.
    A 1-D ``x`` acts as a row (1, k) and a 1-D ``y`` as a column (k, 1); the gradients
    come back with any broadcast batch axes still there, for the driver to sum away.
    """
    a, b = xs
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = a.reshape(1, -1)
    if b_vec:
        b = b.reshape(-1, 1)
    if a_vec or b_vec:  # give g the two trailing axes of the matrix product
        g = g.reshape(g.shape[:-1] + (1,) + g.shape[-1:] if a_vec and not b_vec
                      else g.shape + (1,) if b_vec and not a_vec else (1, 1))
    ga = g @ swap_last(b) if needs[0] else None
    gb = swap_last(a) @ g if needs[1] else None
    if b_vec and gb is not None:
        gb = gb.reshape(gb.shape[:-1])
    return ga, gb


# ---- scaling by a number ----


@define("scale", ("c * out.grad",), forward=lambda x, c: x * c, params=("c",))
def SCALE(xs, out, g, c):
    """x * c for a number c fixed when the node is made (``-x``, a mean);  d/dx = c.

    ``x * c`` would give the same numbers, but it makes c an input that its rule reads, as
    torch's ``mul`` keeps its factor for backward; torch's ``neg`` and ``mean`` keep
    nothing, and neither does this (see ``Tensor.backward``'s ``retain_graph``).
    """
    return (c * g,)


# ---- reductions ----


@define("sum", ("expand(out.grad, axes, x.shape)",),
        forward=lambda x, axes, keepdims: x.sum(axis=axes, keepdims=keepdims),
        params=("axes", "keepdims"))
def SUM(xs, out, g, axes, keepdims):
    """The sum over ``axes``;  d/dx = 1 for every entry: g repeated along the summed axes."""
    return (expand(g, axes, xs[0].shape),)


def _extreme(xs, out, g, axes, share):
    return (share * expand(g, axes, xs[0].shape),)


MAX = Primitive("max", _extreme, ("share * expand(out.grad, axes, x.shape)",),
                params=("axes", "share"))
"""The largest entry over ``axes``;  d/dx = 1 / (number of ties) at the largest entries."""

MIN = Primitive("min", _extreme, ("share * expand(out.grad, axes, x.shape)",),
                params=("axes", "share"))
"""The smallest entry over ``axes``;  d/dx = 1 / (number of ties) at the smallest entries."""


def tie_share(x: np.ndarray, extreme: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Where x equals its extreme over ``axes`` (kept as size-1 axes), 1 / the number of
    such entries; 0 elsewhere. Ties split the gradient equally, as torch.amax does."""
    hits = x == extreme
    return (hits / hits.sum(axis=axes, keepdims=True)).astype(x.dtype, copy=False)


def stable_sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow: exp only ever sees -|x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def softmax_forward(x: np.ndarray, axis: int) -> np.ndarray:
    """exp(x) / sum(exp(x)) along ``axis``, with the largest entry subtracted first (no
    overflow)."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_forward(x: np.ndarray, axis: int) -> np.ndarray:
    """x - log(sum(exp(x))) along ``axis``, with the largest entry subtracted first."""
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


@define("softmax",
        ("out.data * (out.grad - (out.grad * out.data).sum(axis=axis, keepdims=True))",),
        forward=softmax_forward, params=("axis",))
def SOFTMAX(xs, out, g, axis):
    """exp(x) / sum(exp(x)) along ``axis``;  vjp: s * (g - sum(g * s)), reusing the output s."""
    return (out * (g - (g * out).sum(axis=axis, keepdims=True)),)


@define("log_softmax", ("out.grad - exp(out.data) * out.grad.sum(axis=axis, keepdims=True)",),
        forward=log_softmax_forward, params=("axis",))
def LOG_SOFTMAX(xs, out, g, axis):
    """x - log(sum(exp(x))) along ``axis``;  vjp: g - softmax(x) * sum(g)."""
    return (g - exp(out) * g.sum(axis=axis, keepdims=True),)


@define("clip", ("between(x.data, low, high) * out.grad",),
        forward=lambda x, low, high: np.clip(x, low, high), params=("low", "high"))
def CLIP(xs, out, g, low, high):
    """x clamped into [low, high];  d/dx = 1 where low <= x <= high, else 0 (torch.clamp)."""
    return (between(data(xs[0]), low, high) * g,)


# ---- moving entries: each rule moves the gradient back ----


@define("reshape", ("out.grad.reshape(x.shape)",), forward=np.reshape, params=("shape",))
def RESHAPE(xs, out, g, shape):
    """The same entries in a new shape;  the gradient is reshaped back."""
    return (g.reshape(xs[0].shape),)


@define("transpose", ("out.grad.transpose(inverse(axes))",), forward=np.transpose,
        params=("axes",))
def TRANSPOSE(xs, out, g, axes):
    """The axes permuted;  the gradient is permuted back."""
    return (permute(g, inverse(axes)),)


@define("to", ("out.grad.astype(x.data.dtype)",), forward=lambda x, dtype: x.astype(dtype),
        params=("dtype",))
def CAST(xs, out, g, dtype):
    """x in another floating dtype (named by ``dtype``);  the gradient is cast back."""
    return (cast(g, xs[0].dtype),)


@define("broadcast_to", ("out.grad",), forward=np.broadcast_to, params=("shape",))
def BROADCAST_TO(xs, out, g, shape):
    """Repeated along new or size-1 axes;  the driver sums the gradient back."""
    return (g,)


@define("getitem", ("scatter(out.grad, index, x.shape)",),
        forward=lambda x, index: x[index], params=("index",))
def GETITEM(xs, out, g, index):
    """x[index];  the gradient is scattered back into zeros (an entry picked twice gets
    both shares)."""
    return (scatter(g, index, xs[0].shape),)


@define("scatter", ("out.grad[index]",), forward=lambda g, index, shape: scatter_array(
    g, index, shape), params=("index", "shape"))
def SCATTER(xs, out, g, index, shape):
    """g added into zeros of ``shape`` at ``index`` (getitem's gradient);  d: g[index]."""
    return (g[index],)


@define("concatenate", ("out.grad[pieces[k]]",), params=("pieces",))
def CONCATENATE(xs, out, g, pieces):
    """Tensors joined along an axis;  input k's gradient is its slice of g."""
    return tuple(g[piece] for piece in pieces)


@define("stack", ("out.grad[picks[k]]",), params=("picks",))
def STACK(xs, out, g, picks):
    """Tensors stacked along a new axis;  input k's gradient is g[..., k, ...]."""
    return tuple(g[pick] for pick in picks)


@define("where", ("out.grad * condition", "out.grad * ~condition"),
        forward=lambda x, y, condition: np.where(condition, x, y), params=("condition",))
def WHERE(xs, out, g, condition):
    """x where the condition holds, else y;  the gradient goes to the one chosen."""
    return g * condition, g * ~condition


@define("pad", ("out.grad[unpadded(widths, x.shape)]",), forward=np.pad, params=("widths",))
def PAD(xs, out, g, widths):
    """Zeros around x ((before, after) for each axis);  the gradient without the border."""
    return (g[unpadded(widths, xs[0].shape)],)


# ---- convolution and pooling ----
#
# conv2d's three primitives are the partial derivatives of one number,
# T(x, w, g) = sum(conv2d(x, w) * g), which is linear in each of x, w and g: conv2d itself
# is dT/dg, conv2d_input_grad is dT/dx and conv2d_weight_grad is dT/dw. So the rule of each
# is made of the other two (and of conv2d), and gradients of any order stay in the family.


@define("conv2d", ("conv2d_input_grad(out.grad, y.data, x.shape[2:], stride, padding)",
                   "conv2d_weight_grad(x.data, out.grad, y.shape[2:], stride, padding)",
                   "out.grad.sum(axis=0).sum(axis=(1, 2))"),
        forward=lambda x, w, *rest: conv2d_forward(x, w, *rest),
        params=("stride", "padding", "needs"))
def CONV2D(xs, out, g, stride, padding, needs):
    """Filters w (O, C, kh, kw) slid over x (N, C, H, W), plus a bias (O,) if given;
    d/dx = conv2d_input_grad(g, w), d/dw = conv2d_weight_grad(x, g), d/dbias = g summed
    over the batch and the positions. ``needs`` says which of x and w take a gradient."""
    x, w = xs[0], xs[1]
    gx = conv2d_input_grad(g, w, x.shape[2:], stride, padding) if needs[0] else None
    gw = conv2d_weight_grad(x, g, w.shape[2:], stride, padding) if needs[1] else None
    return (gx, gw) if len(xs) == 2 else (gx, gw, g.sum(axis=0).sum(axis=(1, 2)))


@define("conv2d_input_grad", ("conv2d(out.grad, y.data, stride, padding)",
                              "conv2d_weight_grad(out.grad, x.data, y.shape[2:], stride, padding)"),
        forward=lambda g, w, size, stride, padding: conv2d_input_grad_fast(
            g, w, size, stride, padding), params=("size", "stride", "padding"))
def CONV2D_INPUT_GRAD(xs, out, u, size, stride, padding):
    """conv2d's gradient for its input, from the output's gradient g and the filters w (a
    transposed convolution): each window's share, g times w, added back where the window
    came from;  d/dg = conv2d(u, w), d/dw = conv2d_weight_grad(u, g)."""
    g, w = xs
    return (conv2d(u, w, stride, padding),
            conv2d_weight_grad(u, g, w.shape[2:], stride, padding))


@define("conv2d_weight_grad", ("conv2d_input_grad(y.data, out.grad, x.shape[2:], stride, padding)",
                               "conv2d(x.data, out.grad, stride, padding)"),
        forward=lambda x, g, kernel, stride, padding: conv2d_weight_grad_fast(
            x, g, kernel, stride, padding), params=("kernel", "stride", "padding"))
def CONV2D_WEIGHT_GRAD(xs, out, v, kernel, stride, padding):
    """conv2d's gradient for its filters, from the input x and the output's gradient g:
    every window of x times g, summed over the batch and positions;
    d/dx = conv2d_input_grad(g, v), d/dg = conv2d(x, v)."""
    x, g = xs
    return (conv2d_input_grad(g, v, x.shape[2:], stride, padding),
            conv2d(x, v, stride, padding))


@define("max_pool2d", ("unpool(out.grad, picked, x.shape, overlap)",), params=("picked", "overlap"))
def MAX_POOL2D(xs, out, g, picked, overlap):
    """The largest entry of each window;  each window's gradient goes to its first largest
    entry (``picked``: where that is in x, flattened), summed where windows overlap."""
    return (unpool(g, picked, xs[0].shape, overlap),)


@define("unpool", ("out.grad.reshape(-1)[picked]",),
        forward=lambda g, picked, shape, overlap: unpool_array(g, picked, shape, overlap),
        params=("picked", "shape", "overlap"))
def UNPOOL(xs, out, g, picked, shape, overlap):
    """Each window's gradient put at its picked entry (max_pool2d's gradient);
    d: g read back at the picked entries."""
    return (g.reshape(-1)[picked],)


PRIMITIVES: tuple[Primitive, ...] = (
    MATMUL, SCALE, SUM, MAX, MIN, SOFTMAX, LOG_SOFTMAX, CLIP, RESHAPE, TRANSPOSE, CAST,
    BROADCAST_TO, GETITEM, SCATTER, CONCATENATE, STACK, WHERE, PAD, CONV2D, CONV2D_INPUT_GRAD,
    CONV2D_WEIGHT_GRAD, MAX_POOL2D, UNPOOL)
"""Every primitive of the Tensor engine, beside those of ``chaingrad.rules``."""


# ---- the functions the rules use: on arrays, and as ops on Tensors ----


def swap_last(x: Any) -> Any:
    """x with its last two axes swapped (the matrix transpose, batched)."""
    axes = list(range(x.ndim))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return permute(x, tuple(axes))


def permute(x: Any, axes: tuple[int, ...]) -> Any:
    """x with its axes in the order ``axes``: ndarray.transpose, or a Tensor's permute."""
    return x.transpose(axes) if isinstance(x, ARRAY_TYPES) else x.permute(axes)


def cast(x: Any, dtype: Any) -> Any:
    """x in ``dtype``: ndarray.astype, or a Tensor's ``to``."""
    return x.astype(dtype) if isinstance(x, ARRAY_TYPES) else x.to(dtype)


def inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``axes``."""
    return tuple(sorted(range(len(axes)), key=axes.__getitem__))


def kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with each reduced axis kept as 1."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def expand(g: Any, axes: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    """g, reduced over ``axes`` of ``shape``, repeated back along them to ``shape``."""
    g = g.reshape(kept_shape(shape, axes))
    return np.broadcast_to(g, shape) if isinstance(g, ARRAY_TYPES) else g.broadcast_to(shape)


def between(x: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    """Where ``low <= x <= high`` (a bound of None is no bound), as a boolean array."""
    inside = np.ones(x.shape, dtype=bool)
    if low is not None:
        inside &= x >= low
    if high is not None:
        inside &= x <= high
    return inside


def unpadded(widths: tuple, shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The index of an input of ``shape`` inside its padded output."""
    return tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, shape))


def scatter(g: Any, index: Any, shape: tuple[int, ...]) -> Any:
    """g added into zeros of ``shape`` at ``index``; on a Tensor, a ``scatter`` node."""
    if isinstance(g, ARRAY_TYPES):
        return scatter_array(g, index, shape)
    return g._apply(SCATTER.bind(index, shape), [g])


def scatter_array(g: np.ndarray, index: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Zeros of ``shape`` with ``g`` added at ``index``: the inverse of ``x[index]``.

    Integer arrays can pick an entry twice; ``np.add.at`` adds both, as the chain rule
    wants (plain assignment would keep only one).
    """
    out = np.zeros(shape, dtype=g.dtype)
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(p, np.ndarray) and p.dtype.kind in "iu" for p in parts):
        np.add.at(out, index, g)
    else:
        out[index] = g
    return out


# ---- convolution on arrays: the readable forms (the specification), then their fast twins ----


def conv_output_size(size: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
                     padding: tuple[int, int]) -> tuple[int, int]:
    """(OH, OW): how many windows of ``kernel`` fit down and across the padded image."""
    return tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(size, kernel, stride, padding))


def padded(x: np.ndarray, padding: tuple[int, int]) -> np.ndarray:
    """x (N, C, H, W) with ``padding`` rows and columns of zeros on each side (a copy), or
    x itself when there is no padding."""
    (ph, pw), (h, w) = padding, x.shape[2:]
    if not ph and not pw:
        return x
    out = np.zeros(x.shape[:2] + (h + 2 * ph, w + 2 * pw), dtype=x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def kernel_offsets(kernel: tuple[int, int], stride: tuple[int, int],
                   out_size: tuple[int, int]) -> Iterator[tuple[int, int, slice, slice]]:
    """For each offset (i, j) in the kernel: i, j, and the rows and columns (slices) of the
    padded image that entry (i, j) of every window reads."""
    (kh, kw), (sh, sw), (oh, ow) = kernel, stride, out_size
    for i in range(kh):
        for j in range(kw):
            yield i, j, slice(i, i + sh * (oh - 1) + 1, sh), slice(j, j + sw * (ow - 1) + 1, sw)


def windows(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """The (kh, kw) windows of an (N, C, H, W) array at ``stride``: a view, nothing copied."""
    (kh, kw), (sh, sw) = kernel, stride
    return sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]


def fold_array(g: np.ndarray, size: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """Windows of shape (N, C, OH, OW, kh, kw) added into an (N, C, H, W) image: the place
    each came from (where windows overlap, their entries add up)."""
    image = np.zeros(g.shape[:2] + tuple(size), dtype=g.dtype)
    for i, j, rows, cols in kernel_offsets(g.shape[4:], stride, g.shape[2:4]):
        image[:, :, rows, cols] += g[..., i, j]  # one strided add per offset, not per window
    return image


def conv2d_reference(x: np.ndarray, w: np.ndarray, stride: tuple[int, int],
                     padding: tuple[int, int], bias: np.ndarray | None = None) -> np.ndarray:
    """conv2d as its definition reads: every window of the padded x times every filter,
    ``out[n, o, r, s] = sum over c, i, j of padded(x)[n, c, r*sh + i, s*sw + j] * w[o, c, i, j]``
    (plus ``bias[o]``). The specification of ``conv2d_fast``."""
    out = np.einsum("ncrsij,ocij->nors", windows(padded(x, padding), w.shape[2:], stride), w)
    return out if bias is None else out + bias[:, None, None]


def conv2d_input_grad_reference(g: np.ndarray, w: np.ndarray, size: tuple[int, int],
                                stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """conv2d's gradient for x (N, C, H, W) of ``size``: each output's gradient times the
    filters, ``g[n, o, r, s] * w[o, c, i, j]``, added back into the window it came from, and
    the padding cut off. The specification of ``conv2d_input_grad_fast``."""
    (ph, pw), (h, wd) = padding, size
    shares = np.einsum("nors,ocij->ncrsij", g, w)
    image = fold_array(shares, (h + 2 * ph, wd + 2 * pw), stride)
    return image[:, :, ph:ph + h, pw:pw + wd]


def conv2d_weight_grad_reference(x: np.ndarray, g: np.ndarray, kernel: tuple[int, int],
                                 stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """conv2d's gradient for the filters: every window of the padded x times the gradient
    of the output it made, summed over the batch and the positions. The specification of
    ``conv2d_weight_grad_fast``."""
    return np.einsum("ncrsij,nors->ocij", windows(padded(x, padding), kernel, stride), g)


SHORT_ROW = 8
"""Below this many output columns, the fast twins keep the batch axis last: the rows they
copy are then batch-long rather than a few entries long (numpy copies short rows slowly)."""


def conv2d_fast(x: np.ndarray, w: np.ndarray, stride: tuple[int, int],
                padding: tuple[int, int], bias: np.ndarray | None = None) -> np.ndarray:
    """The twin of ``conv2d_reference`` (equal within float rounding: the sums run in
    another order), as one matrix product: the filters (O, C*kh*kw) times the windows laid
    out as columns (im2col), image by image, or position by position for small images."""
    n, o = x.shape[0], w.shape[0]
    oh, ow = conv_output_size(x.shape[2:], w.shape[2:], stride, padding)
    filters = w.reshape(o, -1)
    if bias is not None:  # the bias as one more filter column, times a row of ones
        filters = np.concatenate([filters, bias[:, None]], axis=1)
    ones = bias is not None
    if ow < SHORT_ROW:
        cols = columns_batch_last(x, w.shape[2:], stride, padding, ones)
        per_position = np.matmul(filters, cols.transpose(1, 0, 2))  # (OH*OW, O, N)
        return np.ascontiguousarray(per_position.transpose(2, 1, 0)).reshape(n, o, oh, ow)
    out = np.matmul(filters, columns(x, w.shape[2:], stride, padding, ones))  # (N, O, OH*OW)
    return out.reshape(n, o, oh, ow)


def conv2d_input_grad_fast(g: np.ndarray, w: np.ndarray, size: tuple[int, int],
                           stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """The twin of ``conv2d_input_grad_reference`` (equal within float rounding): the
    filters transposed times g gives every window's share, which is added back where the
    window came from, one strided add per kernel offset."""
    n, o, oh, ow = g.shape
    c, kh, kw = w.shape[1:]
    (ph, pw), (h, wd) = padding, size
    if ow < SHORT_ROW and stride == (1, 1) and ph < kh and pw < kw:
        # for small images at stride 1: a 'full' convolution of g with the filters
        # flipped and transposed (O and C swapped), whose windows are quicker to gather
        flipped = np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
        return conv2d_fast(g, flipped, (1, 1), (kh - 1 - ph, kw - 1 - pw))
    to_windows = w.reshape(o, -1).T  # (C*kh*kw, O)
    if ow < SHORT_ROW:  # the batch axis last, as in columns_batch_last
        shares = np.matmul(to_windows, by_position(g)).reshape(oh, ow, c, kh, kw, n)
        image = np.zeros((c, h + 2 * ph, wd + 2 * pw, n), dtype=shares.dtype)
        for i, j, rows, cols in kernel_offsets((kh, kw), stride, (oh, ow)):
            image[:, rows, cols] += shares[:, :, :, i, j].transpose(2, 0, 1, 3)
        return np.ascontiguousarray(image[:, ph:ph + h, pw:pw + wd].transpose(3, 0, 1, 2))
    hp, wp = h + 2 * ph, wd + 2 * pw
    if stride[1] == 1 and c * kh * kw > o:  # when the shares outweigh g, it pays to widen
        # g's rows, and add the shares on rows laid end to end: long runs, not OW-long ones
        return _fold_rows(np.matmul(to_windows, widened(g, stride[0] * wp)), (kh, kw),
                          (hp, wp), stride[0])[:, :, ph:ph + h, pw:pw + wd].copy()
    shares = np.matmul(to_windows, g.reshape(n, o, -1)).reshape(n, c, kh, kw, oh, ow)
    image = np.zeros((n, c, hp, wp), dtype=shares.dtype)
    for i, j, rows, cols in kernel_offsets((kh, kw), stride, (oh, ow)):
        image[:, :, rows, cols] += shares[:, :, i, j]
    return np.ascontiguousarray(image[:, :, ph:ph + h, pw:pw + wd]) if ph or pw else image


def widened(g: np.ndarray, row: int) -> np.ndarray:
    """An (N, O, OH, OW) gradient with each output row padded with zeros to ``row``
    entries: (N, O, OH * row)."""
    n, o, oh, ow = g.shape
    wide = np.zeros((n, o, oh, row), dtype=g.dtype)
    wide[..., :ow] = g
    return wide.reshape(n, o, -1)


def _fold_rows(shares: np.ndarray, kernel: tuple[int, int], size: tuple[int, int],
               row_stride: int) -> np.ndarray:
    """``fold`` for windows one column apart, on rows laid end to end: ``shares`` (N,
    C*kh*kw, OH * row_stride * W) holds, for each kernel offset (i, j), the entries that
    window rows put at (r * row_stride + i, s + j) of the (H, W) image, as one run that
    starts at i * W + j (zeros where no window was). Returns (N, C, H, W)."""
    (kh, kw), (h, w) = kernel, size
    n, length = shares.shape[0], shares.shape[2]
    shares = shares.reshape(n, -1, kh, kw, length)
    flat = np.zeros((n, shares.shape[1], (h + row_stride) * w + kw), dtype=shares.dtype)
    for i in range(kh):
        for j in range(kw):
            flat[:, :, i * w + j:i * w + j + length] += shares[:, :, i, j]
    return flat[:, :, :h * w].reshape(n, -1, h, w)


def conv2d_weight_grad_fast(x: np.ndarray, g: np.ndarray, kernel: tuple[int, int],
                            stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """The twin of ``conv2d_weight_grad_reference`` (equal within float rounding): g times
    the windows laid out as columns (im2col), one matrix product per image (or position),
    summed."""
    n, o = g.shape[:2]
    shape = (o, x.shape[1]) + tuple(kernel)
    if g.shape[3] < SHORT_ROW:
        cols = columns_batch_last(x, kernel, stride, padding)  # (C*kh*kw, OH*OW, N)
        return np.matmul(by_position(g), cols.transpose(1, 2, 0)).sum(axis=0).reshape(shape)
    cols = columns(x, kernel, stride, padding)  # (N, C*kh*kw, OH*OW)
    per_window = np.matmul(cols, g.reshape(n, o, -1).transpose(0, 2, 1)).sum(axis=0)
    return np.ascontiguousarray(per_window.T).reshape(shape)


def by_position(g: np.ndarray) -> np.ndarray:
    """An (N, O, OH, OW) gradient as (OH*OW, O, N): one (O, N) matrix per position."""
    return np.ascontiguousarray(g.reshape(g.shape[0], g.shape[1], -1).transpose(2, 1, 0))


def columns(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
            padding: tuple[int, int], ones: bool = False) -> np.ndarray:
    """im2col: the windows of the padded x as columns, (N, C*kh*kw, OH*OW): image n's row
    (c, i, j) holds ``padded(x)[n, c, r*sh + i, s*sw + j]`` at column (r, s). With
    ``ones``, one more row of ones, to add a bias in the same matrix product."""
    n, c = x.shape[:2]
    oh, ow = conv_output_size(x.shape[2:], kernel, stride, padding)
    xp = padded(x, padding)
    sn, sc, sy, sx = xp.strides  # entry (i, j) of window (r, s): a view, then one copy
    view = as_strided(xp, (n, c) + tuple(kernel) + (oh, ow),
                      (sn, sc, sy, sx, sy * stride[0], sx * stride[1]), writeable=False)
    if not ones:
        return view.reshape(n, -1, oh * ow)
    rows = c * kernel[0] * kernel[1]
    cols = np.empty((n, rows + 1, oh * ow), dtype=x.dtype)
    cols[:, :rows].reshape(view.shape)[...] = view
    cols[:, rows] = 1
    return cols


def columns_batch_last(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                       padding: tuple[int, int], ones: bool = False) -> np.ndarray:
    """``columns`` with the batch axis last, (C*kh*kw, OH*OW, N): the same entries, taken
    in one call as whole rows of x's transpose (C*H*W, N), batch-long rows rather than OW
    entries (few, for small images). Padding reads a row of zeros; with ``ones``, one more
    row of ones follows, to add a bias in the same matrix product."""
    n = x.shape[0]
    source = np.empty((x[0].size + 2, n), dtype=x.dtype)
    source[:-2] = x.reshape(n, -1).T
    source[-2], source[-1] = 0, 1  # the padding's zeros; the bias's ones
    oh, ow = conv_output_size(x.shape[2:], kernel, stride, padding)
    rows = column_sources(x.shape[1:], kernel, stride, padding, ones)
    return np.take(source, rows, axis=0).reshape(-1, oh * ow, n)


@functools.lru_cache(maxsize=8)
def column_sources(size: tuple[int, int, int], kernel: tuple[int, int],
                   stride: tuple[int, int], padding: tuple[int, int], ones: bool) -> np.ndarray:
    """For ``columns_batch_last``: the row of x as (C*H*W, N) that entry (c, i, j) of
    window (r, s) reads, in (c, i, j, r, s) order; C*H*W where it reads the padding (a row
    of zeros), and with ``ones`` OH*OW times C*H*W + 1 after (a row of ones). Depends on
    the shapes only, so it is made once per shape (read-only)."""
    c, h, w = size
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    oh, ow = conv_output_size((h, w), kernel, stride, padding)
    channel = np.arange(c)[:, None, None, None, None]
    y = np.arange(kh)[:, None, None, None] + np.arange(oh)[:, None] * sh - ph  # (kh, 1, OH, 1)
    x = np.arange(kw)[:, None, None] + np.arange(ow) * sw - pw  # (kw, 1, OW)
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    rows = np.where(inside, (channel * h + y) * w + x, c * h * w).ravel()
    if ones:
        rows = np.concatenate([rows, np.full(oh * ow, c * h * w + 1)])
    rows.setflags(write=False)
    return rows


def conv2d_forward(x: np.ndarray, w: np.ndarray, *rest: Any) -> np.ndarray:
    """conv2d's forward as a primitive's: ``(x, w, [bias,] stride, padding, needs)``."""
    *bias, stride, padding, _needs = rest
    return conv2d_fast(x, w, stride, padding, *bias)


def conv2d(x: Any, w: Any, stride: tuple[int, int], padding: tuple[int, int]) -> Any:
    """conv2d without bias on arrays; on Tensors, a ``conv2d`` node."""
    if isinstance(x, ARRAY_TYPES):
        return conv2d_fast(x, w, stride, padding)
    return x._apply(CONV2D.bind(stride, padding, (x.requires_grad, w.requires_grad)), [x, w])


def conv2d_input_grad(g: Any, w: Any, size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int]) -> Any:
    """conv2d's gradient for an input of ``size`` on arrays; on Tensors, a node."""
    if isinstance(g, ARRAY_TYPES):
        return conv2d_input_grad_fast(g, w, tuple(size), stride, padding)
    return g._apply(CONV2D_INPUT_GRAD.bind(tuple(size), stride, padding), [g, w])


def conv2d_weight_grad(x: Any, g: Any, kernel: tuple[int, int], stride: tuple[int, int],
                       padding: tuple[int, int]) -> Any:
    """conv2d's gradient for filters of ``kernel`` size on arrays; on Tensors, a node."""
    if isinstance(x, ARRAY_TYPES):
        return conv2d_weight_grad_fast(x, g, tuple(kernel), stride, padding)
    return x._apply(CONV2D_WEIGHT_GRAD.bind(tuple(kernel), stride, padding), [x, g])


# ---- max pooling on arrays ----


@functools.lru_cache(maxsize=8)
def window_positions(shape: tuple[int, ...], kernel: tuple[int, int],
                     stride: tuple[int, int]) -> np.ndarray:
    """Where entry k (row-major) of every (kh, kw) window of an (N, C, H, W) array sits in
    the flattened array: (kh*kw, N*C*OH*OW). Depends on the shapes only, so it is made once
    per shape (read-only)."""
    n, c, h, w = shape
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    in_image = ((np.arange(oh) * (sh * w))[:, None] + np.arange(ow) * sw).ravel()
    corners = ((np.arange(n * c) * (h * w))[:, None] + in_image).ravel()  # top-left entries
    positions = (np.arange(kh)[:, None] * w + np.arange(kw)).reshape(-1, 1) + corners
    positions.setflags(write=False)
    return positions


def max_pool2d_array(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                     picks: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The largest entry of every window, (N, C, OH, OW), and with ``picks`` where the first
    of them (row-major) sits in x, flattened, in the same shape (else None): torch's choice
    among ties."""
    n, c, h, w = x.shape
    positions = window_positions(x.shape, kernel, stride)
    planes = np.take(x.reshape(-1), positions)  # plane k: entry k of every window
    out = planes.max(axis=0)
    picked = None
    if picks:  # scan the entries backwards: the first largest is the last to take over
        picked = positions[-1]
        for k in range(len(planes) - 2, -1, -1):
            picked = np.where(planes[k] == out, positions[k], picked)
    pooled = (n, c, (h - kernel[0]) // stride[0] + 1, (w - kernel[1]) // stride[1] + 1)
    return out.reshape(pooled), None if picked is None else picked.reshape(pooled)


def unpool(g: Any, picked: np.ndarray, shape: tuple[int, ...], overlap: bool) -> Any:
    """Each window's gradient at its picked entry of zeros of ``shape``; on a Tensor, an
    ``unpool`` node."""
    if isinstance(g, ARRAY_TYPES):
        return unpool_array(g, picked, shape, overlap)
    return g._apply(UNPOOL.bind(picked, shape, overlap), [g])


def unpool_array(g: np.ndarray, picked: np.ndarray, shape: tuple[int, ...],
                 overlap: bool) -> np.ndarray:
    """Zeros of ``shape`` with each window's gradient added at its picked entry."""
    image = np.zeros(shape, dtype=g.dtype)
    if overlap:  # an entry may be picked by several windows: add their gradients
        image.reshape(-1)[:] = np.bincount(picked.ravel(), np.ravel(g), image.size)
    else:  # windows do not overlap: every entry is picked at most once
        image.reshape(-1)[picked.ravel()] = np.ravel(g)
    return image
