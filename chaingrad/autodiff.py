"""What every chaingrad engine shares: graph order, the backward driver and grad mode.

A node is anything with ``data``, ``grad``, ``_prev`` (its inputs, in argument order),
``_op`` and ``_vjp``: the op's derivative rule, ``vjp(xs, out, grad) -> one gradient per
input`` (a vector-Jacobian product), or None on leaves.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from operator import attrgetter
from typing import Any

from .errors import DomainError

_grad_enabled = True
"""True while no thread is inside ``no_grad()``: then every op records, and reading this
one module global is all an op pays for grad mode. Otherwise each thread's own mode
(``_mode.enabled``) decides, as PyTorch's per-thread mode does."""

_mode = threading.local()  # .enabled: this thread's mode, once it has set one
_threads_off = 0  # how many threads are in no_grad() now
_lock = threading.Lock()


def is_grad_enabled() -> bool:
    """True when ops record the graph in this thread (the default), False in ``no_grad()``."""
    return _grad_enabled or getattr(_mode, "enabled", True)


def _set_grad_enabled(enabled: bool) -> bool:
    """Set this thread's grad mode; returns the mode it had."""
    global _threads_off, _grad_enabled
    with _lock:
        previous = getattr(_mode, "enabled", True)
        if previous != enabled:
            _threads_off += -1 if enabled else 1
        _mode.enabled = enabled
        _grad_enabled = _threads_off == 0
    return previous


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """A context under which ops compute values but record no graph.

    Also a decorator (``@no_grad()``). As in PyTorch, the mode belongs to the thread
    that enters it: other threads go on recording.

    Example:
        >>> from chaingrad import Value, no_grad
        >>> with no_grad():
        ...     y = Value(2.0) * 3
        >>> y._prev
        ()
    """
    previous = _set_grad_enabled(False)
    try:
        yield
    finally:
        _set_grad_enabled(previous)


@contextlib.contextmanager
def enable_grad() -> Iterator[None]:
    """Turn graph recording back on in this thread, e.g. inside a ``no_grad()`` block."""
    previous = _set_grad_enabled(True)
    try:
        yield
    finally:
        _set_grad_enabled(previous)


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

    __slots__ = ("_a", "_b", "_mark")  # _mark: see topological_order

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
    ops is fine). A node met for the first time goes back on the stack, marked as
    waiting, under its inputs; when it comes up again, all of them have been emitted,
    and so is it. Marks are stored in each node's ``_mark`` slot as tokens made for
    this walk: twice as fast as sets of visited nodes, and two walks never mix.
    """
    done, waiting = object(), object()  # this walk's marks
    order: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        mark = node._mark
        if mark is done:  # reached again through another path
            continue
        a, b = node._a, node._b
        if a is None or mark is waiting:  # a leaf, or all of its inputs are done
            node._mark = done
            order.append(node)
            continue
        node._mark = waiting
        stack.append(node)
        if b is MANY:
            stack.extend(child for child in reversed(a) if child._mark is not done)
            continue
        if b is not None and b._mark is not done:
            stack.append(b)
        if a._mark is not done:
            stack.append(a)  # on top: the first input is walked first
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
    # The usual case: a fresh graph and zeroed parameters. Then there is nothing to keep.
    started_clean = accumulate and not any(map(_grad_of, order))
    before = [0.0] * len(order) if started_clean else [node.grad for node in order]
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
        elif not _propagate(order):
            _name_the_non_finite_step(order, root, seed)
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


_grad_of = attrgetter("grad")

# Value's rules for + and *, which _propagate runs inline; chaingrad.engine sets them.
ADD_RULE: Any = None
MUL_RULE: Any = None


def _propagate(order: list[Any]) -> bool:
    """The hot loop: each node adds ``grad * local derivative`` into its inputs (floats).

    A node keeps its inputs in two slots, ``_a`` and ``_b`` (``_b`` is None for one input);
    see ``Node``. Two shortcuts make this loop twice as fast (it is a third of a training
    step):

    - ``+`` and ``*`` are nine nodes in ten of a network, and calling their rules costs
      more than the rules do, so the loop runs those two inline, as ``Value._add_vjp``
      and ``Value._mul_vjp`` say: ``x + y`` gives both inputs ``g``; ``x * y`` gives
      ``x`` ``y * g`` and ``y`` ``x * g``. Every other rule is called.
    - nan and inf are looked for only where a gradient ends or is handed to a rule: at
      the leaves, where the walk arrives once each gradient is complete, and as ``g``
      of every rule that is called (one may stop an inf: a straight-through op returns
      1.0 whatever ``g`` is). ``+`` and ``*`` pass a nan or inf on (0 * inf is nan), so
      it reaches one of those checks. Then ``_run_backward`` walks again, checking every
      step, to name the op that made it.

    Returns:
        False as soon as a gradient is seen not to be finite, else True.
    """
    add, mul = ADD_RULE, MUL_RULE
    node = None
    try:
        for node in reversed(order):
            rule = node._vjp
            g = node.grad
            if rule is add:
                node._a.grad += g
                node._b.grad += g
            elif rule is mul:
                a, b = node._a, node._b
                a.grad += b.data * g
                b.grad += a.data * g
            elif g - g != 0.0:  # a leaf's complete gradient, or a rule's g
                return False
            elif rule is None:
                continue
            elif node._b is None:
                a = node._a
                if a is None:  # a leaf with a _backward assigned by hand: run it
                    rule((), node.data, g)
                    continue
                (ga,) = rule((a.data,), node.data, g)  # before reading a.grad: a
                a.grad += ga  # _backward closure assigned by hand adds to it itself
            else:
                prev = node._prev
                grads = rule(tuple([child.data for child in prev]), node.data, g)
                for child, ga in zip(prev, grads):
                    child.grad += ga
    except (ZeroDivisionError, OverflowError) as exc:
        raise _non_finite(node, None) from exc
    return True


def _name_the_non_finite_step(order: list[Any], root: Any, seed: Any) -> None:
    """A gradient was not finite: walk again, checking every step, to name the op."""
    for node in order:
        node.grad = 0.0
    root.grad = seed
    _propagate_checked(order)
    # Every rule's result was finite: a _backward closure assigned by hand wrote it.
    raise DomainError("backward: a gradient is not finite, and no op's rule made it: a "
                      "hand-written _backward closure did")


def _propagate_checked(order: list[Any]) -> None:
    """``_propagate`` without the shortcuts: it raises at the first step that makes a
    gradient that is not finite, naming the op (see ``_non_finite``)."""
    for node in reversed(order):
        vjp = node._vjp
        if vjp is None:
            continue
        prev = node._prev
        try:
            grads = vjp(tuple([child.data for child in prev]), node.data, node.grad)
        except (ZeroDivisionError, OverflowError) as exc:
            raise _non_finite(node, None) from exc
        for child, g in zip(prev, grads):
            child.grad += g
        if any(g - g != 0.0 for g in grads):
            raise _non_finite(node, grads)
        if any(child.grad - child.grad != 0.0 for child in prev):
            if type(vjp) is ClosureRule:
                raise DomainError(f"{node._op or 'backward'}: its hand-written _backward "
                                  "closure wrote a gradient that is not finite (nan or inf)")
            inputs = ", ".join(repr(child.data) for child in prev)
            raise DomainError(f"{node._op or 'backward'}: the gradients that reach its "
                              f"input(s) {inputs} add up to more than a float holds "
                              "(overflow)")


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
        _propagate_checked([node])  # the real step
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
        "the derivative is unbounded there, or the product overflows a float"
    )


def do_nothing() -> None:
    """The ``_backward`` of a leaf: there is nothing before it to pass a gradient to."""


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
