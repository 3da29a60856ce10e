"""``chaingrad graph``: each output format, and each kind of bad command line (exit 2); the
expression language of chaingrad/cli/expr.py."""

from __future__ import annotations

import ast
import io
import os
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from chaingrad import Value
from chaingrad.cli import main
from chaingrad.cli.expr import parse_expression
from chaingrad.errors import ExpressionError
from chaingrad.show import render
from chaingrad.show.dot import reading_order, to_dot
from chaingrad.show.explain import explain
from chaingrad.show.page import FRAME

NEURON = "(x1*w1 + x2*w2 + b).tanh()"
NEURON_SET = ["--set", "x1=2", "--set", "w1=-3", "--set", "x2=0", "--set", "w2=1",
              "--set", "b=6.8813735870195432"]
GOLDEN = Path(__file__).parents[1] / "golden"


REUSED_300 = " + ".join(f"x*{i}" for i in range(1, 301))  # x used along a long sum


def graph(*args: str) -> list[str]:
    return ["graph", *args]


def test_dot_output_is_the_golden_neuron(tmp_path, capsys):
    out = tmp_path / "neuron.dot"
    assert main(graph(NEURON, *NEURON_SET, "-o", str(out), "--rankdir", "LR")) == 0
    assert out.read_text() == (GOLDEN / "neuron.dot").read_text()  # same as tests/show/test_dot
    assert capsys.readouterr().out == f"wrote {out} (10 values)\n"


def test_svg_and_png_outputs(tmp_path):
    svg, png = tmp_path / "n.svg", tmp_path / "n.png"
    assert main(graph(NEURON, *NEURON_SET, "-o", str(svg), "--rankdir", "TB")) == 0
    texts = [el.text for el in ET.parse(svg).iter("{http://www.w3.org/2000/svg}text")]
    assert "grad -1.5000" in texts and "x1" in texts
    assert main(graph(NEURON, *NEURON_SET, "-o", str(png))) == 0
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_html_output(tmp_path):
    page = tmp_path / "n.html"
    assert main(graph(NEURON, *NEURON_SET, "-o", str(page))) == 0
    text = page.read_text()
    assert text.count('class="value"') == 10 and 'data-name="x1"' in text


@pytest.mark.parametrize("rankdir", ["LR", "TB", "RL", "BT"])
def test_html_output_is_drawn_in_the_direction_asked(tmp_path, rankdir):
    """The README's command with ``-o neuron.html`` (it passes --rankdir TB)."""
    page = tmp_path / "n.html"
    assert main(graph(NEURON, *NEURON_SET, "--rankdir", rankdir.lower(), "-o", str(page))) == 0
    assert f'data-rankdir="{rankdir}"' in page.read_text()


CHAIN = "x" + ".tanh()" * 30  # a strip left to right
LAYER = "(((a*b)*(c*d))*((e*f)*(g*h)))*(((i*j)*(k*l))*((m*n)*(o*p)))"  # 16 leaves abreast
LAYER_SET = [arg for name in "abcdefghijklmnop" for arg in ("--set", f"{name}=0.5")]


def svg_size(path: Path) -> tuple[float, float]:
    root = ET.parse(path).getroot()
    return float(root.get("width")[:-2]), float(root.get("height")[:-2])  # in pt


@pytest.mark.parametrize(("expression", "assignments"),
                         [(CHAIN, ["--set", "x=0.5"]), (NEURON, NEURON_SET),
                          (LAYER, LAYER_SET)], ids=["chain", "neuron", "layer"])
def test_without_rankdir_the_svg_is_drawn_the_way_it_fits_a_screen_larger(
        tmp_path, monkeypatch, graphviz_pure, expression, assignments):
    """The default is TB if Graphviz's drawing top to bottom, shown whole on a 16:10
    screen, has 1.25 times the scale of the one left to right (its text that much larger),
    else LR: the chain and the neuron top to bottom, the layer of 16 leaves left to right."""
    monkeypatch.setattr(render, "find_renderer", lambda *args, **kw: graphviz_pure)
    scale = {}
    for rankdir in ("LR", "TB", "auto"):
        out = tmp_path / f"{rankdir}.svg"
        assert main(graph(expression, *assignments, "--rankdir", rankdir, "-o", str(out))) == 0
        width, height = svg_size(out)
        scale[rankdir] = min(16 / width, 10 / height)
    assert scale["auto"] == (scale["TB"] if scale["TB"] >= 1.25 * scale["LR"] else scale["LR"])
    default = tmp_path / "default.svg"
    assert main(graph(expression, *assignments, "-o", str(default))) == 0
    assert default.read_bytes() == (tmp_path / "auto.svg").read_bytes()
    if expression == LAYER:
        assert scale["LR"] > scale["TB"]
    else:
        assert scale["TB"] > scale["LR"]


@pytest.mark.parametrize(("expression", "assignments", "rankdir"),
                         [(CHAIN, ["--set", "x=0.5"], "TB"), (LAYER, LAYER_SET, "LR")],
                         ids=["chain", "layer"])
def test_without_rankdir_the_dot_text_takes_the_direction_that_fits(capsys, expression,
                                                                    assignments, rankdir):
    assert main(graph(expression, *assignments)) == 0
    assert f"graph [rankdir={rankdir}];" in capsys.readouterr().out


@pytest.mark.parametrize(("expression", "assignments"),
                         [(CHAIN, ["--set", "x=0.5"]), (NEURON, NEURON_SET),
                          (LAYER, LAYER_SET)], ids=["chain", "neuron", "layer"])
def test_without_rankdir_the_page_takes_the_direction_that_fits_its_frame(
        tmp_path, expression, assignments):
    """The page is fitted to its frame (about 2:1, FRAME), not to a 16:10 screen: there a
    chain of Values is about as large either way (its boxes are already half as wide as
    micrograd's records), and the page keeps LR unless TB is 1.25 times as large."""
    scale, rankdirs = {}, {}
    for rankdir in ("LR", "TB", "auto"):
        out = tmp_path / f"{rankdir}.html"
        assert main(graph(expression, *assignments, "--rankdir", rankdir, "-o", str(out))) == 0
        svg = re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"[^>]*data-rankdir="(\w+)"',
                        out.read_text())
        width, height = float(svg[1]), float(svg[2])
        scale[rankdir] = min(FRAME[0] / width, FRAME[1] / height)
        rankdirs[rankdir] = svg[3]
    tb = scale["TB"] >= 1.25 * scale["LR"]
    assert rankdirs["auto"] == ("TB" if tb else "LR")
    assert scale["auto"] == pytest.approx(scale[rankdirs["auto"]])


def test_without_output_prints_dot_and_explain_prints_the_steps(capsys):
    assert main(graph("a*a + 1", "--set", "a=3")) == 0
    a = Value(3.0, label="a")
    expected = a * a + Value(1, label="1")
    expected.backward()
    assert capsys.readouterr().out == to_dot(expected, rankdir="auto")
    assert main(graph("c + c", "--set", "c=1", "--explain", "--naive")) == 0
    c = Value(1.0, label="c")
    expected = c + c
    text = explain(expected, naive=True, file=io.StringIO())
    assert capsys.readouterr().out == text + to_dot(expected, rankdir="auto")


def test_no_backward_draws_zero_gradients(capsys):
    assert main(graph("x.tanh()", "--set", "x=0.5", "--no-backward")) == 0
    assert "grad 1.0000" not in capsys.readouterr().out


def test_set_but_unused_is_a_note(capsys):
    assert main(graph("x", "--set", "x=1", "--set", "y=2")) == 0
    assert capsys.readouterr().err == "chaingrad graph: note: set but not used: y\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x +", "--set", "x=1"], "expression: invalid syntax in 'x +'"),
        (["foo(x)", "--set", "x=1"], "unknown function 'foo'"),
        (["x.__class__", "--set", "x=1"], "'x.__class__' is not allowed"),
        (["__import__('os').system('echo pwned')"], "unknown function 'system'"),
        (["x[0]", "--set", "x=1"], "'x[0]' is not allowed"),
        (["'text'"], "only numbers are allowed, got 'text'"),
        (["x.tanh(2)", "--set", "x=1"], "tanh takes no other arguments"),
        (["x + y", "--set", "x=1"], "'y' is not set (give it with --set y=VALUE; set: x)"),
        (["x", "--set", "x"], "--set 'x': expected NAME=VALUE"),
        (["x", "--set", "2x=1"], "--set '2x=1': expected NAME=VALUE"),
        (["x", "--set", "x=abc"], "--set x=abc: not a number"),
        (["x", "--set", "x=inf"], "--set x=inf: needs a finite number"),
        (["x", "--set", "x=1", "--set", "x=2"], "--set x: given twice"),
        (["x", "--set", "x=1", "-o", "out.pdf"], "unknown file type '.pdf'"),
        (["x^2", "--set", "x=1"], "expression: '^' is bitwise xor in Python, not a power; "
                                  "did you mean x**2?"),
        (["x^2 + 1", "--set", "x=1"], "did you mean x**2 + 1?"),  # not x**(2 + 1)
        (["", "--set", "x=1"], 'expression: it is empty; write one, e.g. "(x*w + b).tanh()"'),
        (["  ", "--set", "x=1"], "expression: it is empty"),
        (["0x" + "f" * 5000], "expression: a number of 6021 digits is too large for a float, "
                              "needs |x| < 1.8e308"),
        (["x**-0x" + "f" * 5000, "--set", "x=2"], "a number of 6021 digits is too large"),
        (["x * 1" + "0" * 400, "--set", "x=2"], "a number 10000000000000000... (401 digits) "
                                                "is too large for a float"),
        (["x.log()", "--set", "x=0"], "log: got 0.0, needs x > 0"),
        (["x.sqrt()", "--set", "x=0"], "backward: sqrt: the gradient is not finite"),
        (["x*x*x", "--set", "x=1", "--max-nodes", "2"], "has 3 Values, more than --max-nodes 2"),
        (["x", "--set", "x=1", "--max-nodes", "0"], "--max-nodes must be at least 1, got 0"),
        (["x**10**10", "--set", "x=2"], "**: 2.0 ** 10000000000.0 overflows a float"),
        (["x * 1e400", "--set", "x=2"], "a number literal (it rounds to inf) is too large"),
        (["x * " + "9" * 400, "--set", "x=2"], "(400 digits) is too large for a float"),
        (["x * " + "9" * 5000, "--set", "x=2"],
         "a number of more than 4300 digits is too large for a float"),
        (["x", "--set", "x=abc" + "1" * 3600],
         "--set x=abc" + "1" * 34 + "... (3603 characters): not a number"),
        (["fi", "--set", "ﬁ=1", "--set", "fi=2"], "--set fi: given twice"),
        (["(" * 300 + "x" + ")" * 300, "--set", "x=1"], "nested"),
        (["x" + "**x" * 3000, "--set", "x=1"], "nested too deeply"),
        (["x", "--set", "x=1", "--timeout", "0"], "--timeout must be a positive number"),
        (["x", "--set", "x=1", "--naive"], "--naive needs --explain"),
        (["x", "--set", "x=1", "--explain", "--no-backward"], "--explain runs backward"),
        (["x", "--set", "x=1", "-o", "."], "-o .: is a folder; give a file in it"),
        (["x", "--set", "x=1", "--timeout", "inf"], "--timeout must be a positive number"),
        (["x", "--set", "x=1", "--max-segments", "0"], "--max-segments must be at least 1"),
        ([REUSED_300, "--set", "x=1", "-o", "g.svg"],
         "about 89102 edge segments, more than --max-segments 5000"),
        (["x*x*x", "--set", "x=1", "-o", "g.png", "--max-segments", "1"],
         "write -o FILE.html or FILE.dot instead, or raise --max-segments"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(graph(*args)) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("chaingrad graph: error: ")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert message in captured.err
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing run


@pytest.mark.parametrize("fmt", ["dot", "svg", "html"])
def test_a_missing_folder_of_the_output_is_made_as_the_demos_out_is(fmt, tmp_path,
                                                                   monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    output = f"new/sub/g.{fmt}"
    assert main(graph("x*2", "--set", "x=1", "-o", output)) == 0
    assert capsys.readouterr().out == f"wrote {output} (3 values)\n"  # as given: relative
    assert (tmp_path / output).stat().st_size > 0


def test_an_output_that_cannot_be_written_is_one_line_naming_it(tmp_path, monkeypatch,
                                                                 capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    assert main(graph("x*2", "--set", "x=1", "-o", "afile/sub/g.dot")) == 2  # as --out
    assert capsys.readouterr().err == ("chaingrad graph: error: -o afile/sub/g.dot: cannot "
                                       "create the folder (Not a directory)\n")
    assert main(graph("x*2", "--set", "x=1", "-o", "afile/g.dot")) == 2
    assert capsys.readouterr().err == ("chaingrad graph: error: -o afile/g.dot: afile is not "
                                       "a folder\n")
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]
    if os.path.isfile("/proc/version"):  # a folder where no file can be made
        assert main(graph("x*2", "--set", "x=1", "-o", "/proc/version.svg")) == 1
        assert capsys.readouterr().err == ("chaingrad graph: error: cannot write "
                                           "/proc/version.svg: No such file or directory\n")


def test_an_output_that_is_a_folder_exits_2_naming_it(tmp_path, capsys):
    folder = tmp_path / "out.svg"
    folder.mkdir()
    assert main(graph("x*2", "--set", "x=1", "-o", str(folder))) == 2
    err = capsys.readouterr().err
    assert err == (f"chaingrad graph: error: -o {folder}: is a folder; give a file in it, "
                   f"e.g. -o {folder / 'graph.svg'}\n")
    assert list(folder.iterdir()) == []


@pytest.mark.slow  # lays out 900 values for the html page: ~7 s
def test_a_graph_too_slow_to_lay_out_can_still_be_written_as_dot_or_html(tmp_path):
    for name in ("g.dot", "g.html"):
        assert main(graph(REUSED_300, "--set", "x=1", "-o", str(tmp_path / name))) == 0
    assert (tmp_path / "g.dot").read_text().count("  n0 -> ") == 300  # x, used 300 times


@pytest.mark.parametrize(
    ("expression", "python"),
    [
        ("-x*2", lambda x: -x * 2),
        ("-x", lambda x: -x),
        ("-(x+1)", lambda x: -(x + 1)),
        ("-2*x", lambda x: -2 * x),
    ],
)
def test_an_expression_may_start_with_a_minus(tmp_path, expression, python):
    out = tmp_path / "g.dot"
    assert main(graph(expression, "--set", "x=1.5", "-o", str(out))) == 0
    expected = parse_expression(expression, {"x": 1.5})
    expected.backward()
    assert out.read_text() == to_dot(expected, rankdir="auto")
    x = Value(1.5, label="x")
    assert expected.data == python(x).data
    assert main(graph("--set", "x=1.5", expression, f"-o{out}")) == 0  # -oFILE is still -o


def readme_graph_command() -> list[str]:
    """The arguments of the ``chaingrad graph ...`` command of docs/backprop.md (its bash
    block: lines joined at their backslashes, comments dropped), without the program's name."""
    readme = (Path(__file__).parents[2] / "docs" / "backprop.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```bash\n(.*?)```", readme, re.S)
                 if "chaingrad graph" in b)
    command = next(line for line in block.replace("\\\n", " ").splitlines()
                   if line.startswith("chaingrad graph"))
    return shlex.split(command, comments=True)[1:]


def test_checked_in_neuron_pictures_are_what_the_readmes_command_draws(tmp_path, monkeypatch,
                                                                        graphviz_pure):
    """docs/images/neuron.svg and .png are what the README's command writes (bytes are the
    same on every platform with graphviz-pure): regenerate them if this fails."""
    monkeypatch.setattr(render, "find_renderer", lambda *args, **kw: graphviz_pure)
    images = Path(__file__).parents[2] / "docs" / "images"
    args = readme_graph_command()
    at = args.index("-o")
    assert args[at + 1] == "neuron.svg" and args[1] == NEURON
    for suffix in ("svg", "png"):
        out = tmp_path / f"neuron.{suffix}"
        args[at + 1] = str(out)
        assert main(args) == 0
        assert out.read_bytes() == (images / f"neuron.{suffix}").read_bytes(), (
            f"docs/images/neuron.{suffix} is stale: run the README's chaingrad graph command "
            f"with -o docs/images/neuron.{suffix}")
    # the README's column is ~900 px wide: a wider picture is scaled down to unreadable text
    width = ET.parse(images / "neuron.svg").getroot().get("width")
    assert width.endswith("pt") and float(width[:-2]) * 4 / 3 <= 900, width


def test_missing_renderer_exits_1_with_what_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(render, "find_renderer", lambda: None)
    assert main(graph("x*2", "--set", "x=1", "-o", str(tmp_path / "g.svg"))) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'chaingrad[viz]'" in err
    assert list(tmp_path.iterdir()) == []


def test_a_layout_over_the_timeout_exits_1_with_one_line(tmp_path, capsys):
    hanging = tmp_path / "slow-dot"
    hanging.write_text("#!/bin/sh\nexec sleep 600\n")
    hanging.chmod(0o755)
    out = tmp_path / "g.svg"
    args = graph("x*2", "--set", "x=1", "-o", str(out), "--timeout", "0.5")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(render, "find_renderer", lambda: str(hanging))
        assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did not finish within 0.5 s" in err
    assert not out.exists()


# ---- the expression language (chaingrad.expr) ----


@pytest.mark.parametrize(
    ("text", "python"),
    [
        ("(x*w + b).tanh()", lambda x, w, b: (x * w + b).tanh()),
        ("tanh(x*w + b)", lambda x, w, b: (x * w + b).tanh()),
        ("x**2 - 3*x/w + -b", lambda x, w, b: x**2 - 3 * x / w + -b),
        ("x ** w + b ** -1.5", lambda x, w, b: x**w + b**-1.5),
        ("relu(x - w).sigmoid() + exp(b).log().sqrt().abs().sin().cos()",
         lambda x, w, b: (x - w).relu().sigmoid() + b.exp().log().sqrt().abs().sin().cos()),
        ("+x - -w", lambda x, w, b: x - -w),
    ],
)
def test_expressions_compute_what_python_computes(text, python):
    values = {"x": 1.5, "w": 0.5, "b": 2.0}
    got = parse_expression(text, values)
    leaves = {name: Value(v, label=name) for name, v in values.items()}
    expected = python(**leaves)
    assert got.data == pytest.approx(expected.data, rel=1e-12)
    got.backward()
    expected.backward()
    got_grads = {n.label: n.grad for n in reading_order(got) if n.label in values}
    assert got_grads == pytest.approx({k: v.grad for k, v in leaves.items() if k in got_grads})


def test_expression_graph_shape():
    out = parse_expression("x**2 + 3", {"x": 2.0})
    square, three = out._prev
    assert (out._op, square._op, three.label, three.data) == ("+", "**2", "3", 3.0)
    assert parse_expression("x**-1", {"x": 2.0})._op == "**-1"
    assert parse_expression("x**y", {"x": 2.0, "y": 3.0})._op == "**"


def test_expression_limits():
    with pytest.raises(ExpressionError, match="at most 10000"):
        parse_expression("x+" * 6000 + "x", {"x": 1.0})
    with pytest.raises(ExpressionError, match="nested"):
        parse_expression("(" * 300 + "x" + ")" * 300, {"x": 1.0})
    with pytest.raises(TypeError, match="expression: must be a str, got int"):
        parse_expression(3, {})
    assert issubclass(ExpressionError, ValueError)


# ---- names and numbers as Python reads them (issue 13, point 12) ----


def test_a_name_python_normalises_matches_its_set(tmp_path, capsys):
    out = tmp_path / "g.dot"
    # Python's parser reads the ligature ﬁ (U+FB01) as "fi" (NFKC), in the expression and
    # so in --set too
    assert main(graph("ﬁ*2 + ﬁx", "--set", "ﬁ=3", "--set", "ﬁx=1", "-o", str(out))) == 0
    assert capsys.readouterr().err == ""  # nothing "set but not used"
    assert '"{ fi | data 3.0000 | grad 2.0000 }"' in out.read_text()
    assert parse_expression("ﬁ * 2", {"ﬁ": 3.0}).data == 6.0
    with pytest.raises(ExpressionError, match="two variables are the name 'fi' to Python"):
        parse_expression("fi", {"ﬁ": 1.0, "fi": 2.0})


def test_a_flat_sum_of_3000_terms_is_not_nested_too_deeply(tmp_path):
    text = "+".join(f"x{i % 3}" for i in range(3000))
    variables = {"x0": 1.0, "x1": 2.0, "x2": 3.0}
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # above what parse_expression sets while it parses
    try:
        ast.parse(text, mode="eval")
    except RecursionError:  # CPython 3.12's own parser stops short of it, at any limit
        with pytest.raises(ExpressionError, match=r"^expression: nested too deeply$"):
            parse_expression(text, variables)
        return
    finally:
        sys.setrecursionlimit(limit)
    out = parse_expression(text, variables)
    assert out.data == 1000 * 6.0 and out._op == "+"
    dot = tmp_path / "g.dot"
    assert main(graph(text, "--set", "x0=1", "--set", "x1=2", "--set", "x2=3",
                      "--max-nodes", "3002", "-o", str(dot))) == 0
    assert dot.read_text().count("_op [label=\"+\"") == 2999


ONES = repr(float("1" * 300))  # 1.1111111111111112e+299


@pytest.mark.parametrize(
    ("text", "value", "shown"),
    [
        ("x**" + "1" * 300, 2.0, f"**{ONES}: 2.0 ** {ONES} overflows a float"),
        ("x**-" + "1" * 300, 0.0, f"**-{ONES}: got base 0.0 and exponent -{ONES}"),
    ],
)
def test_a_huge_integer_exponent_is_named_as_a_float_not_printed_in_full(text, value, shown,
                                                                         capsys):
    assert main(graph(text, "--set", f"x={value}")) == 2
    err = capsys.readouterr().err
    assert shown in err and "1" * 20 not in err and len(err) < 200, err


def test_huge_integers_become_floats_and_long_literals_are_labelled_by_value():
    # Python computes x ** n and x * n in floats anyway: an int beyond 2**53 changes nothing
    big = 10**20 + 1
    out = parse_expression(f"x**{big}", {"x": 1.0})
    assert out._op == "**1e+20" and out.data == 1.0 ** big
    out = parse_expression("x * " + "1" * 300 + " + x * 12", {"x": 1.0})
    labels = {n.label for n in reading_order(out) if not n._prev}
    assert labels == {"x", ONES, "12"}
    assert parse_expression("x**3", {"x": 2.0})._op == "**3"  # an exact int stays an int
