"""The graph tools on Tensor graphs: to_dot/draw_dot, backward_steps and explain (the
Tensor page of to_html: tests/show/test_page.py).

Tensor graphs are shown with shapes instead of numbers. The Value output must not change:
the last tests rebuild the Value graphs of tests/show/test_dot.py and tests/show/test_explain.py and
compare with their golden files byte for byte. Set CHAINGRAD_UPDATE_GOLDEN=1 to rewrite
this file's golden files after a deliberate change.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples
from tensor_table import OP_IDS, OPS

from chaingrad import Tensor, Value, backward_steps, draw_dot, explain, rules, to_dot
from chaingrad.autodiff import sum_to_shape
from chaingrad.show.dot import node_names, reading_order
from chaingrad.tensor_engine import rules as tensor_rules

GOLDEN = Path(__file__).parents[1] / "golden"
SVG_NS = "{http://www.w3.org/2000/svg}"



def leaves(root: Tensor) -> list[Tensor]:
    return [n for n in reading_order(root) if not n._prev and n.requires_grad]



# ---- to_dot and draw_dot ----


def test_mlp_dot_matches_golden_after_backward(check_golden, tensor_mlp):
    loss = tensor_mlp()
    before = to_dot(loss)
    assert "{ W1 | data (5, 3) float64 | grad None }" in before
    assert "{ x | data (4, 3) float64 | requires_grad=False }" in before
    loss.backward()
    text = to_dot(loss)
    check_golden("tensor_mlp.dot", text)
    assert "{ W1 | data (5, 3) float64 | grad (5, 3) }" in text
    assert "| grad () = 1.0000 }" not in text  # an op's output keeps no .grad, as in torch
    loss = tensor_mlp()
    loss.retain_grad()  # ... unless asked to
    loss.backward()
    assert "| grad () = 1.0000 }" in to_dot(loss)  # a one-element grad shows its value
    again = tensor_mlp()
    again.backward()
    assert text == to_dot(again)  # deterministic: the same graph, same text


def test_dot_shows_float32_and_gradients_that_are_tensors():
    x = Tensor([[1.0, 2.0]], requires_grad=True, label="x")
    y = (x * x).sum()
    y.retain_grad()
    y.backward(create_graph=True)  # x.grad is a Tensor with a graph of its own
    text = to_dot(y)
    assert "{ x | data (1, 2) float32 | grad (1, 2) }" in text
    assert "data () float32 = 5.0000 | grad () = 1.0000" in text


def test_draw_dot_renders_a_tensor_graph_to_svg(graphviz_pure, tensor_mlp):
    loss = tensor_mlp()
    loss.backward()
    svg = draw_dot(loss, renderer=graphviz_pure).pipe()
    tree = ET.fromstring(svg)
    texts = [(el.text or "").strip() for el in tree.iter(f"{SVG_NS}text")]
    for expected in ("W1", "data (5, 3) float64", "grad (5, 3)", "matmul", "log_softmax",
                     "requires_grad=False"):
        assert expected in texts


# ---- backward_steps ----


def grads_of(root: Tensor) -> list:
    return [None if n.grad is None else n.grad.clone() for n in leaves(root)]


def assert_same_grads(left: list, right: list) -> None:
    assert len(left) == len(right)
    for a, b in zip(left, right, strict=True):
        assert (a is None and b is None) or (a.dtype == b.dtype and np.array_equal(a, b))


def test_mlp_steps_give_the_grads_of_backward_and_accumulate_like_it(tensor_mlp):
    by_backward, by_steps = tensor_mlp(), tensor_mlp()
    by_backward.backward(retain_graph=True)
    steps = backward_steps(by_steps)
    assert_same_grads(grads_of(by_steps), grads_of(by_backward))
    assert [s.op for s in steps][:3] == ["/", "neg", "sum"]  # / 4 (a * by 0.25), -x
    by_backward.backward()
    backward_steps(by_steps)  # a second pass adds once more, as backward() does
    assert_same_grads(grads_of(by_steps), grads_of(by_backward))
    before = grads_of(by_steps)
    backward_steps(by_steps, accumulate=False)
    assert_same_grads(grads_of(by_steps), before)


def test_each_update_adds_what_its_rule_gave_summed_to_the_input_shape(tensor_mlp):
    root = tensor_mlp()
    for step in backward_steps(root):
        for u in step.updates:
            assert u.added.shape == u.input.shape and u.result == str(tuple(u.input.shape))
            expected = u.added if u.before is None else u.before + u.added
            np.testing.assert_allclose(u.after, expected, rtol=1e-12)


@examples(3)
@given(data=st.data())
@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_steps_match_backward_for_every_tensor_op(op, data):
    case = data.draw(op.cases())

    def run(by_steps: bool):
        inputs = [Tensor(a, requires_grad=True, label=f"t{i}") for i, a in enumerate(case.arrays)]
        out = op.fn(*inputs, **case.params)
        root = (out * out).sum()  # one element; every input gets a gradient
        if by_steps:
            steps = backward_steps(root)
            assert len(steps) >= 2 and all(s.updates for s in steps)
        else:
            root.backward()
        return [t.grad for t in inputs]

    assert_same_grads(run(True), run(False))


def test_a_non_scalar_root_needs_a_grad_like_backward():
    x = Tensor(np.ones((2, 3)), requires_grad=True, label="x")
    y = x * 2
    with pytest.raises(RuntimeError, match=r"backward_steps: grad can be implicitly created "
                       r"only for scalar outputs \(the output has shape \(2, 3\)"):
        backward_steps(y)
    with pytest.raises(ValueError, match=r"grad has shape \(3,\), the output has shape \(2, 3\)"):
        backward_steps(y, grad=np.ones(3))
    with pytest.raises(RuntimeError, match="explain: grad can be implicitly created"):
        explain(y, file=io.StringIO())
    assert x.grad is None  # nothing ran
    steps = backward_steps(y, grad=np.full((2, 3), 0.5))
    assert steps[0].upstream.shape == (2, 3) and x.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(RuntimeError, match="backward_steps: element 0 of tensors does not require"):
        backward_steps(Tensor([1.0]))
    with pytest.raises(TypeError, match="backward_steps: grad= is for a Tensor root"):
        backward_steps(Value(1.0) * 2, grad=1.0)


def test_a_hand_written_closure_runs_and_is_listed_as_such():
    x = Tensor([1.0, 2.0], requires_grad=True, label="x")
    y = Tensor(x.detach().numpy() * 3, label="triple")
    y.requires_grad, y._a = True, x

    def _backward() -> None:
        x.grad += 3 * y.grad

    y._backward = _backward
    root = y.sum()
    steps = backward_steps(root)
    assert [s.op for s in steps] == ["sum", ""] and x.grad.tolist() == [3.0, 3.0]
    (update,) = steps[1].updates
    assert update.formula == "(its hand-written _backward)" and update.added.tolist() == [3, 3]


# ---- explain ----


def test_mlp_explanation_matches_golden_and_shows_shapes(check_golden, tensor_mlp):
    text = explain(tensor_mlp(), file=io.StringIO())
    check_golden("tensor_mlp_explain.txt", text)
    for line in (
        "seed: loss.grad = ones(())",
        "matmul : transpose1.grad += x.data.T @ out.grad   (3, 5) = (3, 4) @ (4, 5)",
        "matmul : relu1.grad += out.grad @ transpose2.data.T   (4, 5) = (4, 2) @ (2, 5)",
        "+ : b1.grad += sum_to_shape(out.grad, b1.shape)   (5,) = sum_to_shape((4, 5), (5,))",
        # wider than 100 columns on one line: the shapes go on under the input's name
        "transpose : W1.grad += out.grad.transpose(inverse(axes))\n"
        "              (5, 3) = (3, 5).transpose(inverse((1, 0)))",
        "  W1.grad = (5, 3), norm ",
        "  x: requires_grad=False, no gradient",
    ):
        assert line in text


# Ops whose formula is a numpy expression: evaluated, it must give what the step added.
FORMULA_GRAPHS = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: (a * a + 1) ** b, "square": lambda a, b: a**2 + b,
    "matmul": lambda a, b: a @ b.T,
    "batched": lambda a, b: a.reshape(2, 1, 3) @ b.T, "exp": lambda a, b: a.exp() * b,
    "log": lambda a, b: (a * a + 1).log() + b, "tanh": lambda a, b: (a * b).tanh(),
    "sigmoid": lambda a, b: a.sigmoid() - b, "relu": lambda a, b: a.relu() + b.abs(),
    "sqrt": lambda a, b: (a * a + 1).sqrt() * b, "reshape": lambda a, b: a.reshape(3, 2).T * b,
}


@pytest.mark.parametrize("name", FORMULA_GRAPHS)
def test_tensor_formulas_compute_the_update(name):
    a = Tensor(np.array([[0.5, -1.2, 0.8], [1.1, 0.3, -0.7]]), requires_grad=True, label="a")
    b = Tensor(np.array([[0.9, 1.4, 0.6]]), requires_grad=True, label="b")
    out = FORMULA_GRAPHS[name](a, b)
    root = (out * out).sum()
    names = node_names(reading_order(root))
    functions = vars(rules) | vars(tensor_rules) | {"sum_to_shape": sum_to_shape}
    checked = 0
    for step in backward_steps(root):
        rule = step.node._rule
        scope = {names[id(n)]: n for n in step.node._prev}
        scope |= dict(zip(rule.primitive.param_names, rule.params))
        scope |= functions | {"out": SimpleNamespace(data=step.node._value, grad=step.upstream)}
        for u in step.updates:
            if u.formula.startswith(("rule(", "expand(")):
                continue
            value = np.asarray(eval(u.formula, {"__builtins__": {}}, scope))  # our own text
            if value.ndim > u.added.ndim:  # matmul of a batch of rows and one matrix: its
                value = sum_to_shape(value, u.added.shape)  # rule sums the batch as it goes
            np.testing.assert_allclose(np.broadcast_to(value, u.added.shape), u.added,
                                       rtol=1e-12, err_msg=u.text(step.op))
            checked += 1
    assert checked >= 2


def test_explain_tensor_text_for_more_ops():
    x = Tensor(np.linspace(0.1, 1.2, 12).reshape(3, 4), requires_grad=True, label="x")
    y = (x[[0, 2]].exp().sum(axis=1) + x.reshape(4, 3).mean()).softmax()
    text = explain(y, grad=np.ones(2), file=io.StringIO())
    assert "seed: softmax1.grad = grad= (2,), norm 1.4142" in text
    assert "getitem : x.grad += scatter(out.grad, index, x.shape)   (3, 4) = scatter(" in text
    assert ("sum : exp1.grad += expand(out.grad, axes, exp1.shape)   (2, 4) = "
            "expand((2,), (1,), (2, 4))") in text
    assert "reshape : x.grad += out.grad.reshape(x.shape)   (3, 4) = (4, 3).reshape((3, 4))" in text


def test_explain_naive_is_for_values_only():
    x = Tensor([2.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"naive=True is for Value graphs only.*shape \(1,\)"):
        explain(x * x, naive=True, file=io.StringIO())
    assert x.grad is None


def test_user_primitive_on_tensors_gets_the_generic_formula():
    from chaingrad import primitive

    cube = primitive(lambda x: x**3, lambda xs, out, g: (3 * xs[0] ** 2 * g,), name="cube")
    x = Tensor([1.0, 2.0], requires_grad=True, label="x")
    text = explain(cube(x).sum(), file=io.StringIO())
    assert "cube : x.grad += d(out)/d(x) * out.grad   (2,) = rule(..., (2,))[0]" in text


# ---- the Value output is unchanged ----




def test_value_graphs_give_byte_identical_golden_output(neuron, reuse):
    out = neuron()
    out.backward()
    assert to_dot(out) == (GOLDEN / "neuron.dot").read_text()
    assert to_dot(reuse()) == (GOLDEN / "reuse.dot").read_text()
    x = Value(1.5, label='x {1} | "<q>"')
    assert to_dot((x - 2) * x**2 / 4, rankdir="TB") == (GOLDEN / "escape_tb.dot").read_text()
    assert explain(neuron(), file=io.StringIO()) == (GOLDEN / "neuron_explain.txt").read_text()
    naive = explain(reuse(), naive=True, file=io.StringIO())
    assert naive == (GOLDEN / "reuse_naive.txt").read_text()
