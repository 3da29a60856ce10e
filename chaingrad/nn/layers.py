"""Neural-network layers of Tensors, as ``torch.nn`` has them.

Each layer has torch's name, constructor signature (argument order and defaults), attributes,
printed form and initial weights' distribution (``reset_parameters``, through ``nn.init``),
and computes its output with ``chaingrad.nn.functional``. An option chaingrad does not
have (``Conv2d(dilation=2)``, ``MaxPool2d(ceil_mode=True)``, a device other than the CPU)
raises NotImplementedError when the layer is made, naming it. ``inplace=True`` is accepted
and computes out of place.

``Sequential`` names its children '0', '1', ... (or as an OrderedDict names them), so that
``named_parameters()`` gives PyTorch's names ('0.weight', '2.bias', ...). The types that
save and load rebuild are listed in ``chaingrad.nn.registry``.

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
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..tensor_engine.generator import get_rng_state, manual_seed, set_rng_state
from ..tensor_engine.tensor import Tensor
from . import functional as F
from . import init
from .functional import not_yet
from .module import Module
from .parameter import Parameter

__all__ = [
    "BCEWithLogitsLoss", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten",
    "GELU", "Identity", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "NLLLoss",
    "ReLU", "Sequential", "Sigmoid", "Softmax", "Softplus", "Tanh", "get_rng_state",
    "manual_seed", "set_rng_state",
]


def _empty(where: str, shape: tuple[int, ...], device: Any, dtype: Any) -> Parameter:
    """A Parameter of ``shape`` (its numbers set by the layer's ``reset_parameters``)."""
    check_device(where, device)
    return Parameter(np.zeros(shape, dtype=np.float32 if dtype is None else np.dtype(dtype)))


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
        self.bias = _empty("Linear", (out_features,), device, dtype) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weights and the bias afresh (torch's distribution)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
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
        self.bias = _empty("Conv2d", (out_channels,), device, dtype) if bias else None
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
    torch.nn.Embedding (the least of it: its weights and their initialisation).

    Args:
        num_embeddings: How many rows (indices 0 .. num_embeddings - 1).
        embedding_dim: The length of each row.
        padding_idx: A row kept at zero from the start, as in torch (or None).
        device, dtype: As for ``Linear``.

    Attributes:
        weight: Shape (num_embeddings, embedding_dim), drawn from N(0, 1) (torch's
            ``nn.init.normal_``: torch's numbers for the seed).

    Example:
        >>> _ = manual_seed(0)
        >>> table = Embedding(27, 2)
        >>> table(np.array([0, 5])).shape
        chaingrad.Size([2, 2])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 device: Any = None, dtype: Any = None):
        _check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise not_yet("Embedding with max_norm, scale_grad_by_freq or sparse")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight = _empty("Embedding", (num_embeddings, embedding_dim), device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weights afresh from N(0, 1) (the padding row back to zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._value[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The rows of ``weight`` for the indices in ``input`` (a Tensor or array of ints)."""
        if not isinstance(input, (Tensor, np.ndarray)):
            raise TypeError(f"Embedding: expected a Tensor or an array of indices, got "
                            f"{type(input).__name__}")
        return self.weight[input]

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text + ("" if self.padding_idx is None else f", padding_idx={self.padding_idx}")


# ---- losses: torch's modules over chaingrad.nn.functional ----


class _Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean"):
        self.reduction = F.reduction_of(size_average, reduce, reduction)


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
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, \
            label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """``F.nll_loss``: the log-probabilities of the target classes, negated."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """``F.binary_cross_entropy_with_logits``, with ``weight`` and ``pos_weight``."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None):
        super().__init__(size_average, reduce, reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class Sequential(Module):
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

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end (named ``str(len(self))``); returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"Sequential.append: expected a module, got "
                            f"{type(module).__name__}")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """``append`` each module in turn; returns self."""
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put ``module`` at ``index``, the layers after it moving up (renumbered)."""
        if not isinstance(module, Module):
            raise TypeError(f"Sequential.insert: expected a module, got "
                            f"{type(module).__name__}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} is out of range for {n} "
                             "layers")
        layers = self._layers()
        layers.insert(index % (n + 1) if index < 0 else index, module)
        self._renumber(layers)
        return self

    def __getitem__(self, i: int | slice) -> Module:
        """Layer ``i`` (negative counts from the end), or a Sequential of a slice whose
        layers keep their names, as in torch."""
        if isinstance(i, slice):
            return Sequential(OrderedDict(self._named_layers()[i]))
        return self._named_layers()[self._position(i)][1]

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
        n = len(self)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"Sequential: indices must be integers or slices, got "
                            f"{type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range")
        return int(i) % n

    def _renumber(self, layers: list[Module]) -> None:
        for name, _ in self._named_layers():
            delattr(self, name)
        for k, module in enumerate(layers):
            setattr(self, str(k), module)

    def __len__(self) -> int:
        return len(self._layers())

    def __iter__(self) -> Iterator[Module]:
        """The layers in order, a layer given twice twice (``children()`` lists it once)."""
        return iter(self._layers())

    def _layers(self) -> list[Module]:
        return [m for _, m in self._named_layers()]

    def _named_layers(self) -> list[tuple[str, Module]]:
        return [(name, m) for name, m in vars(self).items() if isinstance(m, Module)]


def _check_sizes(where: str, **sizes: Any) -> None:
    for name, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{where}: {name} must be a positive int, got {n!r}")
