"""The one list of layer types: it agrees with the classes and with torch.nn, and each type
round-trips through architecture(), check, build_module and build_torch."""

from __future__ import annotations

import inspect
import random

import pytest

import chaingrad.nn as nn
from chaingrad.nn import registry
from chaingrad.nn.registry import LAYER_TYPES

SAMPLES = {  # one instance of each type that takes arguments, with them away from their defaults
    "MLP": lambda: nn.MLP(3, [4, 2], activation="tanh"),
    "Sequential": lambda: nn.Sequential(nn.Linear(3, 2), nn.Sequential(nn.ReLU())),
    "Linear": lambda: nn.Linear(3, 2, bias=False),
    "Conv2d": lambda: nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=1),
    "Conv1d": lambda: nn.Conv1d(2, 3, 4, stride=2, padding=1, bias=False,
                                padding_mode="circular"),
    "MaxPool2d": lambda: nn.MaxPool2d(3, stride=2),
    "AvgPool2d": lambda: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                      count_include_pad=False, divisor_override=2),
    "AdaptiveAvgPool2d": lambda: nn.AdaptiveAvgPool2d((3, None)),
    "Flatten": lambda: nn.Flatten(0),
    "Dropout": lambda: nn.Dropout(0.25),
    "Softmax": lambda: nn.Softmax(dim=0),
    "LogSoftmax": lambda: nn.LogSoftmax(),
    "GELU": lambda: nn.GELU(approximate="tanh"),
    "LeakyReLU": lambda: nn.LeakyReLU(0.25),
    "Softplus": lambda: nn.Softplus(beta=2.0, threshold=4.0),
    "Embedding": lambda: nn.Embedding(7, 3, padding_idx=2),
    "RNN": lambda: nn.RNN(3, 4, 2, nonlinearity="relu", bias=False, batch_first=True,
                          dropout=0.5, bidirectional=True),
    "LSTM": lambda: nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2, dropout=0.25),
    "GRU": lambda: nn.GRU(3, 4, 3, bias=False, batch_first=True),
    "RNNCell": lambda: nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
    "LSTMCell": lambda: nn.LSTMCell(3, 4, bias=False),
    "GRUCell": lambda: nn.GRUCell(3, 4),
    "LayerNorm": lambda: nn.LayerNorm((2, 3), eps=1e-3, bias=False),
    "BatchNorm1d": lambda: nn.BatchNorm1d(4, momentum=None, affine=False),
    "BatchNorm2d": lambda: nn.BatchNorm2d(3, eps=0.5, track_running_stats=False, bias=False),
    "ModuleList": lambda: nn.ModuleList([nn.Linear(2, 2), nn.ModuleList([nn.Tanh()])]),
    "ModuleDict": lambda: nn.ModuleDict({"b": nn.LayerNorm(2), "a": nn.Sequential(nn.ReLU())}),
}




def sample(name: str) -> nn.Module:
    """An instance of the type ``name``: SAMPLES's, or one made with no arguments for a type
    that takes none (ReLU, ...: a new one needs no line here)."""
    return SAMPLES[name]() if name in SAMPLES else getattr(nn, name)()


def test_every_type_with_arguments_has_a_sample_here() -> None:
    assert sorted(SAMPLES) == sorted(name for name, kind in LAYER_TYPES.items() if kind.arguments)


@pytest.mark.parametrize("name", sorted(LAYER_TYPES))
def test_the_table_agrees_with_the_class(name) -> None:
    """The class is found in chaingrad.nn, lives where the table says, and takes the
    table's arguments, in order (a Sequential its layers positionally), among others that
    chaingrad takes only at their defaults (device, dtype, dilation, ...)."""
    cls = getattr(nn, name)
    kind = LAYER_TYPES[name]
    assert cls.__module__ == kind.home
    init = cls.__init__
    parameters = [] if init is object.__init__ else list(
        inspect.signature(init).parameters.values())[1:]
    names = [p.name if p.kind is not p.VAR_POSITIONAL or name == "Sequential" else None
             for p in parameters]
    names = ["layers" if n == "args" else n for n in names]
    assert [n for n in names if n in kind.arguments] == list(kind.arguments)
    assert (kind.weights is not None) == ("dtype" in [p.name for p in parameters]
                                          or name == "MLP")


@pytest.mark.parametrize("name", sorted(LAYER_TYPES))
def test_each_type_round_trips_through_its_description(name) -> None:
    random.seed(0)
    nn.manual_seed(0)
    model = sample(name)
    arch = model.architecture()
    registry.check(arch)
    rebuilt = registry.build_module(arch, nn)
    assert type(rebuilt) is type(model) and rebuilt.architecture() == arch
    assert registry.weight_count(arch) == sum(v.size for v in model.state_dict().values())
    assert registry.summary(arch).startswith(f"{name}(")


@pytest.mark.parametrize("name", sorted(LAYER_TYPES))
def test_each_type_has_the_same_parameters_in_torch(torch, name) -> None:
    model = sample(name)
    net = registry.build_torch(model.architecture(), torch.nn, torch.float64)
    assert {k: v.shape for k, v in model.state_dict().items()} == {
        k: tuple(v.shape) for k, v in net.state_dict().items()}
    assert all(v.dtype == torch.float64 for v in net.state_dict().values()
               if v.is_floating_point())  # num_batches_tracked stays int64


def test_a_subclass_or_a_namesake_is_not_described() -> None:
    class Linear(nn.Module):  # the name, but not chaingrad's class
        pass

    class MyLinear(nn.Linear):
        pass

    for model in (Linear(), MyLinear(2, 2)):
        assert not registry.describable(model)
        with pytest.raises(TypeError, match="cannot describe .*Linear; save and load rebuild"):
            model.architecture()


@pytest.mark.parametrize(("arch", "message"), [
    ([1, 2], r"the architecture is \[1, 2\], expected a map with a type in MLP"),
    ({"type": "ELU"}, "the architecture is {'type': 'ELU'}, expected a map"),
    ({"type": "GELU", "approximate": "fast"},
     "GELU has approximate='fast', expected 'none' or 'tanh'"),
    ({"type": "Linear", "in_features": 2, "out_features": 3},
     r"Linear has arguments \['in_features', 'out_features'\], expected \['bias', "),
    ({"type": "Linear", "in_features": True, "out_features": 3, "bias": True},
     "Linear has in_features=True, expected a positive integer"),
    ({"type": "Dropout", "p": "0.5"}, "Dropout has p='0.5', expected a number"),
    ({"type": "Sequential", "layers": [{"type": "ReLU"}, {"type": "Flatten", "start_dim": 1.5}]},
     r"Flatten layers\[1\] has start_dim=1.5, expected an integer"),
    ({"type": "MLP", "nin": 2, "nouts": [], "activation": "relu"},
     "MLP has nouts=\\[\\], expected a non-empty list of positive integers"),
    ({"type": "Dropout", "p": "x" * 10**6}, r"Dropout has p='x{10,30}\.\.\.x{10,30}', expected"),
    ({"type": "ModuleDict", "modules": [{"type": "ReLU"}]},
     r"ModuleDict has modules=\[\{'type': 'ReLU'\}\], expected a map from names to layers"),
    ({"type": "ModuleList", "modules": [{"type": "ModuleDict", "modules": {"a": {"type": 1}}}]},
     r"layer modules\[0\]\.modules\['a'\] is \{'type': 1\}, expected a map"),
    ({"type": "BatchNorm1d", "num_features": 2, "eps": 1e-5, "momentum": "x", "affine": True,
      "track_running_stats": True, "bias": True}, "BatchNorm1d has momentum='x', expected a "
                                                  "number or null"),
    ({"type": "LayerNorm", "normalized_shape": [2], "eps": 1e-5, "elementwise_affine": 1,
      "bias": True}, "LayerNorm has elementwise_affine=1, expected true or false"),
])
def test_check_names_the_layer_the_argument_and_what_it_must_be(arch, message) -> None:
    with pytest.raises(ValueError, match=message):
        registry.check(arch)


def test_the_depth_is_bounded_before_any_recursion() -> None:
    arch: dict = {"type": "ReLU"}
    for _ in range(registry.MAX_DEPTH - 1):
        arch = {"type": "Sequential", "layers": [arch]}
    registry.check(arch)
    with pytest.raises(ValueError, match="layers nest more than 64 deep"):
        registry.check({"type": "Sequential", "layers": [arch]})


def test_an_older_file_without_an_argument_added_later_still_builds() -> None:
    arch = {"type": "Sequential", "layers": [{"type": "Flatten", "start_dim": 1}]}
    registry.check(arch)  # written before Flatten took end_dim
    model = registry.build_module(arch, nn)
    assert (model[0].start_dim, model[0].end_dim) == (1, -1)
    conv = {"type": "Conv2d", "in_channels": 1, "out_channels": 2, "kernel_size": [3, 3],
            "stride": [1, 1], "padding": "same", "bias": True}
    registry.check(conv)
    assert registry.build_module(conv, nn).padding == "same"
    assert nn.Conv2d(1, 2, 3, padding="same").architecture() == conv
