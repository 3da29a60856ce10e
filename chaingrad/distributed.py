"""``chaingrad.distributed``: chaingrad runs in one process; torch's multi-process training
(``init_process_group``, ``DistributedDataParallel``) is PyTorch's to run.

A training script imports ``torch.distributed`` at the top and takes its multi-process path
only when launched for it (``torchrun`` sets ``RANK``). So the import works, and so do the
questions a one-process run asks: ``is_available()`` is True, as on torch's Linux builds,
``is_initialized()`` False, ``is_torchelastic_launched()`` True only under torchrun.
Starting a process group raises ``SingleProcessError``, which says that this path of the
program runs on PyTorch, with the imports changed back; the collectives (``all_reduce``,
``barrier``, ``get_rank``, ...) raise torch's ValueError for a group never started.

Example:
    >>> import chaingrad as torch
    >>> torch.distributed.is_available(), torch.distributed.is_initialized()
    (True, False)
    >>> torch.distributed.init_process_group(backend="gloo")
    Traceback (most recent call last):
    ...
    chaingrad.errors.SingleProcessError: init_process_group: chaingrad runs in one process: \
this program's multi-process path runs on PyTorch, with the imports changed back \
(import torch); launched as one process, it runs on chaingrad as it is
"""

import enum
import os
from typing import Any, NoReturn

from . import torch_names
from .errors import SingleProcessError

ONE_PROCESS = ("chaingrad runs in one process: this program's multi-process path runs on "
               "PyTorch, with the imports changed back (import torch); launched as one "
               "process, it runs on chaingrad as it is")
"""What ``SingleProcessError`` says after the name of what raised it."""


def is_available() -> bool:
    """True, as torch's Linux builds answer (the package is there); a process group still
    cannot be started."""
    return True


def is_initialized() -> bool:
    """False: no process group is ever started."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether torchrun launched this process, as torch decides it (``TORCHELASTIC_RUN_ID``
    is set)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend: Any = None, init_method: Any = None, timeout: Any = None,
                       world_size: int = -1, rank: int = -1, store: Any = None,
                       group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """An error: chaingrad runs in one process (see the module)."""
    raise SingleProcessError(f"init_process_group: {ONE_PROCESS}")


def _not_initialized(op: str) -> NoReturn:
    raise ValueError(f"{op}: Default process group has not been initialized, please make "
                     f"sure to call init_process_group. ({ONE_PROCESS})")


def destroy_process_group(group: Any = None) -> None:
    """An error, as torch's without a process group: none was started."""
    _not_initialized("destroy_process_group")


def get_rank(group: Any = None) -> int:
    """An error, as torch's without a process group (a program asks only once it started
    one)."""
    _not_initialized("get_rank")


def get_world_size(group: Any = None) -> int:
    """An error, as torch's without a process group."""
    _not_initialized("get_world_size")


def get_backend(group: Any = None) -> str:
    """An error, as torch's without a process group."""
    _not_initialized("get_backend")


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> None:
    """An error, as torch's without a process group."""
    _not_initialized("barrier")


def all_reduce(tensor: Any, op: Any = None, group: Any = None, async_op: bool = False) -> None:
    """An error, as torch's without a process group."""
    _not_initialized("all_reduce")


def broadcast(tensor: Any, src: Any = None, group: Any = None, async_op: bool = False,
              group_src: Any = None) -> None:
    """An error, as torch's without a process group."""
    _not_initialized("broadcast")


def all_gather(tensor_list: Any, tensor: Any, group: Any = None,
               async_op: bool = False) -> None:
    """An error, as torch's without a process group."""
    _not_initialized("all_gather")


class ReduceOp(enum.Enum):
    """How a collective combines the processes' tensors (``ReduceOp.SUM``, ``.AVG``, ...),
    for the code that names one; no collective runs here."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


__getattr__ = torch_names.submodules_on_use(__name__, (), torch_names.DISTRIBUTED)
