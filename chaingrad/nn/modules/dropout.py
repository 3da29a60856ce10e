"""The dropout layers, as torch.nn.modules.dropout: ``Dropout`` (through ``F.dropout``)."""

from __future__ import annotations

from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Dropout"]


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
        return F.dropout(tensor_argument(input, "Dropout"), self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
