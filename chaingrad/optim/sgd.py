"""Stochastic gradient descent (torch.optim.sgd): the update rule ``sgd``, a pure function
with torch's pseudo-code, and the optimizer ``SGD`` that applies it to every parameter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer, check_hyperparameter

__all__ = ["SGD", "sgd"]


def sgd(x: Any, g: Any, state: dict[str, Any], *, lr: float, momentum: float,
        dampening: float, weight_decay: float, nesterov: bool, maximize: bool,
        ) -> tuple[Any, dict[str, Any]]:
    """One step of torch.optim.SGD, with ``b`` the momentum buffer::

        g = -g                                  if maximize
        g = g + weight_decay * x
        b = g                                   (first step)
        b = momentum * b + (1 - dampening) * g  (later steps)
        g = g + momentum * b   if nesterov   else   g = b      (when momentum != 0)
        x = x - lr * g

    Example:
        >>> sgd(1.0, 0.5, {}, lr=0.1, momentum=0.9, dampening=0, weight_decay=0,
        ...     nesterov=False, maximize=False)
        (0.95, {'momentum_buffer': 0.5})
    """
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * x
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:  # a copy: an array gradient may later be changed in place
            buf = g if isinstance(g, float) else g.copy()
        else:
            buf = momentum * buf + (1 - dampening) * g
        state = {"momentum_buffer": buf}
        g = g + momentum * buf if nesterov else buf
    new_x = g * -lr  # x - lr * g, bit for bit, with one temporary array rather than two
    new_x += x
    return new_x, state


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum and weight decay (torch.optim.SGD;
    the rule: ``sgd``).

    Args:
        params: The parameters, or parameter groups (see ``Optimizer``).
        lr: The learning rate (>= 0).
        momentum: The momentum factor (>= 0).
        dampening: Scales down the gradient added to the momentum buffer (>= 0).
        weight_decay: L2 penalty added to the gradient (>= 0).
        nesterov: Use Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: Climb the objective instead of descending it.
        foreach, differentiable, fused: torch's implementation switches; foreach is
            accepted (it changes nothing here), the others only at their defaults.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> opt = SGD([x], lr=0.1)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 10)
        2.4
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize, "foreach": foreach,
                                  "differentiable": differentiable, "fused": fused})

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        momentum = check_hyperparameter("SGD", "momentum value", "momentum", group["momentum"])
        check_hyperparameter("SGD", "weight_decay value", "weight_decay", group["weight_decay"])
        dampening = check_hyperparameter("SGD", "dampening value", "dampening", group["dampening"])
        if group["nesterov"] and (momentum <= 0 or dampening != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, "
                             f"got momentum={momentum}, dampening={dampening}")

    def _update(self, x, g, state, group):
        return sgd(x, g, state, lr=group["lr"], momentum=group["momentum"],
                   dampening=group["dampening"], weight_decay=group["weight_decay"],
                   nesterov=group["nesterov"], maximize=group["maximize"])
