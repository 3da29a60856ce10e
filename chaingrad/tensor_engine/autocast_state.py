"""Whether ``chaingrad.autocast`` is on, and what it does to the ops torch's CPU autocast
runs in lower precision: their floating inputs and their output rounded to bfloat16 (or
float16).

torch's CPU autocast runs ``matmul``, ``mm``, ``bmm``, ``linear`` and the convolutions
(``LOWER_PRECISION_OPS``) on inputs cast to the autocast dtype, products summed in float32,
and gives the result in that dtype. chaingrad runs them on the inputs rounded to it (a
cast there and back, differentiable: the gradient is rounded on its way back too) and
rounds the result the same way, so that these ops give torch's numbers; the result stays
in the input's dtype (float32), where torch's is bfloat16, and the ops after it run in
float32. A float64 tensor is left as it is, as torch's autocast leaves it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LOWER_PRECISION_OPS = ("matmul", "mm", "bmm", "linear", "conv2d")
"""The ops of torch's CPU autocast list ("CPU Ops that can autocast to bfloat16") that
chaingrad has; each asks ``active`` and runs through ``run_lowered`` when it says so."""

_state: dict[str, Any] = {"dtype": None, "inside": False}


def set_dtype(dtype: Any) -> Any:
    """Turn autocast on with ``dtype`` (a chaingrad dtype), or off with None; returns what
    was set before, for the context manager to put back."""
    before = _state["dtype"]
    _state["dtype"] = dtype
    return before


def get_dtype() -> Any:
    """The autocast dtype while autocast is on, else None."""
    return _state["dtype"]


def active(*tensors: Any) -> bool:
    """Whether an op of ``LOWER_PRECISION_OPS`` on ``tensors`` runs lowered: autocast is on,
    the op is not already inside a lowered one, and a tensor is float32 (or float16)."""
    return (_state["dtype"] is not None and not _state["inside"]
            and any(_eligible(t) for t in tensors))


def _eligible(t: Any) -> bool:
    value = getattr(t, "_value", None)
    return value is not None and value.dtype.kind == "f" and value.dtype.itemsize < 8


def lowered(t: Any) -> Any:
    """``t`` rounded to the autocast dtype and back (a float64 or non-float tensor, or
    None, as it is)."""
    if not _eligible(t):
        return t
    return t.to(_state["dtype"]).to(t.dtype)


def run_lowered(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``op(*args, **kwargs)`` on its tensor arguments rounded to the autocast dtype, its
    result rounded too: torch's autocast of ``op``, in chaingrad's dtype (see the module)."""
    _state["inside"] = True
    try:
        return lowered(op(*(lowered(a) for a in args), **kwargs))
    finally:
        _state["inside"] = False
