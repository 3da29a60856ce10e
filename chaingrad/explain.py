"""Backward, one step at a time: what each ``_backward`` did, and why the order matters.

``backward_steps(root)`` runs the real backward (``graph.run_backward`` with a trace) and
returns one ``Step`` per node whose derivative rule ran, in the order they ran. ``explain``
prints them as a table, with each op's local-derivative formula filled in with numbers:

    * : x1.grad += w1.data * out.grad = -3.0000 * 0.5000 = -1.5000

where ``out`` is the node whose ``_backward`` runs. ``explain(root, naive=True)`` also runs
the naive recursive algorithm ("run my ``_backward``, then my inputs'", on copies of the
gradients) and shows where it goes wrong: a node used twice runs its ``_backward`` twice.

Nodes are named as in the drawings (see ``chaingrad.viz``): their label, or an op-based name
such as ``mul1`` or ``leaf2``. Each backward pass starts from zero gradients; the numbers
shown are this pass's (``.grad`` ends as what it held before plus this pass, as with
``root.backward()``).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from . import graph
from .viz import _check_root, format_number, node_names, reading_order

_FMT = format_number

# op -> one (formula, numbers) template per input. In a template {x} / {y} are the names
# of inputs 0 / 1, {xd} / {yd} their data, {xb} a base to raise to a power (negative
# numbers in parentheses), {od} out.data and {g} out.grad.
FORMULAS: dict[str, tuple[tuple[str, str], ...]] = {
    "+": (("out.grad", "{g}"), ("out.grad", "{g}")),
    "*": (("{y}.data * out.grad", "{yd} * {g}"), ("{x}.data * out.grad", "{xd} * {g}")),
    "**n": (("{n} * {x}.data**{n1} * out.grad", "{n} * {xb}**{n1} * {g}"),),
    "**": (
        ("{y}.data * {x}.data**({y}.data - 1) * out.grad", "{yd} * {xb}**({yd} - 1) * {g}"),
        ("out.data * log({x}.data) * out.grad", "{od} * log({xd}) * {g}"),
    ),
    "ReLU": (("(out.data > 0) * out.grad", "({od} > 0) * {g}"),),
    "tanh": (("(1 - out.data**2) * out.grad", "(1 - {ob}**2) * {g}"),),
    "sigmoid": (("out.data * (1 - out.data) * out.grad", "{od} * (1 - {od}) * {g}"),),
    "exp": (("out.data * out.grad", "{od} * {g}"),),
    "log": (("out.grad / {x}.data", "{g} / {xd}"),),
    "sqrt": (("out.grad / (2 * out.data)", "{g} / (2 * {od})"),),
    "abs": (("sign({x}.data) * out.grad", "sign({xd}) * {g}"),),
    "sin": (("cos({x}.data) * out.grad", "cos({xd}) * {g}"),),
    "cos": (("-sin({x}.data) * out.grad", "-sin({xd}) * {g}"),),
}
# any other op (a chaingrad.primitive): the local derivative is the rule's answer for g = 1
GENERIC = ("d(out)/d({t}) * out.grad", "{local} * {g}")
HAND_WRITTEN = ("(its hand-written _backward)", "")


@dataclass(frozen=True)
class Update:
    """One input's gradient update in a step: ``input.grad: before -> after``."""

    input: Any
    name: str
    before: float
    after: float
    added: float
    formula: str
    numbers: str

    def text(self, op: str) -> str:
        """``op : name.grad += formula = numbers = added``."""
        parts = [f"{op} : {self.name}.grad += {self.formula}"]
        result = _FMT(self.added)
        if self.numbers and self.numbers != result:
            parts.append(self.numbers)
        parts.append(result)
        return " = ".join(parts)


@dataclass(frozen=True)
class Step:
    """One node's ``_backward``: the node, its op, the gradient arriving at it (out.grad),
    and what it added to each input (an input used twice gets two updates)."""

    index: int
    node: Any
    name: str
    op: str
    upstream: float
    updates: tuple[Update, ...]


def backward_steps(root: Any, accumulate: bool = True) -> list[Step]:
    """Run ``root``'s backward and return the steps it took, in order.

    Args:
        root: The Value to differentiate (its gradient is seeded with 1).
        accumulate: Add this pass into ``.grad`` as ``root.backward()`` does (the default);
            False leaves every ``.grad`` as it was.

    Returns:
        One ``Step`` per node whose ``_backward`` ran, in reverse topological order.

    Example:
        >>> from chaingrad import Value
        >>> a = Value(3.0, label="a")
        >>> steps = backward_steps(a + a)
        >>> [(s.name, s.op, s.upstream) for s in steps]
        [('add1', '+', 1.0)]
        >>> [(u.name, u.before, u.after) for u in steps[0].updates]  # a's grad accumulates
        [('a', 0.0, 1.0), ('a', 1.0, 2.0)]
        >>> a.grad
        2.0
    """
    _check_root(root, "backward_steps")
    names = node_names(reading_order(root))
    trace: list = []
    graph.run_backward(root, 1.0, create_graph=False, accumulate=accumulate, trace=trace)
    steps = []
    for index, (node, upstream, updates) in enumerate(trace, start=1):
        added = _added(node, upstream, updates)
        made = []
        for k, ((child, before, after), plus) in enumerate(zip(updates, added, strict=True)):
            formula, numbers = _formula(node, k, names, upstream)
            made.append(Update(child, names[id(child)], before, after, plus, formula, numbers))
        steps.append(Step(index, node, names[id(node)], node._op, upstream, tuple(made)))
    return steps


def _added(node: Any, upstream: float, updates: list) -> list[float]:
    """What the rule added to each input (exact, not ``after - before``)."""
    if type(node._vjp) is graph.ClosureRule:
        return [after - before for _, before, after in updates]
    return list(node._vjp(tuple(c.data for c in node._prev), node.data, upstream))


def _formula(node: Any, k: int, names: dict[int, str], g: float) -> tuple[str, str]:
    """The ``k``-th input's update as a formula and the same with numbers filled in."""
    op, prev = node._op, node._prev
    if type(node._vjp) is graph.ClosureRule:
        return HAND_WRITTEN
    fill = {"g": _FMT(g), "od": _FMT(node.data), "ob": _base(node.data), "t": names[id(prev[k])]}
    for key, child in zip("xy", prev, strict=False):
        fill[key] = names[id(child)]
        fill[key + "d"] = _FMT(child.data)
        fill[key + "b"] = _base(child.data)
    templates = FORMULAS.get(op)
    if templates is None and op.startswith("**") and len(prev) == 1:
        n = float(op[2:])
        fill["n"], fill["n1"] = f"{n:g}", f"{n - 1:g}"
        fill["n1"] = fill["n1"] if n - 1 >= 0 else f"({fill['n1']})"
        templates = FORMULAS["**n"]
    if templates is None or k >= len(templates):
        local = node._vjp(tuple(c.data for c in prev), node.data, 1.0)[k]
        fill["local"] = _FMT(local)
        templates = (GENERIC,) * (k + 1)
    formula, numbers = templates[k]
    return formula.format(**fill), numbers.format(**fill)


def _base(x: float) -> str:
    text = _FMT(x)
    return f"({text})" if x < 0 else text


@dataclass(frozen=True)
class NaiveRun:
    """The naive recursive backward: the ``_backward`` calls it made and its gradients."""

    calls: tuple[Any, ...]
    grads: dict[int, float]
    stopped: bool


def naive_backward(root: Any, max_calls: int = 10_000) -> NaiveRun:
    """Run the naive recursive backward on copies of the gradients (``.grad`` is untouched).

    The algorithm, as people first write it::

        def backward(node):
            node._backward()          # pass my gradient to my inputs
            for child in node._prev:  # then let each input pass on its own
                backward(child)

    It runs a node's ``_backward`` once per path from the root (each time passing on all
    the gradient the node has so far), so it stops after ``max_calls`` calls: on a deep
    graph with sharing the number of paths grows exponentially.

    Example:
        >>> from chaingrad import Value
        >>> a = Value(1.0, label="a")
        >>> b = a + a
        >>> c = b + b
        >>> run = naive_backward(c)
        >>> run.grads[id(a)], a.grad  # correct: 4.0
        (8.0, 0.0)
    """
    _check_root(root, "naive_backward")
    grads = {id(node): 0.0 for node in reading_order(root)}
    grads[id(root)] = 1.0
    calls: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node._vjp is None:
            continue  # a leaf's _backward does nothing
        if len(calls) == max_calls:
            return NaiveRun(tuple(calls), grads, True)
        calls.append(node)
        for child, g in zip(node._prev, _contributions(node, grads[id(node)]), strict=True):
            grads[id(child)] += g
        stack.extend(reversed(node._prev))
    return NaiveRun(tuple(calls), grads, False)


def _contributions(node: Any, g: float) -> list[float]:
    """What ``node``'s rule adds to each input when ``g`` arrives, without changing .grad."""
    if type(node._vjp) is not graph.ClosureRule:
        return list(node._vjp(tuple(c.data for c in node._prev), node.data, g))
    # a hand-written closure works on .grad itself: run it on borrowed grads, then restore
    saved = [(n, n.grad) for n in (node, *node._prev)]
    try:
        for child in node._prev:
            child.grad = 0.0
        node.grad = g
        node._vjp.backward()
        seen: set[int] = set()
        out = []
        for child in node._prev:
            out.append(0.0 if id(child) in seen else child.grad)
            seen.add(id(child))
        return out
    finally:
        for n, grad in saved:
            n.grad = grad


class Explanation(str):
    """The text ``explain`` printed: a str, which does not print itself a second time.

    In Jupyter, ``explain(o)`` as a cell's last line shows the table once (the printed
    one); at the Python prompt the echo is one short line instead of the whole table again.
    """

    def __repr__(self) -> str:
        return f"<chaingrad explanation: {self.count(chr(10))} lines, printed above>"

    def _ipython_display_(self) -> None:
        """Display nothing: the table has been printed already."""


def explain(root: Any, naive: bool = False, file: TextIO | None = None) -> Explanation:
    """Run ``root``'s backward and print each step with its formula filled in.

    Like ``root.backward()``, it adds the gradients into ``.grad``.

    Args:
        root: The Value to differentiate.
        naive: Also run the naive recursive algorithm (on copies of the gradients) and show
            where it disagrees with the correct, topologically ordered backward.
        file: Where to print (default: standard output).

    Returns:
        The printed text (an ``Explanation``, a str that does not echo itself).

    Example:
        >>> from chaingrad import Value
        >>> x, w = Value(2.0, label="x"), Value(-3.0, label="w")
        >>> import io
        >>> text = explain(x * w, file=io.StringIO())
        >>> "* : x.grad += w.data * out.grad = -3.0000 * 1.0000" in text
        True
    """
    _check_root(root, "explain")
    order = reading_order(root)
    had_grads = any(_value(node.grad) != 0.0 for node in order)
    steps = backward_steps(root)
    names = node_names(order)
    lines = [
        f"Backward of {names[id(root)]}, step by step: {len(steps)} _backward calls in reverse "
        "topological order;",
        "out = the node whose _backward runs; each input's grad is updated with +=.",
        f"seed: {names[id(root)]}.grad = 1.0000",
        "",
    ]
    lines += _table(
        ["step", "out", "op", "out.grad", "update", "grad: before -> after"],
        _step_rows(steps),
        right={0, 3},
    )
    leaves = [n for n in order if not n._prev]
    totals = _pass_totals(root, order, steps)
    lines += ["", "gradients of this pass, at the leaves:"]
    lines += [f"  {names[id(n)]}.grad = {_FMT(totals[id(n)])}" for n in leaves]
    if had_grads:
        lines.append("(.grad already held gradients; this pass was added to them)")
    if naive:
        lines += [""] + _naive_section(root, order, names, totals)
    text = "\n".join(lines) + "\n"
    print(text, end="", file=sys.stdout if file is None else file)
    return Explanation(text)


def _step_rows(steps: list[Step]) -> list[list[str]]:
    rows = []
    for step in steps:
        for k, update in enumerate(step.updates):
            head = [str(step.index), step.name, step.op, _FMT(step.upstream)]
            head = head if k == 0 else [""] * len(head)
            change = f"{_FMT(update.before)} -> {_FMT(update.after)}"
            rows.append(head + [update.text(step.op), change])
    return rows


def _pass_totals(root: Any, order: list, steps: list[Step]) -> dict[int, float]:
    """Each node's gradient at the end of the pass (the last 'after' it was given)."""
    totals = {id(node): 0.0 for node in order}
    totals[id(root)] = 1.0
    for step in steps:
        for update in step.updates:
            totals[id(update.input)] = update.after
    return totals


def _naive_section(root: Any, order: list, names: dict, totals: dict) -> list[str]:
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
        same = math.isclose(right, wrong, rel_tol=1e-9, abs_tol=1e-12)
        if not same:
            differ.append(node)
        runs = str(counts.get(id(node), 0)) if node._prev else "-"
        rows.append([names[id(node)], node._op or "leaf", runs, _FMT(right), _FMT(wrong),
                     "" if same else "<- differs"])
    lines += [""] + _table(["node", "op", "naive runs", "correct grad", "naive grad", ""], rows,
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


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out


def _value(x: Any) -> float:
    return float(getattr(x, "data", x))
