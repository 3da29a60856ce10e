"""Neural-network layers of Tensors, as ``torch.nn`` has them.

Each layer has torch's name, constructor signature (argument order and defaults), attributes,
printed form and initial weights' distribution (``reset_parameters``, through ``nn.init``),
and computes its output with ``chaingrad.nn.functional``. An option chaingrad does not
have (``Conv2d(dilation=2)``, ``MaxPool2d(ceil_mode=True)``, a device other than the CPU)
raises NotImplementedError when the layer is made, naming it. ``inplace=True`` is accepted
and computes out of place.

``Sequential`` and ``ModuleList`` name their children '0', '1', ... (a Sequential also as
an OrderedDict names them), ``ModuleDict`` by their keys, so that ``named_parameters()``
gives PyTorch's names ('0.weight', 'blocks.2.bias', ...). The norms keep their state that
is not trained as buffers (BatchNorm's ``running_mean``, ``running_var`` and
``num_batches_tracked``), which ``state_dict()`` holds. The types that save and load
rebuild are listed in ``chaingrad.nn.registry``.

Random numbers (initial weights, dropout masks) come from the default generator, the same
as torch's: after ``manual_seed(n)`` a layer starts from the very weights torch's starts
from.

Example:
    >>> import numpy as np
    >>> _ = manual_seed(0)
    >>> model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
    >>> [name for name, _ in model.named_parameters()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> model(Tensor(np.ones((5, 4)))).shape
    chaingrad.Size([5, 3])
    >>> model
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
      (2): Linear(in_features=8, out_features=3, bias=True)
    )
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import numpy as np

from ..tensor_engine.generator import get_rng_state, manual_seed, set_rng_state
from ..tensor_engine.tensor import Tensor, constant
from . import functional as F
from . import init
from .functional import not_yet
from .module import Module, indent
from .parameter import Parameter

__all__ = [
    "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv2d", "CrossEntropyLoss", "Dropout",
    "Embedding", "Flatten", "GELU", "Identity", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax",
    "MSELoss", "MaxPool2d", "ModuleDict", "ModuleList", "NLLLoss", "ParameterDict",
    "ParameterList", "ReLU", "Sequential", "Sigmoid", "Softmax", "Softplus", "Tanh",
    "get_rng_state", "manual_seed", "set_rng_state",
]


def _empty(where: str, shape: tuple[int, ...], device: Any, dtype: Any) -> Parameter:
    """A Parameter of ``shape`` (its numbers set by the layer's ``reset_parameters``)."""
    return Parameter(_zeros(where, shape, device, dtype))


def _zeros(where: str, shape: tuple[int, ...], device: Any, dtype: Any) -> Tensor:
    """A Tensor of zeros of ``shape``, float32 unless ``dtype`` says otherwise (a layer's
    buffer, or a parameter's numbers)."""
    check_device(where, device)
    return constant(np.zeros(shape, dtype=np.float32 if dtype is None else np.dtype(dtype)))


def check_device(where: str, device: Any) -> None:
    """Accept the CPU (None, 'cpu', a device of type 'cpu'); anything else is not here."""
    if device is None or str(getattr(device, "type", device)) == "cpu":
        return
    raise not_yet(f"{where}(device={device!r}): a device other than the CPU")


def _check_input(x: Any, where: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return Tensor(x)
    raise TypeError(f"{where}: expected a Tensor or an array, got {type(x).__name__}")


class Linear(Module):
    """y = x @ weight.T + bias, as torch.nn.Linear.

    Args:
        in_features: Size of each input row.
        out_features: Size of each output row.
        bias: Whether to add a learned bias.
        device: The CPU only (None, 'cpu').
        dtype: The parameters' dtype (float32 by default, as in torch).

    Attributes:
        weight: Shape (out_features, in_features), uniform in +-1/sqrt(in_features) (torch's
            kaiming_uniform_ with a = sqrt(5)).
        bias: Shape (out_features,), uniform in +-1/sqrt(in_features), or None.

    An input of another dtype is promoted, not refused as torch does: float32 weights on a
    float64 input give a float64 output, while ``weight.grad`` stays float32. Conv2d does
    the same.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None):
        _check_sizes("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty("Linear", (out_features, in_features), device, dtype)
        self.register_parameter("bias", _empty("Linear", (out_features,), device, dtype)
                                if bias else None)  # None: still the bias's slot, as in torch
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weights and the bias afresh (torch's distribution)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - torch's name
        x = _check_input(input, "Linear")
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected an input whose last dimension is "
                             f"{self.in_features}, got shape {tuple(x.shape)}")
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(Module):
    """2-D convolution over (N, C, H, W) or (C, H, W) input, as torch.nn.Conv2d.

    Args:
        in_channels, out_channels: C and O.
        kernel_size, stride: An int or an (h, w) pair.
        padding: An int, an (h, w) pair of zeros on each side, 'valid' (none) or 'same'
            (the output as large as the input; stride 1 only, as in torch).
        dilation, groups, padding_mode: 1, 1 and 'zeros' only (anything else is not in
            chaingrad yet).
        bias: Whether to add a learned bias per output channel.
        device, dtype: As for ``Linear``.

    Attributes:
        weight: Shape (out_channels, in_channels, kh, kw).
        bias: Shape (out_channels,), or None.

    Example:
        >>> import numpy as np
        >>> tuple(Conv2d(3, 8, 3, padding=1)(Tensor(np.zeros((2, 3, 8, 8)))).shape)
        (2, 8, 8, 8)
        >>> Conv2d(1, 6, 5)
        Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None):
        _check_sizes("Conv2d", in_channels=in_channels, out_channels=out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = F.pair(kernel_size, "Conv2d: kernel_size", 1)
        self.stride, self.padding, self.dilation = F.conv2d_options("Conv2d", stride, padding,
                                                                    dilation, groups)
        if padding_mode != "zeros":
            raise not_yet(f"Conv2d with padding_mode={padding_mode!r}")
        self.groups, self.padding_mode = groups, padding_mode
        shape = (out_channels, in_channels) + self.kernel_size
        self.weight = _empty("Conv2d", shape, device, dtype)
        self.register_parameter("bias", _empty("Conv2d", (out_channels,), device, dtype)
                                if bias else None)
        self.reset_parameters()

    reset_parameters = Linear.reset_parameters

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding)

    def extra_repr(self) -> str:
        """As torch prints it: padding only if there is some, bias only if there is none."""
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        return text + (", bias=False" if self.bias is None else "")


class MaxPool2d(Module):
    """The largest entry of each window, as torch.nn.MaxPool2d (stride = kernel by default;
    padding, dilation, ceil_mode and return_indices only at their defaults)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False):
        F.max_pool2d_options("MaxPool2d", kernel_size, stride, padding, dilation, ceil_mode,
                             return_indices)
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride  # as given: torch prints it
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class Flatten(Module):
    """Merge the axes from ``start_dim`` to ``end_dim`` (default: all but the batch axis)
    into one, as torch.nn.Flatten.

    Example:
        >>> import numpy as np
        >>> x = Tensor(np.zeros((2, 3, 4)))
        >>> tuple(Flatten()(x).shape), tuple(Flatten(0, 1)(x).shape)
        ((2, 12), (6, 4))
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _check_input(input, "Flatten").flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class ReLU(Module):
    """max(0, x), elementwise (``inplace=True`` computes out of place)."""

    def __init__(self, inplace: bool = False):
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(_check_input(input, "ReLU"))

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), elementwise (arguments are accepted and ignored, as torch's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanh(_check_input(input, "Tanh"))


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise (arguments are accepted and ignored, as torch's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.sigmoid(_check_input(input, "Sigmoid"))


class Softmax(Module):
    """exp(x) / sum(exp(x)) along ``dim`` (torch's implicit choice, with its warning, for
    None)."""

    def __init__(self, dim: int | None = None):
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(_check_input(input, "Softmax"), self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - log(sum(exp(x))) along ``dim``, computed stably."""

    def __init__(self, dim: int | None = None):
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(_check_input(input, "LogSoftmax"), self.dim, _stacklevel=5)

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
        return F.gelu(_check_input(input, "GELU"), self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x (``F.leaky_relu``; ``inplace=True`` computes
    out of place)."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.leaky_relu(_check_input(input, "LeakyReLU"), self.negative_slope)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold (``F.softplus``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(_check_input(input, "Softplus"), self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Identity(Module):
    """x itself (a placeholder that keeps a Sequential's numbering, as torch.nn.Identity;
    arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _check_input(input, "Identity")


class Dropout(Module):
    """In training, zero each entry with probability p and scale the rest by 1 / (1 - p);
    in evaluation (``.eval()``), pass x through unchanged.

    Example:
        >>> import numpy as np
        >>> drop = Dropout(0.5)
        >>> x = Tensor(np.ones(1000))
        >>> bool((drop(x) == 0).any()), bool((drop.eval()(x) == 1).all())
        (True, True)
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(_check_input(input, "Dropout"), self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    """A lookup table: row i of ``weight`` for each index i of the input, as
    torch.nn.Embedding (through ``F.embedding``).

    Args:
        num_embeddings: How many rows (indices 0 .. num_embeddings - 1).
        embedding_dim: The length of each row.
        padding_idx: A row that starts at zero and takes no gradient, as in torch (or
            None; negative counts from the end).
        max_norm, scale_grad_by_freq, sparse: At their defaults only (refused, by name,
            otherwise: not in chaingrad yet).
        norm_type: Kept and printed, as torch's (it matters only with ``max_norm``).
        device, dtype: As for ``Linear``.

    Attributes:
        weight: Shape (num_embeddings, embedding_dim), drawn from N(0, 1) (torch's
            ``nn.init.normal_``: torch's numbers for the seed), the padding row zeroed.

    Example:
        >>> _ = manual_seed(0)
        >>> table = Embedding(27, 2)
        >>> table(np.array([0, 5])).shape
        chaingrad.Size([2, 2])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None):
        _check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        F.embedding_options("Embedding", max_norm, scale_grad_by_freq, sparse)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = _empty("Embedding", (num_embeddings, embedding_dim), device, dtype)
            self.weight.requires_grad = not _freeze
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: the weight given has shape "
                                 f"{tuple(_weight.shape)}, which does not match "
                                 f"num_embeddings and embedding_dim "
                                 f"{(num_embeddings, embedding_dim)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (a 2-D Tensor, its data shared, as
        torch shares it; the padding row is left as it is), frozen (no gradient) unless
        ``freeze`` is False.

        Example:
            >>> table = Embedding.from_pretrained(Tensor([[1.0, 2.0], [3.0, 4.0]]))
            >>> table(np.array([1])).tolist(), table.weight.requires_grad
            ([[3.0, 4.0]], False)
        """
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            got = (f"shape {tuple(embeddings.shape)}" if isinstance(embeddings, Tensor)
                   else type(embeddings).__name__)
            raise ValueError(f"Embedding.from_pretrained: embeddings must be a 2-D Tensor "
                             f"(rows, length), got {got}")
        rows, length = embeddings.shape
        return cls(rows, length, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def reset_parameters(self) -> None:
        """Draw the weights afresh from N(0, 1) (the padding row back to zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._value[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The rows of ``weight`` for the indices in ``input`` (a Tensor or array of ints)."""
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text + ("" if self.norm_type == 2 else f", norm_type={self.norm_type}")


# ---- normalization ----


class LayerNorm(Module):
    """Each slice of the last axes (``normalized_shape``) normalized to mean 0 and variance
    1, then scaled and shifted elementwise, as torch.nn.LayerNorm (through
    ``F.layer_norm``).

    Args:
        normalized_shape: The shape of the trailing axes normalized (an int for the last).
        eps: Added to the variance before its square root.
        elementwise_affine: Whether to learn ``weight`` and ``bias``.
        bias: Whether to learn ``bias`` (with ``elementwise_affine``).
        device, dtype: As for ``Linear``.

    Attributes:
        weight: Of ``normalized_shape``, starting at 1 (or None).
        bias: Of ``normalized_shape``, starting at 0 (or None).

    Example:
        >>> norm = LayerNorm(3)
        >>> norm
        LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
        >>> [round(v, 4) for v in norm(Tensor([[1.0, 2.0, 3.0]])).tolist()[0]]
        [-1.2247, 0.0, 1.2247]
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None):
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        _check_sizes("LayerNorm", **{f"normalized_shape[{i}]": n
                                     for i, n in enumerate(self.normalized_shape)})
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = _empty("LayerNorm", self.normalized_shape, device, dtype)
        else:
            self.register_parameter("weight", None)
        if elementwise_affine and bias:
            self.bias = _empty("LayerNorm", self.normalized_shape, device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight back to ones, the bias to zeros (torch's start)."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
                f"{self.elementwise_affine}, bias={self.bias is not None}")


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share (torch's ``_NormBase`` and ``_BatchNorm``):
    the parameters, the running statistics as buffers, and ``forward``."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True):
        where = type(self).__name__
        _check_sizes(where, num_features=num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = _empty(where, (num_features,), device, dtype)
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = _empty(where, (num_features,), device, dtype)
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _zeros(where, (num_features,), device, dtype))
            self.register_buffer("running_var", _zeros(where, (num_features,), device, dtype))
            self.register_buffer("num_batches_tracked", _zeros(where, (), device, np.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """The running mean back to 0, the variance to 1, the count of batches to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics reset, the weight back to ones, the bias to zeros."""
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, x: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """In training, the batch's statistics (the running ones updated, and
        ``num_batches_tracked`` counted); in evaluation, the running ones (the batch's if
        there are none), as torch's. ``momentum=None`` makes the running statistics the
        plain average of every batch so far."""
        x = _check_input(input, type(self).__name__)
        self._check_input_dim(x)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(x, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input over the batch (and L), per
    channel, as torch.nn.BatchNorm1d (through ``F.batch_norm``).

    Args:
        num_features: C, the channels.
        eps: Added to the variance before its square root.
        momentum: How far the running statistics move toward each batch's (None: their
            cumulative average).
        affine: Whether to learn ``weight`` (starting at 1) and ``bias`` (at 0).
        track_running_stats: Whether to keep ``running_mean`` (starting at 0),
            ``running_var`` (at 1) and ``num_batches_tracked`` (an int64 count) as buffers,
            saved in ``state_dict()``; without them the batch's statistics serve in
            evaluation too.
        device, dtype: As for ``Linear``.
        bias: Whether to learn ``bias`` (with ``affine``), keyword only.

    Example:
        >>> bn = BatchNorm1d(2)
        >>> y = bn(Tensor([[1.0, 10.0], [3.0, 30.0]]))
        >>> [[round(v, 3) for v in row] for row in y.tolist()]
        [[-1.0, -1.0], [1.0, 1.0]]
        >>> bn.running_mean, bn.num_batches_tracked
        (tensor([0.2000, 2.0000]), tensor(1))
    """

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {x.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input over the batch and the positions, per
    channel, as torch.nn.BatchNorm2d (the arguments and buffers as ``BatchNorm1d``'s).

    Example:
        >>> bn = BatchNorm2d(3).eval()
        >>> bn(Tensor(np.ones((2, 3, 4, 4)))).shape
        chaingrad.Size([2, 3, 4, 4])
    """

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim != 4:
            raise ValueError(f"expected 4D input (got {x.ndim}D input)")


# ---- losses: torch's modules over chaingrad.nn.functional ----


class _Loss(Module):
    """A loss module: its ``reduction``; a class weight given to it is a buffer, saved in
    ``state_dict()`` and converted by ``to()``, as torch's."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean"):
        self.reduction = F.reduction_of(size_average, reduce, reduction)


def _buffer_of(weight: Any) -> Any:
    """A loss's weight as its buffer: a Tensor (an array becomes one, sharing its data)."""
    return Tensor(weight) if isinstance(weight, np.ndarray) else weight


class MSELoss(_Loss):
    """(input - target) ** 2, reduced (``reduction`` 'mean', 'sum' or 'none').

    Example:
        >>> MSELoss(reduction='sum')(Tensor([1.0, 3.0]), Tensor([0.0, 1.0])).item()
        5.0
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """``F.cross_entropy``: class indices or class probabilities as targets."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer_of(weight))
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """``F.nll_loss``: the log-probabilities of the target classes, negated."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer_of(weight))
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """``F.binary_cross_entropy_with_logits``, with ``weight`` and ``pos_weight``."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer_of(weight))
        self.register_buffer("pos_weight", _buffer_of(pos_weight))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


# ---- containers ----


class _Numbered(Module):
    """Children kept in order, named '0', '1', ... (renumbered when one is inserted or
    removed): what ``Sequential`` and ``ModuleList`` share. Its children are its Module
    attributes, in the order they were set."""

    def __len__(self) -> int:
        return len(self._named_layers())

    def __iter__(self) -> Iterator[Module]:
        """The layers in order, a layer given twice twice (``children()`` lists it once)."""
        return iter(self._layers())

    def append(self, module: Module) -> Any:
        """Add ``module`` at the end (named ``str(len(self))``); returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.append: expected a module, got "
                            f"{type(module).__name__}")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Any:
        """``append`` each module of ``modules`` in turn; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"{type(self).__name__}.extend should be called with an "
                            f"iterable, but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Any:
        """Put ``module`` at ``index`` (-len .. len), the layers after it moving up
        (renumbered); returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.insert: expected a module, got "
                            f"{type(module).__name__}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"{type(self).__name__}.insert: index {index} is out of range "
                             f"for {n} layers")
        layers = self._layers()
        layers.insert(index, module)  # a negative index counts from the end, as torch's
        self._renumber(layers)
        return self

    def pop(self, index: int | slice) -> Any:
        """Remove layer ``index`` (or a slice of them) and return it; the others are
        renumbered."""
        popped = self[index]
        del self[index]
        return popped

    def __setitem__(self, i: int, module: Module) -> None:
        """Replace layer ``i``, keeping its name."""
        setattr(self, self._named_layers()[self._position(i)][0], module)

    def __delitem__(self, i: int | slice) -> None:
        """Remove layer ``i`` (or a slice of them); the others are renumbered, as torch
        does."""
        named = self._named_layers()
        gone = named[i] if isinstance(i, slice) else [named[self._position(i)]]
        for name, _ in gone:
            delattr(self, name)
        self._renumber(self._layers())

    def _position(self, i: Any) -> int:
        return _index(i, len(self), type(self).__name__)

    def _renumber(self, layers: list[Module]) -> None:
        for name, _ in self._named_layers():
            delattr(self, name)
        for k, module in enumerate(layers):
            setattr(self, str(k), module)

    def _layers(self) -> list[Module]:
        return [m for _, m in self._named_layers()]

    def _named_layers(self) -> list[tuple[str, Module]]:
        return [(name, m) for name, m in vars(self).items() if isinstance(m, Module)]


def _index(i: Any, n: int, where: str) -> int:
    """Index ``i`` of a container of ``n`` (negative counts from the end) as a position."""
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"{where}: indices must be integers or slices, got "
                        f"{type(i).__name__}")
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range")
    return int(i) % n


class Sequential(_Numbered):
    """Modules applied in order; child i is named str(i), or as the keys of an OrderedDict
    name them, as in torch.nn.Sequential.

    Example:
        >>> model = Sequential(Linear(2, 4), Tanh(), Linear(4, 1))
        >>> len(model), type(model[1]).__name__, len(model[:2])
        (3, 'Tanh', 2)
        >>> Sequential(OrderedDict(fc=Linear(2, 2), act=ReLU())).act
        ReLU()
    """

    def __init__(self, *args: Any):
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
            return
        for i, m in enumerate(args):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: argument {i} must be a module, got "
                                f"{type(m).__name__}")
            setattr(self, str(i), m)

    def forward(self, input: Any) -> Any:  # noqa: A002
        for module in self:
            input = module(input)
        return input

    def __getitem__(self, i: int | slice) -> Module:
        """Layer ``i`` (negative counts from the end), or a Sequential of a slice whose
        layers keep their names, as in torch."""
        if isinstance(i, slice):
            return Sequential(OrderedDict(self._named_layers()[i]))
        return self._named_layers()[self._position(i)][1]


class ModuleList(_Numbered):
    """Modules held in a list, registered as children '0', '1', ... (so that
    ``parameters()``, ``state_dict()``, ``to()`` and ``apply()`` reach them), as
    torch.nn.ModuleList: indexed, sliced, iterated, ``append``, ``extend``, ``insert``,
    ``pop``, ``+`` and ``+=``. It has no ``forward``: the module that holds it calls its
    layers.

    Example:
        >>> _ = manual_seed(0)
        >>> blocks = ModuleList([Linear(4, 4) for _ in range(3)])
        >>> blocks.append(ReLU())
        ModuleList(
          (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)
          (3): ReLU()
        )
        >>> len(blocks), [name for name, _ in blocks.named_parameters()][:2]
        (4, ['0.weight', '0.bias'])
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, i: int | slice) -> Any:
        """Layer ``i``, or a ModuleList of a slice (numbered from 0 again, as torch's)."""
        if isinstance(i, slice):
            return ModuleList(self._layers()[i])
        return self._named_layers()[self._position(i)][1]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        """A new ModuleList of this one's layers, then ``other``'s."""
        return ModuleList(chain(self, other))

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` at ``index``, the layers after it moving up (renumbered)."""
        super().insert(index, module)

    def __repr__(self) -> str:
        """torch's form: one line per layer, a run of layers that print alike as one
        (``(0-2): 3 x Linear(...)``)."""
        runs: list[list[Any]] = []  # [first, last, text]
        for i, layer in enumerate(self):
            text = repr(layer)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return "ModuleList()"
        lines = [indent(f"({a}): {text}" if a == b else f"({a}-{b}): {b - a + 1} x {text}")
                 for a, b, text in runs]
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Modules held in a dictionary, each registered as a child under its key (so that
    ``parameters()`` names them ``key.weight``, ...), as torch.nn.ModuleDict: ordered by
    insertion, indexed by key, with ``keys``, ``items``, ``values``, ``update``, ``pop``,
    ``clear``, ``in`` and ``len``. A key must be a string without dots that is not the
    name of one of its attributes (``'keys'``, ``'training'``), as in torch. It has no
    ``forward``.

    Example:
        >>> heads = ModuleDict({"act": ReLU(), "out": Linear(2, 1)})
        >>> list(heads), [name for name, _ in heads.named_parameters()]
        (['act', 'out'], ['out.weight', 'out.bias'])
    """

    def __init__(self, modules: Any = None):
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        value = vars(self).get(key) if isinstance(key, str) else None
        if not isinstance(value, Module):
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        self[key]  # a KeyError for a key that is not there
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._modules_by_key())

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules_by_key())

    def __contains__(self, key: object) -> bool:
        return key in self._modules_by_key()

    def keys(self) -> Any:
        """The keys, in order."""
        return self._modules_by_key().keys()

    def items(self) -> Any:
        """``(key, module)`` pairs, in order."""
        return self._modules_by_key().items()

    def values(self) -> Any:
        """The modules, in order."""
        return self._modules_by_key().values()

    def clear(self) -> None:
        """Remove every module."""
        for key in list(self):
            del self[key]

    def pop(self, key: str) -> Module:
        """Remove ``key``'s module and return it."""
        module = self[key]
        del self[key]
        return module

    def update(self, modules: Any) -> None:
        """Add (or replace) the modules of a mapping, in its order, or of an iterable of
        ``(key, module)`` pairs, as torch's."""
        for key, module in _pairs("ModuleDict.update", modules):
            self[key] = module

    def _modules_by_key(self) -> dict[str, Module]:
        return {name: m for name, m in vars(self).items() if isinstance(m, Module)}


def _pairs(where: str, given: Any, sort: bool = False) -> list[tuple[Any, Any]]:
    """The ``(key, value)`` pairs of a mapping (its keys sorted if ``sort`` and it is a
    plain dict, as torch's ParameterDict sorts them), of a ModuleDict or ParameterDict, or
    of an iterable of pairs; a TypeError or ValueError naming ``where`` otherwise."""
    if not isinstance(given, Iterable):
        raise TypeError(f"{where} should be called with an iterable of key/value pairs, "
                        f"but got {type(given).__name__}")
    if isinstance(given, (Mapping, ModuleDict, ParameterDict)):
        pairs = list(given.items())
        plain = isinstance(given, Mapping) and not isinstance(given, OrderedDict)
        return sorted(pairs) if sort and plain else pairs
    pairs = []
    for j, pair in enumerate(given):
        if not isinstance(pair, Iterable) or isinstance(pair, (str, bytes)):
            raise TypeError(f"{where}: sequence element #{j} should be a (key, value) "
                            f"pair; is {type(pair).__name__}")
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(f"{where}: sequence element #{j} has length {len(pair)}; 2 is "
                             "required")
        pairs.append(pair)
    return pairs


class ParameterList(Module):
    """Parameters held in a list, registered as '0', '1', ..., as torch.nn.ParameterList:
    a Tensor put in it becomes a ``Parameter`` (other objects are kept as they are);
    indexed, sliced, iterated, ``append``, ``extend``, ``+=``. It cannot be called.

    Example:
        >>> scales = ParameterList([Tensor(np.ones(2)), Parameter(np.zeros(3))])
        >>> [name for name, _ in scales.named_parameters()], type(scales[0]).__name__
        (['0', '1'], 'Parameter')
    """

    def __init__(self, values: Iterable[Any] | None = None):
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return ParameterList([self[k] for k in range(*i.indices(len(self)))])
        return getattr(self, str(_index(i, len(self), "ParameterList")))

    def __setitem__(self, i: int, value: Any) -> None:
        """Put ``value`` at ``i`` (a Tensor made a ``Parameter``, sharing its data)."""
        setattr(self, str(_index(i, len(self), "ParameterList")), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end; returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """``append`` each of ``values`` (an iterable, not a Tensor); returns self."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but "
                            f"got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """A line per entry: ``(0): Parameter containing: [chaingrad.float32 of size 2x3]``."""
        return "\n".join(f"  ({i}): {_described(p, 'dtype')}" for i, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Parameters held in a dictionary, each registered under its key, as
    torch.nn.ParameterDict: a Tensor put in it becomes a ``Parameter``; ordered by
    insertion (``update`` with a plain dict adds its keys sorted, as torch's); ``keys``,
    ``items``, ``values``, ``get``, ``pop``, ``popitem``, ``setdefault``, ``copy``,
    ``clear``, ``|``. It cannot be called.

    Example:
        >>> table = ParameterDict({"scale": Tensor(np.ones(2)), "bias": Tensor(np.zeros(2))})
        >>> list(table), [name for name, _ in table.named_parameters()]
        (['bias', 'scale'], ['bias', 'scale'])
    """

    def __init__(self, parameters: Any = None):
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        """Put ``value`` under ``key`` (a Tensor made a ``Parameter``, sharing its data)."""
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is "
                            f"not a string (type is '{type(key).__name__}')")
        setattr(self, key, _as_parameter(value))
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        self[key]  # a KeyError for a key that is not there
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Any:
        """The keys, in order."""
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        """``(key, parameter)`` pairs, in order."""
        return ((k, self[k]) for k in list(self._keys))

    def values(self) -> Iterator[Any]:
        """The parameters, in order."""
        return (self[k] for k in list(self._keys))

    def get(self, key: str, default: Any = None) -> Any:
        """``key``'s parameter, or ``default``."""
        return self[key] if key in self else default  # noqa: SIM401 - this is get

    def pop(self, key: str) -> Any:
        """Remove ``key``'s parameter and return it."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove the last ``(key, parameter)`` pair added and return it."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``key``'s parameter, after putting ``default`` there if the key is new."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every parameter."""
        for key in list(self._keys):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict of the same parameters (the same objects), in order."""
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict of ``keys``, each holding ``default``."""
        return ParameterDict([(k, default) for k in keys])

    def update(self, parameters: Any) -> None:
        """Add (or replace) the parameters of a mapping (a plain dict's keys sorted, as
        torch's), of a ParameterDict or OrderedDict in order, or of ``(key, value)``
        pairs."""
        for key, value in _pairs("ParameterDict.update", parameters, sort=True):
            self[key] = value

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        """A line per entry: ``(w): Parameter containing: [chaingrad.FloatTensor of size 2]``."""
        return "\n".join(f"  ({k}): {_described(p, 'type')}" for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")


def _as_parameter(value: Any) -> Any:
    """A Tensor that is not a Parameter as one (sharing its data), as torch's parameter
    containers store it; anything else as it is."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _described(value: Any, naming: str) -> str:
    """A parameter container's line for ``value``, as torch prints it: its type named by
    its dtype (ParameterList's ``naming='dtype'``) or as ``x.type()`` (ParameterDict's)."""
    if not isinstance(value, Tensor):
        return f"Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(n) for n in value.shape)
    type_name = value.dtype if naming == "dtype" else value.type()
    return f"{kind} containing: [{type_name} of size {size}]"


def _check_sizes(where: str, **sizes: Any) -> None:
    for name, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{where}: {name} must be a positive int, got {n!r}")
