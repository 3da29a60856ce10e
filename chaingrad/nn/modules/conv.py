"""The convolution layers, as torch.nn.modules.conv: ``Conv1d`` and ``Conv2d`` (through
``F.conv1d`` and ``F.conv2d``); ``Conv1d``'s ``padding_mode`` other than 'zeros' is
``F.pad`` first, then a convolution without padding, as torch's."""

from __future__ import annotations

from typing import Any

from ...tensor_engine.tensor import Tensor
from .. import functional as F
from ..functional import not_yet
from .linear import Linear
from .module import Module
from .utils import check_sizes, new_parameter

__all__ = ["Conv1d", "Conv2d"]

PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def check_padding_mode(padding_mode: Any) -> str:
    """A convolution layer's ``padding_mode``, refused in torch's words if not one of
    ``PADDING_MODES``."""
    if padding_mode not in PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {list(PADDING_MODES)}, but got "
                         f"padding_mode='{padding_mode}'")
    return padding_mode


def pad_widths(padding: Any, kernel: tuple[int, ...]) -> tuple[int, ...]:
    """``F.pad``'s widths (the last axis first) for a layer's padding: a pair or an int
    per axis, or 'same' / 'valid' for that kernel (the odd one after, as torch)."""
    if padding == "valid":
        return (0, 0) * len(kernel)
    sides = F.same_padding(kernel) if padding == "same" else tuple((p, p) for p in padding)
    return tuple(n for side in reversed(sides) for n in side)


class Conv2d(Module):
    """2-D convolution over (N, C, H, W) or (C, H, W) input, as torch.nn.Conv2d.

    Args:
        in_channels, out_channels: C and O.
        kernel_size, stride: An int or an (h, w) pair.
        padding: An int, an (h, w) pair of zeros on each side, 'valid' (none) or 'same'
            (the output as large as the input; stride 1 only, as in torch).
        dilation, groups, padding_mode: 1, 1 and 'zeros' only (anything else is not in
            chaingrad yet; ``Conv1d`` has torch's padding modes).
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
        if padding_mode != "zeros":  # a model file would not keep it: refused until it can
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
        """As torch prints it: padding only if there is some, bias only if there is none,
        the padding mode only if not 'zeros'."""
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * len(self.kernel_size):
            text += f", padding={self.padding}"
        text += ", bias=False" if self.bias is None else ""
        return text + ("" if self.padding_mode == "zeros" else
                       f", padding_mode={self.padding_mode}")


class Conv1d(Module):
    """1-D convolution over (N, C, L) or (C, L) input, as torch.nn.Conv1d: its filters are
    (out_channels, in_channels, k), drawn as torch draws them (``Conv2d``'s distribution,
    the fan-in in_channels * k), its arguments ``Conv2d``'s with one int (or a 1-tuple)
    for each size, and ``padding_mode`` 'zeros', or the input's entries mirrored
    ('reflect'), its edge repeated ('replicate') or wrapped around ('circular'), as
    ``F.pad``'s modes.

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0)
        >>> conv = Conv1d(2, 4, 3, padding=1)
        >>> conv, tuple(conv(chaingrad.zeros(5, 2, 10)).shape)
        (Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,)), (5, 4, 10))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None):
        check_sizes("Conv1d", in_channels=in_channels, out_channels=out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = (F.single(kernel_size, "Conv1d: kernel_size", 1),)
        self.stride = (F.single(stride, "Conv1d: stride", 1),)
        if isinstance(padding, str):
            F.conv2d_options("Conv1d", (1, self.stride[0]), padding, 1, 1)
            self.padding: tuple[int, ...] | str = padding
        else:
            self.padding = (F.single(padding, "Conv1d: padding", 0),)
        self.dilation = (F.single(dilation, "Conv1d: dilation", 1),)
        if self.dilation != (1,):
            raise not_yet(f"Conv1d with dilation={dilation!r}")
        if groups != 1:
            raise not_yet(f"Conv1d with groups={groups!r}")
        self.groups = groups
        self.padding_mode = check_padding_mode(padding_mode)
        shape = (out_channels, in_channels) + self.kernel_size
        self.weight = new_parameter("Conv1d", shape, device, dtype)
        self.register_parameter("bias", new_parameter("Conv1d", (out_channels,), device, dtype)
                                if bias else None)
        self.reset_parameters()

    reset_parameters = Linear.reset_parameters

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if self.padding_mode != "zeros":
            widths = pad_widths(self.padding, self.kernel_size)
            return F.conv1d(F.pad(input, widths, self.padding_mode), self.weight, self.bias,
                            self.stride, 0)
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding)

    extra_repr = Conv2d.extra_repr
