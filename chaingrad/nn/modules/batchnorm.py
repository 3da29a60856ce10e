"""The batch norms, as torch.nn.modules.batchnorm: ``BatchNorm1d`` and ``BatchNorm2d``,
their running statistics kept as buffers (through ``F.batch_norm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .. import init
from .module import Module
from .utils import check_sizes, new_parameter, new_zeros

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share (torch's ``_NormBase`` and ``_BatchNorm``):
    the parameters, the running statistics as buffers, and ``forward``."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True):
        where = type(self).__name__
        check_sizes(where, num_features=num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = new_parameter(where, (num_features,), device, dtype)
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = new_parameter(where, (num_features,), device, dtype)
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", new_zeros(where, (num_features,), device, dtype))
            self.register_buffer("running_var", new_zeros(where, (num_features,), device, dtype))
            self.register_buffer("num_batches_tracked", new_zeros(where, (), device, np.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """The running mean back to 0, the variance to 1, the count of batches to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics reset, the weight back to ones, the bias to zeros."""
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, x: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """In training, the batch's statistics (the running ones updated, and
        ``num_batches_tracked`` counted); in evaluation, the running ones (the batch's if
        there are none), as torch's. ``momentum=None`` makes the running statistics the
        plain average of every batch so far."""
        x = tensor_argument(input, type(self).__name__)
        self._check_input_dim(x)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(x, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input over the batch (and L), per
    channel, as torch.nn.BatchNorm1d (through ``F.batch_norm``).

    Args:
        num_features: C, the channels.
        eps: Added to the variance before its square root.
        momentum: How far the running statistics move toward each batch's (None: their
            cumulative average).
        affine: Whether to learn ``weight`` (starting at 1) and ``bias`` (at 0).
        track_running_stats: Whether to keep ``running_mean`` (starting at 0),
            ``running_var`` (at 1) and ``num_batches_tracked`` (an int64 count) as buffers,
            saved in ``state_dict()``; without them the batch's statistics serve in
            evaluation too.
        device, dtype: As for ``Linear``.
        bias: Whether to learn ``bias`` (with ``affine``), keyword only.

    Example:
        >>> bn = BatchNorm1d(2)
        >>> y = bn(Tensor([[1.0, 10.0], [3.0, 30.0]]))
        >>> [[round(v, 3) for v in row] for row in y.tolist()]
        [[-1.0, -1.0], [1.0, 1.0]]
        >>> bn.running_mean, bn.num_batches_tracked
        (tensor([0.2000, 2.0000]), tensor(1))
    """

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {x.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input over the batch and the positions, per
    channel, as torch.nn.BatchNorm2d (the arguments and buffers as ``BatchNorm1d``'s).

    Example:
        >>> bn = BatchNorm2d(3).eval()
        >>> bn(Tensor(np.ones((2, 3, 4, 4)))).shape
        chaingrad.Size([2, 3, 4, 4])
    """

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim != 4:
            raise ValueError(f"expected 4D input (got {x.ndim}D input)")
