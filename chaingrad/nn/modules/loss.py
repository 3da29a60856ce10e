"""The loss modules, as torch.nn.modules.loss: each keeps its ``reduction`` (and a class
weight as a buffer) and calls its function of ``chaingrad.nn.functional``.

Example:
    >>> import chaingrad
    >>> MSELoss()(chaingrad.tensor([1.0, 3.0]), chaingrad.tensor([0.0, 1.0])).item()
    2.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "L1Loss", "MSELoss", "NLLLoss",
           "SmoothL1Loss"]


class _Loss(Module):
    """A loss module: its ``reduction``; a class weight given to it is a buffer, saved in
    ``state_dict()`` and converted by ``to()``, as torch's."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean"):
        self.reduction = F.reduction_of(size_average, reduce, reduction)


def _buffer_of(weight: Any) -> Any:
    """A loss's weight as its buffer: a Tensor (an array becomes one, sharing its data)."""
    return Tensor(weight) if isinstance(weight, np.ndarray) else weight


class MSELoss(_Loss):
    """(input - target) ** 2, reduced (``reduction`` 'mean', 'sum' or 'none').

    Example:
        >>> MSELoss(reduction='sum')(Tensor([1.0, 3.0]), Tensor([0.0, 1.0])).item()
        5.0
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """``F.cross_entropy``: class indices or class probabilities as targets."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer_of(weight))
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    """``F.nll_loss``: the log-probabilities of the target classes, negated."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer_of(weight))
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """``F.binary_cross_entropy_with_logits``, with ``weight`` and ``pos_weight``."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _buffer_of(weight))
        self.register_buffer("pos_weight", _buffer_of(pos_weight))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class L1Loss(_Loss):
    """``F.l1_loss``: |input - target|, reduced.

    Example:
        >>> L1Loss()(Tensor([1.0, 3.0]), Tensor([0.0, 1.0])).item()
        1.5
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """``F.smooth_l1_loss``: squared below ``beta``, |d| above, reduced.

    Example:
        >>> SmoothL1Loss(beta=0.5)(Tensor([0.25, 3.0]), Tensor([0.0, 0.0])).item()
        1.40625
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``F.huber_loss``: squared below ``delta``, ``delta`` times |d| above, reduced.

    Example:
        >>> HuberLoss(delta=2.0)(Tensor([0.5, 3.0]), Tensor([0.0, 0.0])).item()
        2.0625
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
