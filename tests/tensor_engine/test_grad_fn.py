"""grad_fn and next_functions: the graph walked backward as torch's tutorials walk it
(``loss.grad_fn.next_functions[0][0]``), compared with torch's walk where chaingrad's ops
are torch's (their names, the inputs that take no gradient, the leaves reached through
AccumulateGrad)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as cnn
from chaingrad import Tensor, no_grad


def walk(fn, leaves: list) -> object:
    """A grad_fn and everything below it as nested lists: ``[name, children...]``, a leaf
    as ``('leaf', its position in leaves)``, an input without gradient as None."""
    if fn is None:
        return None
    if not fn.next_functions:
        return ("leaf", next(i for i, t in enumerate(leaves) if t is fn.variable))
    return [fn.name(), *(walk(child, leaves) for child, index in fn.next_functions
                         if index == 0)]


GRAPHS = {  # each: a function of (torch-like module, x, y, w) -> a scalar
    "mul, add, relu, sum": lambda t, x, y, w: ((x * 2 + w).relu() * y).sum(),
    "matmul, tanh, exp, log": lambda t, x, y, w: (x @ y).tanh().exp().log().sum(),
    "cat, sigmoid, pow, neg": lambda t, x, y, w: (-(t.cat([x, y, w]).sigmoid() ** 2)).sum(),
    "a tensor used twice": lambda t, x, y, w: (x * x + x).sum(),
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_next_functions_walk_the_graph_as_torchs(torch, name) -> None:
    walks = []
    for module in (chaingrad, torch):
        data = [np.linspace(0.1, 0.9, 4, dtype=np.float32).reshape(2, 2) + k for k in range(3)]
        x, y = (module.tensor(d, requires_grad=True) for d in data[:2])
        w = module.tensor(data[2])  # takes no gradient
        walks.append(walk(GRAPHS[name](module, x, y, w).grad_fn, [x, y]))
    assert walks[0] == walks[1]


INDICES = {  # x[...] of a (4, 5, 6) tensor, as source text: the same for both libraries
    "0", "-1", "lib.tensor(1)", "0, 1", "0, 0, 0", ":, 0", ":3, 0", "0, :", "0, :3", "0, :, 1",
    ":", "0:4", ":10", ":, :", ":, 0:5", ":, :10", ":, 0:5:1", "0, -5:", ":, :-1", "0, 0, ::2",
    "...", "()", "..., 0", "0, ...", "..., 0:6", "None", "0, None", "None, 0", "..., None, 0",
    "0, ..., None", ":, :, :, None", "[0, 1]", "[0, 1], 0", "0, 1:3, [1]", "x > 0", "True",
    "lib.tensor(True)", "lib.tensor([2, 0])",
}


@pytest.mark.parametrize("index", sorted(INDICES))
def test_grad_fn_of_indexing_names_the_view_torch_applies_last(torch, index) -> None:
    """Select for an int, Slice for a slice (one over a whole dim, in a tuple, is no view),
    Unsqueeze for None, Alias for none of them, Index for an advanced index."""
    names = []
    for lib in (chaingrad, torch):
        x = lib.ones(4, 5, 6, requires_grad=True)
        names.append(eval(f"x[{index}]", {"lib": lib, "x": x}).grad_fn.name())
    assert names[0] == names[1]


def test_a_grad_fn_is_the_same_at_each_access_and_a_leaf_has_none() -> None:
    x = chaingrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    assert y.grad_fn == y.grad_fn and hash(y.grad_fn) == hash(y.grad_fn)
    assert y.grad_fn != y.exp().grad_fn and x.grad_fn is None
    accumulate = y.grad_fn.next_functions[0][0]
    assert accumulate.variable is x and accumulate.next_functions == ()
    assert accumulate.name() == "torch::autograd::AccumulateGrad"
    assert repr(accumulate).startswith("<AccumulateGrad object at 0x")
    assert repr(y.grad_fn).startswith("<ExpBackward0 object at 0x")


def test_the_blitzs_walk_from_a_networks_loss_reaches_every_parameter() -> None:
    """The blitz prints loss.grad_fn, then .next_functions[0][0] twice: every path down
    ends at a parameter's AccumulateGrad."""
    cnn.manual_seed(0)
    net = cnn.Sequential(cnn.Conv2d(1, 2, 3), cnn.ReLU(), cnn.MaxPool2d(2), cnn.Flatten(),
                         cnn.Linear(8, 3))
    loss = cnn.MSELoss()(net(chaingrad.randn(1, 1, 6, 6)), chaingrad.zeros(1, 3))
    assert loss.grad_fn.next_functions[0][0].next_functions[0][0] is not None
    reached, stack = set(), [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if hasattr(fn, "variable"):
            reached.add(id(fn.variable))
        stack.extend(child for child, _ in fn.next_functions if child is not None)
    assert reached == {id(p) for p in net.parameters()}


def test_grad_fn_names_the_new_ops_as_torch_does() -> None:
    x = Tensor([0.5, 0.25], requires_grad=True)
    names = {"Log1PBackward0": x.log1p(), "Expm1Backward0": x.expm1(),
             "ErfBackward0": x.erf(), "LeakyReluBackward0": x.leaky_relu(),
             "GeluBackward0": x.gelu(), "SoftplusBackward0": x.softplus(),
             "CumsumBackward0": x.cumsum(0)}
    for name, out in names.items():
        assert out.grad_fn.name() == name


def test_grad_fn_names_the_op_as_torch_and_is_none_on_leaves(torch) -> None:
    cases = [lambda x: x * 2, lambda x: x + x, lambda x: x**2, lambda x: x.exp(),
             lambda x: x.sum(), lambda x: x.tanh(), lambda x: x.sigmoid(), lambda x: x.relu(),
             lambda x: x.log(), lambda x: x.sin(), lambda x: x.sqrt(), lambda x: x.abs(),
             lambda x: x - x, lambda x: x - 1, lambda x: 1 - x, lambda x: x / x,
             lambda x: x / 2, lambda x: 2 / x, lambda x: -x, lambda x: x.mean()]
    for case in cases:
        mine = case(chaingrad.ones(2, requires_grad=True)).grad_fn
        theirs = case(torch.ones(2, requires_grad=True)).grad_fn
        assert mine.name() == theirs.name()
        assert repr(mine).startswith(f"<{theirs.name()} object at 0x")
    leaf = chaingrad.ones(2, requires_grad=True)
    assert leaf.grad_fn is None and leaf.is_leaf and (leaf * 2).is_leaf is False
    with no_grad():
        assert (leaf * 2).grad_fn is None and (leaf * 2).is_leaf
