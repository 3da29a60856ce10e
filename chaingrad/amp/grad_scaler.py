"""``chaingrad.amp.GradScaler``: torch's gradient scaler, which float16 training on a GPU
needs so that small gradients do not round to zero. chaingrad has no GPU, and a disabled
scaler is what torch's CPU build runs: ``GradScaler("cuda")`` (torch's default device)
disables itself with torch's warning, and a disabled scaler passes everything through:
``scale(loss)`` is ``loss``, ``step(optimizer)`` is ``optimizer.step()``, ``update()`` and
``unscale_`` do nothing, ``get_scale()`` is 1.0.

Example:
    >>> import chaingrad as torch
    >>> scaler = torch.amp.GradScaler(enabled=False)
    >>> w = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> scaler.scale((w * 2).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> w.tolist(), scaler.get_scale(), scaler.is_enabled()
    ([0.8], 1.0, False)
"""

from __future__ import annotations

import warnings
from typing import Any


class GradScaler:
    """torch's ``GradScaler``; only disabled (see the module).

    Args:
        device: 'cuda' (torch's default; no GPU here, so disabled with torch's warning) or
            'cpu'.
        init_scale, growth_factor, backoff_factor, growth_interval: torch's, kept for
            ``state_dict``; a disabled scaler uses none.
        enabled: False: pass everything through. True on the CPU (a scaler that scales) is
            not in chaingrad yet.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._init_scale, self._growth_factor = init_scale, growth_factor
        self._backoff_factor, self._growth_interval = backoff_factor, growth_interval
        if enabled and device != "cpu":
            warnings.warn(f"torch.{device}.amp.GradScaler is enabled, but {device.upper()} is "
                          "not available.  Disabling.", stacklevel=2)
            enabled = False
        if enabled:
            raise NotImplementedError("GradScaler(device='cpu', enabled=True) is not in "
                                      "chaingrad yet: float32 training needs no scaler "
                                      "(enabled=False)")
        self._enabled = False

    def is_enabled(self) -> bool:
        """False: a disabled scaler (see the module)."""
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        """``outputs`` as they are (a disabled scaler's)."""
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        """Nothing to unscale (a disabled scaler's)."""

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)``, as a disabled scaler's."""
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        """Nothing to update (a disabled scaler's)."""

    def get_scale(self) -> float:
        """1.0, as a disabled scaler's."""
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict[str, Any]:
        """``{}``, as a disabled scaler's (a checkpoint holds it as torch's does)."""
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Nothing to load into a disabled scaler; torch's error for an empty one."""
        if not self._enabled:
            return
