"""The affine layers, as torch.nn.modules.linear: ``Linear`` (y = x @ weight.T + bias),
``Identity``, the placeholder that passes its input through, and
``NonDynamicallyQuantizableLinear``, the Linear of ``MultiheadAttention.out_proj``.

Example:
    >>> import chaingrad
    >>> _ = chaingrad.manual_seed(0)
    >>> Linear(4, 3)(chaingrad.ones(5, 4)).shape
    chaingrad.Size([5, 3])
"""

from __future__ import annotations

import math
from typing import Any

from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module
from .utils import check_sizes, new_parameter

__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]


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
        check_sizes("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        self.weight = new_parameter("Linear", (out_features, in_features), device, dtype)
        self.register_parameter("bias", new_parameter("Linear", (out_features,), device, dtype)
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
        x = tensor_argument(input, "Linear")
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"Linear: expected an input whose last dimension is "
                             f"{self.in_features}, got shape {tuple(x.shape)}")
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Identity(Module):
    """x itself (a placeholder that keeps a Sequential's numbering, as torch.nn.Identity;
    arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return tensor_argument(input, "Identity")


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear``, under the name torch gives ``MultiheadAttention.out_proj`` (torch's
    quantization tools leave a layer of this type alone; chaingrad has none, so it is a
    Linear in all but its name). ``chaingrad.nn`` serves it as every module of this
    package; ``torch.nn`` keeps it in ``torch.nn.modules.linear`` only."""
