"""``chaingrad.autocast`` (``chaingrad.amp.autocast``): torch's autocast context, as its CPU
build runs it.

``with torch.autocast(device_type="cpu", dtype=torch.bfloat16):`` runs the ops that torch's
CPU autocast runs in bfloat16 (``matmul``, ``mm``, ``bmm``, ``linear``, ``conv2d``) on their
inputs rounded to bfloat16, and rounds their results so (the numbers of torch's, kept in
float32: see ``chaingrad.tensor_engine.autocast_state``). ``device_type="cuda"`` is
disabled with torch's warning, since there is no GPU, and so is ``enabled=False``.

Example:
    >>> import chaingrad as torch
    >>> x = torch.tensor([[1.001, 2.0]])
    >>> w = torch.tensor([[1.0], [1.0]])
    >>> with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    ...     (x @ w).item()
    3.0
    >>> round((x @ w).item(), 4)
    3.001
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import Any

from ..tensor_engine import autocast_state, dtypes

DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "xla", "hpu", "mtia", "ipu", "maia")
"""The device types torch's autocast takes."""


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` takes ``device_type``: True for torch's (``"cpu"``,
    ``"cuda"``, ...), as torch answers even without the device."""
    return device_type in DEVICE_TYPES


class autocast:  # noqa: N801 - torch's name
    """Run the ops that torch's CPU autocast lowers in ``dtype`` (see the module); a context
    manager, and a decorator.

    Args:
        device_type: 'cpu'; 'cuda' (and the other devices) are disabled with a warning, as
            torch's CPU build disables them.
        dtype: bfloat16 (the default on the CPU, as torch's) or float16.
        enabled: False runs everything as without autocast.
        cache_enabled: Accepted for torch's sake (a cache of casts weights, for speed).
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"autocast: User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device_type = device_type
        self.fast_dtype = dtypes.bfloat16 if dtype is None else dtype
        self._enabled = bool(enabled)
        if device_type != "cpu" and self._enabled:
            warnings.warn(f"{device_type.upper()} is not available or torch_xla is imported. "
                          "Disabling autocast.", stacklevel=2)
            self._enabled = False
        if self._enabled and self.fast_dtype not in (dtypes.bfloat16, dtypes.float16):
            warnings.warn(f"In CPU autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\nCPU Autocast only supports dtype of "
                          f"{dtypes.bfloat16}, {dtypes.float16} currently.", stacklevel=2)
            self._enabled = False
        self._before: list[Any] = []

    def __enter__(self) -> autocast:
        self._before.append(autocast_state.set_dtype(self.fast_dtype) if self._enabled
                            else autocast_state.set_dtype(None))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        autocast_state.set_dtype(self._before.pop())

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def autocasted(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return autocasted


def is_autocast_enabled(device_type: str = "cpu") -> bool:
    """Whether autocast is on (on the CPU: no other device has it here)."""
    return device_type == "cpu" and autocast_state.get_dtype() is not None


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype autocast lowers to on ``device_type``: bfloat16 on the CPU (torch's default)
    until an ``autocast(dtype=...)`` is entered."""
    current = autocast_state.get_dtype()
    return dtypes.bfloat16 if current is None or device_type != "cpu" else current
