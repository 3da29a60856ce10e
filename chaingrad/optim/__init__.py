"""Optimizers (SGD, Adam, AdamW, RMSprop) and learning-rate schedules (LinearLR, CosineLR);
torch's schedulers are in ``chaingrad.optim.lr_scheduler`` (``optim.lr_scheduler.StepLR``).

The optimizers are torch.optim's: the same arguments and defaults, ``param_groups`` with
torch's keys (change a group's ``lr`` between steps), ``add_param_group``, ``state`` keyed
by parameter, ``zero_grad(set_to_none=True)``, ``step(closure)`` and torch's printed form.
Each update rule is one pure function (``sgd``, ``adam``, ``rmsprop``) of a parameter's
data, its gradient and its state, written as plain arithmetic, so the same line of maths
updates a Value (a float) and a Tensor (a numpy array, updated in place so that views of it
stay valid). ``optimizer.lr`` reads the first group's rate and sets every group's (what
chaingrad's schedules use).

``step()`` checks every gradient before it changes anything: a gradient of another shape
than its parameter, or not of real numbers, raises ValueError or TypeError, and a nan or inf
one ``NonFiniteGradError``, each naming the parameter; no parameter (and no optimizer state)
is touched.

Example:
    >>> import random; random.seed(0)
    >>> from chaingrad.nn import MLP
    >>> model = MLP(2, [4, 1])
    >>> opt = SGD(model.parameters(), lr=1.0)
    >>> schedule = LinearLR(opt, start=1.0, end=0.1, steps=100)
    >>> for k in range(3):
    ...     loss = (model([1.0, -1.0]) - 1) ** 2
    ...     opt.zero_grad()
    ...     loss.backward()
    ...     opt.step()
    ...     schedule.step()
    >>> round(opt.lr, 3)
    0.973
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Real
from typing import TYPE_CHECKING, Any

from .. import torch_names
from ..engine import Value
from ..errors import NonFiniteGradError
from ..gradmode import enable_grad
from ..guards import is_finite, quiet_numpy

__all__ = ["SGD", "Adam", "AdamW", "CosineLR", "LRSchedule", "LinearLR", "NonFiniteGradError",
           "Optimizer", "RMSprop", "adam", "cosine_anneal", "linear_anneal", "rmsprop", "sgd"]


class Optimizer:
    """What every optimizer shares: ``param_groups``, ``state``, ``zero_grad()``, ``step()``.

    Args:
        params: Parameters (Values, e.g. ``model.parameters()``, or Tensors), or
            ``(name, parameter)`` pairs (``model.named_parameters()``: errors then name
            them, and each group has torch's ``param_names``), or dicts, one per parameter
            group, each with its ``'params'`` and any hyperparameters of its own. Nested
            lists of Values are flattened, and their Values named ``name[i, j]``.
        defaults: Each hyperparameter's value for a group that does not give its own.

    A subclass validates a group's hyperparameters in ``_check_group`` and writes its
    step with its pure update rule in ``_update(x, g, state, group) -> (new_x, new_state)``,
    which must not modify ``x``, ``g`` or ``state``: ``step()`` commits the results only
    once every parameter's update has been computed and checked.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]):
        self._name = type(self).__name__
        self.defaults = defaults
        self.state: dict[Any, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        self._names: dict[int, str | None] = {}
        if hasattr(params, "_prev") and not isinstance(params, Value):
            params = [params]  # one Tensor, as torch takes it
        if isinstance(params, (Value, str, dict)) or not isinstance(params, Iterable):
            raise TypeError(f"{self._name}: params must be an iterable of parameters (or of "
                            f"dicts, one per group), got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError(f"{self._name}: got an empty parameter list")
        if isinstance(groups[0], dict):
            for group in groups:
                self.add_param_group(group)
        else:
            self.add_param_group({"params": groups})

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with hyperparameters of its own (the defaults fill in
        the rest), as torch's: e.g. a layer fine-tuned at a lower ``lr``.

        Example:
            >>> a, b = Value(1.0), Value(2.0)
            >>> opt = SGD([a], lr=0.1)
            >>> opt.add_param_group({'params': [b], 'lr': 0.01})
            >>> [g['lr'] for g in opt.param_groups]
            [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"{self._name}: param_group must be a dict, got "
                            f"{type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError(f"{self._name}: a parameter group needs its 'params'")
        names, found = _collect(self._name, param_group["params"])
        if not found:
            raise ValueError(f"{self._name}: got an empty parameter list")
        group = dict(param_group, params=found)
        if all(n is not None for n in names):
            group["param_names"] = names
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self._check_group(group)
        known = set().union(*(map(id, g["params"]) for g in self.param_groups))
        if any(id(p) in known for p in found):
            raise ValueError("some parameters appear in more than one parameter group")
        for name, p in zip(names, found):
            self._names[id(p)] = name
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Refuse a group whose hyperparameters are not valid (torch's messages)."""
        _check(self._name, "learning rate", "lr", group["lr"])
        for flag in ("differentiable", "fused", "capturable"):
            if group.get(flag):
                raise NotImplementedError(f"{self._name}({flag}=True) is not in chaingrad yet")

    @property
    def lr(self) -> float:
        """The first group's learning rate; setting it sets every group's (and checks it:
        ``Invalid learning rate: -1.0``)."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        _check(self._name, "learning rate", "lr", value)
        for group in self.param_groups:
            group["lr"] = value

    @property
    def params(self) -> list[Any]:
        """Every parameter, group by group."""
        return [p for group in self.param_groups for p in group["params"]]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every gradient before the next ``backward()``: a Value's ``.grad`` to 0.0
        (micrograd's), a Tensor's to None (torch's default), or zeroed in place if
        ``set_to_none`` is False."""
        for p in self.params:
            if isinstance(p, Value) or isinstance(p.grad, Real):
                p.grad = 0.0
            elif set_to_none or p.grad is None:
                p.grad = None
            elif hasattr(p.grad, "_prev"):  # a Tensor gradient: detached, then zeroed
                grad = p.grad.detach() if p.grad._prev else p.grad
                grad._value[...] = 0
                p.grad = grad
            else:
                p.grad[...] = 0

    def step(self, closure: Any = None) -> Any:
        """Update every parameter that has a gradient, with the optimizer's rule; with a
        ``closure`` (which recomputes the loss and calls ``backward()``), call it first,
        with gradients on, and return its loss.

        Raises:
            NonFiniteGradError: A gradient (or the update it leads to) is nan or inf;
                nothing has been changed.

        Example:
            >>> x, y = Value(1.0), Value(2.0)
            >>> opt = SGD([x, y], lr=0.5)
            >>> (x * y).backward()   # x.grad = 2, y.grad = 1
            >>> opt.step()
            >>> x.data, y.data
            (0.0, 1.5)
            >>> y.grad = float("nan")
            >>> opt.step()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            chaingrad.errors.NonFiniteGradError: SGD.step: ... parameter 1 of 2 is nan; ...
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        updates, results = [], []
        with quiet_numpy(self.params):  # an overflow is reported below, not warned
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:  # a Tensor that took no part in the loss, as torch.optim
                        continue
                    if hasattr(g, "_prev"):  # a Tensor gradient, or a graph node
                        g = g._value
                    g = self._checked(p, g)
                    if not is_finite(g):
                        raise NonFiniteGradError(
                            f"{self._name}.step: the gradient of parameter {self._label(p)} "
                            f"is {_describe(g)}; no parameter was changed{self._hint(p)}")
                    updates.append((group, p, g))
            for group, p, g in updates:
                new_x, new_state = self._update(p._value, g, self.state.get(p, {}), group)
                if not is_finite(new_x):
                    raise NonFiniteGradError(
                        f"{self._name}.step: the update of parameter {self._label(p)} is not "
                        f"finite (is lr={group['lr']:g} too large?); no parameter was changed"
                        f"{self._hint(p)}", what="update")
                results.append((p, new_x, new_state))
        for p, new_x, new_state in results:
            _write(p, new_x)
            self.state[p] = new_state
        return loss

    def _checked(self, p: Any, g: Any) -> Any:
        """The gradient of ``p`` if it fits: a real number for a number, an array of real
        numbers of the parameter's shape (never broadcast) for an array; else a TypeError
        or ValueError naming the parameter."""
        if isinstance(p._value, Real):
            if isinstance(g, bool) or not isinstance(g, Real):
                raise TypeError(f"{self._where(p)} must be a real number like its data, got "
                                f"{type(g).__name__} {_short(g)}; no parameter was changed")
            return float(g)
        shape, kind = getattr(g, "shape", None), getattr(getattr(g, "dtype", None), "kind", "")
        if shape is None or not kind or kind not in "fiu":
            raise TypeError(f"{self._where(p)} must be an array of real numbers, got "
                            f"{getattr(g, 'dtype', type(g).__name__)}; no parameter was "
                            "changed")
        if shape != p._value.shape and tuple(shape) != tuple(p._value.shape):
            raise ValueError(f"{self._where(p)} has shape {tuple(shape)}, expected "
                             f"{tuple(p._value.shape)} (the parameter's; a gradient is never "
                             "broadcast); no parameter was changed")
        return g

    def _where(self, p: Any) -> str:
        return f"{self._name}.step: the gradient of parameter {self._label(p)}"

    def _update(self, x: Any, g: Any, state: dict[str, Any], group: dict[str, Any],
                ) -> tuple[Any, dict[str, Any]]:
        raise NotImplementedError(f"{self._name} must define _update(x, g, state, group)")

    def _label(self, p: Any) -> str:
        name = self._names.get(id(p))
        if name is not None:
            return name
        params = self.params
        index = next(i for i, q in enumerate(params) if q is p)
        return f"{index} of {len(params)}"

    def _hint(self, p: Any) -> str:
        """How to get names into the message, when the parameters came without them."""
        if self._names.get(id(p)) is not None:
            return ""
        return " (pass model.named_parameters() to the optimizer to see names)"

    def __repr__(self) -> str:
        """As torch prints an optimizer: each group's hyperparameters, sorted."""
        text = f"{self._name} ("
        for i, group in enumerate(self.param_groups):
            text += f"{chr(10) if i else ''}\nParameter Group {i}"
            for key in sorted(group):
                if key != "params":
                    text += f"\n    {key}: {group[key]}"
        return text + "\n)"


# ---- the update rules: pure functions of (x, g, state) and the hyperparameters ----


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
        new_state["momentum_buffer"] = buf
        return x - lr * buf, new_state
    return x - lr * (g / avg), new_state


def _maximum(a: Any, b: Any) -> Any:
    if isinstance(b, float):
        return max(a, b)
    import numpy as np

    return np.maximum(a, b)


# ---- the optimizers ----


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
        momentum = _check("SGD", "momentum value", "momentum", group["momentum"])
        _check("SGD", "weight_decay value", "weight_decay", group["weight_decay"])
        dampening = _check("SGD", "dampening value", "dampening", group["dampening"])
        if group["nesterov"] and (momentum <= 0 or dampening != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, "
                             f"got momentum={momentum}, dampening={dampening}")

    def _update(self, x, g, state, group):
        return sgd(x, g, state, lr=group["lr"], momentum=group["momentum"],
                   dampening=group["dampening"], weight_decay=group["weight_decay"],
                   nesterov=group["nesterov"], maximize=group["maximize"])


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
            _check(name, f"beta parameter at index {i}", f"betas[{i}]", b,
                   lambda v: 0 <= v < 1, "in [0, 1)")
        _check(name, "epsilon value", "eps", group["eps"])
        _check(name, "weight_decay value", "weight_decay", group["weight_decay"])

    def _update(self, x, g, state, group):
        return adam(x, g, state, lr=group["lr"], betas=tuple(group["betas"]),
                    eps=group["eps"], weight_decay=group["weight_decay"],
                    amsgrad=group["amsgrad"], maximize=group["maximize"],
                    decoupled_weight_decay=group["decoupled_weight_decay"])


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW): ``x = x * (1 - lr * wd)``
    first, then Adam's step without adding ``wd * x`` to the gradient.

    Args:
        params, lr, betas, eps, amsgrad, maximize, ...: As for ``Adam``.
        weight_decay: The decoupled decay rate (>= 0; default 1e-2, as in PyTorch).

    Example:
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
            _check("RMSprop", what, arg, group[arg])

    def _update(self, x, g, state, group):
        return rmsprop(x, g, state, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                       weight_decay=group["weight_decay"], momentum=group["momentum"],
                       centered=group["centered"], maximize=group["maximize"])


# ---- helpers ----


def _check(where: str, what: str, arg: str, value: Any, ok: Any = None, needs: str = ">= 0",
           ) -> float:
    """``value`` as a float if ``ok(value)`` (default: >= 0), else a ValueError in
    torch.optim's words: ``SGD: Invalid learning rate: -1.0 (lr must be >= 0)``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{where}: {arg} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    value = float(value)
    if not (math.isfinite(value) and (value >= 0 if ok is None else ok(value))):
        raise ValueError(f"{where}: Invalid {what}: {value} ({arg} must be {needs})")
    return value


def _collect(where: str, params: Iterable[Any]) -> tuple[list[str | None], list[Any]]:
    """Flatten ``params`` (parameters or (name, parameter) pairs) to names and parameters."""
    if hasattr(params, "_prev") and not isinstance(params, Value):
        params = [params]  # one Tensor, as torch accepts
    if isinstance(params, (Value, str)) or not isinstance(params, Iterable):
        raise TypeError(f"{where}: params must be an iterable of parameters, "
                        f"got {type(params).__name__}")
    names: list[str | None] = []
    found: list[Any] = []
    for item in params:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            for suffix, p in _leaves(item[1]):
                names.append(item[0] + suffix)
                found.append(p)
        else:
            for _, p in _leaves(item):
                names.append(None)
                found.append(p)
    seen: set[int] = set()
    for i, p in enumerate(found):
        if not (hasattr(p, "_value") and hasattr(p, "grad")):
            raise TypeError(f"{where}: parameter {names[i] or i} must be a node with ._value "
                            f"and .grad (a Value or a Tensor), got {type(p).__name__}")
        if id(p) in seen:
            raise ValueError(f"{where}: parameter {names[i] or i} appears more than once")
        seen.add(id(p))
    return names, found


def _leaves(p: Any, index: tuple[int, ...] = ()) -> list[tuple[str, Any]]:
    """The parameters of a nested list, each with its index suffix such as ``'[3, 1]'``."""
    if isinstance(p, (list, tuple)):
        return [leaf for i, item in enumerate(p) for leaf in _leaves(item, index + (i,))]
    return [(f"[{', '.join(map(str, index))}]" if index else "", p)]


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(g: Any) -> str:
    if isinstance(g, (float, int)):
        return str(g)
    import numpy as np

    bad = int(np.size(g) - np.count_nonzero(np.isfinite(g)))
    return f"not finite ({bad} of {np.size(g)} entries are nan or inf)"


def _write(p: Any, new: Any) -> None:
    """Store an update: a float replaces a Value's data, an array is copied in place."""
    if isinstance(p._value, (float, int)):
        p._value = float(new)
    else:
        p._value[...] = new
        if hasattr(p, "_wrote"):  # a Tensor counts it: a graph made before refuses backward
            p._wrote()


# ---- learning-rate schedules ----


def linear_anneal(start: float, end: float, k: float, steps: float) -> float:
    """The way from ``start`` to ``end`` in a straight line, at step ``k`` of ``steps``::

        start + (end - start) * k / steps

    ``LinearLR`` here, and torch's ``LinearLR`` (``base_lr * linear_anneal(start_factor,
    end_factor, k, total_iters)``) and ``OneCycleLR`` (``k / steps`` = the fraction of a
    phase, ``steps = 1``) in ``lr_scheduler``, with torch's rounding.

    Example:
        >>> linear_anneal(1.0, 0.1, 50, 100)
        0.55
    """
    return start + (end - start) * k / steps


def cosine_anneal(start: float, end: float, k: float, steps: float) -> float:
    """The way from ``start`` to ``end`` along half a cosine, at step ``k`` of ``steps``::

        end + (start - end) * (1 + cos(pi * k / steps)) / 2

    ``CosineLR`` here, and torch's ``CosineAnnealingLR`` (its closed form) and
    ``OneCycleLR`` in ``lr_scheduler``, with torch's rounding.

    Example:
        >>> cosine_anneal(1.0, 0.0, 5, 10)
        0.5
    """
    return end + (start - end) * (1 + math.cos(math.pi * k / steps)) / 2


class LRSchedule:
    """Sets ``optimizer.lr`` from a formula of the step count ``k``.

    The optimizer's lr is set to ``lr_at(0)`` at once; each ``step()`` (call it after
    ``optimizer.step()``) moves to the next ``k``. Past ``steps`` the lr stays at ``end``.
    A subclass writes the formula in ``lr_at(k)``.

    Args:
        optimizer: An optimizer with an ``lr`` (e.g. ``chaingrad.optim.SGD``).
        start: The learning rate at k = 0 (>= 0).
        end: The learning rate from k = ``steps`` on (>= 0).
        steps: How many steps the change takes (a positive integer).

    Raises:
        TypeError: ``optimizer`` has no ``lr``, or ``start``/``end`` is not a number.
        ValueError: ``start`` or ``end`` is negative or not finite, or ``steps`` < 1.
    """

    def __init__(self, optimizer: Optimizer, start: float, end: float, steps: int):
        name = type(self).__name__
        if not hasattr(optimizer, "lr"):
            raise TypeError(f"{name}: expected an optimizer with an lr, "
                            f"got {type(optimizer).__name__}")
        self.start = _check(name, "start learning rate", "start", start)
        self.end = _check(name, "end learning rate", "end", end)
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"{name}: steps must be a positive integer, got {steps!r}")
        self.optimizer, self.steps, self.k = optimizer, steps, 0
        optimizer.lr = self.lr_at(0)

    def step(self) -> None:
        """Advance one step and set the optimizer's lr."""
        self.k += 1
        self.optimizer.lr = self.lr_at(self.k)

    def lr_at(self, k: int) -> float:
        raise NotImplementedError

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(start={self.start}, end={self.end}, "
                f"steps={self.steps}, k={self.k})")


class LinearLR(LRSchedule):
    """Linear decay: ``lr = start + (end - start) * k / steps``, then ``end``.

    ``LinearLR(opt, start=1.0, end=0.1, steps=100)`` is micrograd's demo schedule,
    ``lr = 1.0 - 0.9 * k / 100`` for steps k = 0 .. 99.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> opt = SGD([Value(0.0)], lr=1.0)
        >>> schedule = LinearLR(opt, start=1.0, end=0.1, steps=100)
        >>> [round(schedule.lr_at(k), 3) for k in (0, 50, 99, 100, 200)]
        [1.0, 0.55, 0.109, 0.1, 0.1]
        >>> schedule.step()   # after opt.step(): k = 1
        >>> round(opt.lr, 3)
        0.991
    """

    def lr_at(self, k: int) -> float:
        return linear_anneal(self.start, self.end, min(k, self.steps), self.steps)


class CosineLR(LRSchedule):
    """Cosine decay: ``lr = end + (start - end) * (1 + cos(pi * k / steps)) / 2``, then
    ``end`` (torch's CosineAnnealingLR with ``T_max=steps, eta_min=end``, without restarts).

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> opt = SGD([Value(0.0)], lr=1.0)
        >>> schedule = CosineLR(opt, start=1.0, end=0.0, steps=10)
        >>> [round(schedule.lr_at(k), 3) for k in (0, 5, 10, 11)]
        [1.0, 0.5, 0.0, 0.0]
        >>> for _ in range(5):   # after each opt.step()
        ...     schedule.step()
        >>> round(opt.lr, 3)
        0.5
    """

    def lr_at(self, k: int) -> float:
        return cosine_anneal(self.start, self.end, min(k, self.steps), self.steps)


# torch's schedulers, built on this module: loaded on first use
_SUBMODULES = ("lr_scheduler",)

if TYPE_CHECKING:  # what __getattr__ serves, for type checkers (tests/test_typing.py)
    from . import lr_scheduler as lr_scheduler
else:
    __getattr__ = torch_names.submodules_on_use("chaingrad.optim", _SUBMODULES, torch_names.OPTIM)
