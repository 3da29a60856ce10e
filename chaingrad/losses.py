"""Loss functions: each the mean over a batch, built from ops so it can be differentiated.

Each loss takes a batch in one of two forms:

- Values: a list with one entry per example: a Value (a model's score) for ``mse_loss``,
  ``hinge_loss`` and ``bce_with_logits``, and a list of Values (one logit per class) for
  ``cross_entropy``. Targets and labels are plain numbers.
- Tensors: a ``Tensor`` (or numpy array) whose first axis is the batch, e.g. logits of
  shape (N, C) for ``cross_entropy`` with N integer labels. The mean is over every entry,
  as in ``torch.nn.functional`` (for scores of shape (N,) or (N, 1), the batch mean).
  Targets and labels are arrays, lists or Tensors of the same shape; for scores of shape
  (N, 1), shape (N,) is taken as one target per row (never broadcast to (N, N)).

``bce_with_logits`` and ``cross_entropy`` never exponentiate a large positive number
(the log-sum-exp trick), so logits of +-1000 are fine.

Example:
    >>> from chaingrad import Value
    >>> scores = [Value(2.0), Value(-0.5)]
    >>> loss = hinge_loss(scores, [1, 1])   # mean(relu(1 - y * s)) = (0 + 1.5) / 2
    >>> loss.backward()
    >>> loss.data, scores[1].grad
    (0.75, -0.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any

from .engine import Value


def mse_loss(pred: Sequence[Value], target: Sequence[float]) -> Value:
    """Mean squared error: ``mean((pred_i - target_i) ** 2)``.

    Args:
        pred: One Value (or number) per example, or a Tensor.
        target: One number (or Value) per example, or an array or Tensor shaped as pred.

    Example:
        >>> mse_loss([Value(1.0), Value(3.0)], [0.0, 1.0]).data   # (1 + 4) / 2
        2.5
    """
    if tensors := _on_tensors(pred):
        return tensors.mse_loss(pred, target)
    pred = _batch("mse_loss", "pred", pred)
    target = _targets("mse_loss", target, len(pred))
    return _mean([(p - t) ** 2 for p, t in zip(pred, target, strict=True)])


def hinge_loss(scores: Sequence[Value], labels: Sequence[int]) -> Value:
    """The SVM max-margin loss of micrograd's demo: ``mean(relu(1 - y_i * s_i))``.

    Args:
        scores: One Value per example, or a Tensor; its sign is the predicted class.
        labels: One label per example, each -1 or +1 (a list, an array or a Tensor).

    Example:
        >>> hinge_loss([Value(0.5), Value(-3.0)], [1, -1]).data   # (0.5 + 0) / 2
        0.25
    """
    if tensors := _on_tensors(scores):
        return tensors.hinge_loss(scores, labels)
    scores = _batch("hinge_loss", "scores", scores)
    labels = _labels("hinge_loss", labels, len(scores))
    for i, y in enumerate(labels):
        if y not in (-1, 1):
            raise ValueError(f"hinge_loss: labels must be -1 or +1, got {y!r} at index {i}")
    # written as micrograd's demo writes it, so the numbers match micrograd's exactly
    return _mean([(s * -float(y) + 1).relu() for s, y in zip(scores, labels, strict=True)])


def bce_with_logits(logits: Sequence[Value], targets: Sequence[float]) -> Value:
    """Binary cross-entropy on logits: ``mean(-t log sigmoid(x) - (1 - t) log(1 - sigmoid(x)))``.

    Computed as ``(1 - t) x + log(1 + exp(-x))`` for ``x >= 0`` and
    ``-t x + log(1 + exp(x))`` for ``x < 0``: the same function, but ``exp`` only ever
    sees a number <= 0, so it cannot overflow. The gradient is ``sigmoid(x) - t``. On
    Tensors it is ``softplus(x) - t x``, with ``softplus(x) = -log_softmax([0, x])[0]``:
    stable, and a single formula, so the gradient is right at ``x = 0`` too.

    Args:
        logits: One Value per example, or a Tensor.
        targets: One probability in [0, 1] per logit (a list, an array or a Tensor).

    Example:
        >>> round(bce_with_logits([Value(0.0)], [1.0]).data, 6)   # log 2
        0.693147
    """
    if tensors := _on_tensors(logits):
        return tensors.bce_with_logits(logits, targets)
    logits = _batch("bce_with_logits", "logits", logits)
    targets = _targets("bce_with_logits", targets, len(logits))
    for i, t in enumerate(targets):
        if isinstance(t, (int, float)) and not 0 <= t <= 1:
            raise ValueError(f"bce_with_logits: targets must be in [0, 1], got {t!r} "
                             f"at index {i}")
    losses = []
    for x, t in zip(logits, targets, strict=True):
        if x.data >= 0:
            losses.append((1 - t) * x + ((-x).exp() + 1).log())
        else:
            losses.append(-t * x + (x.exp() + 1).log())
    return _mean(losses)


def cross_entropy(logits: Sequence[Sequence[Value]], labels: Sequence[int]) -> Value:
    """Softmax cross-entropy with integer class labels: ``mean(logsumexp(x_i) - x_i[y_i])``.

    ``logsumexp(x) = m + log(sum(exp(x_j - m)))`` with ``m = max(x)`` held constant (the
    gradient does not depend on it), so every ``exp`` sees a number <= 0.

    Args:
        logits: One list of C Values (one per class) per example, or a Tensor of
            shape (N, C).
        labels: One class index in ``range(C)`` per example (a list, an int array, or a
            Tensor).

    Example:
        >>> round(cross_entropy([[Value(0.0), Value(0.0)]], [1]).data, 6)   # log 2
        0.693147
        >>> from chaingrad import Tensor
        >>> logits = Tensor([[0.0, 0.0], [1000.0, -1000.0]], requires_grad=True)
        >>> loss = cross_entropy(logits, [1, 0])   # (log 2 + 0) / 2
        >>> loss.backward()
        >>> round(loss.item(), 6), logits.grad.tolist()
        (0.346574, [[0.25, -0.25], [0.0, 0.0]])
    """
    if tensors := _on_tensors(logits):
        return tensors.cross_entropy(logits, labels)
    if isinstance(logits, Value) or not isinstance(logits, Sequence) or not logits:
        raise _not_a_batch("cross_entropy", "logits", logits, "a non-empty list of rows")
    rows = []
    for i, row in enumerate(logits):
        if isinstance(row, Value) or not isinstance(row, Sequence):
            raise TypeError(f"cross_entropy: logits must be a list of rows (one list of "
                            f"class scores per example), got {type(row).__name__} at index {i}")
        rows.append(_batch("cross_entropy", f"logits[{i}]", row))
    classes = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != classes:
            raise ValueError(f"cross_entropy: every row of logits needs {classes} classes "
                             f"(as row 0), got {len(row)} in row {i}")
    labels = _labels("cross_entropy", labels, len(rows))
    losses = []
    for i, (row, y) in enumerate(zip(rows, labels, strict=True)):
        if not 0 <= y < classes:
            raise ValueError(f"cross_entropy: labels must be in range(0, {classes}), "
                             f"got {y!r} at index {i}")
        m = max(x.data for x in row)
        sum_exp = (row[0] - m).exp()
        for x in row[1:]:
            sum_exp = sum_exp + (x - m).exp()
        losses.append(sum_exp.log() + m - row[y])
    return _mean(losses)


# ---- helpers ----


def _mean(losses: list[Value]) -> Value:
    total = losses[0]
    for loss in losses[1:]:
        total = total + loss
    return total * (1.0 / len(losses))


def _not_a_batch(fn: str, arg: str, got: Any, expected: str) -> TypeError | ValueError:
    if isinstance(got, Sequence) and not isinstance(got, str) and len(got) == 0:
        return ValueError(f"{fn}: {arg} is empty; needs at least one example")
    return TypeError(f"{fn}: {arg} must be {expected}, got {type(got).__name__}")


def _batch(fn: str, arg: str, xs: Any) -> list[Value]:
    """``xs`` as a non-empty list of Values (numbers are made into Values)."""
    if isinstance(xs, (Value, str)) or not isinstance(xs, Sequence) or len(xs) == 0:
        raise _not_a_batch(fn, arg, xs, "a non-empty list with one Value per example")
    out = []
    for i, x in enumerate(xs):
        if isinstance(x, Value):
            out.append(x)
        elif isinstance(x, Real) and not isinstance(x, bool):
            out.append(Value(x))
        else:
            raise TypeError(f"{fn}: {arg} must hold Values or numbers, got "
                            f"{type(x).__name__} at index {i}")
    return out


def _targets(fn: str, ts: Any, n: int) -> list[Value | float]:
    ts = _sized(fn, "target" if fn == "mse_loss" else "targets", ts, n)
    out: list[Value | float] = []
    for i, t in enumerate(ts):
        if isinstance(t, Value):
            out.append(t)
        elif isinstance(t, Real) and not isinstance(t, bool) and math.isfinite(t):
            out.append(float(t))
        else:
            raise TypeError(f"{fn}: targets must be finite numbers, got {t!r} at index {i}")
    return out


def _labels(fn: str, labels: Any, n: int) -> list[int]:
    labels = _sized(fn, "labels", labels, n)
    out = []
    for i, y in enumerate(labels):
        if isinstance(y, Real) and not isinstance(y, bool) and float(y).is_integer():
            out.append(int(y))
        else:
            raise TypeError(f"{fn}: labels must be integers, got {y!r} at index {i}")
    return out


def _sized(fn: str, arg: str, xs: Any, n: int) -> list:
    if isinstance(xs, (str, Value)) or not hasattr(xs, "__len__") or not hasattr(xs, "__iter__"):
        raise TypeError(f"{fn}: {arg} must be a list with one entry per example, "
                        f"got {type(xs).__name__}")
    if len(xs) != n:
        raise ValueError(f"{fn}: got {n} predictions but {len(xs)} {arg}")
    return list(xs)


def _on_tensors(x: Any) -> Any:
    """The Tensor losses (``chaingrad/tensor_engine/losses.py``) if ``x`` is a Tensor or an
    array, else None. They need numpy, so they are imported only when one is used."""
    if not hasattr(x, "shape"):
        return None
    from .tensor_engine import losses

    return losses
