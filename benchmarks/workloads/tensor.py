"""The tensor workloads T1-T3, on chaingrad's Tensor, PyTorch (CPU, float32) and numpy.

T1: a training step of an MLP 784-128-10 (ReLU, softmax cross-entropy, SGD lr 0.01) on
random float32 data; T2: a training step of a small CNN on scikit-learn's 8x8 digits;
T3: a chain of 1-element tensor ops, forward and backward per op (the per-op overhead).
T4-T7: the makemore MLP step, the GPT lecture's iteration and nanoGPT's (two ways)
(``lectures``), on chaingrad and torch, and by hand in numpy (``by_hand``).

The caller sets one BLAS/OpenMP thread (environment, before numpy is imported) and
``torch.set_num_threads(1)``. ``make(name, workload, **sizes)`` raises ``engines.MissingError``
(with what to install) when an engine or chaingrad's Tensor API is not there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import by_hand, lectures
from .engines import MissingError, version_of
from .scalar import CLOCKS

LR = 0.01
DIGITS_BATCH = 64


def chaingrad_api() -> dict[str, Any]:
    """chaingrad's Tensor, layers, SGD and a Tensor cross-entropy; MissingError if not there yet.

    A cross-entropy that does not accept Tensors yet is replaced by the same loss written
    with Tensor ops (``log_softmax`` and integer-array indexing); ``api['loss']`` says which.
    """
    import chaingrad

    api: dict[str, Any] = {}
    try:
        api["Tensor"] = chaingrad.Tensor
        layers = _import("chaingrad.nn")
        for name in ("Linear", "Sequential", "ReLU", "Conv2d", "MaxPool2d", "Flatten"):
            api[name] = getattr(layers, name)
        api["SGD"] = _import("chaingrad.optim").SGD
    except (ImportError, AttributeError) as exc:
        raise MissingError(f"chaingrad: the Tensor API (issue 5) is not importable yet ({exc})") \
            from None
    api["seed"] = getattr(layers, "manual_seed", lambda seed: None)
    loss = getattr(_import("chaingrad.losses"), "cross_entropy", None)
    api["cross_entropy"], api["loss"] = _fallback_cross_entropy, "log_softmax + indexing"
    if loss is not None:
        try:
            out = loss(api["Tensor"](np.zeros((2, 3), np.float32), requires_grad=True), [0, 2])
            if isinstance(out, api["Tensor"]):
                api["cross_entropy"], api["loss"] = loss, "chaingrad.losses.cross_entropy"
        except (TypeError, ValueError):
            pass
    return api


def _import(module: str) -> Any:
    import importlib

    return importlib.import_module(module)


def _fallback_cross_entropy(logits: Any, labels: np.ndarray) -> Any:
    return -logits.log_softmax(axis=-1)[np.arange(len(labels)), labels].mean()


def mlp_data(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, 784), dtype=np.float32), rng.integers(0, 10, batch)


def digits_data(batch: int = DIGITS_BATCH) -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise MissingError("T2 needs scikit-learn's bundled digits: pip install scikit-learn") \
            from None
    digits = load_digits()
    images = (digits.images[:batch] / 16.0).astype(np.float32)[:, None, :, :]
    return images, digits.target[:batch]


class StepBlock:
    """A block of ``steps`` consecutive calls of ``step()``; reports ms/step."""

    metrics = ("ms/step",)
    clock = staticmethod(CLOCKS["wall"])

    def __init__(self, step: Any, steps: int):
        self.step, self.steps = step, steps

    def block(self) -> dict[str, float]:
        start = self.clock()
        for _ in range(self.steps):
            self.step()
        return {"ms/step": (self.clock() - start) * 1e3 / self.steps}


def _cg_model(api: dict[str, Any], workload: str) -> Any:
    api["seed"](0)
    if workload == "T1":
        return api["Sequential"](api["Linear"](784, 128), api["ReLU"](), api["Linear"](128, 10))
    return api["Sequential"](
        api["Conv2d"](1, 8, 3, padding=1), api["ReLU"](), api["MaxPool2d"](2),
        api["Conv2d"](8, 16, 3, padding=1), api["ReLU"](), api["MaxPool2d"](2),
        api["Flatten"](), api["Linear"](16 * 2 * 2, 10))


def _torch_model(nn: Any, workload: str) -> Any:
    if workload == "T1":
        return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 2 * 2, 10))


def _chaingrad(workload: str, X: np.ndarray, labels: np.ndarray, steps: int,
               compiled: bool = False) -> Any:
    api = chaingrad_api()
    model = _cg_model(api, workload)
    opt = api["SGD"](model.parameters(), lr=LR)
    Tensor, cross_entropy = api["Tensor"], api["cross_entropy"]

    def loss_of(xb: np.ndarray, yb: np.ndarray) -> Any:
        return cross_entropy(model(Tensor(xb)), yb)

    if compiled:  # traced and compiled at the first step (the untimed warm-up block's)
        import chaingrad

        loss_of = chaingrad.compile(loss_of)

    def step() -> None:
        loss = loss_of(X, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return StepBlock(step, steps), f"loss: {api['loss']}"


def _torch(workload: str, X: np.ndarray, labels: np.ndarray, steps: int) -> Any:
    torch = torch_module()
    torch.manual_seed(0)
    model = _torch_model(torch.nn, workload)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    cross_entropy = torch.nn.functional.cross_entropy
    labels_t = torch.from_numpy(labels)

    def step() -> None:
        loss = cross_entropy(model(torch.from_numpy(X)), labels_t)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return StepBlock(step, steps), ""


def _numpy_mlp(X: np.ndarray, labels: np.ndarray, steps: int) -> Any:
    """T1 by hand in numpy: the forward, the backward and the update written out."""
    rng = np.random.default_rng(0)
    W1 = rng.uniform(-1, 1, (128, 784)).astype(np.float32) / np.float32(28.0)
    b1 = np.zeros(128, np.float32)
    W2 = rng.uniform(-1, 1, (10, 128)).astype(np.float32) / np.float32(np.sqrt(128))
    b2 = np.zeros(10, np.float32)
    rows, n = np.arange(len(labels)), len(labels)

    def step() -> None:
        h = X @ W1.T + b1
        a = np.maximum(h, 0)
        logits = a @ W2.T + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        probs = exp / exp.sum(axis=1, keepdims=True)
        g = probs  # d(mean cross-entropy)/d(logits) = (softmax - onehot) / n
        g[rows, labels] -= 1
        g /= n
        ga = g @ W2
        ga[h <= 0] = 0
        for p, grad in ((W2, g.T @ a), (b2, g.sum(axis=0)), (W1, ga.T @ X),
                        (b1, ga.sum(axis=0))):
            p -= LR * grad  # in place

    return StepBlock(step, steps), "hand-written forward/backward, no autograd"


class TinyOpsT3:
    """T3: a chain of 1-element ops, y = relu(y * w + b) (as S1), forward and backward ns/op."""

    metrics = ("fwd ns/op", "bwd ns/op")
    clock = staticmethod(CLOCKS["wall"])

    def __init__(self, leaf: Any, n_ops: int):
        self.leaf, self.turns = leaf, max(1, n_ops // 3)
        self.n_ops = self.turns * 3

    def block(self) -> dict[str, float]:
        w, b, y = self.leaf(0.999), self.leaf(0.001), self.leaf(0.5)
        start = self.clock()
        for _ in range(self.turns):
            y = (y * w + b).relu()
        built = self.clock()
        y.sum().backward()
        done = self.clock()
        return {"fwd ns/op": (built - start) * 1e9 / self.n_ops,
                "bwd ns/op": (done - built) * 1e9 / self.n_ops}


def _lecture(engine: str, workload: str, batch: int, steps: int) -> tuple[Any, str, str]:
    """T4-T7 (``lectures``), the same code on torch's module or chaingrad's."""
    if engine == "torch":
        module = torch_module()
        label = f"torch {module.__version__}"
    elif engine == "chaingrad":
        import chaingrad as module

        label = f"chaingrad {version_of('chaingrad')}"
    elif engine == "numpy" and workload in ("T4", "T5", "T6", "T7"):
        import chaingrad

        work = by_hand.FLOORS[workload](chaingrad, batch)
        return (StepBlock(work.step, steps), f"numpy {np.__version__} (by hand)",
                "hand-written forward/backward, no autograd")
    else:
        raise MissingError(f"{engine}: no {workload} workload")
    make_step = lectures.STEPS[workload]
    try:
        work = make_step(module, batch)
    except AttributeError as exc:  # an older chaingrad (versions.py) without torch's names
        raise MissingError(f"{engine}: the names {workload} needs are not there ({exc})") \
            from None
    return StepBlock(work.step, steps), label, ""


def torch_module() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MissingError(f"torch: not importable here ({exc}); "
                           "install: pip install torch==2.13.0") from None
    torch.set_num_threads(1)
    return torch


def make(engine: str, workload: str, batch: int = 128, steps: int = 3,
         n_ops: int = 10_002, digits: tuple[Any, Any] | None = None) -> tuple[Any, str, str]:
    """(workload object, row label, note) for ``engine`` in 'chaingrad', 'torch', 'numpy'.

    ``digits``: T2's (images, labels) as ``digits_data`` gives them, already loaded (a
    worker gets them from the main process rather than import scikit-learn again).
    """
    if workload == "T3":
        if engine == "chaingrad":
            Tensor = chaingrad_api()["Tensor"]
            return (TinyOpsT3(lambda x: Tensor([x], requires_grad=True), n_ops),
                    f"chaingrad {version_of('chaingrad')} (float32)", "")
        torch = torch_module()
        leaf = lambda x: torch.tensor([x], requires_grad=True)  # noqa: E731
        return TinyOpsT3(leaf, n_ops), f"torch {torch.__version__} (float32)", ""
    if workload in lectures.STEPS:
        return _lecture(engine, workload, batch, steps)
    if workload == "T1":
        X, labels = mlp_data(batch)
    elif digits is not None:
        X, labels = np.asarray(digits[0], np.float32), np.asarray(digits[1], np.int64)
    else:
        X, labels = digits_data(batch)
    if engine == "chaingrad":
        work, note = _chaingrad(workload, X, labels, steps)
        return work, f"chaingrad {version_of('chaingrad')}", note
    if engine == "chaingrad-compiled" and workload == "T1":
        work, note = _chaingrad(workload, X, labels, steps, compiled=True)
        return work, f"chaingrad {version_of('chaingrad')} compiled", note
    if engine == "torch":
        work, note = _torch(workload, X, labels, steps)
        return work, f"torch {torch_module().__version__}", note
    if engine == "numpy" and workload == "T1":
        work, note = _numpy_mlp(X, labels, steps)
        return work, f"numpy {np.__version__} (by hand)", note
    raise MissingError(f"{engine}: no {workload} workload")
