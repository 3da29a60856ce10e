"""``torch.nn.init``: fill a Tensor in place with numbers of a chosen distribution.

Each function writes into ``tensor``'s numbers (no graph is recorded, as under
``no_grad``) and returns the tensor. Random numbers come from ``generator=`` or the default
generator (``manual_seed``), and are torch's: the same seed fills a tensor with the same
numbers as torch's function of the same name.

Example:
    >>> import numpy as np
    >>> from chaingrad.nn import Parameter, manual_seed
    >>> w = Parameter(np.zeros((3, 4), dtype=np.float32))
    >>> _ = manual_seed(0)
    >>> _ = xavier_uniform_(w)
    >>> bound = (6 / (3 + 4)) ** 0.5
    >>> bool((abs(w.data) <= bound).all()), w.dtype
    (True, chaingrad.float32)
    >>> calculate_gain('relu') == 2 ** 0.5
    True
"""

from __future__ import annotations

import math
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import torch_names
from ..tensor_engine import sampling
from ..tensor_engine.tensor import Tensor

__all__ = [
    "calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_",
    "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
]

LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain torch recommends for a nonlinearity: 1 (linear, conv, sigmoid), 5/3 (tanh),
    sqrt(2) (relu), sqrt(2 / (1 + slope**2)) (leaky_relu, slope ``param`` or 0.01), 3/4
    (selu)."""
    if nonlinearity in LINEAR_FNS:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): the inputs and outputs of one unit, as torch counts them for a
    weight (out, in, *kernel); torch calls it ``init._calculate_fan_in_and_fan_out``.

    Example:
        >>> import chaingrad
        >>> fan_in_and_fan_out(chaingrad.zeros(8, 3, 5, 5))  # conv: 3 channels of 5 x 5 in
        (75, 200)
    """
    shape = tuple(_checked(tensor, "fan").shape)
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


_calculate_fan_in_and_fan_out = fan_in_and_fan_out  # torch's name, which torch code calls


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _checked(tensor: Any, where: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{where}: expected a Tensor, got {type(tensor).__name__}")
    return tensor


def _write(tensor: Tensor, numbers: Any) -> Tensor:
    """Put ``numbers`` into the tensor's own array (in place: views and optimizers that
    hold it see the change), in its dtype."""
    tensor._value[...] = np.asarray(numbers, dtype=tensor._value.dtype)
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with numbers drawn uniformly from [a, b), as ``Tensor.uniform_``
    (``sampling.draw_uniform``: u (b - a) + a for u uniform in [0, 1), rounded as torch's kernel
    rounds it)."""
    _checked(tensor, "uniform_")
    values = tensor._value
    return _write(tensor, sampling.draw_uniform(generator, values.shape, values.dtype, a, b,
                                           "nn.init.uniform_"))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None,
            ) -> Tensor:
    """Fill with numbers drawn from the normal distribution N(mean, std**2), as
    ``Tensor.normal_`` (``sampling.draw_normal``: the Box-Muller transform)."""
    _checked(tensor, "normal_")
    values = tensor._value
    return _write(tensor, sampling.draw_normal(generator, values.shape, values.dtype, mean, std,
                                          values.flags.c_contiguous, "nn.init.normal_"))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    _checked(tensor, "constant_")
    if isinstance(val, bool) or not isinstance(val, Real):
        raise TypeError(f"nn.init.constant_: val must be a number, got {type(val).__name__}")
    return _write(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot's uniform: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot's normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He's uniform: U(-b, b) with b = gain * sqrt(3 / fan), the gain of ``nonlinearity``
    (``a``: leaky_relu's negative slope). ``a = sqrt(5)`` gives b = 1 / sqrt(fan_in):
    ``Linear``'s and ``Conv2d``'s initial weights."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He's normal: N(0, std**2) with std = gain / sqrt(fan)."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        raise torch_names.missing("chaingrad.nn.init", name, torch_names.INIT)
