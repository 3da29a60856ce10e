"""The activation layers, as torch.nn.modules.activation: each applies its function of
``chaingrad.nn.functional`` elementwise (``Softmax`` and ``LogSoftmax`` along ``dim``), and
prints as torch's; and ``MultiheadAttention``, which torch keeps in this file too.

Example:
    >>> import chaingrad
    >>> LeakyReLU(0.1)(chaingrad.tensor([-1.0, 2.0]))
    tensor([-0.1000,  2.0000])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.functions import cat
from ...tensor_engine.tensor import Tensor, constant
from .. import functional as F
from .. import init
from .linear import NonDynamicallyQuantizableLinear
from .module import Module
from .utils import new_parameter

__all__ = ["GELU", "LeakyReLU", "LogSoftmax", "MultiheadAttention", "ReLU", "Sigmoid",
           "Softmax", "Softplus", "Tanh"]


class ReLU(Module):
    """max(0, x), elementwise (``inplace=True`` computes out of place)."""

    def __init__(self, inplace: bool = False):
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(tensor_argument(input, "ReLU"))

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), elementwise (arguments are accepted and ignored, as torch's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanh(tensor_argument(input, "Tanh"))


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise (arguments are accepted and ignored, as torch's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.sigmoid(tensor_argument(input, "Sigmoid"))


class Softmax(Module):
    """exp(x) / sum(exp(x)) along ``dim`` (torch's implicit choice, with its warning, for
    None)."""

    def __init__(self, dim: int | None = None):
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(tensor_argument(input, "Softmax"), self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - log(sum(exp(x))) along ``dim``, computed stably."""

    def __init__(self, dim: int | None = None):
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(tensor_argument(input, "LogSoftmax"), self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x), Phi the standard normal's distribution function (``F.gelu``; torch's
    tanh form with ``approximate='tanh'``).

    Example:
        >>> GELU()(Tensor([0.0, 1.0]))
        tensor([0.0000, 0.8413])
    """

    def __init__(self, approximate: str = "none"):
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"GELU: approximate argument must be either none or tanh, got "
                               f"{approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(tensor_argument(input, "GELU"), self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x (``F.leaky_relu``; ``inplace=True`` computes
    out of place)."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.leaky_relu(tensor_argument(input, "LeakyReLU"), self.negative_slope)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold (``F.softplus``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(tensor_argument(input, "Softplus"), self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads, as torch.nn.MultiheadAttention::

        q, k, v = query @ W_q.T + b_q, key @ W_k.T + b_k, value @ W_v.T + b_v
        head_i  = softmax(q_i @ k_i.T / sqrt(head_dim) + mask) @ v_i    (each head's slice)
        output  = cat(head_1, ..., head_h) @ out_proj.weight.T + out_proj.bias

    Args:
        embed_dim: The queries' size E (and the output's); split into ``num_heads`` heads
            of ``embed_dim // num_heads``.
        num_heads: The number of heads (it must divide ``embed_dim``).
        dropout: The probability of dropping an attention weight, in training.
        bias: Whether the projections in and out add biases.
        add_bias_kv: Whether to append a learned key and value (``bias_k``, ``bias_v``) to
            each sequence of keys and values.
        add_zero_attn: Whether to append a key and a value of zeros.
        kdim, vdim: The keys' and values' sizes (``embed_dim`` if None); when they differ
            from it, the projections are ``q_proj_weight``, ``k_proj_weight`` and
            ``v_proj_weight`` instead of the one ``in_proj_weight``.
        batch_first: Inputs and output as (batch, sequence, feature) rather than torch's
            default (sequence, batch, feature).
        device, dtype: As for ``Linear``.

    Attributes:
        in_proj_weight: (3E, E), W_q, W_k and W_v stacked, xavier-uniform (or None).
        in_proj_bias: (3E,), zeros (or None).
        out_proj: A ``Linear(E, E)`` (torch's NonDynamicallyQuantizableLinear) whose bias
            starts at 0.
        bias_k, bias_v: (1, 1, E), xavier-normal, with ``add_bias_kv`` (else None).

    Weights are drawn in torch's order (``out_proj`` when made, then the projections in,
    then ``bias_k`` and ``bias_v``), so after the same seed they are torch's.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights)``: see
    ``forward``.

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0)
        >>> attention = MultiheadAttention(8, 2, batch_first=True)
        >>> x = chaingrad.randn(3, 5, 8)
        >>> out, weights = attention(x, x, x)
        >>> tuple(out.shape), tuple(weights.shape)
        ((3, 5, 8), (3, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None):
        if isinstance(embed_dim, bool) or not isinstance(embed_dim, (int, np.integer)) \
                or isinstance(num_heads, bool) or not isinstance(num_heads, (int, np.integer)) \
                or embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim must be divisible by num_heads, got embed_dim="
                             f"{embed_dim} and num_heads={num_heads}")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.head_dim = embed_dim // num_heads
        where = "MultiheadAttention"
        if self._qkv_same_embed_dim:
            self.in_proj_weight = new_parameter(where, (3 * embed_dim, embed_dim), device, dtype)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = new_parameter(where, (embed_dim, embed_dim), device, dtype)
            self.k_proj_weight = new_parameter(where, (embed_dim, self.kdim), device, dtype)
            self.v_proj_weight = new_parameter(where, (embed_dim, self.vdim), device, dtype)
            self.register_parameter("in_proj_weight", None)
        self.register_parameter("in_proj_bias", new_parameter(where, (3 * embed_dim,), device,
                                                              dtype) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = new_parameter(where, (1, 1, embed_dim), device, dtype)
            self.bias_v = new_parameter(where, (1, 1, embed_dim), device, dtype)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's initialisation, in its order: xavier-uniform projections in, zero
        biases, xavier-normal ``bias_k`` and ``bias_v``."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """The attention of ``query`` (L, N, E) over ``key`` (S, N, kdim) and ``value``
        (S, N, vdim), batch first with ``batch_first``, or one sequence (L, E) unbatched.

        Args:
            key_padding_mask: (N, S): True (or -inf in a float mask) where a key is padding
                and must be ignored; a float mask is added to the weights.
            need_weights: Whether to return the attention weights too.
            attn_mask: (L, S) or (N * num_heads, L, S): True where a query may NOT attend to
                a key (the opposite of ``F.scaled_dot_product_attention``'s bool mask), or
                floats added to the weights before the softmax.
            average_attn_weights: Return the weights averaged over the heads (N, L, S)
                rather than each head's (N, num_heads, L, S).
            is_causal: A hint that ``attn_mask`` is the causal mask (torch asks for the mask
                too, and so does chaingrad).

        Returns:
            ``(output, weights)``: the output (L, N, E) (or batch first, or (L, E)), and the
            weights, or None without ``need_weights``.
        """
        q = tensor_argument(query, "MultiheadAttention", "query")
        k = tensor_argument(key, "MultiheadAttention", "key")
        v = tensor_argument(value, "MultiheadAttention", "value")
        batched = self._check_shapes(q, k, v, key_padding_mask, attn_mask)
        if self.batch_first and batched:
            q, k, v = (x.transpose(0, 1) for x in (q, k, v))
        if not batched:
            q, k, v = q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = tensor_argument(key_padding_mask, "MultiheadAttention",
                                                   "key_padding_mask").unsqueeze(0)
        out, weights = self._attend(q, k, v, key_padding_mask, need_weights, attn_mask,
                                    average_attn_weights, is_causal, query is key is value)
        if not batched:
            return out.squeeze(1), None if weights is None else weights.squeeze(0)
        return (out.transpose(0, 1) if self.batch_first else out), weights

    def _check_shapes(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Any,
                      attn_mask: Any) -> bool:
        """Whether the inputs are batched (3-d), checked as torch's ``_mha_shape_check``."""
        if q.ndim not in (2, 3):
            raise RuntimeError(f"query should be unbatched 2D or batched 3D tensor but "
                               f"received {q.ndim}-D query tensor")
        if k.ndim != q.ndim or v.ndim != q.ndim:
            raise RuntimeError(f"For {'batched (3-D)' if q.ndim == 3 else 'unbatched (2-D)'} "
                               f"`query`, expected `key` and `value` to be {q.ndim}-D but "
                               f"found {k.ndim}-D and {v.ndim}-D tensors respectively")
        if q.shape[-1] != self.embed_dim:
            raise RuntimeError(f"was expecting embedding dimension of {self.embed_dim}, but "
                               f"got {q.shape[-1]}")
        if k.shape[-1] != self.kdim or v.shape[-1] != self.vdim:
            raise RuntimeError(f"MultiheadAttention: expected keys of size {self.kdim} and "
                               f"values of size {self.vdim}, got {k.shape[-1]} and "
                               f"{v.shape[-1]}")
        if tuple(k.shape[:-1]) != tuple(v.shape[:-1]):
            raise RuntimeError(f"key shape {tuple(k.shape)} does not match value shape "
                               f"{tuple(v.shape)}")
        return q.ndim == 3

    def _attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Any,
                need_weights: bool, attn_mask: Any, average_attn_weights: bool,
                is_causal: bool, self_attention: bool) -> tuple[Tensor, Tensor | None]:
        """torch's ``F.multi_head_attention_forward`` on (L, N, E) inputs."""
        length, batch, e = q.shape
        heads, head_dim = self.num_heads, self.head_dim
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask` "
                               "to create this mask.")
        if attn_mask is not None and key_padding_mask is not None \
                and _is_bool(key_padding_mask) != _is_bool(attn_mask):
            warnings.warn("Support for mismatched key_padding_mask and attn_mask is "
                          "deprecated. Use same type for both instead.", UserWarning,
                          stacklevel=4)
        q, k, v = self._project_in(q, k, v, self_attention)
        padding = _float_mask(key_padding_mask, "key_padding_mask", q)
        if padding is not None and tuple(padding.shape) != (batch, k.shape[0]):
            raise RuntimeError(f"expecting key_padding_mask shape of {(batch, k.shape[0])}, "
                               f"but got {tuple(padding.shape)}")
        # the hint taken, as torch's: the causal mask made by scaled_dot_product_attention
        causal = is_causal and padding is None and not need_weights
        bias = None if causal else _float_mask(attn_mask, "attn_mask", q)
        if bias is not None:
            bias = self._checked_attn_mask(bias, length, k.shape[0], batch)
        if self.bias_k is not None and self.bias_v is not None:
            k = cat([k, self.bias_k.expand(1, batch, e)])
            v = cat([v, self.bias_v.expand(1, batch, e)])
            bias = None if bias is None else F.pad(bias, (0, 1))
            padding = None if padding is None else F.pad(padding, (0, 1))
        q = q.reshape(length, batch * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], batch * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], batch * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            zeros = np.zeros((batch * heads, 1, head_dim), dtype=q._value.dtype)
            k, v = cat([k, constant(zeros)], 1), cat([v, constant(zeros)], 1)
            bias = None if bias is None else F.pad(bias, (0, 1))
            padding = None if padding is None else F.pad(padding, (0, 1))
        keys = k.shape[1]
        if padding is not None:
            padding = padding.reshape(batch, 1, 1, keys).expand(batch, heads, 1, keys)
            padding = padding.reshape(batch * heads, 1, keys)
            bias = padding if bias is None else bias + padding
        p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
            weights = (scores if bias is None else scores + bias).softmax(-1)
            if p > 0:
                weights = F.dropout(weights, p)
            out = (weights @ v).transpose(0, 1).reshape(length * batch, e)
            out = F.linear(out, self.out_proj.weight, self.out_proj.bias)
            weights = weights.reshape(batch, heads, length, keys)
            if average_attn_weights:
                weights = weights.mean(1)
            return out.reshape(length, batch, e), weights
        if bias is not None:
            bias = bias.reshape(batch, heads, -1, keys) if bias.shape[0] != 1 \
                else bias.unsqueeze(0)
        q = q.reshape(batch, heads, length, head_dim)
        k, v = k.reshape(batch, heads, keys, head_dim), v.reshape(batch, heads, keys, head_dim)
        out = F.scaled_dot_product_attention(q, k, v, bias, p, is_causal=causal)
        out = out.permute(2, 0, 1, 3).reshape(batch * length, e)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias)
        return out.reshape(length, batch, e), None

    def _project_in(self, q: Tensor, k: Tensor, v: Tensor,
                    self_attention: bool) -> tuple[Tensor, Tensor, Tensor]:
        """The queries, keys and values through their projections: in self-attention, one
        product with ``in_proj_weight`` split in three, as torch's."""
        e = self.embed_dim
        b = self.in_proj_bias
        biases = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if not self._qkv_same_embed_dim:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
            return tuple(F.linear(x, w, bias) for x, w, bias in zip((q, k, v), weights, biases))
        w = self.in_proj_weight
        if self_attention:
            return F.linear(q, w, b).chunk(3, -1)
        return (F.linear(q, w[:e], biases[0]), F.linear(k, w[e:2 * e], biases[1]),
                F.linear(v, w[2 * e:], biases[2]))

    def _checked_attn_mask(self, bias: Tensor, length: int, keys: int, batch: int) -> Tensor:
        """A 2-d mask as (1, L, S); a 3-d one must be (N * num_heads, L, S)."""
        if bias.ndim == 2:
            if tuple(bias.shape) != (length, keys):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(bias.shape)}, but "
                                   f"should be {(length, keys)}.")
            return bias.unsqueeze(0)
        if bias.ndim == 3:
            if tuple(bias.shape) != (batch * self.num_heads, length, keys):
                raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(bias.shape)}, but "
                                   f"should be {(batch * self.num_heads, length, keys)}.")
            return bias
        raise RuntimeError(f"attn_mask's dimension {bias.ndim} is not supported")

    def extra_repr(self) -> str:
        return ""


def _float_mask(mask: Any, name: str, like: Tensor) -> Tensor | None:
    """A mask as the float bias torch's ``_canonical_mask`` makes of it: a bool mask's True
    as -inf (and False as 0), a float mask as given."""
    if mask is None:
        return None
    given = tensor_argument(mask, "MultiheadAttention", name)
    if given._value.dtype == np.bool_:
        bias = np.where(given._value, -np.inf, 0.0).astype(like._value.dtype)
        return constant(bias)
    if not given.is_floating_point():
        raise RuntimeError(f"only bool and floating types of {name} are supported")
    return given


def _is_bool(mask: Any) -> bool:
    """Whether a mask (a Tensor or an array) holds booleans."""
    values = mask._value if isinstance(mask, Tensor) else np.asarray(mask)
    return values.dtype == np.bool_
