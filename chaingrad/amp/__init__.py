"""``chaingrad.amp``: torch's automatic mixed precision, on one CPU: ``autocast`` runs what
torch's CPU autocast runs in bfloat16 (or float16) as torch does (see
``chaingrad.amp.autocast_mode``), and ``GradScaler("cpu")`` scales losses and unscales
gradients with torch's algorithm and numbers, passing everything through when disabled,
as torch's does (see ``chaingrad.amp.grad_scaler``).

Example:
    >>> import chaingrad as torch
    >>> torch.amp.is_autocast_available("cpu")
    True
"""

from .. import torch_names
from .autocast_mode import autocast, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "is_autocast_available"]

__getattr__ = torch_names.submodules_on_use(__name__, (), torch_names.AMP)
