"""chaingrad/nn/modules/module.py: what a Module registers, and how it walks it, against
torch.nn.Module itself: buffers (``register_buffer``, persistent or not, in ``state_dict`` and
``to``), ``__setattr__`` of a Module, a Parameter, a Tensor or None over each kind of slot,
``apply``'s order, ``named_modules``, ``named_parameters``' arguments and
``get_submodule``/``get_parameter``/``get_buffer``."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as cnn
from chaingrad import Tensor


class Side:
    """One library's ``nn`` and its tensor maker, so that a scenario runs on both."""

    def __init__(self, nn, tensor):
        self.nn, self.tensor = nn, tensor

    def zeros(self, *shape, dtype="float32"):
        return self.tensor(np.zeros(shape, dtype=dtype))

    def param(self, *shape):
        return self.nn.Parameter(self.zeros(*shape))


@pytest.fixture
def sides(torch):
    return {"chaingrad": Side(cnn, chaingrad.from_numpy),
            "torch": Side(torch.nn, torch.from_numpy)}


def nested(side: Side):
    """A model of several levels, with a module held twice and buffers at three levels
    (a float one and an int64 one, as BatchNorm's, and one that is not persistent)."""
    nn = side.nn

    class Stats(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running", side.zeros(3))
            self.scale = nn.Parameter(side.zeros(3))
            self.register_buffer("count", side.zeros(dtype="int64"))

    class Block(nn.Module):
        def __init__(self, shared):
            super().__init__()
            self.stats = Stats()
            self.inner = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), shared)
            self.register_buffer("mask", side.zeros(3), persistent=False)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            shared = nn.Linear(3, 3)
            self.embed = nn.Linear(5, 3)
            self.blocks = nn.Sequential(Block(shared), Block(shared))
            self.head = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
            self.register_buffer("steps", side.zeros(1))

    return Net()


def labelled(model):
    """The model with each module's (first) name set on it, for ``apply`` to report."""
    for name, module in model.named_modules():
        module.label = name or "<root>"
    return model


def layered(side: Side):
    """Sequentials three deep, and a Linear held by two of them."""
    nn = side.nn
    shared = nn.Linear(2, 2)
    return nn.Sequential(nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Tanh(), shared)),
                         nn.ReLU(), nn.Sequential(shared, nn.Identity()))


@pytest.mark.parametrize("make", [layered, nested])
def test_apply_visits_the_modules_in_torchs_order(sides, make) -> None:
    orders = {}
    for name, side in sides.items():
        seen = []
        model = labelled(make(side))
        assert model.apply(lambda m, seen=seen: seen.append(m.label)) is model
        orders[name] = seen
    assert orders["chaingrad"] == orders["torch"]
    assert orders["torch"][-1] == "<root>"
    if make is layered:  # each subtree before the next child; the shared one under each
        assert orders["torch"] == ["0.0", "0.1.0", "0.1.1", "0.1", "0", "1", "0.1.1", "2.1",
                                   "2", "<root>"]


def test_the_walks_name_what_torchs_name(sides) -> None:
    ours, theirs = nested(sides["chaingrad"]), nested(sides["torch"])
    walks = {
        "named_modules": lambda m: [n for n, _ in m.named_modules()],
        "named_modules(remove_duplicate=False)": lambda m: [
            n for n, _ in m.named_modules(remove_duplicate=False)],
        "named_modules(prefix)": lambda m: [n for n, _ in m.named_modules(prefix="net")],
        "named_parameters": lambda m: [n for n, _ in m.named_parameters()],
        "named_parameters(prefix, remove_duplicate=False)": lambda m: [
            n for n, _ in m.named_parameters(prefix="net", remove_duplicate=False)],
        "named_parameters(recurse=False)": lambda m: [
            n for n, _ in m.blocks[0].stats.named_parameters(recurse=False)],
        "named_buffers": lambda m: [n for n, _ in m.named_buffers()],
        "named_buffers(prefix, recurse=False)": lambda m: [
            n for n, _ in m.named_buffers(prefix="p", recurse=False)],
        "state_dict": lambda m: list(m.state_dict()),
        "buffers": lambda m: [tuple(b.shape) for b in m.buffers()],
        "children": lambda m: [type(c).__name__ for c in m.children()],
        "modules": lambda m: [type(c).__name__ for c in m.modules()],
        "parameters(recurse=False)": lambda m: len(list(m.parameters(recurse=False))),
    }
    for name, walk in walks.items():
        assert walk(ours) == walk(theirs), name


def test_buffers_are_saved_loaded_and_converted_as_torchs(sides, torch) -> None:
    ours, theirs = nested(sides["chaingrad"]), nested(sides["torch"])
    stats = theirs.blocks[1].stats
    with torch.no_grad():
        stats.running.uniform_(-1, 1)
        stats.count.fill_(7)
        theirs.steps.fill_(3)
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_array_equal(ours.blocks[1].stats.running.numpy(), stats.running.numpy())
    assert ours.state_dict()["blocks.1.stats.count"].dtype == np.int64
    assert int(ours.blocks[1].stats.count) == 7 and ours.steps.tolist() == [3.0]
    assert "blocks.0.mask" not in ours.state_dict()  # not persistent
    mask = ours.blocks[0].mask
    ours.double()
    theirs.double()
    assert ours.blocks[0].mask is mask  # converted in place
    for (name, b), (_, t) in zip(ours.named_buffers(), theirs.named_buffers(), strict=True):
        assert str(b.dtype).split(".")[1] == str(t.dtype).split(".")[1], name
    ours.to(np.float32)
    assert ours.steps.dtype == np.float32 and ours.blocks[0].stats.count.dtype == np.int64


# each scenario: steps on a fresh module (a Linear), each a callable of (module, side); a
# step that raises is recorded by its exception's type, and the run goes on
SCENARIOS = {
    "a None parameter slot takes a Parameter or None only": [
        lambda m, s: setattr(m, "bias", None),
        lambda m, s: setattr(m, "bias", s.zeros(2)),
        lambda m, s: setattr(m, "bias", s.param(2)),
    ],
    "a child's slot takes a Module or None only": [
        lambda m, s: setattr(m, "sub", s.nn.ReLU()),
        lambda m, s: setattr(m, "sub", None),
        lambda m, s: setattr(m, "sub", 3),
        lambda m, s: setattr(m, "sub", s.nn.Tanh()),
    ],
    "a buffer's slot takes a Tensor or None, and stays a buffer": [
        lambda m, s: m.register_buffer("stat", s.zeros(2)),
        lambda m, s: setattr(m, "stat", 1.5),
        lambda m, s: setattr(m, "stat", s.zeros(4)),
        lambda m, s: setattr(m, "stat", None),
        lambda m, s: setattr(m, "stat", s.zeros(3)),
    ],
    "a Parameter over a buffer or a plain attribute is registered last": [
        lambda m, s: m.register_buffer("stat", s.zeros(2)),
        lambda m, s: setattr(m, "plain", 3),
        lambda m, s: setattr(m, "plain", s.param(1)),
        lambda m, s: setattr(m, "stat", s.param(2)),
        lambda m, s: setattr(m, "weight", s.param(2, 3)),
    ],
    "a parameter's slot refuses a Module; a Parameter replaces a child or a buffer": [
        lambda m, s: setattr(m, "weight", s.nn.Identity()),
        lambda m, s: setattr(m, "weight", s.zeros(1)),
        lambda m, s: setattr(m, "sub", s.nn.ReLU()),
        lambda m, s: setattr(m, "sub", s.param(1)),
        lambda m, s: m.register_buffer("stat", s.zeros(2)),
        lambda m, s: setattr(m, "stat", s.nn.Tanh()),
        lambda m, s: setattr(m, "stat", s.zeros(1)),
    ],
    "register_* refuse a name that is something else": [
        lambda m, s: m.register_buffer("weight", s.zeros(1)),
        lambda m, s: m.register_parameter("forward", s.param(1)),
        lambda m, s: m.add_module("bias", s.nn.ReLU()),
        lambda m, s: m.register_buffer("a.b", s.zeros(1)),
        lambda m, s: m.register_buffer("", s.zeros(1)),
        lambda m, s: m.register_buffer(3, s.zeros(1)),
        lambda m, s: m.register_buffer("x", [1.0]),
        lambda m, s: m.register_buffer("x", None),
        lambda m, s: m.register_buffer("x", s.zeros(1), persistent=False),
        lambda m, s: m.register_parameter("bias", None),
    ],
    "del removes a registration": [
        lambda m, s: m.register_buffer("stat", s.zeros(2)),
        lambda m, s: delattr(m, "stat"),
        lambda m, s: delattr(m, "bias"),
        lambda m, s: setattr(m, "stat", s.zeros(1)),  # a plain attribute now
        lambda m, s: setattr(m, "bias", s.zeros(1)),
    ],
}


def outcome(side: Side, steps) -> tuple:
    module = side.nn.Linear(3, 2)
    raised = []
    for step in steps:
        try:
            step(module, side)
            raised.append(None)
        except Exception as error:  # noqa: BLE001 - the type is what is compared
            raised.append(type(error).__name__)
    return (raised, [n for n, _ in module.named_parameters()],
            [n for n, _ in module.named_buffers()], [n for n, _ in module.named_children()],
            list(module.state_dict()))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_setting_and_registering_parts_behave_as_torchs(sides, name) -> None:
    assert outcome(sides["chaingrad"], SCENARIOS[name]) == outcome(sides["torch"], SCENARIOS[name])


def test_a_refused_assignment_names_the_module_the_slot_and_what_it_takes() -> None:
    layer = cnn.Linear(2, 1)
    layer.register_buffer("running_mean", Tensor(np.zeros(2)))
    with pytest.raises(TypeError, match=r"Linear: cannot assign float as buffer "
                                        r"'running_mean' \(chaingrad.Tensor or None expected\)"):
        layer.running_mean = 0.0
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'x' "):
        layer.register_buffer("x", [1.0])
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        layer.register_buffer("weight", Tensor(np.zeros(2)))
    with pytest.raises(TypeError, match=r"Linear: cannot assign ReLU as parameter 'bias' "):
        layer.bias = cnn.ReLU()


def test_a_subclass_without_init_takes_buffers() -> None:
    class Counter(cnn.Module):
        def __init__(self):  # no super().__init__(), as micrograd's modules
            self.register_buffer("count", Tensor(np.zeros(1)))

    counter = Counter()
    assert list(counter.state_dict()) == ["count"] and counter.get_buffer("count") is counter.count


@pytest.mark.parametrize(("method", "target"), [
    ("get_submodule", "blocks.0.stats"), ("get_submodule", ""), ("get_submodule", "blocks.5"),
    ("get_submodule", "head.0.weight"), ("get_submodule", "nope.x"),
    ("get_parameter", "head.0.weight"), ("get_parameter", "blocks.0.stats.running"),
    ("get_parameter", "head.0.nope"), ("get_parameter", "steps"), ("get_parameter", "blocks"),
    ("get_buffer", "blocks.1.stats.count"), ("get_buffer", "steps"),
    ("get_buffer", "blocks.0.stats.scale"), ("get_buffer", "blocks.1.mask"),
])
def test_get_submodule_parameter_and_buffer_as_torchs(sides, method, target) -> None:
    results = []
    for side in sides.values():
        model = labelled(nested(side))
        try:
            found = getattr(model, method)(target)
            results.append(getattr(found, "label", None) or tuple(found.shape))
        except AttributeError as error:
            results.append(str(error))
    assert results[0] == results[1]


@pytest.mark.parametrize("make", [lambda nn: nn.Linear(3, 2, bias=False),
                                  lambda nn: nn.Conv2d(1, 2, 3, bias=False)])
def test_a_layer_without_bias_keeps_the_slot_of_one(sides, make) -> None:
    results = []
    for side in sides.values():
        layer = make(side.nn)
        with pytest.raises(TypeError, match="cannot assign .* as parameter 'bias'"):
            layer.bias = side.zeros(2)
        layer.bias = side.param(2)
        results.append([n for n, _ in layer.named_parameters()])
    assert results[0] == results[1] == ["weight", "bias"]


@pytest.mark.parametrize(("name", "kwargs"), [
    ("CrossEntropyLoss", {"weight": 3}), ("NLLLoss", {"weight": 3}), ("NLLLoss", {}),
    ("BCEWithLogitsLoss", {"weight": 2, "pos_weight": 2}), ("BCEWithLogitsLoss", {}),
])
def test_a_losss_weights_are_its_buffers_as_torchs(sides, name, kwargs) -> None:
    results = []
    for side in sides.values():
        loss = getattr(side.nn, name)(**{k: side.zeros(n) + 1 for k, n in kwargs.items()})
        loss.double()
        results.append((list(loss.state_dict()), [str(b.dtype).split(".")[1]
                                                   for b in loss.buffers()]))
    assert results[0] == results[1]


def test_a_losss_weight_may_be_an_array(torch) -> None:
    weight = np.array([1.0, 3.0])
    loss = cnn.CrossEntropyLoss(weight=weight)
    assert isinstance(loss.weight, Tensor) and list(loss.state_dict()) == ["weight"]
    value = loss(Tensor(np.array([[0.5, -0.5]])), np.array([1]))
    expected = torch.nn.CrossEntropyLoss(weight=torch.from_numpy(weight))(
        torch.tensor([[0.5, -0.5]], dtype=torch.float64), torch.tensor([1]))
    assert value.item() == pytest.approx(expected.item())
