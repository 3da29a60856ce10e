"""An interactive page that steps through backward one ``_backward`` call at a time.

``to_html(root, path)`` writes one self-contained HTML file that fetches nothing (it works
offline and can be mailed or checked in): the graph drawn as inline SVG, every step of
``backward_steps`` (and of the naive recursive walk, and of the forward pass) as JSON, and
the page's own script and style from ``page_assets/``. The script only shows what this
module computed: each step's formula is ``Update.text`` as ``explain`` prints it.

For tests and tools, every value is an SVG group ``<g class="value" id="n3"
data-name="x1" data-data="2.0" data-grad="-1.5">`` whose ``data-grad`` always holds the
gradient shown, and ``#status`` carries ``data-step`` / ``data-steps``.

A Tensor graph gets the same page with shapes instead of numbers: each node shows
``data (4, 3) float32`` and its gradient's shape and norm (``grad (4, 3), norm 1.2345``),
which is also its ``data-grad``; ``data-data`` holds the data's shape and dtype. Its naive
order is the same replay with arrays; where it goes wrong, the page gives the entries of
both gradients (of a small one) or their norms.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..files import write_atomic
from .dot import (
    DEFAULT_MAX_NODES,
    DEFAULT_MAX_SEGMENTS,
    check_size,
    layout_segments,
    record_fields,
    reuse_marks,
)
from .layout import (
    Graph,
    Layout,
    builtin_layout,
    check_rankdir,
    drawing_size,
    graphviz_layout,
    screen_rankdir,
)
from .naive import naive_steps, same_grad
from .names import (
    check_root,
    format_number,
    grad_norm,
    grad_summary,
    holds_array,
    node_names,
    reading_order,
)
from .render import find_renderer
from .steps import Step, backward_steps, seed_of

LAYOUTS = ("auto", "graphviz", "builtin")
FONT_PX = 14  # every text of the drawing; the page never zooms it below 10 px, "fit" neither
CHAR_W = 8.45  # a 14px monospace character's advance (DejaVu Sans Mono 8.43, Courier 8.4)
BOX_PAD = 12  # room around a field's text
ROW_H = 24  # a record's rows: data above grad
OP_H = 30
NAIVE_CALLS = 1000  # the naive walk shown on the page stops after this many calls,
NAIVE_CALLS_PER_STEP = 4  # and on a Tensor graph after this many per topological step (each
# call's arrays are kept for the page: a long walk over large weights would fill the memory)
AUTO_TIMEOUT = 20.0  # seconds Graphviz may take for layout='auto' (1000 nodes: about 1 s)
# the frame the page shows the graph in, in a 1280x800 window (CSS px, as Chromium lays it
# out): what rankdir='auto' fits the drawing to (at 800x600: 774x400, the same shape)
FRAME = (1254.0, 605.0)


def to_html(
    root: Any,
    path: str | os.PathLike[str],
    max_nodes: int = DEFAULT_MAX_NODES,
    title: str | None = None,
    grad: Any = None,
    params: Any = None,
    layout: str = "auto",
    rankdir: str = "auto",
) -> str:
    """Write a self-contained page that steps through ``root``'s backward; return the path.

    The page steps forward and back (buttons, arrow keys, space to play, Home/End), plays
    at a chosen speed, goes to any step, zooms (text never below 10 px; "fit" shows the
    whole graph as large as the window holds it, a graph too big for 10 px text at 10 px,
    scrolling), can run the forward pass first, and can
    replay the naive recursive backward instead of the topological one (on Values or
    Tensors), so that its wrong gradients show on the graph. The gradients are computed
    with ``backward_steps(root, accumulate=False)``: every ``.grad`` is left as it was.

    Args:
        root: The Value or Tensor whose backward to show.
        path: The HTML file to write (atomically).
        max_nodes: The largest number of nodes to lay out (ValueError above it).
        title: The page title (default: "backward of <root name>").
        grad: For a Tensor root with more than one element: d(loss)/d(root).
        params: The parameters' names: a model (``params=model``: its ``state_dict()``
            names, ``0.weight[1, 0]``), a dict (``params={"W1": W1}``) or pairs, or a
            list of parameters (``params=[W1, b1]``: their labels; see
            ``chaingrad.show.names``).
        layout: 'graphviz' (Graphviz's dot through a system ``dot`` or graphviz-pure),
            'builtin' (chaingrad's own, no dependency), or 'auto' (the default):
            Graphviz when a renderer is installed and the graph is quick to lay out
            (see ``chaingrad.show.dot.layout_segments``), else (or if Graphviz fails)
            the built-in one. The page's ``<svg data-layout=...>`` says which.
        rankdir: Which way the arrows go: 'LR' (left to right, as micrograd draws),
            'TB' (top to bottom), 'RL', 'BT', or 'auto' (the default): the one of LR and
            TB in which the whole graph, fitted to the page's frame (about 2:1), is drawn
            larger, TB only if 1.25 times as large (``chaingrad.show.layout.screen_rankdir``):
            a long chain top to bottom. The page's ``<svg data-rankdir=...>`` says which.

    Returns:
        ``path``.

    Raises:
        TypeError: When ``root`` is not a Value or Tensor, or ``params`` is not a model.
        ValueError: When the graph has more than ``max_nodes`` nodes, or ``layout`` or
            ``rankdir`` is unknown.
        RendererNotFoundError: For ``layout='graphviz'`` without a renderer.

    Example:
        >>> import os, tempfile
        >>> from chaingrad import Value
        >>> x = Value(2.0, label="x")
        >>> page = to_html((x * x).tanh(), os.path.join(tempfile.mkdtemp(), "tanh.html"))
        >>> open(page).read().count('class="value"')
        3
    """
    check_root(root, "to_html")
    if layout not in LAYOUTS:
        raise ValueError(f"to_html: layout must be one of {', '.join(LAYOUTS)}, got "
                         f"{layout!r}")
    check_rankdir(rankdir, "to_html", auto=True)
    path = os.fspath(path)
    order = reading_order(root)
    check_size(len(order), max_nodes, "to_html")
    ids, names, payload = _prepare(root, order, grad, params, "to_html")
    graph, fields = _shapes(order, ids, names, payload)
    if rankdir == "auto":
        rankdir = screen_rankdir(drawing_size(graph, "LR"), drawing_size(graph, "TB"), FRAME)
    drawing = _svg(order, ids, names, payload, graph, fields,
                   _choose_layout(layout, order)(graph, rankdir))
    heading = title or f"backward of {names[id(root)]}"
    page = _asset("page.html").format(
        title=html.escape(heading),
        svg=drawing,
        nsteps=len(payload["steps"]),
        data=json.dumps(payload).replace("<", "\\u003c"),  # no "</script>" inside the JSON
        script=_asset("page.js"),
        style=_asset("page.css"),
    )
    write_atomic(path, page.encode("utf-8"))
    return path


def page_graph(root: Any, grad: Any = None, params: Any = None) -> Graph:
    """The shapes and edges that ``to_html`` lays out for ``root``'s graph, each value's
    box as wide as the texts it will show (for tests, and to try a layout on).

    Example:
        >>> from chaingrad import Value
        >>> graph = page_graph(Value(2.0, label="x") * 3)
        >>> graph.keys, graph.edges
        (['n0', 'n1', 'n2_op', 'n2'], [('n0', 'n2_op'), ('n1', 'n2_op'), ('n2_op', 'n2')])
    """
    check_root(root, "page_graph")
    order = reading_order(root)
    ids, names, payload = _prepare(root, order, grad, params, "page_graph")
    return _shapes(order, ids, names, payload)[0]


def _prepare(root: Any, order: list, grad: Any, params: Any,
             where: str) -> tuple[dict[int, str], dict[int, str], dict]:
    """Each node's page id (``n3``) and name, and what the script shows (see ``_payload``)."""
    names = node_names(order, params, where)
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    tensor = holds_array(root)
    seed = seed_of(root, grad, where)
    steps = backward_steps(root, accumulate=False, grad=seed if tensor else None,
                           params=params)
    return ids, names, _payload(root, order, ids, names, seed, steps, tensor)


def _asset(name: str) -> str:
    """One of the page's fixed parts: ``page_assets/page.html``, ``.css`` or ``.js``."""
    return resources.files(__package__).joinpath("page_assets").joinpath(name).read_text(
        encoding="utf-8")


# ---- what the script shows: texts made here, from backward_steps and the naive walk ----


def _payload(root: Any, order: list, ids: dict[int, str], names: dict[int, str], seed: Any,
             steps: list[Step], tensor: bool) -> dict:
    """The JSON the script reads: each node's texts, the seed, the forward pass, the steps
    of the topological and of the naive order, every text made here."""
    nodes = {}
    for node in order:
        data_text, data_attr = _data_texts(node, tensor)
        if tensor:
            start = "grad None" if node.requires_grad else "requires_grad=False"
            start = [start, start]
        else:
            start = _grad_texts(0.0, False)
        nodes[ids[id(node)]] = {"name": names[id(node)], "data": data_text,
                                "dataAttr": data_attr, "start": start}
    payload = {
        "root": ids[id(root)],
        "ids": [ids[id(node)] for node in order],
        "nodes": nodes,
        "seed": _grad_texts(seed, tensor),
        "seedText": f"{names[id(root)]}.grad = "
                    + (grad_summary(seed) if tensor else format_number(seed)),
        "forward": [_forward_step(node, ids, names, tensor) for node in order if node._prev],
        "steps": [_step_texts(step, ids, tensor) for step in steps],
        "naive": _naive(root, order, ids, names, seed, steps, tensor),
        "fontPx": FONT_PX,
    }
    return payload


def _data_texts(node: Any, tensor: bool) -> tuple[str, str]:
    """The data field's text and the ``data-data`` attribute."""
    if tensor:
        text = record_fields(node)[0]
        return text, text[5:]
    return f"data {format_number(node._value)}", repr(node._value)


def _grad_texts(g: Any, tensor: bool) -> list[str]:
    """``[data-grad attribute, grad field text]`` for a gradient."""
    if tensor:
        text = "grad " + grad_summary(g)
        return [text, text]
    return [repr(float(g)), "grad " + format_number(g)]


def _forward_step(node: Any, ids: dict[int, str], names: dict[int, str],
                  tensor: bool) -> dict:
    """What the forward pass computes at ``node``: ``mul1 = x1 * w1 = -6.0000``."""
    inputs = [names[id(x)] for x in node._prev]
    op = node._op
    if op in ("+", "*") and len(inputs) == 2:
        expression = f"{inputs[0]} {op} {inputs[1]}"
    elif op.startswith("**") and len(inputs) == 1:
        expression = f"{inputs[0]}{op}"
    else:
        expression = f"{op}({', '.join(inputs)})"
    value = record_fields(node)[0][5:] if tensor else format_number(node._value)
    return {"node": ids[id(node)], "inputs": [ids[id(x)] for x in node._prev],
            "text": f"{names[id(node)]} = {expression} = {value}"}


def _step_texts(step: Step, ids: dict[int, str], tensor: bool) -> dict:
    """A step as the page shows it: its title, and each update's formula (``Update.text``,
    as ``explain`` prints it), before -> after, and the grad it leaves."""
    upstream = grad_summary(step.upstream) if tensor else format_number(step.upstream)
    return {
        "node": ids[id(step.node)],
        "title": f"{step.name}._backward()  ({step.op})  out.grad = {upstream}",
        "updates": [
            {"id": ids[id(u.input)], "grad": _grad_texts(u.after, tensor),
             "text": u.text(step.op), "change": _change(u, tensor)}
            for u in step.updates
        ],
    }


def _change(update: Any, tensor: bool) -> str:
    """``x.grad: 0.0000 -> 1.0000`` (for a Tensor, the norms), so accumulation shows."""
    if not tensor:
        before, after = format_number(update.before), format_number(update.after)
        return f"{update.name}.grad: {before} -> {after}"
    before = "None" if update.before is None else format_number(grad_norm(update.before))
    return f"{update.name}.grad norm: {before} -> {format_number(grad_norm(update.after))}"


def _naive(root: Any, order: list, ids: dict[int, str], names: dict[int, str], seed: Any,
           steps: list[Step], tensor: bool) -> dict:
    """The naive recursive walk's steps, and where its gradients differ from the correct
    ones (shown at its last step)."""
    most = min(NAIVE_CALLS, NAIVE_CALLS_PER_STEP * len(steps)) if tensor else NAIVE_CALLS
    naive, run = naive_steps(root, names, max_calls=most, grad=seed if tensor else None)
    correct = {id(node): node._initial_grad for node in order}
    correct[id(root)] = seed
    for step in steps:
        for update in step.updates:
            correct[id(update.input)] = update.after
    differ = []
    for node in order:
        right, wrong = correct[id(node)], run.grads[id(node)]
        if not same_grad(right, wrong):
            badge = grad_summary(right) if tensor else format_number(right)
            differ.append({"id": ids[id(node)], "badge": f"correct: {badge}",
                           "text": f"{names[id(node)]}.grad: naive {_entries(wrong)}, "
                                   f"correct {_entries(right)}"})
    runs: dict[int, int] = {}
    for node in run.calls:
        runs[id(node)] = runs.get(id(node), 0) + 1
    twice = [f"{names[id(n)]} ({runs[id(n)]} times)" for n in order if runs.get(id(n), 0) > 1]
    summary = (f"The naive walk made {len(run.calls)} _backward calls"
               + (" and was stopped there" if run.stopped else "")
               + f"; the topological order makes {len(steps)}. ")
    if differ:
        summary += ("Its _backward ran more than once at " + ", ".join(twice) + ", each time "
                    "passing on all the gradient gathered so far, so these gradients are "
                    "wrong:")
    else:
        summary += "On this graph they agree: every _backward ran once, after all of its " \
                   "node's gradient had arrived."
    return {"steps": [_step_texts(step, ids, tensor) for step in naive], "differ": differ,
            "summary": summary}


def _entries(g: Any, most: int = 6) -> str:
    """A gradient as a sentence can give it: a number; a Tensor's entries, when it has
    ``most`` or fewer (``[8.0000, 8.0000]``); else its shape and norm."""
    if g is None or not hasattr(g, "shape"):
        return "None" if g is None else format_number(g)
    if g.size > most:
        return grad_summary(g)
    if g.ndim == 0:
        return format_number(g)

    def nested(x: Any) -> str:
        if isinstance(x, list):
            return "[" + ", ".join(map(nested, x)) + "]"
        return format_number(x)

    return nested(g.tolist())


# ---- the drawing ----


def _choose_layout(layout: str, order: list) -> Any:
    """The layout function to use, called as ``f(graph, rankdir)``: Graphviz's, the
    built-in one, or for 'auto' Graphviz's when a renderer is found and the graph is quick
    to lay out, falling back on the built-in one if Graphviz fails."""
    if layout == "builtin":
        return builtin_layout
    if layout == "graphviz":
        return lambda graph, rankdir: graphviz_layout(graph, rankdir=rankdir)
    if layout_segments(order)[0] > DEFAULT_MAX_SEGMENTS or find_renderer() is None:
        return builtin_layout

    def graphviz_or_builtin(graph: Graph, rankdir: str) -> Layout:
        try:
            return graphviz_layout(graph, timeout=AUTO_TIMEOUT, rankdir=rankdir)
        except (RuntimeError, OSError):  # stopped, or failed: the page needs no Graphviz
            return builtin_layout(graph, rankdir)

    return graphviz_or_builtin


def _field_width(texts: list[str]) -> float:
    return CHAR_W * max(map(len, texts)) + BOX_PAD


def _shapes(order: list, ids: dict[int, str], names: dict[int, str],
            payload: dict) -> tuple[Graph, dict[str, list[Field]]]:
    """What the layout places: each value's box (sized to every text it will show, over
    all the steps of both orders) and op's ellipse, and the edges; and each box's fields."""
    grads: dict[str, list[str]] = {key: [node["start"][1]] for key, node in
                                    payload["nodes"].items()}
    grads[payload["root"]].append(payload["seed"][1])
    naive = payload["naive"]["steps"]
    for step in payload["steps"] + naive:
        for update in step["updates"]:
            grads[update["id"]].append(update["grad"][1])
    fields: dict[str, list[Field]] = {}
    sizes: dict[str, tuple[float, float]] = {}
    keys, ops, edges = [], set(), []
    for node in order:
        key = ids[id(node)]
        if node._prev:
            op_key = key + "_op"
            keys.append(op_key)
            ops.add(op_key)
            sizes[op_key] = (max(2 * OP_H * 0.7, CHAR_W * len(node._op) + 2 * BOX_PAD), OP_H)
            edges += [(ids[id(child)], op_key) for child in node._prev]
            edges.append((op_key, key))
        shown = payload["nodes"][key]
        fields[key] = _fields(names[id(node)], [shown["data"], "data ?"], grads[key])
        sizes[key] = (max(f.x + f.width for f in fields[key]),
                      max(f.y + f.height for f in fields[key]))
        keys.append(key)
    return Graph(keys, sizes, frozenset(ops), edges, _reuse_labels(order, ids, edges)), fields


def _svg(order: list, ids: dict[int, str], names: dict[int, str], payload: dict,
         graph: Graph, fields: dict[str, list[Field]], layout: Layout) -> str:
    """The graph as SVG: the shapes where ``layout`` put them, arrows, ``×2`` labels."""
    edges, sizes = graph.edges, graph.sizes
    parts = [_DEFS]
    for (tail, head), curve in zip(edges, layout.curves):
        d = f"M{curve[0][0]:.1f},{curve[0][1]:.1f} " + " ".join(
            f"C{a[0]:.1f},{a[1]:.1f} {b[0]:.1f},{b[1]:.1f} {c[0]:.1f},{c[1]:.1f}"
            for a, b, c in zip(curve[1::3], curve[2::3], curve[3::3]))
        parts.append(f'<path class="edge" data-from="{tail}" data-to="{head}" d="{d}"/>')
    for i, (x, y) in layout.labels.items():
        parts.append(f'<text class="reuse" x="{x:.1f}" y="{y + 5:.1f}" '
                     f'data-edge="{edges[i][0]}-{edges[i][1]}">{graph.labels[i]}</text>')
    for node in order:
        key = ids[id(node)]
        if node._prev:
            cx, cy = layout.centres[key + "_op"]
            rx, ry = sizes[key + "_op"][0] / 2, OP_H / 2
            parts.append(
                f'<g class="op" id="{key}_op" aria-hidden="true"><ellipse cx="{cx:.1f}" '
                f'cy="{cy:.1f}" rx="{rx:.1f}" ry="{ry:.1f}"/><text x="{cx:.1f}" '
                f'y="{cy + 5:.1f}">{html.escape(node._op)}</text></g>')
        grad = payload["seed"] if key == payload["root"] else payload["nodes"][key]["start"]
        parts.append(_box(key, names[id(node)], payload["nodes"][key], grad, fields[key],
                          layout.centres[key]))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="graph" width="{layout.width:.0f}" '
        f'height="{layout.height:.0f}" viewBox="0 0 {layout.width:.0f} {layout.height:.0f}" '
        f'data-layout="{layout.engine}" data-rankdir="{layout.rankdir}" role="group" '
        f'aria-label="the graph: '
        f'{len(order)} values">' + "\n".join(parts) + "</svg>"
    )


_DEFS = ('<defs><marker id="arrow" viewBox="0 0 10 7" refX="0" refY="3.5" markerWidth="10" '
         'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,3.5 '
         'L0,7 z"/></marker><marker id="arrow-active" viewBox="0 0 10 7" refX="0" '
         'refY="3.5" markerWidth="10" markerHeight="7" markerUnits="userSpaceOnUse" '
         'orient="auto"><path d="M0,0 L10,3.5 L0,7 z"/></marker></defs>')


@dataclass(frozen=True)
class Field:
    """One field of a value's record (``name``, ``data`` or ``grad``), from its top left."""

    name: str
    x: float
    y: float
    width: float
    height: float


def _fields(name: str, data: list[str], grads: list[str]) -> list[Field]:
    """A record's fields, each as wide as the longest text it will show: the name, and
    beside it the data above the grad (half as wide as micrograd's ``name | data |
    grad`` in a row, so that more of the graph fits on a screen)."""
    name_w = _field_width([name])
    rest = max(_field_width(data), _field_width(grads))
    return [Field("name", 0, 0, name_w, 2 * ROW_H), Field("data", name_w, 0, rest, ROW_H),
            Field("grad", name_w, ROW_H, rest, ROW_H)]


def _box(key: str, name: str, shown: dict, grad: list[str], fields: list[Field],
         centre: tuple[float, float]) -> str:
    """A value's record (its fields framed and split by lines), and its (empty) badge;
    ``grad``: its ``data-grad`` and grad text before the first step."""
    esc = html.escape
    width = max(f.x + f.width for f in fields)
    height = max(f.y + f.height for f in fields)
    x, top = centre[0] - width / 2, centre[1] - height / 2
    texts = {"name": name, "data": shown["data"], "grad": grad[1]}
    parts = [f'<rect x="{x:.1f}" y="{top:.1f}" width="{width:.1f}" height="{height:.1f}" '
             'rx="3"/>']
    for f in fields:
        left, upper = x + f.x, top + f.y
        if f.x > 0 and f.y == 0:  # the line on its left
            parts.append(f'<line x1="{left:.1f}" y1="{top:.1f}" x2="{left:.1f}" '
                         f'y2="{top + height:.1f}"/>')
        if f.y > 0:  # the line above it
            parts.append(f'<line x1="{left:.1f}" y1="{upper:.1f}" x2="{left + f.width:.1f}" '
                         f'y2="{upper:.1f}"/>')
        parts.append(f'<text class="{f.name}" x="{left + f.width / 2:.1f}" '
                     f'y="{upper + f.height / 2 + 5:.1f}">{esc(texts[f.name])}</text>')
    return (
        f'<g class="value" id="{key}" data-name="{esc(name)}" '
        f'data-data="{esc(shown["dataAttr"])}" data-grad="{esc(grad[0])}" '
        f'role="img" aria-label="{esc(name)}">' + "".join(parts)
        + f'<text class="badge" x="{x:.1f}" y="{top - 5:.1f}"></text></g>'
    )


def _reuse_labels(order: list, ids: dict[int, str],
                  edges: list[tuple[str, str]]) -> dict[int, str]:
    """``{edge index: "×2"}`` on the first edge of each input an op uses more than once
    (``a + a``), as ``to_dot`` marks it."""
    marks = [n for node in order if node._prev for n in [*reuse_marks(node), 0]]
    return {i: f"×{n}" for i, n in enumerate(marks) if n}
