"""Scalar engines behind one interface, so that S1-S3 are written once for all of them.

An engine gives: ``name``, ``label``, ``version``, ``file`` (the module it was imported
from), ``value(x)`` (an input, as micrograd's notebook writes ``Value(x)``),
``param(x)`` (a leaf that receives a gradient), ``mlp(nin, nouts, scales)`` (micrograd's
``MLP``: the library's own where it has one), ``data(v)`` (the number a node holds),
``backward(root)``, ``zero_grad(model)`` and ``sgd(params, lr)`` (the notebook's update).

``make(name)`` builds one by name or raises ``MissingError`` with the exact install command.
Only the standard library is imported here: a worker imports this module in a competitor's
own virtualenv, which has neither chaingrad nor torch.
"""

from __future__ import annotations

import importlib
import random
import sys
from importlib import metadata
from typing import Any

RAISED_LIMIT = 1_000_000
"""The recursion limit of the 'recursion limit raised' variant of micrograd-like engines."""

MGCPP_INSTALL = (
    "python -m venv /tmp/venv-mgcpp && /tmp/venv-mgcpp/bin/pip install "
    "'scikit-build-core[pyproject]<0.8' pybind11 cmake ninja numpy && "
    "/tmp/venv-mgcpp/bin/pip install --no-build-isolation "
    "--config-settings=cmake.build-type=Release micrograd-cpp-engine==0.1.1; "
    "then pass --worker micrograd-cpp-engine=/tmp/venv-mgcpp/bin/python"
)

# name -> (module with Value, module with MLP, PyPI distribution, install command)
MICROGRAD_LIKE = {
    "chaingrad": ("chaingrad", "chaingrad.nn", "chaingrad", "pip install -e ."),
    "micrograd": ("micrograd.engine", "micrograd.nn", "micrograd", "pip install micrograd==0.1.0"),
    "micrograd-viz": ("micrograd.engine", "micrograd.nn", "micrograd-viz",
                      "python -m venv /tmp/venv-mgviz && /tmp/venv-mgviz/bin/pip install "
                      "micrograd-viz==0.2.0 numpy; then pass "
                      "--worker micrograd-viz=/tmp/venv-mgviz/bin/python"),
    "micrograd-andrews": ("micrograd_andrews.engine", "micrograd_andrews.nn",
                          "micrograd-andrews",
                          "python -m venv /tmp/venv-mgforks && /tmp/venv-mgforks/bin/pip "
                          "install micrograd-andrews==0.1.8 numpy graphviz; then pass "
                          "--worker micrograd-andrews=/tmp/venv-mgforks/bin/python"),
}

EXTERNAL = {"micrograd-cpp-engine": MGCPP_INSTALL,
            "micrograd-viz": MICROGRAD_LIKE["micrograd-viz"][3],
            "micrograd-andrews": MICROGRAD_LIKE["micrograd-andrews"][3]}
"""Engines run in a virtualenv of their own (two of them install a top-level ``micrograd``)."""


class MissingError(Exception):
    """An engine is not importable here; the message says what to install."""


def version_of(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


class MicrogradLike:
    """chaingrad, micrograd and its pure-Python forks: the notebook's code runs verbatim.

    With ``raise_limit`` the backward pass runs under ``sys.setrecursionlimit(RAISED_LIMIT)``
    (restored after): micrograd's recursive topological sort needs it on deep graphs.
    """

    def __init__(self, name: str, raise_limit: bool = False):
        value_mod, nn_mod, dist, install = MICROGRAD_LIKE[name]
        try:
            module = importlib.import_module(value_mod)
            self.Value = module.Value
            self.MLP = importlib.import_module(nn_mod).MLP
        except ImportError as exc:
            raise MissingError(f"{name}: not importable here ({exc}); install: {install}") from None
        self.name, self.file = name, module.__file__
        self.version = version_of(dist)
        self.raise_limit = raise_limit
        self.label = f"{name} {self.version}" + (" (recursion limit 10^6)" if raise_limit else "")

    def value(self, x: Any) -> Any:
        return self.Value(x)

    param = value

    def mlp(self, nin: int, nouts: list[int], scales: list[float] | None = None) -> Any:
        model = self.MLP(nin, nouts)
        for layer, scale in zip(model.layers, scales or []):
            for neuron in layer.neurons:
                for w in neuron.w:
                    w.data *= scale
        return model

    @staticmethod
    def data(v: Any) -> float:
        return v.data

    def backward(self, root: Any) -> None:
        if not self.raise_limit:
            root.backward()
            return
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, RAISED_LIMIT))
        try:
            root.backward()
        finally:
            sys.setrecursionlimit(old)

    @staticmethod
    def zero_grad(model: Any) -> None:
        model.zero_grad()

    @staticmethod
    def sgd(params: list, learning_rate: float) -> None:
        for p in params:  # the notebook's update, verbatim
            p.data -= learning_rate * p.grad


class PortMLP:
    """micrograd's ``nn.MLP`` (Neuron, Layer, MLP) line for line, on another engine's nodes.

    Weights are drawn with ``random.uniform(-1, 1)`` in micrograd's order (times the
    layer's scale), biases start at 0, so a seeded run has micrograd's numbers.
    """

    def __init__(self, engine: Any, nin: int, nouts: list[int], scales: list[float] | None):
        sizes = [nin] + list(nouts)
        scales = scales or [1.0] * len(nouts)
        self.layers = []
        for i in range(len(nouts)):
            neurons = []
            for _ in range(sizes[i + 1]):
                w = [engine.param(random.uniform(-1, 1) * scales[i]) for _ in range(sizes[i])]
                neurons.append((w, engine.param(0.0), i != len(nouts) - 1))
            self.layers.append(neurons)
        self.engine = engine

    def __call__(self, x: list) -> Any:
        for neurons in self.layers:
            out = []
            for w, b, nonlin in neurons:
                act = sum((wi * xi for wi, xi in zip(w, x)), b)
                out.append(act.relu() if nonlin else act)
            x = out[0] if len(out) == 1 else out
        return x

    def parameters(self) -> list:
        return [p for neurons in self.layers for w, b, _ in neurons for p in w + [b]]

    def zero_grad(self) -> None:
        self.engine.zero_grad(self)


class TorchScalar:
    """PyTorch on 0-d float64 tensors (Python floats are float64), one thread."""

    def __init__(self) -> None:
        try:
            import torch
        except ImportError as exc:
            raise MissingError(f"torch: not importable here ({exc}); install: "
                               "pip install torch==2.13.0") from None
        torch.set_num_threads(1)
        self.torch = torch
        self.name, self.file = "torch", torch.__file__
        self.version = torch.__version__
        self.label = f"torch {self.version} (0-d float64)"

    def value(self, x: Any) -> Any:
        return self.torch.tensor(x, dtype=self.torch.float64)

    def param(self, x: Any) -> Any:
        return self.torch.tensor(x, dtype=self.torch.float64, requires_grad=True)

    def mlp(self, nin: int, nouts: list[int], scales: list[float] | None = None) -> PortMLP:
        return PortMLP(self, nin, nouts, scales)

    @staticmethod
    def data(v: Any) -> float:
        return v.item()

    @staticmethod
    def backward(root: Any) -> None:
        root.backward()

    @staticmethod
    def zero_grad(model: Any) -> None:
        for p in model.parameters():
            p.grad = None  # what torch's optimizers do by default

    @staticmethod
    def sgd(params: list, learning_rate: float) -> None:
        for p in params:  # the notebook's update, verbatim (p.data is the tensor's storage)
            p.data -= learning_rate * p.grad


class MgcppScalar:
    """micrograd-cpp-engine (C++ core, pybind11) on 0-d float32 tensors.

    It has no ``.data`` to assign, so the update goes through its own C++ ``SGD`` with the
    step's learning rate; it has no scalar ``MLP``, so ``PortMLP`` builds micrograd's.
    """

    def __init__(self) -> None:
        try:
            import micrograd
            from micrograd import _C
        except ImportError as exc:
            raise MissingError(f"micrograd-cpp-engine: not importable here ({exc}); install "
                               f"in its own virtualenv: {MGCPP_INSTALL}") from None
        self.C, self.optim = _C, micrograd.optim
        self.name, self.file = "micrograd-cpp-engine", micrograd.__file__
        self.version = version_of("micrograd-cpp-engine")
        self.label = f"micrograd-cpp-engine {self.version} (0-d float32)"
        self.optimizer: Any = None

    def value(self, x: Any) -> Any:
        return self.C.Tensor([float(x)], [])

    def param(self, x: Any) -> Any:
        t = self.C.Tensor([float(x)], [])
        t.requires_grad_(True)
        return t

    def mlp(self, nin: int, nouts: list[int], scales: list[float] | None = None) -> PortMLP:
        model = PortMLP(self, nin, nouts, scales)
        self.optimizer = self.optim.SGD(model.parameters(), 1.0)
        return model

    @staticmethod
    def data(v: Any) -> float:
        return v.tolist()[0]

    @staticmethod
    def backward(root: Any) -> None:
        root.backward()

    @staticmethod
    def zero_grad(model: Any) -> None:
        for p in model.parameters():
            p.zero_grad()

    def sgd(self, params: list, learning_rate: float) -> None:
        self.optimizer.lr = learning_rate
        self.optimizer.step()


def make(name: str, raise_limit: bool = False) -> Any:
    """The engine called ``name``; raises MissingError (with the install command) if absent."""
    if name in MICROGRAD_LIKE:
        return MicrogradLike(name, raise_limit)
    if name == "torch":
        return TorchScalar()
    if name == "micrograd-cpp-engine":
        return MgcppScalar()
    raise MissingError(f"unknown engine {name!r}")
