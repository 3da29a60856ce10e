"""The Transformer, as torch.nn.modules.transformer: ``TransformerEncoderLayer`` and
``TransformerDecoderLayer`` (attention, then a feed-forward layer, each with a residual
connection and a ``LayerNorm``), ``TransformerEncoder`` and ``TransformerDecoder`` (stacks
of copies of one layer), and ``Transformer`` (an encoder and a decoder).

Each is composed of ``MultiheadAttention``, ``Linear``, ``Dropout`` and ``LayerNorm``, so
its gradient comes from theirs; the weights are drawn in torch's order, so after the same
seed they are torch's, and so are the outputs (in training with ``dropout=0``, or in
evaluation).

Example:
    >>> import chaingrad
    >>> _ = chaingrad.manual_seed(0)
    >>> layer = TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
    ...                                 batch_first=True)
    >>> encoder = TransformerEncoder(layer, num_layers=2)
    >>> mask = Transformer.generate_square_subsequent_mask(5)
    >>> encoder(chaingrad.randn(3, 5, 8), mask=mask).shape
    chaingrad.Size([3, 5, 8])
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from ...tensor_engine.devices import check_device
from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.tensor import Tensor, constant
from .. import functional as F
from .. import init
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]

Activation = str | Callable[[Tensor], Tensor]


def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """The causal mask of a sequence of ``sz``: a float (sz, sz) tensor, 0 on and below the
    diagonal and -inf above it (so position i attends to 0 .. i), as torch's; of ``dtype``
    (float32 by default), on the CPU."""
    check_device(device, f"generate_square_subsequent_mask(device={device!r})")
    mask = np.triu(np.full((sz, sz), -np.inf), 1)
    return constant(mask.astype(np.float32 if dtype is None else np.dtype(dtype)))


def activation_function(activation: Activation) -> Callable[[Tensor], Tensor]:
    """A layer's ``activation``: ``'relu'`` and ``'gelu'`` by name (``F.relu``,
    ``F.gelu``), or a callable (a function or a module) as given."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    if not callable(activation):
        raise TypeError(f"activation should be relu/gelu or a callable, not "
                        f"{type(activation).__name__}")
    return activation


class TransformerEncoderLayer(Module):
    """Self-attention, then a feed-forward layer, as torch.nn.TransformerEncoderLayer::

        x = norm1(x + dropout1(self_attn(x, x, x)))               (norm_first=False)
        x = norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))

    or, with ``norm_first=True``, ``x = x + dropout1(self_attn(norm1(x), ...))`` and
    ``x = x + dropout2(linear2(...(norm2(x))))``.

    Args:
        d_model: The size of each position's vector.
        nhead: The attention's heads.
        dim_feedforward: The feed-forward layer's width.
        dropout: The probability of each dropout (the attention's weights included).
        activation: ``'relu'``, ``'gelu'`` or a callable (a function or a module).
        layer_norm_eps: The ``LayerNorm``s' eps.
        batch_first: Inputs as (batch, sequence, feature), not (sequence, batch, feature).
        norm_first: Normalize before attention and feed-forward rather than after.
        bias: Whether the linear layers and the norms learn biases.
        device, dtype: As for ``Linear``.

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0)
        >>> layer = TransformerEncoderLayer(8, 2, dim_feedforward=16)
        >>> layer(chaingrad.randn(5, 3, 8)).shape
        chaingrad.Size([5, 3, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None):
        kinds = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kinds)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kinds)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kinds)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kinds)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kinds)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation_function(activation)
        self.activation_relu_or_gelu = (1 if self.activation is F.relu
                                        or isinstance(self.activation, ReLU)
                                        else 2 if self.activation is F.gelu
                                        or isinstance(self.activation, GELU) else 0)

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        """The layer on ``src`` (S, N, E) (or batch first, or one sequence (S, E)).

        Args:
            src_mask: (S, S) or (N * nhead, S, S): True (or -inf) where a position may
                not attend to another; floats are added to the attention's weights.
            src_key_padding_mask: (N, S): True (or -inf) at padding.
            is_causal: A hint that ``src_mask`` is the causal mask.
        """
        x = tensor_argument(src, "TransformerEncoderLayer", "src")
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (``memory``), then a
    feed-forward layer, as torch.nn.TransformerDecoderLayer::

        x = norm1(x + dropout1(self_attn(x, x, x)))                 (norm_first=False)
        x = norm2(x + dropout2(multihead_attn(x, memory, memory)))
        x = norm3(x + dropout3(linear2(dropout(activation(linear1(x))))))

    or, with ``norm_first=True``, each block on ``norm_i(x)`` added to x.

    Args:
        d_model: As for ``TransformerEncoderLayer``, as are ``nhead``,
            ``dim_feedforward``, ``dropout``, ``activation``, ``layer_norm_eps``,
            ``batch_first``, ``norm_first``, ``bias``, ``device`` and ``dtype``.

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0)
        >>> layer = TransformerDecoderLayer(8, 2, dim_feedforward=16)
        >>> layer(chaingrad.randn(4, 3, 8), chaingrad.randn(5, 3, 8)).shape
        chaingrad.Size([4, 3, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None):
        kinds = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **kinds)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **kinds)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kinds)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kinds)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kinds)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kinds)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kinds)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation_function(activation)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        """The layer on ``tgt`` (T, N, E) attending to ``memory`` (S, N, E) (or batch
        first, or unbatched); the masks as ``TransformerEncoderLayer.forward``'s, for the
        target's self-attention (``tgt_*``) and for its attention over memory
        (``memory_*``: ``memory_mask`` is (T, S))."""
        x = tensor_argument(tgt, "TransformerDecoderLayer", "tgt")
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any,
                  is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, memory: Tensor, attn_mask: Any, key_padding_mask: Any,
                   is_causal: bool) -> Tensor:
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` in turn, then ``norm`` (if given), as
    torch.nn.TransformerEncoder. The copies start with the layer's very weights (torch
    deep-copies it).

    Args:
        encoder_layer: The layer copied (a ``TransformerEncoderLayer``, or any module
            called as one).
        num_layers: How many copies.
        norm: A module applied to the last layer's output (a ``LayerNorm``), or None.
        enable_nested_tensor: torch's switch for its sparse fast path in evaluation; it
            changes only which positions torch computes, and chaingrad gives the numbers
            that path gives: 0 at the padding (see ``forward``).
        mask_check: torch's check that the padding is at the end of each sequence, before
            its fast path; accepted.

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0)
        >>> encoder = TransformerEncoder(TransformerEncoderLayer(8, 2, 16), 3)
        >>> len(encoder.layers), encoder(chaingrad.randn(5, 2, 8)).shape
        (3, chaingrad.Size([5, 2, 8]))
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        self.layers = clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """Each layer on ``src`` with the masks of ``TransformerEncoderLayer.forward``;
        ``is_causal=None`` reads whether ``mask`` is the causal mask.

        In evaluation without gradients, with a ``src_key_padding_mask`` and the layers
        where torch takes its fast path (batch first, relu or gelu, normalizing after, an
        even number of heads, no ``mask``), the output is 0 at the padded positions before
        ``norm``, as torch's (which leaves them out).
        """
        x = tensor_argument(src, "TransformerEncoder", "src")
        is_causal = detect_is_causal_mask(mask, is_causal, x, self._batch_first())
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=is_causal)
        if self._sparse_fast_path(x, mask, src_key_padding_mask):
            padding = tensor_argument(src_key_padding_mask, "TransformerEncoder",
                                      "src_key_padding_mask")._value
            x = x.masked_fill(padding[..., None] if padding.dtype == np.bool_
                              else np.isneginf(padding)[..., None], 0.0)
        return x if self.norm is None else self.norm(x)

    def _batch_first(self) -> bool:
        first = self.layers[0] if len(self.layers) else None
        attention = getattr(first, "self_attn", None)
        return bool(getattr(attention, "batch_first", False))

    def _sparse_fast_path(self, x: Tensor, mask: Any, padding: Any) -> bool:
        """Whether torch would run these layers on a nested tensor (its fast path in
        evaluation), leaving the padded positions out of the output."""
        first = self.layers[0] if len(self.layers) else None
        if not isinstance(first, TransformerEncoderLayer) or padding is None:
            return False
        attention = first.self_attn
        return (self.use_nested_tensor and not first.training and not first.norm_first
                and attention.batch_first and attention.in_proj_bias is not None
                and attention.in_proj_weight is not None and first.activation_relu_or_gelu
                and attention.num_heads % 2 == 0 and first.norm1.eps == first.norm2.eps
                and mask is None and x.ndim == 3 and not x.requires_grad)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` in turn, each attending to ``memory``,
    then ``norm`` (if given), as torch.nn.TransformerDecoder.

    A layer whose ``activation`` is a module (``nn.GELU()``) keeps it in its copies. torch
    2.13's copies lose it and run ``F.relu`` instead (``TransformerDecoderLayer``'s
    ``__setstate__``, which ``copy.deepcopy`` calls, puts it there); chaingrad does not
    copy that. Give the activation by name (``activation="gelu"``) for the same numbers in
    both.

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0)
        >>> decoder = TransformerDecoder(TransformerDecoderLayer(8, 2, 16), 2)
        >>> decoder(chaingrad.randn(4, 2, 8), chaingrad.randn(5, 2, 8)).shape
        chaingrad.Size([4, 2, 8])
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        self.layers = clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """Each layer on ``tgt`` and ``memory`` with the masks of
        ``TransformerDecoderLayer.forward``; ``tgt_is_causal=None`` reads whether
        ``tgt_mask`` is the causal mask."""
        x = tensor_argument(tgt, "TransformerDecoder", "tgt")
        first = self.layers[0] if len(self.layers) else None
        batch_first = bool(getattr(getattr(first, "self_attn", None), "batch_first", False))
        tgt_is_causal = detect_is_causal_mask(tgt_mask, tgt_is_causal, x, batch_first)
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """An encoder and a decoder, as torch.nn.Transformer ("Attention Is All You Need"):
    ``decoder(tgt, encoder(src))``, each a stack of layers ending in a ``LayerNorm``.

    Args:
        d_model: The size of each position's vector.
        nhead: The heads of every attention.
        num_encoder_layers: How many layers the encoder's stack has.
        num_decoder_layers: How many layers the decoder's stack has.
        dim_feedforward: As for ``TransformerEncoderLayer``, as are ``dropout``,
            ``activation``, ``layer_norm_eps``, ``batch_first``, ``norm_first``, ``bias``,
            ``device`` and ``dtype``.
        custom_encoder: A module to use instead of the encoder's stack.
        custom_decoder: A module to use instead of the decoder's stack.

    Every parameter of more than one dimension is drawn afresh, xavier-uniform, in
    ``parameters()``'s order (torch's ``_reset_parameters``).

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0)
        >>> model = Transformer(d_model=8, nhead=2, num_encoder_layers=1,
        ...                     num_decoder_layers=1, dim_feedforward=16)
        >>> src, tgt = chaingrad.randn(5, 2, 8), chaingrad.randn(4, 2, 8)
        >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(4)).shape
        chaingrad.Size([4, 2, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Activation = F.relu,
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None):
        kinds = {"device": device, "dtype": dtype}
        shared = {"dim_feedforward": dim_feedforward, "dropout": dropout,
                  "activation": activation, "layer_norm_eps": layer_norm_eps,
                  "batch_first": batch_first, "norm_first": norm_first, "bias": bias, **kinds}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, **shared)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kinds)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, **shared)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kinds)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self) -> None:
        """xavier_uniform_ on each parameter of more than one dimension, in order."""
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """The decoder on ``tgt`` (T, N, E) attending to the encoder's output on ``src``
        (S, N, E) (batch first with ``batch_first``); the masks as the encoder's and the
        decoder's. Returns (T, N, E)."""
        x = tensor_argument(src, "Transformer", "src")
        y = tensor_argument(tgt, "Transformer", "tgt")
        batch_axis = 0 if self.batch_first else 1
        if x.ndim == 3 and x.shape[batch_axis] != y.shape[batch_axis]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if x.shape[-1] != self.d_model or y.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(x, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(y, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)


def clones(layer: Module, n: int) -> ModuleList:
    """``n`` deep copies of ``layer`` (each with the layer's weights, its own to train)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"num_layers must be a non-negative int, got {n!r}")
    return ModuleList([copy.deepcopy(layer) for _ in range(n)])


def detect_is_causal_mask(mask: Any, is_causal: bool | None, x: Tensor,
                          batch_first: bool) -> bool:
    """torch's reading of the ``is_causal`` hint: True if given so; if None, whether
    ``mask`` is the causal mask of the sequence's length (as a float mask, -inf above the
    diagonal, or a bool one, True above it); else False."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    given = tensor_argument(mask, "TransformerEncoder", "mask")._value
    size = x.shape[1 if batch_first and x.ndim == 3 else 0]
    if given.shape != (size, size):
        return False
    above = np.triu(np.ones((size, size), dtype=bool), 1)
    if given.dtype == np.bool_:
        return bool((given == above).all())
    return bool((np.isneginf(given) == above).all() and (given[~above] == 0).all())
