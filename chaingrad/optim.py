"""Optimizers (SGD, Adam, AdamW) and learning-rate schedules (LinearLR, CosineLR).

The update rules are torch.optim's, step for step. Each rule is written once as plain
arithmetic on a parameter's data and gradient, so the same line of maths updates a Value
(a float) and a Tensor (a numpy array, updated in place so that views of it stay valid).

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

import contextlib
import math
from collections.abc import Iterable
from numbers import Real
from typing import Any

from .engine import Value
from .errors import NonFiniteGradError

__all__ = ["SGD", "Adam", "AdamW", "CosineLR", "LRSchedule", "LinearLR", "NonFiniteGradError",
           "Optimizer"]


class Optimizer:
    """What every optimizer shares: the parameters, ``lr``, ``zero_grad()`` and ``step()``.

    Args:
        params: Values (e.g. ``model.parameters()``), parameters whose ``.data`` and
            ``.grad`` are numpy arrays, or ``(name, parameter)`` pairs (e.g.
            ``model.named_parameters()``) so that errors can name them. Nested lists of
            Values are flattened, and their Values named ``name[i, j]``.
        lr: The learning rate; schedules (``LinearLR``, ``CosineLR``) change it each step.

    A subclass writes its rule in ``_update(x, g, state) -> (new_x, new_state)``: pure
    arithmetic that must not modify ``x``, ``g`` or ``state`` (``step()`` commits the
    results only once every parameter's update has been computed and checked).
    """

    def __init__(self, params: Iterable[Any], lr: float):
        self._name = type(self).__name__
        self.names, self.params = _collect(self._name, params)
        self.lr = lr
        self.state: list[dict[str, Any]] = [{} for _ in self.params]

    @property
    def lr(self) -> float:
        """The learning rate; setting it checks it (``Invalid learning rate: -1.0``)."""
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:
        self._lr = _check(self._name, "learning rate", "lr", value)

    def zero_grad(self) -> None:
        """Reset every gradient before the next ``backward()``: a Value's ``.grad`` to 0.0,
        an array parameter's to None (how a Tensor's starts, and torch's default)."""
        for p in self.params:
            p.grad = 0.0 if isinstance(p.grad, (Real, Value)) else None

    def step(self) -> None:
        """Update every parameter that has a gradient, with the optimizer's rule.

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
        updates = []
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None:  # a Tensor that took no part in the loss, as in torch.optim
                continue
            if hasattr(g, "_prev"):  # a graph node, after backward(create_graph=True)
                g = g.data
            g = self._checked(i, p, g)
            if not _all_finite(g):
                raise NonFiniteGradError(
                    f"{self._name}.step: the gradient of parameter {self._label(i)} is "
                    f"{_describe(g)}; no parameter was changed{self._hint(i)}"
                )
            updates.append((i, g))
        results = []
        with _quiet_numpy(updates):  # an overflow is reported below, not as a warning
            for i, g in updates:
                new_x, new_state = self._update(self.params[i].data, g, self.state[i])
                if not _all_finite(new_x):
                    raise NonFiniteGradError(
                        f"{self._name}.step: the update of parameter {self._label(i)} is not "
                        f"finite (is lr={self.lr:g} too large?); no parameter was changed"
                        f"{self._hint(i)}", what="update")
                results.append((i, new_x, new_state))
        for i, new_x, new_state in results:
            _write(self.params[i], new_x)
            self.state[i] = new_state

    def _checked(self, i: int, p: Any, g: Any) -> Any:
        """The gradient of parameter ``i`` if it fits the parameter: a real number for a
        number, an array of real numbers of the parameter's shape (never broadcast) for an
        array; else a TypeError or ValueError naming the parameter."""
        where = f"{self._name}.step: the gradient of parameter {self._label(i)}"
        if isinstance(p.data, Real):
            if isinstance(g, bool) or not isinstance(g, Real):
                raise TypeError(f"{where} must be a real number like its data, got "
                                f"{type(g).__name__} {_short(g)}; no parameter was changed")
            return float(g)
        shape, kind = getattr(g, "shape", None), getattr(getattr(g, "dtype", None), "kind", "")
        if shape is None or not kind or kind not in "fiu":
            raise TypeError(f"{where} must be an array of real numbers, got "
                            f"{getattr(g, 'dtype', type(g).__name__)}; no parameter was "
                            "changed")
        if shape != p.data.shape:
            raise ValueError(f"{where} has shape {tuple(shape)}, expected {p.data.shape} "
                             "(the parameter's; a gradient is never broadcast); no parameter "
                             "was changed")
        return g

    def _update(self, x: Any, g: Any, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        raise NotImplementedError(f"{self._name} must define _update(x, g, state)")

    def _label(self, i: int) -> str:
        return self.names[i] if self.names[i] is not None else f"{i} of {len(self.params)}"

    def _hint(self, i: int) -> str:
        """How to get names into the message, when the parameters came without them."""
        if self.names[i] is not None:
            return ""
        return " (pass model.named_parameters() to the optimizer to see names)"

    def __repr__(self) -> str:
        return f"{self._name}({len(self.params)} parameters, lr={self.lr})"


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum and weight decay (torch.optim.SGD).

    With ``g`` the gradient, ``x`` the parameter, and ``b`` the momentum buffer::

        g = g + weight_decay * x
        b = g                                  (first step)
        b = momentum * b + (1 - dampening) * g (later steps)
        g = g + momentum * b   if nesterov   else   g = b      (when momentum != 0)
        x = x - lr * g

    Args:
        params: The parameters (see ``Optimizer``).
        lr: The learning rate (>= 0).
        momentum: The momentum factor (>= 0).
        weight_decay: L2 penalty added to the gradient (>= 0).
        nesterov: Use Nesterov momentum (needs momentum > 0 and dampening 0).
        dampening: Scales down the gradient added to the momentum buffer (>= 0).

    Example:
        >>> x = Value(3.0)
        >>> opt = SGD([x], lr=0.1)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 10)
        2.4
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        dampening: float = 0.0,
    ):
        super().__init__(params, lr)
        self.momentum = _check("SGD", "momentum value", "momentum", momentum)
        self.weight_decay = _check("SGD", "weight_decay value", "weight_decay", weight_decay)
        self.dampening = _check("SGD", "dampening value", "dampening", dampening)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening = 0, "
                             f"got momentum={momentum}, dampening={dampening}")
        self.nesterov = bool(nesterov)

    def _update(self, x, g, state):
        if self.weight_decay != 0:
            g = g + self.weight_decay * x
        if self.momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:  # a copy: an array gradient may later be changed in place
                buf = g if isinstance(g, float) else g.copy()
            else:
                buf = self.momentum * buf + (1 - self.dampening) * g
            state = {"momentum_buffer": buf}
            g = g + self.momentum * buf if self.nesterov else buf
        return x - self.lr * g, state


class Adam(Optimizer):
    """Adam (torch.optim.Adam): step sizes from running averages of g and g**2.

    With ``t`` the step count (from 1) of this parameter::

        g = g + weight_decay * x
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        x = x - (lr / (1 - beta1**t)) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        params: The parameters (see ``Optimizer``).
        lr: The learning rate (>= 0).
        betas: The decay rates of the two averages, each in [0, 1).
        eps: Added to the denominator for stability (>= 0).
        weight_decay: L2 penalty added to the gradient (>= 0); see ``AdamW`` for the
            decoupled kind.

    Example:
        >>> x = Value(3.0)
        >>> opt = Adam([x], lr=0.1)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 6)   # Adam's first step moves by about lr
        2.9
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        super().__init__(params, lr)
        name = self._name
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = tuple(
            _check(name, f"beta parameter at index {i}", f"betas[{i}]", b,
                   lambda v: 0 <= v < 1, "in [0, 1)")
            for i, b in enumerate(betas)
        )
        self.eps = _check(name, "epsilon value", "eps", eps)
        self.weight_decay = _check(name, "weight_decay value", "weight_decay", weight_decay)

    def _update(self, x, g, state):
        if self.weight_decay != 0:
            g = g + self.weight_decay * x
        return self._adam(x, g, state)

    def _adam(self, x, g, state):
        beta1, beta2 = self.betas
        t = state.get("step", 0) + 1
        m = state.get("exp_avg", 0.0 * g)
        v = state.get("exp_avg_sq", 0.0 * g)
        m = m + (1 - beta1) * (g - m)  # = beta1 * m + (1 - beta1) * g, as torch's lerp
        v = beta2 * v + (1 - beta2) * g * g
        step_size = self.lr / (1 - beta1**t)
        denom = v**0.5 / math.sqrt(1 - beta2**t) + self.eps
        return x - step_size * (m / denom), {"step": t, "exp_avg": m, "exp_avg_sq": v}


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW): ``x = x * (1 - lr * wd)``
    first, then Adam's step without adding ``wd * x`` to the gradient.

    Args:
        params, lr, betas, eps: As for ``Adam``.
        weight_decay: The decoupled decay rate (>= 0; default 1e-2, as in PyTorch).

    Example:
        >>> x = Value(3.0)
        >>> opt = AdamW([x], lr=0.1, weight_decay=0.5)
        >>> (x * x).backward()
        >>> opt.step()
        >>> round(x.data, 6)   # 3 * (1 - 0.1 * 0.5) - 0.1
        2.75
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _update(self, x, g, state):
        return self._adam(x * (1 - self.lr * self.weight_decay), g, state)


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
    if not found:
        raise ValueError(f"{where}: got an empty parameter list")
    seen: set[int] = set()
    for i, p in enumerate(found):
        if not (hasattr(p, "data") and hasattr(p, "grad")):
            raise TypeError(f"{where}: parameter {names[i] or i} must have .data and .grad, "
                            f"got {type(p).__name__}")
        if id(p) in seen:
            raise ValueError(f"{where}: parameter {names[i] or i} appears more than once")
        seen.add(id(p))
    return names, found


def _leaves(p: Any, index: tuple[int, ...] = ()) -> list[tuple[str, Any]]:
    """The parameters of a nested list, each with its index suffix such as ``'[3, 1]'``."""
    if isinstance(p, (list, tuple)):
        return [leaf for i, item in enumerate(p) for leaf in _leaves(item, index + (i,))]
    return [(f"[{', '.join(map(str, index))}]" if index else "", p)]


def _quiet_numpy(updates: list[tuple[int, Any]]) -> Any:
    """numpy's floating-point warnings off, where an array is in play (only then is numpy
    needed: Values train without it)."""
    if all(isinstance(g, float) for _, g in updates):
        return contextlib.nullcontext()
    import numpy as np

    return np.errstate(all="ignore")


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _all_finite(x: Any) -> bool:
    if isinstance(x, (float, int)):
        return math.isfinite(x)
    import numpy as np

    return bool(np.isfinite(x).all())


def _describe(g: Any) -> str:
    if isinstance(g, (float, int)):
        return str(g)
    import numpy as np

    bad = int(np.size(g) - np.count_nonzero(np.isfinite(g)))
    return f"not finite ({bad} of {np.size(g)} entries are nan or inf)"


def _write(p: Any, new: Any) -> None:
    """Store an update: a float replaces a Value's data, an array is copied in place."""
    if isinstance(p.data, (float, int)):
        p.data = float(new)
    else:
        p.data[...] = new


# ---- learning-rate schedules ----


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
        return self.start + (self.end - self.start) * min(k, self.steps) / self.steps


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
        k = min(k, self.steps)
        return self.end + (self.start - self.end) * (1 + math.cos(math.pi * k / self.steps)) / 2
