"""The scalar engine: every op of the table against finite differences and PyTorch, then
the graph mechanics that micrograd users rely on (node reuse, diamonds, repeated backward,
the lecture's by-hand walk-through, deep chains, no_grad, numpy scalars, identity)."""

from __future__ import annotations

import math
import operator
import sys
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples
from ops_table import (
    OP_IDS,
    OPS,
    Op,
    agrees_with_numeric,
    close,
    engine_grads,
    numeric_grads,
)

import chaingrad
from chaingrad import Value, no_grad
from chaingrad.autodiff import topological_order

PER_OP = examples(60)




# ---- the table: finite differences, grad() and PyTorch ----


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@PER_OP
@given(data=st.data())
def test_gradient_matches_central_differences(op: Op, data: st.DataObject) -> None:
    point = data.draw(op.points(), label="point")
    _, analytic = engine_grads(op.fn, point)
    numeric = numeric_grads(op.fn, point)
    for i, (a, n) in enumerate(zip(analytic, numeric, strict=True)):
        assert agrees_with_numeric(a, n), f"{op.name} input {i} at {point}: {a} vs {n}"


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@PER_OP
@given(data=st.data())
def test_grad_function_equals_backward(op: Op, data: st.DataObject) -> None:
    point = data.draw(op.points(), label="point")
    _, by_backward = engine_grads(op.fn, point)
    leaves = [Value(x) for x in point]
    by_grad = chaingrad.grad(op.fn(*leaves), leaves, allow_unused=True)
    assert [0.0 if g is None else g for g in by_grad] == by_backward
    assert all(leaf.grad == 0.0 for leaf in leaves)  # grad() leaves .grad alone


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@PER_OP
@given(data=st.data())
def test_value_and_gradient_match_torch(torch, op: Op, data: st.DataObject) -> None:
    point = data.draw(op.points(), label="point")
    value, grads = engine_grads(op.fn, point)
    tensors = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in point]
    out = op.torch_fn(*tensors)
    out.backward()
    assert close(value, out.item()), f"{op.name} at {point}: {value} vs {out.item()}"
    for i, (g, t) in enumerate(zip(grads, tensors, strict=True)):
        expected = 0.0 if t.grad is None else t.grad.item()
        assert close(g, expected), f"{op.name} d/dx{i} at {point}: {g} vs {expected}"


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_op_output_is_a_fresh_float_node_reaching_its_inputs(op: Op) -> None:
    point = [lo + 0.25 * (hi - lo) for (lo, hi), *_ in op.domains]
    leaves = [Value(x) for x in point]
    out = op.fn(*leaves)
    assert isinstance(out, Value)
    assert isinstance(out.data, float)
    assert out.grad == 0.0
    assert all(leaf in set(topological_order(out)) for leaf in leaves)


def test_op_names() -> None:
    x, y = Value(2.0), Value(3.0)
    assert (x + y)._op == "+"
    assert (x * y)._op == "*"
    assert (x**y)._op == "**"
    assert (x**2)._op == "**2"
    assert (x**-1.5)._op == "**-1.5"
    assert x.relu()._op == "ReLU"
    for name in ("tanh", "sigmoid", "exp", "log", "sqrt", "abs", "sin", "cos"):
        assert getattr(x, name)()._op == name
    assert (x - y)._op == "+"  # composites: x + (-y), x * y**-1, x * -1
    assert (x / y)._op == "*"
    assert (-x)._op == "*"


# ---- node reuse, diamonds, repeated backward ----


def test_a_plus_a_gives_two() -> None:
    a = Value(3.0)
    b = a + a
    b.backward()
    assert a.grad == 2.0


def test_reuse_twice_gives_four() -> None:
    a = Value(-1.5)
    b = a + a
    c = b + b
    c.backward()
    assert (c.data, b.grad, a.grad) == (-6.0, 2.0, 4.0)


def test_self_product() -> None:
    a = Value(3.0)
    (a * a).backward()
    assert a.grad == 6.0


def test_diamond() -> None:
    a = Value(0.7)
    b = a * 2
    c = a.exp()
    d = b * c  # d = 2a e^a
    d.backward()
    assert close(a.grad, 2 * math.exp(0.7) + 2 * 0.7 * math.exp(0.7))


def test_ladder_of_diamonds_is_linear_not_exponential() -> None:
    # each rung uses y twice: 2**40 paths, which only a topological walk can afford
    x = Value(0.3)

    def ladder(v: Value) -> Value:
        for _ in range(40):
            v = (v.tanh() + v) * 0.5
        return v

    ladder(x).backward()
    (numeric,) = numeric_grads(ladder, [0.3])
    assert abs(numeric) > 0.1  # the gradient survives the 40 rungs: the check has teeth
    assert agrees_with_numeric(x.grad, numeric)


def _graph() -> tuple[Value, list[Value]]:
    a, b = Value(0.4, label="a"), Value(-1.3, label="b")
    c = a * b + a  # a reached twice
    d = c.tanh() * c + b**2  # c reached twice: a diamond
    e = d.sigmoid() + (d * a).sin() - 3 / (b * b + 1)
    return e, [a, b, c, d]


def test_repeated_backward_doubles_every_gradient_exactly() -> None:
    root, _ = _graph()
    nodes = topological_order(root)
    root.backward()
    first = [n.grad for n in nodes]
    assert root.grad == 1.0
    root.backward()
    assert [n.grad for n in nodes] == [2 * g for g in first]  # interior nodes too, never 4x
    root.backward()
    assert [n.grad for n in nodes] == [3 * g for g in first]


def test_zeroing_grads_between_backwards_gives_the_same_gradients() -> None:
    root, _ = _graph()
    nodes = topological_order(root)
    root.backward()
    first = [n.grad for n in nodes]
    for n in nodes:
        n.grad = 0.0
    root.backward()
    assert [n.grad for n in nodes] == first


def test_backward_seeds_one() -> None:
    x = Value(2.0)
    y = x * 3
    y.backward()
    assert y.grad == 1.0 and isinstance(y.grad, float)
    assert x.grad == 3.0
    leaf = Value(5.0)
    leaf.backward()
    assert leaf.grad == 1.0


@pytest.mark.slow  # a chain of a million ops
def test_million_op_chain_under_the_default_recursion_limit() -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # CPython's default
    try:
        x = Value(0.5)
        y = x
        for _ in range(1_000_000):
            y = y + x
        y.backward()
        assert y.data == 0.5 * 1_000_001
        assert x.grad == 1_000_001.0
        del y
    finally:
        sys.setrecursionlimit(limit)


# ---- the lecture's walk-through ----


def _neuron() -> dict[str, Value]:
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    x1w1 = x1 * w1
    x2w2 = x2 * w2
    n = x1w1 + x2w2 + b
    o = n.tanh()
    return {"x1": x1, "w1": w1, "x2": x2, "w2": w2, "b": b, "o": o}


def test_walk_through_by_hand_equals_backward() -> None:
    v = _neuron()
    topo: list[Value] = []
    visited: set[Value] = set()

    def build_topo(node: Value) -> None:  # recursive, as in the lecture: the graph is small
        if node not in visited:
            visited.add(node)
            for child in node._prev:
                build_topo(child)
            topo.append(node)

    build_topo(v["o"])
    v["o"].grad = 1.0
    for node in reversed(topo):
        node._backward()

    auto = _neuron()
    auto["o"].backward()
    expected = {"x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0, "b": 0.5}
    assert v["o"].data == pytest.approx(0.7071067811865476, abs=1e-12)
    for name, grad in expected.items():
        assert v[name].grad == pytest.approx(grad, abs=1e-12), name
        assert auto[name].grad == pytest.approx(grad, abs=1e-12), name
        assert v[name].grad == auto[name].grad, name


def test_leaf_backward_is_a_do_nothing_callable() -> None:
    x = Value(1.0)
    x.grad = 2.0
    assert x._backward() is None
    assert x.grad == 2.0


def _cube(v: Value) -> Value:
    """A user op written micrograd's way: it assigns its own _backward closure."""
    out = Value(v.data**3, (v,), "cube")

    def _backward() -> None:
        v.grad += 3 * v.data**2 * out.grad

    out._backward = _backward
    return out


def test_micrograd_style_user_op_works_with_backward() -> None:
    x = Value(1.5)
    y = _cube(x) * 2 + x
    assert y._prev[0]._prev[0]._op == "cube"
    y.backward()
    assert x.grad == pytest.approx(6 * 1.5**2 + 1, abs=1e-12)
    y.backward()  # its closure reads this pass's out.grad: 2x, not 4x
    assert x.grad == pytest.approx(2 * (6 * 1.5**2 + 1), abs=1e-12)


# ---- no_grad ----


def test_no_grad_builds_no_graph() -> None:
    x = Value(2.0)
    with no_grad():
        assert not chaingrad.is_grad_enabled()
        y = (x * 3 + 1).tanh() ** 2 / x - x.exp()
    assert chaingrad.is_grad_enabled()
    assert y._prev == ()
    assert y.data == pytest.approx(math.tanh(7) ** 2 / 2 - math.exp(2))
    assert (x * 3)._prev[0] is x  # recording is back on


def test_no_grad_restores_the_mode_after_an_exception() -> None:
    with pytest.raises(chaingrad.DomainError), no_grad():
        Value(0.0).log()
    assert chaingrad.is_grad_enabled()
    with pytest.raises(RuntimeError), no_grad():
        raise RuntimeError("boom")
    assert chaingrad.is_grad_enabled()


def test_nested_no_grad() -> None:
    with no_grad():
        with no_grad():
            pass
        assert not chaingrad.is_grad_enabled()
    assert chaingrad.is_grad_enabled()


def test_no_grad_in_one_thread_leaves_other_threads_recording() -> None:
    """The mode belongs to a thread, as in PyTorch: another thread's gradients stay right."""
    inside, done = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def quiet() -> None:
        with no_grad():
            inside.set()
            done.wait(10)
            seen["quiet"] = chaingrad.is_grad_enabled()
            seen["quiet_prev"] = (Value(1.0) * 2)._prev

    def busy() -> None:
        inside.wait(10)
        x = Value(2.0)
        (x * x).backward()
        seen["grad"], seen["busy"] = x.grad, chaingrad.is_grad_enabled()
        done.set()

    threads = [threading.Thread(target=quiet), threading.Thread(target=busy)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"grad": 4.0, "busy": True, "quiet": False, "quiet_prev": ()}
    assert chaingrad.is_grad_enabled()


def test_enable_grad_inside_no_grad() -> None:
    with no_grad():
        with chaingrad.enable_grad():
            assert chaingrad.is_grad_enabled()
            assert len((Value(1.0) * 2)._prev) == 2
        assert not chaingrad.is_grad_enabled()
    assert chaingrad.is_grad_enabled()


# ---- numpy scalars as plain numbers ----

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]


@pytest.mark.parametrize("number", [np.float64(1.5), np.int64(3), np.float32(0.5)],
                         ids=["float64", "int64", "float32"])
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value_on_left", [True, False], ids=["value_left", "value_right"])
def test_numpy_scalars_on_either_side(number, op, value_on_left: bool) -> None:
    def apply(x: Value, n: object) -> Value:
        return op(x, n) if value_on_left else op(n, x)

    x = Value(2.0)
    out = apply(x, number)
    assert type(out) is Value
    out.backward()
    reference_x = Value(2.0)
    reference = apply(reference_x, float(number))
    reference.backward()
    assert out.data == reference.data
    assert x.grad == reference_x.grad


def test_numpy_scalar_times_value_in_a_sum() -> None:
    ys = np.array([1, -1])
    xs = [Value(0.5), Value(-2.0)]
    total = sum((1 + -y * x).relu() for y, x in zip(ys, xs, strict=True))
    assert type(total) is Value
    total.backward()
    assert total.data == 0.5 and xs[0].grad == -1.0 and xs[1].grad == 0.0


# ---- identity ----


def test_values_hash_by_identity() -> None:
    a, b = Value(1.0), Value(1.0)
    assert a != b and a == a
    assert len({a, b, a}) == 2
    table = {a: "a", b: "b"}
    assert table[a] == "a" and table[b] == "b"
    a.data = 5.0  # mutating a Value does not move it in a dict
    assert table[a] == "a"


def test_prev_keeps_argument_order_and_duplicates() -> None:
    a, b = Value(1.0), Value(2.0)
    assert type((a * b)._prev) is tuple
    ab, ba, aa = (a * b)._prev, (b * a)._prev, (a + a)._prev
    assert ab[0] is a and ab[1] is b
    assert ba[0] is b and ba[1] is a
    assert len(aa) == 2 and aa[0] is a and aa[1] is a
    p = a**b
    assert p._prev[0] is a and p._prev[1] is b


# ---- x ** y at the edge of its domain ----


@pytest.mark.parametrize("create_graph", [False, True])
def test_value_exponent_zero_at_base_zero_has_zero_gradients(create_graph: bool) -> None:
    # x**0 is 1 everywhere, so d/dx is 0; torch.pow gives (1, [0, 0]) here, and x**0 with a
    # number exponent already gives 0.
    x, y = Value(0.0), Value(0.0)
    out = x**y
    out.backward(create_graph=create_graph)
    grads = [getattr(g, "data", g) for g in (x.grad, y.grad)]
    assert (out.data, *grads) == (1.0, 0.0, 0.0)
