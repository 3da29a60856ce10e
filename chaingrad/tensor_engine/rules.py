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

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

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
    return (g.transpose(inverse(axes)),)


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


@define("unfold", ("fold(out.grad, x.shape[2:], stride)",),
        forward=lambda x, kernel, stride: windows(x, kernel, stride), params=("kernel", "stride"))
def UNFOLD(xs, out, g, kernel, stride):
    """The (kh, kw) windows of an (N, C, H, W) image, (N, C, OH, OW, kh, kw), a strided view;
    the gradient of each window is added back where it came from (``fold``)."""
    return (fold(g, xs[0].shape[2:], stride),)


@define("fold", ("unfold(out.grad, x.shape[4:], stride)",),
        forward=lambda g, size, stride: fold_array(g, size, stride), params=("size", "stride"))
def FOLD(xs, out, g, size, stride):
    """Windows added back into an image (unfold's gradient);  d: the windows of g."""
    return (unfold(g, xs[0].shape[4:], stride),)


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
    MATMUL, SUM, MAX, MIN, SOFTMAX, LOG_SOFTMAX, CLIP, RESHAPE, TRANSPOSE, BROADCAST_TO,
    GETITEM, SCATTER, CONCATENATE, STACK, WHERE, PAD, UNFOLD, FOLD, MAX_POOL2D, UNPOOL)
"""Every primitive of the Tensor engine, beside those of ``chaingrad.rules``."""


# ---- the functions the rules use: on arrays, and as ops on Tensors ----


def swap_last(x: Any) -> Any:
    """x with its last two axes swapped (the matrix transpose, batched)."""
    axes = list(range(x.ndim))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return x.transpose(axes)


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


def windows(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """The (kh, kw) windows of an (N, C, H, W) array at ``stride``: a view, nothing copied."""
    (kh, kw), (sh, sw) = kernel, stride
    return sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]


def unfold(g: Any, kernel: tuple[int, int], stride: tuple[int, int]) -> Any:
    """The windows of g (see ``windows``); on a Tensor, an ``unfold`` node."""
    if isinstance(g, ARRAY_TYPES):
        return windows(g, kernel, stride)
    return g._apply(UNFOLD.bind(kernel, stride), [g])


def fold(g: Any, size: tuple[int, int], stride: tuple[int, int]) -> Any:
    """Windows added back into an image of ``size``; on a Tensor, a ``fold`` node."""
    if isinstance(g, ARRAY_TYPES):
        return fold_array(g, size, stride)
    return g._apply(FOLD.bind(size, stride), [g])


def fold_array(g: np.ndarray, size: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """Windows of shape (N, C, OH, OW, kh, kw) added into an (N, C, H, W) image."""
    n, c, oh, ow, kh, kw = g.shape
    (sh, sw) = stride
    image = np.zeros((n, c) + tuple(size), dtype=g.dtype)
    for i in range(kh):  # one strided add per kernel offset, not one per window
        for j in range(kw):
            image[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] += g[..., i, j]
    return image


def unpool(g: Any, picked: np.ndarray, shape: tuple[int, ...], overlap: bool) -> Any:
    """Each window's gradient at its picked entry of zeros of ``shape``; on a Tensor, an
    ``unpool`` node."""
    if isinstance(g, ARRAY_TYPES):
        return unpool_array(g, picked, shape, overlap)
    return g._apply(UNPOOL.bind(picked, shape, overlap), [g])


def unpool_array(g: np.ndarray, picked: np.ndarray, shape: tuple[int, ...],
                 overlap: bool) -> np.ndarray:
    size = int(np.prod(shape))
    if overlap:  # an entry may be picked by several windows: add their gradients
        image = np.bincount(picked.ravel(), np.ravel(g), size).astype(g.dtype, copy=False)
    else:  # windows do not overlap: every entry is picked at most once
        image = np.zeros(size, dtype=g.dtype)
        image[picked.ravel()] = np.ravel(g)
    return image.reshape(shape)
