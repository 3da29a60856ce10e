"""The pooling layers, as torch.nn.modules.pooling: ``MaxPool2d`` (through ``F.max_pool2d``).

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

__all__ = ["MaxPool2d"]


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
