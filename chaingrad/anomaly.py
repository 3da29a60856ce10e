"""Where a nan or an inf came from, said at ``backward()``: torch's anomaly detection, on
by default because here it costs nothing while the numbers are finite.

A Tensor op computes what torch computes (``log(0) = -inf``, ``0 / 0 = nan``) and checks
nothing. ``autodiff.backward`` checks twice per pass, not once per op: the loss before the
pass (``check_loss``), every leaf's gradient after it. Only when one is not finite does it
look for the cause, walking the graph again:

- a loss that is not finite: ``loss_error`` follows the values that are not finite back
  from the loss, and names the first op, in forward order, whose output is not finite
  although its inputs are (``log: input 0 is 0.0 at [3, 7] ...: log(0.0) = -inf``), or the
  leaf that holds such a value (``the parameter `fc1.weight` holds nan``);
- a gradient that is not finite: the pass runs again, checking each step
  (``autodiff.Watch`` with ``check``), and ``gradient_error`` names the step that made it,
  with its input's value there.

torch's switches (``chaingrad.gradmode``: ``set_detect_anomaly``, ``detect_anomaly``)
turn it off, or on with the lines that made each op recorded (``created_at``). A Value
needs none of this: the scalar engine raises at the op, as Python's floats do.
"""

from __future__ import annotations

import math
import os
import traceback
import weakref
from typing import Any

from . import gradmode, rules
from .errors import AnomalyError

ELEMENTWISE = frozenset(p.name for p in rules.PRIMITIVES) | {"/", "scale", "clip",
                                                               "binary_cross_entropy"}
"""The primitives whose output entry at an index is made from their inputs' entries at that
index (broadcast): their message shows the inputs' values there."""

OPERATORS = frozenset({"+", "*", "/", "**"})

modules: weakref.WeakSet = weakref.WeakSet()
"""The ``nn.Module``s alive (each adds itself when it registers its first attribute): where
``parameter_name`` looks for a parameter's name."""

PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
"""chaingrad's own files: the lines of a traceback that ``record`` leaves out at its end."""


def watches(node: Any) -> bool:
    """Whether ``backward()`` from ``node`` checks for nan and inf: always for a Value (the
    scalar engine's numbers are finite), for a Tensor unless ``set_detect_anomaly(False)``."""
    return gradmode.anomaly_checks or not hasattr(node._value, "dtype")


def record(node: Any) -> None:
    """Keep the lines that made ``node`` (an op's output), under ``set_detect_anomaly(True)``:
    the caller's, up to the last line outside chaingrad's own code."""
    stack = traceback.extract_stack()
    while stack and stack[-1].filename.startswith(PACKAGE):
        stack.pop()
    node._created_at = stack


def check_loss(order: list[Any], roots: Any) -> None:
    """An ``AnomalyError`` naming the op that made it if a root of the pass (the loss) is a
    one-element Tensor that holds a nan or inf; nothing for a finite one, which is one look
    at a number. A root of more elements is no loss: ``y.backward(g)`` from attention scores
    masked with -inf is ordinary torch, and the gradients it gives are checked at the end of
    the pass like any others."""
    for root in roots:
        value = root._value
        if not hasattr(value, "dtype") or value.size != 1:
            continue  # a Value (the scalar engine's numbers are finite), or no loss
        if not math.isfinite(value.item()):
            raise loss_error(order, root)


# ---- a loss that is not finite: the op that made it ----


def loss_error(order: list[Any], root: Any) -> AnomalyError:
    """The error for a loss that is not finite: the first op (or leaf), in forward order,
    on the way to it whose output is not finite although its inputs are. A nan made of an
    inf (``-inf * 0``, ``inf - inf``) is followed back to the inf, and both ops are named."""
    if not _has(root._value, "nan"):
        source, kind = _first_source(order, root, "inf"), "inf"
        return _error(f"{_source_text(source, order, kind)}; {_loss_text(root)}", source)
    maker = _first_source(order, root, "nan")
    if maker._rule is None or all(_finite(x._value) for x in maker._prev):
        return _error(f"{_source_text(maker, order, 'nan')}; {_loss_text(root)}", maker)
    source = _first_source(order, maker, "inf")  # maker's inputs hold an inf, and no nan
    return _error(f"{_source_text(source, order, 'inf')}; then {_made_nan_text(maker)}; "
                  f"{_loss_text(root)}", source)


def _first_source(order: list[Any], root: Any, kind: str) -> Any:
    """Of the nodes holding a ``kind`` ("nan", or "inf" for inf or -inf) that reach
    ``root`` through values that hold one, the first in forward order that is a leaf or
    whose inputs hold none (``root`` itself if none other is)."""
    chain = {id(root)}
    for node in reversed(order):
        if id(node) in chain:
            chain.update(id(x) for x in node._prev if _has(x._value, kind))
    return next(node for node in order if id(node) in chain and (
        node is root or not any(_has(x._value, kind) for x in node._prev)))


def _source_text(node: Any, order: list[Any], kind: str) -> str:
    if node._rule is None:
        user = next((n for n in order if any(x is node for x in n._prev)), None)
        used = f", which {user._op} reads" if user is not None else ""
        return f"{leaf_text(node)} holds {_first_bad_text(node._value, kind)}{used}"
    return _op_text(node)


def _op_text(node: Any) -> str:
    """``log: input 0 is 0.0 at [3, 7] (shape (32, 27)): log(0.0) = -inf``, or for an op
    that is not entry by entry, its output at the first index and its inputs' shapes."""
    np = _numpy()
    out = node._value
    index = _first_bad(out)
    shapes = _shapes(node)
    if _elementwise(node):
        values = [_number(np.broadcast_to(x._value, out.shape)[index]) for x in node._prev]
        said = " and ".join(f"input {k} is {v}" for k, v in enumerate(values))
        return (f"{node._op}: {said}{_at(index)} ({shapes}): "
                f"{_expression(node, values)} = {_number(out[index])}")
    there = "".join(f", where input {k} is {_number(x._value[index])}"
                    for k, x in enumerate(node._prev) if x._value.shape == out.shape)
    why = f": the result overflows {out.dtype}" if node._rule.primitive.array else ""
    return (f"{node._op}: its output is {_number(out[index])}{_at(index)}{there}, though "
            f"its inputs ({shapes}) are finite{why}")


def _made_nan_text(node: Any) -> str:
    """``* made nan of it at [3] (-inf * 0.0 = nan)``."""
    np = _numpy()
    out = node._value
    index = tuple(int(i) for i in np.argwhere(np.isnan(out))[0])
    if _elementwise(node):
        values = [_number(np.broadcast_to(x._value, out.shape)[index]) for x in node._prev]
        return f"{node._op} made nan of it{_at(index)} ({_expression(node, values)} = nan)"
    there = [f"input {k} is {_number(x._value[index])}" for k, x in enumerate(node._prev)
             if x._value.shape == out.shape]
    return (f"{node._op} made nan of it{_at(index)}"
            + (f" ({', '.join(there)} there)" if there else ""))


def _expression(node: Any, values: list[str]) -> str:
    """What an entry-by-entry op computed there: ``log(0.0)``, ``1.0 / 0.0``."""
    name, rule = node._rule.primitive.name, node._rule
    if name == "**n":
        return f"{values[0]} ** {rule.params[0]}"
    if name == "scale":
        return f"{values[0]} * {rule.params[0]}"
    if name in OPERATORS and len(values) == 2:
        return f"{values[0]} {name} {values[1]}"
    params = "".join(f", {p}" for p in rule.params)
    return f"{node._op}({', '.join(values)}{params})"


def _loss_text(root: Any) -> str:
    value = root._value
    if value.size == 1:
        return f"the loss is {_number(value.reshape(-1)[0])}"
    return f"the output backward() started from holds {_first_bad_text(value)}"


# ---- a gradient that is not finite: the step that made it ----


def gradient_error(out: Any, x: Any, gx: Any) -> AnomalyError:
    """The error for the backward step of ``out`` that gave its input ``x`` a gradient
    ``gx`` (or made ``x``'s total) that is not finite: where, the input's value there,
    and why, when a leaf that the op read was written since (it holds a nan the forward
    pass never saw)."""
    np = _numpy()
    if hasattr(gx, "_prev"):
        gx = gx._value
    k = next(i for i, y in enumerate(out._prev) if y is x)
    total = x.grad._value if hasattr(x.grad, "_prev") else x.grad
    g = gx if not _finite(gx) else total
    index = _first_bad(g)
    there = ""
    if np.shape(x._value) == np.shape(g):
        there = f", where input {k} is {_number(x._value[index])}"
    text = (f"{out._op} (backward): the gradient it gives input {k} ({_shapes(out)}) is "
            f"{_number(g[index])}{_at(index)}{there}")
    if _finite(gx):
        text += "; each share is finite, but their sum overflows"
    written = _written_leaf(out) if _finite(out._value) else None
    if written is not None:
        text += (f"; {leaf_text(written)} holds {_first_bad_text(written._value)}, which "
                 f"{out._op}'s output does not show: it was written after {out._op} used it "
                 "(an optimizer step or an in-place write between the forward pass and "
                 "backward())")
    else:
        text += "; the derivative is unbounded there, or the product overflows"
    return _error(text, out)


def _written_leaf(out: Any) -> Any:
    """A leaf that now holds a nan or inf, reached from ``out``'s inputs through values
    that are not finite (a view such as ``W.T`` shows its leaf's write), or None."""
    stack = [x for x in out._prev if not _finite(x._value)]
    while stack:
        node = stack.pop()
        if node._rule is None:
            return node
        stack.extend(x for x in node._prev if not _finite(x._value))
    return None


# ---- naming ----


def leaf_text(node: Any) -> str:
    """A leaf as a message names it: ``the parameter `fc1.weight``` (its name in its
    module's ``state_dict``), ``the tensor `w``` (its label), or by its shape."""
    name = parameter_name(node)
    if name:
        return f"the parameter `{name}`"
    if node.label:
        return f"the tensor `{node.label}`"
    if node.requires_grad:
        return f"a leaf tensor of shape {tuple(node._value.shape)}"
    return f"a tensor that takes no gradient (shape {tuple(node._value.shape)})"


def parameter_name(node: Any) -> str:
    """A parameter's name in the ``state_dict`` of the outermost live module that holds it
    (``0.weight``), or "" if no module does."""
    found = ""
    for module in list(modules):
        for name, p in module.named_parameters():
            if p is node and len(name) > len(found):
                found = name
    return found


def _error(text: str, node: Any) -> AnomalyError:
    stack = node.__dict__.get("_created_at") if hasattr(node, "__dict__") else None
    created_at = "".join(traceback.format_list(stack)) if stack else None
    if created_at:
        text += f"\n\n{node._op} was made here (set_detect_anomaly(True)):\n{created_at}"
    return AnomalyError(text, node, created_at)


# ---- arrays ----


def _numpy() -> Any:
    import numpy  # only Tensors come here: numpy is loaded already

    return numpy


def _finite(a: Any) -> bool:
    np = _numpy()
    a = np.asarray(a)
    return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def _first_bad(a: Any) -> tuple[int, ...]:
    np = _numpy()
    return tuple(int(i) for i in np.argwhere(~np.isfinite(np.asarray(a)))[0])


def _has(a: Any, kind: str) -> bool:
    """Whether ``a`` holds a nan (``kind`` "nan") or an inf or -inf ("inf")."""
    np = _numpy()
    a = np.asarray(a)
    return a.dtype.kind == "f" and bool((np.isnan if kind == "nan" else np.isinf)(a).any())


def _first_bad_text(a: Any, kind: str = "") -> str:
    """``nan at [0, 1]``: the first entry that is not finite (or a ``kind``), and where."""
    np = _numpy()
    a = np.asarray(a)
    bad = {"nan": np.isnan, "inf": np.isinf}.get(kind, lambda v: ~np.isfinite(v))(a)
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{_number(a[index])}{_at(index)}"


def _at(index: tuple[int, ...]) -> str:
    """`` at [3, 7]``, as torch shows an index; nothing for a 0-d tensor's one entry."""
    return f" at [{', '.join(map(str, index))}]" if index else ""


def _number(value: Any) -> str:
    """An entry as its dtype shows it (``1e+30`` for a float32, not 1.0000000150474662e+30)."""
    return str(value)


def _shapes(node: Any) -> str:
    shapes = [tuple(x._value.shape) for x in node._prev]
    if len(shapes) == 1:
        return f"shape {shapes[0]}"
    return "shapes " + ", ".join(map(str, shapes))


def _elementwise(node: Any) -> bool:
    if node._rule.primitive is None or node._rule.primitive.name not in ELEMENTWISE:
        return False
    np = _numpy()
    return all(np.broadcast_shapes(x._value.shape, node._value.shape) == node._value.shape
               for x in node._prev)
