"""Backward, one step at a time: what each ``_backward`` did, and why the order matters.

``backward_steps(root)`` runs the real backward (``autodiff.run_backward`` with a trace) and
returns one ``Step`` per node whose derivative rule ran, in the order they ran. ``explain``
prints them as a table, with each op's local-derivative formula filled in with numbers:

    * : x1.grad += w1.data * out.grad = -3.0000 * 0.5000 = -1.5000

where ``out`` is the node whose ``_backward`` runs. ``explain(root, naive=True)`` also runs
the naive recursive algorithm ("run my ``_backward``, then my inputs'", on copies of the
gradients) and shows where it goes wrong: a node used twice runs its ``_backward`` twice.

On a Tensor graph the steps carry arrays and ``explain`` shows shapes instead of numbers:

    matmul : transpose1.grad += x.data.T @ out.grad   (3, 5) = (3, 4) @ (4, 5)

(``sum_to_shape`` in a formula is the engine's one helper that sums a broadcast gradient
back to its input's shape; the last column shows each gradient's norm.)

Nodes are named as in the drawings (see ``chaingrad.viz``): their label, or an op-based name
such as ``mul1`` or ``leaf2``. Each backward pass starts from zero gradients; the numbers
shown are this pass's (``.grad`` ends as what it held before plus this pass, as with
``root.backward()``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, TextIO

from .. import autodiff
from .dot import (
    _check_root,
    format_number,
    grad_summary,
    is_tensor,
    node_names,
    norm,
    reading_order,
    text_table,
)
from .explain_tensor import tensor_formula
from .naive import naive_section

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
    before: Any  # a float for a Value; an array or None for a Tensor
    after: Any
    added: Any
    formula: str
    numbers: str  # for a Tensor: the formula with shapes instead of names
    result: str = ""  # for a Tensor: the shape of what was added

    def text(self, op: str) -> str:
        """``op : name.grad += formula = numbers = added`` (for a Tensor:
        ``op : name.grad += formula   result shape = shapes``)."""
        if self.result:
            return f"{op} : {self.name}.grad += {self.formula}   {self.result} = {self.numbers}"
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
    upstream: Any  # a float for a Value, an array for a Tensor
    updates: tuple[Update, ...]


def backward_steps(root: Any, accumulate: bool = True, grad: Any = None) -> list[Step]:
    """Run ``root``'s backward and return the steps it took, in order.

    Args:
        root: The Value or Tensor to differentiate (its gradient is seeded with 1).
        accumulate: Add this pass into ``.grad`` as ``root.backward()`` does (the default);
            False leaves every ``.grad`` as it was.
        grad: For a Tensor root: d(loss)/d(root), of root's shape, as in
            ``Tensor.backward(grad)``; needed unless root has one element.

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

    On a Tensor graph the gradients are arrays (a hand-written ``_backward`` closure runs
    but is not listed), and each update's ``numbers`` are shapes:

        >>> from chaingrad import Tensor
        >>> x = Tensor([[1.0, 2.0, 3.0]], requires_grad=True, label="x")
        >>> steps = backward_steps((x * x).sum())
        >>> [u.text(steps[1].op) for u in steps[1].updates][0]
        '* : x.grad += x.data * out.grad   (1, 3) = (1, 3) * (1, 3)'
    """
    _check_root(root, "backward_steps")
    names = node_names(reading_order(root))
    trace: list = []
    seed = _seed(root, grad, "backward_steps")
    if is_tensor(root):
        from ..tensor_engine.backward import run_backward  # needs numpy: imported on use

        run_backward(root, seed, create_graph=False, accumulate=accumulate, trace=trace)
        return [_tensor_step(i, *entry, names) for i, entry in enumerate(trace, start=1)]
    autodiff.run_backward(root, seed, create_graph=False, accumulate=accumulate, trace=trace)
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
    if type(node._vjp) is autodiff.ClosureRule:
        return [after - before for _, before, after in updates]
    return list(node._vjp(tuple(c.data for c in node._prev), node.data, upstream))


def _formula(node: Any, k: int, names: dict[int, str], g: float) -> tuple[str, str]:
    """The ``k``-th input's update as a formula and the same with numbers filled in."""
    op, prev = node._op, node._prev
    if type(node._vjp) is autodiff.ClosureRule:
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


class Explanation(str):
    """The text ``explain`` printed: a str, which does not print itself a second time.

    In Jupyter, ``explain(o)`` as a cell's last line shows the table once (the printed
    one); at the Python prompt the echo is one short line instead of the whole table again.
    """

    def __repr__(self) -> str:
        return f"<chaingrad explanation: {self.count(chr(10))} lines, printed above>"

    def _ipython_display_(self) -> None:
        """Display nothing: the table has been printed already."""


def explain(
    root: Any, naive: bool = False, file: TextIO | None = None, grad: Any = None
) -> Explanation:
    """Run ``root``'s backward and print each step with its formula filled in.

    Like ``root.backward()``, it adds the gradients into ``.grad``. On a Tensor graph each
    formula is filled in with shapes, and the last column shows the gradients' norms.

    Args:
        root: The Value or Tensor to differentiate.
        naive: Also run the naive recursive algorithm (on copies of the gradients) and show
            where it disagrees with the correct, topologically ordered backward (Value
            graphs only: ValueError on a Tensor).
        file: Where to print (default: standard output).
        grad: For a Tensor root with more than one element: d(loss)/d(root).

    Returns:
        The printed text (an ``Explanation``, a str that does not echo itself).

    Raises:
        TypeError: When ``root`` is not a Value or Tensor, or ``naive`` is not a bool.
        ValueError: When ``naive=True`` is asked for a Tensor graph.

    Example:
        >>> from chaingrad import Value
        >>> x, w = Value(2.0, label="x"), Value(-3.0, label="w")
        >>> import io
        >>> text = explain(x * w, file=io.StringIO())
        >>> "* : x.grad += w.data * out.grad = -3.0000 * 1.0000" in text
        True
        >>> from chaingrad import Tensor
        >>> W = Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True, label="W")
        >>> text = explain((W @ Tensor([[1.0], [-1.0]], label="v")).sum(), file=io.StringIO())
        >>> "matmul : W.grad += out.grad @ v.data.T   (3, 2) = (3, 1) @ (1, 2)" in text
        True
    """
    _check_root(root, "explain")
    if not isinstance(naive, bool):  # naive="no" would be truthy
        raise TypeError(f"explain: naive must be True or False, got {type(naive).__name__} "
                        f"{naive!r}")
    tensor = is_tensor(root)
    if tensor and naive:
        raise ValueError("explain: naive=True is for Value graphs only (the naive walk is "
                         "shown on scalars); got a Tensor of shape "
                         f"{root.data.shape}")
    order = reading_order(root)
    seed = _seed(root, grad, "explain")
    if tensor:
        had_grads = any(node.grad is not None for node in order)
    else:
        had_grads = any(_value(node.grad) != 0.0 for node in order)
    steps = backward_steps(root, grad=seed if tensor else None)
    names = node_names(order)
    lines = [
        f"Backward of {names[id(root)]}, step by step: {len(steps)} _backward calls in reverse "
        "topological order;",
        "out = the node whose _backward runs; each input's grad is updated with +=.",
        f"seed: {names[id(root)]}.grad = {_FMT(seed)}" if not tensor else
        f"seed: {names[id(root)]}.grad = " + (f"ones({seed.shape})" if grad is None else
                                              f"grad= {grad_summary(seed)}"),
    ]
    if tensor:
        lines.append("Shapes instead of numbers; grad: before -> after shows norms.")
    lines += [""] + text_table(
        ["step", "out", "op", "out.grad", "update", "grad: before -> after"],
        _step_rows(steps, tensor),
        right={0, 3},
    )
    leaves = [n for n in order if not n._prev]
    totals = _pass_totals(root, order, steps, seed)
    lines += ["", "gradients of this pass, at the leaves:"]
    for n in leaves:
        if not tensor:
            lines.append(f"  {names[id(n)]}.grad = {_FMT(totals[id(n)])}")
        elif n.requires_grad:
            lines.append(f"  {names[id(n)]}.grad = {grad_summary(totals[id(n)])}")
        else:
            lines.append(f"  {names[id(n)]}: requires_grad=False, no gradient")
    if had_grads:
        lines.append("(.grad already held gradients; this pass was added to them)")
    if naive:
        lines += [""] + naive_section(root, order, names, totals)
    text = "\n".join(lines) + "\n"
    print(text, end="", file=sys.stdout if file is None else file)
    return Explanation(text)


def _step_rows(steps: list[Step], tensor: bool = False) -> list[list[str]]:
    rows = []
    for step in steps:
        for k, update in enumerate(step.updates):
            if tensor:
                upstream = str(step.upstream.shape)
                change = f"{_norm_text(update.before)} -> {_norm_text(update.after)}"
            else:
                upstream = _FMT(step.upstream)
                change = f"{_FMT(update.before)} -> {_FMT(update.after)}"
            head = [str(step.index), step.name, step.op, upstream]
            head = head if k == 0 else [""] * len(head)
            rows.append(head + [update.text(step.op), change])
    return rows


def _norm_text(g: Any) -> str:
    return "None" if g is None else _FMT(norm(g))


def _pass_totals(root: Any, order: list, steps: list[Step], seed: Any = 1.0) -> dict[int, Any]:
    """Each node's gradient at the end of the pass (the last 'after' it was given)."""
    totals = {id(node): None if is_tensor(root) else 0.0 for node in order}
    totals[id(root)] = seed
    for step in steps:
        for update in step.updates:
            totals[id(update.input)] = update.after
    return totals


def _value(x: Any) -> float:
    return float(getattr(x, "data", x))


# ---- Tensor graphs: the same steps, with shapes instead of numbers ----

def _seed(root: Any, grad: Any, where: str) -> Any:
    """d(root)/d(root): 1.0 for a Value; for a Tensor ``grad`` or ones, checked as
    ``Tensor.backward`` checks it."""
    if not is_tensor(root):
        if grad is not None:
            raise TypeError(f"{where}: grad= is for a Tensor root; a Value's seed is 1")
        return 1.0
    import numpy as np

    from ..tensor_engine.arrays import all_finite, as_array

    if not root.requires_grad:
        raise RuntimeError(f"{where}: this tensor does not require a gradient (make its "
                           "inputs with requires_grad=True, outside no_grad())")
    if grad is None:
        if root.data.size != 1:
            raise ValueError(f"{where}: the output has shape {root.data.shape}; pass grad= "
                             "(d(loss)/d(output), of that shape) or reduce it first "
                             "(e.g. .sum())")
        return np.ones_like(root.data)
    seed = np.array(as_array(grad, root.data.dtype, where))
    if seed.shape != root.data.shape:
        raise ValueError(f"{where}: grad has shape {seed.shape}, the output has shape "
                         f"{root.data.shape}")
    if not all_finite(seed):
        raise ValueError(f"{where}: grad holds nan or inf, needs finite numbers")
    return seed


def _tensor_step(index: int, node: Any, upstream: Any, updates: list, names: dict) -> Step:
    """A Step from one entry of the Tensor engine's trace, which lists only the inputs that
    got a gradient. The rule is asked again for each gradient as it was before
    ``sum_to_shape`` (to show that summation, and ``added`` exactly)."""
    import numpy as np

    from ..tensor_engine.backward import sum_to_shape

    prev = node._prev
    with np.errstate(all="ignore"):
        raw = node._vjp(tuple(child.data for child in prev), node.data, upstream)
    made, left = [], list(updates)
    for k, child in enumerate(prev):
        if not left or left[0][0] is not child or raw[k] is None:
            continue
        _, before, after = left.pop(0)
        g = np.asarray(raw[k])
        formula, shapes = tensor_formula(node, k, names, g.shape)
        made.append(Update(child, names[id(child)], before, after,
                           sum_to_shape(g, child.data.shape), formula, shapes,
                           str(child.data.shape)))
    return Step(index, node, names[id(node)], node._op, upstream, tuple(made))
