"""Neural-network layers of Tensors, shaped and named as in ``torch.nn``.

``Linear``, ``Conv2d`` (NCHW) and ``MaxPool2d`` have PyTorch's parameter shapes and default
initialisation (weights and biases uniform in +-1/sqrt(fan_in), which is what torch's
kaiming-uniform with a = sqrt(5) comes to); ``Sequential`` names its children '0', '1', ...
so that ``named_parameters()`` gives PyTorch's names ('0.weight', '2.bias', ...). Each is a
``chaingrad.nn.Module``; the types that save and load rebuild are listed in
``chaingrad.nn.registry``.

Random numbers (initial weights, dropout masks) come from one numpy generator;
``manual_seed(n)`` makes them reproducible.

Example:
    >>> import numpy as np
    >>> manual_seed(0)
    >>> model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
    >>> [name for name, _ in model.named_parameters()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> model(Tensor(np.ones((5, 4)))).shape
    chaingrad.Size([5, 3])
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..tensor_engine.functions import _pair, conv2d, max_pool2d
from ..tensor_engine.generator import (  # noqa: F401 - the one generator, re-exported
    generator,
    get_rng_state,
    manual_seed,
    set_rng_state,
)
from ..tensor_engine.tensor import Tensor
from .module import Module
from .parameter import Parameter


def _uniform(shape: tuple[int, ...], bound: float, dtype: Any) -> Parameter:
    return Parameter(generator().uniform(-bound, bound, size=shape).astype(dtype))


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
        dtype: The parameters' dtype (float32 by default, as in torch).

    Attributes:
        weight: Shape (out_features, in_features).
        bias: Shape (out_features,), or None.

    An input of another dtype is promoted as numpy does, not refused as torch does: float32
    weights on a float64 input (``Tensor(np.ones((4, 3)))``) give a float64 output, computed
    in float64 (slower), while ``weight.grad`` stays float32. Give float32 inputs
    (``x.astype(np.float32)``) to compute in float32. Conv2d does the same.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = np.float32):
        _check_sizes("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = _uniform((out_features, in_features), bound, dtype)
        self.bias = _uniform((out_features,), bound, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        x = _check_input(x, "Linear")
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected an input whose last dimension is "
                             f"{self.in_features}, got shape {tuple(x.shape)}")
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")



class Conv2d(Module):
    """2-D convolution over (N, C, H, W) inputs, as torch.nn.Conv2d (no dilation/groups).

    Args:
        in_channels, out_channels: C and O.
        kernel_size, stride, padding: An int or an (h, w) pair; padding is with zeros.
        bias: Whether to add a learned bias per output channel.
        dtype: The parameters' dtype (float32 by default); an input of another dtype is
            promoted as numpy does, not refused as in torch (see ``Linear``).

    Attributes:
        weight: Shape (out_channels, in_channels, kh, kw).
        bias: Shape (out_channels,), or None.

    Example:
        >>> import numpy as np
        >>> Conv2d(3, 8, 3, padding=1)(Tensor(np.zeros((2, 3, 8, 8)))).shape
        chaingrad.Size([2, 8, 8, 8])
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, bias: bool = True, dtype: Any = np.float32):
        _check_sizes("Conv2d", in_channels=in_channels, out_channels=out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _pair(kernel_size, "Conv2d: kernel_size", 1)
        self.stride = _pair(stride, "Conv2d: stride", 1)
        self.padding = _pair(padding, "Conv2d: padding", 0)
        bound = 1 / math.sqrt(in_channels * self.kernel_size[0] * self.kernel_size[1])
        self.weight = _uniform((out_channels, in_channels) + self.kernel_size, bound, dtype)
        self.bias = _uniform((out_channels,), bound, dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return conv2d(_check_input(x, "Conv2d"), self.weight, self.bias, self.stride,
                      self.padding)

    def extra_repr(self) -> str:
        """As torch prints it: padding only if there is some, bias only if there is none."""
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        text += f", padding={self.padding}" if any(self.padding) else ""
        return text + (", bias=False" if self.bias is None else "")



class MaxPool2d(Module):
    """The largest entry of each window, as torch.nn.MaxPool2d (stride = kernel by default)."""

    def __init__(self, kernel_size: Any, stride: Any = None):
        self.kernel_size = _pair(kernel_size, "MaxPool2d: kernel_size", 1)
        self.stride = self.kernel_size if stride is None else _pair(stride, "MaxPool2d: stride",
                                                                     1)

    def forward(self, x: Tensor) -> Tensor:
        return max_pool2d(_check_input(x, "MaxPool2d"), self.kernel_size, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}"



class Flatten(Module):
    """Merge the axes from ``start_dim`` (default 1: keep the batch axis) into one."""

    def __init__(self, start_dim: int = 1):
        self.start_dim = start_dim

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Flatten").flatten(self.start_dim)



class ReLU(Module):
    """max(0, x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "ReLU").relu()


class Tanh(Module):
    """tanh(x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Tanh").tanh()


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Sigmoid").sigmoid()


class Identity(Module):
    """x itself (a placeholder that keeps a Sequential's numbering, as torch.nn.Identity)."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Identity")


class Dropout(Module):
    """In training, zero each entry with probability p and scale the rest by 1 / (1 - p);
    in evaluation (``.eval()``), pass x through unchanged.

    Example:
        >>> import numpy as np
        >>> drop = Dropout(0.5)
        >>> x = Tensor(np.ones(1000))
        >>> bool((drop(x).data == 0).any()), bool((drop.eval()(x).data == 1).all())
        (True, True)
    """

    def __init__(self, p: float = 0.5):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be a probability in [0, 1), got {p!r}")
        self.p = float(p)

    def forward(self, x: Tensor) -> Tensor:
        x = _check_input(x, "Dropout")
        if not self.training or self.p == 0:
            return x
        keep = (generator().random(x.shape) >= self.p).astype(x.dtype)
        return x * (keep / (1 - self.p))

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Sequential(Module):
    """Modules applied in order; child i is named str(i), as in torch.nn.Sequential.

    Example:
        >>> model = Sequential(Linear(2, 4), Tanh(), Linear(4, 1))
        >>> len(model), type(model[1]).__name__, len(model[:2])
        (3, 'Tanh', 2)
    """

    def __init__(self, *modules: Module):
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: argument {i} must be a module, got "
                                f"{type(m).__name__}")
            setattr(self, str(i), m)

    def forward(self, x: Tensor) -> Tensor:
        for module in self:
            x = module(x)
        return x

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end (named ``str(len(self))``); returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"Sequential.append: expected a module, got "
                            f"{type(module).__name__}")
        setattr(self, str(len(self)), module)
        return self

    def __getitem__(self, i: int | slice) -> Module:
        """Layer ``i`` (negative counts from the end), or a Sequential of a slice whose
        layers keep their names, as in torch."""
        if isinstance(i, slice):
            part = Sequential()
            for name, module in self._named_layers()[i]:
                setattr(part, name, module)
            return part
        layers = self._layers()
        try:
            return layers[i]
        except (IndexError, TypeError):
            raise IndexError(f"Sequential: index {i!r} is out of range for {len(layers)} "
                             f"layers") from None

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
