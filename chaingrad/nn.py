"""Neural networks of Values: Module, Neuron, Layer and MLP, as in micrograd.

``MLP(2, [16, 16, 1])`` is micrograd's demo model: ReLU hidden layers and a linear last
layer, weights drawn with ``random.uniform(-1, 1)`` (so ``random.seed`` makes it
reproducible, with the same numbers as micrograd) and biases starting at zero.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .engine import Value

ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")


class Module:
    """Something with parameters: ``parameters()`` lists them, ``zero_grad()`` resets them."""

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to 0 (do it before each ``backward()``)."""
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        return []


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
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin
        self.activation = activation if nonlin else "linear"

    def __call__(self, x: Sequence[Value | float]) -> Value:
        if isinstance(x, Value):  # one input given bare
            x = [x]
        if len(x) != len(self.w):
            raise ValueError(f"Neuron: expected {len(self.w)} inputs, got {len(x)}")
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        if self.activation == "linear":
            return act
        return getattr(act, self.activation)()

    def parameters(self) -> list[Value]:
        return self.w + [self.b]

    def __repr__(self) -> str:
        name = {"relu": "ReLU", "tanh": "Tanh", "sigmoid": "Sigmoid", "linear": "Linear"}
        return f"{name[self.activation]}Neuron({len(self.w)})"


class Layer(Module):
    """``nout`` neurons that all see the same inputs; returns a list, or a Value if nout == 1.

    Extra keyword arguments (``nonlin``, ``activation``) go to each Neuron.
    """

    def __init__(self, nin: int, nout: int, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]

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
        sz = [nin] + list(nouts)
        self.layers = [
            Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1, activation=activation)
            for i in range(len(nouts))
        ]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        for layer in self.layers:
            x = layer(x)  # a width-1 layer returns a bare Value; Neuron takes that too
        return x

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"
