"""Reshaping layers, as torch.nn.modules.flatten: ``Flatten``."""

from __future__ import annotations

from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.tensor import Tensor
from .module import Module

__all__ = ["Flatten"]


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
        return tensor_argument(input, "Flatten").flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
