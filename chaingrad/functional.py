"""Math functions that work on plain numbers, Values, Tensors and numpy arrays alike.

Use them in a ``chaingrad.primitive``'s backward: it receives floats (or arrays) in an
ordinary ``backward()`` and Values (or Tensors) under ``create_graph=True``, and the same
line must work on both, e.g. ``F.exp(-x) * grad``.

Example:
    >>> import chaingrad.functional as F
    >>> from chaingrad import Value
    >>> F.exp(0.0), F.exp(Value(0.0)).data
    (1.0, 1.0)
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

__all__ = ["abs", "cos", "data", "exp", "log", "relu", "sigmoid", "sign", "sin", "sqrt", "tanh"]


def _apply(name: str, x: Any, on_number: Any) -> Any:
    method = getattr(x, name, None)
    if method is not None and callable(method):  # Value, Tensor
        return method()
    if type(x).__module__ == "numpy" and not isinstance(x, (int, float)):
        import numpy as np  # an ndarray or numpy scalar: the matching ufunc

        return _NUMPY[name](np)(x)
    if not isinstance(x, Real):
        raise TypeError(f"functional.{name}: needs a number, a Value, a Tensor or an array "
                        f"(something with a .{name}() method), got {type(x).__name__}")
    return on_number(x)


def _sigmoid_number(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)  # this form never overflows for very negative x
    return e / (1.0 + e)


_NUMPY = {
    "exp": lambda np: np.exp,
    "log": lambda np: np.log,
    "sqrt": lambda np: np.sqrt,
    "tanh": lambda np: np.tanh,
    "sin": lambda np: np.sin,
    "cos": lambda np: np.cos,
    "abs": lambda np: np.abs,
    "relu": lambda np: (lambda a: np.maximum(a, 0)),
    "sigmoid": lambda np: (lambda a: 0.5 * (1 + np.tanh(0.5 * a))),
}


def exp(x: Any) -> Any:
    """e ** x."""
    return _apply("exp", x, math.exp)


def log(x: Any) -> Any:
    """ln(x)."""
    return _apply("log", x, math.log)


def sqrt(x: Any) -> Any:
    """sqrt(x)."""
    return _apply("sqrt", x, math.sqrt)


def tanh(x: Any) -> Any:
    """tanh(x)."""
    return _apply("tanh", x, math.tanh)


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), without overflow."""
    return _apply("sigmoid", x, _sigmoid_number)


def sin(x: Any) -> Any:
    """sin(x)."""
    return _apply("sin", x, math.sin)


def cos(x: Any) -> Any:
    """cos(x)."""
    return _apply("cos", x, math.cos)


def abs(x: Any) -> Any:  # noqa: A001 - mirrors math/numpy naming on purpose
    """|x|."""
    return _apply("abs", x, lambda v: v if v >= 0 else -v)


def relu(x: Any) -> Any:
    """max(0, x)."""
    return _apply("relu", x, lambda v: v if v > 0 else 0.0)


def data(x: Any) -> Any:
    """The number or array that ``x`` holds: a Value's ``.data``, a Tensor's array, else ``x``.

    Example:
        >>> from chaingrad import Value
        >>> data(Value(2.0)), data(3.0)
        (2.0, 3.0)
    """
    return x if type(x) is float or not hasattr(x, "_prev") else x._value


def sign(x: Any) -> Any:
    """-1, 0 or 1 by the sign of ``x`` (a number, an array, or a node's data), as floats.

    A constant: it is never differentiated (it is the derivative of ``abs``).

    Example:
        >>> sign(-2.5), sign(0.0)
        (-1.0, 0.0)
    """
    x = data(x)
    if type(x).__module__ == "numpy" and not isinstance(x, (int, float)):
        import numpy as np

        return np.sign(x)
    return float((x > 0) - (x < 0))
