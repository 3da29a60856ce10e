"""Neural networks: the one ``Module`` base, micrograd's ``Neuron``, ``Layer`` and ``MLP``
of Values here, and PyTorch's Tensor layers (``Linear``, ``Conv2d``, ``Sequential``, ...).

``MLP(2, [16, 16, 1])`` is micrograd's demo model: ReLU hidden layers and a linear last
layer, weights drawn with ``random.uniform(-1, 1)`` (so ``random.seed`` makes it
reproducible, with the same numbers as micrograd) and biases starting at zero.

Parameters also have PyTorch's names: an MLP is named like an ``nn.Sequential`` of
``nn.Linear`` layers with an activation module between them, so ``MLP(2, [16, 16, 1])``
has ``0.weight`` (16 x 2, row j is neuron j's ``w``), ``0.bias`` (16), ``2.weight``,
``2.bias``, ``4.weight`` and ``4.bias``. A named parameter is a nested list of Values
shaped like the PyTorch tensor; ``state_dict()`` turns each into a numpy array.

The Tensor layers need numpy, which the Values do not: they load when first asked for
(``chaingrad.nn.Linear``), from the file of their kind in ``chaingrad/nn/modules/``
(``linear.py``), as torch lays them out.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Any

from .. import torch_names
from ..autodiff import paused_gc
from ..engine import Value, make_node
from ..rules import ADD, MUL
from . import modules
from .modules.module import Module as Module  # chaingrad.nn.Module, as torch.nn.Module
from .modules.module import Nested
from .registry import ACTIVATIONS


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

    forward = __call__  # micrograd calls the module; PyTorch's habit calls forward

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

    forward = __call__

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
        with paused_gc():  # the graph being built has no cycles: see autodiff.paused_gc
            for layer in self.layers:
                x = layer(x)  # a width-1 layer returns a bare Value; Neuron takes that too
        return x

    forward = __call__

    def parameters(self) -> list[Value]:
        """Layer by layer, as ``Layer.parameters()`` lists them."""
        return [p for layer in self.layers for p in layer.parameters()]

    def named_parameters(self) -> list[tuple[str, Nested]]:
        """Layer i's ``weight`` and ``bias`` as ``f'{2 * i}.weight'``, ``f'{2 * i}.bias'``.

        These are the names of ``nn.Sequential(Linear, act, Linear, act, ..., Linear)``;
        see ``chaingrad.to_torch``.
        """
        return [(f"{2 * i}.{name}", p)
                for i, layer in enumerate(self.layers)
                for name, p in layer.named_parameters()]

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
        wx = make_node(w.data * x.data, w, x, MUL)
        act = make_node(act.data + wx.data, act, wx, ADD)
    return act




def _check_size(where: str, name: str, n: object, least: int = 0) -> None:
    if isinstance(n, bool) or not isinstance(n, Integral) or n < least:
        raise ValueError(f"{where}: {name} must be a whole number >= {least}, got {n!r}")


# What chaingrad.nn serves besides its modules, from where each is defined: torch's
# Parameter, and the default generator's seed and state (chaingrad.manual_seed, ... again).
_TENSOR_NAMES = {
    "DataParallel": "chaingrad.nn.parallel",
    "Parameter": "chaingrad.nn.parameter",
    "get_rng_state": "chaingrad.tensor_engine.generator",
    "manual_seed": "chaingrad.tensor_engine.generator",
    "set_rng_state": "chaingrad.tensor_engine.generator",
}


# Submodules reachable as attributes (``nn.functional``, as torch's) without an import.
_SUBMODULES = ("functional", "init", "modules", "parameter", "utils", "parallel")


if TYPE_CHECKING:
    # The same names, for type checkers and editors, which do not run __getattr__
    # (tests/test_typing.py checks that the two say the same); `X as X` exports X, and `*`
    # the modules that each file of nn/modules/ lists in its __all__ (modules.KINDS).
    from ..tensor_engine.generator import get_rng_state as get_rng_state
    from ..tensor_engine.generator import manual_seed as manual_seed
    from ..tensor_engine.generator import set_rng_state as set_rng_state
    from . import functional as functional
    from . import init as init
    from . import modules as modules
    from . import parallel as parallel
    from . import parameter as parameter
    from . import utils as utils
    from .modules.activation import *  # noqa: F403 - the names of its __all__
    from .modules.batchnorm import *  # noqa: F403 - the names of its __all__
    from .modules.container import *  # noqa: F403 - the names of its __all__
    from .modules.conv import *  # noqa: F403 - the names of its __all__
    from .modules.dropout import *  # noqa: F403 - the names of its __all__
    from .modules.flatten import *  # noqa: F403 - the names of its __all__
    from .modules.linear import *  # noqa: F403 - the names of its __all__
    from .modules.loss import *  # noqa: F403 - the names of its __all__
    from .modules.normalization import *  # noqa: F403 - the names of its __all__
    from .modules.pooling import *  # noqa: F403 - the names of its __all__
    from .modules.rnn import *  # noqa: F403 - the names of its __all__
    from .modules.sparse import *  # noqa: F403 - the names of its __all__
    from .modules.transformer import *  # noqa: F403 - the names of its __all__
    from .parallel import DataParallel as DataParallel
    from .parameter import Parameter as Parameter
else:
    def __getattr__(name: str) -> object:
        """A Tensor module (``chaingrad.nn.Linear``, from the file of its kind), or another
        name that needs numpy, loaded on first use; an error naming what chaingrad lacks."""
        if name in _SUBMODULES:
            return torch_names.load_module(f"{__name__}.{name}", f"{__name__}.{name}")
        if name.startswith("_"):  # a probe (_repr_html_, __wrapped__): not a module's name
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        if name in _TENSOR_NAMES:
            home = torch_names.load_module(_TENSOR_NAMES[name], f"{__name__}.{name}")
            value = getattr(home, name)
        else:
            value = modules.tensor_modules(f"{__name__}.{name}").get(name)
            if value is None:
                raise torch_names.missing(__name__, name, torch_names.NN)
        globals()[name] = value  # found here from now on
        return value


def __dir__() -> list[str]:
    """This module's names, the Tensor modules among them (when numpy is there to load them)."""
    try:
        tensor = modules.tensor_modules()
    except ModuleNotFoundError:  # without numpy: what chaingrad.nn has on Values alone
        tensor = {}
    return sorted(set(globals()) | set(_TENSOR_NAMES) | set(_SUBMODULES) | set(tensor))
