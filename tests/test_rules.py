"""The primitives (chaingrad/rules.py, chaingrad/tensor_engine/rules.py): each formula, read
as Python, computes what its rule computes; every primitive appears in the sample graphs; and
one rule serves floats and arrays alike."""

from __future__ import annotations

import inspect
import math
from types import SimpleNamespace

import numpy as np
import pytest

import chaingrad
from chaingrad import Tensor, Value, autodiff, rules
from chaingrad.declaration import GENERIC_FORMULA, Bound, Primitive
from chaingrad.nn.functional import conv2d, cross_entropy, layer_norm, max_pool2d, nll_loss
from chaingrad.nn.modules.rnn import gru_recurrence, lstm_recurrence, rnn_recurrence
from chaingrad.rules import PRIMITIVES
from chaingrad.tensor_engine import concatenate, stack, where, zero_pad
from chaingrad.tensor_engine import rules as tensor_rules

ALL = PRIMITIVES + tensor_rules.PRIMITIVES
NAMES = vars(rules) | vars(tensor_rules)  # what a formula may call: cos, log, expand, ...


def value_graphs() -> list[Value]:
    x, y = Value(1.3), Value(0.7)
    elementwise = [getattr(x, name)() for name in rules.FUNCTIONS]  # each, from the table
    return [x + y, x * y, x**2.5, x**3, x**y, (x - 2).relu(), (x - 2).abs(), *elementwise]


def tensor_graphs() -> list[Tensor]:
    rng = np.random.default_rng(0)
    a = Tensor(rng.uniform(0.5, 1.5, (2, 3)), requires_grad=True)
    b = Tensor(rng.uniform(0.5, 1.5, (3,)), requires_grad=True)
    w = Tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True)
    e = Tensor(rng.uniform(0.5, 1.5, (2, 3)), requires_grad=True)
    image = Tensor(rng.uniform(-1, 1, (1, 2, 5, 5)), requires_grad=True)
    kernel = Tensor(rng.uniform(-1, 1, (3, 2, 3, 3)), requires_grad=True)
    elementwise = [getattr(a, name)() for name in rules.FUNCTIONS]  # each, from the table
    outs = [a + b, a * b, a**2, a**e, a ** Tensor(np.full((2, 3), 1.5)), (a - 1).relu(),
            (a - 1).abs(), *elementwise, -a, a.mean(axis=0), a @ w, a.sum(axis=1),
            a.max(axis=0), a.min(), a.softmax(),
            a.log_softmax(axis=0), a.clip(0.8, 1.2), a.reshape(3, 2), a.transpose(1, 0),
            a.to(np.float32),
            b.broadcast_to((2, 3)), a[np.array([0, 0, 1])], concatenate([a, e], axis=1),
            stack([a, e]), where(a > 1, a, e), zero_pad(a, [(1, 0), (0, 2)]),
            conv2d(image, kernel, stride=2, padding=1), max_pool2d(image, 2, 1),
            a.cumsum(1), chaingrad.einsum("ij,jk->ik", a, w), chaingrad.einsum("ij->", a),
            (a * 0.5)._apply(tensor_rules.BINARY_CROSS_ENTROPY, e - 0.5),
            cross_entropy(a, np.array([2, 0])), nll_loss(a, np.array([1, -100]), b.detach()),
            a / e, a / 2.0, layer_norm(a, (3,), b, b * 0.5),
            lstm_recurrence(w.reshape(3, 1, 4), a.reshape(6, 1)[:4], b[:1].reshape(1, 1),
                            e[0, :1].reshape(1, 1)),
            lstm_recurrence(w.reshape(3, 1, 4) * 0.5, e.reshape(6, 1)[2:],
                            b[1:2].reshape(1, 1), a[1, :1].reshape(1, 1), reverse=True),
            gru_recurrence(a.reshape(2, 1, 3), e.reshape(6, 1)[:3], b[:1].reshape(1, 1), b,
                           reverse=True),
            gru_recurrence(e.reshape(2, 1, 3), a.reshape(6, 1)[3:], b[1:2].reshape(1, 1)),
            rnn_recurrence(a.reshape(3, 1, 2) - 1, w[:2, :2], e[:1, :2], relu=True),
            rnn_recurrence(e.reshape(3, 1, 2), w[1:3, 2:], a[1:, :2], reverse=True)]
    written = a * 1.0
    written[0, 1:] = e[0, 1:] * 2  # an in-place write in the graph: setitem
    outs.append(written)
    # the ops that only a gradient's graph holds: scatter, fold, unpool
    (g_index,) = chaingrad.grad((a[np.array([0, 0, 1])] ** 2).sum(), [a], create_graph=True)
    g_conv = chaingrad.grad((conv2d(image, kernel, stride=2) ** 2).sum(), [image, kernel],
                            create_graph=True)
    (g_pool,) = chaingrad.grad((max_pool2d(image, 2, 1) ** 2).sum(), [image],
                               create_graph=True)
    return outs + [g_index, *g_conv, g_pool]


def nodes_with_rules(roots: list) -> list:
    seen, found = set(), []
    for root in roots:
        for node in autodiff.topological_order(root):
            if id(node) not in seen and isinstance(node._rule, (Primitive, Bound)):
                seen.add(id(node))
                found.append(node)
    return found


VALUE_NODES = nodes_with_rules(value_graphs())
TENSOR_NODES = nodes_with_rules(tensor_graphs())


def evaluate_formula(node, k: int, g):
    """The formula for input k of node's primitive, evaluated on the node's value (its
    ``_value``, which a formula calls ``.data``)."""
    rule = node._rule
    prim = rule.primitive
    scope = dict(zip(prim.param_names, rule.params)) | {"k": k}
    for name, child in zip("xy", node._prev):
        scope[name] = SimpleNamespace(data=child._value, shape=getattr(child._value, "shape", None))
    scope["out"] = SimpleNamespace(data=node._value, grad=g)
    formula = prim.formulas[min(k, len(prim.formulas) - 1)]
    return eval(formula, dict(NAMES), scope)  # our own formula text: that is the point


@pytest.mark.parametrize("node", VALUE_NODES + TENSOR_NODES,
                         ids=lambda n: f"{n._op}{getattr(n._value, 'shape', '')}")
def test_each_formula_computes_what_its_rule_computes(node) -> None:
    rule = node._rule
    rng = np.random.default_rng(1)
    g = 0.7 if isinstance(node._value, float) else rng.uniform(-1, 1, node._value.shape)
    xs = tuple(child._value for child in node._prev)
    expected = rule.vjp(xs, node._value, g)
    assert len(expected) == len(node._prev)
    for k, want in enumerate(expected):
        if want is None:  # an input that takes no gradient (matmul skips it)
            continue
        got = evaluate_formula(node, k, g)
        np.testing.assert_allclose(np.broadcast_to(got, np.shape(want)), want, rtol=1e-12,
                                   atol=1e-14, err_msg=f"{rule.primitive.name} input {k}")


def test_the_samples_cover_every_primitive() -> None:
    seen = {node._rule.primitive.name for node in VALUE_NODES + TENSOR_NODES}
    assert seen == {p.name for p in ALL}


@pytest.mark.parametrize("prim", PRIMITIVES, ids=lambda p: p.name)
def test_a_shared_rule_gives_on_arrays_what_it_gives_on_floats(prim: Primitive) -> None:
    points = {"ADD": (0.7, -1.3), "MUL": (0.7, -1.3), "POW": (1.3, 0.7)}
    name = next(k for k, v in vars(rules).items() if v is prim)
    xs = points.get(name, (-0.6,) if prim.name in ("abs", "ReLU") else (1.7,))
    params = prim.called().params if prim.defaults else (2.5,) if prim.param_names else ()
    out = prim.forward(*xs, *params)
    on_floats = prim.vjp(xs, out, 0.3, *params)
    on_arrays = prim.vjp(tuple(np.array([x, x]) for x in xs), np.array([out, out]),
                         np.array([0.3, 0.3]), *params)
    for f, a in zip(on_floats, on_arrays, strict=True):
        assert a.tolist() == [f, f]


def test_every_primitive_has_one_formula_per_input_or_one_for_any() -> None:
    for prim in ALL:
        assert prim.formulas and all(isinstance(f, str) and "out.grad" in f
                                     for f in prim.formulas), prim
        assert prim.formulas != (GENERIC_FORMULA,)
        compile(" ; ".join(prim.formulas), prim.name, "exec")


def test_a_bound_rule_carries_its_parameters() -> None:
    rule = rules.POW_N.bind(3)
    assert rule.primitive is rules.POW_N and rule.params == (3,) and rule.name == "**n"
    assert rule.vjp((2.0,), 8.0, 1.0) == (12.0,)
    with pytest.raises(TypeError, match=r"\*\*n: needs parameters \('n',\), got 2 value"):
        rules.POW_N.bind(1, 2)


def test_an_op_finds_its_rule_in_one_hop() -> None:
    x = Value(2.0)
    assert (x * x)._rule is rules.MUL and x.tanh()._rule is rules.TANH
    t = Tensor([[1.0, 2.0]], requires_grad=True)
    assert (t * t)._rule is rules.MUL and (t @ t.T)._rule.primitive is tensor_rules.MATMUL
    assert math.isclose(rules.TANH.forward(0.5), math.tanh(0.5))


def test_a_call_binds_the_parameters_it_gives_and_the_defaults_of_the_others() -> None:
    assert rules.LEAKY_RELU.called().params == (0.01,)
    assert rules.SOFTPLUS.called(2).params == (2.0, 20.0)
    assert rules.SOFTPLUS.called(threshold=5, beta=3).params == (3.0, 5.0)
    assert rules.TANH.called() is rules.TANH
    x = Value(-2.0)
    assert x.leaky_relu(0.5).data == -1.0 and x.leaky_relu()._rule.params == (0.01,)
    assert str(inspect.signature(Value.leaky_relu)) == "(self, negative_slope=0.01)"
    assert str(inspect.signature(Tensor.softplus)) == "(self, beta=1.0, threshold=20.0)"


@pytest.mark.parametrize(("call", "message"), [
    (lambda x: x.leaky_relu(slope=0.2), r"leaky_relu: got an unexpected keyword argument "
                                         r"'slope' \(its parameters are \('negative_slope',\)\)"),
    (lambda x: x.leaky_relu("0.2"), r"leaky_relu: negative_slope must be a number, got '0.2'"),
    (lambda x: x.softplus(1, 2, 3), r"softplus: takes at most 2 parameter\(s\)"),
    (lambda x: x.softplus(2, beta=2), r"softplus: got beta twice"),
    (lambda x: x.leaky_relu(float("nan")), r"negative_slope must be a number, got nan"),
])
def test_a_parameter_that_is_not_one_is_refused_naming_the_op(call, message) -> None:
    for x in (Value(1.0), Tensor([1.0])):
        with pytest.raises(TypeError, match=message):
            call(x)


def test_a_primitive_applied_as_a_function_takes_its_parameters() -> None:
    assert rules.LEAKY_RELU(-2.0, 0.5) == -1.0
    assert rules.LEAKY_RELU(np.array([-2.0, 3.0])).tolist() == [-0.02, 3.0]
    assert rules.LEAKY_RELU(Value(-2.0), negative_slope=0.5).data == -1.0
