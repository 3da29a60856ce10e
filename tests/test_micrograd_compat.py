"""chaingrad next to micrograd 0.1.0: the same training run, the same numbers.

The training loop follows the recipe of micrograd's demo notebook (two moons, an
MLP(2, [16, 16, 1]), a max-margin loss with L2 regularisation, plain SGD with a decaying
learning rate), written once and handed either package's ``Value`` and ``MLP``.
"""

from __future__ import annotations

import gc
import random

import numpy as np
import pytest
from ops_table import close

import chaingrad
import chaingrad.nn

micrograd_engine = pytest.importorskip("micrograd.engine")
micrograd_nn = pytest.importorskip("micrograd.nn")

STEPS = 5


def _two_moons() -> tuple[np.ndarray, np.ndarray]:
    """The demo's data set, labels in {-1, 1}; seeds numpy's and Python's RNGs first."""
    datasets = pytest.importorskip("sklearn.datasets")
    np.random.seed(1337)
    random.seed(1337)
    points, labels = datasets.make_moons(n_samples=100, noise=0.1)
    return points, labels * 2 - 1


def _train(value_cls, mlp_cls, steps: int = STEPS) -> list[tuple[float, float]]:
    """Run ``steps`` full-batch SGD steps; return (loss, accuracy) before each update."""
    points, labels = _two_moons()
    model = mlp_cls(2, [16, 16, 1])  # its weights come from the freshly seeded `random`
    history = []
    for step in range(steps):
        scores = [model([value_cls(coord) for coord in row]) for row in points]
        pairs = list(zip(labels, scores, strict=True))
        hinge = [(1 + -label * score).relu() for label, score in pairs]
        data_loss = sum(hinge) * (1.0 / len(hinge))
        l2 = 1e-4 * sum(p * p for p in model.parameters())
        total = data_loss + l2
        correct = [(label > 0) == (score.data > 0) for label, score in pairs]

        model.zero_grad()
        total.backward()
        learning_rate = 1.0 - 0.9 * step / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        history.append((float(total.data), sum(correct) / len(correct)))
    return history


def test_demo_training_matches_micrograd() -> None:
    # micrograd's closures make every node a reference cycle, and the cyclic collector
    # then spends ~80% of its step walking the graph: pause it (the numbers are the same)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        theirs = _train(micrograd_engine.Value, micrograd_nn.MLP)
        ours = _train(chaingrad.Value, chaingrad.nn.MLP)
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()
    assert len(ours) == len(theirs) == STEPS
    for step, ((loss, acc), (ref_loss, ref_acc)) in enumerate(zip(ours, theirs, strict=True)):
        assert abs(loss - ref_loss) <= 1e-12, f"step {step}: {loss} vs {ref_loss}"
        assert acc == ref_acc, f"step {step}: accuracy {acc} vs {ref_acc}"
    assert ours[-1][0] < ours[0][0]  # and it is learning


def test_same_seed_gives_micrograds_initial_weights() -> None:
    random.seed(42)
    theirs = micrograd_nn.MLP(3, [4, 4, 1])
    random.seed(42)
    ours = chaingrad.nn.MLP(3, [4, 4, 1])
    assert [p.data for p in ours.parameters()] == [p.data for p in theirs.parameters()]
    assert repr(ours) == repr(theirs)


# ---- hand-made expressions: chaingrad == torch (and micrograd) ----


def _expression_one(a, b):
    c = a * b + b**3
    d = (c - 4).relu() + (2 - a) * (a + 1).relu()
    e = 3 / (b + 1) - d / 7
    f = -e + 2 * c
    g = (f * f).relu() / 10 + a**2 - (1 + b) * -a
    return g + g * a + 5 - c


def _expression_two(x, y):
    z = (x + y) ** 2 - x * y * 3
    w = z / (y**2 + 1) + (z - 1).relu() * 0.5
    v = 10 - w * 2 + (-z).relu()
    u = v**3 / 100 + 1 / (x * x + 2) - y
    return u + u * w - (-u).relu()


CASES = [
    ("one", _expression_one, (-4.0, 2.0)),
    ("one_other_point", _expression_one, (1.5, -0.5)),
    ("two", _expression_two, (0.8, -1.7)),
    ("two_other_point", _expression_two, (-2.5, 3.0)),
]


def _evaluate(expression, make, point):
    leaves = [make(x) for x in point]
    out = expression(*leaves)
    out.backward()
    return out.data, [leaf.grad for leaf in leaves]


@pytest.mark.parametrize(("expression", "point"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_expressions_agree_with_torch_and_micrograd(expression, point) -> None:
    torch = pytest.importorskip("torch")
    ours = _evaluate(expression, chaingrad.Value, point)
    theirs = _evaluate(expression, micrograd_engine.Value, point)
    tensors = _evaluate(
        expression,
        lambda x: torch.tensor(x, dtype=torch.float64, requires_grad=True),
        point,
    )
    oracle = tensors[0].item(), [g.item() for g in tensors[1]]
    for name, (value, grads) in (("torch", oracle), ("micrograd", theirs)):
        assert close(ours[0], value), f"{name}: data {ours[0]} vs {value}"
        for i, (g, ref) in enumerate(zip(ours[1], grads, strict=True)):
            assert close(g, ref), f"{name}: grad of input {i}: {g} vs {ref}"
