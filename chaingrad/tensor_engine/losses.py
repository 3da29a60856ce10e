"""The losses of ``chaingrad.losses`` on Tensors: the mean over every entry, as in
``torch.nn.functional``; ``chaingrad.losses`` hands Tensors and arrays to these.

For scores of shape (N, 1), targets of shape (N,) are taken as one per row (never broadcast
to (N, N)). Computed stably: ``bce_with_logits`` and ``cross_entropy`` never exponentiate a
large positive number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine import Value
from .functions import stack
from .tensor import Tensor


def mse_loss(pred: Any, target: Any) -> Tensor:
    """mean((pred - target) ** 2) over every entry."""
    pred = _tensor_batch("mse_loss", "pred", pred)
    return ((pred - _tensor_targets("mse_loss", "target", target, pred)) ** 2).mean()


def hinge_loss(scores: Any, labels: Any) -> Tensor:
    """mean(relu(1 - y * s)) over every entry; labels -1 or +1."""
    scores = _tensor_batch("hinge_loss", "scores", scores)
    y = _label_array("hinge_loss", labels, scores.shape, "one per score")
    wrong = ~np.isin(y, (-1, 1))
    if wrong.any():
        raise ValueError(f"hinge_loss: labels must be -1 or +1, got {y[wrong][0]} at index "
                         f"{_first(wrong)}")
    return (scores * -y.astype(scores.dtype) + 1).relu().mean()


def bce_with_logits(logits: Any, targets: Any) -> Tensor:
    """mean(softplus(x) - t * x): binary cross-entropy on logits, stable for any x."""
    logits = _tensor_batch("bce_with_logits", "logits", logits)
    t = _tensor_targets("bce_with_logits", "targets", targets, logits)
    values = _numbers("bce_with_logits", "targets", t)
    outside = (values < 0) | (values > 1)
    if outside.any():
        raise ValueError(f"bce_with_logits: targets must be in [0, 1], got "
                         f"{values[outside][0]} at index {_first(outside)}")
    return (softplus(logits) - logits * t).mean()


def softplus(x: Tensor) -> Tensor:
    """log(1 + exp(x)), stable for any x: ``-log_softmax([0, x])[0]``, whose gradient,
    sigmoid(x), is exact everywhere."""
    return -stack([np.zeros_like(x._value), x], -1).log_softmax(-1)[..., 0]


def cross_entropy(logits: Any, labels: Any) -> Tensor:
    """mean(logsumexp(row) - row[label]) over the rows of (N, C) logits."""
    logits = _tensor_batch("cross_entropy", "logits", logits)
    if logits.ndim != 2 or logits.shape[1] == 0:
        raise ValueError(f"cross_entropy: logits must have shape (N, C) with C >= 1 (one row "
                         f"of class scores per example), got shape {tuple(logits.shape)}")
    n, classes = logits.shape
    y = _label_array("cross_entropy", labels, (n,), "one class index per row of logits")
    outside = (y < 0) | (y >= classes)
    if outside.any():
        raise ValueError(f"cross_entropy: labels must be in range(0, {classes}), got "
                         f"{y[outside][0]} at index {_first(outside)}")
    return -logits.log_softmax(axis=-1)[np.arange(n), y].mean()


def _tensor_batch(fn: str, arg: str, x: Any) -> Any:
    """``x`` as a Tensor (an array becomes a constant) with a non-empty batch axis."""
    t = x if isinstance(x, Tensor) else Tensor(x)
    if t.ndim == 0 or t.shape[0] == 0:
        raise ValueError(f"{fn}: {arg} must have a batch axis with at least one example, "
                         f"got shape {tuple(t.shape)}")
    return t


def _fit_shape(fn: str, arg: str, shape: tuple[int, ...], like: tuple[int, ...],
               per: str = "one per prediction") -> bool:
    """Whether ``shape`` must be given ``like``'s (N,) -> (N, 1); errors if it cannot fit."""
    if shape == like:
        return False
    if len(like) == 2 and like[1] == 1 and shape == like[:1]:
        return True
    raise ValueError(f"{fn}: {arg} must have shape {tuple(like)} ({per}), got shape "
                     f"{tuple(shape)}")


def _numbers(fn: str, arg: str, x: Any) -> Any:
    """``x`` (a Tensor's data, an array, a list) as an ndarray of real numbers."""
    if isinstance(x, Tensor):
        return x._value
    if isinstance(x, (str, bytes, Value)) or not hasattr(x, "__len__"):
        raise TypeError(f"{fn}: {arg} must be an array, a list or a Tensor with one entry "
                        f"per example, got {type(x).__name__}")
    try:
        array = np.asarray(x)
    except ValueError as exc:  # a ragged list
        raise ValueError(f"{fn}: {arg} must be a regular array, got a ragged list "
                         f"({exc})") from None
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{fn}: {arg} must be numbers, got dtype {array.dtype}")
    return array


def _first(mask: Any) -> Any:
    """The index of the first True entry of ``mask``: an int in 1-D, else a tuple."""
    index = tuple(int(i) for i in np.argwhere(mask)[0])
    return index[0] if len(index) == 1 else index


def _tensor_targets(fn: str, arg: str, target: Any, like: Any) -> Any:
    """Targets shaped as ``like``: a Tensor as it is, anything else a finite float array."""
    if isinstance(target, Tensor):
        return target.reshape(like.shape) if _fit_shape(fn, arg, target.shape,
                                                         like.shape) else target
    array = _numbers(fn, arg, target)
    if not np.isfinite(array).all():
        bad = ~np.isfinite(array)
        raise TypeError(f"{fn}: {arg} must be finite numbers, got {array[bad][0]} "
                        f"at index {_first(bad)}")
    if _fit_shape(fn, arg, array.shape, like.shape):
        array = array.reshape(like.shape)
    return array.astype(like.dtype)


def _label_array(fn: str, labels: Any, shape: tuple[int, ...], per: str) -> Any:
    """Integer labels as an int64 array of ``shape``; whole-number floats are accepted."""
    array = _numbers(fn, "labels", labels)
    if _fit_shape(fn, "labels", array.shape, shape, per):
        array = array.reshape(shape)
    if array.dtype.kind == "f":
        bad = ~(np.isfinite(array) & (array == np.round(array)))
        if bad.any():
            raise TypeError(f"{fn}: labels must be integers, got {array[bad][0]} at index "
                            f"{_first(bad)}")
    return np.asarray(array, dtype=np.int64)  # not a copy if it is one: compile reads it live
