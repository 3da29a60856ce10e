"""torch.optim's optimizers and schedulers, and chaingrad's own schedules, laid out file by
file as torch lays out torch.optim; this module only re-exports them.

- ``optimizer.py``: ``Optimizer``, what every optimizer shares (parameter groups, state,
  ``zero_grad()``, and a ``step()`` that checks every gradient before it changes anything).
- ``sgd.py``, ``adam.py``, ``adamw.py``, ``rmsprop.py``, ``adagrad.py``, ``adadelta.py``:
  ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, each beside its
  update rule, a pure function written with torch's pseudo-code
  (``chaingrad.optim.sgd.sgd``, where torch keeps its ``torch.optim.sgd.sgd``).
- ``lbfgs.py``: ``LBFGS``, whose ``step(closure)`` runs torch's L-BFGS iterations, with
  its pieces as pure functions (the two-loop direction, the cubic interpolation and the
  strong-Wolfe line search).
- ``lr_scheduler.py``: torch's schedulers (``lr_scheduler.LinearLR``, ``StepLR``, ...).
- ``schedules.py``: chaingrad's own schedules, ``LinearSchedule`` and ``CosineSchedule`` (a
  start, an end and a number of steps; micrograd's demo rates to the last bit), and the
  formulas they share with torch's schedulers.

Example:
    >>> import random; random.seed(0)
    >>> from chaingrad.nn import MLP
    >>> model = MLP(2, [4, 1])
    >>> opt = SGD(model.parameters(), lr=1.0)
    >>> scheduler = lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.1,
    ...                                   total_iters=100)
    >>> for k in range(3):
    ...     loss = (model([1.0, -1.0]) - 1) ** 2
    ...     opt.zero_grad()
    ...     loss.backward()
    ...     opt.step()
    ...     scheduler.step()
    >>> round(opt.lr, 3)
    0.973
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import torch_names
from ..errors import NonFiniteGradError
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .schedules import CosineSchedule, LinearSchedule, Schedule, cosine_anneal, linear_anneal
from .sgd import SGD

__all__ = ["LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "CosineSchedule",
           "LinearSchedule", "NonFiniteGradError", "Optimizer", "RMSprop", "Schedule",
           "cosine_anneal", "linear_anneal", "lr_scheduler"]

# chaingrad's own schedules before they were renamed, so that LinearLR means torch's only
_RENAMED = {"LinearLR": "LinearSchedule", "CosineLR": "CosineSchedule", "LRSchedule": "Schedule"}

if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        if name in _RENAMED:
            raise AttributeError(
                f"chaingrad.optim.{name} is now chaingrad.optim.{_RENAMED[name]} (the same "
                f"arguments: start, end, steps); torch's LinearLR, CosineAnnealingLR and "
                f"LRScheduler are in chaingrad.optim.lr_scheduler")
        raise torch_names.missing("chaingrad.optim", name, torch_names.OPTIM)
