"""``torch.nn.functional`` for chaingrad Tensors: ``import chaingrad.nn.functional as F``.

Each function has PyTorch's name, argument order and defaults, and computes what PyTorch
computes; it is made of the Tensor's ops (``relu``, ``log_softmax``, ``@``, indexing, ...)
and of the nodes of convolution and pooling (``tensor_engine.functions``), so every
gradient comes from the rules those ops already state. What chaingrad does not have
(dilation, groups, a padded max pool, ...) raises NotImplementedError naming it, never a
different result. ``conv2d`` and ``max_pool2d`` here are convolution's and pooling's one
entry: they check the arguments, once, for the layers (``nn.Conv2d``, ``nn.MaxPool2d``)
too. ``conv1d`` is ``conv2d`` on rows of height 1; ``avg_pool2d`` and
``adaptive_avg_pool2d`` add each window's entries in torch's order (``window_sums``);
``pad`` and ``interpolate`` pick entries by indexing and weigh them.

The losses are chaingrad's one Tensor form of each (``chaingrad.losses`` hands Tensors to
them). They take torch's ``reduction='mean' | 'sum' | 'none'`` (and the old
``size_average``/``reduce``, with torch's warning), and broadcast as torch does: a target
of another shape than the input is broadcast against it, with torch's warning. Class
targets of ``cross_entropy`` and ``nll_loss`` are integers (an int Tensor or array); a
floating target of ``cross_entropy`` holds class probabilities, as in torch.

Example:
    >>> import numpy as np
    >>> from chaingrad.tensor_engine import Tensor
    >>> logits = Tensor(np.array([[2.0, 0.5, -1.0]]), requires_grad=True)
    >>> loss = cross_entropy(logits, np.array([0]))
    >>> round(loss.item(), 4)
    0.2413
    >>> loss.backward()
    >>> tuple(logits.grad.shape)
    (1, 3)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import torch_names
from ..declaration import Primitive, signature
from ..gradmode import is_grad_enabled
from ..rules import functions_in
from ..tensor_engine import autocast_state, functions, kernels, sampling
from ..tensor_engine.arrays import quietly
from ..tensor_engine.factories import tensor_argument
from ..tensor_engine.promotion import floating, rounded_back
from ..tensor_engine.rules import (
    BINARY_CROSS_ENTROPY,
    CONV2D,
    LAYER_NORM,
    MAX_POOL2D,
    NLL_LOSS,
)
from ..tensor_engine.tensor import Tensor, constant, make_node

__all__ = sorted({
    "adaptive_avg_pool2d", "avg_pool2d", "batch_norm", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "conv1d", "conv2d", "cross_entropy", "dropout",
    "embedding", "gelu", "huber_loss", "interpolate", "l1_loss", "layer_norm", "leaky_relu",
    "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss", "one_hot", "pad", "relu",
    "scaled_dot_product_attention", "smooth_l1_loss", "softmax",
} | set(functions_in("F")))

REDUCTIONS = ("none", "mean", "sum")


def not_yet(what: str) -> NotImplementedError:
    """The error for something PyTorch has and chaingrad has not: it names it."""
    return NotImplementedError(f"{what} is not in chaingrad yet")


# ---- activations ----


def _elementwise(name: str, prim: Primitive) -> Any:
    """torch's ``F.name(input, ...)`` for an elementwise primitive: the Tensor method, with
    the primitive's parameters (``F.softplus(x, beta=2)``)."""
    method = prim.method

    def function(input: Tensor, *params: Any, **named: Any) -> Tensor:  # noqa: A002
        return getattr(tensor_argument(input, name), method)(*params, **named)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{prim.doc.splitlines()[0]} Elementwise (``Tensor.{method}``)."
    if prim.param_names:
        function.__signature__ = signature(prim, "input")
    return function


# tanh, sigmoid, softplus (and relu, gelu, leaky_relu, below): from the primitives'
# declarations in chaingrad/rules.py
for _name, _prim in functions_in("F").items():
    globals()[_name] = _elementwise(_name, _prim)
del _name, _prim

if TYPE_CHECKING:  # the loop's functions, for type checkers (tests/test_typing.py)
    def sigmoid(input: Tensor) -> Tensor: ...  # noqa: A002
    def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor: ...  # noqa: A002
    def tanh(input: Tensor) -> Tensor: ...  # noqa: A002


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002 - torch's names
    """max(0, x), elementwise (``inplace=True`` is accepted and computes out of place).

    Example:
        >>> relu(Tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """
    return tensor_argument(input, "relu").relu()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x), Phi the standard normal's distribution function (``Tensor.gelu``); with
    ``approximate='tanh'``, torch's tanh form 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x +
    0.044715 * x**3))), composed of primitives.

    Example:
        >>> round(gelu(Tensor([1.0])).item(), 4), round(gelu(Tensor([1.0]), "tanh").item(), 4)
        (0.8413, 0.8412)
    """
    x = tensor_argument(input, "gelu")
    if approximate == "none":
        return x.gelu()
    if approximate != "tanh":
        raise RuntimeError(f"gelu: approximate argument must be either none or tanh, got "
                           f"{approximate!r}")
    y = floating(x)  # bfloat16 in float32, rounded once at the end: torch's one kernel
    return rounded_back(0.5 * y * (1 + (0.7978845608028654 * (y + 0.044715 * y**3)).tanh()), x)


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x (``Tensor.leaky_relu``; ``inplace=True`` is
    accepted and computes out of place).

    Example:
        >>> leaky_relu(Tensor([-1.0, 2.0]), 0.1).tolist()
        [-0.10000000149011612, 2.0]
    """
    return tensor_argument(input, "leaky_relu").leaky_relu(negative_slope)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices (an int64 tensor) as rows of zeros with a 1 at each index, as
    torch.nn.functional.one_hot: shape (*, num_classes), int64; ``num_classes=-1`` is the
    largest index plus 1.

    Example:
        >>> import chaingrad
        >>> one_hot(chaingrad.tensor([0, 2]), 3).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    classes = tensor._value
    if classes.dtype != np.int64:
        raise RuntimeError(f"one_hot is only applicable to index tensor of type LongTensor, "
                           f"got {tensor.dtype}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"one_hot: num_classes must be an int, got {num_classes!r}")
    if num_classes == -1:
        if classes.size == 0:
            raise RuntimeError("one_hot: Can not infer total number of classes from empty "
                               "tensor.")
        num_classes = int(classes.max()) + 1
    if classes.size and classes.min() < 0:
        raise RuntimeError("one_hot: Class values must be non-negative.")
    if classes.size and classes.max() >= num_classes:
        raise RuntimeError(f"one_hot: Class values must be smaller than num_classes "
                           f"({num_classes}), got {int(classes.max())}.")
    rows = (classes[..., None] == np.arange(num_classes)).astype(np.int64)
    return constant(rows)


def implicit_dim(name: str, ndim: int, stacklevel: int) -> int:
    """torch's choice of ``dim`` when softmax gets none (0 for 0-, 1- and 3-d input, else
    1), with its deprecation warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  "call to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (torch's implicit choice, with its warning, when
    ``dim`` is None); ``dtype`` converts the input first.

    Example:
        >>> softmax(Tensor([[0.0, 0.0]]), dim=1).tolist()
        [[0.5, 0.5]]
    """
    x, dim = _along("softmax", input, dim, dtype, _stacklevel + 1)
    return x.softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """x - log(sum(exp(x))) along ``dim``, computed stably (the implicit ``dim`` as
    ``softmax``'s)."""
    x, dim = _along("log_softmax", input, dim, dtype, _stacklevel + 1)
    return x.log_softmax(dim)


def _along(op: str, input: Any, dim: int | None, dtype: Any,  # noqa: A002
           stacklevel: int) -> tuple[Tensor, int]:
    """softmax's and log_softmax's input as a Tensor (of ``dtype``, if given) and their
    ``dim`` (torch's implicit choice if None; its warning ``stacklevel`` frames up)."""
    x = tensor_argument(input, op)
    if dim is None:
        dim = implicit_dim(op, x.ndim, stacklevel)
    return (x if dtype is None else x.to(dtype)), dim


def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """In training, each entry zeroed with probability ``p`` and the rest scaled by
    1 / (1 - p); the input itself otherwise. The mask is torch's for the default
    generator's seed: ``keep = u53 < 1 - p`` for each entry in order (torch's
    ``bernoulli_(1 - p)``), and the output is ``x * (keep / (1 - p))`` with the division
    in x's dtype, as torch computes it. ``inplace=True`` computes out of place.

    Example:
        >>> x = Tensor(np.ones(4))
        >>> dropout(x, 0.5, training=False) is x
        True
    """
    x = tensor_argument(input, "dropout")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0.0
    keep = sampling.draw_bernoulli(None, x.shape, x._value.dtype, 1 - p, "dropout")
    return x * (keep / np.asarray(1 - p, dtype=x.dtype))


# ---- attention ----


@autocast_state.casts("scaled_dot_product_attention")
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """Attention of each query over the keys, as torch.nn.functional.scaled_dot_product_attention::

        weights = softmax(query @ key.transpose(-2, -1) * scale + bias, dim=-1)
        output  = dropout(weights, dropout_p) @ value

    with ``scale`` 1 / sqrt(E) by default (E the queries' last size). Shapes: query
    (..., L, E), key (..., S, E), value (..., S, Ev); the output (..., L, Ev); the leading
    axes broadcast. The bias comes from ``attn_mask``: a bool mask says which keys each
    query may attend to (True: attend; False: -inf before the softmax), a float mask is
    added; either broadcasts to (..., L, S). ``is_causal=True`` is the bool mask
    ``ones(L, S).tril()`` (aligned to the upper left, as torch's: query i sees keys 0 .. i)
    and cannot be given with ``attn_mask``. A query that may attend to no key gets weights
    0 and an output of 0 (torch's ``_safe_softmax``), not nan. ``dropout_p`` applies always,
    training or not (pass ``dropout_p=p if self.training else 0``, as nanoGPT does); its
    mask is torch's for the same seed, drawn as ``F.dropout`` draws one over the weights,
    as torch's CPU kernel does. ``enable_gqa=True`` lets the key and value have fewer heads
    (axis -3) than the query, each repeated to serve query heads in turn (grouped-query
    attention).

    Composed of matmul, softmax, masked_fill and dropout, so its gradient is theirs, and
    ``explain`` and ``compile`` show those steps.

    Example:
        >>> import chaingrad
        >>> q = k = v = chaingrad.eye(2).reshape(1, 2, 2)
        >>> scaled_dot_product_attention(q, k, v, is_causal=True)
        tensor([[[1.0000, 0.0000],
                 [0.3302, 0.6698]]])
    """
    q = tensor_argument(query, "scaled_dot_product_attention", "query")
    k = tensor_argument(key, "scaled_dot_product_attention", "key")
    v = tensor_argument(value, "scaled_dot_product_attention", "value")
    _check_attention(q, k, v, attn_mask, dropout_p, is_causal)
    if enable_gqa:
        k, v = _repeat_heads(q, k, "key"), _repeat_heads(q, v, "value")
    if scale is None:
        scale = 1 / math.sqrt(q.shape[-1])
    weights = q @ k.transpose(-2, -1) * scale
    blind = None
    if is_causal:  # every query sees key 0 at least
        weights = _attention_bias(weights, np.tri(q.shape[-2], k.shape[-2], dtype=bool))
    elif attn_mask is not None:
        weights = _attention_bias(weights, attn_mask)
        blind = np.isneginf(weights._value).all(-1, keepdims=True)  # queries that see no key
        if blind.any():  # their weights 0, not nan; no gradient through them either
            weights = weights.masked_fill(blind, 0.0)
    weights = weights.softmax(-1)
    if blind is not None and blind.any():
        weights = weights.masked_fill(blind, 0.0)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return weights @ v


def _check_attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Any, dropout_p: Any,
                     is_causal: bool) -> None:
    """torch's checks of scaled_dot_product_attention's arguments, in its words."""
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {q.ndim} key.dim: {k.ndim} and value.dim: "
                           f"{v.ndim} instead.")
    if not q.dtype == k.dtype == v.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {q.dtype} key.dtype: {k.dtype} and value.dtype: "
                           f"{v.dtype} instead.")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {tuple(q.shape)}, key "
                           f"{tuple(k.shape)} and value {tuple(v.shape)} do not fit: expected "
                           "query (..., L, E), key (..., S, E) and value (..., S, Ev)")
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)) \
            or not 0 <= dropout_p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")


def _repeat_heads(q: Tensor, kv: Tensor, name: str) -> Tensor:
    """A key or value of Hk heads (axis -3) with each head repeated Hq / Hk times in turn
    (torch's ``repeat_interleave`` along the heads), to serve Hq query heads."""
    if q.ndim < 3 or kv.ndim < 3:
        raise RuntimeError("scaled_dot_product_attention: enable_gqa=True needs query, key and "
                           "value with a heads dimension (..., H, L, E)")
    heads, groups = q.shape[-3], kv.shape[-3]
    if heads % groups:
        raise RuntimeError(f"Number of heads in key and value must divide the number of heads "
                           f"in query, got {groups} and {heads}")
    *lead, _, s, e = kv.shape
    repeated = kv.unsqueeze(-3).expand(*lead, groups, heads // groups, s, e)
    return repeated.reshape(*lead, heads, s, e)


def _attention_bias(weights: Tensor, attn_mask: Any) -> Tensor:
    """The attention weights before their softmax with a bool mask's -inf (where it is
    False) or a float mask's numbers added."""
    mask = attn_mask._value if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
    if mask.dtype == np.bool_:
        try:
            np.broadcast_shapes(mask.shape, tuple(weights.shape))
        except ValueError:
            raise RuntimeError(f"scaled_dot_product_attention: attn_mask of shape "
                               f"{tuple(mask.shape)} does not broadcast to the attention "
                               f"weights' shape {tuple(weights.shape)}") from None
        shape = np.broadcast_shapes(mask.shape, tuple(weights.shape))
        if shape != tuple(weights.shape):
            weights = weights.expand(*shape)
        return weights.masked_fill(~mask, float("-inf"))
    bias = tensor_argument(attn_mask, "scaled_dot_product_attention", "attn_mask")
    if bias._value.dtype not in (np.float32, weights._value.dtype):  # float, or the query's
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {bias.dtype} and  query.dtype: "
                           f"{weights.dtype} instead.")
    return weights + bias


# ---- layers' functions ----


@autocast_state.casts("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """x @ weight.T + bias, as torch.nn.functional.linear.

    Example:
        >>> linear(Tensor([[1.0, 2.0]]), Tensor([[3.0, 4.0]]), Tensor([0.5])).tolist()
        [[11.5]]
    """
    x, w = tensor_argument(input, "linear"), tensor_argument(weight, "linear", "weight")
    if x.ndim == 0 or w.ndim not in (1, 2) or x.shape[-1] != w.shape[-1]:
        raise ValueError(f"linear: input of shape {tuple(x.shape)} and weight of shape "
                         f"{tuple(w.shape)} cannot be multiplied (the input's last dimension "
                         "must be the weight's last)")
    y = x @ w.T
    return y if bias is None else y + tensor_argument(bias, "linear", "bias")


def pair(value: Any, name: str, minimum: int) -> tuple[int, int]:
    """torch's "an int or an (h, w) pair" argument (a kernel size, a stride, a padding) as a
    pair of ints >= ``minimum``; ``name`` says whose argument it is in the error.

    Example:
        >>> pair(2, "conv2d: stride", 1), pair((1, 0), "conv2d: padding", 0)
        ((2, 2), (1, 0))
    """
    if type(value) is int and value >= minimum:  # the common case, checked first
        return value, value
    both = (value, value) if isinstance(value, (int, np.integer)) else tuple(value) \
        if isinstance(value, (tuple, list)) else None
    if both is None or len(both) != 2 or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in both):
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")
    if min(both) < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(both[0]), int(both[1])


def conv2d_options(op: str, stride: Any, padding: Any, dilation: Any, groups: int,
                   ) -> tuple[tuple[int, int], tuple[int, int] | str, tuple[int, int]]:
    """conv2d's arguments besides the tensors, checked as torch checks them: the stride,
    the padding (a pair, or 'valid' or 'same') and the dilation as pairs; what chaingrad
    lacks (a dilation, groups) refused. ``op`` is ``conv2d``, or ``Conv2d`` when the layer
    is made, so that it refuses them then, as torch's does.

    Example:
        >>> conv2d_options("conv2d", 2, 1, 1, 1)
        ((2, 2), (1, 1), (1, 1))
    """
    stride = pair(stride, f"{op}: stride", 1)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
        if padding == "same" and stride != (1, 1):
            raise ValueError("padding='same' is not supported for strided convolutions")
    else:
        padding = pair(padding, f"{op}: padding", 0)
    dilated = pair(dilation, f"{op}: dilation", 1)
    if dilated != (1, 1):
        raise not_yet(f"{op} with dilation={dilation!r}")
    if groups != 1:
        raise not_yet(f"{op} with groups={groups!r}")
    return stride, padding, dilated


@autocast_state.casts("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation) over (N, C, H, W) or (C, H, W) input with filters
    (O, C, kh, kw) and a bias (O,), as torch.nn.functional.conv2d: ``stride`` and
    ``padding`` are ints or (h, w) pairs (zeros on both sides), or ``padding`` is 'valid'
    (none) or 'same' (the output as large as the input; stride 1, the odd pixel of an even
    kernel's padding on the right and bottom, as torch does). The output is
    (N, O, OH, OW), OH = (H + 2 * padding - kh) // stride + 1.

    The one entry of convolution (``nn.Conv2d`` calls it): it checks the arguments, then
    makes the node of the ``conv2d`` primitive (``tensor_engine/rules.py``'s ``CONV2D``),
    whose gradients are convolutions too, so that it can be differentiated again.

    Example:
        >>> x, w = Tensor(np.ones((1, 1, 4, 4))), Tensor(np.ones((2, 1, 3, 3)))
        >>> tuple(conv2d(x, w, padding=1).shape), tuple(conv2d(x, w, padding='same').shape)
        ((1, 2, 4, 4), (1, 2, 4, 4))
    """
    x, w = tensor_argument(input, "conv2d"), tensor_argument(weight, "conv2d", "weight")
    stride, padding, _ = conv2d_options("conv2d", stride, padding, dilation, groups)
    unbatched = x.ndim == 3
    if unbatched:
        x = x.reshape((1,) + tuple(x.shape))
    if x.ndim != 4 or w.ndim != 4:
        raise ValueError(f"conv2d: needs an input (N, C, H, W) or (C, H, W) and a weight "
                         f"(O, C, kh, kw), got shapes {tuple(input.shape)} and "
                         f"{tuple(w.shape)}")
    o, c, kh, kw = w.shape
    if x.shape[1] != c:
        raise ValueError(f"conv2d: shapes {tuple(x.shape)} and {tuple(w.shape)}: the input "
                         f"has {x.shape[1]} channels, the weight expects {c}")
    if kh < 1 or kw < 1 or o < 1:
        raise ValueError(f"conv2d: the weight {tuple(w.shape)} needs at least one filter of "
                         "at least 1x1")
    if isinstance(padding, str):
        x, padding = _padded_as(padding, x, (kh, kw))
    (h, width), (ph, pw) = x.shape[2:], padding
    if h + 2 * ph < kh or width + 2 * pw < kw:
        raise ValueError(f"conv2d: the kernel {(kh, kw)} is larger than the padded input "
                         f"{(h + 2 * ph, width + 2 * pw)}")
    if bias is not None:
        bias = tensor_argument(bias, "conv2d", "bias")
        if tuple(bias.shape) != (o,):
            raise ValueError(f"conv2d: bias has shape {tuple(bias.shape)}, expected {(o,)}")
    needs = (x.requires_grad, w.requires_grad)  # which inputs the rule gives a gradient
    out = x._apply(CONV2D.bind(stride, padding, needs), w, *(() if bias is None else (bias,)))
    return out.reshape(tuple(out.shape[1:])) if unbatched else out


def same_padding(kernel: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """(before, after) along H and W that keeps a stride-1 output as large as its input:
    k - 1 in all, the odd one after (torch's choice)."""
    return tuple(((k - 1) // 2, k - 1 - (k - 1) // 2) for k in kernel)


def _padded_as(padding: str, x: Tensor, kernel: tuple[int, int],
               ) -> tuple[Tensor, tuple[int, int]]:
    """The input and the padding for conv2d of padding 'valid' or 'same': an even kernel's
    'same' pads the input itself (unequal sides), else conv2d pads."""
    if padding == "valid":
        return x, (0, 0)
    sides = same_padding(kernel)
    if all(before == after for before, after in sides):
        return x, (sides[0][0], sides[1][0])
    return functions.zero_pad(x, ((0, 0), (0, 0)) + sides), (0, 0)


def single(value: Any, name: str, minimum: int) -> int:
    """torch's "an int or a 1-tuple" argument of a 1-D layer (a kernel size, a stride, a
    padding) as an int >= ``minimum``; ``name`` says whose argument it is in the error.

    Example:
        >>> single(2, "conv1d: stride", 1), single((3,), "conv1d: padding", 0)
        (2, 3)
    """
    one = value if isinstance(value, (int, np.integer)) else tuple(value)[0] \
        if isinstance(value, (tuple, list)) and len(value) == 1 else None
    if one is None or isinstance(one, bool) or not isinstance(one, (int, np.integer)):
        raise TypeError(f"{name} must be an int or a tuple of one int, got {value!r}")
    if one < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(one)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation) over (N, C, L) or (C, L) input with filters
    (O, C, k) and a bias (O,), as torch.nn.functional.conv1d: ``stride`` and ``padding``
    are ints (or 1-tuples), or ``padding`` is 'valid' or 'same'. The output is
    (N, O, OL), OL = (L + 2 * padding - k) // stride + 1.

    Composed: it is ``conv2d`` on the input and the filters with a height of 1, so its
    gradients are conv2d's.

    Example:
        >>> x, w = Tensor(np.arange(5.0).reshape(1, 1, 5)), Tensor(np.ones((1, 1, 2)))
        >>> conv1d(x, w).tolist(), tuple(conv1d(x, w, padding='same').shape)
        ([[[1.0, 3.0, 5.0, 7.0]]], (1, 1, 5))
    """
    x, w = tensor_argument(input, "conv1d"), tensor_argument(weight, "conv1d", "weight")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
                           f"input of size: {list(x.shape)}")
    if w.ndim != 3:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional "
                           f"weight {list(w.shape)}, but got {x.ndim}-dimensional input of "
                           f"size {list(x.shape)} instead")
    if x.shape[-2] != w.shape[1]:
        batched = list(x.shape) if x.ndim == 3 else [1, *x.shape]
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{batched} to have {w.shape[1]} channels, but got "
                           f"{x.shape[-2]} channels instead")
    if single(dilation, "conv1d: dilation", 1) != 1:
        raise not_yet(f"conv1d with dilation={dilation!r}")
    if groups != 1:
        raise not_yet(f"conv1d with groups={groups!r}")
    if not isinstance(padding, str):
        padding = (0, single(padding, "conv1d: padding", 0))
    stride = (1, single(stride, "conv1d: stride", 1))
    return conv2d(x.unsqueeze(-2), w.unsqueeze(-2), bias, stride, padding).squeeze(-2)


def max_pool2d_options(op: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                       ceil_mode: bool, return_indices: bool,
                       ) -> tuple[tuple[int, int], tuple[int, int]]:
    """max_pool2d's kernel and stride as pairs (the stride is the kernel's if None or
    empty, as in torch), after refusing, by name, the options chaingrad lacks. ``op`` is
    ``max_pool2d``, or ``MaxPool2d`` when the layer is made.

    Example:
        >>> max_pool2d_options("max_pool2d", 2, None, 0, 1, False, False)
        ((2, 2), (2, 2))
    """
    for name, value, default in (("padding", padding, 0), ("dilation", dilation, 1)):
        if pair(value, f"{op}: {name}", 0) != (default, default):
            raise not_yet(f"{op} with {name}={value!r}")
    if ceil_mode:
        raise not_yet(f"{op} with ceil_mode=True")
    if return_indices:
        raise not_yet(f"{op} with return_indices=True")
    kernel = pair(kernel_size, f"{op}: kernel_size", 1)
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        return kernel, kernel
    return kernel, pair(stride, f"{op}: stride", 1)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """The largest entry of each window, over (N, C, H, W) or (C, H, W) input, as
    torch.nn.functional.max_pool2d (``stride`` defaults to ``kernel_size``); a window's
    gradient goes to its first largest entry, as torch's.

    The one entry of max pooling (``nn.MaxPool2d`` calls it): it checks the arguments,
    then makes the node of the ``max_pool2d`` primitive (``tensor_engine.functions``).

    Example:
        >>> max_pool2d(Tensor(np.arange(16.0).reshape(1, 1, 4, 4)), 2).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    x = tensor_argument(input, "max_pool2d")
    kernel, stride = max_pool2d_options("max_pool2d", kernel_size, stride, padding, dilation,
                                        ceil_mode, return_indices)
    unbatched = x.ndim == 3
    if unbatched:
        x = x.reshape((1,) + tuple(x.shape))
    if x.ndim != 4:
        raise ValueError(f"max_pool2d: needs an input (N, C, H, W) or (C, H, W), got shape "
                         f"{tuple(input.shape)}")
    if x.shape[2] < kernel[0] or x.shape[3] < kernel[1]:
        raise ValueError(f"max_pool2d: the kernel {kernel} is larger than the input "
                         f"{tuple(x.shape[2:])}")
    picks = x.requires_grad and is_grad_enabled()  # where each window's gradient goes
    data, picked = quietly(kernels.max_pool2d_on_arrays, x._value, kernel, stride, picks)
    overlap = stride[0] < kernel[0] or stride[1] < kernel[1]
    out = make_node(data, (x,), MAX_POOL2D.bind(picked, overlap))
    return out.reshape(tuple(out.shape[1:])) if unbatched else out


def window_sums(x: Tensor, rows: tuple[np.ndarray, np.ndarray],
                columns: tuple[np.ndarray, np.ndarray]) -> Tensor:
    """The sum of each window of the last two axes of ``x``: window (i, j) covers rows
    ``rows[0][i]`` to ``rows[0][i] + rows[1][i] - 1`` and the columns alike ((start, length)
    arrays, each window inside ``x``). Added up as torch's CPU pooling adds them, row by
    row, left to right, so that the sums are torch's to the last bit: one strided slice of
    ``x`` for each place in the window where the windows are alike and evenly spaced, else
    the entries picked by index, a window shorter than the longest adding exact zeros.
    Made of indexing, ``where`` and ``+``.

    Example:
        >>> x = Tensor(np.arange(9.0).reshape(3, 3))
        >>> rows, columns = (np.array([0, 1]), np.array([2, 2])), (np.array([0]), np.array([3]))
        >>> window_sums(x, rows, columns).tolist()
        [[15.0], [33.0]]
    """
    regular = all(_evenly_spaced(*axis) for axis in (rows, columns))
    (row_starts, row_lengths), (column_starts, column_lengths) = rows, columns
    total: Tensor | None = None
    for dh in range(int(row_lengths.max())):
        picked_rows = None if regular else x[..., np.minimum(row_starts + dh,
                                                             x.shape[-2] - 1), :]
        for dw in range(int(column_lengths.max())):
            if picked_rows is None:
                term = x[..., _strided(row_starts, dh), _strided(column_starts, dw)]
            else:
                term = picked_rows[..., np.minimum(column_starts + dw, x.shape[-1] - 1)]
                inside = (dh < row_lengths)[:, None] & (dw < column_lengths)[None, :]
                if not inside.all():
                    term = functions.where(inside, term, np.zeros((), dtype=x._value.dtype))
            total = term if total is None else total + term
    if total is None:
        raise ValueError("window_sums: needs windows of at least one entry")
    return total


def _evenly_spaced(starts: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether windows of these starts and lengths are alike and evenly spaced (then a
    strided slice picks one place of each)."""
    steps = np.diff(starts)
    return bool((lengths == lengths[0]).all() and (len(steps) == 0 or (
        steps[0] > 0 and (steps == steps[0]).all())))


def _strided(starts: np.ndarray, offset: int) -> slice:
    """The slice that picks place ``offset`` of evenly spaced windows at ``starts``."""
    step = int(starts[1] - starts[0]) if len(starts) > 1 else 1
    first = int(starts[0]) + offset
    return slice(first, first + step * (len(starts) - 1) + 1, step)


def _pooled_size(size: int, kernel: int, stride: int, padding: int,
                 ceil_mode: bool) -> int:
    """How many windows fit along an axis, as torch counts them: with ``ceil_mode`` a last,
    partial window, if it starts inside the input or its left padding."""
    span = size + 2 * padding - kernel
    count = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (count - 1) * stride >= size + padding:
        count -= 1
    return count


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window, over (N, C, H, W) or (C, H, W) input, as
    torch.nn.functional.avg_pool2d: ``stride`` defaults to ``kernel_size``; ``padding``
    zeros on each side (at most half the kernel) count in the mean if
    ``count_include_pad``; ``ceil_mode`` adds a last, partial window along an axis where
    one is left over (counting the part inside the padded input); ``divisor_override``
    divides every window's sum by that number instead.

    Made of the sums of ``window_sums`` (torch's order of additions) divided by each
    window's count, so its gradient is theirs: g / count to each entry of the window.

    Example:
        >>> x = Tensor(np.arange(16.0).reshape(1, 1, 4, 4))
        >>> avg_pool2d(x, 2).tolist()
        [[[[2.5, 4.5], [10.5, 12.5]]]]
        >>> avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False).tolist()
        [[[[2.5, 4.0], [8.5, 10.0]]]]
    """
    x = tensor_argument(input, "avg_pool2d")
    kernel = pair(kernel_size, "avg_pool2d: kernel_size", 0)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else pair(stride, "avg_pool2d: stride", 0)
    if 0 in stride:  # a kernel of 0 too, when it is the stride: torch's words for both
        raise RuntimeError("stride should not be zero")
    if 0 in kernel:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: "
                           f"{kernel[0]} kW: {kernel[1]}")
    padding = pair(padding, "avg_pool2d: padding", 0)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={max(padding)}, kernel_size={max(kernel)} and dilation=1")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.ndim not in (3, 4):
        raise ValueError(f"avg_pool2d: needs an input (N, C, H, W) or (C, H, W), got shape "
                         f"{tuple(x.shape)}")
    sizes = tuple(x.shape[-2:])
    counts = [_pooled_size(n, k, s, p, ceil_mode)
              for n, k, s, p in zip(sizes, kernel, stride, padding, strict=True)]
    if min(counts) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[-3:]))}). "
                           f"Calculated output size: ({x.shape[-3]}x{counts[0]}x{counts[1]}). "
                           "Output size is too small")
    inside, padded, widths = [], [], []  # per axis: window lengths in x and padded, pads
    for n, k, s, p, count in zip(sizes, kernel, stride, padding, counts, strict=True):
        start = np.arange(count) * s - p  # in the padded input; the zeros around x
        end = np.minimum(start + k, n + p)
        padded.append(end - start)
        inside.append(np.minimum(end, n) - np.maximum(start, 0))
        widths.append((p, max(0, (count - 1) * s + k - n - p)))
    if divisor_override is not None:
        divisor = np.full(counts, divisor_override)
    elif count_include_pad:
        divisor = padded[0][:, None] * padded[1][None, :]
    else:
        divisor = inside[0][:, None] * inside[1][None, :]
    if any(before or after for before, after in widths):  # zeros add nothing to a sum
        x = functions.zero_pad(x, [(0, 0)] * (x.ndim - 2) + widths)
    windows = [(np.arange(count) * s, np.full(count, k))
               for count, s, k in zip(counts, stride, kernel, strict=True)]
    return window_sums(x, *windows) / divisor.astype(x._value.dtype)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """The mean of each of (oh, ow) windows that tile (N, C, H, W) or (C, H, W) input, as
    torch.nn.functional.adaptive_avg_pool2d: window i along H covers rows
    floor(i * H / oh) to ceil((i + 1) * H / oh) - 1 (so windows may overlap by one), W
    alike; ``output_size`` is an int or an (oh, ow) pair, None keeping the input's size.

    A (1, 1) output is the mean over H and W (torch takes the same path); any other is the
    sums of ``window_sums`` divided by the window's height, then its width, as torch's.

    Example:
        >>> x = Tensor(np.arange(6.0).reshape(1, 2, 3))
        >>> adaptive_avg_pool2d(x, (1, 2)).tolist()
        [[[2.0, 3.0]]]
    """
    x = tensor_argument(input, "adaptive_avg_pool2d")
    if x.ndim < 3:
        raise ValueError("Input dimension should be at least 3")
    wanted = (output_size, output_size) if output_size is None or isinstance(
        output_size, (int, np.integer)) else tuple(output_size)
    if len(wanted) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if x.ndim != 4 and x.ndim != 3:
        raise ValueError(f"adaptive_avg_pool2d: needs an input (N, C, H, W) or (C, H, W), got "
                         f"shape {tuple(x.shape)}")
    sizes = tuple(x.shape[-2:])
    out = tuple(n if o is None else int(o) for n, o in zip(sizes, wanted, strict=True))
    if min(out) < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater "
                           f"than or equal to 0 but received {out}")
    if out == (1, 1):
        return x.mean((-2, -1), keepdim=True)
    if min(out) == 0:
        return constant(np.zeros(tuple(x.shape[:-2]) + out, dtype=x._value.dtype))
    windows = []
    for n, o in zip(sizes, out, strict=True):
        start = np.arange(o) * n // o
        end = -(-(np.arange(1, o + 1) * n) // o)
        windows.append((start, end - start))
    dtype = x._value.dtype
    heights = windows[0][1][:, None].astype(dtype)
    widths = windows[1][1][None, :].astype(dtype)
    return window_sums(x, *windows) / heights / widths


# ---- padding and resampling ----

PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002
        value: float | None = None) -> Tensor:
    """``input`` padded as torch.nn.functional.pad: ``pad`` holds (before, after) pairs for
    the last axis, then the one before it, and so on (``(1, 1, 2, 0)`` pads the last axis
    by 1 on each side and the one before by 2 at its start); a negative number crops.

    Modes: ``'constant'`` fills with ``value`` (0 if None), any number of axes;
    ``'reflect'`` mirrors the input without repeating its edge, ``'replicate'`` repeats
    the edge, ``'circular'`` wraps around: these pad the last 1, 2 or 3 axes of an input
    with one or two more (a batch and channels, as torch requires).

    Composed: a constant pad is the ``pad`` primitive (plus ``value`` on the border); the
    other modes pick each new entry from the input by indexing, so the gradient of an entry
    picked several times is the sum of its shares.

    Example:
        >>> x = Tensor([[1.0, 2.0, 3.0]])
        >>> pad(x, (2, 1), mode='reflect').tolist(), pad(x, (1, 1), value=9.0).tolist()
        ([[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]], [[9.0, 1.0, 2.0, 3.0, 9.0]])
        >>> pad(x[None], (1, 0, 1, 0), mode='replicate').tolist()
        [[[1.0, 1.0, 2.0, 3.0], [1.0, 1.0, 2.0, 3.0]]]
    """
    x = tensor_argument(input, "pad")
    widths = tuple(pad) if isinstance(pad, (tuple, list)) else None
    if widths is None or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                                 for n in widths):
        bad = next((n for n in widths if not isinstance(n, (int, np.integer))), pad) \
            if widths is not None else pad
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                        f"element of type {type(bad).__name__}")
    if len(widths) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(widths) // 2 > x.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(widths)} and input "
                           f"of dimension {x.ndim}")
    if mode not in PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    sides = [(int(widths[2 * i]), int(widths[2 * i + 1])) for i in range(len(widths) // 2)]
    if mode == "constant":
        return _constant_pad(x, sides, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if not len(sides) + 1 <= x.ndim <= len(sides) + 2:
        raise NotImplementedError(
            f"Padding size {len(widths)} is not supported for {x.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    for k, (before, after) in enumerate(sides):
        axis = x.ndim - 1 - k
        n = x.shape[axis]
        if mode == "reflect" and (before >= n or after >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding "
                               f"({before}, {after}) at dimension {axis} of input "
                               f"{list(x.shape)}")
        if mode == "circular" and (before > n or after > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        picks = np.arange(-before, n + after)
        if mode == "reflect":
            picks = np.abs(picks)
            picks = np.where(picks >= n, 2 * (n - 1) - picks, picks)
        elif mode == "replicate":
            picks = np.clip(picks, 0, n - 1)
        else:  # wrapped around what is left once a negative width has cropped
            start, kept = max(-before, 0), n - max(-before, 0) - max(-after, 0)
            picks = start + np.arange(-max(before, 0), kept + max(after, 0)) % kept
        x = x[(slice(None),) * axis + (picks,)]
    return x


def _constant_pad(x: Tensor, sides: list[tuple[int, int]], value: float) -> Tensor:
    """``pad``'s constant mode: negative widths crop first, then the ``pad`` primitive adds
    zeros, and ``value`` is added on the border (as a constant: no gradient goes to it)."""
    crop = tuple(slice(max(-before, 0), x.shape[x.ndim - 1 - k] - max(-after, 0))
                 for k, (before, after) in reversed(list(enumerate(sides))))
    if any(s.start or s.stop != n for s, n in zip(crop, x.shape[x.ndim - len(sides):],
                                                   strict=True)):
        x = x[(Ellipsis, *crop)]
    widths = [(0, 0)] * (x.ndim - len(sides)) + [(max(b, 0), max(a, 0))
                                                  for b, a in reversed(sides)]
    padded = functions.zero_pad(x, widths)
    if value == 0:
        return padded
    border = np.ones(tuple(x.shape), dtype=bool)
    border = ~np.pad(border, widths)
    return padded + border.astype(padded._value.dtype) * np.asarray(value).astype(
        padded._value.dtype)


INTERPOLATION_MODES = {"nearest": None, "nearest-exact": None, "linear": 3, "bilinear": 4,
                       "trilinear": 5, "area": None}
"""The modes of ``interpolate`` chaingrad has, with the input dimensions each needs (None:
any of 3, 4 and 5; 'area': 3 or 4)."""


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """``input`` (N, C, d1, ...) resampled to a new size along d1, ..., as
    torch.nn.functional.interpolate: ``size`` (an int or one per axis) or
    ``scale_factor`` (a number or one per axis: the size is floor(d * scale_factor)).

    Modes: ``'nearest'`` (the entry at floor(i * scale), torch's source index, which it
    computes in float32), ``'nearest-exact'`` (at floor((i + 0.5) * scale)), ``'linear'``
    (3-D input), ``'bilinear'`` (4-D), ``'trilinear'`` (5-D): each output a weighted sum of
    the two nearest entries along each axis, ``align_corners`` placing the input's corner
    entries on the output's corners; ``'area'`` (3-D or 4-D): ``adaptive_avg_pool2d``.
    The scale of each axis is 1 / scale_factor when one is given (and
    ``recompute_scale_factor`` is not True), else d / size, as torch's.

    Composed of indexing, ``*`` and ``+`` (one axis at a time, the last first, as torch's
    CPU kernel adds), so the gradient of an entry is the sum of its weighted shares.

    Example:
        >>> x = Tensor([[[1.0, 2.0]]])
        >>> interpolate(x, scale_factor=2).tolist()
        [[[1.0, 1.0, 2.0, 2.0]]]
        >>> interpolate(x, size=4, mode='linear').tolist()
        [[[1.0, 1.25, 1.75, 2.0]]]
        >>> interpolate(x, size=3, mode='linear', align_corners=True).tolist()
        [[[1.0, 1.5, 2.0]]]
    """
    x = tensor_argument(input, "interpolate")
    if mode in ("bicubic", "lanczos"):
        raise not_yet(f"interpolate with mode={mode!r}")
    if mode not in INTERPOLATION_MODES or not 3 <= x.ndim <= 5:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
            "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})")
    linear = INTERPOLATION_MODES[mode] is not None
    if align_corners is not None and not linear:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise not_yet("interpolate with antialias=True")
    if mode == "area" and x.ndim == 5:
        raise not_yet("interpolate of a 5D input with mode='area'")
    sizes, scales = _output_sizes(x, size, scale_factor, recompute_scale_factor)
    if linear and x.ndim != INTERPOLATION_MODES[mode]:
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs "
                                  f"{INTERPOLATION_MODES[mode]}D input")
    if mode == "area":
        if x.ndim == 3:
            return adaptive_avg_pool2d(x.unsqueeze(-2), (1, sizes[0])).squeeze(-2)
        return adaptive_avg_pool2d(x, sizes)
    if linear and x._value.dtype.kind != "f":
        raise NotImplementedError(f'"compute_indices_weights_linear" not implemented for '
                                  f"'{_dtype_name(x._value.dtype)}'")
    spatial = x.ndim - 2
    for k in reversed(range(spatial)):  # the last axis first, as torch's kernel
        axis, n_in, n_out = 2 + k, x.shape[2 + k], sizes[k]
        where = (slice(None),) * axis
        if not linear:
            x = x[(*where, _nearest_sources(n_in, n_out, scales[k], mode))]
            continue
        low, high, weight = _linear_sources(n_in, n_out, scales[k], bool(align_corners),
                                            x._value.dtype)
        shape = (n_out,) + (1,) * (spatial - 1 - k)
        x = x[(*where, low)] * (1 - weight).reshape(shape) + \
            x[(*where, high)] * weight.reshape(shape)
    return x


def _output_sizes(x: Tensor, size: Any, scale_factor: Any, recompute: bool | None,
                  ) -> tuple[list[int], list[float | None]]:
    """interpolate's output size along each axis after the first two, and the scale factor
    each axis's source index uses (None: the sizes' ratio), as torch works them out."""
    spatial = x.ndim - 2
    given = [int(n) for n in x.shape[2:]]
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    if size is not None:
        if recompute:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        sizes = list(size) if isinstance(size, (tuple, list)) else [size] * spatial
        if len(sizes) != spatial:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of {given} "
                             f"and output size of {size}. Please provide input tensor in "
                             "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")
        sizes = [int(n) for n in sizes]
        scales: list[float | None] = [None] * spatial
    else:
        factors = list(scale_factor) if isinstance(scale_factor, (tuple, list)) \
            else [scale_factor] * spatial
        if len(factors) != spatial:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of {given} "
                             f"and scale_factor of shape {scale_factor}. Please provide input "
                             "tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             "(s1, s2, ...,sK) format.")
        sizes = [math.floor(n * float(f)) for n, f in zip(given, factors, strict=True)]
        scales = [None] * spatial if recompute else [float(f) for f in factors]
    if min(sizes) <= 0 or min(given) <= 0:
        names = ("D", "H", "W")[3 - spatial:]
        shown = lambda ns: ", ".join(f"{a}: {n}" for a, n in zip(names, ns, strict=True))  # noqa: E731
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({shown(given)}) output ({shown(sizes)})")
    return sizes, scales


def _nearest_sources(n_in: int, n_out: int, scale_factor: float | None, mode: str,
                     ) -> np.ndarray:
    """The input index of each output of nearest interpolation along one axis, computed as
    torch's CPU kernel computes it, in float32."""
    f32 = np.float32
    scale = f32(1.0 / scale_factor) if scale_factor else f32(n_in) / f32(n_out)
    out = np.arange(n_out)
    if mode == "nearest":
        if n_out == n_in:
            return out
        if n_out == 2 * n_in:
            return out >> 1
        source = np.floor(out.astype(f32) * scale)
    else:
        source = np.floor((out.astype(f32) + f32(0.5)) * scale)
    return np.minimum(source.astype(np.int64), n_in - 1)


def _linear_sources(n_in: int, n_out: int, scale_factor: float | None, align_corners: bool,
                    dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For linear interpolation along one axis: each output's two input indices and the
    weight of the second, computed in ``dtype`` as torch's CPU kernel computes them."""
    real = dtype.type
    out = np.arange(n_out).astype(dtype)
    if align_corners:
        scale = real(n_in - 1) / real(n_out - 1) if n_out > 1 else real(0)
        source = scale * out
    else:
        scale = real(1.0 / scale_factor) if scale_factor else real(n_in) / real(n_out)
        source = np.maximum(scale * (out + real(0.5)) - real(0.5), real(0))
    low = np.minimum(np.floor(source).astype(np.int64), n_in - 1)
    weight = np.clip(source - low.astype(dtype), real(0), real(1)).astype(dtype)
    high = low + (low < n_in - 1)
    return low, high, weight


# ---- normalization and embedding: the one implementation each, which the layers call ----


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Each slice of the last ``len(normalized_shape)`` axes normalized to mean 0 and
    variance 1, then scaled by ``weight`` and shifted by ``bias`` (both of
    ``normalized_shape``), as torch.nn.functional.layer_norm::

        y = (x - mean) / sqrt(var + eps) * weight + bias

    with the mean and the (biased) variance over those axes. ``nn.LayerNorm`` calls it.
    One node of the ``layer_norm`` primitive (``tensor_engine/rules.py``), whose rule gives
    the gradients of x, the weight and the bias, as torch's ``native_layer_norm`` (a
    weight or bias left out is ones or zeros there). A bfloat16 or float16 input is
    normalized in float32 and rounded back, as torch's CPU kernel computes it.

    Example:
        >>> y = layer_norm(Tensor([[1.0, 2.0, 3.0]]), (3,))
        >>> [round(v, 4) for v in y.tolist()[0]]
        [-1.2247, 0.0, 1.2247]
    """
    x = tensor_argument(input, "layer_norm")
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        raise TypeError("layer_norm(): argument 'normalized_shape' must be a tuple of ints, "
                        f"not int (write ({normalized_shape},))")
    shape = tuple(int(n) for n in normalized_shape)
    if not shape or tuple(x.shape[x.ndim - len(shape):]) != shape or x.ndim < len(shape):
        raise ValueError(f"layer_norm: given normalized_shape={list(shape)}, expected input "
                         f"with shape [*, {', '.join(map(str, shape))}], but got input of "
                         f"size {list(x.shape)}")
    given = {}
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None:
            given[name] = tensor_argument(param, "layer_norm", name)
            if tuple(given[name].shape) != shape:
                raise ValueError(f"layer_norm: expected {name} to be of same shape as "
                                 f"normalized_shape, but got {name} of shape "
                                 f"{list(given[name].shape)} and normalized_shape = "
                                 f"{list(shape)}")
    kinds = {p._value.dtype for p in given.values()}
    if x.is_floating_point() and x._value.dtype.itemsize == 2 and len(kinds) <= 1 \
            and kinds <= {x._value.dtype, np.dtype(np.float32)}:
        # torch's CPU kernel for a bfloat16 or float16 input, with parameters of its dtype
        # or float32: computed in float32, rounded once
        weight, bias = (given[k].float() if k in given else None for k in ("weight", "bias"))
        return layer_norm(x.float(), shape, weight, bias, eps).to(x.dtype)
    x = floating(x)
    dtype = x._value.dtype
    for name, param in given.items():
        if param._value.dtype != dtype:
            raise RuntimeError(f"layer_norm: mixed dtype (CPU): expect parameter to have "
                               f"scalar type of {_dtype_name(dtype)}, got {name} of "
                               f"{_dtype_name(param._value.dtype)}")
    affine = [given[name] if name in given else constant(np.full(shape, fill, dtype=dtype))
              for name, fill in (("weight", 1), ("bias", 0))]
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    needs = (x.requires_grad, affine[0].requires_grad, affine[1].requires_grad)
    return x._apply(LAYER_NORM.bind(axes, float(eps), needs), *affine)


def batch_norm(input: Tensor, running_mean: Tensor | None,  # noqa: A002
               running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Each channel (axis 1) normalized over the batch and any axes after the channels,
    then scaled by ``weight`` and shifted by ``bias`` (one per channel), as
    torch.nn.functional.batch_norm::

        y = (x - mean) / sqrt(var + eps) * weight + bias

    In training, ``mean`` and ``var`` are the batch's (the biased variance), the gradient
    flowing through them, and the running statistics, if given, move toward the batch's in
    place (no gradient), with the unbiased variance of the n values per channel::

        running_mean = (1 - momentum) * running_mean + momentum * mean
        running_var = (1 - momentum) * running_var + momentum * var * n / (n - 1)

    Otherwise ``mean`` and ``var`` are the running statistics. ``nn.BatchNorm1d`` and
    ``nn.BatchNorm2d`` call it; it is made of the Tensor's ops.

    Example:
        >>> x = Tensor(np.array([[1.0, 10.0], [3.0, 30.0]]))
        >>> mean, var = Tensor(np.zeros(2)), Tensor(np.ones(2))
        >>> [[round(v, 3) for v in row] for row in batch_norm(x, mean, var, training=True).tolist()]
        [[-1.0, -1.0], [1.0, 1.0]]
        >>> mean.tolist(), var.tolist()
        ([0.2, 2.0], [1.1, 20.9])
    """
    x = tensor_argument(input, "batch_norm")
    if x.ndim < 2:
        raise ValueError(f"batch_norm: expected an input (N, C, ...) with a channel axis, got "
                         f"shape {tuple(x.shape)}")
    channels = x.shape[1]
    if training and x.numel() == channels:  # one value per channel: no variance
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {_size(tuple(x.shape))}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither "
                         "be None")
    stats = [_per_channel("batch_norm", name, given, channels) for name, given in
             (("running_mean", running_mean), ("running_var", running_var))]
    affine = [_per_channel("batch_norm", name, given, channels) for name, given in
              (("weight", weight), ("bias", bias))]
    along = (1, channels) + (1,) * (x.ndim - 2)  # a per-channel vector against x
    if training:
        axes = (0, *range(2, x.ndim))
        mean = x.mean(axes, keepdim=True)
        centred = x - mean
        var = (centred * centred).mean(axes, keepdim=True)
        if running_mean is not None:
            _update_running(running_mean, running_var, mean, var, x.numel() // channels,
                            momentum)
    elif running_mean is None:
        raise ValueError("batch_norm: running_mean and running_var must be given in "
                         "evaluation mode (training=False)")
    else:
        centred = x - stats[0].reshape(along)
        var = stats[1].reshape(along)
    y = centred / (var + eps).sqrt()
    if affine[0] is not None:
        y = y * affine[0].reshape(along)
    if affine[1] is not None:
        y = y + affine[1].reshape(along)
    return y


def _per_channel(op: str, name: str, given: Any, channels: int) -> Tensor | None:
    """A per-channel argument of ``op`` as a Tensor of shape (channels,), or None."""
    if given is None:
        return None
    t = tensor_argument(given, op, name)
    if tuple(t.shape) != (channels,):
        raise ValueError(f"{op}: {name} should contain {channels} elements (one per channel), "
                         f"not shape {tuple(t.shape)}")
    return t


def _update_running(running_mean: Tensor, running_var: Tensor, mean: Tensor, var: Tensor,
                    n: int, momentum: float) -> None:
    """Move the running statistics toward the batch's ``mean`` and biased ``var`` (of
    ``n`` values per channel), in place and outside the graph: ``batch_norm``'s formulas,
    each product rounded as torch rounds it."""
    mean, unbiased = mean.detach().reshape(-1), var.detach().reshape(-1) * (n / (n - 1))
    running_mean.mul_(1 - momentum).add_(mean * momentum)
    running_var.mul_(1 - momentum).add_(unbiased * momentum)



def embedding_options(op: str, max_norm: Any, scale_grad_by_freq: bool, sparse: bool) -> None:
    """Refuse, naming ``op``, the options of torch's embedding that chaingrad lacks."""
    for name, value, default in (("max_norm", max_norm, None),
                                 ("scale_grad_by_freq", scale_grad_by_freq, False),
                                 ("sparse", sparse, False)):
        if value != default:
            raise not_yet(f"{op} with {name}={value!r}")

def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Row i of ``weight`` for each index i of ``input`` (int64 or int32 indices, each in
    0 .. rows - 1), as torch.nn.functional.embedding: the output has the input's shape
    plus the rows' length. Where an index is ``padding_idx`` (negative counts from the
    end), the row is read but takes no gradient, as in torch. ``nn.Embedding`` calls it.

    Example:
        >>> w = Tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
        >>> out = embedding(np.array([[2, 0], [1, 0]]), w, padding_idx=0)
        >>> out.tolist()
        [[[4.0, 5.0], [0.0, 1.0]], [[2.0, 3.0], [0.0, 1.0]]]
        >>> out.sum().backward()
        >>> w.grad.tolist()
        [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
    """
    embedding_options("embedding", max_norm, scale_grad_by_freq, sparse)
    w = tensor_argument(weight, "embedding", "weight")
    if w.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (rows, length), got shape "
                         f"{tuple(w.shape)}")
    rows = w.shape[0]
    indices = _indices("embedding", input, rows)
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ValueError(f"embedding: padding_idx must be within num_embeddings "
                             f"(-{rows} .. {rows - 1}), got {padding_idx}")
        padding_idx %= rows
    picked = w[indices]
    padded = None if padding_idx is None else indices == padding_idx
    if padded is None or not padded.any():
        return picked
    # the padding rows' numbers, detached: no gradient reaches the padding row
    return functions.where(padded[..., None], picked.detach(), picked)


def _indices(op: str, input: Any, rows: int) -> np.ndarray:  # noqa: A002
    """``op``'s indices (a Tensor or an array of int64 or int32, as torch takes them), each
    checked to be a row of a table of ``rows``: numpy would wrap a negative one around."""
    array = input._value if isinstance(input, Tensor) else input
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if array.dtype not in (np.int64, np.int32):
        raise TypeError(f"{op}: expected indices of dtype int64 or int32 (Long, Int), got "
                        f"{_dtype_name(array.dtype)}")
    if array.size and (array.min() < 0 or array.max() >= rows):
        bad = array[(array < 0) | (array >= rows)].flat[0]
        raise IndexError(f"{op}: index {bad} is out of range for {rows} rows (index out of "
                         "range in self)")
    return array


# ---- losses ----


def reduction_of(size_average: bool | None, reduce: bool | None, reduction: str,
                 stacklevel: int = 3) -> str:
    """The reduction meant: ``reduction``, or what the old ``size_average``/``reduce``
    said (with torch's warning, ``stacklevel`` frames up from here: 3 from a loss
    module's ``__init__``, ``CALLER_OF_A_LOSS + 1`` from a loss function)."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else "mean" if size_average else "sum"
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", UserWarning, stacklevel=stacklevel)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


CALLER_OF_A_LOSS = 3
"""How many frames up from a loss function's body its caller is: past the loss and the hook
that gives it autocast's policy (``@autocast_state.casts``); a warning points there."""


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


@autocast_state.casts("mse_loss")
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """(input - target) ** 2, reduced; a target of another shape is broadcast with torch's
    warning, and ``weight`` (the input's shape) weighs each entry (its mean divides by the
    weights' sum).

    Example:
        >>> mse_loss(Tensor([1.0, 3.0]), Tensor([0.0, 1.0])).item()
        2.5
    """
    reduction = reduction_of(size_average, reduce, reduction, CALLER_OF_A_LOSS + 1)
    x, t = tensor_argument(input, "mse_loss"), tensor_argument(target, "mse_loss", "target")
    check_target_shape("mse_loss", tuple(x.shape), tuple(t.shape), CALLER_OF_A_LOSS)
    squares = (x - t) ** 2
    return _weighted_reduce("mse_loss", squares, weight, x, reduction)


@autocast_state.casts("l1_loss")
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """|input - target|, reduced; a target of another shape is broadcast with torch's
    warning, and ``weight`` (the input's shape) weighs each entry (its mean divides by the
    weights' sum), as torch.nn.functional.l1_loss. The gradient at input == target is 0.

    Example:
        >>> l1_loss(Tensor([1.0, 3.0]), Tensor([0.0, 1.0])).item()
        1.5
    """
    reduction = reduction_of(size_average, reduce, reduction, CALLER_OF_A_LOSS + 1)
    x, t = tensor_argument(input, "l1_loss"), tensor_argument(target, "l1_loss", "target")
    check_target_shape("l1_loss", tuple(x.shape), tuple(t.shape), CALLER_OF_A_LOSS)
    errors = (x - t).abs()
    return _weighted_reduce("l1_loss", errors, weight, x, reduction)


@autocast_state.casts("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 * d ** 2 / beta where |d| < beta, else |d| - 0.5 * beta, for d = input - target,
    reduced, as torch.nn.functional.smooth_l1_loss (``beta=0``: ``l1_loss``); its gradient
    is d / beta, then the sign of d. Composed as ``huber_loss`` with delta = beta, divided
    by beta.

    Example:
        >>> smooth_l1_loss(Tensor([0.5, 3.0]), Tensor([0.0, 0.0]), reduction='none').tolist()
        [0.125, 2.5]
    """
    reduction = reduction_of(size_average, reduce, reduction, CALLER_OF_A_LOSS + 1)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x = tensor_argument(input, "smooth_l1_loss")
    t = tensor_argument(target, "smooth_l1_loss", "target")
    check_target_shape("smooth_l1_loss", tuple(x.shape), tuple(t.shape), CALLER_OF_A_LOSS)
    if beta == 0:
        return _reduce((x - t).abs(), reduction)
    return _reduce(_huber(x - t, beta) / beta, reduction)


@autocast_state.casts("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """0.5 * d ** 2 where |d| < delta, else delta * (|d| - 0.5 * delta), for d = input -
    target, reduced, as torch.nn.functional.huber_loss: ``smooth_l1_loss`` times delta, its
    gradient d, then delta times the sign of d. ``weight`` (the input's shape) weighs each
    entry; its mean is over the entries, as torch's.

    Example:
        >>> huber_loss(Tensor([0.5, 3.0]), Tensor([0.0, 0.0]), delta=2.0).item()
        2.0625
    """
    reduction = reduction_of(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, t = tensor_argument(input, "huber_loss"), tensor_argument(target, "huber_loss", "target")
    check_target_shape("huber_loss", tuple(x.shape), tuple(t.shape), CALLER_OF_A_LOSS)
    losses = _huber(x - t, delta)
    if weight is not None:
        losses = losses * _loss_weight("huber_loss", weight, x)
    return _reduce(losses, reduction)


def _huber(d: Tensor, delta: float) -> Tensor:
    """0.5 * d ** 2 where |d| < delta, else delta * (|d| - 0.5 * delta), composed without a
    branch on d's numbers, which ``compile`` would keep as they were when it traced (a
    ``where`` on ``|d| < delta`` would): with m = min(|d|, delta),
    0.5 * m * m + delta * (|d| - m). Below delta that is torch's number exactly (the second
    term is 0); above, within a rounding of it. Its gradient is d, then delta times the
    sign of d, through ``clamp``'s and ``abs``'s rules."""
    z = d.abs()
    m = z.clamp(max=delta)
    return 0.5 * m * m + delta * (z - m)


def _weighted_reduce(op: str, losses: Tensor, weight: Any, x: Tensor,
                     reduction: str) -> Tensor:
    """An elementwise loss reduced, each entry weighed by ``weight`` if given: then its
    mean divides by the weights' sum, as torch's ``mse_loss`` and ``l1_loss`` do."""
    if weight is None:
        return _reduce(losses, reduction)
    w = _loss_weight(op, weight, x)
    weighted = losses * w
    return weighted.sum() / w.sum() if reduction == "mean" else _reduce(weighted, reduction)


def _loss_weight(op: str, weight: Any, x: Tensor) -> Tensor:
    """An elementwise loss's ``weight``: a Tensor of the input's shape, as torch requires."""
    w = tensor_argument(weight, op, "weight")
    if tuple(w.shape) != tuple(x.shape):
        raise ValueError("Weights and input must have the same size.")
    return w


def check_target_shape(op: str, input_shape: tuple[int, ...], target_shape: tuple[int, ...],
                       stacklevel: int) -> None:
    """torch's warning for an elementwise loss whose target has another shape than its
    input: the two broadcast, which is rarely what was meant (scores (N, 1) and targets
    (N,) make N * N terms); a ValueError naming ``op`` if they cannot broadcast. The
    warning points ``stacklevel`` frames up from the loss (``CALLER_OF_A_LOSS``: at the
    caller of a loss function).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     check_target_shape("mse_loss", (3, 1), (3,), stacklevel=2)
        >>> str(seen[0].message)[:55]
        'Using a target size (torch.Size([3])) that is different'
    """
    if target_shape == input_shape:
        return
    warnings.warn(f"Using a target size ({_size(target_shape)}) that is different to the input "
                  f"size ({_size(input_shape)}). This will likely lead to incorrect results due "
                  "to broadcasting. Please ensure they have the same size.", UserWarning,
                  stacklevel=stacklevel + 1)
    try:
        np.broadcast_shapes(input_shape, target_shape)
    except ValueError:
        raise ValueError(f"{op}: the target's shape {target_shape} and the input's "
                         f"{input_shape} do not broadcast") from None


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size([{', '.join(str(n) for n in shape)}])"


def _class_targets(where: str, target: Any, x: Tensor) -> np.ndarray:
    """Class indices as an int64 array of the input's shape without its class axis,
    refused (torch's messages) if not integers or not of that shape."""
    if isinstance(target, Tensor):
        array = np.asarray(target._value)
    elif isinstance(target, (np.ndarray, np.generic)):
        array = np.asarray(target)
    else:
        raise TypeError(f"{where}(): argument 'target' must be Tensor, not "
                        f"{type(target).__name__}")
    if array.dtype.kind not in "iu":  # bool is refused, as torch refuses it
        raise TypeError(f"{where}: expected target dtype to be Long or Byte, but got "
                        f"{_dtype_name(array.dtype)}")
    shape = x._value.shape
    expected = shape[:1] + shape[2:] if len(shape) > 1 else ()
    if len(shape) > 1 and array.ndim > 0 and array.shape[0] != shape[0]:
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target "
                         f"batch_size ({array.shape[0]}).")
    if array.shape != expected:
        raise ValueError(f"{where}: expected a target of shape {expected} for an input of "
                         f"shape {tuple(x.shape)}, got {array.shape}")
    return np.asarray(array, dtype=np.int64)  # the caller's array, if it is one: compile
    # then reads the targets from each call's arguments


def _dtype_name(dtype: np.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bool": "Bool"}.get(
        dtype.name, dtype.name)


def _at_classes(ndim: int, classes: np.ndarray) -> tuple:
    """The index that picks, from an input with the class axis second (or only), the
    entry of each class in ``classes``."""
    if ndim == 1:
        return (int(classes),)
    if ndim == 2:  # a batch of rows: row i, column classes[i]
        return (np.arange(len(classes)), classes)
    grid = np.indices(classes.shape, sparse=True)
    return (grid[0], classes, *grid[1:])


@autocast_state.casts("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """-weight[t] * input[t], the log-probability of each target class negated: input
    (N, C), (C,) or (N, C, d1, ...) with the classes on axis 1, targets of its shape
    without that axis; entries whose target is ``ignore_index`` count for nothing, and the
    mean divides by the sum of the targets' weights, as torch's.

    Example:
        >>> round(nll_loss(Tensor([[-0.5, -1.0], [-2.0, -0.1]]), np.array([0, 1])).item(), 4)
        0.3
    """
    reduction = reduction_of(size_average, reduce, reduction, CALLER_OF_A_LOSS + 1)
    x = tensor_argument(input, "nll_loss")
    if x.ndim == 0:
        raise ValueError("nll_loss: the input needs a class axis, got a 0-d tensor")
    return _nll(x, _class_targets("nll_loss", target, x), weight, ignore_index, reduction)


def _nll(x: Tensor, t: np.ndarray, weight: Any, ignore_index: int, reduction: str) -> Tensor:
    """``nll_loss`` of a checked input ``x`` and its checked class indices ``t``: a mean or
    a sum is one ``nll_loss`` node (``tensor_engine.rules.NLL_LOSS``), as torch's."""
    classes = x.shape[1] if x.ndim > 1 else x.shape[0]
    low, high = (int(t.min()), int(t.max())) if t.size else (0, -1)
    if weight is None and reduction != "none" and t.size and low >= 0 and high < classes \
            and not low <= ignore_index <= high:  # every target counts, once: the plain mean
        divisor = t.size if reduction == "mean" else 1
        return x._apply(NLL_LOSS.bind(_at_classes(x.ndim, t), 1.0, divisor))
    counted = t != ignore_index
    outside = counted & ((t < 0) | (t >= classes))
    if outside.any():
        raise IndexError(f"Target {t[outside].flat[0]} is out of bounds.")
    safe = np.where(counted, t, 0)
    w = counted.astype(x.dtype)
    if weight is not None:
        w = _class_weights("nll_loss", weight, classes)._value[safe] * w
    at = _at_classes(x.ndim, safe)
    if reduction == "none":
        return -(x[at] * w)
    total = w.sum() if reduction == "mean" else 1
    if total == 0:
        raise ValueError("nll_loss: every target is ignore_index or has weight 0, so the "
                         "mean is 0 / 0 (torch returns nan); use reduction='sum'")
    return x._apply(NLL_LOSS.bind(at, w, total))


def _class_weights(where: str, weight: Any, classes: int) -> Any:
    w = tensor_argument(weight, where, "weight")
    if tuple(w.shape) != (classes,):
        raise ValueError(f"{where}: weight has shape {tuple(w.shape)}, expected one weight "
                         f"per class ({classes},)")
    if w.requires_grad and is_grad_enabled():  # torch's nll_loss takes no gradient for it
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have "
                           "requires_grad True.")
    return w


@autocast_state.casts("cross_entropy")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, class axis), target)``: class indices as targets
    (integers), or class probabilities (floats, the input's shape); ``label_smoothing``
    mixes each target with the uniform distribution, as torch's.

    Example:
        >>> x = Tensor([[2.0, 0.5, -1.0]])
        >>> round(cross_entropy(x, np.array([0]), label_smoothing=0.1).item(), 4)
        0.3913
    """
    reduction = reduction_of(size_average, reduce, reduction, CALLER_OF_A_LOSS + 1)
    x = tensor_argument(input, "cross_entropy")
    if x.ndim == 0:
        raise ValueError("cross_entropy: the input needs a class axis, got a 0-d tensor")
    if isinstance(label_smoothing, bool) or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0. Got: "
                         f"{label_smoothing}")
    axis = 1 if x.ndim > 1 else 0
    classes = x.shape[axis]
    logp = x.log_softmax(axis)
    if _floating(target):
        return _soft_cross_entropy(logp, target, weight, ignore_index, reduction,
                                   label_smoothing, axis)
    t = _class_targets("cross_entropy", target, x)
    nll = _nll(logp, t, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    counted = (t != ignore_index).astype(x.dtype)
    if weight is None:
        smooth = -logp.sum(axis) * counted
    else:
        w = _class_weights("cross_entropy", weight, classes)
        smooth = -(logp * w.reshape((classes,) + (1,) * (x.ndim - 1 - axis))).sum(axis) \
            * counted
    if reduction == "none":
        spread = smooth
    elif reduction == "sum":
        spread = smooth.sum()
    else:
        safe = np.where(t != ignore_index, t, 0)
        total = counted.sum() if weight is None else (w[safe] * counted).sum()
        spread = smooth.sum() / total
    return nll * (1 - label_smoothing) + spread * (label_smoothing / classes)


def _floating(target: Any) -> bool:
    dtype = target._value.dtype if isinstance(target, Tensor) else getattr(target, "dtype",
                                                                             None)
    return dtype is not None and np.dtype(dtype).kind == "f"


def _soft_cross_entropy(logp: Tensor, target: Any, weight: Any, ignore_index: int,
                        reduction: str, label_smoothing: float, axis: int) -> Tensor:
    """cross_entropy against class probabilities: -sum_c weight_c * p_c * log_softmax_c."""
    if ignore_index != -100:
        raise ValueError("cross_entropy: ignore_index is not supported for floating point "
                         "target")
    p = tensor_argument(target, "cross_entropy", "target")
    if tuple(p.shape) != tuple(logp.shape):
        raise ValueError(f"cross_entropy: a target of class probabilities must have the "
                         f"input's shape {tuple(logp.shape)}, got {tuple(p.shape)}")
    classes = logp.shape[axis]
    if label_smoothing:
        p = p * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * p
    if weight is not None:
        w = _class_weights("cross_entropy", weight, classes)
        terms = terms * w.reshape((classes,) + (1,) * (logp.ndim - 1 - axis))
    losses = -terms.sum(axis)
    if reduction == "mean":  # over the examples (and positions), whatever the weights
        return losses.sum() / (int(np.prod(logp.shape)) // classes)
    return _reduce(losses, reduction)


@autocast_state.casts("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor,  # noqa: A002
                         weight: Tensor | None = None, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """-weight * (t * log(x) + (1 - t) * log(1 - x)) for probabilities x in [0, 1], reduced,
    as torch.nn.functional.binary_cross_entropy: each log at least -100 (x = 0 or 1 gives a
    number), the gradient weight * (x - t) / (x * (1 - x)) with the denominator at least
    1e-12, as torch's (``tensor_engine.rules.BINARY_CROSS_ENTROPY``).

    Example:
        >>> round(binary_cross_entropy(Tensor([0.8]), Tensor([1.0])).item(), 4)
        0.2231
    """
    reduction = reduction_of(size_average, reduce, reduction, CALLER_OF_A_LOSS + 1)
    x = tensor_argument(input, "binary_cross_entropy")
    t = tensor_argument(target, "binary_cross_entropy", "target")
    if tuple(t.shape) != tuple(x.shape):
        raise ValueError(f"Using a target size ({_size(tuple(t.shape))}) that is different to "
                         f"the input size ({_size(tuple(x.shape))}) is deprecated. Please ensure "
                         "they have the same size.")
    bad_x, bad_t = (~((v >= 0) & (v <= 1)) for v in (x._value, t._value))  # nan too
    if bad_x.any() or bad_t.any():  # named at the first entry wrong, input first, as torch
        first = int(np.argmax((bad_x | bad_t).reshape(-1)))
        name = "input" if bad_x.reshape(-1)[first] else "target"
        raise RuntimeError(f"binary_cross_entropy: all elements of {name} should be between 0 "
                           "and 1")
    losses = x._apply(BINARY_CROSS_ENTROPY, t)
    if weight is not None:
        losses = losses * tensor_argument(weight, "binary_cross_entropy", "weight")
    return _reduce(losses, reduction)


@autocast_state.casts("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """-[pos_weight * t * log(sigmoid(x)) + (1 - t) * log(1 - sigmoid(x))], times
    ``weight``, computed stably as ``(1 - t) * x + (1 + (pos_weight - 1) * t) *
    softplus(-x)``; ``pos_weight`` weighs the positives of each class (the last axis).

    Example:
        >>> round(binary_cross_entropy_with_logits(Tensor([0.0]), Tensor([1.0])).item(), 4)
        0.6931
    """
    reduction = reduction_of(size_average, reduce, reduction, CALLER_OF_A_LOSS + 1)
    x = tensor_argument(input, "binary_cross_entropy_with_logits")
    t = tensor_argument(target, "binary_cross_entropy_with_logits", "target")
    if tuple(t.shape) != tuple(x.shape):
        raise ValueError(f"Target size ({_size(tuple(t.shape))}) must be the same as input "
                         f"size ({_size(tuple(x.shape))})")
    if pos_weight is None:
        losses = (1 - t) * x + _softplus(-x)
    else:
        pw = tensor_argument(pos_weight, "binary_cross_entropy_with_logits", "pos_weight")
        losses = (1 - t) * x + (t * (pw - 1) + 1) * _softplus(-x)
    if weight is not None:
        losses = losses * tensor_argument(weight, "binary_cross_entropy_with_logits", "weight")
    return _reduce(losses, reduction)


def _softplus(x: Tensor) -> Tensor:
    """log(1 + exp(x)), stable for any x: ``-log_softmax([0, x])[0]``, whose gradient,
    sigmoid(x), is exact everywhere (binary_cross_entropy_with_logits' part)."""
    return -functions.stack([np.zeros_like(x._value), x], -1).log_softmax(-1)[..., 0]


if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        raise torch_names.missing("chaingrad.nn.functional", name, torch_names.FUNCTIONAL)
