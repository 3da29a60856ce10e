"""Neural-network layers of Tensors, shaped and named as in ``torch.nn``.

``Linear``, ``Conv2d`` (NCHW) and ``MaxPool2d`` have PyTorch's parameter shapes and default
initialisation (weights and biases uniform in +-1/sqrt(fan_in), which is what torch's
kaiming-uniform with a = sqrt(5) comes to); ``Sequential`` names its children '0', '1', ...
so that ``named_parameters()`` gives PyTorch's names ('0.weight', '2.bias', ...).

Random numbers (initial weights, dropout masks) come from one numpy generator;
``manual_seed(n)`` makes them reproducible.

Example:
    >>> import numpy as np
    >>> manual_seed(0)
    >>> model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
    >>> [name for name, _ in model.named_parameters()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> model(Tensor(np.ones((5, 4)))).shape
    (5, 3)
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..nn import Module
from ..tensor_engine.functions import _pair, conv2d, max_pool2d
from ..tensor_engine.tensor import Tensor

_rng = np.random.default_rng()

LAYER_TYPES = ("Conv2d", "Dropout", "Flatten", "Identity", "Linear", "MaxPool2d", "ReLU",
               "Sequential", "Sigmoid", "Tanh")
"""The layers whose ``architecture()`` ``chaingrad.load`` can rebuild."""


def manual_seed(seed: int) -> None:
    """Restart the generator behind initial weights and dropout masks at ``seed``."""
    global _rng
    _rng = np.random.default_rng(seed)


class TensorModule(Module):
    """What the tensor layers share: train/eval mode, children, named parameters.

    A subclass lists its sub-modules in ``_children`` (name -> module) and its own
    parameters in ``_params`` (name -> Tensor); ``named_parameters()`` walks both.
    """

    training = True

    def named_children(self) -> list[tuple[str, TensorModule]]:
        return list(getattr(self, "_children", {}).items())

    def named_parameters(self) -> list[tuple[str, Tensor]]:
        """``(name, Tensor)`` pairs with PyTorch's names, e.g. ``('0.weight', W)``."""
        own = [(name, p) for name, p in getattr(self, "_params", {}).items() if p is not None]
        return own + [(f"{child}.{name}", p) for child, module in self.named_children()
                      for name, p in module.named_parameters()]

    def parameters(self) -> list[Tensor]:
        return [p for _, p in self.named_parameters()]

    def zero_grad(self) -> None:
        """Forget every parameter's gradient (``.grad = None``, as torch does)."""
        for p in self.parameters():
            p.grad = None

    def state_dict(self) -> dict[str, np.ndarray]:
        """``{name: array}``: a copy of every parameter's data, in its own dtype, by name."""
        return {name: p.data.copy() for name, p in self.named_parameters()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Copy ``state``'s arrays (numpy arrays, Tensors, torch tensors, lists) into the
        parameters, in place. Everything is checked first: a missing, unexpected or
        mis-shaped key, or a non-finite value, raises ValueError and changes nothing.

        Example:
            >>> a, b = Linear(3, 2), Linear(3, 2)
            >>> b.load_state_dict(a.state_dict())
            >>> bool((a.weight.data == b.weight.data).all())
            True
        """
        if not isinstance(state, Mapping):
            raise TypeError(f"load_state_dict: expected a mapping of name -> array, got "
                            f"{type(state).__name__}")
        own = dict(self.named_parameters())
        problems = [f"missing keys {[k for k in own if k not in state]}"] if any(
            k not in state for k in own) else []
        if any(k not in own for k in state):
            problems.append(f"unexpected keys {[k for k in state if k not in own]}")
        arrays = {}
        for name, p in own.items():
            if name not in state:
                continue
            value = state[name]
            value = value.detach() if hasattr(value, "detach") else value  # torch, Tensor
            try:
                array = np.asarray(value, dtype=p.dtype)
            except (TypeError, ValueError) as exc:
                problems.append(f"{name} is not an array of numbers ({exc})")
                continue
            if array.shape != p.shape:
                problems.append(f"{name} has shape {array.shape}, expected {p.shape}")
            elif not np.isfinite(array).all():
                problems.append(f"{name} holds non-finite values (nan or inf)")
            else:
                arrays[name] = array
        if problems:
            raise ValueError(f"load_state_dict ({type(self).__name__}): " + "; ".join(problems))
        for name, p in own.items():
            p.data[...] = arrays[name]  # in place: views of the data stay valid

    def train(self, mode: bool = True) -> TensorModule:
        """Training mode (dropout on) for this module and its children; returns self."""
        self.training = bool(mode)
        for _, child in self.named_children():
            child.train(mode)
        return self

    def eval(self) -> TensorModule:
        """Evaluation mode (dropout off); returns self."""
        return self.train(False)

    def __call__(self, x: Tensor) -> Tensor:
        return self.forward(x)

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define forward(x)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"

    def extra_repr(self) -> str:
        return ""

    def architecture(self) -> dict[str, Any]:
        """The layer's type and constructor arguments, as JSON values: what ``chaingrad.save``
        stores so that ``chaingrad.load`` can rebuild the layer (of ``LAYER_TYPES``).

        Example:
            >>> Linear(2, 3).architecture()
            {'type': 'Linear', 'in_features': 2, 'out_features': 3, 'bias': True}
        """
        name = type(self).__name__
        if type(self).__module__ != __name__ or name not in LAYER_TYPES:
            raise TypeError(f"architecture: cannot describe {name}; save and load rebuild "
                            f"only {', '.join(LAYER_TYPES)}")
        return {"type": name, **self._arguments()}

    def _arguments(self) -> dict[str, Any]:
        """The constructor arguments (none for a layer without any)."""
        return {}


def _uniform(shape: tuple[int, ...], bound: float, dtype: Any) -> Tensor:
    return Tensor(_rng.uniform(-bound, bound, size=shape).astype(dtype), requires_grad=True)


def _check_input(x: Any, where: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return Tensor(x)
    raise TypeError(f"{where}: expected a Tensor or an array, got {type(x).__name__}")


class Linear(TensorModule):
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
        self._params = {"weight": self.weight, "bias": self.bias}

    def forward(self, x: Tensor) -> Tensor:
        x = _check_input(x, "Linear")
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected an input whose last dimension is "
                             f"{self.in_features}, got shape {x.shape}")
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")

    def _arguments(self) -> dict[str, Any]:
        return {"in_features": int(self.in_features), "out_features": int(self.out_features),
                "bias": self.bias is not None}


class Conv2d(TensorModule):
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
        (2, 8, 8, 8)
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
        self._params = {"weight": self.weight, "bias": self.bias}

    def forward(self, x: Tensor) -> Tensor:
        return conv2d(_check_input(x, "Conv2d"), self.weight, self.bias, self.stride,
                      self.padding)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")

    def _arguments(self) -> dict[str, Any]:
        return {"in_channels": int(self.in_channels), "out_channels": int(self.out_channels),
                "kernel_size": list(self.kernel_size), "stride": list(self.stride),
                "padding": list(self.padding), "bias": self.bias is not None}


class MaxPool2d(TensorModule):
    """The largest entry of each window, as torch.nn.MaxPool2d (stride = kernel by default)."""

    def __init__(self, kernel_size: Any, stride: Any = None):
        self.kernel_size = _pair(kernel_size, "MaxPool2d: kernel_size", 1)
        self.stride = self.kernel_size if stride is None else _pair(stride, "MaxPool2d: stride",
                                                                     1)

    def forward(self, x: Tensor) -> Tensor:
        return max_pool2d(_check_input(x, "MaxPool2d"), self.kernel_size, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}"

    def _arguments(self) -> dict[str, Any]:
        return {"kernel_size": list(self.kernel_size), "stride": list(self.stride)}


class Flatten(TensorModule):
    """Merge the axes from ``start_dim`` (default 1: keep the batch axis) into one."""

    def __init__(self, start_dim: int = 1):
        self.start_dim = start_dim

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Flatten").flatten(self.start_dim)

    def _arguments(self) -> dict[str, Any]:
        return {"start_dim": int(self.start_dim)}


class ReLU(TensorModule):
    """max(0, x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "ReLU").relu()


class Tanh(TensorModule):
    """tanh(x), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Tanh").tanh()


class Sigmoid(TensorModule):
    """1 / (1 + exp(-x)), elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Sigmoid").sigmoid()


class Identity(TensorModule):
    """x itself (a placeholder that keeps a Sequential's numbering, as torch.nn.Identity)."""

    def forward(self, x: Tensor) -> Tensor:
        return _check_input(x, "Identity")


class Dropout(TensorModule):
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
        keep = (_rng.random(x.shape) >= self.p).astype(x.dtype)
        return x * (keep / (1 - self.p))

    def extra_repr(self) -> str:
        return f"p={self.p}"

    def _arguments(self) -> dict[str, Any]:
        return {"p": self.p}


class Sequential(TensorModule):
    """Modules applied in order; child i is named str(i), as in torch.nn.Sequential.

    Example:
        >>> model = Sequential(Linear(2, 4), Tanh(), Linear(4, 1))
        >>> len(model), type(model[1]).__name__
        (3, 'Tanh')
    """

    def __init__(self, *modules: TensorModule):
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: argument {i} must be a module, got "
                                f"{type(m).__name__}")
        self._children = {str(i): m for i, m in enumerate(modules)}

    def forward(self, x: Tensor) -> Tensor:
        for module in self._children.values():
            x = module(x)
        return x

    def __getitem__(self, i: int) -> TensorModule:
        return list(self._children.values())[i]

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self) -> Iterator[TensorModule]:
        return iter(self._children.values())

    def _arguments(self) -> dict[str, Any]:
        for name, m in self._children.items():
            if type(m).__module__ != __name__ or type(m).__name__ not in LAYER_TYPES:
                raise TypeError(f"architecture: Sequential layer {name} is a "
                                f"{type(m).__name__}; save and load rebuild only "
                                f"{', '.join(LAYER_TYPES)}")
        return {"layers": [m.architecture() for m in self._children.values()]}

    def __repr__(self) -> str:
        inner = "".join(f"\n  ({name}): {m!r}" for name, m in self._children.items())
        return f"Sequential({inner}\n)"


def _check_sizes(where: str, **sizes: Any) -> None:
    for name, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{where}: {name} must be a positive int, got {n!r}")
