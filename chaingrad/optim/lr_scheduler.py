"""torch.optim.lr_scheduler's schedulers: each changes the learning rate of every parameter
group of an optimizer, one ``step()`` at a time, with torch's numbers.

A scheduler is made after its optimizer, and stepped after it::

    for epoch in range(epochs):
        for batch in loader:
            ...
            optimizer.step()
        scheduler.step()

``last_epoch`` counts the scheduler's steps (0 once it is made); ``get_last_lr()`` is the
list of the groups' learning rates it set last. Each scheduler computes the next rate from
the current one, as torch's ``step()`` does (its "chained form": a step multiplies the rate
by a factor, so that another scheduler's or your own change to ``group["lr"]`` carries on),
and ``step(epoch)`` jumps to an epoch with the closed form, which torch deprecates.

chaingrad's own schedules, ``chaingrad.optim.LinearSchedule`` and ``CosineSchedule`` (a
start, an end and a number of steps, in ``schedules.py``), are other classes: the formulas
they share with the schedulers here (``linear_anneal``, ``cosine_anneal``) are written once,
there.

Example:
    >>> from chaingrad import Value
    >>> from chaingrad.optim import SGD
    >>> optimizer = SGD([Value(1.0)], lr=0.1)
    >>> scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
    >>> rates = []
    >>> for epoch in range(5):
    ...     optimizer.step()
    ...     rates.append(scheduler.get_last_lr()[0])
    ...     scheduler.step()
    >>> rates
    [0.1, 0.1, 0.05, 0.05, 0.025]
"""

from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

from .. import torch_names
from .optimizer import Optimizer
from .schedules import cosine_anneal, linear_anneal

__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR",
           "MultiStepLR", "OneCycleLR", "ReduceLROnPlateau", "StepLR"]


class LRScheduler:
    """What every scheduler shares: ``step()``, ``get_last_lr()``, ``state_dict()``.

    Making a scheduler records each group's starting rate as ``group["initial_lr"]``
    (``base_lrs``) and takes step 0. A subclass writes ``get_lr()``, the groups' rates at
    ``last_epoch`` computed from their current ones (torch's chained form), and may write
    ``_get_closed_form_lr()``, the same rates from ``base_lrs`` alone.

    Args:
        optimizer: A chaingrad optimizer (``chaingrad.optim.SGD``, ``Adam``, ...).
        last_epoch: The epoch to resume after (-1: start afresh). Resuming needs the
            groups' ``initial_lr``, which an earlier scheduler wrote.

    Raises:
        TypeError: ``optimizer`` is not a chaingrad optimizer.
        KeyError: ``last_epoch`` >= 0 and a group has no ``initial_lr``.
    """

    _is_initial = False  # True during step 0, which __init__ takes
    _get_lr_called_within_step = False  # get_lr() outside step() is a user's call: warned

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"{type(self).__name__}: param_groups[{i}] has no "
                               f"'initial_lr', which resuming with last_epoch={last_epoch} "
                               "needs (load the optimizer's state first, or use "
                               "last_epoch=-1 to start afresh)")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _count_optimizer_steps(optimizer)
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The groups' rates at ``last_epoch`` (what ``step()`` sets); ``get_last_lr()``
        reads the ones set last."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def get_last_lr(self) -> list[float]:
        """The learning rate of each parameter group, as the last ``step()`` set it."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Move to the next epoch (or to ``epoch``, deprecated as in torch: the closed form)
        and set each group's learning rate. Call it after ``optimizer.step()``."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(f"{type(self).__name__}.step() was called before optimizer.step(): "
                          "call optimizer.step() first, or the first learning rate of the "
                          "schedule is skipped (as in PyTorch)", UserWarning, stacklevel=2)
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                rates = self.get_lr()
            else:
                warnings.warn(f"{type(self).__name__}.step(epoch) is deprecated in PyTorch: "
                              "call step() once per epoch", UserWarning, stacklevel=2)
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", self.get_lr)
                rates = closed_form()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, rates):
            group["lr"] = lr
        self._last_lr = _rates(self.optimizer)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state (everything but the optimizer), as torch's: a dict for
        ``load_state_dict`` that ``chaingrad.save`` or pickle can keep."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue where ``state_dict()`` (chaingrad's, or torch's) left off."""
        self.__dict__.update(state_dict)

    def _warn_if_called_by_user(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(f"{type(self).__name__}.get_lr() computes the next rates: to read "
                          "the rates the scheduler set, use get_last_lr()", UserWarning,
                          stacklevel=3)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} last_epoch={self.last_epoch} lr={self.get_last_lr()}>"


class LambdaLR(LRScheduler):
    """Each group's rate is its initial rate times ``lr_lambda(epoch)``::

        lr = initial_lr * lr_lambda(last_epoch)

    Args:
        optimizer: The optimizer.
        lr_lambda: A function of the epoch (an int) giving a factor, or one per group.
        last_epoch: See ``LRScheduler``.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=1.0)
        >>> scheduler = LambdaLR(optimizer, lambda epoch: 0.9 ** epoch)
        >>> optimizer.step(); scheduler.step()
        >>> scheduler.get_last_lr()
        [0.9]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] |
                 list[Callable[[int], float]], last_epoch: int = -1) -> None:
        _check_optimizer("LambdaLR", optimizer)
        self.lr_lambdas = _one_per_group("LambdaLR", "lr_lambda", optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"LambdaLR: lr_lambda must be a function of the epoch, got "
                                f"{type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_user()
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """As ``LRScheduler.state_dict``; of ``lr_lambda`` only the attributes of callable
        objects are kept (a function is code: it is not saved), as torch does."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else
                               dict(fn.__dict__) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas", [])
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class StepLR(LRScheduler):
    """Multiplies the rates by ``gamma`` every ``step_size`` epochs::

        lr = initial_lr * gamma ** (last_epoch // step_size)

    Args:
        optimizer: The optimizer.
        step_size: The number of epochs between two decays (a positive int).
        gamma: The factor of each decay.
        last_epoch: See ``LRScheduler``.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=1.0)
        >>> scheduler = StepLR(optimizer, step_size=3)
        >>> for _ in range(3):
        ...     optimizer.step(); scheduler.step()
        >>> scheduler.get_last_lr()
        [0.1]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = _whole("StepLR", "step_size", step_size, least=1)
        self.gamma = _number("StepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_user()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _rates(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the rates by ``gamma`` at each milestone epoch (a milestone listed twice
    multiplies twice)::

        lr = initial_lr * gamma ** (the number of milestones <= last_epoch)

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=1.0)
        >>> scheduler = MultiStepLR(optimizer, milestones=[1, 3], gamma=0.5)
        >>> rates = []
        >>> for _ in range(4):
        ...     optimizer.step(); scheduler.step(); rates.append(scheduler.get_last_lr()[0])
        >>> rates
        [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if not isinstance(milestones, Iterable):
            raise TypeError(f"MultiStepLR: milestones must be a list of epochs, got "
                            f"{type(milestones).__name__}")
        self.milestones = Counter(_whole("MultiStepLR", "milestones", m) for m in milestones)
        self.gamma = _number("MultiStepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_user()
        if self.last_epoch not in self.milestones:
            return _rates(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma ** passed for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the rates by ``gamma`` every epoch::

        lr = initial_lr * gamma ** last_epoch

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=1.0)
        >>> scheduler = ExponentialLR(optimizer, gamma=0.5)
        >>> for _ in range(3):
        ...     optimizer.step(); scheduler.step()
        >>> scheduler.get_last_lr()
        [0.125]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = _number("ExponentialLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_user()
        if self._is_initial:
            return _rates(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scales the rates by a factor going in a straight line from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs, then keeps it::

        lr = initial_lr * linear_anneal(start_factor, end_factor,
                                        min(last_epoch, total_iters), total_iters)

    (torch's warm-up; chaingrad's own ``optim.LinearSchedule(opt, start, end, steps)``
    takes the rates themselves, computed afresh at each step.) Each step multiplies the
    rate by the ratio of two consecutive factors, as torch's does.

    Args:
        optimizer: The optimizer.
        start_factor: The factor at epoch 0, in (0, 1].
        end_factor: The factor from ``total_iters`` on, in [0, 1].
        total_iters: The number of epochs the change takes.
        last_epoch: See ``LRScheduler``.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=1.0)
        >>> scheduler = LinearLR(optimizer, start_factor=0.5, total_iters=2)
        >>> rates = [scheduler.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     optimizer.step(); scheduler.step(); rates.append(scheduler.get_last_lr()[0])
        >>> rates
        [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        start_factor = _number("LinearLR", "start_factor", start_factor)
        end_factor = _number("LinearLR", "end_factor", end_factor)
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = _whole("LinearLR", "total_iters", total_iters, least=1)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_user()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _rates(self.optimizer)
        # factor(k) / factor(k - 1), with factor(k) = start + (end - start) * k / total
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor
                                + (self.last_epoch - 1) * change)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        k = min(self.total_iters, self.last_epoch)
        return [base_lr * linear_anneal(self.start_factor, self.end_factor, k, self.total_iters)
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Takes the rates from their initial values down to ``eta_min`` along half a cosine
    over ``T_max`` epochs, then back up again over the next ``T_max`` (and so on)::

        lr = cosine_anneal(initial_lr, eta_min, last_epoch, T_max)

    Each step computes the next rate from the current one, as torch's does (so that a
    change made to a group's ``lr`` carries on); ``chaingrad.optim.CosineSchedule`` is the
    closed form without the way back up.

    Args:
        optimizer: The optimizer.
        T_max: The number of epochs from the initial rate to ``eta_min`` (a positive int).
        eta_min: The lowest rate.
        last_epoch: See ``LRScheduler``.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=1.0)
        >>> scheduler = CosineAnnealingLR(optimizer, T_max=2)
        >>> rates = []
        >>> for _ in range(4):
        ...     optimizer.step(); scheduler.step(); rates.append(scheduler.get_last_lr()[0])
        >>> [round(rate, 6) for rate in rates]
        [0.5, 0.0, 0.5, 1.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = _whole("CosineAnnealingLR", "T_max", T_max, least=1)
        self.eta_min = _number("CosineAnnealingLR", "eta_min", eta_min)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_user()
        k, period, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _rates(self.optimizer)
        if self._step_count == 1 and k > 0:  # resumed: the closed form, once
            return [cosine_anneal(base_lr, low, k, period) for base_lr in self.base_lrs]
        if (k - 1 - period) % (2 * period) == 0:  # at the bottom: the way back up starts
            rise = (1 - math.cos(math.pi / period)) / 2
            return [group["lr"] + (base_lr - low) * rise
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = (1 + math.cos(math.pi * k / period)) / (1 + math.cos(math.pi * (k - 1) / period))
        return [ratio * (group["lr"] - low) + low for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [cosine_anneal(base_lr, self.eta_min, self.last_epoch, self.T_max)
                for base_lr in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rate climbs from ``max_lr / div_factor`` to ``max_lr`` over
    the first ``pct_start`` of ``total_steps``, then falls to ``initial_lr /
    final_div_factor``; the momentum (or Adam's beta1) moves the other way, between
    ``max_momentum`` and ``base_momentum``. Step it after every batch. In each phase::

        lr = anneal(start, end, (step - phase_start) / (phase_end - phase_start), 1)

    with ``anneal`` = ``cosine_anneal`` (``anneal_strategy='cos'``) or ``linear_anneal``
    (``'linear'``). ``three_phase=True`` climbs, comes back down symmetrically, then falls to
    the minimum.

    Args:
        optimizer: The optimizer (with ``momentum`` or ``betas`` if ``cycle_momentum``).
        max_lr: The highest rate, or one per group.
        total_steps: The number of steps in the cycle; or give ``epochs`` and
            ``steps_per_epoch``.
        pct_start: The fraction of the cycle spent climbing (a float in [0, 1]).
        anneal_strategy: 'cos' or 'linear'.
        cycle_momentum: Move the momentum opposite to the rate.
        base_momentum, max_momentum: The momentum's range (or one per group).
        div_factor: initial_lr = max_lr / div_factor.
        final_div_factor: The last rate is initial_lr / final_div_factor.
        three_phase: The three-phase schedule.
        last_epoch: See ``LRScheduler`` (here it counts batches).

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=0.1, momentum=0.9)
        >>> scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=4, pct_start=0.5)
        >>> rates = [scheduler.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     optimizer.step(); scheduler.step(); rates.append(scheduler.get_last_lr()[0])
        >>> [round(r, 6) for r in rates]
        [0.04, 1.0, 0.500002, 4e-06]
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        _check_optimizer("OneCycleLR", optimizer)
        if total_steps is not None:
            self.total_steps = _whole("OneCycleLR", "total_steps", total_steps, least=1)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = (_whole("OneCycleLR", "epochs", epochs, least=1)
                                * _whole("OneCycleLR", "steps_per_epoch", steps_per_epoch,
                                         least=1))
        else:
            raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be a float in [0, 1], got "
                             f"{pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy
        climb_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        # each phase: the step it ends at, then the group keys of its start and end values
        if three_phase:
            self._schedule_phases = [
                _phase(climb_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                _phase(last, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._schedule_phases = [
                _phase(climb_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                _phase(last, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        max_lrs = _one_per_group("OneCycleLR", "max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"OneCycleLR: cycle_momentum=True needs an optimizer with a "
                                 f"momentum or betas, got {type(optimizer).__name__} (pass "
                                 "cycle_momentum=False)")
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _one_per_group("OneCycleLR", "max_momentum", optimizer, max_momentum)
            lows = _one_per_group("OneCycleLR", "base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for high, low, group in zip(highs, lows, optimizer.param_groups):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self) -> list[float]:
        self._warn_if_called_by_user()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, but total_steps is "
                             f"{self.total_steps}")
        anneal = cosine_anneal if self._anneal_func_type == "cos" else linear_anneal
        start = 0.0  # the phase that step is in (the last one past its end), and how far in
        for phase in self._schedule_phases:
            end = phase["end_step"]
            if step <= end or phase is self._schedule_phases[-1]:
                break
            start = end
        fraction = (step - start) / (end - start)
        rates = []
        for group in self.optimizer.param_groups:
            rates.append(anneal(group[phase["start_lr"]], group[phase["end_lr"]], fraction, 1))
            if self.cycle_momentum:
                self._set_momentum(group, anneal(group[phase["start_momentum"]],
                                                 group[phase["end_momentum"]], fraction, 1))
        return rates


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the rates by ``factor`` when a metric has stopped improving for more than
    ``patience`` epochs: ``step(metric)`` after each evaluation (a validation loss, say).

    A metric improves on the best so far when (mode 'min', threshold_mode 'rel')
    ``metric < best * (1 - threshold)``; 'abs' compares with ``best - threshold``, and
    mode 'max' looks for ``metric > best * (1 + threshold)`` or ``best + threshold``. After a
    reduction, ``cooldown`` epochs pass before bad epochs count again. A rate never goes
    below ``min_lr``, and a change smaller than ``eps`` is not made.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> optimizer = SGD([Value(1.0)], lr=1.0)
        >>> scheduler = ReduceLROnPlateau(optimizer, patience=1, factor=0.5)
        >>> for loss in [1.0, 0.9, 0.9, 0.9, 0.9]:
        ...     scheduler.step(loss)
        >>> scheduler.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: list[float] | float = 0, eps: float = 1e-8,
                 ) -> None:
        if _number("ReduceLROnPlateau", "factor", factor) >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}")
        self.factor = factor
        _check_optimizer("ReduceLROnPlateau", optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = _one_per_group("ReduceLROnPlateau", "min_lr", optimizer, min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = _whole("ReduceLROnPlateau", "patience", patience)
        self.cooldown = _whole("ReduceLROnPlateau", "cooldown", cooldown)
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _rates(optimizer)
        self._set_mode(mode, threshold, threshold_mode)
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def _set_mode(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Count the epoch whose result is ``metrics`` (a number or a one-element Tensor),
        and reduce the rates if they have stopped improving."""
        current = float(metrics)
        if epoch is not None:
            warnings.warn("ReduceLROnPlateau.step(metrics, epoch) is deprecated in PyTorch: "
                          "call step(metrics) once per epoch", UserWarning, stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = _rates(self.optimizer)

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting after a reduction."""
        return self.cooldown_counter > 0

    def _is_better(self, value: float, best: float) -> bool:
        if self.mode == "min":
            bound = best * (1 - self.threshold) if self.threshold_mode == "rel" \
                else best - self.threshold
            return value < bound
        bound = best * (1 + self.threshold) if self.threshold_mode == "rel" \
            else best + self.threshold
        return value > bound

    def _reduce(self) -> None:
        groups = self.optimizer.param_groups
        if len(self.min_lrs) != len(groups):
            if self.default_min_lr is None:
                raise ValueError(f"ReduceLROnPlateau: the optimizer has {len(groups)} "
                                 f"parameter groups, min_lr gave {len(self.min_lrs)} (set "
                                 "scheduler.min_lrs to one per group)")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, lowest in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, lowest)
            if old - new > self.eps:
                group["lr"] = new

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_mode(self.mode, self.threshold, self.threshold_mode)


# ---- helpers ----


def _phase(end_step: float, start_lr: str, end_lr: str, start_momentum: str,
           end_momentum: str) -> dict[str, Any]:
    """One phase of OneCycleLR: where it ends, and the group keys of its values."""
    return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
            "start_momentum": start_momentum, "end_momentum": end_momentum}


def _rates(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


def _check_optimizer(where: str, optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{where}: expected a chaingrad optimizer (chaingrad.optim.SGD, "
                        f"Adam, ...), got {type(optimizer).__name__}")


def _count_optimizer_steps(optimizer: Optimizer) -> None:
    """Make ``optimizer.step()`` note that it ran (``optimizer._opt_called``), so that
    ``scheduler.step()`` can warn when it is called first, as torch's does. The wrapper
    holds the optimizer weakly: it does not keep it alive."""
    if getattr(optimizer.step, "_counted_for_schedulers", False):
        return
    step = type(optimizer).step
    owner = weakref.ref(optimizer)

    def counted_step(*args: Any, **kwargs: Any) -> Any:
        this = owner()
        this._opt_called = True
        return step(this, *args, **kwargs)

    counted_step.__doc__ = step.__doc__
    counted_step._counted_for_schedulers = True  # type: ignore[attr-defined]
    optimizer.step = counted_step  # type: ignore[method-assign]


def _one_per_group(where: str, name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """``value`` for each parameter group: a list of one per group, or one for all."""
    groups = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != groups:
            raise ValueError(f"{where}: {name} must have one value per parameter group "
                             f"({groups}), got {len(value)}")
        return list(value)
    return [value] * groups


def _whole(where: str, name: str, value: Any, least: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < least:
        raise ValueError(f"{where}: {name} must be an int >= {least}, got {value!r}")
    return int(value)


def _number(where: str, name: str, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{where}: {name} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    return value


if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        raise torch_names.missing("chaingrad.optim.lr_scheduler", name, torch_names.LR_SCHEDULER)
