"""``explain``: backward printed one step at a time, and why the order matters.

``explain(root)`` runs ``backward_steps`` (``chaingrad/show/steps.py``) and prints each step:
a line naming the node whose ``_backward`` runs (``out``), then for each input the update
with its primitive's formula filled in with numbers, and that input's gradient before and
after:

    step 5: out = mul1 (op *), out.grad = 0.5000
      * : x1.grad += w1.data * out.grad = -3.0000 * 0.5000 = -1.5000
          x1.grad: 0.0000 -> -1.5000

The lines fit a 100-column terminal: an update longer than that goes on with its numbers
(or shapes) on the next line. ``explain(root, naive=True)`` also runs
the naive recursive algorithm ("run my ``_backward``, then my inputs'", on copies of the
gradients) and shows where it goes wrong: a node used twice runs its ``_backward`` twice.

On a Tensor graph the steps carry arrays and ``explain`` shows shapes instead of numbers:

    matmul : transpose1.grad += x.data.T @ out.grad   (3, 5) = (3, 4) @ (4, 5)

(``sum_to_shape`` in a formula is the engine's one helper that sums a broadcast gradient
back to its input's shape; before -> after shows each gradient's norm.)

Nodes are named as in the drawings (see ``chaingrad.show.names``): their label, or an
op-based name such as ``mul1`` or ``leaf2``. Each backward pass starts from zero gradients;
the numbers shown are this pass's (``.grad`` ends as what it held before plus this pass, as with
``root.backward()``).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from .naive import naive_section
from .names import (
    check_root,
    format_number,
    grad_norm,
    grad_summary,
    holds_array,
    node_names,
    reading_order,
)
from .steps import Step, Update, backward_steps, seed_of

_FMT = format_number
WIDTH = 100  # the columns explain's lines fit (an update that does not wraps, see _update_lines)


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
    root: Any, naive: bool = False, file: TextIO | None = None, grad: Any = None,
    params: Any = None,
) -> Explanation:
    """Run ``root``'s backward and print each step with its formula filled in.

    Like ``root.backward()``, it adds the gradients into ``.grad``. On a Tensor graph each
    formula is filled in with shapes, and before -> after shows the gradients' norms.

    Args:
        root: The Value or Tensor to differentiate.
        naive: Also run the naive recursive algorithm (on copies of the gradients) and show
            where it disagrees with the correct, topologically ordered backward (Value
            graphs only: ValueError on a Tensor).
        file: Where to print (default: standard output).
        grad: For a Tensor root with more than one element: d(loss)/d(root).
        params: The parameters' names: a model (``params=model``: its ``state_dict()``
            names, ``0.weight[1, 0]``), a dict (``params={"W1": W1}``) or pairs, or a
            list of parameters (``params=[W1, b1]``: their labels; see
            ``chaingrad.show.names``).

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
    check_root(root, "explain")
    if not isinstance(naive, bool):  # naive="no" would be truthy
        raise TypeError(f"explain: naive must be True or False, got {type(naive).__name__} "
                        f"{naive!r}")
    tensor = holds_array(root)
    if tensor and naive:
        raise ValueError("explain: naive=True is for Value graphs only (the naive walk is "
                         "shown on scalars); got a Tensor of shape "
                         f"{root._value.shape}")
    order = reading_order(root)
    names = node_names(order, params, "explain")
    seed = seed_of(root, grad, "explain")
    if tensor:
        had_grads = any(node.grad is not None for node in order)
    else:
        had_grads = any(_value(node.grad) != 0.0 for node in order)
    steps = backward_steps(root, grad=seed if tensor else None, params=params)
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
    lines += [""] + _step_lines(steps, tensor)
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


def _step_lines(steps: list[Step], tensor: bool = False) -> list[str]:
    """Each step: a line naming ``out``, then for each input its update and the input's
    gradient before -> after (for a Tensor: shapes, and norms before -> after)."""
    lines = []
    for step in steps:
        op = f" (op {step.op})" if step.op else ""
        upstream = (f"out.grad shape {step.upstream.shape}" if tensor else
                    f"out.grad = {_FMT(step.upstream)}")
        lines.append(f"step {step.index}: out = {step.name}{op}, {upstream}")
        for update in step.updates:
            indent = " " * len(f"  {step.op} : ")
            lines += _update_lines(update, step.op, indent)
            if tensor:
                change = f"{_norm_text(update.before)} -> {_norm_text(update.after)}"
            else:
                change = f"{_FMT(update.before)} -> {_FMT(update.after)}"
            lines.append(f"{indent}{update.name}.grad: {change}")
    return lines


def _update_lines(update: Update, op: str, indent: str) -> list[str]:
    """``update.text(op)`` on one line, or, when that is wider than ``WIDTH``, two: the
    formula, then its numbers or shapes under the input's name."""
    text = f"  {update.text(op)}"
    formula = f"  {op} : {update.name}.grad += {update.formula}"
    if len(text) <= WIDTH or not text.startswith(formula) or len(formula) == len(text):
        return [text]
    return [formula, indent + text[len(formula):].strip()]


def _norm_text(g: Any) -> str:
    return "None" if g is None else _FMT(grad_norm(g))


def _pass_totals(root: Any, order: list, steps: list[Step], seed: Any = 1.0) -> dict[int, Any]:
    """Each node's gradient at the end of the pass (the last 'after' it was given)."""
    totals = {id(node): None if holds_array(root) else 0.0 for node in order}
    totals[id(root)] = seed
    for step in steps:
        for update in step.updates:
            totals[id(update.input)] = update.after
    return totals


def _value(x: Any) -> float:
    return float(getattr(x, "_value", x))
