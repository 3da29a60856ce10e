"""``chaingrad.nn.parallel``: a model over several devices or processes, as torch's, where
chaingrad has one CPU and one process.

``DataParallel(model)`` runs the model as it is, as torch's does without GPUs (its state
dict's keys start with ``module.``, as torch's). ``DistributedDataParallel`` can be
imported and named (``isinstance``, ``from torch.nn.parallel import
DistributedDataParallel as DDP`` at a script's top); wrapping a model in it is the
program's multi-process path, which raises ``SingleProcessError``: that path runs on PyTorch
with the imports changed back.

Example:
    >>> import chaingrad as torch
    >>> model = torch.nn.DataParallel(torch.nn.Linear(2, 1))
    >>> sorted(model.state_dict())
    ['module.bias', 'module.weight']
    >>> tuple(model(torch.ones(4, 2)).shape)
    (4, 1)
"""

from __future__ import annotations

from typing import Any

from .. import distributed, torch_names
from ..errors import NoCudaError, SingleProcessError
from .modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """``module`` run as it is: torch's DataParallel without GPUs (chaingrad has none), which
    calls the module on the whole batch.

    Args:
        module: The model.
        device_ids: Accepted for torch's sake; only None or an empty list (no GPU).
        output_device: Accepted for torch's sake; only None.
        dim: The batch dimension (unused with one device).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0):
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be a chaingrad.nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids or output_device is not None:
            raise NoCudaError(f"DataParallel(device_ids={device_ids!r}): Torch not compiled "
                              "with CUDA enabled (chaingrad computes on the CPU only)")
        self.module = module
        self.device_ids: list[int] = []
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """torch's DistributedDataParallel, for a program's multi-process path: making one
    raises ``SingleProcessError`` (chaingrad runs in one process; that path runs on PyTorch
    with the imports changed back)."""

    def __init__(self, module: Module, *args: Any, **kwargs: Any):
        raise SingleProcessError(f"DistributedDataParallel: {distributed.ONE_PROCESS}")

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:  # never reached: see __init__
        return self.module(*inputs, **kwargs)


__getattr__ = torch_names.submodules_on_use(__name__, (), torch_names.NN_PARALLEL)
