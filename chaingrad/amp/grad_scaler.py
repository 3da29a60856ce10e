"""``chaingrad.amp.GradScaler``: torch's gradient scaler, which keeps the small gradients of
low-precision training from rounding to zero: the loss is multiplied by a scale before
``backward()``, the gradients are divided by it before the optimizer's step, and a step
whose gradients hold an inf or a nan is skipped while the scale shrinks.

On the CPU (``GradScaler("cpu")``) it runs torch's algorithm with torch's numbers: the
scale is a float32 number, ``init_scale`` at first; ``update()`` multiplies it by
``backoff_factor`` after a step that found an inf or a nan, and by ``growth_factor`` after
``growth_interval`` steps in a row that found none. ``GradScaler("cuda")`` (torch's default
device) disables itself with torch's warning, as on torch's CPU build, and a disabled scaler
passes everything through: ``scale(loss)`` is ``loss``, ``step(optimizer)`` is
``optimizer.step()``, ``update()`` and ``unscale_`` do nothing, ``get_scale()`` is 1.0.

Example:
    >>> import chaingrad as torch
    >>> w = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)
    >>> scaler.scale((w * 2).sum()).backward()
    >>> w.grad.item()
    2048.0
    >>> scaler.step(opt); scaler.update()
    >>> w.item(), scaler.get_scale()
    (0.8, 2048.0)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from enum import Enum
from typing import Any

import numpy as np

from ..gradmode import no_grad
from ..tensor_engine import Tensor, dtypes
from ..tensor_engine.factories import tensor


class OptState(Enum):
    """Where an optimizer is in its iteration, as the scaler tracks it (torch's)."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """torch's ``GradScaler``: scales the loss, unscales the gradients, skips the steps
    whose gradients are not finite, and adapts the scale (see the module).

    Args:
        device: 'cuda' (torch's default; no GPU here, so disabled with torch's warning) or
            'cpu'.
        init_scale: The scale at first.
        growth_factor: What the scale is multiplied by after ``growth_interval`` steps
            without an inf or a nan (> 1).
        backoff_factor: What the scale is multiplied by after a step with one (< 1).
        growth_interval: How many steps in a row without an inf or a nan grow the scale.
        enabled: False: pass everything through (see the module).

    Example:
        >>> import chaingrad as torch
        >>> scaler = torch.amp.GradScaler("cpu")
        >>> scaler.get_scale(), scaler.state_dict()["growth_interval"]
        (65536.0, 2000)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if device == "cuda" and self._enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:  # torch's checks, with torch's types
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._scale: np.float32 | None = None  # made by the first scale(), as torch's
        self._growth_tracker: int | None = None
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        """Whether this scaler scales (False for a disabled one: see the module)."""
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a Tensor, or a list, tuple or other iterable of them) multiplied by
        the scale, each keeping its dtype; as they are if the scaler is disabled."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = np.float32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
        factor = tensor(self._scale)  # a 0-d float32 tensor: the outputs keep their dtype
        return _scaled(outputs, factor)

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale, in place, noting
        whether any holds an inf or a nan (before ``clip_grad_norm_``, say); ``step`` does
        it if it has not been done since the last ``update``."""
        if not self._enabled:
            return
        self._check_scaled("unscale_")
        state = self._per_optimizer.setdefault(id(optimizer), _fresh_state())
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = float(np.float32(1.0 / np.float64(self._scale)))  # torch's, in float32
        state["found_inf"] = self._unscale_grads(optimizer, inv_scale)
        state["stage"] = OptState.UNSCALED

    @staticmethod
    def _unscale_grads(optimizer: Any, inv_scale: float) -> bool | None:
        """Multiply each gradient by ``inv_scale``; whether one held an inf or a nan (None
        if no parameter has a gradient)."""
        found_inf: bool | None = None
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if grad.dtype == dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    finite = bool(grad.float().isfinite().all())
                    found_inf = bool(found_inf) or not finite
                    grad.mul_(inv_scale)
        return found_inf

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` on the unscaled gradients (``unscale_``
        first, if it has not been called), skipped if a gradient held an inf or a nan;
        returns what the step returns (None if skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scaled("step")
        state = self._per_optimizer.setdefault(id(optimizer), _fresh_state())
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: Any = None) -> None:
        """The scale for the next iteration: ``new_scale`` if given (a number, or a
        one-element tensor), else torch's rule (see the module)."""
        if not self._enabled:
            return
        self._check_scaled("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor "
                          "or torch.FloatTensor with requires_grad=False.")
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                new_scale = new_scale.item()
            self._scale = np.float32(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._scale, self._growth_tracker = _updated(
                self._scale, self._growth_tracker, any(found), self._growth_factor,
                self._backoff_factor, self._growth_interval)
        self._per_optimizer = {}

    def _check_scaled(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may "
                                 "indicate your script did not use scaler.scale(loss or "
                                 "outputs) earlier in the iteration.")

    def get_scale(self) -> float:
        """The scale (``init_scale`` until the first ``scale``); 1.0 if disabled."""
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale is None else self._scale)

    def get_growth_factor(self) -> float:
        """The factor the scale grows by."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale shrinks by."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many steps without an inf or a nan grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set how many steps without an inf or a nan grow the scale."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else \
            self._growth_tracker

    def state_dict(self) -> dict[str, Any]:
        """torch's: ``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker``; ``{}`` for a disabled scaler."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take a ``state_dict()``'s numbers (torch's or chaingrad's); nothing to load into a
        disabled scaler, and torch's error for an empty one."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = np.float32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker


def _scaled(outputs: Any, factor: Tensor) -> Any:
    """Each Tensor of ``outputs`` times ``factor``; lists and tuples stay so."""
    if isinstance(outputs, Tensor):
        return outputs * factor
    if isinstance(outputs, Iterable):
        scaled = (_scaled(each, factor) for each in outputs)
        return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
    raise ValueError("outputs must be a Tensor or an iterable of Tensors")


def _updated(scale: np.float32, tracker: int, found_inf: bool, growth_factor: float,
             backoff_factor: float, growth_interval: int) -> tuple[np.float32, int]:
    """torch's update of the scale and of the count of steps since it last changed: shrunk
    after an inf or a nan; grown after ``growth_interval`` steps without, if the grown
    scale is finite; in float32 arithmetic, as torch's."""
    if found_inf:
        return np.float32(scale * np.float32(backoff_factor)), 0
    if tracker + 1 == growth_interval:
        grown = np.float32(scale * np.float32(growth_factor))
        return (grown, 0) if np.isfinite(grown) else (scale, 0)
    return scale, tracker + 1
