"""How the tools that show backprop read a graph: its order, its names, its numbers.

``explain``, ``to_dot``/``draw_dot`` and ``to_html`` all name nodes the same way, so that a
drawing and a step-by-step text can be read side by side: a node shows its ``label``; an
unlabelled node gets a name from its op and a counter, in the order a reader meets the
nodes (inputs before outputs, first argument first): ``mul1``, ``add2``, ``tanh1``,
``leaf1`` (an unlabelled leaf, e.g. a constant).

A node does not know the model it belongs to, so each tool takes ``params=``, as torchviz's
``make_dot`` does: a model (``params=model``), its ``named_parameters()`` as a dict or as
pairs, a dict of the learner's own (``params={"C": C, "W1": W1}``), or a plain list of
parameters (``params=[C, W1]``). Then an unlabelled parameter is named as in
``state_dict()`` or by its key, a nested list of Values giving indexed names:
``0.weight[1, 0]`` is row 1, column 0 of layer 0's weight. A list gives no names, so its
parameters show their labels (``C.label = "C"``), and an unlabelled one its place in the
list: ``params[1]``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

_OP_KINDS = {"+": "add", "*": "mul", "**": "pow", "ReLU": "relu"}


def format_number(x: Any) -> str:
    """A number as the drawings and explanations show it: 4 decimals.

    Fixed point (``-1.5000``) for 0 and for magnitudes in [1e-4, 1e6); scientific
    (``1.2340e-07``) outside that range, so that a tiny gradient never reads as 0.

    Example:
        >>> format_number(-1.5), format_number(1.234e-7)
        ('-1.5000', '1.2340e-07')
    """
    x = float(getattr(x, "_value", x))  # a gradient may be a Value after create_graph=True
    if x == 0:
        return "0.0000"  # also for -0.0, as the page's JavaScript shows it
    if 1e-4 <= abs(x) < 1e6:
        return f"{x:.4f}"
    return f"{x:.4e}"


def holds_array(node: Any) -> bool:
    """True for a Tensor node (its data has a shape), False for a Value."""
    return hasattr(node._value, "shape")


def array_text(x: Any) -> str:
    """A Tensor's data or gradient in a few characters: its shape, and its value if it has
    one element (``(4, 3)``, ``() = 0.7071``). A gradient may be a Tensor or an ndarray."""
    x = _array(x)
    text = str(tuple(x.shape))
    return f"{text} = {format_number(float(x.reshape(-1)[0]))}" if x.size == 1 else text


def grad_summary(g: Any) -> str:
    """A Tensor's gradient as explanations and pages show it: shape and norm, or None.

    Example:
        >>> import numpy as np
        >>> grad_summary(np.array([[3.0, 0.0], [0.0, 4.0]])), grad_summary(None)
        ('(2, 2), norm 5.0000', 'None')
    """
    if g is None:
        return "None"
    g = _array(g)
    return array_text(g) if g.size == 1 else f"{tuple(g.shape)}, norm {format_number(grad_norm(g))}"


def grad_norm(g: Any) -> float:
    """The Euclidean norm of an array (of all its entries), computed in float64."""
    g = _array(g).astype("float64")
    return math.sqrt(float((g * g).sum()))


def _array(x: Any) -> Any:
    """The ndarray of a Tensor (a gradient after ``create_graph=True``), or ``x`` itself."""
    return x._value if hasattr(x, "_prev") else x


def reading_order(root: Any) -> list[Any]:
    """Every node ``root`` depends on, inputs before outputs, first argument first.

    The order a reader follows in ``(x1*w1 + x2*w2).tanh()``: x1, w1, the product, x2,
    w2, the product, the sum, the tanh. A post-order walk with an explicit stack.
    """
    order: list[Any] = []
    seen: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for child in reversed(node._prev):
            if id(child) not in seen:
                stack.append((child, False))
    return order


def node_names(order: Iterable[Any], params: Any = None,
               where: str = "node_names") -> dict[int, str]:
    """``{id(node): name}``: the node's label, its parameter name, or an op-based name
    such as ``mul2``.

    Auto names count per kind, in the given order, and skip names already used by a
    label or a parameter, so ``mul1`` is never both a label and an auto name.

    Args:
        order: The nodes, in reading order.
        params: The model whose parameters to name (see ``parameter_names``), or None.
        where: The function to name in an error about ``params``.

    Example:
        >>> from chaingrad import Value
        >>> w, x = Value(2.0), Value(3.0, label="x")
        >>> order = reading_order(w * x)
        >>> [node_names(order)[id(n)] for n in order]
        ['leaf1', 'x', 'mul1']
        >>> [node_names(order, params={"weight": [w]})[id(n)] for n in order]
        ['weight[0]', 'x', 'mul1']
    """
    order = list(order)
    given = parameter_names(params, where) if params is not None else {}
    taken = {node.label for node in order if node.label} | set(given.values())
    counters: dict[str, int] = {}
    names: dict[int, str] = {}
    for node in order:
        if node.label:
            names[id(node)] = str(node.label)
            continue
        if id(node) in given:
            names[id(node)] = given[id(node)]
            continue
        kind = _op_kind(node._op) if node._prev else "leaf"
        while True:
            counters[kind] = counters.get(kind, 0) + 1
            name = f"{kind}{counters[kind]}"
            if name not in taken:
                break
        taken.add(name)
        names[id(node)] = name
    return names


def parameter_names(params: Any, where: str = "parameter_names") -> dict[int, str]:
    """``{id(node): name}`` for a model's parameters, named as in its ``state_dict()``.

    Args:
        params: A model (anything with ``named_parameters()``: a ``chaingrad.nn`` Module),
            a dict ``{name: parameter}``, ``(name, parameter)`` pairs, or a list of
            parameters, named ``params[0]``, ``params[1]``, ... by their place (a label,
            which the tools show first, names them better). A parameter is a Value, a
            Tensor, or a nested list of them, whose entries get indexed names. A node met
            twice keeps its first name.
        where: The function to name in an error.

    Raises:
        TypeError: When ``params`` is none of these (a lone Tensor among them), or a
            parameter is not a node.

    Example:
        >>> import random; random.seed(0)
        >>> from chaingrad.nn import MLP
        >>> model = MLP(2, [3, 1])
        >>> names = parameter_names(model)
        >>> names[id(model.layers[0].neurons[1].w[0])], names[id(model.layers[1].neurons[0].b)]
        ('0.weight[1, 0]', '2.bias[0]')
        >>> from chaingrad import Value
        >>> w, b = Value(0.5), Value(0.1)
        >>> sorted(parameter_names([w, b]).values())
        ['params[0]', 'params[1]']
    """
    if hasattr(params, "_prev"):  # iterating a Tensor would give its rows: new nodes
        raise TypeError(f"{where}: params must be a model, a dict of name -> parameter, (name, "
                        f"parameter) pairs or a list of parameters, got a "
                        f"{type(params).__name__}: put it in a list (params=[x])")
    pairs = params.named_parameters() if hasattr(params, "named_parameters") else params
    if isinstance(pairs, Mapping):
        pairs = pairs.items()
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError(f"{where}: params must be a model, a dict of name -> parameter, (name, "
                        f"parameter) pairs or a list of parameters, got "
                        f"{type(params).__name__}")
    names: dict[int, str] = {}
    for place, entry in enumerate(pairs):
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str):
            stack = [(entry[0], (), entry[1])]
        elif hasattr(entry, "_prev") or isinstance(entry, (list, tuple)):
            stack = [("params", (place,), entry)]  # a parameter given without a name
        else:
            raise TypeError(f"{where}: params: expected a parameter (a Value or Tensor) or a "
                            f"(name, parameter) pair, got {entry!r:.60}")
        while stack:
            name, index, item = stack.pop()
            at = f"[{', '.join(map(str, index))}]" if index else ""
            if isinstance(item, (list, tuple)):
                stack.extend((name, (*index, i), x) for i, x in reversed(list(enumerate(item))))
            elif hasattr(item, "_prev"):
                names.setdefault(id(item), name + at)
            else:
                raise TypeError(f"{where}: params: {name}{at} holds a {type(item).__name__}, "
                                "not a Value or Tensor")
    return names


def _op_kind(op: str) -> str:
    if op.startswith("**"):
        return "pow"
    if op in _OP_KINDS:
        return _OP_KINDS[op]
    kind = "".join(ch for ch in op.lower() if ch.isalnum() or ch == "_")
    return kind or "op"


def check_root(root: Any, where: str) -> None:
    if not all(hasattr(root, a) for a in ("_value", "grad", "_prev", "_op", "label")):
        raise TypeError(f"{where}: root must be a Value, got {type(root).__name__} "
                        "(a Tensor works too)")


def text_table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    """Rows of text as aligned columns (``right``: the columns aligned to the right)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
    return out
