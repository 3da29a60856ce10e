"""``chaingrad.cuda.amp``: torch's older names, ``torch.cuda.amp.GradScaler(...)`` and
``torch.cuda.amp.autocast(...)``, which torch deprecates for ``torch.amp.GradScaler("cuda",
...)`` and ``torch.amp.autocast("cuda", ...)``: each says so with torch's warning, and is
that. There is no GPU, so both disable themselves, as on torch's CPU build.

Example:
    >>> import warnings
    >>> import chaingrad as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     scaler = torch.cuda.amp.GradScaler(enabled=False)
    >>> scaler.is_enabled()
    False
"""

from __future__ import annotations

import warnings
from typing import Any

from ..amp import autocast_mode, grad_scaler


class GradScaler(grad_scaler.GradScaler):
    """``chaingrad.amp.GradScaler("cuda", ...)``, under torch's older name."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


class autocast(autocast_mode.autocast):  # noqa: N801 - torch's name
    """``chaingrad.amp.autocast("cuda", ...)``, under torch's older name: disabled (no GPU)."""

    def __init__(self, enabled: bool = True, dtype: Any = None,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype, enabled, cache_enabled)
