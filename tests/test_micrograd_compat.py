"""chaingrad next to micrograd 0.1.0: the same training run, the same numbers.

The training loop follows the recipe of micrograd's demo notebook (two moons, an
MLP(2, [16, 16, 1]), a max-margin loss with L2 regularisation, plain SGD with a decaying
learning rate), written once and handed either package's ``Value`` and ``MLP``; then
micrograd's own test file and demo notebook code, run as they are with the imports renamed.
"""

from __future__ import annotations

import contextlib
import gc
import io
import random
import re

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


@pytest.mark.slow  # the demo's whole training, on both
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
def test_expressions_agree_with_torch_and_micrograd(expression, point, torch) -> None:
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


# ---- micrograd's own files, run as they are with `micrograd` renamed `chaingrad` ----

# micrograd's test/test_engine.py, verbatim (karpathy/micrograd at the 0.1.0 release, MIT
# License, (c) 2020 Andrej Karpathy). Its blank lines keep their spaces: see pyproject.toml.
MICROGRAD_TEST_ENGINE = '''
import torch
from micrograd.engine import Value

def test_sanity_check():

    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xmg, ymg = x, y

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    # forward pass went well
    assert ymg.data == ypt.data.item()
    # backward pass went well
    assert xmg.grad == xpt.grad.item()

def test_more_ops():

    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    amg, bmg, gmg = a, b, g

    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    tol = 1e-6
    # forward pass went well
    assert abs(gmg.data - gpt.data.item()) < tol
    # backward pass went well
    assert abs(amg.grad - apt.grad.item()) < tol
    assert abs(bmg.grad - bpt.grad.item()) < tol
'''

# The code cells of micrograd's demo.ipynb (same release and licence), verbatim but for
# the IPython magic `%matplotlib inline` (not Python). Its recorded output ends with
# "step 99 loss 0.01098..., accuracy 100.0%".
MICROGRAD_DEMO = '''
import random
import numpy as np
import matplotlib.pyplot as plt

from micrograd.engine import Value
from micrograd.nn import Neuron, Layer, MLP

np.random.seed(1337)
random.seed(1337)

# make up a dataset

from sklearn.datasets import make_moons, make_blobs
X, y = make_moons(n_samples=100, noise=0.1)

y = y*2 - 1 # make y be -1 or 1
# visualize in 2D
plt.figure(figsize=(5,5))
plt.scatter(X[:,0], X[:,1], c=y, s=20, cmap='jet')

# initialize a model
model = MLP(2, [16, 16, 1]) # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))

# loss function
def loss(batch_size=None):

    # inline DataLoader :)
    if batch_size is None:
        Xb, yb = X, y
    else:
        ri = np.random.permutation(X.shape[0])[:batch_size]
        Xb, yb = X[ri], y[ri]
    inputs = [list(map(Value, xrow)) for xrow in Xb]

    # forward the model to get scores
    scores = list(map(model, inputs))

    # svm "max-margin" loss
    losses = [(1 + -yi*scorei).relu() for yi, scorei in zip(yb, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    # L2 regularization
    alpha = 1e-4
    reg_loss = alpha * sum((p*p for p in model.parameters()))
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
    return total_loss, sum(accuracy) / len(accuracy)

total_loss, acc = loss()
print(total_loss, acc)

# optimization
for k in range(100):

    # forward
    total_loss, acc = loss()

    # backward
    model.zero_grad()
    total_loss.backward()

    # update (sgd)
    learning_rate = 1.0 - 0.9*k/100
    for p in model.parameters():
        p.data -= learning_rate * p.grad

    if k % 1 == 0:
        print(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")

# visualize decision boundary

h = 0.25
x_min, x_max = X[:, 0].min() - 1, X[:, 0].max() + 1
y_min, y_max = X[:, 1].min() - 1, X[:, 1].max() + 1
xx, yy = np.meshgrid(np.arange(x_min, x_max, h),
                     np.arange(y_min, y_max, h))
Xmesh = np.c_[xx.ravel(), yy.ravel()]
inputs = [list(map(Value, xrow)) for xrow in Xmesh]
scores = list(map(model, inputs))
Z = np.array([s.data > 0 for s in scores])
Z = Z.reshape(xx.shape)

fig = plt.figure()
plt.contourf(xx, yy, Z, cmap=plt.cm.Spectral, alpha=0.8)
plt.scatter(X[:, 0], X[:, 1], c=y, s=40, cmap=plt.cm.Spectral)
plt.xlim(xx.min(), xx.max())
plt.ylim(yy.min(), yy.max())
'''

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _renamed(source: str) -> str:
    """The source with its imports switched from micrograd to chaingrad, nothing else."""
    renamed = source.replace("from micrograd.", "from chaingrad.")
    assert "micrograd" not in renamed
    return renamed


def _run(source: str) -> dict:
    namespace: dict = {"__name__": "micrograd_file"}
    exec(compile(source, "<micrograd file>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("package", ["micrograd", "chaingrad"])
def test_micrograds_own_test_file_passes(package: str) -> None:
    pytest.importorskip("torch")
    source = MICROGRAD_TEST_ENGINE if package == "micrograd" else _renamed(MICROGRAD_TEST_ENGINE)
    namespace = _run(source)
    tests = [f for name, f in namespace.items() if name.startswith("test_")]
    assert len(tests) == 2
    for test in tests:
        test()


def _demo_output(source: str) -> list[str]:
    plt = pytest.importorskip("matplotlib.pyplot")
    pytest.importorskip("sklearn")
    plt.switch_backend("Agg")
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            _run(source)
    finally:
        plt.close("all")
    return out.getvalue().splitlines()


def _same_line(ours: str, theirs: str) -> bool:
    """Equal text, and numbers equal to 1e-12 (micrograd's `_prev` is a set, so its own
    sums come out in a different order from run to run, a few ulps apart)."""
    if _NUMBER.sub("#", ours) != _NUMBER.sub("#", theirs):
        return False
    pairs = zip(_NUMBER.findall(ours), _NUMBER.findall(theirs), strict=True)
    return all(close(float(a), float(b)) for a, b in pairs)


@pytest.mark.slow  # micrograd's whole demo notebook, trained
def test_micrograds_demo_notebook_runs_unchanged(collector_sees_this_test_only) -> None:
    steps = 3  # micrograd is slow: compare the head of the run, then the end with the record
    was_enabled = gc.isenabled()
    gc.disable()  # what is compared is the output: the collector would walk each step's graph
    try:
        ours = _demo_output(_renamed(MICROGRAD_DEMO))
        theirs = _demo_output(MICROGRAD_DEMO.replace("range(100)", f"range({steps})"))
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()
    assert len(ours) == 3 + 100 and len(theirs) == 3 + steps
    for mine, ref in zip(ours, theirs):  # model, parameter count, first loss, first steps
        assert _same_line(mine, ref), f"{mine!r} vs micrograd {ref!r}"
    assert ours[2] == "Value(data=0.8958441028683222, grad=0.0) 0.5"  # micrograd: grad=0
    last = re.fullmatch(r"step 99 loss (\S+), accuracy 100.0%", ours[-1])
    assert last is not None, ours[-1]
    assert abs(float(last.group(1)) - 0.01098) < 5e-5  # the notebook's recorded final loss
