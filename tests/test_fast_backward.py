"""chaingrad/fast_backward.py, the float twin of autodiff.backward: the same gradients, bit for bit,
over every op of the table and over random graphs; the same errors."""

from __future__ import annotations

import math
import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples
from ops_table import OP_IDS, OPS, Op

from chaingrad import DomainError, Value, autodiff, fast_backward, primitive
from chaingrad.nn import MLP


def bits(x: float) -> bytes:
    return struct.pack("<d", x)  # tells -0.0 from 0.0, as == does not


def both_ways(build, accumulate: bool = True) -> tuple[list, list]:
    """The gradients of every node of build()'s graph by the twin and by the readable pass,
    each on a fresh copy of the graph."""
    grads = []
    for fast in (True, False):
        root = build()
        order = autodiff.topological_order(root)
        if fast:
            found = fast_backward.backward(order, 1.0, accumulate)
        else:
            found = autodiff.backward([root], [1.0], accumulate=accumulate)
        grads.append([bits(n.grad) for n in order] if accumulate else
                     sorted(bits(g) for g in found.values()))
    return grads[0], grads[1]


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@examples(40)
@given(data=st.data())
def test_the_twin_gives_the_same_bits_on_every_op(op: Op, data: st.DataObject) -> None:
    point = data.draw(op.points(), label="point")

    def build():
        leaves = [Value(x) for x in point]
        out = op.fn(*leaves)
        return out * out + out * 0.5  # a reused node: gradients that accumulate

    fast, readable = both_ways(build)
    assert fast == readable
    assert both_ways(build, accumulate=False)[0] == both_ways(build, accumulate=False)[1]


def random_graph(seed: int, size: int) -> Value:
    """A random graph of the table's safe ops over a few shared leaves."""
    rng = random.Random(seed)
    nodes = [Value(rng.uniform(0.5, 1.5)) for _ in range(4)]
    for _ in range(size):
        a, b = rng.choice(nodes), rng.choice(nodes)
        kind = rng.randrange(7)
        if kind == 0:
            out = a + b
        elif kind == 1:
            out = a * b * 0.5
        elif kind == 2:
            out = a.tanh()
        elif kind == 3:
            out = (a * a + 1).log()
        elif kind == 4:
            out = a.sigmoid() - b.relu()
        elif kind == 5:
            out = (a - b).abs() + a.sin()
        else:
            out = (a * a + 1).sqrt() ** 1.5
        nodes.append(out)
    return sum(nodes[-5:], nodes[0])


@pytest.mark.parametrize("seed", range(20))
def test_the_twin_gives_the_same_bits_on_random_graphs(seed: int) -> None:
    fast, readable = both_ways(lambda: random_graph(seed, 60))
    assert fast == readable


def test_the_twin_adds_to_what_was_there_as_the_readable_pass_does() -> None:
    random.seed(3)
    model = MLP(3, [4, 1])

    def run(fast: bool) -> list[bytes]:
        for i, p in enumerate(model.parameters()):
            p.grad = 0.25 * i  # gradients left from earlier passes
        out = model([0.5, -1.0, 2.0])
        if fast:
            out.backward()
        else:
            autodiff.backward([out], [1.0])
        return [bits(p.grad) for p in model.parameters()]

    assert run(True) == run(False)


def test_the_twin_hands_a_non_finite_gradient_to_the_checked_pass_which_names_it() -> None:
    for fast in (True, False):
        x = Value(0.0)
        y = x.sqrt() * 2
        x.grad = 5.0
        with pytest.raises(DomainError, match="sqrt: the gradient is not finite"):
            if fast:
                y.backward()
            else:
                autodiff.backward([y], [1.0])
        assert x.grad == 5.0 and y.grad == 0.0  # as it was


def test_a_hand_written_closure_runs_in_both() -> None:
    def build():
        x = Value(3.0)
        out = Value(x.data * 2, (x,), "double")

        def _backward() -> None:
            x.grad += 2 * out.grad

        out._backward = _backward
        return out * out

    assert both_ways(build)[0] == both_ways(build)[1]


def test_a_primitive_that_stops_an_inf_is_caught_by_both() -> None:
    passthrough = primitive(lambda x: x, lambda xs, out, g: (1.0,), name="through")
    for fast in (True, False):
        x = Value(1e-310)
        y = passthrough(x).log()
        with pytest.raises(DomainError, match="log"):
            if fast:
                y.backward()
            else:
                autodiff.backward([y], [1.0])
        assert x.grad == 0.0 and math.isfinite(y.grad)
