"""The page's layouts, Graphviz's and the built-in one, held to the same checks.

A layout a teacher would draw: shapes that do not overlap, edges that go around the
shapes they do not join, arrowheads that touch their head, each computed value near the op
that consumes it, no edge across half the drawing, and each step (a value, its op, the
inputs it updates) small enough for the page to show at once in an 800 px window.
"""

from __future__ import annotations

import math

import pytest

from chaingrad import Value
from chaingrad.show.layout import (
    ARROW,
    Graph,
    Layout,
    builtin_layout,
    graphviz_layout,
)
from chaingrad.show.page import page_graph
from chaingrad.show.render import find_renderer

# The page's zoom never takes its 14 px text below 10 px, and keeps 10 px free around a step;
# an 800x600 window leaves about 754x330 px for the drawing (its frame less that room, with
# the longest formula shown): a step must fit in that / (10 / 14).
STEP_SIZE = (1000, 460)
# Top to bottom, the boxes of a layer stand side by side, 150-240 px each: an MLP's input
# feeds three neurons across the drawing, and its step is as wide as a 1280x800 window holds
# at 10 px text (1254 / (10 / 14)); at 800 px the page keeps its running node in view.
STEP_SIZE_ACROSS_A_LAYER = (1755, 460)
NEAR = 600  # a computed value's edge to its nearest consumer spans at most this
RANKDIRS = ["LR", "TB", "RL", "BT"]


def wide_and_deep() -> Value:
    """A value used all along a chain (long edges are forced) and a deep tanh chain."""
    x = Value(0.5, label="x")
    y = x
    for _ in range(8):
        y = (y * x).tanh() + x
    return y


def graphviz(graph: Graph, rankdir: str = "LR") -> Layout:
    if find_renderer() is None:
        pytest.skip("the Graphviz layout needs a renderer: pip install 'chaingrad[viz]'")
    return graphviz_layout(graph, rankdir=rankdir)


LAYOUTS = {"graphviz": graphviz, "builtin": builtin_layout}
NAMES = ["neuron", "reuse", "mlp", "tensor", "chain"]


@pytest.fixture(scope="module")
def graphs(teaching_graphs) -> dict[str, Graph]:
    """The page's graph of each of the four teaching graphs, and of ``wide_and_deep``."""
    made = {"chain": page_graph(wide_and_deep())}
    for name, make in teaching_graphs.items():
        root, params = make()
        made[name] = page_graph(root, params=params)
    return made


@pytest.fixture(scope="module", params=[(g, lay, d) for g in NAMES for lay in LAYOUTS
                                        for d in RANKDIRS], ids="-".join)
def laid_out(request, graphs) -> tuple[str, Graph, Layout]:
    name, layout, rankdir = request.param
    return name, graphs[name], LAYOUTS[layout](graphs[name], rankdir=rankdir)


@pytest.fixture(scope="module", params=[(g, lay, d) for g in NAMES if g != "chain"
                                        for lay in LAYOUTS for d in RANKDIRS], ids="-".join)
def four_laid_out(request, graphs) -> tuple[Graph, Layout]:
    """The four graphs of the page's tests (the chain's x is used all along it: its
    edges must be long)."""
    name, layout, rankdir = request.param
    return graphs[name], LAYOUTS[layout](graphs[name], rankdir=rankdir)


def along(layout: Layout) -> int:
    """The coordinate the edges run along: 0 (x) left to right or back, 1 (y) else."""
    return 0 if layout.rankdir in ("LR", "RL") else 1


def test_each_layout_goes_the_way_asked(laid_out):
    _, graph, layout = laid_out
    axis, sign = along(layout), -1 if layout.rankdir in ("RL", "BT") else 1
    for tail, head in graph.edges:  # every edge runs forwards, by a rank at least
        assert sign * (layout.centres[head][axis] - layout.centres[tail][axis]) > 0


def box(graph: Graph, layout: Layout, key: str) -> tuple[float, float, float, float]:
    (x, y), (w, h) = layout.centres[key], graph.sizes[key]
    return x - w / 2, y - h / 2, x + w / 2, y + h / 2


def bezier_points(curve: list, per_segment: int = 12) -> list[tuple[float, float]]:
    points = [curve[0]]
    for p0, p1, p2, p3 in zip(curve[0::3], curve[1::3], curve[2::3], curve[3::3]):
        for i in range(1, per_segment + 1):
            t = i / per_segment
            points.append(tuple((1 - t) ** 3 * a + 3 * (1 - t) ** 2 * t * b
                                + 3 * (1 - t) * t ** 2 * c + t ** 3 * d
                                for a, b, c, d in zip(p0, p1, p2, p3)))
    return points


def test_every_shape_is_placed_inside_the_drawing_without_overlaps(laid_out):
    _, graph, layout = laid_out
    assert set(layout.centres) == set(graph.keys)
    boxes = [box(graph, layout, key) for key in graph.keys]
    for left, top, right, bottom in boxes:
        assert left >= 0 and top >= 0 and right <= layout.width and bottom <= layout.height
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)


def test_edges_go_around_the_shapes_they_do_not_join(laid_out):
    _, graph, layout = laid_out
    for (tail, head), curve in zip(graph.edges, layout.curves):
        for key in graph.keys:
            if key in (tail, head):
                continue
            left, top, right, bottom = box(graph, layout, key)
            inside = [p for p in bezier_points(curve)
                      if left + 2 < p[0] < right - 2 and top + 2 < p[1] < bottom - 2]
            assert inside == [], f"{tail} -> {head} crosses {key}"


def test_each_edge_leaves_its_tail_and_its_arrowhead_touches_its_head(laid_out):
    _, graph, layout = laid_out
    for (tail, head), curve in zip(graph.edges, layout.curves):
        assert len(curve) % 3 == 1  # a start point, then three points per cubic segment
        assert on_outline(graph, layout, tail, curve[0])
        end, before = curve[-1], next(p for p in reversed(curve[:-1]) if p != curve[-1])
        length = math.dist(end, before)
        tip = (end[0] + ARROW * (end[0] - before[0]) / length,
               end[1] + ARROW * (end[1] - before[1]) / length)
        assert on_outline(graph, layout, head, tip), (tail, head)


def on_outline(graph: Graph, layout: Layout, key: str, point: tuple[float, float]) -> bool:
    """Whether ``point`` lies on the outline of a shape (within 3 px)."""
    (cx, cy), (w, h) = layout.centres[key], graph.sizes[key]
    dx, dy = point[0] - cx, point[1] - cy
    if key in graph.ops:
        return abs(math.hypot(dx / (w / 2), dy / (h / 2)) - 1) < 0.15
    near_side = abs(abs(dx) - w / 2) < 3 and abs(dy) <= h / 2 + 3
    near_top_or_bottom = abs(abs(dy) - h / 2) < 3 and abs(dx) <= w / 2 + 3
    return near_side or near_top_or_bottom


def test_a_computed_value_sits_near_its_consumer_and_no_edge_crosses_half_the_drawing(
        laid_out):
    name, graph, layout = laid_out
    axis = along(layout)
    users: dict[str, list[str]] = {}
    for tail, head in graph.edges:
        users.setdefault(tail, []).append(head)
    computed = {head for tail, head in graph.edges if tail in graph.ops}

    def gap(a: str, b: str) -> float:  # between two boxes, along the edges
        first, second = box(graph, layout, a), box(graph, layout, b)
        return max(second[axis] - first[axis + 2], first[axis] - second[axis + 2])

    for value in computed & set(users):
        assert min(gap(value, op) for op in users[value]) <= NEAR, value
    length = (layout.width, layout.height)[axis]
    for (tail, head), curve in zip(graph.edges, layout.curves):
        spans = [p[axis] for p in curve]
        forced = len(users.get(tail, [])) > 1 and name == "chain"
        assert forced or max(spans) - min(spans) <= length / 2, (tail, head)


def test_each_step_fits_an_800_px_window_at_the_smallest_zoom(four_laid_out):
    graph, layout = four_laid_out
    inputs: dict[str, list[str]] = {}
    for tail, head in graph.edges:
        inputs.setdefault(head, []).append(tail)
    for op in graph.ops:
        value = next(head for tail, head in graph.edges if tail == op)
        boxes = [box(graph, layout, key) for key in [value, op, *inputs[op]]]
        size = STEP_SIZE if along(layout) == 0 else STEP_SIZE_ACROSS_A_LAYER
        for axis in (0, 1):
            extent = max(b[axis + 2] for b in boxes) - min(b[axis] for b in boxes)
            assert extent <= size[axis], (value, axis)


def test_the_builtin_layout_puts_a_tree_in_columns_without_crossings(graphs):
    graph = graphs["neuron"]
    layout = builtin_layout(graph)
    x = {key: round(layout.centres[key][0]) for key in graph.keys}
    # leaves x1 w1 x2 w2 | * * | mul1 mul2 | + | add1 b | + | add2 | tanh | tanh1
    assert len({x[k] for k in ("n0", "n1", "n3", "n4")}) == 1
    assert x["n0"] < x["n2_op"] < x["n2"] < x["n6_op"] < x["n6"] < x["n8_op"] < x["n9"]
    assert x["n7"] == x["n6"]  # b beside add1, just left of the op that uses it
    y = {key: layout.centres[key][1] for key in graph.keys}
    assert y["n0"] < y["n1"] < y["n3"] < y["n4"]  # in argument order: no crossing


def test_the_builtin_layout_keeps_a_shared_input_beside_all_its_users(graphs):
    """An MLP's inputs feed every neuron of layer 0: those sit in one column beside them
    (instead of each neuron next to its one consumer, far from the inputs)."""
    graph = graphs["mlp"]
    layout = builtin_layout(graph)
    users: dict[str, list[str]] = {}
    for tail, head in graph.edges:
        users.setdefault(tail, []).append(head)
    shared = [ops for key, ops in users.items() if len(ops) == 3]  # x0 and x1
    assert len(shared) == 2
    for ops in shared:
        assert len({round(layout.centres[op][0]) for op in ops}) == 1


def test_a_reused_input_gets_two_arrows_and_one_label(graphs):
    graph = graphs["reuse"]
    assert graph.labels == {0: "×2", 3: "×2"}
    for layout in (builtin_layout(graph),) + ((graphviz_layout(graph),) if find_renderer()
                                                else ()):
        assert set(layout.labels) == {0, 3}
        first, second = layout.curves[0][-1], layout.curves[1][-1]
        assert abs(first[1] - second[1]) >= 4 or layout.engine == "graphviz"


def test_the_builtin_layout_top_to_bottom_puts_a_tree_in_rows_without_crossings(graphs):
    graph = graphs["neuron"]
    layout = builtin_layout(graph, "TB")
    y = {key: round(layout.centres[key][1]) for key in graph.keys}
    assert len({y[k] for k in ("n0", "n1", "n3", "n4")}) == 1  # the leaves in one row
    assert y["n0"] < y["n2_op"] < y["n2"] < y["n6_op"] < y["n6"] < y["n8_op"] < y["n9"]
    assert y["n7"] == y["n6"]
    x = {key: layout.centres[key][0] for key in graph.keys}
    assert x["n0"] < x["n1"] < x["n3"] < x["n4"]  # in argument order, left to right


def test_a_layout_rejects_an_unknown_direction(graphs):
    with pytest.raises(ValueError, match="builtin_layout: rankdir must be one of LR, TB, RL, "
                                         "BT, got 'up'"):
        builtin_layout(graphs["neuron"], "up")
    with pytest.raises(ValueError, match="graphviz_layout: rankdir must be one of"):
        graphviz_layout(graphs["neuron"], rankdir="up")
