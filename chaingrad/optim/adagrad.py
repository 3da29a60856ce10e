"""Adagrad (torch.optim.adagrad): the update rule ``adagrad``, a pure function with torch's
pseudo-code, and the optimizer ``Adagrad`` that applies it to every parameter."""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Real
from typing import Any

from .optimizer import Optimizer, check_hyperparameter

__all__ = ["Adagrad", "adagrad"]


def adagrad(x: Any, g: Any, state: dict[str, Any], *, lr: float, lr_decay: float,
            weight_decay: float, initial_accumulator_value: float, eps: float,
            maximize: bool) -> tuple[Any, dict[str, Any]]:
    """One step of torch.optim.Adagrad, with ``t`` the step count (from 1) and ``s`` the
    sum of every g**2 so far (from ``initial_accumulator_value``)::

        g = -g                                   if maximize
        g = g + weight_decay * x
        lr_t = lr / (1 + (t - 1) * lr_decay)
        s = s + g**2
        x = x - lr_t * g / (sqrt(s) + eps)

    Example:
        >>> adagrad(1.0, 0.5, {}, lr=0.1, lr_decay=0, weight_decay=0,
        ...         initial_accumulator_value=0, eps=0.0, maximize=False)
        (0.9, {'step': 1, 'sum': 0.25})
    """
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * x
    t = state.get("step", 0) + 1
    lr_t = lr / (1 + (t - 1) * lr_decay)
    total = state.get("sum", 0.0 * g + initial_accumulator_value) + g * g
    return x - lr_t * (g / (total**0.5 + eps)), {"step": t, "sum": total}


class Adagrad(Optimizer):
    """Adagrad (torch.optim.Adagrad; the rule: ``adagrad``): each entry's step divided by
    the root of the sum of its squared gradients so far.

    Args:
        params: The parameters, or parameter groups (see ``Optimizer``).
        lr: The learning rate (>= 0; default 1e-2, as in PyTorch).
        lr_decay: The rate's decay per step: ``lr / (1 + (t - 1) * lr_decay)`` (>= 0).
        weight_decay: L2 penalty added to the gradient (>= 0).
        initial_accumulator_value: Where each sum of squares starts (>= 0).
        eps: Added to the denominator for stability (>= 0).
        maximize: Climb the objective instead of descending it.
        foreach, differentiable, fused: As for ``SGD``.

    The state starts when the optimizer is made, as torch's: ``step`` 0 and ``sum`` full
    of ``initial_accumulator_value`` for each parameter (a group added later too).

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> opt = Adagrad([x], lr=0.1)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 6)   # the first step moves each entry by lr
        2.9
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None):
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "fused": fused})

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """As ``Optimizer.add_param_group``; each new parameter's state starts at once."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        start = group["initial_accumulator_value"]
        for p in group["params"]:
            total = float(start) if isinstance(p._value, Real) else 0 * p._value + start
            self.state[p] = {"step": 0, "sum": total}

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for what, arg in (("lr_decay value", "lr_decay"), ("weight_decay value", "weight_decay"),
                          ("initial_accumulator_value value", "initial_accumulator_value"),
                          ("epsilon value", "eps")):
            check_hyperparameter("Adagrad", what, arg, group[arg])

    def _update(self, x, g, state, group):
        return adagrad(x, g, state, lr=group["lr"], lr_decay=group["lr_decay"],
                       weight_decay=group["weight_decay"],
                       initial_accumulator_value=group["initial_accumulator_value"],
                       eps=group["eps"], maximize=group["maximize"])
