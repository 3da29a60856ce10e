"""AdamW (torch.optim.adamw): Adam with decoupled weight decay. Its update rule is ``adam``
with ``decoupled_weight_decay=True`` (in ``adam.py``, beside ``Adam``, which AdamW extends); its
``step()`` is every optimizer's, ``Optimizer.step`` (in ``optimizer.py``), which checks each
gradient, computes every update with the rule, and only then writes them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW): ``x = x * (1 - lr * wd)``
    first, then Adam's step without adding ``wd * x`` to the gradient.

    Args:
        params, lr, betas, eps, amsgrad, maximize, ...: As for ``Adam``.
        weight_decay: The decoupled decay rate (>= 0; default 1e-2, as in PyTorch).

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> opt = AdamW([x], lr=0.1, weight_decay=0.5)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 6)   # 3 * (1 - 0.1 * 0.5) - 0.1
        2.75
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
