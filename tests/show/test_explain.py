"""backward_steps (the real backward, step by step), explain's table, and the naive walk.

Set CHAINGRAD_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples
from ops_table import OP_IDS, OPS, Op

from chaingrad import Value, primitive
from chaingrad.rules import FUNCTIONS, PRIMITIVES
from chaingrad.show.dot import reading_order
from chaingrad.show.explain import backward_steps, explain
from chaingrad.show.naive import naive_backward

GOLDEN = Path(__file__).parents[1] / "golden"


def grads(root: Value) -> list[float]:
    return [node.grad for node in reading_order(root)]


# ---- backward_steps ----

UNARY = {
    "tanh": lambda v: v.tanh(), "sigmoid": lambda v: v.sigmoid(), "sin": lambda v: v.sin(),
    "cos": lambda v: v.cos(), "relu": lambda v: v.relu(), "abs": lambda v: v.abs(),
    "square": lambda v: v**2, "neg": lambda v: -v,
}
BINARY = {"+": lambda a, b: a + b, "*": lambda a, b: a * b, "-": lambda a, b: a - b}
programs = st.tuples(
    st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=3),
    st.lists(
        st.tuples(st.sampled_from(sorted(UNARY) + sorted(BINARY)), st.integers(0, 99),
                  st.integers(0, 99)),
        min_size=1, max_size=12,
    ),
)


def build(program) -> Value:
    """A random graph: each instruction applies an op to earlier nodes (reuse is common)."""
    leaves, instructions = program
    nodes = [Value(x, label=f"v{i}") for i, x in enumerate(leaves)]
    for op, i, j in instructions:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        nodes.append(UNARY[op](a) if op in UNARY else BINARY[op](a, b))
    return nodes[-1]


@examples(60)
@given(programs)
def test_steps_run_the_real_backward(program):
    expected_root = build(program)
    expected_root.backward()
    root = build(program)
    steps = backward_steps(root)
    assert grads(root) == grads(expected_root)  # identical, not merely close
    order = reading_order(root)
    assert len(steps) == sum(1 for node in order if node._prev)
    position = {id(step.node): k for k, step in enumerate(steps)}
    for step in steps:
        assert step.op == step.node._op
        assert len(step.updates) == len(step.node._prev)
        for update, child in zip(step.updates, step.node._prev, strict=True):
            assert update.input is child
            assert math.isclose(update.after, update.before + update.added, abs_tol=1e-12)
            if child._prev:  # a node's _backward runs after every op that uses it
                assert position[id(child)] > position[id(step.node)]


def test_an_input_used_twice_is_updated_twice():
    a = Value(3.0, label="a")
    (step,) = backward_steps(a * a)
    assert [(u.name, u.before, u.after) for u in step.updates] == [
        ("a", 0.0, 3.0), ("a", 3.0, 6.0)]
    assert a.grad == 6.0


def test_steps_accumulate_like_backward_and_show_this_pass(neuron):
    twice, expected = neuron(), neuron()
    backward_steps(twice)
    steps = backward_steps(twice)
    expected.backward()
    expected.backward()
    assert grads(twice) == grads(expected)
    assert steps[-1].updates[0].before == 0.0  # each pass starts from zero
    assert steps[-1].updates[0].after == pytest.approx(-1.5)


def test_steps_without_accumulate_leave_grads_alone(neuron):
    root = neuron()
    for k, node in enumerate(reading_order(root)):
        node.grad = float(k)
    before = grads(root)
    steps = backward_steps(root, accumulate=False)
    assert grads(root) == before
    assert steps[-1].updates[0].after == pytest.approx(-1.5)


def test_deep_chain_needs_no_recursion():
    y = Value(0.5)
    for _ in range(5000):
        y = y * 1.0
    assert len(backward_steps(y)) == 5000


# ---- explain ----


def test_neuron_explanation_matches_golden(capsys, neuron, check_golden):
    text = explain(neuron())
    assert capsys.readouterr().out == text
    check_golden("neuron_explain.txt", text)
    docs = GOLDEN.parent.parent / "docs" / "images" / "neuron_explain.txt"
    assert docs.read_text() == text, "the README's text is stale: regenerate it (see README)"
    assert "* : x1.grad += w1.data * out.grad = -3.0000 * 0.5000 = -1.5000" in text


def test_explanations_fit_100_columns(neuron):
    # the golden files are what explain prints for the README's neuron, b = a + a; c = b + b
    # (naive) and a Tensor MLP, whose log_softmax and transpose updates wrap
    for path in [*sorted(GOLDEN.glob("*explain*.txt")), GOLDEN / "reuse_naive.txt"]:
        widest = max(path.read_text().splitlines(), key=len)
        assert len(widest) <= 100, f"{path.name}: {len(widest)} columns: {widest}"
    steps = backward_steps(neuron(), accumulate=False)
    text = explain(neuron(), file=io.StringIO())
    for step in steps:  # each update still whole on one line, its grad before -> after below
        for update in step.updates:
            change = f"{update.name}.grad: {update.before:.4f} -> {update.after:.4f}"
            assert f"  {update.text(step.op)}\n{' ' * (len(step.op) + 5)}{change}\n" in text


def fenced_blocks(markdown: str) -> list[str]:
    """The text of every fenced code block (```...```) in a Markdown file."""
    return [m.group(1) for m in re.finditer(r"^```[^\n]*\n(.*?)^```$", markdown, re.M | re.S)]


def test_readme_shows_what_explain_prints(neuron):
    readme = (GOLDEN.parent.parent / "docs" / "backprop.md").read_text(encoding="utf-8")
    after = readme.split("chaingrad.explain(o)", 1)
    assert len(after) == 2, "docs/backprop.md no longer shows chaingrad.explain(o)"
    shown = fenced_blocks(after[1])[0]
    assert shown.startswith("Backward of tanh1, step by step"), "not explain's output"
    text = explain(neuron(), file=io.StringIO())
    assert shown == text, "docs/backprop.md's copy of explain(o) is stale: paste " \
        "tests/golden/neuron_explain.txt into it"


def test_explain_adds_gradients_like_backward(neuron):
    root, expected = neuron(), neuron()
    explain(root, file=io.StringIO())
    expected.backward()
    assert grads(root) == grads(expected)
    text = explain(root, file=io.StringIO())
    assert "(.grad already held gradients; this pass was added to them)" in text


def _point(op: Op) -> list[float]:
    return [lo + 0.37 * (hi - lo) for (lo, hi), *_ in op.domains]


def _evaluate(numbers: str) -> float:
    # the text is our own formatted output, not user input: evaluate it to check the maths
    names = {name: prim.forward for name, prim in FUNCTIONS.items()}  # cos, log, ... on floats
    names |= {"sign": lambda x: math.copysign(1.0, x) if x else 0.0, "__builtins__": {}}
    return float(eval(numbers, names))  # noqa: S307


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_each_formula_filled_with_numbers_computes_the_update(op):
    leaves = [Value(x, label=name) for x, name in zip(_point(op), "xy", strict=False)]
    out = op.fn(*leaves) * 1.7  # an upstream gradient other than 1
    for step in backward_steps(out):
        assert step.op in {p.name for p in PRIMITIVES} or step.op.startswith("**"), step.op
        for update in step.updates:
            text = update.text(step.op)
            assert text.startswith(f"{step.op} : {update.name}.grad += "), text
            assert "out.grad" in update.formula and update.numbers, text
            assert math.isclose(_evaluate(update.numbers), update.added, rel_tol=2e-3,
                                abs_tol=2e-3), text


def test_user_primitive_gets_the_generic_formula():
    square = primitive(lambda x: x * x, lambda xs, out, g: (2 * xs[0] * g,), name="square")
    x = Value(3.0, label="x")
    text = explain(square(x), file=io.StringIO())
    assert "square : x.grad += d(out)/d(x) * out.grad = 6.0000 * 1.0000 = 6.0000" in text


def test_hand_written_backward_closure_is_shown():
    x = Value(3.0, label="x")
    out = Value(x.data * 2, (x,), "double")

    def _backward() -> None:
        x.grad += 2 * out.grad

    out._backward = _backward
    text = explain(out, naive=True, file=io.StringIO())
    assert "double : x.grad += (its hand-written _backward) = 2.0000" in text
    assert x.grad == 2.0 and out.grad == 1.0  # the naive walk borrowed and restored them


def test_explain_rejects_a_non_value(neuron):
    with pytest.raises(TypeError, match="explain: root must be a Value, got int"):
        explain(3)
    with pytest.raises(TypeError, match="explain: naive must be True or False, got str 'yes'"):
        explain(neuron(), naive="yes")
    with pytest.raises(TypeError, match="backward_steps: root must be a Value, got str"):
        backward_steps("x")


# ---- the naive recursive algorithm ----


def test_naive_walk_overcounts_a_reused_node_without_touching_grads(reuse):
    root = reuse()
    a = reading_order(root)[0]
    run = naive_backward(root)
    assert [n.label for n in run.calls] == ["c", "b", "b"]
    assert run.grads[id(a)] == 8.0 and not run.stopped
    assert grads(root) == [0.0, 0.0, 0.0]


def test_naive_explanation_matches_golden_and_marks_the_difference(reuse, check_golden):
    root = reuse()
    text = explain(root, naive=True, file=io.StringIO())
    check_golden("reuse_naive.txt", text)
    row = next(line for line in text.splitlines() if line.startswith("a "))
    assert row.split() == ["a", "leaf", "-", "4.0000", "8.0000", "<-", "differs"]
    assert "They differ at a" in text
    assert reading_order(root)[0].grad == 4.0  # the real backward ran once


def test_naive_and_correct_agree_on_a_tree(neuron):
    text = explain(neuron(), naive=True, file=io.StringIO())
    assert "They agree on this graph" in text and "<- differs" not in text


def test_naive_walk_stops_on_exponentially_many_paths():
    x = Value(1.0, label="x")
    for _ in range(40):
        x = x + x
    run = naive_backward(x, max_calls=500)
    assert run.stopped and len(run.calls) == 500
    assert "stopped after 10000 calls" in explain(x, naive=True, file=io.StringIO())
