"""The Tensor engine's own primitives: matmul, reductions, shapes, indexing, convolution.

Declared as ``chaingrad/rules.py`` declares the primitives both engines share (``+``, ``*``,
tanh, exp, ...): a name, the forward on arrays (``array``: a function called with the
inputs, then the parameters: numpy's own, or a named function beside the rule), the rule
``vjp(xs, out, g, *params)``, what the rule keeps of the forward pass, and PyTorch's names
for it. Parameters (axes, shapes, an index) are passed to the rule explicitly, as the node's
bound values. The formula ``explain``, the page and ``compile`` print is read off the rule
(``chaingrad/formulas.py``), one expression per input (a primitive with any number of
inputs, ``concatenate`` and ``stack``, has one formula in ``k``, the input's position); the
helpers marked ``@shown`` appear in it by their names (``expand(out.grad, axes, x.shape)``).

A rule returns each gradient in the output's shape or the input's; the driver sums a
broadcast gradient back (``autodiff.sum_to_shape``). Rules use what arrays and Tensors
share (operators, ``.sum``, ``.reshape``, ``.transpose``, indexing) or the functions at the
bottom of this module, each of which is an op of its own on a Tensor, so that the same rule
serves ``backward()`` on arrays and ``backward(create_graph=True)`` on Tensors.

The forwards that are more than a few numpy calls (softmax, scatter, convolution, pooling)
are in ``chaingrad/tensor_engine/kernels.py``, each as its readable reference and its fast
twin beside it.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import reference
from ..declaration import Primitive, define
from ..formulas import shown
from ..rules import TANH, data, exp, log, log1p
from . import kernels, recurrent
from .arrays import ARRAY_TYPES

# ---- matmul ----


def matmul_on_arrays(x: np.ndarray, y: np.ndarray, needs: tuple[bool, bool]) -> np.ndarray:
    """matmul's forward on arrays (``needs`` is its rule's: which inputs take a gradient)."""
    return matrix_product(x, y)


@define("matmul", array=matmul_on_arrays,
        params=("needs",), saves=("y", "x"), torch=("torch.matmul", "Tensor.matmul"))
def MATMUL(xs, out, g, needs):
    """x @ y as np.matmul (1-D, 2-D, batched);  d/dx = g @ y^T, d/dy = x^T @ g.

    ``needs`` says which inputs take a gradient, so that no product is made for nobody.
    A 1-D ``x`` acts as a row (1, k) and a 1-D ``y`` as a column (k, 1); the gradients
    come back with any broadcast batch axes still there, for the driver to sum away, but
    for a batch of rows against one matrix (``rows_of``), whose y gradient is one product.
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
    ga = matrix_product(g, swap_last(b)) if needs[0] else None
    gb = None
    if needs[1]:
        if a.ndim > 2 and b.ndim == 2:  # x^T @ g summed over the batch: one product of rows
            a, g = rows_of(a), rows_of(g)
        gb = matmul_y_grad_transposed(a, g) if is_transposed_matrix(b) else swap_last(a) @ g
    if b_vec and gb is not None:
        gb = gb.reshape(gb.shape[:-1])
    return ga, gb


def matrix_product(x: Any, y: Any) -> Any:
    """``x @ y``; a batch of rows against one matrix (a Linear layer's input (B, T, n) and
    its weight) is one product of all the rows (``rows_of``), as torch computes it: numpy
    would make one product per batch entry, slower by up to a third."""
    if x.ndim > 2 and y.ndim == 2:
        return (rows_of(x) @ y).reshape(x.shape[:-1] + y.shape[-1:])
    return x @ y


def rows_of(x: Any) -> Any:
    """x (..., n) as one matrix of its rows, (-1, n)."""
    return x.reshape(-1, x.shape[-1])


def is_transposed_matrix(y: Any) -> bool:
    """Whether y is an array that is a transposed C-ordered matrix (``W.T``: how a Linear
    layer's weight enters its matmul), column-major and not row-major; never under
    ``chaingrad.use_reference()``, which runs the plain formula."""
    return (not reference.only and isinstance(y, ARRAY_TYPES) and y.ndim == 2
            and y.flags.f_contiguous and not y.flags.c_contiguous)


def matmul_y_grad_transposed(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The twin of MATMUL's ``x^T @ g`` for a y that is a transposed matrix (``W.T``),
    computed as ``(g^T @ x)^T``: the same products, summed by the BLAS in the same order in
    float32 here (the same bits) but not always in float64 (equal within rounding, as the
    conv twins; tests/tensor_engine/test_kernels.py). The gradient comes in y's layout, so
    that W's, transposed back, is row-major as W is: an optimizer then updates W without a
    transposing copy (numpy's, unblocked, costs as much as the matrix product). The
    compiled code writes the same expression."""
    return swap_last(swap_last(g) @ a)


# ---- division ----


@define("/", array=operator.truediv, saves=("y", "x y"),
        torch=("torch.div", "Tensor.div", "torch.true_divide"))
def DIV(xs, out, g):
    """x / y, rounded once, as torch divides (``Value`` keeps micrograd's x * y**-1);
    d/dx = 1 / y, d/dy = -x / y**2, computed as torch computes it, x / y / y."""
    x, y = xs
    return g / y, -g * (x / y / y)


# ---- scaling by a number ----


def scale_on_arrays(x: np.ndarray, c: float) -> np.ndarray:
    """x * c, for the number c the node keeps."""
    return x * c


@define("scale", array=scale_on_arrays, params=("c",), saves=("",))
def SCALE(xs, out, g, c):
    """x * c for a number c fixed when the node is made (``-x``, a mean);  d/dx = c.

    ``x * c`` would give the same numbers, but it makes c an input that its rule reads, as
    torch's ``mul`` keeps its factor for backward; torch's ``neg`` and ``mean`` keep
    nothing, and neither does this (see ``Tensor.backward``'s ``retain_graph``).
    """
    return (c * g,)


# ---- reductions ----


def sum_on_arrays(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """The sum over ``axes`` (kept as size-1 axes with ``keepdims``)."""
    return x.sum(axis=axes, keepdims=keepdims)


@define("sum", array=sum_on_arrays, params=("axes", "keepdims"),
        saves=("",), torch=("torch.sum", "Tensor.sum"))
def SUM(xs, out, g, axes, keepdims):
    """The sum over ``axes``;  d/dx = 1 for every entry: g repeated along the summed axes.
    numpy's sum, with no faster twin: a broadcast input's gradient is summed by numpy's sum
    too (``autodiff.sum_to_shape``), and a gradient derived by hand with ``.sum`` (the
    makemore lecture's exercise) must equal autograd's bit for bit, as on torch."""
    return (expand(g, axes, xs[0].shape),)


def _extreme(xs, out, g, axes, share):
    return (share * expand(g, axes, xs[0].shape),)


# max and min have no forward of their own: ``share`` depends on where the extreme entries
# are, which the op finds as it computes them (so they are not compiled on Tensors)
MAX = Primitive("max", _extreme,
                params=("axes", "share"), saves=("",), torch=("torch.amax", "Tensor.amax"))
"""The largest entry over ``axes``;  d/dx = 1 / (number of ties) at the largest entries."""

MIN = Primitive("min", _extreme,
                params=("axes", "share"), saves=("",), torch=("torch.amin", "Tensor.amin"))
"""The smallest entry over ``axes``;  d/dx = 1 / (number of ties) at the smallest entries."""


def tie_share(x: np.ndarray, extreme: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Where x equals its extreme over ``axes`` (kept as size-1 axes), 1 / the number of
    such entries; 0 elsewhere. Ties split the gradient equally, as torch.amax does (a row
    holding nan has no entry equal to its extreme, nan: 0 / 0 gives nan, as torch's).

    Where no extreme is tied nor nan (each reduction found its extreme once: as many
    entries equal an extreme as there are extremes), the share is the boolean mask itself,
    1 at each extreme entry: the same numbers once multiplied by g, without the count
    over each row that numpy makes one row at a time (amax(-1) of 512x192 float32: 36 us
    against 100).

    Example:
        >>> x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
        >>> tie_share(x, x.max(axis=1, keepdims=True), (1,)).tolist()
        [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]
    """
    at = x == extreme
    if np.count_nonzero(at) == extreme.size and not (
            extreme.dtype.kind == "f" and np.isnan(extreme).any()):
        return at
    share = at.astype(x.dtype)  # 1 at each extreme entry (in x's dtype: a bool / int
    share /= share.sum(axis=axes, keepdims=True)  # division would be float64)
    return share


@define("softmax", array=kernels.softmax_on_arrays, params=("axis",), saves=("out",), floats=True,
        torch=("torch.softmax", "Tensor.softmax", "F.softmax"))
def SOFTMAX(xs, out, g, axis):
    """exp(x) / sum(exp(x)) along ``axis``;  vjp: s * (g - sum(g * s)), reusing the output s."""
    if along_rows(g, out, axis) and not reference.only:
        return (softmax_grad_fast(out, g),)
    return (out * (g - (g * out).sum(axis=axis, keepdims=True)),)


@define("log_softmax", array=kernels.log_softmax_on_arrays, params=("axis",), saves=("out",),
        floats=True, torch=("torch.log_softmax", "Tensor.log_softmax", "F.log_softmax"))
def LOG_SOFTMAX(xs, out, g, axis):
    """x - log(sum(exp(x))) along ``axis``;  vjp: g - softmax(x) * sum(g)."""
    if along_rows(g, out, axis) and not reference.only:
        return (log_softmax_grad_fast(out, g),)
    return (g - exp(out) * g.sum(axis=axis, keepdims=True),)


def along_rows(g: Any, out: Any, axis: int) -> bool:
    """Whether g and out are C-contiguous float arrays (not Tensors) of one shape, taken
    along their last axis: the case of the softmax rules' twins, which sum each row by
    ``np.einsum`` (numpy's sum over a last axis of 192 costs 3x as much: it reduces one
    row at a time)."""
    return (isinstance(g, ARRAY_TYPES) and isinstance(out, ARRAY_TYPES)
            and g.dtype.kind == "f" and g.dtype == out.dtype and g.shape == out.shape
            and g.ndim >= 1 and axis == g.ndim - 1 and g.shape[-1] > 0
            and g.flags.c_contiguous and out.flags.c_contiguous)


def softmax_grad_fast(out: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The twin of ``SOFTMAX``'s rule on arrays along the last axis (``along_rows``),
    equal within float rounding (each row's sum(g * s) by ``np.einsum`` in one pass, no
    product kept, where the rule sums with numpy's pairwise sum): s * (g - sum(g * s)) in
    one array. 2.5x faster at 512x192 in float32."""
    grad = np.subtract(g, np.einsum("...i,...i->...", g, out)[..., None])
    grad *= out
    return grad


def log_softmax_grad_fast(out: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The twin of ``LOG_SOFTMAX``'s rule on arrays along the last axis (``along_rows``),
    equal within float rounding (each row's sum(g) by ``np.einsum``, not numpy's pairwise
    sum): g - exp(out) * sum(g), computed as g + exp(out) * -sum(g) (the same roundings)
    in one array. 2.5x faster at 512x192 in float32."""
    grad = np.exp(out)
    grad *= -np.einsum("...i->...", g)[..., None]
    grad += g
    return grad


def nll_loss_on_arrays(x: np.ndarray, at: Any, w: Any, d: Any) -> np.ndarray:
    """-sum_i w_i x[at_i] / d: see ``NLL_LOSS``."""
    return -(x[at] * w).sum() / d


@define("nll_loss", array=nll_loss_on_arrays,
        params=("at", "w", "d"), saves=("",), torch=("F.nll_loss",))
def NLL_LOSS(xs, out, g, at, w, d):
    """The negative log-likelihood -sum_i w_i x[at_i] / d of log-probabilities x, at each
    target's entry ``at`` (an index), weighed by ``w`` (1, or per target: its class's weight,
    0 where ignored) and divided by ``d`` (the weights' sum for a mean, 1 for a sum), as
    torch's ``nll_loss``;  d/dx = -w_i / d at each picked entry, 0 elsewhere."""
    return (scatter(g * (-w / d), at, xs[0].shape),)


def cumsum_on_arrays(x: np.ndarray, axis: int) -> np.ndarray:
    """The running sums along ``axis``."""
    return np.cumsum(x, axis=axis)


@define("cumsum", array=cumsum_on_arrays, params=("axis",), saves=("",),
        torch=("torch.cumsum", "Tensor.cumsum"))
def CUMSUM(xs, out, g, axis):
    """The running sums along ``axis``, out[i] = x[0] + ... + x[i];  d/dx[i] = g[i] + g[i+1]
    + ...: the running sums of g from the other end (flipped, summed, flipped back)."""
    return (cumsum_from_end(g, axis),)


def binary_cross_entropy_on_arrays(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """-(y log x + (1 - y) log(1 - x)) entry by entry, each log at least -100 (torch's)."""
    return (y - 1) * np.maximum(np.log1p(-x), -100) - y * np.maximum(np.log(x), -100)


@define("binary_cross_entropy", array=binary_cross_entropy_on_arrays,
        domain="0 <= x <= 1", saves=("x y", "x"), floats=True,
        torch=("F.binary_cross_entropy",))
def BINARY_CROSS_ENTROPY(xs, out, g):
    """-(t * log(x) + (1 - t) * log(1 - x)) for a probability x and its target t, each log
    at least -100 (torch's floor: x = 0 or 1 gives a number);  d/dx = (x - t) / (x * (1 - x)),
    the denominator at least torch's 1e-12 (as a float32: 9.999999960041972e-13), d/dt =
    log(1 - x) - log(x), the logs floored again (torch's are not: there it gives inf)."""
    x, t = xs
    return (g * (x - t) / at_least((1 - x) * x, 9.999999960041972e-13),
            g * (at_least(log1p(-x), -100) - at_least(log(x), -100)))


@define("clip", array=np.clip,
        params=("low", "high"), saves=("x",), torch=("torch.clamp", "Tensor.clamp"))
def CLIP(xs, out, g, low, high):
    """x clamped into [low, high];  d/dx = 1 where low <= x <= high, else 0 (torch.clamp)."""
    return (between(data(xs[0]), low, high) * g,)


# ---- moving entries: each rule moves the gradient back ----


def reshape_on_arrays(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The same entries in ``shape``."""
    return x.reshape(shape)


@define("reshape", array=reshape_on_arrays, params=("shape",),
        saves=("",), torch=("torch.reshape", "Tensor.reshape"))
def RESHAPE(xs, out, g, shape):
    """The same entries in a new shape;  the gradient is reshaped back."""
    return (g.reshape(xs[0].shape),)


@define("transpose", array=np.transpose,
        params=("axes",), saves=("",), torch=("torch.permute", "Tensor.permute"))
def TRANSPOSE(xs, out, g, axes):
    """The axes permuted;  the gradient is permuted back."""
    return (permuted(g, inverse(axes)),)


def cast_on_arrays(x: np.ndarray, dtype: Any) -> np.ndarray:
    """x in ``dtype``."""
    return x.astype(dtype)


@define("to", array=cast_on_arrays, params=("dtype",),
        saves=("",), torch=("Tensor.to",))
def CAST(xs, out, g, dtype):
    """x in another floating dtype (named by ``dtype``);  the gradient is cast back."""
    return (as_dtype(g, xs[0].dtype),)


@define("broadcast_to", array=np.broadcast_to, params=("shape",),
        saves=("",), torch=("torch.broadcast_to", "Tensor.broadcast_to"))
def BROADCAST_TO(xs, out, g, shape):
    """Repeated along new or size-1 axes;  the driver sums the gradient back."""
    return (g,)


@define("getitem", array=operator.getitem,
        params=("index",), saves=("",), torch=("Tensor.__getitem__",))
def GETITEM(xs, out, g, index):
    """x[index];  the gradient is scattered back into zeros (an entry picked twice gets
    both shares)."""
    return (scatter(g, index, xs[0].shape),)


def setitem_on_arrays(x: np.ndarray, y: Any, index: Any) -> np.ndarray:
    """A copy of x with ``y`` written at ``index`` (``put``)."""
    return put(x, index, y)


@define("setitem", array=setitem_on_arrays,
        params=("index",), saves=("", ""), torch=("Tensor.__setitem__", "Tensor.index_put_"))
def SETITEM(xs, out, g, index):
    """x with ``x[index] = y`` (an in-place write that the graph records, as torch records
    one);  d/dx = 1 outside ``index``, 0 inside (overwritten); d/dy = 1 at ``index`` (g[index],
    summed back where y was broadcast)."""
    return zeroed(g, index), g[index]


@define("scatter", array=kernels.scatter_on_arrays,
        params=("index", "shape"), saves=("",))
def SCATTER(xs, out, g, index, shape):
    """g added into zeros of ``shape`` at ``index`` (getitem's gradient);  d: g[index]."""
    return (g[index],)


def concatenate_on_arrays(*args: Any) -> np.ndarray:
    """The inputs joined along ``axis`` (the parameters last: ``axis``, ``pieces``)."""
    *xs, axis, _ = args
    return np.concatenate(xs, axis=axis)


@define("concatenate", array=concatenate_on_arrays,
        params=("axis", "pieces"), saves=("",), torch=("torch.cat",))
def CONCATENATE(xs, out, g, axis, pieces):
    """Tensors joined along an axis;  input k's gradient is its slice of g."""
    return tuple(g[piece] for piece in pieces)


def stack_on_arrays(*args: Any) -> np.ndarray:
    """The inputs stacked along a new ``axis`` (the parameters last: ``axis``, ``picks``)."""
    *xs, axis, _ = args
    return np.stack(xs, axis=axis)


@define("stack", array=stack_on_arrays,
        params=("axis", "picks"), saves=("",), torch=("torch.stack",))
def STACK(xs, out, g, axis, picks):
    """Tensors stacked along a new axis;  input k's gradient is g[..., k, ...]."""
    return tuple(g[pick] for pick in picks)


def where_on_arrays(x: np.ndarray, y: np.ndarray, condition: np.ndarray) -> np.ndarray:
    """x where ``condition`` holds, else y."""
    return np.where(condition, x, y)


@define("where", array=where_on_arrays, params=("condition",), saves=("", ""),
        torch=("torch.where",))
def WHERE(xs, out, g, condition):
    """x where the condition holds, else y;  the gradient goes to the one chosen."""
    return g * condition, g * ~condition


def einsum_on_arrays(x: np.ndarray, y: np.ndarray, equation: str,
                     needs: tuple[bool, bool]) -> np.ndarray:
    """numpy's einsum of x and y by ``equation`` (``needs`` is the rule's)."""
    return np.einsum(equation, x, y, optimize=True)


@define("einsum", array=einsum_on_arrays, params=("equation", "needs"),
        saves=("y", "x"), torch=("torch.einsum",))
def EINSUM(xs, out, g, equation, needs):
    """Sums of products of the entries of x and y, each axis named by a letter of
    ``equation`` ("ij,jk->ik" is x @ y; a letter missing after "->" is summed over);
    d/dx = einsum("ik,jk->ij", g, y) for that example: the rule of an einsum is an einsum
    of g with the other input (``einsum_grad``). ``needs`` says which of x and y take a
    gradient."""
    x, y = xs
    return (einsum_grad(equation, 0, g, y, x.shape) if needs[0] else None,
            einsum_grad(equation, 1, g, x, y.shape) if needs[1] else None)


def pad_on_arrays(x: np.ndarray, widths: tuple) -> np.ndarray:
    """Zeros of the padded shape with x written inside (``unpadded``): ``np.pad(x, widths)``'s
    numbers, without its Python (np.pad takes 30 us for any array; this, 4 us at 32x200).

    Example:
        >>> pad_on_arrays(np.array([1.0, 2.0]), ((1, 2),)).tolist()
        [0.0, 1.0, 2.0, 0.0, 0.0]
    """
    out = np.zeros(tuple(lo + n + hi for (lo, hi), n in zip(widths, x.shape)), dtype=x.dtype)
    out[unpadded(widths, x.shape)] = x
    return out


@define("pad", array=pad_on_arrays,
        params=("widths",), saves=("",))
def PAD(xs, out, g, widths):
    """Zeros around x ((before, after) for each axis);  the gradient without the border."""
    return (g[unpadded(widths, xs[0].shape)],)


# ---- convolution and pooling ----
#
# conv2d's three primitives are the partial derivatives of one number,
# T(x, w, g) = sum(conv2d(x, w) * g), which is linear in each of x, w and g: conv2d itself
# is dT/dg, conv2d_input_grad is dT/dx and conv2d_weight_grad is dT/dw. So the rule of each
# is made of the other two (and of conv2d), and gradients of any order stay in the family.
# Their forwards on arrays are in kernels.py (``conv2d_on_arrays`` and the others), each
# readable reference beside its fast twin.


def conv2d_forward(*args: Any) -> np.ndarray:
    """conv2d's forward on arrays: x, the filters and the bias if there is one, then the
    parameters ``stride``, ``padding`` and ``needs`` (the rule's)."""
    *xs, stride, padding, _ = args
    return kernels.conv2d_on_arrays(xs[0], xs[1], stride, padding, *xs[2:])


@define("conv2d", array=conv2d_forward, params=("stride", "padding", "needs"),
        saves=("y", "x", ""), torch=("torch.conv2d", "F.conv2d"))
def CONV2D(xs, out, g, stride, padding, needs):
    """Filters w (O, C, kh, kw) slid over x (N, C, H, W), plus a bias (O,) if given;
    d/dx = conv2d_input_grad(g, w), d/dw = conv2d_weight_grad(x, g), d/dbias = g summed
    over the batch and the positions. ``needs`` says which of x and w take a gradient."""
    x, w = xs[0], xs[1]
    gx = conv2d_input_grad(g, w, x.shape[2:], stride, padding) if needs[0] else None
    gw = conv2d_weight_grad(x, g, w.shape[2:], stride, padding) if needs[1] else None
    return (gx, gw) if len(xs) == 2 else (gx, gw, g.sum(axis=0).sum(axis=(1, 2)))


@define("conv2d_input_grad", array=kernels.conv2d_input_grad_on_arrays,
        params=("size", "stride", "padding"), saves=("y", "x"))
def CONV2D_INPUT_GRAD(xs, out, u, size, stride, padding):
    """conv2d's gradient for its input, from the output's gradient g and the filters w (a
    transposed convolution): each window's share, g times w, added back where the window
    came from;  d/dg = conv2d(u, w), d/dw = conv2d_weight_grad(u, g)."""
    g, w = xs
    return (convolve(u, w, stride, padding),
            conv2d_weight_grad(u, g, w.shape[2:], stride, padding))


@define("conv2d_weight_grad", array=kernels.conv2d_weight_grad_on_arrays,
        params=("kernel", "stride", "padding"), saves=("y", "x"))
def CONV2D_WEIGHT_GRAD(xs, out, v, kernel, stride, padding):
    """conv2d's gradient for its filters, from the input x and the output's gradient g:
    every window of x times g, summed over the batch and positions;
    d/dx = conv2d_input_grad(g, v), d/dg = conv2d(x, v)."""
    x, g = xs
    return (conv2d_input_grad(g, v, x.shape[2:], stride, padding),
            convolve(x, v, stride, padding))


# max_pool2d has no forward of its own, as max: ``picked`` depends on where the largest
# entries are, which the op finds as it computes them (``kernels.max_pool2d_on_arrays``)
@define("max_pool2d", params=("picked", "overlap"),
        saves=("",), torch=("F.max_pool2d",))
def MAX_POOL2D(xs, out, g, picked, overlap):
    """The largest entry of each window;  each window's gradient goes to its first largest
    entry (``picked``: where that is in x, flattened), summed where windows overlap."""
    return (unpool(g, picked, xs[0].shape, overlap),)


@define("unpool", array=kernels.unpool_on_arrays, params=("picked", "shape", "overlap"),
        saves=("",))
def UNPOOL(xs, out, g, picked, shape, overlap):
    """Each window's gradient put at its picked entry (max_pool2d's gradient);
    d: g read back at the picked entries."""
    return (g.reshape(-1)[picked],)




# ---- the functions the rules use: on arrays, and as ops on Tensors ----


@shown("{0}.mT")
def swap_last(x: Any) -> Any:
    """x with its last two axes swapped (the matrix transpose, batched)."""
    axes = list(range(x.ndim))
    axes[-2], axes[-1] = axes[-1], axes[-2]
    return permuted(x, tuple(axes))


@shown("{0}.transpose({1})")
def permuted(x: Any, axes: tuple[int, ...]) -> Any:
    """x with its axes in the order ``axes``: ndarray.transpose, or a Tensor's permute."""
    return x.transpose(axes) if isinstance(x, ARRAY_TYPES) else x.permute(axes)


@shown("{0}.astype({1})")
def as_dtype(x: Any, dtype: Any) -> Any:
    """x in ``dtype``: ndarray.astype, or a Tensor's ``to``."""
    return x.astype(dtype) if isinstance(x, ARRAY_TYPES) else x.to(dtype)


@shown()
def inverse(axes: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``axes``."""
    return tuple(sorted(range(len(axes)), key=axes.__getitem__))


def kept_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with each reduced axis kept as 1."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


@shown()
def expand(g: Any, axes: tuple[int, ...], shape: tuple[int, ...]) -> Any:
    """g, reduced over ``axes`` of ``shape``, repeated back along them to ``shape``."""
    g = g.reshape(kept_shape(shape, axes))
    return np.broadcast_to(g, shape) if isinstance(g, ARRAY_TYPES) else g.broadcast_to(shape)


@shown()
def at_least(x: Any, floor: float) -> Any:
    """x, but at least ``floor`` (a number), entry by entry: on an array (or a numpy
    number) or a Tensor."""
    return x.maximum(floor) if hasattr(x, "_prev") else np.maximum(x, floor)


@shown()
def flipped(x: Any, axis: int) -> Any:
    """x with its entries along ``axis`` in reverse order (a slice of step -1, on an array
    or a Tensor)."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


@shown()
def cumsum_from_end(g: Any, axis: int) -> Any:
    """The running sums of g along ``axis`` from its last entry back: g flipped, summed,
    flipped back (``flipped``). On an array, the sums are written through the flipped view
    of a row-major array, which is returned: the same numbers, in a layout that a
    gradient is kept in and checked as it is (a flipped view of the sums would be copied
    for both, 100 us at 512x192); on a Tensor, three nodes.

    Example:
        >>> cumsum_from_end(np.array([[1.0, 2.0, 3.0]]), 1).tolist()
        [[6.0, 5.0, 3.0]]
    """
    if not isinstance(g, ARRAY_TYPES):
        return flipped(flipped(g, axis).cumsum(axis), axis)
    out = np.empty(g.shape, dtype=g.dtype)
    np.cumsum(flipped(g, axis), axis=axis, out=flipped(out, axis))
    return out


def contract(equation: str, x: Any, y: Any) -> Any:
    """The einsum of two operands: on arrays, its forward; on Tensors, an ``einsum`` node."""
    needs = (getattr(x, "requires_grad", False), getattr(y, "requires_grad", False))
    return apply(EINSUM.bind(equation, needs), x, y)


@shown()
def einsum_grad(equation: str, k: int, g: Any, other: Any, shape: tuple[int, ...]) -> Any:
    """The gradient of operand ``k`` (0 or 1) of the two-operand ``equation``, of ``shape``,
    from the output's gradient g and the other operand: the einsum of g and the other
    operand into operand k's letters, repeated along those that only operand k has (the
    forward summed them away, so each of their entries had the same share).

    Example:
        >>> g, y = np.ones((2, 4)), np.arange(12.0).reshape(3, 4)
        >>> bool((einsum_grad("ij,jk->ik", 0, g, y, (2, 3)) == g @ y.T).all())
        True
    """
    inputs, result = equation.split("->")
    mine, theirs = inputs.split(",")[k], inputs.split(",")[1 - k]
    kept = "".join(c for c in mine if c in result or c in theirs)
    part = contract(f"{result},{theirs}->{kept}", g, other)
    summed_away = tuple(i for i, c in enumerate(mine) if c not in kept)
    return expand(part, summed_away, shape) if summed_away else part


@shown()
def between(x: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    """Where ``low <= x <= high`` (a bound of None is no bound), as a boolean array."""
    inside = np.ones(x.shape, dtype=bool)
    if low is not None:
        inside &= x >= low
    if high is not None:
        inside &= x <= high
    return inside


@shown()
def unpadded(widths: tuple, shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The index of an input of ``shape`` inside its padded output."""
    return tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, shape))


def apply(rule: Any, *inputs: Any) -> Any:
    """A primitive (bound to its parameters) applied to arrays, by its forward on arrays,
    or to Tensors, as a node: how a rule computes with another primitive on either."""
    if isinstance(inputs[0], ARRAY_TYPES):
        return rule.primitive.on_arrays(*inputs, *rule.params)
    return inputs[0]._apply(rule, *inputs[1:])


@shown()
def zeroed(g: Any, index: Any) -> Any:
    """g with zeros at ``index``; on a Tensor, a ``setitem`` node."""
    if isinstance(g, ARRAY_TYPES):
        return put(g, index, 0)
    return apply(SETITEM.bind(index), g, g[index] * 0)


def put(x: np.ndarray, index: Any, value: Any) -> np.ndarray:
    """A copy of x with ``value`` written at ``index`` (setitem's forward)."""
    out = x.copy()
    out[index] = value
    return out


@shown()
def scatter(g: Any, index: Any, shape: tuple[int, ...]) -> Any:
    """g added into zeros of ``shape`` at ``index``; on a Tensor, a ``scatter`` node."""
    return apply(SCATTER.bind(index, shape), g)


@shown()
def convolve(x: Any, w: Any, stride: tuple[int, int], padding: tuple[int, int]) -> Any:
    """conv2d without bias: on arrays, its forward; on Tensors, a ``conv2d`` node."""
    needs = (getattr(x, "requires_grad", False), getattr(w, "requires_grad", False))
    return apply(CONV2D.bind(stride, padding, needs), x, w)


@shown()
def conv2d_input_grad(g: Any, w: Any, size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int]) -> Any:
    """conv2d's gradient for an input of ``size``: on arrays, computed; on Tensors, a node."""
    return apply(CONV2D_INPUT_GRAD.bind(tuple(size), stride, padding), g, w)


@shown()
def conv2d_weight_grad(x: Any, g: Any, kernel: tuple[int, int], stride: tuple[int, int],
                       padding: tuple[int, int]) -> Any:
    """conv2d's gradient for filters of ``kernel`` size: on arrays, computed; on Tensors, a
    node."""
    return apply(CONV2D_WEIGHT_GRAD.bind(tuple(kernel), stride, padding), x, g)


@shown()
def unpool(g: Any, picked: np.ndarray, shape: tuple[int, ...], overlap: bool) -> Any:
    """Each window's gradient at its picked entry of zeros of ``shape``; on a Tensor, an
    ``unpool`` node."""
    return apply(UNPOOL.bind(picked, shape, overlap), g)


# ---- layer normalisation: torch's native_layer_norm as one node (issue 32 point 4) ----


@define("layer_norm",
        array=kernels.layer_norm_on_arrays, params=("axes", "eps", "needs"),
        saves=("x y", "x", ""), floats=True, torch=("F.layer_norm",))
def LAYER_NORM(xs, out, g, axes, eps, needs):
    """(x - mean) * rstd * w + b, the mean and the biased variance var over ``axes``, rstd =
    1 / sqrt(var + eps) (torch's layer_norm);  d/dx = rstd * (h - mean(h) - xhat * mean(h *
    xhat)), h = g * w and xhat = (x - mean) * rstd, the means over ``axes``; d/dw = g * xhat
    and d/db = g, each summed over the other axes (the rows). ``needs`` says which of x, w
    and b take a gradient; the mean and rstd are computed again, where torch keeps them."""
    x, w, _ = xs
    if rows_normalized(x, axes) and not reference.only:
        return layer_norm_grads_fast(x, w, g, eps, needs)
    return (layer_norm_input_grad(x, w, g, axes, eps) if needs[0] else None,
            over_rows(g * normalized(x, axes, eps), axes) if needs[1] else None,
            over_rows(g, axes) if needs[2] else None)


@shown()
def over_rows(v: Any, axes: tuple[int, ...]) -> Any:
    """v summed over the axes before ``axes`` (the rows of a layer_norm), on an array or a
    Tensor: the gradient of a weight or bias of the normalized axes' shape."""
    return v.sum(axis=tuple(range(axes[0]))) if axes[0] else v


def rows_normalized(x: Any, axes: tuple[int, ...]) -> bool:
    """Whether x is a C-contiguous float array (not a Tensor) normalized over its last
    ``axes``: the case of the fast twins of layer_norm's forward and rule."""
    return (isinstance(x, ARRAY_TYPES) and x.dtype.kind == "f" and x.flags.c_contiguous
            and x.size > 0 and axes == tuple(range(x.ndim - len(axes), x.ndim)))


def layer_norm_grads_fast(x: np.ndarray, w: np.ndarray, g: np.ndarray, eps: float,
                          needs: tuple[bool, bool, bool]) -> tuple:
    """The twin of ``LAYER_NORM``'s rule on arrays (equal within float rounding: the sums
    by ``np.einsum``, each in one pass over its operands) for x as rows (``rows_normalized``):
    two temporaries where the rule makes eleven, and the weight's and bias's gradients
    summed over the rows by einsum's "ij,ij->j" (one pass, no product kept). 3x faster at
    512x192 in float32."""
    n = w.size
    rows, grads = x.reshape(-1, n), g.reshape(-1, n)
    xhat = np.subtract(rows, (np.einsum("ij->i", rows) / n)[:, None])
    rstd = (1 / (np.einsum("ij,ij->i", xhat, xhat) / n + eps) ** 0.5)[:, None]
    xhat *= rstd
    dw = np.einsum("ij,ij->j", grads, xhat).reshape(w.shape) if needs[1] else None
    db = np.einsum("ij->j", grads).reshape(w.shape) if needs[2] else None
    if not needs[0]:
        return None, dw, db
    h = np.multiply(grads, w.reshape(-1))
    hxhat = np.einsum("ij,ij->i", h, xhat) / n
    h -= (np.einsum("ij->i", h) / n)[:, None]
    xhat *= hxhat[:, None]
    h -= xhat
    h *= rstd
    return h.reshape(x.shape), dw, db


def moments(x: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any]:
    """The mean of x over ``axes`` and rstd = 1 / sqrt(var + eps), var the biased variance
    (both with ``axes`` kept as size 1): on arrays or Tensors."""
    mean = mean_over(x, axes)
    centred = x - mean
    return mean, 1 / (mean_over(centred * centred, axes) + eps) ** 0.5


@shown()
def normalized(x: Any, axes: tuple[int, ...], eps: float) -> Any:
    """xhat = (x - mean) * rstd over ``axes`` (``moments``): on arrays or Tensors."""
    mean, rstd = moments(x, axes, eps)
    return (x - mean) * rstd


def normalized_grad(xhat: Any, rstd: Any, h: Any, axes: tuple[int, ...]) -> Any:
    """The gradient of x through xhat = (x - mean) * rstd, given h, xhat's gradient:
    rstd * (h - mean(h) - xhat * mean(h * xhat)), the means over ``axes``."""
    return rstd * (h - mean_over(h, axes) - xhat * mean_over(h * xhat, axes))


@shown()
def layer_norm_input_grad(x: Any, w: Any, g: Any, axes: tuple[int, ...], eps: float) -> Any:
    """layer_norm's gradient for x, from the weight w and the output's gradient g (its
    rule's first result, computed as the rule computes it)."""
    mean, rstd = moments(x, axes, eps)
    return normalized_grad((x - mean) * rstd, rstd, g * w, axes)


def mean_over(x: Any, axes: tuple[int, ...]) -> Any:
    """The mean of x over ``axes``, kept as size-1 axes: an array's (``mean_over_fast``
    unless under ``chaingrad.use_reference()``), or a Tensor's ``mean`` node."""
    if isinstance(x, ARRAY_TYPES) and not reference.only:
        return mean_over_fast(x, axes)
    return x.mean(axis=axes, keepdims=True)


def mean_over_fast(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The twin of an array's ``x.mean(axis=axes, keepdims=True)`` (equal within float
    rounding: each row summed by ``np.einsum``, not numpy's pairwise sum; 3x faster for
    rows of 192) for a C-contiguous float x and ``axes`` its last ones."""
    if (x.dtype.kind != "f" or not x.flags.c_contiguous or x.size == 0
            or axes != tuple(range(x.ndim - len(axes), x.ndim))):
        return x.mean(axis=axes, keepdims=True)
    n = math.prod(x.shape[x.ndim - len(axes):])
    return (np.einsum("ij->i", x.reshape(-1, n)) / n).reshape(kept_shape(x.shape, axes))






# ---- recurrent layers: an LSTM's (and below, a GRU's and an RNN's) steps over a sequence ----
#
# One node for what the composed steps of nn/modules/rnn.py make some twenty nodes a step
# of (benchmarks/RESULTS.md, "A fused LSTM layer"); the input's part of the gates, for all
# the steps, is a matmul node before it. Its forward on arrays is in
# tensor_engine/recurrent.py; its output keeps each step's gates, c and h side by side along
# the last axis, and the starting state in a row of its own, so that its rule,
# backpropagation through time, reads all it needs off the output and W_hh. The rule is
# written with operators, slices and the functions above, so that it serves
# ``backward(create_graph=True)`` too; each step's terms are made in the loop, on arrays of
# one step (made for all the steps at once, whole-sequence arrays cost more than they
# save: each on fresh pages, a third of the rule's time).


@define("lstm_recurrence",
        array=recurrent.lstm_recurrence_on_arrays, params=("reverse",), saves=("y out",))
def LSTM_RECURRENCE(xs, out, g, reverse):
    """An LSTM layer's steps, from the input's part of each step's gates x_parts (T, N, 4H),
    W_hh (4H, H), h0 and c0 (N, H): each step's gates i, f, cell (torch's g) and o, its c
    and its h, and the starting state (``recurrent.lstm_recurrence_on_arrays``);
    backpropagation through time (``backprop_through_time``), from the last step back: at
    step t, with dh and dc what reached h_t and c_t (from g and from step t + 1),
    dc += dh * o * (1 - tanh(c)**2); the gates' gradients before their sigmoid or tanh,
    dz = (dc * cell, dc * c_(t-1), dc * i, dh * tanh(c)) times each gate's slope
    (s * (1 - s) for a sigmoid s, 1 - cell**2 for the cell gate), plus what g gives the
    gates themselves: d x_parts[t] = dz; then dh = dz W_hh and dc = dc * f reach step t - 1,
    and at the start, h0 and c0. Last, dW_hh = dz^T h_(t-1), for all the steps at once.
    """
    return backprop_through_time(xs[1], out, g, reverse)




@shown()
def backprop_through_time(w_hh: Any, out: Any, g: Any, reverse: bool) -> tuple[Any, ...]:
    """The gradients of an ``lstm_recurrence`` node's inputs (x_parts, W_hh, h0, c0) from
    W_hh, its output (each step's gates, c and h, and the starting state) and the output's
    gradient g: see ``LSTM_RECURRENCE``. On arrays, or on Tensors (each op a node)."""
    n, steps = w_hh.shape[-1], out.shape[0] - 1
    now, before = (out[:-1], out[1:]) if reverse else (out[1:], out[:-1])  # step t's, t-1's
    g_now, g_start = (g[:-1], g[-1]) if reverse else (g[1:], g[0])
    i, f, cell, o, c, h = (now[..., k * n:(k + 1) * n] for k in range(6))
    gates, c_before = now[..., :4 * n], before[..., 4 * n:5 * n]
    g_gates, g_c, g_h = g_now[..., :4 * n], g_now[..., 4 * n:5 * n], g_now[..., 5 * n:]
    dz: list[Any] = [None] * steps
    dh_later = dc_later = 0  # what flows back into step t from step t + 1
    for t in range(steps) if reverse else range(steps - 1, -1, -1):
        tanh_c = TANH(c[t])
        dh = g_h[t] + dh_later
        dc = g_c[t] + dc_later + dh * o[t] * (1 - tanh_c * tanh_c)
        d_gates = joined([dc * cell[t], dc * c_before[t], dc * i[t], dh * tanh_c], -1)
        opened = gates[t] * (1 - gates[t])  # each sigmoid's slope; g's (a tanh's) in
        slope = joined([opened[:, :2 * n], 1 - cell[t] * cell[t], opened[:, 3 * n:]], -1)
        dz[t] = (d_gates + g_gates[t]) * slope
        dh_later, dc_later = dz[t] @ w_hh, dc * f[t]
    dz = stacked(dz)
    d_w_hh = swap_last(rows_of(dz)) @ rows_of(before[..., 5 * n:])
    return (dz, d_w_hh, dh_later + g_start[:, 5 * n:], dc_later + g_start[:, 4 * n:5 * n])


@define("gru_recurrence",
        array=recurrent.gru_recurrence_on_arrays, params=("reverse", "bias"), saves=("y out",))
def GRU_RECURRENCE(xs, out, g, reverse, bias):
    """A GRU layer's steps, from the input's part of each step's gates x_parts (T, N, 3H),
    W_hh (3H, H), h0 (N, H) and b_hh (3H,) if the layer has it: each step's r, z, n,
    h_n = h W_hn^T + b_hn and h, and the starting state
    (``recurrent.gru_recurrence_on_arrays``);  backpropagation through time
    (``gru_backprop_through_time``), from the last step back: at step t, with dh what
    reached h_t (from g and from step t + 1), h' = (h - n) * z + n gives
    dz = dh * (h_(t-1) - n) and dn = dh * (1 - z); before their sigmoid or tanh,
    dn_ = dn * (1 - n**2), dr_ = dn_ * h_n * r * (1 - r), dz_ = dz * z * (1 - z)
    (plus what g gives each block itself); d x_parts[t] = (dr_, dz_, dn_), h's parts get
    dh_part = (dr_, dz_, dn_ * r), and step t - 1 gets dh * z + dh_part W_hh. Last, for all
    the steps at once: dW_hh = dh_part^T h_(t-1) and db_hh = dh_part summed.
    """
    return gru_backprop_through_time(xs[1], out, g, reverse, bias)




@shown()
def gru_backprop_through_time(w_hh: Any, out: Any, g: Any, reverse: bool,
                              bias: bool) -> tuple[Any, ...]:
    """The gradients of a ``gru_recurrence`` node's inputs (x_parts, W_hh, h0, and b_hh if
    it has it: ``bias``) from W_hh, its output and the output's gradient g: see
    ``GRU_RECURRENCE``. On arrays, or on Tensors (each op a node)."""
    n, steps = w_hh.shape[-1], out.shape[0] - 1
    now, before = (out[:-1], out[1:]) if reverse else (out[1:], out[:-1])  # step t's, t-1's
    g_now, g_start = (g[:-1], g[-1]) if reverse else (g[1:], g[0])
    r, z, new, h_n = (now[..., k * n:(k + 1) * n] for k in range(4))
    h_before = before[..., 4 * n:]
    g_r, g_z, g_new, g_h_n, g_h = (g_now[..., k * n:(k + 1) * n] for k in range(5))
    dx: list[Any] = [None] * steps
    dh_parts: list[Any] = [None] * steps
    dh_later = 0  # what flows back into step t from step t + 1
    for t in range(steps) if reverse else range(steps - 1, -1, -1):
        dh = g_h[t] + dh_later
        dn = (dh * (1 - z[t]) + g_new[t]) * (1 - new[t] * new[t])
        dr = (dn * h_n[t] + g_r[t]) * r[t] * (1 - r[t])
        dz = (dh * (h_before[t] - new[t]) + g_z[t]) * z[t] * (1 - z[t])
        dx[t] = joined([dr, dz, dn], -1)
        dh_parts[t] = joined([dr, dz, dn * r[t] + g_h_n[t]], -1)
        dh_later = dh * z[t] + dh_parts[t] @ w_hh
    dh_part = rows_of(stacked(dh_parts))
    grads = (stacked(dx), swap_last(dh_part) @ rows_of(h_before), dh_later + g_start[:, 4 * n:])
    return (*grads, dh_part.sum(axis=0)) if bias else grads


@define("rnn_recurrence",
        array=recurrent.rnn_recurrence_on_arrays, params=("relu", "reverse"),
        saves=("y out",))
def RNN_RECURRENCE(xs, out, g, relu, reverse):
    """An Elman RNN layer's steps, from the input's part of each step x_parts (T, N, H),
    W_hh (H, H) and h0 (N, H): each step's h' = tanh(h W_hh^T + x_parts[t]) (relu with
    ``relu``), after the starting state (``recurrent.rnn_recurrence_on_arrays``);
    backpropagation through time (``rnn_backprop_through_time``), from the last step back:
    at step t, with dh what reached h_t (from g and from step t + 1), d x_parts[t] = dz =
    dh * (1 - h_t**2) (for relu, dh where h_t > 0), and step t - 1 gets dz W_hh. Last, for
    all the steps at once: dW_hh = dz^T h_(t-1).
    """
    return rnn_backprop_through_time(xs[1], out, g, relu, reverse)




@shown()
def rnn_backprop_through_time(w_hh: Any, out: Any, g: Any, relu: bool,
                              reverse: bool) -> tuple[Any, ...]:
    """The gradients of an ``rnn_recurrence`` node's inputs (x_parts, W_hh, h0) from W_hh,
    its output and the output's gradient g: see ``RNN_RECURRENCE``. On arrays, or on
    Tensors (each op a node)."""
    steps = out.shape[0] - 1
    now, before = (out[:-1], out[1:]) if reverse else (out[1:], out[:-1])  # step t's, t-1's
    g_now, g_start = (g[:-1], g[-1]) if reverse else (g[1:], g[0])
    dz: list[Any] = [None] * steps
    dh_later = 0  # what flows back into step t from step t + 1
    for t in range(steps) if reverse else range(steps - 1, -1, -1):
        dh = g_now[t] + dh_later
        dz[t] = (data(now[t]) > 0) * dh if relu else dh * (1 - now[t] * now[t])
        dh_later = dz[t] @ w_hh
    dz = stacked(dz)
    return dz, swap_last(rows_of(dz)) @ rows_of(before), dh_later + g_start


def joined(parts: list[Any], axis: int) -> Any:
    """The arrays or Tensors joined along ``axis``: np.concatenate, or a ``concatenate``
    node."""
    if isinstance(parts[0], ARRAY_TYPES):
        return np.concatenate(parts, axis=axis)
    axis %= parts[0].ndim
    ends = np.cumsum([p.shape[axis] for p in parts]).tolist()
    pieces = tuple((slice(None),) * axis + (slice(end - p.shape[axis], end),)
                   for p, end in zip(parts, ends))
    return apply(CONCATENATE.bind(axis, pieces), *parts)


def stacked(parts: list[Any]) -> Any:
    """The arrays or Tensors stacked along a new first axis: np.stack, or a ``stack`` node."""
    if isinstance(parts[0], ARRAY_TYPES):
        return np.stack(parts)
    return apply(STACK.bind(0, tuple((k,) for k in range(len(parts)))), *parts)


PRIMITIVES: tuple[Primitive, ...] = (
    MATMUL, DIV, SCALE, SUM, MAX, MIN, SOFTMAX, LOG_SOFTMAX, NLL_LOSS, CUMSUM, BINARY_CROSS_ENTROPY,
    CLIP, RESHAPE, TRANSPOSE, CAST, BROADCAST_TO, GETITEM, SETITEM, SCATTER, CONCATENATE, STACK,
    WHERE, EINSUM, PAD, CONV2D,
    CONV2D_INPUT_GRAD, CONV2D_WEIGHT_GRAD, MAX_POOL2D, UNPOOL, LAYER_NORM, LSTM_RECURRENCE,
    GRU_RECURRENCE, RNN_RECURRENCE)
"""Every primitive of the Tensor engine, beside those of ``chaingrad.rules``."""
