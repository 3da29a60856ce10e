"""chaingrad/nn/modules/container.py against torch.nn's: ModuleList, ModuleDict, ParameterList
and ParameterDict (and Sequential, which shares ModuleList's numbering), each driven through the
same steps on both sides: what each step returns or raises, the printed form, the names in
state_dict and the children afterwards."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as cnn
from chaingrad import Tensor
from chaingrad.nn import Identity, Linear, Sequential, Sigmoid, Tanh


class Side:
    """One library's ``nn`` and its tensors, so that the same steps run on both."""

    def __init__(self, nn, from_numpy):
        self.nn, self.from_numpy = nn, from_numpy

    def tensor(self, *shape, dtype="float32"):
        return self.from_numpy(np.ones(shape, dtype=dtype))

    def param(self, *shape):
        return self.nn.Parameter(self.tensor(*shape))


@pytest.fixture
def sides(torch):
    return [Side(cnn, chaingrad.from_numpy), Side(torch.nn, torch.from_numpy)]


def summary(value) -> object:
    """What a step gave, comparable across the two libraries: a module by its printed
    form, a tensor by its kind and shape, a container of them element by element."""
    if hasattr(value, "named_children"):
        return ("module", repr(value).replace("chaingrad.", "torch."))
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return (type(value).__name__, tuple(value.shape), str(value.dtype).split(".")[-1])
    if isinstance(value, (list, tuple)):
        return [summary(v) for v in value]
    return value


def run(side: Side, make, steps) -> list:
    """The container ``make(side)`` gives, driven by ``steps``: each step's result (or the
    type of what it raised), then the container's printed form, state_dict keys and
    children's names."""
    container = make(side)
    seen = []
    for step in steps:
        try:
            seen.append(summary(step(container, side)))
        except Exception as error:  # noqa: BLE001 - the type is what is compared
            seen.append(type(error).__name__)
    return [*seen, summary(container), list(container.state_dict()),
            [name for name, _ in container.named_children()],
            [name for name, _ in container.named_parameters()]]


def linears(side, n=3):
    return [side.nn.Linear(2, 2) for _ in range(n)]


CASES = {
    "ModuleList built, indexed and sliced": (
        lambda s: s.nn.ModuleList(linears(s) + [s.nn.ReLU()]), [
            lambda c, s: len(c),
            lambda c, s: c[-1],
            lambda c, s: c[1:3],
            lambda c, s: c[::2],
            lambda c, s: c[4],
            lambda c, s: c[-5],
            lambda c, s: [type(m).__name__ for m in c],
            lambda c, s: c(1),
        ]),
    "ModuleList changed": (
        lambda s: s.nn.ModuleList(), [
            lambda c, s: c.append(s.nn.Tanh()),
            lambda c, s: c.extend(linears(s, 2)),
            lambda c, s: c.extend(3),
            lambda c, s: c.insert(0, s.nn.ReLU()),
            lambda c, s: c.insert(2, s.nn.Identity()),
            lambda c, s: c.insert(len(c), s.nn.Sigmoid()),
            lambda c, s: c.__setitem__(1, s.nn.Flatten()),
            lambda c, s: c.pop(0),
            lambda c, s: c.__delitem__(slice(1, 3)),
            lambda c, s: c.__iadd__([s.nn.ReLU()]),
            lambda c, s: c + s.nn.ModuleList([s.nn.Tanh()]),
            lambda c, s: c.__delitem__(-1),
        ]),
    "ModuleList printed: runs of equal layers as one line": (
        lambda s: s.nn.ModuleList([s.nn.ModuleList(linears(s, 2)), s.nn.Tanh(), s.nn.Tanh(),
                                   s.nn.Linear(2, 3), s.nn.Linear(2, 2)]), []),
    "Sequential changed as ModuleList": (
        lambda s: s.nn.Sequential(*linears(s)), [
            lambda c, s: c.pop(1),
            lambda c, s: c.insert(-1, s.nn.ReLU()),
            lambda c, s: c.extend([s.nn.Tanh()]),
            lambda c, s: c[1:],
        ]),
    "ModuleDict built from a dict, pairs and update": (
        lambda s: s.nn.ModuleDict({"b": s.nn.Linear(2, 2), "a": s.nn.ReLU()}), [
            lambda c, s: c.update([("c", s.nn.Tanh()), ["b", s.nn.Linear(2, 3)]]),
            lambda c, s: c.update(OrderedDict(z=s.nn.Identity())),
            lambda c, s: c.update(s.nn.ModuleDict({"y": s.nn.Sigmoid()})),
            lambda c, s: (list(c), list(c.keys()), [type(m).__name__ for m in c.values()]),
            lambda c, s: [k for k, _ in c.items()],
            lambda c, s: ("a" in c, "q" in c, len(c)),
            lambda c, s: c["c"],
            lambda c, s: c["q"],
            lambda c, s: c.pop("a"),
            lambda c, s: c.__delitem__("z"),
            lambda c, s: c.__setitem__("x.y", s.nn.ReLU()),
            lambda c, s: c.__setitem__("keys", s.nn.ReLU()),
            lambda c, s: c.update(3),
            lambda c, s: c.update([1]),
            lambda c, s: c.update([("a", s.nn.ReLU(), 1)]),
            lambda c, s: c(1),
        ]),
    "ModuleDict cleared": (
        lambda s: s.nn.ModuleDict([("w", s.nn.Linear(2, 2))]), [
            lambda c, s: c.clear(),
            lambda c, s: len(c),
        ]),
    "ParameterList": (
        lambda s: s.nn.ParameterList([s.tensor(2, 3), s.param(4)]), [
            lambda c, s: c.append(s.tensor(1, dtype="float64")),
            lambda c, s: c.extend([s.param(2)]),
            lambda c, s: c.extend(s.tensor(2)),
            lambda c, s: c.append("text"),
            lambda c, s: c[0],
            lambda c, s: c[-1],
            lambda c, s: c[1:3],
            lambda c, s: c[9],
            lambda c, s: c.__setitem__(0, s.tensor(5)),
            lambda c, s: [p.requires_grad for p in c if hasattr(p, "shape")],
            lambda c, s: len(c),
            lambda c, s: c(1),
        ]),
    "ParameterDict": (
        lambda s: s.nn.ParameterDict({"w": s.tensor(2), "b": s.param(3)}), [
            lambda c, s: c.update(OrderedDict(z=s.tensor(1), a=s.tensor(1, dtype="float64"))),
            lambda c, s: c.update([("m", s.tensor(2))]),
            lambda c, s: list(c),
            lambda c, s: c["w"],
            lambda c, s: c.get("q", 5),
            lambda c, s: c.pop("z"),
            lambda c, s: c.popitem(),
            lambda c, s: c.setdefault("n", s.tensor(4)),
            lambda c, s: c.setdefault("w", s.tensor(9)),
            lambda c, s: ("w" in c, len(c), list(reversed(c))),
            lambda c, s: c.copy(),
            lambda c, s: c | s.nn.ParameterDict({"o": s.tensor(1)}),
            lambda c, s: c.fromkeys(["p", "q"]),
            lambda c, s: c(1),
        ]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_container_behaves_as_torchs(sides, name) -> None:
    make, steps = CASES[name]
    ours, theirs = (run(side, make, steps) for side in sides)
    for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a == b, f"step {step}: chaingrad {a!r}, torch {b!r}"


def container_net(side: Side):
    """A model whose layers are in a ModuleList and a ModuleDict, a scale in a
    ParameterList."""
    nn = side.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
            self.heads = nn.ModuleDict({"mean": nn.Linear(3, 1)})
            self.scales = nn.ParameterList([side.tensor(3)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).tanh() * self.scales[0]
            return self.heads["mean"](x)

    return Net()


def test_a_model_of_containers_trains_and_saves_as_torchs(sides, torch) -> None:
    """Its parameters reach the optimizer, and its state dict moves between the
    libraries."""
    ours, theirs = models = [container_net(side) for side in sides]
    ours.load_state_dict(theirs.state_dict())
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    losses = []
    for model, side, optim in zip(models, sides, (chaingrad.optim, torch.optim), strict=True):
        step = optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = (model(side.from_numpy(x)) ** 2).mean()
            step.zero_grad()
            loss.backward()
            step.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    for key, value in ours.state_dict().items():
        np.testing.assert_allclose(value, theirs.state_dict()[key].numpy(), rtol=1e-5,
                                   atol=1e-7)


def test_a_parameter_dicts_key_is_a_string() -> None:
    table = cnn.ParameterDict()
    with pytest.raises(TypeError, match="cannot be used as a key as it is not a string"):
        table[3] = chaingrad.ones(1)
    assert len(table) == 0


# ---- Sequential ----


def test_sequential_names_children_like_torch() -> None:
    model = Sequential(Linear(2, 4), Tanh(), Linear(4, 4), Sigmoid(), Identity(),
                       Linear(4, 1))
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias", "5.weight", "5.bias"]
    assert model.parameters()[0] is model[0].weight
    assert len(model) == 6 and isinstance(model[1], Tanh)
    assert [type(m).__name__ for m in model][:2] == ["Linear", "Tanh"]
    assert "(0): Linear(in_features=2, out_features=4, bias=True)" in repr(model)
    out = model(Tensor(np.ones((3, 2))))
    assert out.shape == (3, 1)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_sequential_is_changed_as_torchs() -> None:
    import chaingrad.nn as cnn

    model = cnn.Sequential(cnn.ReLU(), cnn.Tanh(), cnn.Sigmoid())
    del model[0]
    assert [type(m).__name__ for m in model] == ["Tanh", "Sigmoid"]
    assert [n for n, _ in model.named_children()] == ["0", "1"]  # renumbered
    model[1] = cnn.Identity()
    model.insert(0, cnn.ReLU()).extend([cnn.Tanh()]).append(cnn.Sigmoid())
    assert [type(m).__name__ for m in model] == ["ReLU", "Tanh", "Identity", "Tanh", "Sigmoid"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        model[5]  # noqa: B018
