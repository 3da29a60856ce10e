"""Learning-rate schedules: ``LinearLR`` and ``CosineLR`` set an optimizer's ``lr`` each step.

Both are also importable from ``chaingrad.optim``. Call ``schedule.step()`` after
``optimizer.step()``, as with torch.optim.lr_scheduler.

Example:
    >>> from chaingrad import Value
    >>> from chaingrad.optim import SGD
    >>> opt = SGD([Value(0.0)], lr=1.0)
    >>> schedule = LinearLR(opt, start=1.0, end=0.1, steps=3)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(opt.lr, 2))
    ...     schedule.step()
    >>> lrs
    [1.0, 0.7, 0.4, 0.1]
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .optim import Optimizer


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
        from .optim import _check  # here, not at the top: chaingrad.optim imports this module

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
