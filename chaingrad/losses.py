"""Loss functions: each the mean over a batch, built from ops so it can be differentiated.

Each loss takes a batch in one of two forms:

- Values, micrograd's form: a list with one entry per example: a Value (a model's score)
  for ``mse_loss``, ``hinge_loss`` and ``bce_with_logits``, and a list of Values (one logit
  per class) for ``cross_entropy``. Targets and labels are plain numbers.
- Tensors (or numpy arrays): handed to ``chaingrad.nn.functional``, the one Tensor form of
  each loss, with torch's semantics: ``mse_loss`` is ``F.mse_loss``, ``bce_with_logits``
  ``F.binary_cross_entropy_with_logits`` and ``cross_entropy`` ``F.cross_entropy``, means
  over every entry, with torch's checks and errors. A target of another shape than the
  predictions broadcasts with torch's warning (scores (N, 1) and targets (N,) make N * N
  terms: squeeze the scores); an integer ``cross_entropy`` target holds class indices, a
  floating one class probabilities. Targets may also be given as lists of numbers, made
  arrays first (floats in the predictions' dtype). torch has no ``hinge_loss``: its one
  Tensor form is here, the same mean of ``relu(1 - y * s)`` over the broadcast entries,
  with the same warning.

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
        pred: One Value (or number) per example, or a Tensor (``F.mse_loss``).
        target: One number (or Value) per example; for a Tensor, a Tensor, an array or a
            list of numbers, of pred's shape (another shape broadcasts, as in torch).

    Example:
        >>> mse_loss([Value(1.0), Value(3.0)], [0.0, 1.0]).data   # (1 + 4) / 2
        2.5
    """
    if functional := _functional(pred):
        return functional.mse_loss(pred, _array_if_list("mse_loss", "target", target, pred))
    pred = _batch("mse_loss", "pred", pred)
    target = _targets("mse_loss", target, len(pred))
    return _mean([(p - t) ** 2 for p, t in zip(pred, target, strict=True)])


def hinge_loss(scores: Sequence[Value], labels: Sequence[int]) -> Value:
    """The SVM max-margin loss of micrograd's demo: ``mean(relu(1 - y_i * s_i))``.

    Args:
        scores: One Value per example, or a Tensor; its sign is the predicted class.
        labels: One label per example, each -1 or +1 (a list, an array or a Tensor; for a
            Tensor of scores, of its shape: another shape broadcasts, as in torch).

    Example:
        >>> hinge_loss([Value(0.5), Value(-3.0)], [1, -1]).data   # (0.5 + 0) / 2
        0.25
    """
    if functional := _functional(scores):
        return _hinge_on_tensors(scores, labels, functional)
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
    sees a number <= 0, so it cannot overflow. The gradient is ``sigmoid(x) - t``.

    Args:
        logits: One Value per example, or a Tensor
            (``F.binary_cross_entropy_with_logits``, stable too).
        targets: One probability in [0, 1] per logit (a list, an array or a Tensor; for a
            Tensor of logits, of its shape, as torch requires).

    Example:
        >>> round(bce_with_logits([Value(0.0)], [1.0]).data, 6)   # log 2
        0.693147
    """
    if functional := _functional(logits):
        targets = _array_if_list("bce_with_logits", "targets", targets, logits)
        return functional.binary_cross_entropy_with_logits(logits, targets)
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
            shape (N, C) (``F.cross_entropy``).
        labels: One class index in ``range(C)`` per example (a list, an int array, or an
            int Tensor; a floating Tensor holds class probabilities, as in torch).

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
    if functional := _functional(logits):
        labels = _array_if_list("cross_entropy", "labels", labels, logits)
        return functional.cross_entropy(logits, labels)
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


# ---- Tensors: chaingrad.nn.functional's losses, and hinge_loss's one Tensor form ----


def _functional(x: Any) -> Any:
    """``chaingrad.nn.functional``, whose functions are the losses on Tensors, if ``x`` is a
    Tensor or an array, else None. It needs numpy, which Values do not: it is imported
    only when a Tensor is in play."""
    if not hasattr(x, "shape"):
        return None
    from .nn import functional

    return functional


def _array_if_list(fn: str, arg: str, target: Any, like: Any) -> Any:
    """A list or tuple of numbers as an array, whose floats take the dtype of ``like`` (the
    predictions), for the Tensor losses, which take Tensors and arrays, as torch's; anything
    else as it is. ``fn`` and ``arg`` name the loss and the argument in an error."""
    if not isinstance(target, (list, tuple)):
        return target
    import numpy as np  # an optional dependency, there when Tensors are

    try:
        array = np.asarray(target)
    except ValueError as exc:  # a ragged list
        raise ValueError(f"{fn}: {arg} must be a regular array, got a ragged list "
                         f"({exc})") from None
    if array.dtype.kind == "f" and np.dtype(like.dtype).kind == "f":
        array = array.astype(np.dtype(like.dtype))
    return array


def _hinge_on_tensors(scores: Any, labels: Any, F: Any) -> Any:  # noqa: N803 (torch's F)
    """hinge_loss on a Tensor (or an array) of scores: the mean of ``relu(1 - y * s)`` over
    the entries of the scores and the labels, broadcast together as torch broadcasts a
    loss's target, with its warning where their shapes differ. torch has no such loss (its
    ``hinge_embedding_loss`` is another), so this is hinge's one Tensor form. ``F``:
    ``chaingrad.nn.functional`` (``_functional``), and its ``Tensor``."""
    import numpy as np  # an optional dependency, there when Tensors are

    s = scores if isinstance(scores, F.Tensor) else F.Tensor(scores)
    if isinstance(labels, F.Tensor):
        y = labels.detach().numpy()
    elif isinstance(labels, (list, tuple, np.ndarray)):
        y = _array_if_list("hinge_loss", "labels", labels, s)
    else:
        raise TypeError(f"hinge_loss: labels must be a list, an array or a Tensor, got "
                        f"{type(labels).__name__}")
    if y.dtype.kind not in "iuf":
        raise TypeError(f"hinge_loss: labels must be numbers, got dtype {y.dtype}")
    wrong = (y != 1) & (y != -1)
    if wrong.any():
        index = tuple(int(i) for i in np.argwhere(wrong)[0])
        raise ValueError(f"hinge_loss: labels must be -1 or +1, got {y[wrong][0]} at index "
                         f"{index[0] if len(index) == 1 else index}")
    F.check_target_shape("hinge_loss", tuple(s.shape), y.shape, stacklevel=3)
    # written as micrograd's demo writes it (as the Values' form is), in the scores' dtype
    return (s * -y.astype(np.dtype(s.dtype)) + 1).relu().mean()
