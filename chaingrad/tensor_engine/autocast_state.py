"""What ``chaingrad.autocast`` does to an op: torch's CPU autocast, its state (on or off,
the dtype, the nesting, the cache of casts) and its policies in one table, ``POLICIES``,
which the ops named there read through the one hook they carry, ``@casts("op")``.

Under ``autocast(device_type="cpu", dtype=bfloat16)`` torch's CPU build gives each op of its
lists a policy (torch's "Autocast Op Reference", CPU), and chaingrad the same:

- ``LOWER`` (torch's ``lower_precision_fp``: ``matmul`` and so ``mm``, ``bmm`` and ``@``,
  ``linear``, ``conv2d`` and so ``conv1d``, ``einsum``, ``scaled_dot_product_attention``):
  each floating input (float32 or float16; float64 is left alone) is cast to the autocast
  dtype, the products are summed in float32, and the result, rounded once, is a tensor of
  the autocast dtype. chaingrad casts each input to the autocast dtype and to float64 (two
  differentiable casts: the gradient is rounded to the autocast dtype on its way back, as
  torch's is), runs the op in float64, where the sums of products are exact whatever
  their order, and casts its result to the autocast dtype: torch's numbers, bit for bit
  (``tests/test_amp.py``).
- ``FLOAT32`` (torch's ``fp32``: the losses): each floating input is cast to float32, the
  result is float32.
- ``KEEP``: an op that torch runs outside its lists but chaingrad composes of one on them
  (``dot`` is a matmul here, a kernel of its own in torch): it runs in its inputs' dtype,
  the listed op inside it untouched.

An op called inside another one of the table runs as the outer one made it (torch's
autocast does not reach below an op it has cast). ``cat`` and ``stack`` (torch's
"promote" list) already run in their inputs' widest dtype; every other op runs in its
inputs' dtype, bfloat16 included, as torch's do.

While autocast is on, a cast of a leaf that requires a gradient (a weight) is made once
and reused until the outermost ``autocast`` exits (torch's ``cache_enabled``), so that the
gradients of its uses meet in the autocast dtype, as in torch. The state is the process's
(torch's is each thread's: chaingrad runs in one).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .. import gradmode
from . import dtypes

LOWER = "lower_precision_fp"
"""The policy of an op run in the autocast dtype (see the module)."""
FLOAT32 = "fp32"
"""The policy of an op run in float32 (see the module)."""
KEEP = "keep"
"""The policy of an op run in its inputs' dtype, its listed ops inside untouched."""

POLICIES: dict[str, str] = {
    # torch's CPU "lower_precision_fp" list, the ops of it that chaingrad has as functions
    # of their own (mm, bmm and conv1d are a matmul and a conv2d here)
    "matmul": LOWER, "linear": LOWER, "conv2d": LOWER, "einsum": LOWER,
    "scaled_dot_product_attention": LOWER,
    # torch's CPU "fp32" list, the same way
    "cross_entropy": FLOAT32, "nll_loss": FLOAT32, "mse_loss": FLOAT32, "l1_loss": FLOAT32,
    "smooth_l1_loss": FLOAT32, "huber_loss": FLOAT32, "binary_cross_entropy": FLOAT32,
    "binary_cross_entropy_with_logits": FLOAT32,
    # on no list of torch's, made of a listed op here
    "dot": KEEP,
}
"""Each op of torch's CPU autocast lists that chaingrad has, and its policy."""


class AutocastState:
    """torch's CPU autocast state: whether it is on, its dtype (kept while it is off, as
    torch keeps it), whether casts are cached, how deep the ``autocast`` contexts are
    nested, whether an op of ``POLICIES`` is running, and the cached casts."""

    def __init__(self) -> None:
        self.enabled = False
        self.dtype: Any = None  # None: bfloat16, torch's default, looked up when asked
        self.cache_enabled = True
        self.nesting = 0
        self.inside = False
        self.cache: dict[int, tuple[Any, Any]] = {}


STATE = AutocastState()
"""The process's autocast state (``chaingrad.amp.autocast`` sets it)."""


def autocast_dtype() -> Any:
    """The dtype autocast casts to: bfloat16 until another is set (torch's default)."""
    return dtypes.bfloat16 if STATE.dtype is None else STATE.dtype


F = TypeVar("F", bound=Callable[..., Any])


def casts(op: str) -> Callable[[F], F]:
    """The hook an op of ``POLICIES`` carries: ``@casts("linear")`` above ``def linear``
    runs it under ``POLICIES["linear"]`` while autocast is on, and as written otherwise.

    Example:
        >>> import chaingrad as torch
        >>> x, w = torch.tensor([[1.001, 2.0]]), torch.tensor([[1.0], [1.0]])
        >>> with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        ...     y = x @ w
        >>> y, (x @ w).dtype
        (tensor([[3.]], dtype=chaingrad.bfloat16), chaingrad.float32)
    """
    policy = POLICIES[op]

    def hook(fn: F) -> F:
        @functools.wraps(fn)
        def autocasted(*args: Any, **kwargs: Any) -> Any:
            if not STATE.enabled or STATE.inside:  # the common case: as written
                return fn(*args, **kwargs)
            return _run(policy, fn, args, kwargs)

        return autocasted  # type: ignore[return-value]

    return hook


def _run(policy: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` under ``policy``, with no autocast below it (see the module)."""
    cast: Callable[[Any], Any] = (_lowered if policy == LOWER else
                                  _float32 if policy == FLOAT32 else _as_is)
    lowers = policy == LOWER and any(map(_eligible, (*args, *kwargs.values())))
    args = tuple(cast(a) for a in args)
    kwargs = {name: cast(a) for name, a in kwargs.items()}
    STATE.inside = True
    try:
        out = fn(*args, **kwargs)
    finally:
        STATE.inside = False
    return out.to(autocast_dtype()) if lowers else out


def _eligible(t: Any) -> bool:
    """Whether autocast casts ``t``: a floating Tensor other than float64 (torch's rule)."""
    value = getattr(t, "_value", None)
    return value is not None and dtypes.is_floating_dtype(value.dtype) and value.dtype.itemsize < 8


def _lowered(t: Any) -> Any:
    """``t`` cast to the autocast dtype, then to float64 for the op to sum its products in:
    torch sums them in float32, and its results are the exact sums rounded (the products
    of bfloat16 numbers are exact in float32), which float64 gives in any order."""
    if not _eligible(t):
        return t
    return _cached(t, autocast_dtype()).to(dtypes.float64)


def _float32(t: Any) -> Any:
    """``t`` cast to float32 if autocast casts it (else as it is)."""
    return t.to(dtypes.float32) if _eligible(t) else t


def _as_is(t: Any) -> Any:
    return t


def _cached(t: Any, dtype: Any) -> Any:
    """``t`` cast to ``dtype``; the cast of a leaf that requires a gradient is kept until
    the outermost autocast exits, and used again (torch's ``cache_enabled``)."""
    if t._value.dtype == dtype.dtype:
        return t
    if not (STATE.cache_enabled and t.requires_grad and t.is_leaf
            and gradmode.is_grad_enabled()):
        return t.to(dtype)
    kept = STATE.cache.get(id(t))
    if kept is None or kept[0] is not t or kept[1].dtype != dtype:
        kept = STATE.cache[id(t)] = (t, t.to(dtype))
    return kept[1]


def clear_cache() -> None:
    """Forget the cached casts (torch's ``clear_autocast_cache``)."""
    STATE.cache.clear()
