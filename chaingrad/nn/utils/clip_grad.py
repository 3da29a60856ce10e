"""``torch.nn.utils.clip_grad``: gradient clipping, ``clip_grad_norm_`` and ``clip_grad_value_``,
called between ``loss.backward()`` and ``optimizer.step()`` to keep one bad batch from
throwing the weights far away.

``clip_grad_norm_`` treats all the gradients as one long vector ``g`` and, if its norm is
above ``max_norm``, scales every gradient down by the same factor::

    total = norm([norm(p.grad) for p in parameters])          (of order norm_type)
    p.grad = p.grad * min(1, max_norm / (total + 1e-6))

Each norm is computed as torch computes it, in the gradients' float type and in the order
torch adds (``tensor_engine/reduction_order.py``): where the clipping starts, and so every
later step of a program that clips, follows torch's rounding.

``clip_grad_value_`` clamps each entry into ``[-clip_value, clip_value]``. Both change the
gradients in place, as torch's do, and record no graph.

Example:
    >>> import chaingrad as torch
    >>> w = torch.tensor([3.0, 4.0], requires_grad=True)
    >>> (w * w).sum().backward()          # w.grad = 2w = [6, 8]: norm 10
    >>> clip_grad_norm_([w], max_norm=1.0)
    tensor(10.)
    >>> w.grad
    tensor([0.6000, 0.8000])
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable
from numbers import Real
from typing import Any

import numpy as np

from ...errors import NonFiniteNormError
from ...gradmode import no_grad
from ...tensor_engine import Tensor
from ...tensor_engine.reduction_order import norm_in_torch_order, torch_orders
from ...tensor_engine.tensor import constant

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

_EPS = 1e-6  # keeps max_norm / total finite when every gradient is zero (torch's)


@no_grad()
def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The norm of order ``norm_type`` of all of ``tensors`` as one vector: the norm of
    their norms (``inf``: the largest magnitude; ``0``: the number of non-zero entries).

    Returns a 0-d Tensor of the tensors' dtype (float32 for float32 tensors; 0.0 for none).

    Raises:
        NonFiniteNormError: ``error_if_nonfinite`` and the norm is nan or inf.

    Example:
        >>> import chaingrad as torch
        >>> get_total_norm([torch.tensor([3.0]), torch.tensor([4.0])])
        tensor(5.)
        >>> get_total_norm([torch.tensor([3.0]), torch.tensor([-4.0])], norm_type="inf")
        tensor(4.)
    """
    order = _order("get_total_norm", norm_type)
    _check_foreach("get_total_norm", foreach)
    tensors = _tensors("get_total_norm", "tensors", tensors)
    if not tensors:
        return constant(np.asarray(0.0, dtype=np.float32))
    arrays = [t._value for t in tensors]
    kinds = {a.dtype.kind for a in arrays}
    if not kinds <= {"f"}:
        raise TypeError(f"get_total_norm: expected floating-point tensors, got "
                        f"{sorted({str(a.dtype) for a in arrays})}")
    dtype = np.result_type(*arrays)
    if torch_orders(dtype) and all(torch_orders(a.dtype) for a in arrays):
        # as torch: each gradient's norm in its own type, then the norm of their stack, each
        # added in torch's order (its float32 rounding moves where clipping starts)
        each = [norm_in_torch_order(a, order) for a in arrays]
        total = float(norm_in_torch_order(np.stack(each).astype(dtype), order))
    else:
        each = [_norm(a.astype(np.float64).ravel(), order) for a in arrays]
        total = _norm(np.array(each, dtype=np.float64), order)
    if error_if_nonfinite and not math.isfinite(total):
        raise NonFiniteNormError(
            f"clip_grad_norm_: the total norm of order {order} of the gradients is {total}, "
            "so they cannot be clipped (pass error_if_nonfinite=False to scale them by it "
            "anyway)")
    return constant(np.asarray(total, dtype=dtype))  # nan and inf included, as torch's


@no_grad()
def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor | float, foreach: bool | None = None) -> None:
    """Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``,
    in place (``total_norm`` from ``get_total_norm``).

    Example:
        >>> import chaingrad as torch
        >>> w = torch.tensor([1.0, 1.0], requires_grad=True)
        >>> w.grad = torch.tensor([30.0, 40.0])
        >>> clip_grads_with_norm_([w], 5.0, get_total_norm([w.grad]))
        >>> w.grad
        tensor([3.0000, 4.0000])
    """
    max_norm = _real("clip_grads_with_norm_", "max_norm", max_norm)
    _check_foreach("clip_grads_with_norm_", foreach)
    grads = _grads(_tensors("clip_grads_with_norm_", "parameters", parameters),
                   "clip_grads_with_norm_")
    _scale(grads, max_norm, total_norm)


def _scale(grads: list[Tensor], max_norm: float, total_norm: Tensor | float) -> None:
    """``clip_grads_with_norm_`` on gradients and a ``max_norm`` already checked."""
    if not grads:
        return
    norm = total_norm._value if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    if not np.isfinite(norm):
        return  # torch would write nan into the gradients: optimizer.step() names them
    dtype = norm.dtype if norm.dtype.kind == "f" else np.dtype(np.float32)
    # max_norm / (norm + eps), at most 1, in the norm's dtype as torch computes it: a number
    # divided by a tensor is the tensor's reciprocal times the number
    one = dtype.type(1.0)
    coef = np.minimum(one / (norm.astype(dtype) + dtype.type(_EPS)) * dtype.type(max_norm), one)
    for grad in grads:
        grad.mul_(constant(np.asarray(coef, dtype=dtype)))


@no_grad()
def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients of ``parameters`` down, in place, so that their norm (all of
    them as one vector) is at most ``max_norm``; return that norm before the clipping.

    Args:
        parameters: Tensors (``model.parameters()``), or one Tensor; those without a
            gradient are left out.
        max_norm: The largest norm allowed.
        norm_type: The norm's order: 2 (the default), 1, ``inf`` (``float("inf")`` or
            ``"inf"``), or any other.
        error_if_nonfinite: Raise when the norm is nan or inf, instead of scaling by it.
        foreach: torch's choice of implementation: accepted, it changes nothing here.

    Returns:
        The total norm of the gradients, a 0-d Tensor (float32 for float32 gradients).

    A nan or inf norm leaves the gradients as they are (torch scales them by it, writing
    nan into them): the optimizer's ``step()`` then names the parameter whose gradient is
    not finite (``NonFiniteGradError``).

    Raises:
        NonFiniteNormError: ``error_if_nonfinite`` and the norm is nan or inf (a
            RuntimeError, as torch's); no gradient was changed.
        TypeError: ``parameters`` holds something other than Tensors, or ``max_norm``
            is not a number.

    Example:
        >>> import chaingrad as torch
        >>> w = torch.tensor([1.0, 1.0], requires_grad=True)
        >>> w.grad = torch.tensor([0.3, 0.4])
        >>> clip_grad_norm_(w, max_norm=1.0)   # below max_norm: nothing to clip
        tensor(0.5000)
        >>> w.grad
        tensor([0.3000, 0.4000])
    """
    max_norm = _real("clip_grad_norm_", "max_norm", max_norm)
    if isinstance(parameters, types.GeneratorType):
        parameters = list(parameters)
        if not parameters:
            warnings.warn("clip_grad_norm_: parameters is an empty generator: nothing to "
                          "clip (was model.parameters() used up by an earlier loop?)",
                          stacklevel=3)
    grads = _grads(_tensors("clip_grad_norm_", "parameters", parameters), "clip_grad_norm_")
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _scale(grads, max_norm, total)
    return total


@no_grad()
def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every entry of the gradients of ``parameters`` into ``[-clip_value,
    clip_value]``, in place.

    Example:
        >>> import chaingrad as torch
        >>> w = torch.tensor([1.0, 1.0, 1.0], requires_grad=True)
        >>> w.grad = torch.tensor([-3.0, 0.5, 2.0])
        >>> clip_grad_value_([w], clip_value=1.0)
        >>> w.grad
        tensor([-1.0000,  0.5000,  1.0000])
    """
    clip_value = _real("clip_grad_value_", "clip_value", clip_value)
    _check_foreach("clip_grad_value_", foreach)
    for grad in _grads(_tensors("clip_grad_value_", "parameters", parameters),
                       "clip_grad_value_"):
        grad.clamp_(min=-clip_value, max=clip_value)


# ---- helpers ----


def _norm(values: np.ndarray, order: float) -> float:
    """The norm of order ``order`` of a 1-d float64 array (torch.linalg.vector_norm's)."""
    magnitudes = np.abs(values)
    if order == math.inf:
        return float(magnitudes.max(initial=0.0))
    if order == -math.inf:
        return float(magnitudes.min(initial=math.inf)) if magnitudes.size else 0.0
    if order == 0:
        return float(np.count_nonzero(magnitudes))
    if order == 1:
        return float(magnitudes.sum())
    if order == 2:
        return float(np.sqrt(np.dot(magnitudes, magnitudes)))
    return float(np.sum(magnitudes**order) ** (1.0 / order))


def _order(where: str, norm_type: Any) -> float:
    """``norm_type`` as a float (``"inf"`` included, as torch takes it)."""
    try:
        return float(norm_type)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: norm_type must be a number or 'inf', got "
                        f"{type(norm_type).__name__} {norm_type!r}") from None


def _real(where: str, name: str, value: Any) -> float:
    if isinstance(value, Tensor) and value._value.size == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{where}: {name} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    return float(value)


def _check_foreach(where: str, foreach: Any) -> None:
    if foreach not in (None, True, False):
        raise TypeError(f"{where}: foreach must be None, True or False, got {foreach!r}")


def _tensors(where: str, name: str, given: Any) -> list[Tensor]:
    """One Tensor, or an iterable of them, as a list; anything else refused by name."""
    if isinstance(given, Tensor):
        return [given]
    if not isinstance(given, Iterable) or isinstance(given, (str, bytes)):
        raise TypeError(f"{where}: {name} must be a Tensor or an iterable of Tensors "
                        f"(model.parameters()), got {type(given).__name__}")
    found = list(given)
    for i, item in enumerate(found):
        if not isinstance(item, Tensor):
            hint = (" (a Value's gradient is a float: chaingrad clips Tensor gradients)"
                    if type(item).__name__ == "Value" else "")
            raise TypeError(f"{where}: {name}[{i}] must be a Tensor, got "
                            f"{type(item).__name__}{hint}")
    return found


def _grads(parameters: list[Tensor], where: str = "") -> list[Tensor]:
    """The gradients there are; ``where``: they are to be changed in place, which chaingrad
    cannot do to a gradient that is itself in a graph (``backward(create_graph=True)``)."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if where and any(g.grad_fn is not None for g in grads):
        raise NotImplementedError(
            f"{where}: a gradient made by backward(create_graph=True) is part of a graph, "
            "which chaingrad cannot change in place yet; clip a detached copy "
            "(p.grad = p.grad.detach()) or call backward() without create_graph")
    return grads

