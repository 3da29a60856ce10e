"""The convolution layers, as torch.nn.modules.conv: ``Conv2d`` (through ``F.conv2d``)."""

from __future__ import annotations

from typing import Any

from ...tensor_engine.tensor import Tensor
from .. import functional as F
from ..functional import not_yet
from .linear import Linear
from .module import Module
from .utils import check_sizes, new_parameter

__all__ = ["Conv2d"]


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
        check_sizes("Conv2d", in_channels=in_channels, out_channels=out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = F.pair(kernel_size, "Conv2d: kernel_size", 1)
        self.stride, self.padding, self.dilation = F.conv2d_options("Conv2d", stride, padding,
                                                                    dilation, groups)
        if padding_mode != "zeros":
            raise not_yet(f"Conv2d with padding_mode={padding_mode!r}")
        self.groups, self.padding_mode = groups, padding_mode
        shape = (out_channels, in_channels) + self.kernel_size
        self.weight = new_parameter("Conv2d", shape, device, dtype)
        self.register_parameter("bias", new_parameter("Conv2d", (out_channels,), device, dtype)
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
