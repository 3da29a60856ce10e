"""RMSprop (torch.optim.rmsprop): the update rule ``rmsprop``, a pure function with
torch's pseudo-code, and the optimizer ``RMSprop``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .optimizer import Optimizer, check_hyperparameter

__all__ = ["RMSprop", "rmsprop"]


def rmsprop(x: Any, g: Any, state: dict[str, Any], *, lr: float, alpha: float, eps: float,
            weight_decay: float, momentum: float, centered: bool, maximize: bool,
            ) -> tuple[Any, dict[str, Any]]:
    """One step of torch.optim.RMSprop, with ``s`` the running average of g**2, ``a``
    that of g (centered) and ``b`` the momentum buffer::

        g = -g                                   if maximize
        g = g + weight_decay * x
        s = alpha * s + (1 - alpha) * g**2
        a = alpha * a + (1 - alpha) * g          if centered: avg = sqrt(s - a**2) + eps
        avg = sqrt(s) + eps                      otherwise
        b = momentum * b + g / avg;  x = x - lr * b      if momentum > 0
        x = x - lr * g / avg                             otherwise
    """
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * x
    square_avg = alpha * state.get("square_avg", 0.0 * g) + (1 - alpha) * g * g
    new_state = {"step": state.get("step", 0) + 1, "square_avg": square_avg}
    if centered:
        grad_avg = state.get("grad_avg", 0.0 * g)
        grad_avg = grad_avg + (1 - alpha) * (g - grad_avg)  # torch's lerp
        new_state["grad_avg"] = grad_avg
        avg = (square_avg - grad_avg * grad_avg) ** 0.5 + eps
    else:
        avg = square_avg**0.5 + eps
    if momentum > 0:
        buf = momentum * state.get("momentum_buffer", 0.0 * g) + g / avg
        new_state = _in_torchs_order(new_state, momentum_buffer=buf)
        return x - lr * buf, new_state
    return x - lr * (g / avg), new_state


def _in_torchs_order(state: dict[str, Any], momentum_buffer: Any) -> dict[str, Any]:
    """The state with its momentum buffer, its keys in the order of torch's state dict."""
    state = dict(state, momentum_buffer=momentum_buffer)
    order = ("step", "square_avg", "momentum_buffer", "grad_avg")
    return {key: state[key] for key in order if key in state}


class RMSprop(Optimizer):
    """RMSprop (torch.optim.RMSprop; the rule: ``rmsprop``): steps divided by the running
    root mean square of the gradient.

    Args:
        params: The parameters, or parameter groups (see ``Optimizer``).
        lr: The learning rate (>= 0; default 1e-2, as in PyTorch).
        alpha: The decay rate of the running average of g**2 (>= 0).
        eps: Added to the denominator for stability (>= 0).
        weight_decay: L2 penalty added to the gradient (>= 0).
        momentum: The momentum factor (>= 0).
        centered: Divide by the running variance of g instead of its mean square.
        maximize: Climb the objective instead of descending it.
        capturable, foreach, differentiable: As for ``SGD``.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> opt = RMSprop([x], lr=0.01)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 4)   # the first step: lr / sqrt(1 - alpha)
        2.9
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False):
        super().__init__(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                                  "centered": centered, "weight_decay": weight_decay,
                                  "capturable": capturable, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable})

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for what, arg in (("epsilon value", "eps"), ("momentum value", "momentum"),
                          ("weight_decay value", "weight_decay"), ("alpha value", "alpha")):
            check_hyperparameter("RMSprop", what, arg, group[arg])

    def _update(self, x, g, state, group):
        return rmsprop(x, g, state, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                       weight_decay=group["weight_decay"], momentum=group["momentum"],
                       centered=group["centered"], maximize=group["maximize"])
