"""What every chaingrad engine shares: graph order, the backward driver and grad mode.

A node is anything with ``data``, ``grad``, ``_prev`` (its inputs, in argument order),
``_op`` and ``_vjp``: the op's derivative rule, ``vjp(xs, out, grad) -> one gradient per
input`` (a vector-Jacobian product), or None on leaves.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .errors import DomainError

_grad_enabled = True


def is_grad_enabled() -> bool:
    """True when ops record the graph (the default), False inside ``no_grad()``."""
    return _grad_enabled


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """A context under which ops compute values but record no graph.

    Example:
        >>> from chaingrad import Value, no_grad
        >>> with no_grad():
        ...     y = Value(2.0) * 3
        >>> y._prev
        ()
    """
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, False
    try:
        yield
    finally:
        _grad_enabled = previous


@contextlib.contextmanager
def enable_grad() -> Iterator[None]:
    """Turn graph recording back on, e.g. inside a ``no_grad()`` block."""
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, True
    try:
        yield
    finally:
        _grad_enabled = previous


def topological_order(root: Any) -> list[Any]:
    """Every node that ``root`` depends on, each after all of its inputs; ``root`` last.

    A depth-first walk with an explicit stack (no recursion, so a chain of a million
    ops is fine): a node is emitted once all of its inputs have been emitted.
    """
    order: list[Any] = []
    visited: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        for child in node._prev:
            if id(child) not in visited:
                stack.append((child, False))
    return order


def run_backward(
    root: Any, seed: Any, create_graph: bool, accumulate: bool = True, trace: list | None = None
) -> dict:
    """Back-propagate ``seed`` from ``root`` through every node that ``root`` depends on.

    Each pass starts every node of the graph at zero. With ``accumulate`` the gradients
    each node had before are added back at the end, so a second ``backward()`` on the
    same graph adds exactly one more gradient everywhere (micrograd's closures would
    re-use the interior gradients of the first pass and silently give 4x). Without it,
    the old gradients are put back untouched and this pass's are returned instead.

    With a ``trace`` list, each step is also recorded there (see ``_propagate_traced``).

    Returns:
        ``{id(node): gradient of this pass}`` when ``accumulate`` is False, else ``{}``.
    """
    order = topological_order(root)
    before = [node.grad for node in order]
    for node in order:
        node.grad = 0.0
    root.grad = seed
    found: dict = {}
    try:
        if trace is not None:
            _propagate_traced(order, trace)
        elif create_graph:
            with enable_grad():
                _propagate_graph(order)
        else:
            _propagate(order)
        if not accumulate:
            found = {id(node): node.grad for node in order}
    finally:
        for node, old in zip(order, before):
            if not accumulate:
                node.grad = old
            elif not (type(old) is float and old == 0.0):
                node.grad = old + node.grad
    return found


def _propagate(order: list[Any]) -> None:
    """The hot loop: each node hands ``grad * local derivative`` to its inputs (floats)."""
    for node in reversed(order):
        vjp = node._vjp
        if vjp is None:
            continue
        if type(vjp) is ClosureRule:
            vjp.backward()
            continue
        prev = node._prev
        try:
            if len(prev) == 2:
                a, b = prev
                ga, gb = vjp((a.data, b.data), node.data, node.grad)
                a.grad += ga
                b.grad += gb
                if ga - ga != 0.0 or gb - gb != 0.0:
                    raise _non_finite(node, (ga, gb))
            elif len(prev) == 1:
                (a,) = prev
                (ga,) = vjp((a.data,), node.data, node.grad)
                a.grad += ga
                if ga - ga != 0.0:
                    raise _non_finite(node, (ga,))
            else:
                grads = vjp(tuple(child.data for child in prev), node.data, node.grad)
                for child, g in zip(prev, grads):
                    child.grad += g
                if any(g - g != 0.0 for g in grads):
                    raise _non_finite(node, grads)
        except (ZeroDivisionError, OverflowError) as exc:
            raise _non_finite(node, None) from exc


def _propagate_traced(order: list[Any], trace: list) -> None:
    """``_propagate`` one node at a time, appending to ``trace`` what each step did.

    Each entry is ``(node, upstream_grad, [(input, grad_before, grad_after), ...])``; an
    input reached twice (``a + a``) appears twice, showing the accumulation.
    """
    for node in reversed(order):
        if node._vjp is None:
            continue
        upstream = node.grad
        before = [child.grad for child in node._prev]
        _propagate([node])
        updates = [(c, b, c.grad) for c, b in zip(node._prev, before)]
        # with a repeated input, each occurrence adds its own share: rebuild them in order
        if len({id(c) for c in node._prev}) < len(node._prev):
            updates, running = [], {}
            grads = node._vjp(tuple(c.data for c in node._prev), node.data, upstream)
            for c, g in zip(node._prev, grads):
                start = running.get(id(c), before[node._prev.index(c)])
                running[id(c)] = start + g
                updates.append((c, start, start + g))
        trace.append((node, upstream, updates))


def _propagate_graph(order: list[Any]) -> None:
    """Like ``_propagate`` but on the nodes themselves, so the gradients form a graph."""
    for node in reversed(order):
        vjp = node._vjp
        if vjp is None:
            continue
        if type(vjp) is ClosureRule:
            raise TypeError(
                f"backward(create_graph=True): node {node._op!r} has a hand-written "
                "_backward closure, which works on floats and cannot be differentiated "
                "again; build it with chaingrad.primitive instead"
            )
        try:
            grads = vjp(node._prev, node, node.grad)
        except (ZeroDivisionError, OverflowError, DomainError) as exc:
            raise _non_finite(node, None) from exc
        for child, g in zip(node._prev, grads):
            child.grad = child.grad + g
            data = getattr(g, "data", g)
            if data - data != 0.0:
                raise _non_finite(node, grads)


def _non_finite(node: Any, grads: Any) -> DomainError:
    inputs = ", ".join(repr(child.data) for child in node._prev)
    got = "" if grads is None else f" (got {tuple(getattr(g, 'data', g) for g in grads)})"
    return DomainError(
        f"{node._op or 'backward'}: the gradient is not finite at input(s) {inputs}{got}; "
        "the derivative is unbounded there"
    )


class ClosureRule:
    """Holds a micrograd-style ``_backward`` closure that a user assigned by hand.

    Such a closure reads ``out.grad`` and adds into its inputs' ``.grad`` itself.
    """

    __slots__ = ("backward",)

    def __init__(self, backward: Any) -> None:
        self.backward = backward
