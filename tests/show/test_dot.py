"""to_dot (golden text), draw_dot's Drawing, and rendering through graphviz-pure.

The SVG and PNG tests name the ``graphviz-pure`` program explicitly, so they exercise it
whether or not a system Graphviz is installed; ``find_renderer`` is tested with ``dot``
hidden. Set CHAINGRAD_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chaingrad import Value
from chaingrad.show import render
from chaingrad.show.dot import (
    Drawing,
    RendererNotFoundError,
    draw_dot,
    format_number,
    layout_segments,
    node_names,
    reading_order,
    to_dot,
)
from chaingrad.show.page import to_html

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SVG_NS = "{http://www.w3.org/2000/svg}"



def svg_texts(svg: bytes) -> list[str]:
    tree = ET.fromstring(svg)
    assert tree.tag == f"{SVG_NS}svg"
    return [el.text or "" for el in tree.iter(f"{SVG_NS}text")]


# ---- to_dot ----


def test_neuron_dot_matches_golden_after_backward(neuron, check_golden):
    out = neuron()
    out.backward()
    check_golden("neuron.dot", to_dot(out))


def test_reused_node_dot_matches_golden_with_one_edge_per_use(reuse, check_golden):
    text = to_dot(reuse())
    check_golden("reuse.dot", text)
    assert text.count("n0 -> n1_op") == 2  # a + a: two edges, the first marked "×2"
    assert text.count('n0 -> n1_op [label="×2"];') == 1
    assert text.count("n1 -> n2_op") == 2  # b + b
    assert text.count('n1 -> n2_op [label="×2"];') == 1


def test_labels_are_escaped_and_constants_named_in_golden(check_golden):
    x = Value(1.5, label='x {1} | "<q>"')
    y = (x - 2) * x**2 / 4  # composites: constants and ** nodes, all unlabelled
    check_golden("escape_tb.dot", to_dot(y, rankdir="TB"))


def test_same_graph_built_twice_gives_the_same_text(neuron):
    first, second = neuron(), neuron()
    first.backward()
    second.backward()
    assert to_dot(first) == to_dot(second)
    assert to_dot(first, rankdir="BT") == to_dot(second, rankdir="BT")


def test_dot_shows_current_gradients(neuron):
    out = neuron()
    before = to_dot(out)
    out.backward()
    after = to_dot(out)
    assert "grad -1.5000" not in before and "grad -1.5000" in after


def test_deep_chain_is_drawn_without_recursion():
    x = Value(0.5, label="x")
    y = x
    for _ in range(5000):
        y = y * 1.0
    text = to_dot(y)
    assert text.count("_op [label=") == 5000


@pytest.mark.parametrize(
    ("number", "text"),
    [(0.0, "0.0000"), (-0.0, "0.0000"), (-1.5, "-1.5000"), (1e-4, "0.0001"),
     (123456.0, "123456.0000"), (1.234e-7, "1.2340e-07"), (-2.5e6, "-2.5000e+06"),
     (Value(2.0), "2.0000")],
)
def test_format_number(number, text):
    assert format_number(number) == text


def test_auto_names_follow_reading_order_and_avoid_labels():
    x1, w1 = Value(1.0, label="x1"), Value(2.0, label="mul1")  # a label that looks auto
    y = (x1 * w1 + x1 * 3).relu()
    names = node_names(reading_order(y))
    assert [names[id(n)] for n in reading_order(y)] == [
        "x1", "mul1", "mul2", "leaf1", "mul3", "add1", "relu1"]


def test_to_dot_rejects_bad_input():
    with pytest.raises(ValueError,
                       match="to_dot: rankdir must be one of auto, LR, TB, RL, BT, got 'XY'"):
        to_dot(Value(1.0), rankdir="XY")
    with pytest.raises(TypeError, match="to_dot: root must be a Value, got float"):
        to_dot(1.0)


# ---- draw_dot and rendering ----


def test_svg_through_graphviz_pure_parses_and_shows_the_numbers(graphviz_pure, neuron):
    out = neuron()
    out.backward()
    svg = draw_dot(out, renderer=graphviz_pure).pipe()
    texts = svg_texts(svg)
    for expected in ("x1", "grad -1.5000", "tanh", "data 0.7071"):
        assert expected in texts


def test_escaped_label_survives_rendering(graphviz_pure):
    x = Value(1.5, label='x {1} | "<q>"')
    texts = [t.strip() for t in svg_texts(draw_dot(x * 2, renderer=graphviz_pure).pipe())]
    assert 'x {1} | "<q>"' in texts


def test_png_through_graphviz_pure_has_the_png_signature(graphviz_pure, neuron):
    png = draw_dot(neuron(), format="png", renderer=graphviz_pure).pipe()
    assert png.startswith(PNG_SIGNATURE) and len(png) > 1000


def test_render_writes_filename_dot_format_and_returns_the_path(tmp_path, graphviz_pure, reuse):
    drawing = draw_dot(reuse(), renderer=graphviz_pure)
    path = drawing.render(str(tmp_path / "graph"))
    assert path == str(tmp_path / "graph.svg")
    svg_texts(Path(path).read_bytes())
    png = drawing.render("g", directory=tmp_path, format="png")
    assert Path(png).read_bytes().startswith(PNG_SIGNATURE)
    dot = drawing.render(str(tmp_path / "g"), format="dot")
    assert Path(dot).read_text() == drawing.source == to_dot(reuse())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot", "g.png", "graph.svg"]


def test_repr_svg_for_jupyter(graphviz_pure, neuron):
    drawing = draw_dot(neuron(), renderer=graphviz_pure)
    assert "tanh" in svg_texts(drawing._repr_svg_().encode())


def test_renderer_found_without_system_dot(monkeypatch, neuron):
    real_which = shutil.which

    def which_without_dot(cmd, mode=os.F_OK | os.X_OK, path=None):
        return None if cmd == "dot" else real_which(cmd, mode, path)

    monkeypatch.setattr(render.shutil, "which", which_without_dot)
    found = render.find_renderer()
    assert found is not None and os.path.basename(found) == "graphviz-pure"
    assert draw_dot(neuron(), format="png").pipe().startswith(PNG_SIGNATURE)


def test_no_renderer_is_a_clear_error_and_jupyter_display_does_not_raise(monkeypatch, neuron):
    monkeypatch.setattr(render, "find_renderer", lambda: None)
    drawing = draw_dot(neuron())
    with pytest.raises(RendererNotFoundError, match=r"pip install 'chaingrad\[viz\]'"):
        drawing.pipe()
    assert issubclass(RendererNotFoundError, RuntimeError)
    texts = svg_texts(drawing._repr_svg_().encode())
    assert "chaingrad[viz]" in " ".join(texts)
    assert drawing.pipe("dot") == drawing.source.encode()  # DOT needs no renderer


def test_a_failing_renderer_is_reported(tmp_path, neuron):
    failing = tmp_path / "broken-dot"
    failing.write_text("#!/bin/sh\necho 'syntax error in line 1' >&2\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(RuntimeError, match="failed \\(exit 3\\): syntax error in line 1"):
        draw_dot(neuron(), renderer=str(failing)).pipe()


def test_a_system_dot_is_preferred_to_graphviz_pure(tmp_path, monkeypatch, graphviz_pure, neuron):
    fake_dot = tmp_path / "dot"
    fake_dot.write_text("#!/bin/sh\necho '<svg>from system dot</svg>'\n")
    fake_dot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    assert render.find_renderer() == str(fake_dot)
    assert draw_dot(neuron()).pipe() == b"<svg>from system dot</svg>\n"


@pytest.mark.slow  # waits out the timeout
def test_a_renderer_that_hangs_is_stopped_with_a_clear_error(tmp_path, neuron):
    hanging = tmp_path / "slow-dot"
    hanging.write_text("#!/bin/sh\nexec sleep 600\n")  # exec: the timeout kills sleep itself
    hanging.chmod(0o755)
    drawing = draw_dot(neuron(), renderer=str(hanging), timeout=0.5)
    with pytest.raises(RuntimeError, match="did not finish within 0.5 s.*larger timeout"):
        drawing.pipe()
    assert "did not finish" in " ".join(svg_texts(drawing._repr_svg_().encode()))
    with pytest.raises(ValueError, match="draw_dot: timeout must be a positive number"):
        draw_dot(neuron(), timeout=0)


def test_max_nodes_fails_before_any_layout(monkeypatch, neuron):
    def no_layout(*args, **kwargs):
        raise AssertionError("a renderer was started")

    monkeypatch.setattr(subprocess, "run", no_layout)
    y = Value(1.0)
    for _ in range(1000):
        y = y + 1  # 2001 Values
    with pytest.raises(ValueError, match="the graph has 2001 Values, more than max_nodes=1000"):
        draw_dot(y)
    with pytest.raises(ValueError, match="the graph has 10 Values, more than max_nodes=9"):
        draw_dot(neuron(), max_nodes=9)
    assert draw_dot(neuron(), max_nodes=10).source == to_dot(neuron())
    with pytest.raises(ValueError, match="max_nodes must be a positive int, got 0"):
        draw_dot(neuron(), max_nodes=0)
    assert draw_dot(neuron(), max_nodes=10_000).source == to_dot(neuron())


def reused_along_a_sum(uses: int) -> Value:
    """``x`` used by ``uses`` products, summed one after another: edges across many ranks."""
    x = Value(1.5, label="x")
    return sum(x * i for i in range(uses))


def test_layout_segments_count_the_ranks_edges_skip(neuron):
    x = Value(2.0, label="x")
    chain = x
    for _ in range(50):
        chain = (chain * 2).tanh()
    spread = sum(Value(float(i), label=f"x{i}") * i for i in range(300))  # no reuse
    root = neuron()
    assert layout_segments(reading_order(root)) == (0, root)  # no edge skips a rank
    assert layout_segments(reading_order(chain))[0] == 0
    assert layout_segments(reading_order(spread))[0] == 0
    count, culprit = layout_segments(reading_order(reused_along_a_sum(300)))
    assert count == 300 * 299 and culprit.label == "x"  # x's k-th use skips 2k - 2 ranks


def test_a_value_used_far_apart_fails_before_any_layout(monkeypatch, neuron):
    def no_layout(*args, **kwargs):
        raise AssertionError("a renderer was started")

    monkeypatch.setattr(subprocess, "run", no_layout)
    with pytest.raises(ValueError, match=r"about 89700 edge segments, more than "
                       r"max_segments=5000 .*x is used by 300 ops far apart\. Use to_html\(\)"
                       r".* or to_dot\(\), or pass a larger max_segments"):
        draw_dot(reused_along_a_sum(300))
    big = reused_along_a_sum(60)  # 3540 segments: allowed by default, not below 3000
    assert "n0 ->" in draw_dot(big).source
    with pytest.raises(ValueError, match="3540 edge segments, more than max_segments=3000"):
        draw_dot(big, max_segments=3000)
    assert draw_dot(reused_along_a_sum(300), max_segments=100_000).source
    with pytest.raises(TypeError, match="draw_dot: max_segments must be a positive int, got "
                       "float 10000.0"):
        draw_dot(neuron(), max_segments=1e4)


def test_jupyter_display_waits_a_short_time_only(tmp_path, monkeypatch, neuron):
    hanging = tmp_path / "slow-dot"
    hanging.write_text("#!/bin/sh\nexec sleep 600\n")
    hanging.chmod(0o755)
    monkeypatch.setattr(render, "REPR_TIMEOUT", 0.3)
    drawing = draw_dot(neuron(), renderer=str(hanging))  # timeout: the default 60 s
    started = time.monotonic()
    texts = " ".join(svg_texts(drawing._repr_svg_().encode()))
    assert time.monotonic() - started < 10
    assert "did not finish within 0.3 s" in texts and "call .render()" in texts


@pytest.mark.parametrize(
    ("timeout", "error", "message"),
    [
        (-1, ValueError, "Drawing: timeout must be a positive number of seconds or None"),
        (0.0, ValueError, "got 0.0"),
        (math.inf, ValueError, "got inf"),
        (math.nan, ValueError, "got nan"),
        ("5", TypeError, "Drawing: timeout must be a number of seconds or None, got str"),
        (True, TypeError, "got bool"),
    ],
)
def test_drawing_checks_its_timeout(timeout, error, message, neuron):
    with pytest.raises(error, match=message):
        Drawing("digraph {}", timeout=timeout)
    with pytest.raises(error, match=message.replace("Drawing", "draw_dot")):
        draw_dot(neuron(), timeout=timeout)


def test_drawing_accepts_a_timeout_or_none():
    assert Drawing("digraph {}", timeout=None).timeout is None
    assert Drawing("digraph {}", timeout=2).timeout == 2


def test_max_nodes_must_be_an_int_not_a_bool(tmp_path, neuron):
    with pytest.raises(TypeError, match="draw_dot: max_nodes must be a positive int, got "
                       "bool True"):
        draw_dot(neuron(), max_nodes=True)
    with pytest.raises(TypeError, match="draw_dot: max_nodes must be a positive int, got "
                       "float 10.0"):
        draw_dot(neuron(), max_nodes=10.0)
    with pytest.raises(TypeError, match="to_html: max_nodes must be a positive int, got bool"):
        to_html(neuron(), tmp_path / "page.html", max_nodes=True)
    assert not any(tmp_path.iterdir())


def test_draw_dot_rejects_bad_arguments(neuron):
    with pytest.raises(ValueError, match="format must be one of svg, png, dot, got 'pdf'"):
        draw_dot(neuron(), format="pdf")
    with pytest.raises(ValueError, match="rankdir"):
        draw_dot(neuron(), rankdir="sideways")
    with pytest.raises(ValueError, match="render: format must be one of"):
        Drawing("digraph {}").render("x", format="jpg")


def test_importing_chaingrad_and_viz_imports_no_graphviz_package():
    code = ("import sys, chaingrad, chaingrad.show.dot, chaingrad.show.render, "
            "chaingrad.show.explain, chaingrad.show.page; "
            "print(sorted(m for m in sys.modules if 'graphviz' in m))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert "graphviz" not in result.stdout


def test_checked_in_neuron_pictures_show_the_gradients():
    images = Path(__file__).parents[2] / "docs" / "images"
    texts = svg_texts((images / "neuron.svg").read_bytes())
    for expected in ("x1", "grad -1.5000", "w1", "grad 1.0000", "tanh"):
        assert expected in texts
    assert (images / "neuron.png").read_bytes().startswith(PNG_SIGNATURE)


def test_render_view_opens_the_written_file(tmp_path, monkeypatch):
    opened = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    path = draw_dot(Value(1.0, label="x") * 2).render(str(tmp_path / "g"), None, True,
                                                      format="dot")
    assert opened == [Path(path).resolve().as_uri()] and path.endswith("g.dot")
