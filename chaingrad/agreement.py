"""Scalar <-> tensor agreement: one MLP, run on Values and on Tensors, compared side by side.

The two engines share the mechanism (nodes, derivative rules, one topological order) but
not the granularity: the scalar graph has a node per multiply-add, the tensor graph a node
per layer op. ``tensor_copy`` builds an MLP's Tensor twin: a float64 ``Sequential`` of
``Linear`` layers holding its weights. ``compare_engines`` computes the same mean squared
error on the same batch with both, and reports each parameter's gradient difference, the
graph sizes and the times.

Example:
    >>> result = compare_engines(seed=0)
    >>> result.agrees(tol=1e-12)
    True
    >>> result.scalar_nodes > 100 * result.tensor_nodes
    True
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .autodiff import topological_order
from .engine import Value
from .nn import MLP, Module
from .nn import modules as nn_modules
from .nn.modules.container import Sequential
from .nn.modules.linear import Linear
from .nn.registry import ACTIVATION_MODULES
from .tensor_engine.tensor import Tensor


@dataclass
class ParameterComparison:
    """One parameter's gradient from each engine, element by element."""

    name: str
    scalar_grad: np.ndarray
    tensor_grad: np.ndarray

    @property
    def max_abs_diff(self) -> float:
        return float(np.max(np.abs(self.scalar_grad - self.tensor_grad), initial=0.0))


@dataclass
class Agreement:
    """What ``compare_engines`` found; ``print`` it for the side-by-side table."""

    architecture: str
    batch: int
    scalar_loss: float
    tensor_loss: float
    scalar_nodes: int
    tensor_nodes: int
    scalar_seconds: float
    tensor_seconds: float
    parameters: list[ParameterComparison] = field(default_factory=list)

    @property
    def max_abs_diff(self) -> float:
        """The largest gradient difference over every element of every parameter."""
        return max((p.max_abs_diff for p in self.parameters), default=0.0)

    def agrees(self, tol: float = 1e-12) -> bool:
        """True when every gradient element and the loss differ by at most ``tol``."""
        return self.max_abs_diff <= tol and abs(self.scalar_loss - self.tensor_loss) <= tol

    def __str__(self) -> str:
        lines = [f"MLP {self.architecture}, batch {self.batch}, float64: the same weights "
                 "on both engines", "",
                 f"{'parameter':<12}{'shape':<12}{'max |Value grad - Tensor grad|':>32}"]
        for p in self.parameters:
            lines.append(f"{p.name:<12}{str(p.scalar_grad.shape):<12}{p.max_abs_diff:>32.3e}")
        lines += ["",
                  f"{'':<24}{'Value':>14}{'Tensor':>14}",
                  f"{'loss':<24}{self.scalar_loss:>14.10f}{self.tensor_loss:>14.10f}",
                  f"{'graph nodes':<24}{self.scalar_nodes:>14,}{self.tensor_nodes:>14,}",
                  f"{'forward + backward':<24}{_ms(self.scalar_seconds):>14}"
                  f"{_ms(self.tensor_seconds):>14}"]
        return "\n".join(lines)


def compare_engines(
    model: MLP | None = None,
    inputs: Sequence[Sequence[float]] | np.ndarray | None = None,
    targets: Sequence[Sequence[float]] | np.ndarray | None = None,
    seed: int = 0,
    batch: int = 8,
) -> Agreement:
    """Run one MLP on both engines with identical weights and compare the gradients.

    Args:
        model: A scalar ``chaingrad.nn.MLP`` (default: ``MLP(2, [16, 16, 1])`` drawn with
            ``random.seed(seed)``). Its ``.grad``s are overwritten.
        inputs: (batch, nin) numbers (default: uniform in [-2, 2], from ``seed``).
        targets: (batch, nout) numbers (default: uniform in [-1, 1], from ``seed``).
        seed: Seeds the default model and data.
        batch: The batch size of the default data.

    Returns:
        An ``Agreement``; ``print`` it, or ask ``.agrees(tol)``.
    """
    if model is None:
        random.seed(seed)
        model = MLP(2, [16, 16, 1])
    if not isinstance(model, MLP):
        raise TypeError(f"compare_engines: model must be a chaingrad.nn.MLP, got "
                        f"{type(model).__name__}")
    sizes = [len(model.layers[0].neurons[0].w)] + [len(layer.neurons) for layer in model.layers]
    rng = np.random.default_rng(seed)
    x = np.asarray(rng.uniform(-2, 2, (batch, sizes[0])) if inputs is None else inputs,
                   dtype=np.float64)
    y = np.asarray(rng.uniform(-1, 1, (len(x), sizes[-1])) if targets is None else targets,
                   dtype=np.float64).reshape(len(x), sizes[-1])
    if x.ndim != 2 or x.shape[1] != sizes[0]:
        raise ValueError(f"compare_engines: inputs must have shape (batch, {sizes[0]}), "
                         f"got {tuple(x.shape)}")

    tensor_model = tensor_copy(model)
    for p in model.parameters():
        p.grad = 0.0

    start = time.perf_counter()
    scalar_loss = _scalar_mse(model, x, y)
    scalar_loss.backward()
    scalar_seconds = time.perf_counter() - start

    start = time.perf_counter()
    tensor_loss = ((tensor_model(Tensor(x)) - Tensor(y)) ** 2).mean()
    tensor_loss.backward()
    tensor_seconds = time.perf_counter() - start

    comparisons = []
    linears = [m for m in tensor_model if isinstance(m, Linear)]
    for i, (layer, linear) in enumerate(zip(model.layers, linears)):
        w_grad = np.array([[w.grad for w in n.w] for n in layer.neurons], dtype=np.float64)
        b_grad = np.array([n.b.grad for n in layer.neurons], dtype=np.float64)
        comparisons.append(ParameterComparison(f"{2 * i}.weight", w_grad,
                                               linear.weight.grad.numpy()))
        comparisons.append(ParameterComparison(f"{2 * i}.bias", b_grad, linear.bias.grad.numpy()))
    return Agreement(
        architecture="-".join(str(n) for n in sizes),
        batch=len(x),
        scalar_loss=scalar_loss.data,
        tensor_loss=tensor_loss.item(),
        scalar_nodes=len(topological_order(scalar_loss)),
        tensor_nodes=len(topological_order(tensor_loss)),
        scalar_seconds=scalar_seconds,
        tensor_seconds=tensor_seconds,
        parameters=comparisons,
    )


def tensor_copy(model: MLP) -> Sequential:
    """The Tensor twin of a scalar MLP: a float64 ``Sequential`` holding its weights.

    ``MLP(2, [16, 16, 1])`` becomes ``Sequential(Linear(2, 16), ReLU(), Linear(16, 16),
    ReLU(), Linear(16, 1))`` (the activation module follows ``model``'s activation), with
    each ``Linear``'s weight row j equal to neuron j's ``w`` and its bias to neuron j's ``b``.
    The twin computes for a batch of rows at once what ``model`` computes for one row, and
    is a copy: changing one leaves the other as it was.

    Args:
        model: A scalar ``chaingrad.nn.MLP``.

    Returns:
        A new float64 ``Sequential``.

    Raises:
        TypeError: When ``model`` is not a ``chaingrad.nn.MLP``.

    Example:
        >>> import random; random.seed(0)
        >>> model = MLP(2, [4, 1])
        >>> twin = tensor_copy(model)
        >>> [type(m).__name__ for m in twin]
        ['Linear', 'ReLU', 'Linear']
        >>> abs(twin(Tensor([[0.5, -1.0]])).item() - model([0.5, -1.0]).data) < 1e-15
        True
    """
    if not isinstance(model, MLP):
        raise TypeError(f"tensor_copy: model must be a chaingrad.nn.MLP, got "
                        f"{type(model).__name__}")
    modules: list[Module] = []
    for i, layer in enumerate(model.layers):
        linear = Linear(len(layer.neurons[0].w), len(layer.neurons), dtype=np.float64)
        linear.weight._value[...] = [[w.data for w in n.w] for n in layer.neurons]
        linear.bias._value[...] = [n.b.data for n in layer.neurons]
        modules.append(linear)
        if i < len(model.layers) - 1:
            modules.append(getattr(nn_modules, ACTIVATION_MODULES[layer.neurons[0].activation])())
    return Sequential(*modules)


def _scalar_mse(model: MLP, x: np.ndarray, y: np.ndarray) -> Value:
    """mean((model(x_i) - y_i)**2) over the batch and the outputs, as the tensor side."""
    total = Value(0.0)
    for row, target in zip(x.tolist(), y.tolist()):
        out = model(row)
        outs = out if isinstance(out, list) else [out]
        for o, t in zip(outs, target):
            total = total + (o - t) ** 2
    return total * (1.0 / y.size)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"
