"""Drawing a graph: DOT text with no dependency, and SVG/PNG through a Graphviz renderer.

``to_dot(root)`` writes the graph in Graphviz's DOT language: one record node per Value
(``name | data | grad``), one small node per operation, and one edge per input of each op,
in argument order (so ``a + a`` is drawn as two edges, the first marked ``×2``). The text
depends only on the graph's shape and numbers, never on ``id()``: the same graph always
gives the same text.

A Tensor graph is drawn the same way, with shapes instead of numbers: a record shows
``name | data (4, 3) float32 | grad (4, 3)``, the grad field reads ``grad None`` before
backward and ``requires_grad=False`` on a constant; a one-element tensor also shows its
value (``data () float32 = 0.7071``).

``draw_dot(root)`` wraps that text in a ``Drawing`` that behaves like the
``graphviz.Digraph`` micrograd returns for the calls people make on it (``.source``,
``.render()``, ``.pipe()``, inline display in Jupyter). It renders with a system ``dot``
when there is one, else with the ``graphviz-pure`` program that
``pip install 'chaingrad[viz]'`` installs (a self-contained Graphviz, no system packages).

Nodes are named as ``chaingrad.show.names`` names them, as ``explain()`` and ``to_html()``
do, so that a drawing and a step-by-step text can be read side by side.
"""

from __future__ import annotations

from typing import Any

from .layout import Graph, check_rankdir, drawing_size, screen_rankdir
from .names import array_text, check_root, format_number, holds_array, node_names, reading_order
from .render import (
    DEFAULT_TIMEOUT,
    Drawing,
    RendererNotFoundError,
    check_format,
    check_timeout,
)

__all__ = ["Drawing", "RendererNotFoundError", "draw_dot", "to_dot"]

DEFAULT_MAX_NODES = 1000
# graphviz-pure lays out the slowest graphs of this many segments in 2-6 s (see layout_segments)
DEFAULT_MAX_SEGMENTS = 5000

# Courier: Graphviz sizes the boxes with Courier's metrics (graphviz-pure with its bundled
# Cousine, which has the same) and the SVG asks for "Courier,monospace". Every monospace font
# has about the same advance (0.6 em), so the text fits its box in any browser, whereas
# Graphviz's default Times falls back to a wider serif font where Times is missing.
NODE_STYLE = 'shape=record, fontname="Courier"'

# What Graphviz's dot makes of to_dot's nodes, in points, to choose rankdir="auto" (see
# _dot_sizes): a 14 pt Courier character's advance; the padding of a record field; a
# record's height with its fields in a row (LR) and one field's height in a stack (TB);
# an ellipse's least size; dot's default gaps between nodes and ranks, and margin.
COURIER_ADVANCE = 8.4
FIELD_PAD = 16.0
ROW_HEIGHT = 37.0
STACKED_HEIGHT = 25.13
OP_SIZE = (54.0, 36.0)
DOT_GAPS = {"node_gap": 18.0, "rank_gap": 36.0, "margins": (4.0, 4.0)}



def record_fields(node: Any) -> tuple[str, str]:
    """The data and grad fields of a node's record: numbers for a Value, shapes for a Tensor."""
    if not holds_array(node):
        return f"data {format_number(node._value)}", f"grad {format_number(node.grad)}"
    x = node._value
    data = f"data {tuple(x.shape)} {x.dtype}"
    if x.size == 1:
        data += f" = {format_number(float(x.reshape(-1)[0]))}"
    if node.grad is None:
        return data, "grad None" if node.requires_grad else "requires_grad=False"
    return data, f"grad {array_text(node.grad)}"


def to_dot(root: Any, rankdir: str = "LR", params: Any = None) -> str:
    """The graph of ``root`` as Graphviz DOT text (no dependency needed).

    Args:
        root: The Value (or Tensor) whose graph to draw.
        rankdir: Graphviz direction: 'LR' (left to right, micrograd's and the default),
            'RL', 'TB', 'BT', or 'auto': the one of LR and TB in which the drawing,
            fitted whole to a 16:10 screen, is drawn larger (``fitting_rankdir``).
        params: The parameters' names: a model (``params=model``: its ``state_dict()``
            names, ``0.weight[1, 0]``), a dict (``params={"W1": W1}``) or pairs, or a
            list of parameters (``params=[W1, b1]``: their labels; see
            ``chaingrad.show.names``).

    Returns:
        DOT text: a record node ``name | data | grad`` per Value (numbers as in
        ``format_number``; shapes for a Tensor, see the module docstring), an op node per
        operation, edges in argument order.

    Example:
        >>> from chaingrad import Value
        >>> a = Value(3.0, label="a")
        >>> print(to_dot(a + a), end="")
        digraph chaingrad {
          graph [rankdir=LR];
          node [shape=record, fontname="Courier"];
          n0 [label="{ a | data 3.0000 | grad 0.0000 }"];
          n1 [label="{ add1 | data 6.0000 | grad 0.0000 }"];
          n1_op [label="+", shape=ellipse];
          n0 -> n1_op [label="×2"];
          n0 -> n1_op;
          n1_op -> n1;
        }
    """
    check_root(root, "to_dot")
    check_rankdir(rankdir, "to_dot", auto=True)
    order = reading_order(root)
    return _dot_text(order, rankdir, node_names(order, params, "to_dot"))


def fitting_rankdir(root: Any, params: Any = None) -> str:
    """The direction ``rankdir="auto"`` draws ``root``'s graph in: "TB" if Graphviz's
    drawing top to bottom, fitted whole to a 16:10 screen, is drawn at least 1.25 times as
    large as the one left to right, else "LR" (``chaingrad.show.layout.screen_rankdir``).
    The drawings' sizes are estimated from the nodes' sizes as dot measures them, without
    running it.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(0.5, label="x")
        >>> fitting_rankdir(x.tanh().tanh().tanh())  # a chain: a strip left to right
        'TB'
        >>> layer = [Value(float(i), label=f"x{i}") for i in range(16)]
        >>> while len(layer) > 1:  # a product of 16 in a balanced tree: 16 leaves abreast
        ...     layer = [a * b for a, b in zip(layer[::2], layer[1::2])]
        >>> fitting_rankdir(layer[0])
        'LR'
    """
    check_root(root, "fitting_rankdir")
    order = reading_order(root)
    return _fitting_rankdir(order, node_names(order, params, "fitting_rankdir"))


def _fitting_rankdir(order: list[Any], names: dict[int, str]) -> str:
    sizes = {rankdir: drawing_size(_dot_sizes(order, names, rankdir), rankdir, **DOT_GAPS)
             for rankdir in ("LR", "TB")}
    return screen_rankdir(sizes["LR"], sizes["TB"])


def _dot_sizes(order: list[Any], names: dict[int, str], rankdir: str) -> Graph:
    """The nodes of ``_dot_text``'s graph with the sizes dot gives them for ``rankdir``:
    a record's fields side by side in LR (``{ a | b | c }`` turns with the direction),
    stacked in TB."""
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    keys, sizes, ops, edges = [], {}, set(), []
    for node in order:
        key = ids[id(node)]
        widths = [COURIER_ADVANCE * len(text) + FIELD_PAD
                  for text in (names[id(node)], *record_fields(node))]
        if node._prev:
            op = key + "_op"
            keys.append(op)
            ops.add(op)
            sizes[op] = (max(OP_SIZE[0], COURIER_ADVANCE * len(node._op) + FIELD_PAD),
                         OP_SIZE[1])
            edges += [(ids[id(child)], op) for child in node._prev]
            edges.append((op, key))
        keys.append(key)
        sizes[key] = ((sum(widths), ROW_HEIGHT) if rankdir == "LR"
                      else (max(widths), STACKED_HEIGHT * len(widths)))
    return Graph(keys, sizes, frozenset(ops), edges)


def _dot_text(order: list[Any], rankdir: str, names: dict[int, str]) -> str:
    if rankdir == "auto":
        rankdir = _fitting_rankdir(order, names)
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    lines = ["digraph chaingrad {", f"  graph [rankdir={rankdir}];", f"  node [{NODE_STYLE}];"]
    for node in order:
        nid = ids[id(node)]
        fields = (_escape_record(names[id(node)]), *record_fields(node))
        lines.append(f'  {nid} [label="{{ {" | ".join(fields)} }}"];')
        if node._prev:
            lines.append(f'  {nid}_op [label="{_escape_string(node._op)}", shape=ellipse];')
            lines.extend(f"  {ids[id(child)]} -> {nid}_op" + (f' [label="×{n}"];' if n else ";")
                         for child, n in zip(node._prev, reuse_marks(node)))
            lines.append(f"  {nid}_op -> {nid};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def reuse_marks(node: Any) -> list[int]:
    """For each input edge of ``node``: ``n`` on the first edge of an input that this op
    uses ``n > 1`` times (``a + a``: 2, then 0), 0 elsewhere. Such edges are marked ``×n``."""
    marks, seen = [], set()
    for child in node._prev:
        count = sum(c is child for c in node._prev)
        marks.append(count if count > 1 and id(child) not in seen else 0)
        seen.add(id(child))
    return marks


def _escape_record(text: str) -> str:
    """Escape a record field: the characters that structure a record, and quotes."""
    out = []
    for ch in text:
        if ch in '\\{}|<>" ':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
    return "".join(out)


def _escape_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def draw_dot(
    root: Any,
    format: str = "svg",
    rankdir: str = "LR",
    max_nodes: int = DEFAULT_MAX_NODES,
    renderer: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    max_segments: int = DEFAULT_MAX_SEGMENTS,
    params: Any = None,
) -> Drawing:
    """A drawing of the graph of ``root``, as micrograd's ``draw_dot`` returns.

    Args:
        root: The Value (or Tensor) whose graph to draw.
        format: Output format of ``render()``/``pipe()``: 'svg', 'png' or 'dot'.
        rankdir: Graphviz direction: 'LR' (micrograd's, the default), 'RL', 'TB', 'BT',
            or 'auto' (LR or TB, whichever fits a 16:10 screen better: ``to_dot``).
        max_nodes: The largest number of Values to lay out; a bigger graph raises
            ValueError at once instead of a layout that runs for minutes.
        renderer: The name or path of a dot-compatible program (default: a system
            ``dot``, else ``graphviz-pure``).
        timeout: Seconds a layout may take before ``render``/``pipe`` stop it with a
            RuntimeError (None: no limit). Jupyter's display waits 10 s at most.
        max_segments: The largest number of edge segments to lay out (see
            ``layout_segments``): a Value used by many ops far apart makes many, and
            Graphviz slow; a bigger graph raises ValueError at once.
        params: The parameters' names: a model (``params=model``: its ``state_dict()``
            names, ``0.weight[1, 0]``), a dict (``params={"W1": W1}``) or pairs, or a
            list of parameters (``params=[W1, b1]``: their labels; see
            ``chaingrad.show.names``).

    Returns:
        A ``Drawing``: ``.source``, ``.render(filename)``, ``.pipe()``, and inline display
        in Jupyter.

    Raises:
        TypeError: When ``root`` is not a Value or Tensor, ``max_nodes`` or
            ``max_segments`` is not an int, or ``timeout`` is not a number or None.
        ValueError: When an argument is out of range, or the graph is too big to lay out
            (more than ``max_nodes`` Values or ``max_segments`` edge segments).

    Example:
        >>> from chaingrad import Value
        >>> x = Value(2.0, label="x")
        >>> y = (x * x).tanh()
        >>> y.backward()
        >>> "tanh" in draw_dot(y).source
        True
    """
    check_root(root, "draw_dot")
    check_format(format, "draw_dot")
    check_rankdir(rankdir, "draw_dot", auto=True)
    check_timeout(timeout, "draw_dot")
    order = reading_order(root)
    check_size(len(order), max_nodes, "draw_dot")
    check_count(max_segments, "max_segments", "draw_dot")
    check_segments(order, max_segments, "draw_dot: ", f"max_segments={max_segments}",
                   ". Use to_html() (its own quick layout) or to_dot(), or pass a larger "
                   "max_segments")
    names = node_names(order, params, "draw_dot")
    return Drawing(_dot_text(order, rankdir, names), format=format, renderer=renderer,
                   timeout=timeout)


def layout_segments(order: list[Any]) -> tuple[int, Any]:
    """About how many edge segments Graphviz's ``dot`` lays out, and the node making most.

    ``dot`` puts every node on a rank and cuts an edge that skips ranks into one segment
    (a dummy node) per rank skipped. The dummy nodes, not the Values, make a layout slow:
    ``sum(x * i for i in range(300))`` has 301 Values but about 90,000 segments, since
    ``x`` is used all along the sum. Ranks are estimated as ``dot`` would choose them on
    these graphs: each node as late as it can be, just before its first use.

    Returns:
        The number of segments (0 when no edge skips a rank) and the node whose uses
        account for most of them (``order[-1]``, the root, when there are none).
    """
    rank = {id(order[-1]): 0}
    for node in reversed(order):  # users before their inputs
        user = rank[id(node)]
        for child in node._prev:  # the op node sits at user - 1, its inputs before it
            rank[id(child)] = min(rank.get(id(child), user - 2), user - 2)
    by_node: dict[int, int] = {}
    for node in order:
        for child in node._prev:
            by_node[id(child)] = by_node.get(id(child), 0) + rank[id(node)] - 2 - rank[id(child)]
    worst = max(order, key=lambda n: by_node.get(id(n), 0))
    return sum(by_node.values()), worst if by_node.get(id(worst)) else order[-1]


def check_segments(order: list[Any], max_segments: int, where: str, limit: str,
                   advice: str) -> None:
    """Raise ValueError when laying out ``order`` takes more than ``max_segments`` edge
    segments (see ``layout_segments``), naming the Value that makes most of them.

    Args:
        where: The message's start (``"draw_dot: "``, or ``""``).
        limit: The limit as the caller's user sets it (``"max_segments=5000"``).
        advice: What to do instead: the message's end, punctuation included.
    """
    segments, culprit = layout_segments(order)
    if segments > max_segments:
        name = node_names(order)[id(culprit)]
        raise ValueError(f"{where}laying out this graph takes about {segments} edge segments, "
                         f"more than {limit} (Graphviz would take minutes): {name} is used "
                         f"by {_uses(order, culprit)} ops far apart{advice}")


def _uses(order: list[Any], node: Any) -> int:
    return sum(child is node for user in order for child in user._prev)


def check_count(value: Any, name: str, where: str) -> int:
    """``value`` if it is a positive int (not a bool); TypeError or ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: {name} must be a positive int, got "
                        f"{type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{where}: {name} must be a positive int, got {value!r}")
    return value


def check_size(count: int, max_nodes: Any, where: str) -> None:
    """Raise ValueError when a graph of ``count`` Values exceeds ``max_nodes``.

    Raises:
        TypeError: When ``max_nodes`` is not an int (a bool is not a count).
        ValueError: When ``max_nodes`` is below 1, or ``count`` above it.
    """
    check_count(max_nodes, "max_nodes", where)
    if count > max_nodes:
        raise ValueError(
            f"{where}: the graph has {count} Values, more than max_nodes={max_nodes}; "
            "draw a smaller expression or pass a larger max_nodes"
        )
