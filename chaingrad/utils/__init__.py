"""``torch.utils``'s parts that training programs use: ``utils.data`` (datasets, samplers,
``DataLoader``), ``utils.hooks`` (the handles of a module's hooks) and
``utils.tensorboard`` (``SummaryWriter``, with the ``tensorboard`` package:
``pip install 'chaingrad[tensorboard]'``). Each loads when first used, so that
``import chaingrad as torch; torch.utils.data.DataLoader`` works as after ``import torch``.

Example:
    >>> import chaingrad as torch
    >>> torch.utils.data.TensorDataset(torch.zeros(3, 2)).__len__()
    3
"""

from typing import TYPE_CHECKING

from .. import torch_names

_SUBMODULES = ("data", "hooks", "tensorboard")


if TYPE_CHECKING:  # what __getattr__ serves, for type checkers (tests/test_typing.py)
    from . import data as data
    from . import hooks as hooks
    from . import tensorboard as tensorboard
else:
    __getattr__ = torch_names.submodules_on_use("chaingrad.utils", _SUBMODULES, torch_names.UTILS)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
