"""Adam (torch.optim.adam): the update rule ``adam``, a pure function with torch's
pseudo-code (AdamW's too, with ``decoupled_weight_decay``), and the optimizer ``Adam``."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer, check_hyperparameter

__all__ = ["Adam", "adam"]


def adam(x: Any, g: Any, state: dict[str, Any], *, lr: float, betas: tuple[float, float],
         eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
         decoupled_weight_decay: bool) -> tuple[Any, dict[str, Any]]:
    """One step of torch.optim.Adam (AdamW: ``decoupled_weight_decay``), with ``t`` the
    step count (from 1), ``m`` and ``v`` the running averages of g and g**2::

        g = -g                                   if maximize
        x = x * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * x                 otherwise
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        v_max = max(v_max, v)                    if amsgrad (used in place of v below)
        x = x - (lr / (1 - beta1**t)) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
    """
    if maximize:
        g = -g
    if decoupled_weight_decay:
        x = x * (1 - lr * weight_decay)
    elif weight_decay != 0:
        g = g + weight_decay * x
    beta1, beta2 = betas
    t = state.get("step", 0) + 1
    m = state.get("exp_avg", 0.0 * g)
    v = state.get("exp_avg_sq", 0.0 * g)
    m = m + (1 - beta1) * (g - m)  # = beta1 * m + (1 - beta1) * g, as torch's lerp
    v = beta2 * v + (1 - beta2) * g * g
    new_state = {"step": t, "exp_avg": m, "exp_avg_sq": v}
    if amsgrad:
        v = _maximum(state.get("max_exp_avg_sq", 0.0 * g), v)
        new_state["max_exp_avg_sq"] = v
    step_size = lr / (1 - beta1**t)
    denom = v**0.5 / math.sqrt(1 - beta2**t) + eps
    return x - step_size * (m / denom), new_state


def _maximum(a: Any, b: Any) -> Any:
    if isinstance(b, float):
        return max(a, b)
    import numpy as np

    return np.maximum(a, b)


class Adam(Optimizer):
    """Adam (torch.optim.Adam; the rule: ``adam``): step sizes from running averages of g
    and g**2.

    Args:
        params: The parameters, or parameter groups (see ``Optimizer``).
        lr: The learning rate (>= 0).
        betas: The decay rates of the two averages, each in [0, 1).
        eps: Added to the denominator for stability (>= 0).
        weight_decay: L2 penalty added to the gradient (>= 0), or with
            ``decoupled_weight_decay`` AdamW's decay of the weights.
        amsgrad: Divide by the largest average of g**2 so far (AMSGrad).
        maximize: Climb the objective instead of descending it.
        foreach, capturable, differentiable, fused: As for ``SGD``.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> opt = Adam([x], lr=0.1)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 6)   # Adam's first step moves by about lr
        2.9
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable,
                                  "fused": fused,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        name, betas = self._name, group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        for i, b in enumerate(betas):
            check_hyperparameter(name, f"beta parameter at index {i}", f"betas[{i}]", b,
                   lambda v: 0 <= v < 1, "in [0, 1)")
        check_hyperparameter(name, "epsilon value", "eps", group["eps"])
        check_hyperparameter(name, "weight_decay value", "weight_decay", group["weight_decay"])

    def _update(self, x, g, state, group):
        return adam(x, g, state, lr=group["lr"], betas=tuple(group["betas"]),
                    eps=group["eps"], weight_decay=group["weight_decay"],
                    amsgrad=group["amsgrad"], maximize=group["maximize"],
                    decoupled_weight_decay=group["decoupled_weight_decay"])
