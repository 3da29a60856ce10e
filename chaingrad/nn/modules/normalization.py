"""The normalization layers other than the batch norms, as torch.nn.modules.normalization:
``LayerNorm`` (through ``F.layer_norm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module
from .utils import check_sizes, new_parameter

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """Each slice of the last axes (``normalized_shape``) normalized to mean 0 and variance
    1, then scaled and shifted elementwise, as torch.nn.LayerNorm (through
    ``F.layer_norm``).

    Args:
        normalized_shape: The shape of the trailing axes normalized (an int for the last).
        eps: Added to the variance before its square root.
        elementwise_affine: Whether to learn ``weight`` and ``bias``.
        bias: Whether to learn ``bias`` (with ``elementwise_affine``).
        device, dtype: As for ``Linear``.

    Attributes:
        weight: Of ``normalized_shape``, starting at 1 (or None).
        bias: Of ``normalized_shape``, starting at 0 (or None).

    Example:
        >>> norm = LayerNorm(3)
        >>> norm
        LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
        >>> [round(v, 4) for v in norm(Tensor([[1.0, 2.0, 3.0]])).tolist()[0]]
        [-1.2247, 0.0, 1.2247]
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None):
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        check_sizes("LayerNorm", **{f"normalized_shape[{i}]": n
                                     for i, n in enumerate(self.normalized_shape)})
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = new_parameter("LayerNorm", self.normalized_shape, device, dtype)
        else:
            self.register_parameter("weight", None)
        if elementwise_affine and bias:
            self.bias = new_parameter("LayerNorm", self.normalized_shape, device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight back to ones, the bias to zeros (torch's start)."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
                f"{self.elementwise_affine}, bias={self.bias is not None}")
