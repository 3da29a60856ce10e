"""The naive recursive backward, run beside the real one to show why order matters.

People's first backward is often "run my ``_backward``, then my inputs'", recursively. On a
graph where a node is used twice it runs that node's ``_backward`` more than once, each time
passing on all the gradient gathered so far, and gets the wrong answer; ``explain(root,
naive=True)`` puts the two side by side, and the page (``to_html``) replays it step by step.
The walk reads only the node protocol (``chaingrad.autodiff``), so it runs on a Tensor graph
as well, with arrays for gradients.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import autodiff, guards
from .names import check_root, format_number, grad_norm, holds_array, reading_order, text_table
from .steps import Step, seed_of, step_from_trace

_FMT = format_number


@dataclass(frozen=True)
class NaiveRun:
    """The naive recursive backward: the ``_backward`` calls it made and its gradients
    (``{id(node): gradient}``: a float for a Value; an array, or None where none arrived,
    for a Tensor)."""

    calls: tuple[Any, ...]
    grads: dict[int, Any]
    stopped: bool


def naive_backward(root: Any, max_calls: int = 10_000, trace: list | None = None,
                   grad: Any = None) -> NaiveRun:
    """Run the naive recursive backward on copies of the gradients (``.grad`` is untouched).

    The algorithm, as people first write it::

        def backward(node):
            node._backward()          # pass my gradient to my inputs
            for child in node._prev:  # then let each input pass on its own
                backward(child)

    It runs a node's ``_backward`` once per path from the root (each time passing on all
    the gradient the node has so far), so it stops after ``max_calls`` calls: on a deep
    graph with sharing the number of paths grows exponentially.

    ``trace``, if given, receives one ``(node, upstream, before, after)`` per call, as
    the backward driver's trace does (see ``naive_steps``). On a Tensor graph the
    gradients are arrays: ``grad`` is d(loss)/d(root), needed unless root has one element
    (as for ``backward_steps``); a share that an op broadcast is summed back to its
    input's shape, as the driver does.

    Example:
        >>> from chaingrad import Tensor, Value
        >>> a = Value(1.0, label="a")
        >>> b = a + a
        >>> c = b + b
        >>> run = naive_backward(c)
        >>> run.grads[id(a)], a.grad  # correct: 4.0
        (8.0, 0.0)
        >>> a = Tensor([1.0, 2.0], requires_grad=True)
        >>> b = a + a
        >>> naive_backward((b + b).sum()).grads[id(a)].tolist()  # correct: [4.0, 4.0]
        [8.0, 8.0]
    """
    check_root(root, "naive_backward")
    grads = {id(node): node._initial_grad for node in reading_order(root)}
    grads[id(root)] = seed_of(root, grad, "naive_backward")
    calls: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node._rule is None or grads[id(node)] is None:
            continue  # a leaf's _backward does nothing; nor does a node no gradient reached
        if len(calls) == max_calls:
            return NaiveRun(tuple(calls), grads, True)
        calls.append(node)
        before = [grads[id(child)] for child in node._prev]
        for child, g in zip(node._prev, _contributions(node, grads[id(node)]), strict=True):
            if g is None or not child.requires_grad:
                continue  # a constant: it takes no gradient
            if holds_array(child) and g.shape != child._value.shape:
                g = autodiff.sum_to_shape(g, child._value.shape)  # the op broadcast it
            old = grads[id(child)]
            grads[id(child)] = g if old is None else old + g  # a new array: never in place
        if trace is not None:
            trace.append((node, grads[id(node)], before, [grads[id(c)] for c in node._prev]))
        stack.extend(reversed(node._prev))
    return NaiveRun(tuple(calls), grads, False)


def naive_steps(root: Any, names: dict[int, str], max_calls: int = 10_000, grad: Any = None,
                ) -> tuple[list[Step], NaiveRun]:
    """The naive walk's ``_backward`` calls as ``Step``s, the formulas filled in with the
    naive numbers, as ``backward_steps`` gives the correct ones; and the run itself.
    ``grad``: a Tensor root's d(loss)/d(root), as for ``naive_backward``.

    Example:
        >>> from chaingrad import Value
        >>> a = Value(1.0, label="a")
        >>> b = a + a
        >>> c = b + b
        >>> steps, run = naive_steps(c, {id(a): "a", id(b): "b", id(c): "c"})
        >>> [(s.name, s.upstream) for s in steps]  # b's _backward runs twice
        [('c', 1.0), ('b', 2.0), ('b', 2.0)]
        >>> steps[-1].updates[-1].text(steps[-1].op), run.grads[id(a)]
        ('+ : a.grad += out.grad = 2.0000', 8.0)
    """
    trace: list = []
    run = naive_backward(root, max_calls, trace, grad)
    return [step_from_trace(i, *entry, names) for i, entry in enumerate(trace, start=1)], run


def _contributions(node: Any, g: Any) -> list[Any]:
    """What ``node``'s rule adds to each input when ``g`` arrives, without changing .grad."""
    rule = node._rule
    if type(rule) is not guards.ClosureRule:
        return list(rule.vjp(tuple(c._value for c in node._prev), node._value, g))
    # a hand-written closure works on .grad itself: run it on borrowed grads, then restore
    saved = [(n, n.grad) for n in (node, *node._prev)]
    try:
        for child in node._prev:
            child.grad = child._value * 0 if holds_array(child) else 0.0
        node.grad = g
        rule.backward()
        seen: set[int] = set()
        out = []
        for child in node._prev:
            out.append(None if id(child) in seen else child.grad)  # counted once
            seen.add(id(child))
        return out
    finally:
        for n, grad in saved:
            n.grad = grad


def same_grad(right: Any, wrong: Any) -> bool:
    """Whether two gradients of one node agree up to rounding: floats, arrays (to their
    dtype's precision), or None where no gradient arrived.

    Example:
        >>> import numpy as np
        >>> same_grad(4.0, 4.0 + 1e-15), same_grad(np.full(2, 4.0), np.full(2, 8.0))
        (True, False)
    """
    if right is None or wrong is None:
        return right is None and wrong is None
    if not hasattr(right, "shape"):
        return math.isclose(right, wrong, rel_tol=1e-9, abs_tol=1e-12)
    rel = {2: 1e-2, 4: 1e-5}.get(right.dtype.itemsize, 1e-9)  # float16, float32, float64
    return grad_norm(wrong - right) <= rel * max(grad_norm(right), grad_norm(wrong)) + 1e-12


def naive_section(root: Any, order: list, names: dict, totals: dict) -> list[str]:
    run = naive_backward(root)
    counts: dict[int, int] = {}
    for node in run.calls:
        counts[id(node)] = counts.get(id(node), 0) + 1
    lines = [
        "The naive recursive backward (each node runs its _backward, then calls its inputs'",
        "backward, recursively), run on copies of the gradients:",
        "  _backward calls, in order: " + ", ".join(names[id(n)] for n in run.calls[:40])
        + (", ..." if len(run.calls) > 40 else ""),
    ]
    if run.stopped:
        lines.append(f"  (stopped after {len(run.calls)} calls: it revisits shared nodes once "
                     "per path, which grows exponentially)")
    rows, differ = [], []
    for node in order:
        right, wrong = totals[id(node)], run.grads[id(node)]
        same = same_grad(right, wrong)
        if not same:
            differ.append(node)
        runs = str(counts.get(id(node), 0)) if node._prev else "-"
        rows.append([names[id(node)], node._op or "leaf", runs, _FMT(right), _FMT(wrong),
                     "" if same else "<- differs"])
    lines += [""] + text_table(["node", "op", "naive runs", "correct grad", "naive grad", ""], rows,
                           right={2, 3, 4})
    repeated = [names[id(n)] for n in order if counts.get(id(n), 0) > 1]
    lines.append("")
    if not differ:
        lines.append("They agree on this graph: every _backward ran once, after all of its "
                     "node's gradient had arrived.")
        return lines
    lines += [
        f"They differ at {', '.join(names[id(n)] for n in differ)}: the naive walk ran the "
        f"_backward of {', '.join(repeated) or 'some nodes'}",
        "more than once (once per path from the root), each time passing on all the gradient",
        "gathered so far. The topological order runs each _backward exactly once, after every",
        "op that uses the node has added its share.",
    ]
    return lines
