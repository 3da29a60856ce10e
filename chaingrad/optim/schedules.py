"""chaingrad's own learning-rate schedules: the rate as a formula of the step count, from a
start to an end over a number of steps (``LinearSchedule``, ``CosineSchedule``), and those
formulas (``linear_anneal``, ``cosine_anneal``), which torch's schedulers in
``lr_scheduler.py`` use too.

A schedule sets ``optimizer.lr`` to the formula's value at each step, computed afresh from
the step count (a closed form), so that ``LinearSchedule(opt, start=1.0, end=0.1,
steps=100)`` gives micrograd's demo rates ``1.0 - 0.9 * k / 100`` to the last bit. torch's
``lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.1, total_iters=100)`` heads for
the same rates but multiplies the current one by a ratio at each step (its chained form),
which rounds differently: 92 of its first 100 rates differ from micrograd's by a few units
in the last place, and so do the weights ``chaingrad demo`` trains with them (a final
loss of 0.010977891483772166, against 0.01097789148377217 with ``LinearSchedule``).

Example:
    >>> import random; random.seed(0)
    >>> from chaingrad.nn import MLP
    >>> from chaingrad.optim import SGD
    >>> model = MLP(2, [4, 1])
    >>> opt = SGD(model.parameters(), lr=1.0)
    >>> schedule = LinearSchedule(opt, start=1.0, end=0.1, steps=100)
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

from .optimizer import Optimizer, check_hyperparameter

__all__ = ["CosineSchedule", "LinearSchedule", "Schedule", "cosine_anneal", "linear_anneal"]


def linear_anneal(start: float, end: float, k: float, steps: float) -> float:
    """The way from ``start`` to ``end`` in a straight line, at step ``k`` of ``steps``::

        start + (end - start) * k / steps

    ``LinearSchedule`` here, and in ``lr_scheduler`` torch's ``LinearLR`` (its closed form,
    ``base_lr * linear_anneal(start_factor, end_factor, k, total_iters)``) and
    ``OneCycleLR`` (``k / steps`` = the fraction of a phase, ``steps = 1``), with torch's
    rounding.

    Example:
        >>> linear_anneal(1.0, 0.1, 50, 100)
        0.55
    """
    return start + (end - start) * k / steps


def cosine_anneal(start: float, end: float, k: float, steps: float) -> float:
    """The way from ``start`` to ``end`` along half a cosine, at step ``k`` of ``steps``::

        end + (start - end) * (1 + cos(pi * k / steps)) / 2

    ``CosineSchedule`` here, and in ``lr_scheduler`` torch's ``CosineAnnealingLR`` (its
    closed form) and ``OneCycleLR``, with torch's rounding.

    Example:
        >>> cosine_anneal(1.0, 0.0, 5, 10)
        0.5
    """
    return end + (start - end) * (1 + math.cos(math.pi * k / steps)) / 2


class Schedule:
    """Sets ``optimizer.lr`` from a formula of the step count ``k`` (chaingrad's own; torch's
    schedulers, whose base is ``lr_scheduler.LRScheduler``, are in ``lr_scheduler``).

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
        self.start = check_hyperparameter(name, "start learning rate", "start", start)
        self.end = check_hyperparameter(name, "end learning rate", "end", end)
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"{name}: steps must be a positive integer, got {steps!r}")
        self.optimizer, self.steps, self.k = optimizer, steps, 0
        optimizer.lr = self.lr_at(0)

    def step(self) -> None:
        """Advance one step and set the optimizer's lr."""
        self.k += 1
        self.optimizer.lr = self.lr_at(self.k)

    def lr_at(self, k: int) -> float:
        """The learning rate at step ``k`` (0 before the first ``step()``)."""
        raise NotImplementedError(f"{type(self).__name__} must define lr_at(k)")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(start={self.start}, end={self.end}, "
                f"steps={self.steps}, k={self.k})")


class LinearSchedule(Schedule):
    """Linear decay: ``lr = start + (end - start) * k / steps``, then ``end``.

    ``LinearSchedule(opt, start=1.0, end=0.1, steps=100)`` is micrograd's demo schedule,
    ``lr = 1.0 - 0.9 * k / 100`` for steps k = 0 .. 99.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> opt = SGD([Value(0.0)], lr=1.0)
        >>> schedule = LinearSchedule(opt, start=1.0, end=0.1, steps=100)
        >>> [round(schedule.lr_at(k), 3) for k in (0, 50, 99, 100, 200)]
        [1.0, 0.55, 0.109, 0.1, 0.1]
        >>> schedule.step()   # after opt.step(): k = 1
        >>> round(opt.lr, 3)
        0.991
    """

    def lr_at(self, k: int) -> float:
        return linear_anneal(self.start, self.end, min(k, self.steps), self.steps)


class CosineSchedule(Schedule):
    """Cosine decay: ``lr = end + (start - end) * (1 + cos(pi * k / steps)) / 2``, then
    ``end`` (torch's CosineAnnealingLR with ``T_max=steps, eta_min=end``, without restarts).

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD
        >>> opt = SGD([Value(0.0)], lr=1.0)
        >>> schedule = CosineSchedule(opt, start=1.0, end=0.0, steps=10)
        >>> [round(schedule.lr_at(k), 3) for k in (0, 5, 10, 11)]
        [1.0, 0.5, 0.0, 0.0]
        >>> for _ in range(5):   # after each opt.step()
        ...     schedule.step()
        >>> round(opt.lr, 3)
        0.5
    """

    def lr_at(self, k: int) -> float:
        return cosine_anneal(self.start, self.end, min(k, self.steps), self.steps)
