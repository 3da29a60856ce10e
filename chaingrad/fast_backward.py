"""The float twin of ``autodiff.backward``: the same pass on a graph of Values, faster.

``Value.backward()`` runs it, unless ``chaingrad.use_reference()`` (or
``CHAINGRAD_REFERENCE=1``) asks for the readable ``autodiff.backward_pass``; nothing in the
reference imports it.

A training step of micrograd's demo back-propagates through ~65,000 Values; the readable
pass spends more time in Python's calls than in the arithmetic. This twin makes the same
steps in the same order and adds the same numbers (a test runs both over the op table and
over random graphs and asserts bit-identical gradients), with four shortcuts:

- ``+`` and ``*`` are nine nodes in ten of a network, and ``relu`` most of the rest;
  calling their rules costs more than the rules do, so the loop runs those three inline,
  exactly as ``rules.ADD``, ``rules.MUL`` and ``rules.RELU`` say: ``x + y`` gives both
  inputs ``g``; ``x * y`` gives ``x`` ``y * g`` and ``y`` ``x * g``; ``relu(x)`` gives
  ``x`` ``(out > 0) * g``. Every other rule is called.
- A node's inputs are read from its ``_a``/``_b`` slots (see ``autodiff.Node``) instead of
  a ``_prev`` tuple made for the occasion.
- nan and inf are looked for only where a gradient ends or is handed to a rule: at the
  leaves, where the walk arrives once each gradient is complete, and as ``g`` of every
  rule that is called (one may stop an inf: a straight-through op returns 1.0 whatever
  ``g`` is). ``+`` and ``*`` pass a nan or inf on (0 * inf is nan), so it reaches one of
  those checks. Then the caller runs the readable pass, which names the op.
- When every ``.grad`` was 0 before (a fresh graph, zeroed parameters: the usual case),
  there is nothing to put back at the end.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from . import autodiff
from .rules import ADD, MUL, RELU

_grad_of = attrgetter("grad")


def backward_from(root: Any) -> None:
    """``autodiff.backward([root], [1.0])``, for a Value: the same gradients, bit for bit.
    Where a gradient is not finite, every ``.grad`` is left as it was and the reference
    runs, to name the op that made it (and raise)."""
    with autodiff.walking, autodiff.paused_gc():
        if backward(autodiff.topological_order(root), 1.0, True) is not None:
            return
    autodiff.backward([root], [1.0])


def backward(order: list[Any], seed: float, accumulate: bool) -> dict[int, Any] | None:
    """``autodiff.backward`` over ``order`` for float gradients, seeded at the last node.

    Returns:
        What ``backward_pass`` returns, or None (every ``.grad`` left as it was) when a
        gradient was not finite, or a rule failed on a division by zero or an overflow:
        the caller then runs ``backward_pass``, which names the op that made it.
    """
    started_clean = accumulate and not any(map(_grad_of, order))
    before = [0.0] * len(order) if started_clean else [node.grad for node in order]
    if not started_clean:
        for node in order:
            node.grad = 0.0
    order[-1].grad = seed
    try:
        finite = propagate(order)
    except (ZeroDivisionError, OverflowError):
        finite = False
    except BaseException:
        _restore(order, before)
        raise
    if not finite:
        _restore(order, before)
        return None
    if not accumulate:
        found = {id(node): node.grad for node in order}
        _restore(order, before)
        return found
    if not started_clean:
        for node, old in zip(order, before):
            if old:
                node.grad = old + node.grad
    return {}


def _restore(order: list[Any], before: list[Any]) -> None:
    for node, old in zip(order, before):
        node.grad = old


def propagate(order: list[Any]) -> bool:
    """The twin of ``autodiff.backward_pass`` (unchecked, float gradients): every node's
    step, outputs before inputs. False as soon as a gradient is seen not to be finite."""
    add, mul, relu = ADD, MUL, RELU
    for node in reversed(order):
        rule = node._rule
        g = node.grad
        if rule is add:
            node._a.grad += g
            node._b.grad += g
        elif rule is mul:
            a, b = node._a, node._b
            a.grad += b.data * g
            b.grad += a.data * g
        elif rule is relu:
            node._a.grad += (node.data > 0) * g
        elif g - g != 0.0:  # a leaf's complete gradient, or a rule's g
            return False
        elif rule is None:
            continue
        elif node._b is None:
            a = node._a
            if a is None:  # a leaf with a _backward assigned by hand: run it
                rule.vjp((), node.data, g, *rule.params)
                continue
            (ga,) = rule.vjp((a.data,), node.data, g, *rule.params)  # before reading
            a.grad += ga  # a.grad: a closure assigned by hand adds to it itself
        else:
            prev = node._prev
            grads = rule.vjp(tuple([child.data for child in prev]), node.data, g, *rule.params)
            for child, ga in zip(prev, grads):
                child.grad += ga
    return True
