"""``chaingrad.autocast`` (``chaingrad.amp.autocast``): torch's autocast context, as its CPU
build runs it, and the functions that read and set its state, as torch's.

``with torch.autocast(device_type="cpu", dtype=torch.bfloat16):`` runs the ops of torch's
CPU autocast lists as torch does (``chaingrad.tensor_engine.autocast_state`` has the lists
and says what each policy does): ``matmul``, ``mm``, ``bmm``, ``@``, ``linear``, the
convolutions, ``einsum`` and ``scaled_dot_product_attention`` give bfloat16 tensors with
torch's numbers (inputs rounded to bfloat16, products summed in float32, the result
rounded once), the losses run in float32, and everything else in its inputs' dtype. The
gradients reach float32 parameters in float32, as torch's do. Contexts nest, and
``enabled=False`` turns autocast off within one. ``device_type="cuda"`` is disabled with
torch's warning, since there is no GPU.

Example:
    >>> import chaingrad as torch
    >>> x = torch.tensor([[1.001, 2.0]])
    >>> w = torch.tensor([[1.0], [1.0]])
    >>> with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    ...     y = x @ w
    ...     torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    (True, chaingrad.bfloat16)
    >>> y
    tensor([[3.]], dtype=chaingrad.bfloat16)
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
        dtype: bfloat16 or float16; None keeps the current one (bfloat16 on the CPU
            until set, as torch's).
        enabled: False runs everything as without autocast.
        cache_enabled: Whether the casts of weights are made once and reused until the
            outermost autocast exits (torch's default: True).
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
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        if device_type != "cpu" and self._enabled:
            warnings.warn(f"{device_type.upper()} is not available or torch_xla is imported. "
                          "Disabling autocast.", stacklevel=2)
            self._enabled = False
        if (self._enabled and device_type == "cpu"
                and self.fast_dtype not in (dtypes.bfloat16, dtypes.float16)):
            warnings.warn(f"In CPU autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\nCPU Autocast only supports dtype of "
                          f"{dtypes.bfloat16}, {dtypes.float16} currently.", stacklevel=2)
            self._enabled = False
        self._before: list[Any] = []

    def __enter__(self) -> autocast:
        state = autocast_state.STATE
        self._before.append((state.enabled, state.dtype, state.cache_enabled))
        if self.device_type == "cpu":  # another device's autocast changes nothing here
            state.enabled, state.dtype = self._enabled, self.fast_dtype
            if self._cache_enabled is not None:
                state.cache_enabled = self._cache_enabled
        state.nesting += 1
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        state = autocast_state.STATE
        state.nesting -= 1
        if state.nesting == 0:  # the outermost autocast: its cached casts go
            autocast_state.clear_cache()
        state.enabled, state.dtype, state.cache_enabled = self._before.pop()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def autocasted(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return autocasted


DEVICE_NAMES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
"""The device types torch's autocast functions name in their error."""

BFLOAT16_DEVICES = ("cpu", "hpu", "xla", "maia")
"""The devices whose autocast dtype is bfloat16 until set (float16 on the others)."""


def _device(op: str, device_type: Any) -> str:
    """``device_type`` checked as torch's autocast functions check it."""
    if not isinstance(device_type, str):
        raise TypeError(f"{op}(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    if device_type not in DEVICE_NAMES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_NAMES)} device type at start "
                           f"of device string: {device_type}")
    return device_type


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` (torch's default: ``"cuda"``, never on
    here; ``"cpu"``: inside an enabled ``autocast("cpu")``).

    Example:
        >>> import chaingrad as torch
        >>> with torch.autocast("cpu"):
        ...     torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled()
        (True, False)
    """
    return _device("is_autocast_enabled", device_type) == "cpu" and autocast_state.STATE.enabled


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype autocast casts to on ``device_type``: on the CPU, bfloat16 until an
    ``autocast(dtype=...)`` or ``set_autocast_dtype`` sets another (torch's defaults
    elsewhere: float16 for ``"cuda"``).

    Example:
        >>> import chaingrad as torch
        >>> torch.get_autocast_dtype("cpu"), torch.get_autocast_dtype("cuda")
        (chaingrad.bfloat16, chaingrad.float16)
    """
    if _device("get_autocast_dtype", device_type) == "cpu":
        return autocast_state.autocast_dtype()
    return dtypes.bfloat16 if device_type in BFLOAT16_DEVICES else dtypes.float16


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` without a context (torch's low-level
    switch; ``autocast`` is the way to use it). Another device than the CPU is ignored."""
    if _device("set_autocast_enabled", device_type) == "cpu":
        autocast_state.STATE.enabled = bool(enabled)


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the dtype autocast casts to on ``device_type`` (torch's low-level switch)."""
    if _device("set_autocast_dtype", device_type) == "cpu":
        autocast_state.STATE.dtype = dtype


def get_autocast_cpu_dtype() -> Any:
    """``get_autocast_dtype("cpu")``, with torch's deprecation warning."""
    warnings.warn("torch.get_autocast_cpu_dtype() is deprecated. Please use "
                  "torch.get_autocast_dtype('cpu') instead.", DeprecationWarning, stacklevel=2)
    return get_autocast_dtype("cpu")


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")``, with torch's deprecation warning."""
    warnings.warn("torch.is_autocast_cpu_enabled() is deprecated. Please use "
                  "torch.is_autocast_enabled('cpu') instead.", DeprecationWarning, stacklevel=2)
    return is_autocast_enabled("cpu")


def is_autocast_cache_enabled() -> bool:
    """Whether autocast keeps the casts of weights for reuse (True unless set otherwise)."""
    return autocast_state.STATE.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Keep (True) or remake (False) the casts of weights under autocast."""
    autocast_state.STATE.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Forget the casts of weights that autocast kept."""
    autocast_state.clear_cache()
