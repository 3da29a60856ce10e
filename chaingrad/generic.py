"""The elementwise primitives as functions of anything: a float, an array, a Value or a
Tensor (``exp``, ``log``, ``sin``, ``cos``, ``tanh``, ``sigmoid``, ``relu``, ``sqrt``,
``abs``), with ``data`` and ``sign``.

Use them in a ``chaingrad.primitive``'s backward: it receives floats (or arrays) in an
ordinary ``backward()`` and Values (or Tensors) under ``create_graph=True``, and the same
line must work on both, e.g. ``G.exp(-x) * grad``. Each is the primitive itself
(``chaingrad.rules``), which applied to a node makes a node, so that the gradient can be
differentiated again.

Example:
    >>> import chaingrad.generic as G
    >>> from chaingrad import Value
    >>> G.exp(0.0), G.exp(Value(0.0)).data
    (1.0, 1.0)
"""

from __future__ import annotations

from .rules import FUNCTIONS

globals().update(FUNCTIONS)  # exp = rules.EXP, ...: one name per elementwise primitive

__all__ = sorted([*FUNCTIONS, "data", "sign"])


def __dir__() -> list[str]:
    return __all__
