"""Backward, one step at a time: what each ``_backward`` did, with its formula filled in.

``backward_steps(root)`` runs the real backward (``autodiff.backward`` with a trace) and
returns one ``Step`` per node whose rule ran, in the order they ran. Each input's update
carries its primitive's formula (from ``chaingrad/rules.py``), twice: with the nodes' names
(``w1.data * out.grad``) and with their numbers (``-3.0000 * 0.5000``), or for a Tensor,
their shapes (``(3, 1) @ (1, 2)``). ``out`` is the node whose ``_backward`` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import autodiff, guards
from ..declaration import GENERIC_FORMULA, fill_in
from .names import check_root, format_number, holds_array, node_names, reading_order

HAND_WRITTEN = "(its hand-written _backward)"
"""The formula of a ``_backward`` closure assigned by hand: its code is all there is."""


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
        result = format_number(self.added)
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


def backward_steps(root: Any, accumulate: bool = True, grad: Any = None,
                   params: Any = None) -> list[Step]:
    """Run ``root``'s backward and return the steps it took, in order.

    Args:
        root: The Value or Tensor to differentiate (its gradient is seeded with 1).
        accumulate: Add this pass into ``.grad`` as ``root.backward()`` does (the default);
            False leaves every ``.grad`` as it was.
        grad: For a Tensor root: d(loss)/d(root), of root's shape, as in
            ``Tensor.backward(grad)``; needed unless root has one element.
        params: The parameters' names: a model (its ``state_dict()`` names,
            ``0.weight[1, 0]``), a dict, pairs or a list, as
            ``chaingrad.show.names.parameter_names`` takes them.

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

    On a Tensor graph the gradients are arrays, and each update's ``numbers`` are shapes:

        >>> from chaingrad import Tensor
        >>> x = Tensor([[1.0, 2.0, 3.0]], requires_grad=True, label="x")
        >>> steps = backward_steps((x * x).sum())
        >>> [u.text(steps[1].op) for u in steps[1].updates][0]
        '* : x.grad += x.data * out.grad   (1, 3) = (1, 3) * (1, 3)'
    """
    check_root(root, "backward_steps")
    names = node_names(reading_order(root), params, "backward_steps")
    trace: list = []
    seed = seed_of(root, grad, "backward_steps")
    autodiff.backward([root], [seed], accumulate=accumulate, trace=trace)
    return [step_from_trace(i, *entry, names) for i, entry in enumerate(trace, start=1)]


def seed_of(root: Any, grad: Any, where: str) -> Any:
    """d(root)/d(root) to start from: 1.0 for a Value; for a Tensor ``grad`` or ones,
    checked as ``Tensor.backward`` checks it."""
    if grad is not None and not holds_array(root):
        raise TypeError(f"{where}: grad= is for a Tensor root; a Value's seed is 1")
    return root._seed(grad, False, where)


def step_from_trace(index: int, node: Any, upstream: Any, before: list, after: list,
                    names: dict) -> Step:
    """A Step from one entry of a trace (the backward driver's, or the naive walk's): the
    node, the gradient that reached it, and its inputs' gradients before and after its
    ``_backward``. The rule is asked again for each input's share, as the driver computed
    it, and the shares are added in turn (so that ``a + a`` shows a's gradient growing
    twice)."""
    rule, prev = node._rule, node._prev
    if type(rule) is guards.ClosureRule:  # opaque: only before and after are known
        return Step(index, node, names[id(node)], node._op, upstream, tuple(
            Update(x, names[id(x)], b, a, _minus(a, b), HAND_WRITTEN, "")
            for x, b, a in zip(prev, before, after)))
    raw = rule.vjp(tuple(x._value for x in prev), node._value, upstream)
    running = {id(x): b for x, b in zip(prev, before)}
    made = []
    for k, (x, g) in enumerate(zip(prev, raw)):
        if g is None or not x.requires_grad:  # the driver skipped it too
            continue
        added = autodiff.sum_to_shape(g, x._value.shape) if holds_array(node) else g
        old = running[id(x)]
        running[id(x)] = new = added if old is None else old + added
        formula, numbers = fill(node, k, names, g, upstream)
        result = str(tuple(x._value.shape)) if holds_array(node) else ""
        made.append(Update(x, names[id(x)], old, new, added, formula, numbers, result))
    return Step(index, node, names[id(node)], node._op, upstream, tuple(made))


def _minus(after: Any, before: Any) -> Any:
    return after - (0.0 if before is None else before)


# ---- filling a primitive's formula in: with names, and with numbers or shapes ----


def fill(node: Any, k: int, names: dict[int, str], raw: Any, upstream: Any) -> tuple[str, str]:
    """Input ``k``'s formula for ``node``'s step, with names and with numbers or shapes.

    The formula (``rules.Primitive.formulas``) speaks of ``x`` and ``y`` (inputs 0 and 1),
    ``out``, their ``.data`` and ``.grad``, and the primitive's parameters. With names, each
    input becomes its node's name; with numbers, every ``.data`` and ``.grad`` becomes its
    value (for a Tensor: its shape) and every parameter its value. ``raw`` is the
    gradient the rule gave: if its shape is not the input's, the driver summed it back,
    and the formula says so.
    """
    prim = node._rule.primitive
    formula = prim.formulas[min(k, len(prim.formulas) - 1)]
    tensor = holds_array(node)
    if formula == GENERIC_FORMULA:  # a user's primitive: its rule's answer for g = 1
        named = formula.replace("d(x)", f"d({names[id(node._prev[k])]})")
        if tensor:
            return named, f"rule(..., {tuple(upstream.shape)})[{k}]"
        local = prim.vjp(tuple(x._value for x in node._prev), node._value, 1.0,
                         *node._rule.params)[k]
        return named, f"{format_number(local)} * {format_number(upstream)}"
    inputs = dict(zip("xy", node._prev))
    params = dict(zip(prim.param_names, node._rule.params))
    params["k"] = k  # a formula for any number of inputs speaks of input k
    named = fill_in(formula, lambda who, attr: _name(who, attr, inputs, names, node),
                        lambda p: str(k) if p == "k" else None)
    valued = fill_in(formula, lambda who, attr: _value(who, attr, inputs, node, upstream,
                                                            tensor),
                         lambda p: _param(params[p], tensor) if p in params else None)
    x = node._prev[k]
    if tensor and getattr(raw, "shape", None) != x._value.shape:
        named = f"sum_to_shape({named}, {names[id(x)]}.shape)"
        valued = f"sum_to_shape({valued}, {tuple(x._value.shape)})"
    return named, valued


def _name(who: str, attr: str, inputs: dict, names: dict, node: Any) -> str:
    if who == "out":
        return f"out.{attr}"
    x = inputs[who]
    if attr == "data.mT" and x._value.ndim == 2:
        attr = "data.T"  # the plain transpose, as one writes it for a matrix
    return f"{names[id(x)]}.{attr}"


def _value(who: str, attr: str, inputs: dict, node: Any, upstream: Any, tensor: bool) -> str:
    x = node if who == "out" else inputs[who]
    value = x._value if attr != "grad" else upstream if who == "out" else x.grad
    if not tensor:
        return format_number(value)
    shape = tuple(getattr(value, "shape", ()))
    if attr.startswith("data.") and len(shape) >= 2:  # .T / .mT: the last two axes swapped
        shape = shape[:-2] + shape[-1:] + shape[-2:-1]
    return str(shape)


def _param(value: Any, tensor: bool) -> str | None:
    """A parameter's value as the numbers show it; None (keep its name) for an array, or
    for an index holding one (``x[rows, targets]``: written out, the arrays of a batch
    would fill the screen)."""
    if _holds_array(value):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not tensor:
        return f"{value:g}"
    return repr(value.item() if hasattr(value, "item") else value)


def _holds_array(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(map(_holds_array, value))
    return hasattr(value, "shape") and getattr(value, "size", 2) > 1
