"""What every chaingrad engine shares: graph order, the backward driver and grad mode.

A node is anything with ``data``, ``grad``, ``_prev`` (its inputs, in argument order),
``_op`` and ``_vjp``: the op's derivative rule, ``vjp(xs, out, grad) -> one gradient per
input`` (a vector-Jacobian product), or None on leaves.
"""

from __future__ import annotations

import contextlib
import gc
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


class paused_gc:  # noqa: N801 - used like a function: `with paused_gc():`
    """Pause Python's cyclic garbage collector while chaingrad builds or walks a graph.

    chaingrad's graphs hold no reference cycles (a node points to its inputs, never back),
    so reference counting frees them the moment they are dropped and the cyclic collector
    has nothing to find in them. Left running, it would walk the whole growing graph again
    and again while it is built: that is most of a training step's time in micrograd.
    The pause is scoped (a model's forward pass, one backward pass), nests, and restores
    the collector's previous state even on error; its thresholds are never changed.
    """

    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self.was_enabled:
            gc.enable()


MANY = object()
"""Stored in ``_b`` when ``_a`` holds a tuple of three or more inputs."""


class Node:
    """The part of a graph node that both engines share: its inputs, in argument order.

    A node keeps them in two slots, ``_a`` and ``_b`` (None where there is no such input;
    three or more inputs go in ``_a`` as a tuple, with ``_b`` set to ``MANY``), and
    ``_prev`` gives them as a tuple. Why not store the tuple: it would be one more object
    per node for Python's garbage collector to walk, and a training step makes ~65,000.
    """

    __slots__ = ("_a", "_b")

    @property
    def _prev(self) -> tuple:
        """The input nodes, in argument order (empty for a leaf)."""
        return unsplit(self._a, self._b)


def split(children: tuple) -> tuple:
    """Inputs as the pair ``(_a, _b)`` that a node stores."""
    if len(children) <= 2:
        return tuple(children) + (None,) * (2 - len(children))
    return tuple(children), MANY


def unsplit(a: Any, b: Any) -> tuple:
    """The inputs ``(_a, _b)`` back as a tuple."""
    if b is None:
        return () if a is None else (a,)
    return a if b is MANY else (a, b)


def topological_order(root: Node) -> list[Any]:
    """Every node that ``root`` depends on, each after all of its inputs; ``root`` last.

    A depth-first walk with an explicit stack (no recursion, so a chain of a million
    ops is fine): the node on top of the stack is emitted once none of its inputs is
    left to visit. Nodes hash by identity, so they go in a set as they are.
    """
    order: list[Any] = []
    visited: set[Any] = set()
    stack = [root]
    while stack:
        node = stack[-1]
        a, b = node._a, node._b
        if b is MANY:
            todo = next((child for child in a if child not in visited), None)
        elif a is not None and a not in visited:
            todo = a
        elif b is not None and b not in visited:
            todo = b
        else:
            todo = None
        if todo is not None:
            stack.append(todo)
            continue
        stack.pop()
        if node not in visited:
            visited.add(node)
            order.append(node)
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
    with paused_gc():
        return _run_backward(root, seed, create_graph, accumulate, trace)


def _run_backward(root: Any, seed: Any, create_graph: bool, accumulate: bool, trace: Any) -> dict:
    order = topological_order(root)
    before = [node.grad for node in order]
    started_clean = not any(before)  # the usual case: fresh graph, zeroed parameters
    if not started_clean:
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
    except BaseException:
        for node, old in zip(order, before):  # a failed pass leaves every .grad as it was
            node.grad = old
        raise
    if not accumulate:
        for node, old in zip(order, before):
            node.grad = old
    elif not started_clean:
        for node, old in zip(order, before):
            if old:
                node.grad = old + node.grad
    return found


def _propagate(order: list[Any]) -> None:
    """The hot loop: each node hands ``grad * local derivative`` to its inputs (floats).

    A node keeps its inputs in two slots, ``_a`` and ``_b`` (``_b`` is None for one input);
    see ``Node``.
    """
    for node in reversed(order):
        vjp = node._vjp
        if vjp is None:
            continue
        a, b = node._a, node._b
        try:
            if b is None:
                (ga,) = vjp((a.data,), node.data, node.grad)
                a.grad += ga
                if ga - ga != 0.0:
                    raise _non_finite(node, (ga,))
            elif b is not MANY:
                ga, gb = vjp((a.data, b.data), node.data, node.grad)
                a.grad += ga
                b.grad += gb
                if ga - ga != 0.0 or gb - gb != 0.0:
                    raise _non_finite(node, (ga, gb))
            else:  # three or more inputs, kept as a tuple in _a
                grads = vjp(tuple(child.data for child in a), node.data, node.grad)
                for child, g in zip(a, grads):
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
        upstream, prev = node.grad, node._prev
        before = [child.grad for child in prev]
        _propagate([node])  # the real step
        if len({id(c) for c in prev}) == len(prev):
            updates = [(c, b, c.grad) for c, b in zip(prev, before)]
        elif type(node._vjp) is ClosureRule:  # opaque: all of it shows on the first one
            updates, seen = [], set()
            for c, b in zip(prev, before):
                updates.append((c, c.grad, c.grad) if id(c) in seen else (c, b, c.grad))
                seen.add(id(c))
        else:  # each occurrence adds its own share: replay them in order
            grads = node._vjp(tuple(c.data for c in prev), node.data, upstream)
            updates, running = [], {}
            for c, b, g in zip(prev, before, grads):
                start = running.get(id(c), b)
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
    """A micrograd-style ``_backward`` closure that a user assigned by hand, as a rule.

    Such a closure reads ``out.grad`` and adds into its inputs' ``.grad`` itself, so as a
    rule it returns zeros for the driver to add.
    """

    __slots__ = ("backward",)

    def __init__(self, backward: Any) -> None:
        self.backward = backward

    def __call__(self, xs: tuple, out: Any, g: Any) -> tuple:
        self.backward()
        return (0.0,) * len(xs)
