"""Neural networks of Values: Module, Neuron, Layer and MLP, as in micrograd.

``MLP(2, [16, 16, 1])`` is micrograd's demo model: ReLU hidden layers and a linear last
layer, weights drawn with ``random.uniform(-1, 1)`` (so ``random.seed`` makes it
reproducible, with the same numbers as micrograd) and biases starting at zero.

Parameters also have PyTorch's names: an MLP is named like an ``nn.Sequential`` of
``nn.Linear`` layers with an activation module between them, so ``MLP(2, [16, 16, 1])``
has ``0.weight`` (16 x 2, row j is neuron j's ``w``), ``0.bias`` (16), ``2.weight``,
``2.bias``, ``4.weight`` and ``4.bias``. A named parameter is a nested list of Values
shaped like the PyTorch tensor; ``state_dict()`` turns each into a numpy array.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from numbers import Integral
from typing import Any

from ..autodiff import paused_gc
from ..engine import Value, _node
from ..rules import ADD, MUL

# A named parameter: a Value, or a (nested) list of Values shaped like a PyTorch tensor.
Nested = Value | list

ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")


class Module:
    """Something with parameters: ``parameters()`` lists them, ``zero_grad()`` resets them."""

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to 0 (do it before each ``backward()``)."""
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        """Every trainable Value of the module, in a fixed order (none for a bare Module)."""
        return []

    def named_parameters(self) -> list[tuple[str, Nested]]:
        """``(name, parameter)`` pairs, each parameter a Value or a nested list of Values.

        The default names each of ``parameters()`` by its position (``'0'``, ``'1'``, ...);
        Neuron, Layer and MLP use PyTorch's names instead.
        """
        return [(str(i), p) for i, p in enumerate(self.parameters())]

    def state_dict(self) -> dict[str, Any]:
        """``{name: numpy float64 array}``, a copy of every named parameter's data.

        Example:
            >>> import random; random.seed(0)
            >>> {k: v.shape for k, v in MLP(2, [3, 1]).state_dict().items()}
            {'0.weight': (3, 2), '0.bias': (3,), '2.weight': (1, 3), '2.bias': (1,)}
        """
        import numpy as np

        return {
            name: np.array([v.data for v in _flatten(p)], dtype=np.float64).reshape(_shape(p))
            for name, p in self.named_parameters()
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Set every named parameter's data from ``state`` (arrays, lists or tensors).

        Everything is checked before anything changes: a missing, unexpected or
        mis-shaped key, or a value that is not a finite number, raises ValueError and
        leaves the module as it was.

        Example:
            >>> import random; random.seed(0)
            >>> a, b = MLP(2, [3, 1]), MLP(2, [3, 1])
            >>> b.load_state_dict(a.state_dict())
            >>> [p.data for p in a.parameters()] == [p.data for p in b.parameters()]
            True
        """
        import numpy as np

        if not isinstance(state, Mapping):
            raise TypeError(f"load_state_dict: expected a mapping of name -> array, "
                            f"got {type(state).__name__}")
        own = dict(self.named_parameters())
        problems = []
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if missing:
            problems.append(f"missing keys {missing}")
        if unexpected:
            problems.append(f"unexpected keys {unexpected}")
        arrays = {}
        for name, p in own.items():
            if name not in state:
                continue
            try:
                with np.errstate(invalid="ignore", over="ignore"):  # nan/inf: refused below
                    array = np.asarray(state[name], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                problems.append(f"{name} is not an array of numbers ({exc})")
                continue
            if array.shape != _shape(p):
                problems.append(f"{name} has shape {array.shape}, expected {_shape(p)}")
            elif not np.isfinite(array).all():
                problems.append(f"{name} holds non-finite values (nan or inf)")
            else:
                arrays[name] = array
        if problems:
            raise ValueError(f"load_state_dict ({type(self).__name__}): "
                             + "; ".join(problems))
        for name, p in own.items():
            for v, x in zip(_flatten(p), arrays[name].ravel().tolist(), strict=True):
                v.data = x


class Neuron(Module):
    """One neuron: ``activation(w . x + b)``.

    Args:
        nin: Number of inputs.
        nonlin: False makes the neuron linear (micrograd's switch).
        activation: 'relu' (default), 'tanh', 'sigmoid' or 'linear'.

    Example:
        >>> import random; random.seed(0)
        >>> n = Neuron(2)
        >>> n
        ReLUNeuron(2)
        >>> n([1.0, -2.0]).data >= 0
        True
    """

    def __init__(self, nin: int, nonlin: bool = True, activation: str = "relu"):
        if activation not in ACTIVATIONS:
            raise ValueError(f"Neuron: activation must be one of {ACTIVATIONS}, "
                             f"got {activation!r}")
        _check_size("Neuron", "nin", nin)
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin
        self.activation = activation if nonlin else "linear"

    def __call__(self, x: Sequence[Value | float]) -> Value:
        """``activation(w . x + b)``, built as micrograd builds it: ``b + w0*x0 + w1*x1 ...``."""
        if isinstance(x, Value):  # one input given bare
            x = [x]
        if len(x) != len(self.w):
            raise ValueError(f"Neuron: expected {len(self.w)} inputs, got {len(x)}")
        act = _weighted_sum(self.w, x, self.b)  # sum((wi * xi for ...), self.b), node for node
        if self.activation == "linear":
            return act
        return getattr(act, self.activation)()

    def parameters(self) -> list[Value]:
        """The weights, then the bias."""
        return self.w + [self.b]

    def named_parameters(self) -> list[tuple[str, Nested]]:
        return [("weight", list(self.w)), ("bias", self.b)]

    def __repr__(self) -> str:
        name = {"relu": "ReLU", "tanh": "Tanh", "sigmoid": "Sigmoid", "linear": "Linear"}
        return f"{name[self.activation]}Neuron({len(self.w)})"


class Layer(Module):
    """``nout`` neurons that all see the same inputs; returns a list, or a Value if nout == 1.

    Extra keyword arguments (``nonlin``, ``activation``) go to each Neuron.
    """

    def __init__(self, nin: int, nout: int, **kwargs: Any):
        _check_size("Layer", "nout", nout, least=1)
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        """Each neuron's output, in order; a bare Value for a layer of one neuron."""
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        """Neuron by neuron: each one's weights, then its bias."""
        return [p for n in self.neurons for p in n.parameters()]

    def named_parameters(self) -> list[tuple[str, Nested]]:
        """``weight`` (nout x nin, row j is neuron j's ``w``) and ``bias``, as nn.Linear."""
        return [("weight", [list(n.w) for n in self.neurons]),
                ("bias", [n.b for n in self.neurons])]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """A multi-layer perceptron: hidden layers with ``activation``, a linear last layer.

    Args:
        nin: Number of inputs.
        nouts: The width of each layer, the last one being the output.
        activation: For the hidden layers: 'relu' (default), 'tanh', 'sigmoid', 'linear'.

    Example:
        >>> import random; random.seed(1337)
        >>> model = MLP(2, [16, 16, 1])
        >>> len(model.parameters())
        337
        >>> type(model([0.5, -1.0])).__name__
        'Value'
    """

    def __init__(self, nin: int, nouts: Sequence[int], activation: str = "relu"):
        if not isinstance(nouts, Sequence) or isinstance(nouts, str) or not nouts:
            raise TypeError(f"MLP: nouts must be a non-empty list of layer widths, "
                            f"got {nouts!r}")
        sz = [nin] + list(nouts)
        self.nin, self.nouts, self.activation = nin, list(nouts), activation
        self.layers = [
            Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1, activation=activation)
            for i in range(len(nouts))
        ]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        """The layers in turn: a list of Values, or a bare Value if the last has width 1."""
        with paused_gc():  # the graph being built has no cycles: see graph.paused_gc
            for layer in self.layers:
                x = layer(x)  # a width-1 layer returns a bare Value; Neuron takes that too
        return x

    def parameters(self) -> list[Value]:
        """Layer by layer, as ``Layer.parameters()`` lists them."""
        return [p for layer in self.layers for p in layer.parameters()]

    def named_parameters(self) -> list[tuple[str, Nested]]:
        """Layer i's ``weight`` and ``bias`` as ``f'{2 * i}.weight'``, ``f'{2 * i}.bias'``.

        These are the names of ``nn.Sequential(Linear, act, Linear, act, ..., Linear)``;
        see ``chaingrad.io.to_torch``.
        """
        return [(f"{2 * i}.{name}", p)
                for i, layer in enumerate(self.layers)
                for name, p in layer.named_parameters()]

    def architecture(self) -> dict[str, Any]:
        """What it takes to rebuild this model: ``MLP(**arch)`` minus the ``type`` key.

        Example:
            >>> MLP(2, [16, 16, 1]).architecture()
            {'type': 'MLP', 'nin': 2, 'nouts': [16, 16, 1], 'activation': 'relu'}
        """
        return {"type": "MLP", "nin": self.nin, "nouts": list(self.nouts),
                "activation": self.activation}

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def _weighted_sum(ws: list[Value], xs: Sequence[Value | float], b: Value) -> Value:
    """``b + w0*x0 + w1*x1 + ...``: the very nodes of micrograd's
    ``sum((wi * xi for wi, xi in zip(self.w, x)), self.b)``, a ``*`` then a ``+`` per input
    and in that order, made without the detour through the operators (a neuron's sum is
    most of a network's graph, and so of its forward pass's time)."""
    act = b
    for w, x in zip(ws, xs):
        if type(x) is not Value:
            act = act + w * x  # a plain number: the operators lift it into a Value
            continue
        wx = _node(w.data * x.data, w, x, MUL)
        act = _node(act.data + wx.data, act, wx, ADD)
    return act




def _check_size(where: str, name: str, n: object, least: int = 0) -> None:
    if isinstance(n, bool) or not isinstance(n, Integral) or n < least:
        raise ValueError(f"{where}: {name} must be a whole number >= {least}, got {n!r}")


def _shape(p: Nested) -> tuple[int, ...]:
    """The shape of a nested list of Values (``()`` for a single Value)."""
    shape = []
    while isinstance(p, list):
        shape.append(len(p))
        if not p:
            break
        p = p[0]
    return tuple(shape)


def _flatten(p: Nested) -> list[Value]:
    """The Values of a nested list, in row-major (C) order."""
    if not isinstance(p, list):
        return [p]
    return [v for item in p for v in _flatten(item)]


# The Tensor layers (chaingrad.layers) need numpy; they load when first asked for.
_TENSOR_LAYERS = (
    "Conv2d", "Dropout", "Flatten", "Identity", "Linear", "MaxPool2d", "ReLU", "Sequential",
    "Sigmoid", "Tanh", "TensorModule", "manual_seed",
)


def __getattr__(name: str) -> object:
    if name in _TENSOR_LAYERS:
        from .. import _load

        return getattr(_load("chaingrad.nn.layers", f"chaingrad.nn.{name}"), name)
    raise AttributeError(f"module 'chaingrad.nn' has no attribute {name!r}")
