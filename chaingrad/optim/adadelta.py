"""Adadelta (torch.optim.adadelta): the update rule ``adadelta``, a pure function with
torch's pseudo-code, and the optimizer ``Adadelta`` that applies it to every parameter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer, check_hyperparameter

__all__ = ["Adadelta", "adadelta"]


def adadelta(x: Any, g: Any, state: dict[str, Any], *, lr: float, rho: float, eps: float,
             weight_decay: float, maximize: bool) -> tuple[Any, dict[str, Any]]:
    """One step of torch.optim.Adadelta, with ``v`` the running average of g**2 and ``u``
    that of the squared updates::

        g = -g                                   if maximize
        g = g + weight_decay * x
        v = rho * v + (1 - rho) * g**2
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta**2
        x = x - lr * delta

    Example:
        >>> x, state = adadelta(1.0, 0.5, {}, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0,
        ...                     maximize=False)
        >>> round(x, 6), state['step']   # the first step: sqrt(eps / 0.1)
        (0.996838, 1)
    """
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * x
    square_avg = state.get("square_avg", 0.0 * g) * rho + (1 - rho) * (g * g)
    acc_delta = state.get("acc_delta", 0.0 * g)
    delta = (acc_delta + eps) ** 0.5 / (square_avg + eps) ** 0.5 * g
    acc_delta = acc_delta * rho + (1 - rho) * (delta * delta)
    new_state = {"step": state.get("step", 0) + 1, "square_avg": square_avg,
                 "acc_delta": acc_delta}
    return x - lr * delta, new_state


class Adadelta(Optimizer):
    """Adadelta (torch.optim.Adadelta; the rule: ``adadelta``): steps scaled by the ratio of
    the running root mean squares of past updates and of gradients.

    Args:
        params: The parameters, or parameter groups (see ``Optimizer``).
        lr: Scales each step (>= 0; default 1.0, as in PyTorch).
        rho: The decay rate of the running averages, in [0, 1].
        eps: Added under both square roots (>= 0).
        weight_decay: L2 penalty added to the gradient (>= 0).
        maximize: Climb the objective instead of descending it.
        foreach, capturable, differentiable: As for ``SGD``.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> opt = Adadelta([x])
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(3.0 - x.data, 6)   # the first step: sqrt(eps / (1 - rho))
        0.003162
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False):
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize,
                                  "capturable": capturable, "foreach": foreach,
                                  "differentiable": differentiable})

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        check_hyperparameter("Adadelta", "rho value", "rho", group["rho"],
                             lambda v: 0 <= v <= 1, "in [0, 1]")
        check_hyperparameter("Adadelta", "epsilon value", "eps", group["eps"])
        check_hyperparameter("Adadelta", "weight_decay value", "weight_decay",
                             group["weight_decay"])

    def _update(self, x, g, state, group):
        return adadelta(x, g, state, lr=group["lr"], rho=group["rho"], eps=group["eps"],
                        weight_decay=group["weight_decay"], maximize=group["maximize"])
