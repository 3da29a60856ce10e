"""Where the page draws each node: Graphviz's layout, or a built-in one of the same kind.

The page (``chaingrad.show.page``) draws a graph as micrograd's picture does: a box per
value, an ellipse per op, an arrow from each input to its op and from the op to its value,
left to right (``rankdir="LR"``, micrograd's), top to bottom (``"TB"``), or mirrored
(``"RL"``, ``"BT"``). It measures every shape itself and asks a layout only where to put
them:

- ``graphviz_layout`` runs Graphviz's ``dot`` (a system ``dot``, else the ``graphviz-pure``
  program of ``pip install 'chaingrad[viz]'``, found as ``draw_dot`` finds it) on boxes of
  those sizes and reads the positions and the edges' curves from ``-Tplain``;
- ``builtin_layout`` draws the same kind of picture in Python, with no dependency: each node
  in the column just left of its first consumer, the order within a column chosen to avoid
  crossings, and each node moved as near its neighbours as the others in its column let it.

Both take a ``Graph`` and a direction and return a ``Layout``: centres, and each edge as a
cubic Bezier curve that stops ``ARROW`` short of its head, where the arrowhead goes.

``screen_rankdir`` chooses the direction for a drawing whose direction is not given: the
one in which the whole drawing, fitted to a 16:10 screen, is drawn larger (see its
docstring for the rule, and ``drawing_size`` for the estimate it uses).
"""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass, field, replace

from ..errors import RendererNotFoundError
from .render import find_renderer

RANKDIRS = ("LR", "TB", "RL", "BT")  # Graphviz's directions; LR and TB first: RL, BT mirror them
SCREEN = (16.0, 10.0)  # the shape of the screen a drawing of no given direction is fitted to
TB_GAIN = 1.25  # how much larger a drawing must be top to bottom to be drawn so (screen_rankdir)
ARROW = 10.0  # the arrowhead's length: an edge's curve stops this far short of its head
MARGIN_X = 8.0  # left and right of the drawing
MARGIN_Y = 24.0  # above and below it (room for a node's badge above it)
NODE_GAP = 24.0  # between two nodes of one rank (a column in LR: room for a badge)
RANK_GAP = 22.0  # between two ranks (in TB: room for the badge above a box)
LABEL_PX = 14  # an edge label's font size
LABEL_GAP = 2 * LABEL_PX  # what a gap between columns gains to hold an edge label
POINTS_PER_INCH = 72.0

Point = tuple[float, float]


@dataclass(frozen=True)
class Graph:
    """What a layout places: named shapes and the edges between them.

    ``keys`` lists the shapes inputs first (a topological order), ``sizes`` holds each
    shape's width and height, ``ops`` the keys drawn as ellipses (the others are boxes),
    and ``edges`` each ``(tail, head)`` in drawing order (an input used twice by one op
    gives two edges). The last key is the root, the graph's only sink. ``labels`` holds
    the few edges that carry a short label (``×2``), by their index in ``edges``.
    """

    keys: list[str]
    sizes: dict[str, tuple[float, float]]
    ops: frozenset[str]
    edges: list[tuple[str, str]]
    labels: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Layout:
    """Positions: each shape's centre and each edge's curve, in the drawing's pixels.

    ``curves[i]`` belongs to ``graph.edges[i]``: a start point followed by three points
    per cubic Bezier segment, ending ``ARROW`` short of the head's outline. ``labels``
    holds the centre of each edge label.
    """

    width: float
    height: float
    centres: dict[str, Point]
    curves: list[list[Point]]
    labels: dict[int, Point]
    engine: str  # "graphviz" or "builtin"
    rankdir: str = "LR"  # which way the edges go: "LR", "TB", "RL" or "BT"


# ---- Graphviz ----


def graphviz_layout(graph: Graph, renderer: str | None = None,
                    timeout: float | None = 60.0, rankdir: str = "LR") -> Layout:
    """Graphviz's ``dot`` layout of ``graph`` (shapes of fixed size), read from ``-Tplain``.

    Args:
        graph: The shapes and edges to place.
        renderer: A dot-compatible program (default: as ``draw_dot`` finds one).
        timeout: Seconds the layout may take (None: no limit).
        rankdir: Which way the edges go: 'LR', 'TB', 'RL' or 'BT'.

    Raises:
        RendererNotFoundError: When neither ``dot`` nor ``graphviz-pure`` is found.
        RuntimeError: When the renderer fails or takes longer than ``timeout`` seconds.
        ValueError: When ``rankdir`` is none of those four.
    """
    check_rankdir(rankdir, "graphviz_layout")
    program = renderer or find_renderer()
    if program is None:
        raise RendererNotFoundError("to_html: layout='graphviz' needs a Graphviz renderer "
                                    "(pip install 'chaingrad[viz]')")
    try:
        result = subprocess.run([program, "-Tplain"],
                                input=_layout_dot(graph, rankdir).encode(),
                                capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"to_html: {program} -Tplain did not finish within {timeout:g} s"
                           ) from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise RuntimeError(f"to_html: {program} -Tplain failed (exit {result.returncode}): "
                           f"{message.splitlines()[0] if message else 'no message'}")
    return _read_plain(graph, result.stdout.decode("utf-8"), rankdir)


def check_rankdir(rankdir: str, where: str, auto: bool = False) -> None:
    """A ValueError naming ``where`` unless ``rankdir`` is one of ``RANKDIRS`` (or, where
    ``auto`` is taken, "auto")."""
    if rankdir not in RANKDIRS and not (auto and rankdir == "auto"):
        choices = ", ".join(("auto",) * auto + RANKDIRS)
        raise ValueError(f"{where}: rankdir must be one of {choices}, got {rankdir!r}")


def _layout_dot(graph: Graph, rankdir: str = "LR") -> str:
    """DOT text asking for the shapes' own sizes (in inches) and nothing drawn inside."""
    lines = ["digraph layout {",
             f"  graph [rankdir={rankdir}, nodesep={NODE_GAP / POINTS_PER_INCH:.3f}, "
             f"ranksep={RANK_GAP / POINTS_PER_INCH:.3f}, margin=0];",
             '  node [shape=box, fixedsize=true, label=""];']
    for key in graph.keys:
        width, height = (size / POINTS_PER_INCH for size in graph.sizes[key])
        shape = ", shape=ellipse" if key in graph.ops else ""
        lines.append(f'  "{key}" [width={width:.4f}, height={height:.4f}{shape}];')
    for i, (tail, head) in enumerate(graph.edges):  # a label's room: as many letters
        label = f' [label="{"x" * len(graph.labels[i])}", fontsize={LABEL_PX}]' if (
            i in graph.labels) else ""
        lines.append(f'  "{tail}" -> "{head}"{label};')
    return "\n".join(lines + ["}"]) + "\n"


def _read_plain(graph: Graph, text: str, rankdir: str = "LR") -> Layout:
    """Centres and curves from Graphviz's plain output (inches, y upwards)."""
    height = 0.0
    centres: dict[str, Point] = {}
    found: dict[tuple[str, str], list[tuple[list[Point], Point | None]]] = {}
    rows = [line.split() for line in text.splitlines()]
    for row in rows:
        if row[0] == "graph":
            width, height = float(row[2]) * POINTS_PER_INCH, float(row[3]) * POINTS_PER_INCH

    def point(x: str, y: str) -> Point:
        return (MARGIN_X + float(x) * POINTS_PER_INCH,
                MARGIN_Y + height - float(y) * POINTS_PER_INCH)

    for row in rows:
        if row[0] == "node":
            centres[row[1].strip('"')] = point(row[2], row[3])
        elif row[0] == "edge":
            count = int(row[3])
            points = [point(row[4 + 2 * i], row[5 + 2 * i]) for i in range(count)]
            rest = row[4 + 2 * count:]  # [label x y] style color
            label = point(rest[1], rest[2]) if len(rest) == 5 else None
            found.setdefault((row[1].strip('"'), row[2].strip('"')), []).append(
                (points, label))
    curves, labels = [], {}
    for i, edge in enumerate(graph.edges):  # parallel edges: the labelled one to the label
        j = next(j for j, (_, label) in enumerate(found[edge])
                 if (label is not None) == (i in graph.labels))
        points, label = found[edge].pop(j)
        curves.append(points)
        if label is not None:
            labels[i] = label
    return Layout(width + 2 * MARGIN_X, height + 2 * MARGIN_Y, centres, curves, labels,
                  "graphviz", rankdir)


# ---- the direction that fits a screen ----


def drawing_size(graph: Graph, rankdir: str = "LR", rank_gap: float = RANK_GAP,
                 node_gap: float = NODE_GAP,
                 margins: tuple[float, float] = (MARGIN_X, MARGIN_Y)) -> tuple[float, float]:
    """About how wide and how high a layered drawing of ``graph`` is, before laying it out.

    The nodes are put in ranks as ``builtin_layout`` puts them (``_columns``, much as
    Graphviz's ``dot`` does); along the edges' direction the drawing is each rank's
    longest shape plus ``rank_gap`` between ranks, across it the widest rank's shapes
    side by side with ``node_gap`` between them; plus the ``margins`` (left and right,
    above and below). The gaps and margins are the page's unless given.

    Example:
        >>> graph = Graph(["x", "op", "y"], {"x": (60, 20), "op": (30, 20), "y": (60, 20)},
        ...               frozenset({"op"}), [("x", "op"), ("op", "y")])
        >>> drawing_size(graph, "LR"), drawing_size(graph, "TB")
        ((210.0, 68.0), (76.0, 152.0))
    """
    check_rankdir(rankdir, "drawing_size")
    along = 0 if rankdir in ("LR", "RL") else 1  # the index of a size along the edges
    ranks: dict[int, list[tuple[float, float]]] = {}
    for key, rank in _columns(graph).items():
        ranks.setdefault(rank, []).append(graph.sizes[key])
    length = sum(max(size[along] for size in sizes) for sizes in ranks.values())
    length += rank_gap * (len(ranks) - 1)
    breadth = max(sum(size[1 - along] for size in sizes) + node_gap * (len(sizes) - 1)
                  for sizes in ranks.values())
    if along == 0:
        return length + 2 * margins[0], breadth + 2 * margins[1]
    return breadth + 2 * margins[0], length + 2 * margins[1]


def screen_scale(size: tuple[float, float], screen: tuple[float, float] = SCREEN) -> float:
    """How large a drawing of this ``(width, height)`` is drawn when fitted whole to a
    screen of that shape (16:10 unless given; relative to one unit of the screen per unit
    of drawing)."""
    return min(screen[0] / size[0], screen[1] / size[1])


def screen_rankdir(left_to_right: tuple[float, float], top_to_bottom: tuple[float, float],
                   screen: tuple[float, float] = SCREEN) -> str:
    """The direction for a drawing whose direction is not given: "TB" if its top-to-bottom
    drawing, fitted whole to the screen (16:10 unless given), is drawn at least
    ``TB_GAIN`` (1.25) times as large as its left-to-right one (its text that much
    larger), else "LR" (micrograd's). So a long chain, a strip left to right, is drawn top
    to bottom, and a wide layer left to right; where the two are about as good, micrograd's
    picture wins.

    Args:
        left_to_right: The ``(width, height)`` of the drawing left to right.
        top_to_bottom: Those of the drawing top to bottom.
        screen: The shape of what the drawing is fitted to (its width and height).

    Example:
        >>> screen_rankdir((2500, 280), (560, 1100)), screen_rankdir((900, 800), (1400, 500))
        ('TB', 'LR')
    """
    if screen_scale(top_to_bottom, screen) >= TB_GAIN * screen_scale(left_to_right, screen):
        return "TB"
    return "LR"


# ---- the built-in layout ----


def builtin_layout(graph: Graph, rankdir: str = "LR") -> Layout:
    """A layered layout of ``graph``, in the manner of Graphviz's ``dot``.

    Left to right (``rankdir="LR"``) as below; top to bottom (``"TB"``) as left to right
    on the shapes' sizes swapped (width for height), every point then reflected across the
    diagonal (x for y), so that ranks are rows and argument order runs left to right;
    ``"RL"`` and ``"BT"`` mirror those.

    1. Columns: the root is rightmost and every other node starts one column left of its
       leftmost consumer, so a value is drawn next to the op that uses it; then a group of
       nodes moves left together where that shortens the edges in all (``_columns``).
    2. An edge that spans several columns passes through a point in each of them.
    3. Order within a column: first as a walk from the root meets the nodes, then a few
       sweeps that sort each column by the median position of its neighbours, keeping the
       order with the fewest crossings.
    4. Heights: each column is placed as near as it can be to its neighbours (the least
       squares placement that keeps the order and the gaps), sweeping back and forth.

    Example:
        >>> graph = Graph(["x", "op", "y"], {"x": (60, 20), "op": (30, 20), "y": (60, 20)},
        ...               frozenset({"op"}), [("x", "op"), ("op", "y")])
        >>> layout = builtin_layout(graph)
        >>> [round(layout.centres[k][0]) for k in graph.keys]
        [38, 105, 172]
        >>> [round(builtin_layout(graph, "TB").centres[k][1]) for k in graph.keys]
        [34, 76, 118]

    Raises:
        ValueError: When ``rankdir`` is not 'LR', 'TB', 'RL' or 'BT'.
    """
    check_rankdir(rankdir, "builtin_layout")
    if rankdir in ("LR", "RL"):
        layout = _left_to_right(graph, MARGIN_X, MARGIN_Y, LABEL_PX * 0.7)
    else:  # a label beside its edge's end, to its left, rather than above it
        swapped = Graph(graph.keys, {key: (h, w) for key, (w, h) in graph.sizes.items()},
                        graph.ops, graph.edges, graph.labels)
        layout = _reflected(_left_to_right(swapped, MARGIN_Y, MARGIN_X, LABEL_PX))
    if rankdir in ("RL", "BT"):
        layout = _mirrored(layout, rankdir == "RL")
    return replace(layout, rankdir=rankdir)


def _reflected(layout: Layout) -> Layout:
    """``layout`` reflected across its diagonal: every (x, y) is (y, x)."""
    def flip(point: Point) -> Point:
        return point[1], point[0]

    return Layout(layout.height, layout.width,
                  {key: flip(p) for key, p in layout.centres.items()},
                  [[flip(p) for p in curve] for curve in layout.curves],
                  {i: flip(p) for i, p in layout.labels.items()}, layout.engine)


def _mirrored(layout: Layout, horizontally: bool) -> Layout:
    """``layout`` mirrored left to right (``horizontally``) or top to bottom."""
    def mirror(point: Point) -> Point:
        if horizontally:
            return layout.width - point[0], point[1]
        return point[0], layout.height - point[1]

    return Layout(layout.width, layout.height,
                  {key: mirror(p) for key, p in layout.centres.items()},
                  [[mirror(p) for p in curve] for curve in layout.curves],
                  {i: mirror(p) for i, p in layout.labels.items()}, layout.engine)


def _left_to_right(graph: Graph, margin_x: float, margin_y: float,
                   label_lift: float) -> Layout:
    """``builtin_layout``'s left-to-right layout, with these margins, each edge label
    ``label_lift`` above its edge's end."""
    column = _columns(graph)
    columns: list[list[str]] = [[] for _ in range(max(column.values()) + 1)]
    # the chains of points that carry each edge across the columns it spans
    chains: list[list[str]] = []
    heights: dict[str, float] = {key: graph.sizes[key][1] for key in graph.keys}
    for i, (tail, head) in enumerate(graph.edges):
        chain = [tail]
        for c in range(column[tail] + 1, column[head]):
            dummy = f"\0{i}:{c}"  # no node's key starts with NUL
            column[dummy], heights[dummy] = c, 2.0
            chain.append(dummy)
        chains.append(chain + [head])
    neighbours_left: dict[str, list[str]] = {key: [] for key in column}
    neighbours_right: dict[str, list[str]] = {key: [] for key in column}
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            neighbours_right[a].append(b)
            neighbours_left[b].append(a)
    _first_order(graph.keys[-1], neighbours_left, column, columns)
    _reduce_crossings(columns, neighbours_left, neighbours_right)
    y = _place_heights(columns, heights, neighbours_left, neighbours_right)
    widths = [max((graph.sizes[k][0] for k in keys if k in graph.sizes), default=0.0)
              for keys in columns]
    labelled = {column[graph.edges[i][1]] for i in graph.labels}  # gaps holding a label
    lefts, x = [], margin_x - RANK_GAP
    for c, width in enumerate(widths):
        x += RANK_GAP + (LABEL_GAP if c in labelled else 0)
        lefts.append(x)
        x += width
    top = min(y[k] - heights[k] / 2 for k in column)
    centres = {k: (lefts[column[k]] + widths[column[k]] / 2, y[k] - top + margin_y)
               for k in column}
    bottom = max(centres[k][1] + heights[k] / 2 for k in column)
    ends = _entries(graph)
    curves = [_route(chain, centres, graph, (lefts, widths, column), start, end)
              for chain, (start, end) in zip(chains, ends)]
    labels = {}
    for i in graph.labels:  # in the gap before the head, above the edge's end
        c = column[graph.edges[i][1]]
        labels[i] = ((lefts[c] + lefts[c - 1] + widths[c - 1]) / 2,
                     curves[i][-1][1] - label_lift)
    return Layout(x + margin_x, bottom + margin_y, {k: centres[k] for k in graph.keys},
                  curves, labels, "builtin")


def _columns(graph: Graph) -> dict[str, int]:
    """Each node's column, 0 at the left: as in Graphviz's ``dot``, nearly the one that
    makes the edges shortest in all, with each op beside its value.

    1. Every node starts just left of its leftmost consumer.
    2. For each value, the group that would have to move with it one column to the left
       (it, its op, and every input of the group with no column to spare) moves if that
       shortens the edges in all: if fewer edges leave the group than come into it from
       outside. ("Promote layering", Nikolov, Tarassov and Branke, 2005.) So the first
       layer of an MLP stays in one column beside the inputs it shares.
    3. A value and its op with as many edges in as out (a chain: ``relu(x)`` used once)
       move to the middle of the room they have, so that the length a long path must
       have is shared among its edges instead of falling on one; each leaf then sits
       just left of its leftmost consumer again.
    """
    inputs: dict[str, list[str]] = {key: [] for key in graph.keys}
    users: dict[str, list[str]] = {key: [] for key in graph.keys}
    for tail, head in graph.edges:
        inputs[head].append(tail)
        users[tail].append(head)
    distance: dict[str, int] = {}  # columns from the root, rightmost
    for key in reversed(graph.keys):  # consumers before their inputs
        distance[key] = max((distance[u] + 1 for u in users[key]), default=0)
    moved = True
    while moved:
        moved = False
        for key in graph.keys:
            if key in graph.ops or not inputs[key]:  # an op moves with its value
                continue
            group, stack, gain = {key}, [key], 0
            while stack:  # gain: edges into the group less edges out of it (inner ones cancel)
                node = stack.pop()
                gain += len(inputs[node]) - len(users[node])
                for x in inputs[node]:
                    if x not in group and distance[x] == distance[node] + 1:
                        group.add(x)
                        stack.append(x)
            if gain > 0:
                for node in group:
                    distance[node] += 1
                moved = True
    farthest = max(distance.values())
    column = {key: farthest - d for key, d in distance.items()}
    for _ in range(8):
        for op in graph.keys:
            if op not in graph.ops:
                continue
            value = users[op][0]
            computed = [x for x in inputs[op] if inputs[x]]
            if not users[value] or len(computed) != len(users[value]):
                continue
            lowest = max([column[x] + 1 for x in computed] + [1])  # room for a leaf input
            highest = min(column[u] for u in users[value]) - 2
            column[op] = max(lowest, (lowest + highest + 1) // 2)
            column[value] = column[op] + 1
    for key in reversed(graph.keys):
        if not inputs[key] and users[key]:
            column[key] = min(column[u] for u in users[key]) - 1
    return column


def _first_order(root: str, neighbours_left: dict[str, list[str]], column: dict[str, int],
                 columns: list[list[str]]) -> None:
    """Fill ``columns`` in the order a depth-first walk from the root meets the nodes,
    inputs in argument order: a tree comes out without crossings."""
    seen = {root}
    stack = [root]
    while stack:
        key = stack.pop()
        columns[column[key]].append(key)
        for left in reversed(neighbours_left[key]):
            if left not in seen:
                seen.add(left)
                stack.append(left)


def _reduce_crossings(columns: list[list[str]], neighbours_left: dict[str, list[str]],
                      neighbours_right: dict[str, list[str]], sweeps: int = 8) -> None:
    """Median sweeps (right to left, then left to right), keeping the best order seen."""
    best, fewest = [list(keys) for keys in columns], _crossings(columns, neighbours_right)
    for sweep in range(sweeps):
        leftwards = sweep % 2 == 0
        order = range(len(columns) - 2, -1, -1) if leftwards else range(1, len(columns))
        for c in order:
            fixed = columns[c + 1] if leftwards else columns[c - 1]
            position = {key: i for i, key in enumerate(fixed)}
            links = neighbours_right if leftwards else neighbours_left
            here = {key: i for i, key in enumerate(columns[c])}
            columns[c].sort(key=lambda k: (_median([position[n] for n in links[k]], here[k]),
                                           here[k]))
        count = _crossings(columns, neighbours_right)
        if count < fewest:
            best, fewest = [list(keys) for keys in columns], count
        if fewest == 0:
            break
    columns[:] = best


def _median(positions: list[int], default: float) -> float:
    if not positions:
        return default
    positions = sorted(positions)
    middle = len(positions) // 2
    if len(positions) % 2:
        return positions[middle]
    return (positions[middle - 1] + positions[middle]) / 2


def _crossings(columns: list[list[str]], neighbours_right: dict[str, list[str]]) -> int:
    """How many pairs of edges cross between neighbouring columns (counted by merge sort
    of the edges' right ends, in the order of their left ends)."""
    total = 0
    for left, right in zip(columns, columns[1:]):
        position = {key: i for i, key in enumerate(right)}
        ends = [position[n] for key in left for n in sorted(neighbours_right[key],
                                                            key=position.__getitem__)]
        total += _inversions(ends)
    return total


def _inversions(values: list[int]) -> int:
    if len(values) < 2:
        return 0
    middle = len(values) // 2
    left, right = values[:middle], values[middle:]
    count = _inversions(left) + _inversions(right)
    left.sort()
    right.sort()
    j = 0
    for value in left:  # pairs (a in left, b in right) with a > b
        while j < len(right) and right[j] < value:
            j += 1
        count += j
    return count


def _place_heights(columns: list[list[str]], heights: dict[str, float],
                   neighbours_left: dict[str, list[str]],
                   neighbours_right: dict[str, list[str]], sweeps: int = 6) -> dict[str, float]:
    """Each node's centre height: stacked first, then each column moved (order and gaps
    kept) to where its nodes best line up with their neighbours, column by column from the
    root leftwards (each node towards its consumers), then back (towards its inputs)."""
    y: dict[str, float] = {}
    for keys in columns:
        y.update(zip(keys, _stack(keys, heights)))
    for sweep in range(sweeps):
        leftwards = sweep % 2 == 0
        order = range(len(columns) - 2, -1, -1) if leftwards else range(1, len(columns))
        for c in order:
            keys = columns[c]
            wanted = []
            for key in keys:
                links = neighbours_right[key] if leftwards else neighbours_left[key]
                if not links:  # a leaf in a rightward sweep: towards its consumers anyway
                    links = neighbours_right[key] or neighbours_left[key]
                wanted.append(sum(y[n] for n in links) / len(links) if links else y[key])
            y.update(zip(keys, _nearest(wanted, _gaps(keys, heights))))
    return y


def _stack(keys: list[str], heights: dict[str, float]) -> list[float]:
    out, y = [], 0.0
    for gap in [0.0, *_gaps(keys, heights)]:
        y += gap
        out.append(y)
    return out


def _gaps(keys: list[str], heights: dict[str, float]) -> list[float]:
    """The least distance between the centres of each two neighbours in a column."""
    gap = [NODE_GAP if min(heights[a], heights[b]) > 2 else NODE_GAP / 2
           for a, b in zip(keys, keys[1:])]
    return [(heights[a] + heights[b]) / 2 + g for a, b, g in zip(keys, keys[1:], gap)]


def _nearest(wanted: list[float], gaps: list[float]) -> list[float]:
    """The heights closest to ``wanted`` (least squares) that keep each two neighbours at
    least their gap apart: pool-adjacent-violators on the heights minus the gaps so far."""
    offsets = [0.0]
    for gap in gaps:
        offsets.append(offsets[-1] + gap)
    blocks: list[list[float]] = []  # [mean, count]
    for w, offset in zip(wanted, offsets):
        blocks.append([w - offset, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            blocks[-1] = [(blocks[-1][0] * blocks[-1][1] + mean * count) / (blocks[-1][1]
                                                                            + count),
                          blocks[-1][1] + count]
    out = []
    for mean, count in blocks:
        out.extend([mean] * int(count))
    return [z + offset for z, offset in zip(out, offsets)]


def _entries(graph: Graph) -> list[tuple[float, float]]:
    """How far each edge leaves its tail and enters its head above or below their middle,
    so that edges never meet on one point: an op's inputs enter it from top to bottom in
    argument order (``a + a`` shows two arrows), and a value used by several ops sends
    one edge to each from top to bottom, in the order of the edges."""
    into: dict[str, list[int]] = {}
    out_of: dict[str, list[int]] = {}
    for i, (tail, head) in enumerate(graph.edges):
        into.setdefault(head, []).append(i)
        out_of.setdefault(tail, []).append(i)
    ends = [[0.0, 0.0] for _ in graph.edges]
    for side, groups in ((1, into), (0, out_of)):
        for key, edges in groups.items():
            step = min(10.0, graph.sizes[key][1] * 0.5 / len(edges))
            for k, i in enumerate(edges):
                ends[i][side] = step * (k - (len(edges) - 1) / 2)
    return [(start, end) for start, end in ends]


def _route(chain: list[str], centres: dict[str, Point], graph: Graph,
           columns: tuple[list[float], list[float], dict[str, int]], start: float,
           end: float) -> list[Point]:
    """The cubic Bezier curve of one edge: straight across each column it passes (the
    tail's, every column between, the head's, at heights where no node is) and bending
    only in the gaps between columns; it stops ``ARROW`` short of the head's outline."""
    lefts, widths, column = columns
    tail, head = chain[0], chain[-1]
    (tx, ty), (hx, hy) = centres[tail], centres[head]
    c = column[tail]
    points = [(tx + graph.sizes[tail][0] / 2, ty + start),
              (lefts[c] + widths[c], ty + start)]
    for key in chain[1:-1]:
        c = column[key]
        points += [(lefts[c], centres[key][1]), (lefts[c] + widths[c], centres[key][1])]
    width, height = graph.sizes[head]
    c = column[head]
    if head in graph.ops:  # into the ellipse's left side, towards its centre
        a, b = width / 2, height / 2
        tip = (hx - a * math.sqrt(max(0.0, 1 - (end / b) ** 2)), hy + end)
    else:
        tip = (hx - width / 2, hy + end)
    points.append((min(lefts[c], tip[0] - ARROW), tip[1]))
    points.append((tip[0] - ARROW, tip[1]))
    out = [points[0]]
    for i, (p, q) in enumerate(zip(points, points[1:])):
        if i % 2 == 0:  # across a column: a straight line, if any
            if q[0] - p[0] > 0.01:
                out += [p, q, q]
        else:  # across a gap: level at both ends
            bend = (q[0] - p[0]) / 2
            out += [(p[0] + bend, p[1]), (q[0] - bend, q[1]), q]
    return out
