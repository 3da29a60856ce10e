"""Hostile inputs to the engines: copies of huge graphs, degenerate kernels, primitives and
gradient checks misused. (Threads: test_autodiff.py; files and the command line: the tests
of chaingrad.serialization, chaingrad.files and chaingrad.cli.)"""

from __future__ import annotations

import copy
import math
import pickle
import random

import numpy as np
import pytest

from chaingrad import GradcheckError, Tensor, Value, gradcheck, primitive
from chaingrad.nn import MLP
from chaingrad.nn.functional import conv2d
from chaingrad.optim import SGD, Adam


@pytest.fixture(scope="module")
def million_node_chain() -> Value:
    x = Value(0.5)
    y = x
    for _ in range(500_000):
        y = (y * 0.999999).relu()
    return y


@pytest.mark.slow  # a graph of a million nodes
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_million_node_graph_refuses_to_be_copied_at_once_and_clearly(million_node_chain, how):
    with pytest.raises(TypeError, match=r"Value: only leaves can be copied or pickled; this one "
                                        r"is the output of 'ReLU'"):
        copy.deepcopy(million_node_chain) if how == "deepcopy" else pickle.dumps(
            million_node_chain)


def test_a_tensor_graph_with_a_sum_refuses_clearly_and_its_leaves_round_trip() -> None:
    x = Tensor([1.0, 2.0], requires_grad=True, label="x")
    y = (x * x).sum()
    y.backward()
    with pytest.raises(TypeError, match="Tensor: only leaves .* output of 'sum'"):
        pickle.dumps(y)
    x.note = "mine"
    back = pickle.loads(pickle.dumps(x))
    assert back.tolist() == [1.0, 2.0] and back.grad.tolist() == [2.0, 4.0]
    assert back.label == "x" and back.note == "mine" and back.requires_grad
    assert copy.deepcopy(x).grad is not x.grad


def test_models_and_optimizers_round_trip_through_copy_and_pickle() -> None:
    def one_step(model: MLP, opt) -> list[float]:
        model.zero_grad()
        model([1.0, -2.0]).backward()
        opt.step()
        return [p.data for p in model.parameters()]

    for make in (lambda ps: SGD(ps, lr=0.1, momentum=0.9), lambda ps: Adam(ps, lr=0.1)):
        random.seed(0)
        model = MLP(2, [4, 1])
        opt = make(model.parameters())
        one_step(model, opt)  # the optimizer now has state (momentum, moments)
        clones = [copy.deepcopy((model, opt)), pickle.loads(pickle.dumps((model, opt)))]
        expected = one_step(model, opt)
        for twin, twin_opt in clones:
            assert one_step(twin, twin_opt) == expected


def test_a_copied_leaf_is_a_leaf_of_its_own() -> None:
    x = Value(2.0, label="x")
    y = x * x
    y.backward()
    twin = copy.deepcopy(x)
    assert (twin.data, twin.grad, twin.label, twin._prev) == (2.0, 4.0, "x", ())
    (twin * 3).backward()
    assert x.grad == 4.0 and twin.grad == 7.0


@pytest.mark.parametrize("shape", [(1, 1, 0, 0), (1, 1, 0, 2), (0, 1, 2, 2)])
def test_conv2d_needs_a_filter_of_at_least_1x1(shape) -> None:
    x = Tensor(np.ones((1, 1, 3, 3)), requires_grad=True)
    with pytest.raises(ValueError, match=r"conv2d: the weight \(.*\) needs at least one filter"):
        conv2d(x, Tensor(np.ones(shape)))


def test_a_primitive_backward_that_returns_a_value_says_so() -> None:
    bad = primitive(lambda x: x * x, lambda xs, out, g: (Value(2 * xs[0]) * g,), name="sq")
    with pytest.raises(TypeError, match="sq: backward returned a Value for gradient 0 in an "
                                        "ordinary backward"):
        bad(Value(3.0)).backward()


def test_gradcheck_says_when_its_own_probe_left_the_domain() -> None:
    with pytest.raises(GradcheckError, match=r"input 0 \(x = 1e-07\): the nudge to -9.*e-07 left "
                                             r"the function's domain \(log: got"):
        gradcheck(lambda x: x.log(), [1e-7])
    with pytest.raises(GradcheckError, match=r"input 0 at index \(0,\): a nudge of eps=1e-06 "
                                             r"left the function's domain \(the function's "
                                             r"value is nan\)"):
        gradcheck(lambda x: x.log().sum(), [np.array([1e-7])])


def test_values_and_tensors_take_attributes_of_their_own() -> None:
    p = Value(1.0)
    p.m, p.v = 0.0, 0.0  # EurekaLabs' AdamW keeps its moments on the parameters
    setattr(p, "_vis_color", "red")  # noqa: B010 - as a visualiser writes it
    assert (p.m, p.v, p._vis_color) == (0.0, 0.0, "red")
    t = Tensor([1.0])
    t.note = "mine"
    assert t.note == "mine" and math.isclose((p * 2).data, 2.0)
