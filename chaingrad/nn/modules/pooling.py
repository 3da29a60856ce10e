"""The pooling layers, as torch.nn.modules.pooling: ``MaxPool2d``, ``AvgPool2d`` and
``AdaptiveAvgPool2d`` (through ``F.max_pool2d``, ``F.avg_pool2d`` and
``F.adaptive_avg_pool2d``).

Example:
    >>> import chaingrad
    >>> MaxPool2d(2)(chaingrad.ones(1, 1, 4, 4)).shape
    chaingrad.Size([1, 1, 2, 2])
"""

from __future__ import annotations

from typing import Any

from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]


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


class AvgPool2d(Module):
    """The mean of each window, as torch.nn.AvgPool2d (``F.avg_pool2d``: stride = kernel by
    default, ``padding``, ``ceil_mode``, ``count_include_pad``, ``divisor_override``).

    Example:
        >>> import chaingrad
        >>> AvgPool2d(2)(chaingrad.ones(1, 1, 4, 4)).tolist()
        [[[[1.0, 1.0], [1.0, 1.0]]]]
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None):
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride  # as given: torch prints it
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """The mean of each of (oh, ow) windows that tile the input, as
    torch.nn.AdaptiveAvgPool2d (``F.adaptive_avg_pool2d``; None in ``output_size`` keeps
    the input's size).

    Example:
        >>> import chaingrad
        >>> AdaptiveAvgPool2d((1, 1))(chaingrad.ones(2, 3, 5, 5)).shape
        chaingrad.Size([2, 3, 1, 1])
    """

    def __init__(self, output_size: Any):
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
