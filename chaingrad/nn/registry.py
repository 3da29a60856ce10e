"""The one list of model and layer types that save, load, ``to_torch`` and the CLI know.

``LAYER_TYPES`` names each type that a file can hold, with its constructor arguments and
the kind of each. From that one table, ``architecture()`` describes a model as JSON,
``check`` refuses a description that is not one (before anything is built), ``build_module`` and
``build_torch`` make the model again in ``chaingrad.nn`` or ``torch.nn``, ``weight_count``
says how many numbers it holds and ``summary`` prints it like a constructor call. This
module needs neither numpy nor the classes: a type is found by name where it is built.

Example:
    >>> check({"type": "Linear", "in_features": 2, "out_features": 3, "bias": True})
    >>> summary({"type": "Sequential", "layers": [{"type": "ReLU"}]})
    'Sequential(ReLU())'
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ACTIVATION_MODULES = {"relu": "ReLU", "tanh": "Tanh", "sigmoid": "Sigmoid", "linear": "Identity"}
"""The activations of micrograd's ``Neuron`` (and so of ``MLP``), each with the ``nn`` module
(torch's and chaingrad's name) that applies it between two ``Linear`` layers."""
ACTIVATIONS = tuple(ACTIVATION_MODULES)

MAX_DEPTH = 64
"""How deeply layers may nest (a Sequential in a Sequential ...) in a file: deeper ones are
refused before any recursion could exhaust Python's stack."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True)
class Kind:
    """What one constructor argument must be in a file, and how to read it off a layer.

    Attributes:
        expected: The words for it in an error message: ``'a positive integer'``.
        accepts: True for a JSON value of this kind.
        read: The JSON value, from the layer's attribute of the argument's name.
    """

    expected: str
    accepts: Callable[[Any], bool]
    read: Callable[[Any], Any]


SIZE = Kind("a positive integer", lambda v: _is_int(v) and v > 0, int)
INT = Kind("an integer", _is_int, int)
REAL = Kind("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              float)
PAIR = Kind("a pair of integers >= 0",
            lambda v: isinstance(v, list) and len(v) == 2 and all(_is_int(n) and n >= 0
                                                                   for n in v),
            lambda v: [int(n) for n in ((v, v) if _is_int(v) else v)])  # MaxPool2d keeps ints
# Conv2d's padding: a pair, or 'same' / 'valid' (as the layer keeps it)
PADDING = Kind("a pair of integers >= 0, 'same' or 'valid'",
               lambda v: v in ("same", "valid") or PAIR.accepts(v),
               lambda v: v if isinstance(v, str) else PAIR.read(v))
# Conv1d's sizes: one int, kept as a 1-tuple (as torch keeps them)
ONE = Kind("a list of one integer >= 0",
           lambda v: isinstance(v, list) and len(v) == 1 and _is_int(v[0]) and v[0] >= 0,
           lambda v: [int(v[0])])
# Conv1d's padding: one int, or 'same' / 'valid'
PADDING_1D = Kind("a list of one integer >= 0, 'same' or 'valid'",
                  lambda v: v in ("same", "valid") or ONE.accepts(v),
                  lambda v: v if isinstance(v, str) else ONE.read(v))
PADDING_MODE = Kind("'zeros', 'reflect', 'replicate' or 'circular'",
                    lambda v: v in ("zeros", "reflect", "replicate", "circular"), str)
# AdaptiveAvgPool2d's output_size: an int or None for both sides, or one each
OUTPUT_SIZE = Kind("a pair of integers >= 0 or nulls",
                   lambda v: isinstance(v, list) and len(v) == 2 and all(
                       n is None or (_is_int(n) and n >= 0) for n in v),
                   lambda v: [None if n is None else int(n)
                              for n in ((v, v) if v is None or _is_int(v) else v)])
OPTIONAL_INT = Kind("an integer or null", lambda v: v is None or _is_int(v),
                    lambda v: v if v is None else int(v))
OPTIONAL_REAL = Kind("a number or null", lambda v: v is None or REAL.accepts(v),
                       lambda v: v if v is None else float(v))
BOOL = Kind("true or false", lambda v: isinstance(v, bool), bool)
# bias=True/False in the constructor; the layer's ``bias`` is then a Parameter or None
PRESENT = Kind("true or false", lambda v: isinstance(v, bool), lambda v: v is not None)
SIZES = Kind("a non-empty list of positive integers",
             lambda v: isinstance(v, list) and bool(v) and all(SIZE.accepts(n) for n in v),
             lambda v: [int(n) for n in v])
ACTIVATION = Kind(f"one of {ACTIVATIONS}", lambda v: v in ACTIVATIONS, str)
APPROXIMATE = Kind("'none' or 'tanh'", lambda v: v in ("none", "tanh"), str)  # GELU's
NONLINEARITY = Kind("'tanh' or 'relu'", lambda v: v in ("tanh", "relu"), str)  # RNN's
# a Sequential's children, given to the constructor positionally: read from its children
LAYERS = Kind("a list of layers", lambda v: isinstance(v, list), lambda v: v)
# a ModuleList's children, given to the constructor as one list
LAYER_LIST = Kind("a list of layers", lambda v: isinstance(v, list), lambda v: v)
# a ModuleDict's children, given to the constructor as one map from their names
LAYER_MAP = Kind("a map from names to layers",
                 lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v),
                 lambda v: v)
NESTING = (LAYERS, LAYER_LIST, LAYER_MAP)
"""The kinds of argument that hold layers (read from the children, built first)."""


@dataclass(frozen=True)
class LayerType:
    """One rebuildable type.

    Attributes:
        home: The module that defines the class: only that class, not a subclass of it or
            another class of the same name, is described and rebuilt.
        arguments: Constructor argument -> its kind, in the constructor's order.
        weights: How many numbers its ``state_dict()`` holds (its parameters and persistent
            buffers), from its arguments (None for a type without them: then ``build_module``
            passes it no dtype).
        in_torch: Builds the ``torch.nn`` module where that is not
            ``torch.nn.<type>(**arguments)``.
        defaults: The value of an argument that older files do not hold (one added later).

    Only the arguments a file records are listed: a constructor's others (``device``,
    ``dilation``, ...) can take nothing but their defaults in chaingrad.
    """

    home: str
    arguments: dict[str, Kind] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    weights: Callable[[dict[str, Any]], int] | None = None
    in_torch: Callable[[dict[str, Any], Any, Any], Any] | None = None


def _mlp_weights(arch: dict[str, Any]) -> int:
    sizes = [arch["nin"], *arch["nouts"]]
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def _mlp_in_torch(arch: dict[str, Any], nn: Any, dtype: Any) -> Any:
    """``Sequential(Linear, act, Linear, ..., Linear)``: the names 0, 2, 4, ... of an MLP's
    parameters (an Identity stands between the layers of a linear MLP)."""
    activation = ACTIVATION_MODULES[arch["activation"]]
    sizes = [arch["nin"], *arch["nouts"]]
    layers: list[Any] = []
    for i in range(len(arch["nouts"])):
        if i > 0:
            layers.append(getattr(nn, activation)())
        layers.append(nn.Linear(sizes[i], sizes[i + 1], dtype=dtype))
    return nn.Sequential(*layers)


def _batch_norm_weights(arch: dict[str, Any]) -> int:
    """weight and bias (if affine), running_mean, running_var and num_batches_tracked (if
    tracked)."""
    c = arch["num_features"]
    return c * arch["affine"] * (1 + arch["bias"]) + arch["track_running_stats"] * (2 * c + 1)


def _recurrent_weights(gates: int) -> Callable[[dict[str, Any]], int]:
    """How many numbers an RNN (1 gate), GRU (3) or LSTM (4) holds: for each layer and
    direction, W_ih, W_hh, the biases and W_hr (with ``proj_size``); a cell (no
    ``num_layers``) is one layer of one direction."""
    def count(arch: dict[str, Any]) -> int:
        hidden, proj = arch["hidden_size"], arch.get("proj_size", 0)
        out = proj or hidden
        directions = 2 if arch.get("bidirectional") else 1
        total = 0
        for layer in range(arch.get("num_layers", 1)):
            inputs = arch["input_size"] if layer == 0 else out * directions
            total += directions * (gates * hidden * (inputs + out + 2 * arch["bias"])
                                   + proj * hidden)
        return total
    return count


_RECURRENT = {"input_size": SIZE, "hidden_size": SIZE, "num_layers": SIZE, "bias": BOOL,
              "batch_first": BOOL, "dropout": REAL, "bidirectional": BOOL}
_CELL = {"input_size": SIZE, "hidden_size": SIZE, "bias": BOOL}


_BATCH_NORM = {"num_features": SIZE, "eps": REAL, "momentum": OPTIONAL_REAL,
               "affine": BOOL, "track_running_stats": BOOL, "bias": PRESENT}


def _home(kind: str) -> str:
    """The file of chaingrad/nn/modules/ that holds the Tensor modules of ``kind``."""
    return f"chaingrad.nn.modules.{kind}"


LAYER_TYPES: dict[str, LayerType] = {
    "MLP": LayerType("chaingrad.nn", {"nin": SIZE, "nouts": SIZES, "activation": ACTIVATION},
                     weights=_mlp_weights, in_torch=_mlp_in_torch),
    "Sequential": LayerType(_home("container"), {"layers": LAYERS}),
    "Linear": LayerType(_home("linear"),
                        {"in_features": SIZE, "out_features": SIZE, "bias": PRESENT},
                        weights=lambda a: (a["in_features"] + a["bias"]) * a["out_features"]),
    "Conv2d": LayerType(_home("conv"), {"in_channels": SIZE, "out_channels": SIZE,
                                        "kernel_size": PAIR, "stride": PAIR,
                                        "padding": PADDING, "bias": PRESENT},
                        weights=lambda a: a["out_channels"] * (
                            a["in_channels"] * a["kernel_size"][0] * a["kernel_size"][1]
                            + a["bias"])),
    "Conv1d": LayerType(_home("conv"), {"in_channels": SIZE, "out_channels": SIZE,
                                        "kernel_size": ONE, "stride": ONE,
                                        "padding": PADDING_1D, "bias": PRESENT,
                                        "padding_mode": PADDING_MODE},
                        weights=lambda a: a["out_channels"] * (
                            a["in_channels"] * a["kernel_size"][0] + a["bias"])),
    "MaxPool2d": LayerType(_home("pooling"), {"kernel_size": PAIR, "stride": PAIR}),
    "AvgPool2d": LayerType(_home("pooling"), {"kernel_size": PAIR, "stride": PAIR,
                                              "padding": PAIR, "ceil_mode": BOOL,
                                              "count_include_pad": BOOL,
                                              "divisor_override": OPTIONAL_INT}),
    "AdaptiveAvgPool2d": LayerType(_home("pooling"), {"output_size": OUTPUT_SIZE}),
    "Flatten": LayerType(_home("flatten"), {"start_dim": INT, "end_dim": INT},
                         defaults={"end_dim": -1}),
    "Dropout": LayerType(_home("dropout"), {"p": REAL}),
    "ReLU": LayerType(_home("activation")),
    "Tanh": LayerType(_home("activation")),
    "Sigmoid": LayerType(_home("activation")),
    "GELU": LayerType(_home("activation"), {"approximate": APPROXIMATE}),
    "LeakyReLU": LayerType(_home("activation"), {"negative_slope": REAL}),
    "Softplus": LayerType(_home("activation"), {"beta": REAL, "threshold": REAL}),
    "Identity": LayerType(_home("linear")),
    "Softmax": LayerType(_home("activation"), {"dim": OPTIONAL_INT}),
    "LogSoftmax": LayerType(_home("activation"), {"dim": OPTIONAL_INT}),
    "Embedding": LayerType(_home("sparse"), {"num_embeddings": SIZE, "embedding_dim": SIZE,
                                             "padding_idx": OPTIONAL_INT},
                           weights=lambda a: a["num_embeddings"] * a["embedding_dim"]),
    "RNN": LayerType(_home("rnn"), {"input_size": SIZE, "hidden_size": SIZE,
                                    "num_layers": SIZE, "nonlinearity": NONLINEARITY,
                                    "bias": BOOL, "batch_first": BOOL, "dropout": REAL,
                                    "bidirectional": BOOL}, weights=_recurrent_weights(1)),
    "LSTM": LayerType(_home("rnn"), _RECURRENT | {"proj_size": INT},
                      weights=_recurrent_weights(4)),
    "GRU": LayerType(_home("rnn"), _RECURRENT, weights=_recurrent_weights(3)),
    "RNNCell": LayerType(_home("rnn"), _CELL | {"nonlinearity": NONLINEARITY},
                         weights=_recurrent_weights(1)),
    "LSTMCell": LayerType(_home("rnn"), _CELL, weights=_recurrent_weights(4)),
    "GRUCell": LayerType(_home("rnn"), _CELL, weights=_recurrent_weights(3)),
    "LayerNorm": LayerType(_home("normalization"),
                           {"normalized_shape": SIZES, "eps": REAL,
                            "elementwise_affine": BOOL, "bias": PRESENT},
                           weights=lambda a: math.prod(a["normalized_shape"])
                           * a["elementwise_affine"] * (1 + a["bias"])),
    "BatchNorm1d": LayerType(_home("batchnorm"), _BATCH_NORM, weights=_batch_norm_weights),
    "BatchNorm2d": LayerType(_home("batchnorm"), _BATCH_NORM, weights=_batch_norm_weights),
    "ModuleList": LayerType(_home("container"), {"modules": LAYER_LIST}),
    "ModuleDict": LayerType(_home("container"), {"modules": LAYER_MAP}),
}
"""Each type a model file can hold: one line here for a module that saves and loads (its
class in the file of its kind under chaingrad/nn/modules/)."""


def describable(module: Any) -> bool:
    """Whether ``module`` is exactly one of ``LAYER_TYPES`` (not a subclass of one)."""
    kind = LAYER_TYPES.get(type(module).__name__)
    return kind is not None and type(module).__module__ == kind.home


def architecture(module: Any, depth: int = 0) -> dict[str, Any]:
    """``{'type': name, argument: value, ...}`` for a model of ``LAYER_TYPES``, as JSON values.

    Raises:
        TypeError: The model, or a layer in it, is not of ``LAYER_TYPES``.
        ValueError: Layers nest more than ``MAX_DEPTH`` deep.
    """
    name = type(module).__name__
    if not describable(module):
        raise TypeError(f"architecture: cannot describe {name}; save and load rebuild only "
                        f"{', '.join(LAYER_TYPES)}")
    if depth >= MAX_DEPTH:
        raise ValueError(f"architecture: layers nest more than {MAX_DEPTH} deep; a model "
                         f"file holds at most {MAX_DEPTH} levels")
    arch: dict[str, Any] = {"type": name}
    for argument, kind in LAYER_TYPES[name].arguments.items():
        if kind not in NESTING:
            arch[argument] = kind.read(getattr(module, argument))
            continue
        # the layers in order (a Sequential or a ModuleList iterates over them), or by name
        children = dict(module.items()) if kind is LAYER_MAP else dict(enumerate(module))
        for label, child in children.items():
            if not describable(child):
                raise TypeError(f"architecture: {name} layer {label!r} is a "
                                f"{type(child).__name__}; save and load rebuild only "
                                f"{', '.join(LAYER_TYPES)}")
        described = {label: architecture(child, depth + 1) for label, child in children.items()}
        arch[argument] = described if kind is LAYER_MAP else list(described.values())
    return arch


def check(arch: Any, at: str = "", depth: int = 0) -> None:
    """Refuse a description that ``build_module`` could not follow; ``at`` locates a nested layer.

    Raises:
        ValueError: Naming the layer, the argument, what it must be and what it is.
    """
    kind = arch.get("type") if isinstance(arch, dict) else None
    if not isinstance(kind, str) or kind not in LAYER_TYPES:
        what = f"layer {at}" if at else "the architecture"
        raise ValueError(f"{what} is {_short(arch)}, expected a map with a type in "
                         f"{', '.join(LAYER_TYPES)}")
    if depth >= MAX_DEPTH:
        raise ValueError(f"layers nest more than {MAX_DEPTH} deep (at {at}); a model file "
                         f"holds at most {MAX_DEPTH} levels")
    where = f"{kind} {at}" if at else kind
    wanted, defaults = LAYER_TYPES[kind].arguments, LAYER_TYPES[kind].defaults
    given = set(arch) - {"type"}
    if not set(wanted) - set(defaults) <= given <= set(wanted):
        raise ValueError(f"{where} has arguments {sorted(given)}, expected {sorted(wanted)}")
    for name, argument in wanted.items():
        if name not in arch:
            continue  # one an older file does not hold: its default
        if not argument.accepts(arch[name]):
            raise ValueError(f"{where} has {name}={_short(arch[name])}, expected "
                             f"{argument.expected}")
        if argument in NESTING:
            layers = arch[name] if argument is LAYER_MAP else dict(enumerate(arch[name]))
            for label, layer in layers.items():
                where = f"{name}[{label!r}]"
                check(layer, f"{at}.{where}" if at else where, depth + 1)


def weight_count(arch: dict[str, Any]) -> int:
    """How many numbers the parameters of a checked architecture hold."""
    count = 0
    stack = [arch]
    while stack:
        layer = stack.pop()
        kind = LAYER_TYPES[layer["type"]]
        count += kind.weights(layer) if kind.weights is not None else 0
        stack.extend(child for layer_kind, children in _nested(kind, layer)
                     for child in (children.values() if layer_kind is LAYER_MAP else children))
    return count


def _nested(kind: LayerType, arch: dict[str, Any]) -> list[tuple[Kind, Any]]:
    """The (kind, layers) of each of ``arch``'s arguments that holds layers."""
    return [(argument, arch[name]) for name, argument in kind.arguments.items()
            if argument in NESTING]


def build_module(arch: dict[str, Any], namespace: Any, dtype: Any = None) -> Any:
    """The model of a checked architecture, with fresh weights, from ``chaingrad.nn``.

    Args:
        arch: A description that ``check`` accepts.
        namespace: Where the classes are found by name (``chaingrad.nn``).
        dtype: Given to each layer with parameters (None: the layer's default).
    """
    return _build(arch, namespace, dtype, in_torch=False)


def build_torch(arch: dict[str, Any], nn: Any, dtype: Any = None) -> Any:
    """The same model in PyTorch: ``build_module`` with ``torch.nn`` (an MLP as a
    Sequential)."""
    return _build(arch, nn, dtype, in_torch=True)


def _build(arch: dict[str, Any], namespace: Any, dtype: Any, in_torch: bool) -> Any:
    kind = LAYER_TYPES[arch["type"]]
    if in_torch and kind.in_torch is not None:
        return kind.in_torch(arch, namespace, dtype)
    children, arguments = [], {}
    for name, argument in kind.arguments.items():
        if argument is LAYERS:  # Sequential's, given one by one
            children = [_build(layer, namespace, dtype, in_torch) for layer in arch[name]]
        elif argument is LAYER_LIST:
            arguments[name] = [_build(layer, namespace, dtype, in_torch) for layer in arch[name]]
        elif argument is LAYER_MAP:
            arguments[name] = {label: _build(layer, namespace, dtype, in_torch)
                               for label, layer in arch[name].items()}
        else:  # a pair as a tuple, as the constructors store it
            value = arch.get(name, kind.defaults.get(name))
            arguments[name] = tuple(value) if isinstance(value, list) else value
    if dtype is not None and kind.weights is not None:
        arguments["dtype"] = dtype
    return getattr(namespace, arch["type"])(*children, **arguments)


def summary(arch: Any) -> str:
    """A constructor-like line: ``MLP(nin=2, nouts=[16, 1], activation='relu')``."""
    if not isinstance(arch, dict):
        return _short(arch)
    layers = arch.get("layers", arch.get("modules"))
    if arch.get("type") in ("Sequential", "ModuleList") and isinstance(layers, list):
        return f"{arch['type']}({', '.join(summary(layer) for layer in layers)})"
    if arch.get("type") == "ModuleDict" and isinstance(layers, dict):
        named = ", ".join(f"{label}={summary(layer)}" for label, layer in layers.items())
        return f"ModuleDict({named})"
    args = ", ".join(f"{k}={v!r}" for k, v in arch.items() if k not in ("type",
                                                                        "format_version"))
    return f"{arch.get('type')}({args})"


def _short(value: Any) -> str:
    """``repr(value)``, bounded in depth and length: a hostile file's value can be huge."""
    return _REPR.repr(value)


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 60, 60
