"""An interactive page that steps through backward one ``_backward`` call at a time.

``to_html(root, path)`` writes one self-contained HTML file: the graph drawn as inline SVG
(laid out here, so no Graphviz is needed), the steps of ``backward_steps`` as JSON, and a
little JavaScript with *step*, *reset* and *play* buttons. Each step highlights the node
whose ``_backward`` runs, fills in its inputs' gradients and prints the formula it used.
The page fetches nothing, so it works offline and can be mailed or checked in.

For tests and tools, every Value is an SVG group ``<g class="value" id="n3"
data-name="x1" data-data="2.0" data-grad="-1.5">`` whose ``data-grad`` always holds the
gradient shown, and ``#status`` carries ``data-step`` / ``data-steps``.

A Tensor graph gets the same page with shapes instead of numbers: each node shows
``data (4, 3) float32`` and its gradient's shape and norm (``grad (4, 3), norm 1.2345``),
which is also its ``data-grad``; ``data-data`` holds the data's shape and dtype.
"""

from __future__ import annotations

import html
import json
import os
from typing import Any

from ..files import write_atomic
from .dot import DEFAULT_MAX_NODES, check_size, record_fields
from .names import (
    check_root,
    format_number,
    grad_summary,
    is_tensor,
    node_names,
    norm,
    reading_order,
)
from .page_assets import PAGE, SCRIPT, STYLE
from .steps import backward_steps, seed_of

_ROW = 58  # vertical distance between nodes of one column
_BOX_H = 32
_OP_R = 16  # the smallest op ellipse's half-width and its half-height
_FIELD_W = 92  # the least width of the data and grad fields
_CHAR_W = 7.3  # a 12px monospace character (DejaVu Sans Mono: 7.22, Liberation Mono: 7.2)
_PAD = 14  # space left around a field's text
_GAP = 46  # horizontal gap between columns
_MARGIN = 20


def to_html(
    root: Any,
    path: str | os.PathLike,
    max_nodes: int = DEFAULT_MAX_NODES,
    title: str | None = None,
    grad: Any = None,
) -> str:
    """Write a self-contained page that steps through ``root``'s backward; return the path.

    The gradients are computed with ``backward_steps(root, accumulate=False)``: every
    ``.grad`` is left as it was.

    Args:
        root: The Value or Tensor whose backward to show.
        path: The HTML file to write (atomically).
        max_nodes: The largest number of nodes to lay out (ValueError above it).
        title: The page title (default: "backward of <root name>").
        grad: For a Tensor root with more than one element: d(loss)/d(root).

    Returns:
        ``path``.

    Example:
        >>> import os, tempfile
        >>> from chaingrad import Value
        >>> x = Value(2.0, label="x")
        >>> page = to_html((x * x).tanh(), os.path.join(tempfile.mkdtemp(), "tanh.html"))
        >>> open(page).read().count('class="value"')
        3
    """
    check_root(root, "to_html")
    path = os.fspath(path)
    order = reading_order(root)
    check_size(len(order), max_nodes, "to_html")
    names = node_names(order)
    ids = {id(node): f"n{i}" for i, node in enumerate(order)}
    tensor = is_tensor(root)
    seed = seed_of(root, grad, "to_html")
    start = {}  # for a Tensor: what each node's grad field shows before the first step
    if tensor:
        start = {ids[id(node)]: "grad None" if node.requires_grad else "requires_grad=False"
                 for node in order}
        start[ids[id(root)]] = "grad " + grad_summary(seed)
    steps = backward_steps(root, accumulate=False, grad=seed if tensor else None)
    shown = (lambda g: "grad " + grad_summary(g)) if tensor else float
    upstream = grad_summary if tensor else format_number
    payload = {
        "root": ids[id(root)],
        "ids": [ids[id(node)] for node in order],
        "steps": [
            {
                "node": ids[id(step.node)],
                "title": f"step {step.index}: {step.name}._backward() ({step.op}), "
                f"out.grad = {upstream(step.upstream)}",
                "updates": [
                    {"id": ids[id(u.input)], "after": shown(u.after), "text": u.text(step.op),
                     "change": _change(u, tensor)}
                    for u in step.updates
                ],
            }
            for step in steps
        ],
    }
    if tensor:
        payload |= {"start": start, "seed": grad_summary(seed)}
    heading = title or f"backward of {names[id(root)]}"
    page = PAGE.format(
        title=html.escape(heading),
        svg=_svg(order, ids, names, root, start, payload["steps"]),
        nsteps=len(steps),
        data=json.dumps(payload).replace("<", "\\u003c"),  # no "</script>" inside the JSON
        script=SCRIPT,
        style=STYLE,
    )
    write_atomic(path, page.encode("utf-8"))
    return path


def _change(update: Any, tensor: bool) -> str:
    """``x.grad: 0.0000 -> 1.0000`` (for a Tensor, the norms), so accumulation shows."""
    if not tensor:
        before, after = format_number(update.before), format_number(update.after)
        return f"{update.name}.grad: {before} -> {after}"
    before = "None" if update.before is None else format_number(norm(update.before))
    return f"{update.name}.grad norm: {before} -> {format_number(norm(update.after))}"


def _layout(order: list[Any]) -> tuple[dict[int, int], dict[int, int]]:
    """Columns and rows: ``{id(value): column}`` and ``{key: row}`` for values and ops.

    A Value with an op sits two columns right of its furthest input (its op node in
    between); a leaf sits just left of the first op that uses it. Rows come from a few
    barycenter sweeps (each node moves towards the mean row of its neighbours), which
    keeps edges short and crossings few.
    """
    col: dict[int, int] = {}
    for node in order:
        col[id(node)] = 2 + max((col[id(c)] for c in node._prev), default=-2)
    users: dict[int, list[Any]] = {}
    for node in order:
        for child in node._prev:
            users.setdefault(id(child), []).append(node)
    for node in order:
        if not node._prev and id(node) in users:
            col[id(node)] = min(col[id(u)] for u in users[id(node)]) - 2
    # keys: id(value) for a value, -id(value) for its op node (one column to the left)
    columns: dict[int, list[int]] = {}
    neighbours: dict[int, list[int]] = {}
    for node in order:
        columns.setdefault(col[id(node)], []).append(id(node))
        if node._prev:
            columns.setdefault(col[id(node)] - 1, []).append(-id(node))
            neighbours.setdefault(id(node), []).append(-id(node))
            neighbours.setdefault(-id(node), []).append(id(node))
            for child in node._prev:
                neighbours[-id(node)].append(id(child))
                neighbours.setdefault(id(child), []).append(-id(node))
    row = {key: i for keys in columns.values() for i, key in enumerate(keys)}
    ranks = sorted(columns)
    for sweep in range(4):
        for rank in ranks if sweep % 2 == 0 else reversed(ranks):
            keys = columns[rank]
            mean = {
                k: sum(row[n] for n in neighbours.get(k, [k])) / len(neighbours.get(k, [k]))
                for k in keys
            }
            keys.sort(key=lambda k: (mean[k], row[k]))
            row.update({k: i for i, k in enumerate(keys)})
    return col, row


def _svg(order: list[Any], ids: dict[int, str], names: dict[int, str], root: Any,
         start: dict[str, str], steps: list[dict]) -> str:
    """The graph as SVG; ``start`` holds a Tensor graph's first grad texts (empty for Values)."""
    col, row = _layout(order)
    name_w = max(48, max(_CHAR_W * len(n) for n in names.values()) + 16)
    fields = {}  # id(node) -> (data text, data-data, grad text, data-grad)
    for node in order:
        if start:
            data, grad = record_fields(node)[0], start[ids[id(node)]]
            fields[id(node)] = (data, data[5:], grad, grad)
        else:
            grad = 1.0 if node is root else 0.0
            fields[id(node)] = (f"data {format_number(node.data)}", repr(node.data),
                                f"grad {format_number(grad)}", repr(grad))
    data_w, grad_w = _field_widths(fields, steps)
    box_w = name_w + data_w + grad_w
    op_rx = max([_OP_R] + [3.7 * len(n._op) + 8 for n in order if n._prev])
    first = min(col.values())
    counts: dict[int, int] = {}
    for key, _ in row.items():
        c = col[key] if key > 0 else col[-key] - 1
        counts[c] = counts.get(c, 0) + 1
    tallest = max(counts.values())

    def x_of(c: int) -> float:  # left edge of a column: value columns are box_w wide
        c -= first
        values, ops = (c + 1) // 2, c // 2
        return _MARGIN + values * box_w + ops * 2 * op_rx + c * _GAP

    def y_of(key: int, c: int) -> float:  # centre line of a node
        return _MARGIN + (row[key] + (tallest - counts[c]) / 2) * _ROW + _BOX_H / 2

    centre: dict[int, tuple[float, float]] = {}
    for node in order:
        c = col[id(node)]
        centre[id(node)] = (x_of(c), y_of(id(node), c))
        if node._prev:
            centre[-id(node)] = (x_of(c - 1) + op_rx, y_of(-id(node), c - 1))
    parts = []
    for node in order:  # edges first, so that nodes are drawn over them
        if not node._prev:
            continue
        ox, oy = centre[-id(node)]
        vx, vy = centre[id(node)]
        parts.append(_edge(ox + op_rx, oy, vx, vy, ids[id(node)] + "_op", ids[id(node)]))
        seen: dict[int, int] = {}
        for child in node._prev:
            repeat = seen[id(child)] = seen.get(id(child), -1) + 1
            cx, cy = centre[id(child)]
            spread = 7 * (repeat - (node._prev.count(child) - 1) / 2)
            parts.append(_edge(cx + box_w, cy, ox - op_rx, oy + spread, ids[id(child)],
                               ids[id(node)] + "_op"))
    for node in order:
        nid = ids[id(node)]
        x, y = centre[id(node)]
        if node._prev:
            ox, oy = centre[-id(node)]
            parts.append(
                f'<g class="op" id="{nid}_op"><ellipse cx="{ox:.1f}" cy="{oy:.1f}" '
                f'rx="{op_rx:.1f}" ry="{_OP_R}"/>'
                f'<text x="{ox:.1f}" y="{oy + 4:.1f}">{html.escape(node._op)}</text></g>'
            )
        data, data_attr, grad, grad_attr = fields[id(node)]
        top = y - _BOX_H / 2
        esc = html.escape
        parts.append(
            f'<g class="value" id="{nid}" data-name="{esc(names[id(node)])}" '
            f'data-data="{esc(data_attr)}" data-grad="{esc(grad_attr)}">'
            f'<rect x="{x:.1f}" y="{top:.1f}" width="{box_w:.1f}" height="{_BOX_H}" rx="3"/>'
            f'<line x1="{x + name_w:.1f}" y1="{top:.1f}" x2="{x + name_w:.1f}" '
            f'y2="{top + _BOX_H:.1f}"/>'
            f'<line x1="{x + name_w + data_w:.1f}" y1="{top:.1f}" '
            f'x2="{x + name_w + data_w:.1f}" y2="{top + _BOX_H:.1f}"/>'
            f'<text class="name" x="{x + name_w / 2:.1f}" y="{y + 4:.1f}">'
            f"{esc(names[id(node)])}</text>"
            f'<text class="data" x="{x + name_w + data_w / 2:.1f}" y="{y + 4:.1f}">'
            f"{esc(data)}</text>"
            f'<text class="grad" x="{x + name_w + data_w + grad_w / 2:.1f}" y="{y + 4:.1f}">'
            f"{esc(grad)}</text></g>"
        )
    width = max(x for x, _ in centre.values()) + box_w + _MARGIN
    height = 2 * _MARGIN + tallest * _ROW
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="graph" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'
        + "\n".join(parts)
        + "</svg>"
    )


def _field_widths(fields: dict[int, tuple[str, str, str, str]],
                 steps: list[dict]) -> tuple[float, float]:
    """The widths of the data and grad fields: each fits the longest text it will show.

    The grad field must fit every text the page can put there over all the steps: the
    starting texts in ``fields`` and each update's ``after`` (a number for a Value, shown
    as ``grad <format_number>``; already a text for a Tensor).
    """
    grads = [f[2] for f in fields.values()]
    for step in steps:
        for update in step["updates"]:
            after = update["after"]
            grads.append(after if isinstance(after, str) else "grad " + format_number(after))
    data = max(len(f[0]) for f in fields.values())
    return (max(_FIELD_W, _CHAR_W * data + _PAD),
            max(_FIELD_W, _CHAR_W * max(map(len, grads)) + _PAD))


def _edge(x1: float, y1: float, x2: float, y2: float, source: str, target: str) -> str:
    bend = max(20.0, (x2 - x1) / 2)
    return (
        f'<path class="edge" data-from="{source}" data-to="{target}" '
        f'd="M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x2 - bend:.1f},{y2:.1f} '
        f'{x2:.1f},{y2:.1f}"/>'
    )
