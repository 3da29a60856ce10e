"""chaingrad/nn/modules/module.py, the one Module base: attributes register children and
Parameters as in torch.nn.Module (checked against torch itself), calling runs forward,
train/eval, zero_grad, state dicts, printing; micrograd's classes on the same base; the scalar
side without numpy."""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest

from chaingrad import Tensor, nn
from chaingrad.nn import (
    MLP,
    Dropout,
    Linear,
    Module,
    Neuron,
    Parameter,
    ReLU,
    Sequential,
    Tanh,
    manual_seed,
)


class Net(Module):
    """A PyTorch-style network: parts set as attributes, in a forward of its own."""

    def __init__(self):
        super().__init__()
        self.fc1 = Linear(4, 8)
        self.scale = Parameter(np.ones(8, np.float32))
        self.body = Sequential(Tanh(), Dropout(0.5), Linear(8, 8))
        self.note = Tensor(np.zeros(3))  # a plain Tensor: not a parameter, as in torch
        self.helpers = [Linear(2, 2)]  # a plain list: not registered, as in torch
        self.fc2 = Linear(8, 2, bias=False)

    def forward(self, x):
        return self.fc2(self.body(self.fc1(x) * self.scale))


def torch_net(torch):
    nn = torch.nn

    class TorchNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.scale = nn.Parameter(torch.ones(8))
            self.body = nn.Sequential(nn.Tanh(), nn.Dropout(0.5), nn.Linear(8, 8))
            self.note = torch.zeros(3)
            self.helpers = [nn.Linear(2, 2)]
            self.fc2 = nn.Linear(8, 2, bias=False)

        def forward(self, x):
            return self.fc2(self.body(self.fc1(x) * self.scale))

    return TorchNet()


def test_a_subclass_registers_what_it_sets_as_torch_does(torch) -> None:
    ours, theirs = Net(), torch_net(torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert {k: v.shape for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [type(m).__name__ for m in list(ours.modules())[1:]] == [
        type(m).__name__ for m in list(theirs.modules())[1:]]
    assert repr(ours).replace("Net(", "TorchNet(") == repr(theirs)
    assert all(p.requires_grad for p in ours.parameters())


def test_calling_runs_forward_and_the_weights_load_from_torch(torch) -> None:
    ours, theirs = Net().eval(), torch_net(torch).eval()
    assert ours.load_state_dict(theirs.state_dict()).missing_keys == []
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(Tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), atol=1e-6)


def test_train_eval_and_zero_grad_reach_every_module() -> None:
    model = Net()
    assert model.training and model.body[1].training
    assert model.eval() is model and not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="train: mode must be True or False, got 'no'"):
        model.train("no")
    model(Tensor(np.ones((2, 4), np.float32))).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(not p.grad.any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_a_registered_part_is_replaced_only_by_its_kind() -> None:
    layer = Linear(2, 3)
    with pytest.raises(TypeError, match=r"Linear: cannot assign Tensor as parameter 'weight' "
                                        r"\(chaingrad.nn.Parameter or None expected\)"):
        layer.weight = Tensor(np.ones((3, 2)))
    layer.weight = Parameter(np.ones((3, 2), np.float32))  # a Parameter: fine
    layer.bias = None  # None: fine, and no longer a parameter
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    model = Sequential(layer)
    with pytest.raises(TypeError, match="cannot assign int as child module '0'"):
        setattr(model, "0", 3)  # noqa: B010 - a child's name is not an identifier


def test_shared_parts_are_listed_once_and_keyed_under_each_name(torch) -> None:
    shared = Linear(2, 2)
    ours = Sequential(shared, ReLU(), shared)
    theirs_shared = torch.nn.Linear(2, 2)
    theirs = torch.nn.Sequential(theirs_shared, torch.nn.ReLU(), theirs_shared)
    assert [n for n, _ in ours.named_parameters()] == [
        n for n, _ in theirs.named_parameters()] == ["0.weight", "0.bias"]
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(ours) == 3 and len(list(ours.children())) == 2  # as torch's children()
    ours.load_state_dict(theirs.state_dict())


def test_a_module_that_contains_itself_is_walked_once() -> None:
    model = Sequential(Linear(2, 2))
    model.again = model
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    assert list(model.state_dict()) == ["0.weight", "0.bias"]


def test_a_network_may_hold_micrograds_mlp() -> None:
    class Hybrid(Module):
        def __init__(self):
            self.mlp = MLP(2, [3, 1])  # no super().__init__(), as micrograd's modules
            self.gain = Parameter(np.ones(1))

    random.seed(0)
    model = Hybrid()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["gain", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias"]
    assert model.state_dict()["mlp.0.weight"].shape == (3, 2)
    model.mlp([1.0, 2.0]).backward()
    model.gain.grad = np.ones(1)
    model.zero_grad()
    assert all(v.grad == 0.0 for v in model.mlp.parameters()) and model.gain.grad is None
    other = Hybrid()
    other.load_state_dict(model.state_dict())
    assert [v.data for v in other.mlp.parameters()] == [v.data for v in model.mlp.parameters()]


def test_any_depth_of_nesting_is_walked_without_recursion() -> None:
    class Wrap(Module):
        def __init__(self, inner):
            self.inner = inner

    model = Linear(1, 1)
    for _ in range(5000):
        model = Wrap(model)
    assert len(model.named_parameters()) == 2 and len(list(model.modules())) == 5001
    assert len(model.state_dict()) == 2
    model.eval().zero_grad()


def test_parameter_is_a_tensor_that_asks_for_gradients() -> None:
    data = Tensor(np.arange(3.0))
    p = Parameter(data)
    assert isinstance(p, Tensor) and p.requires_grad and p.detach().numpy() is data.numpy()
    assert type(p * 2) is Tensor and repr(p).startswith("Parameter containing:\ntensor(")
    assert not Parameter(np.ones(2), requires_grad=False).requires_grad
    assert Parameter().shape == (0,)
    for twin in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(twin) is Parameter and twin.requires_grad and twin.tolist() == [0, 1, 2]


def test_next_walks_the_parameters_as_torchs_generator_and_they_stay_a_list(torch) -> None:
    ours, theirs = (m.Sequential(m.Linear(2, 3), m.Linear(3, 1)) for m in (nn, torch.nn))
    first, second = next(iter(ours.parameters())), ours.parameters()[1]
    assert next(ours.parameters()) is first  # each call starts again, as torch's does
    walked = ours.parameters()
    assert [next(walked) for _ in range(4)] == list(ours.parameters())
    with pytest.raises(StopIteration):
        next(walked)
    assert next(ours.named_parameters())[0] == next(theirs.named_parameters())[0] == "0.weight"
    assert tuple(next(ours.parameters()).shape) == tuple(next(theirs.parameters()).shape)
    params = ours.parameters()  # micrograd's list: indexed, measured, added to, iterated
    assert params[1] is second and len(params) == 4 and len(params + [1]) == 5
    assert list(params) == list(params)


def test_the_bare_module_and_its_errors() -> None:
    bare = Module()
    assert repr(bare) == "Module()" and bare.parameters() == [] and bare.state_dict() == {}
    assert list(bare.children()) == [] and list(bare.modules()) == [bare]
    with pytest.raises(NotImplementedError, match="Module must define forward"):
        bare(1)
    with pytest.raises(TypeError, match="cannot describe Module; save and load rebuild only"):
        bare.architecture()


def test_micrograds_classes_are_modules_that_keep_their_ways() -> None:
    random.seed(0)
    model = MLP(2, [3, 1])
    assert isinstance(model, Module) and model.forward([1.0, 2.0]).data == model([1.0, 2.0]).data
    assert list(model.children()) == []  # its layers are in a list, as micrograd keeps them
    assert Neuron(2).forward([1.0, 2.0])._op == "ReLU"
    assert model.eval() is model and not model.training


def test_the_scalar_side_needs_no_numpy(run_python) -> None:
    code = ("import sys\n"
            "sys.modules['numpy'] = None  # any import of numpy would now fail\n"
            "import random, chaingrad.nn\n"
            "random.seed(0)\n"
            "model = chaingrad.nn.MLP(2, [3, 1])\n"
            "loss = (model([1.0, -2.0]) - 1) ** 2\n"
            "model.zero_grad(); loss.backward()\n"
            "assert len(model.named_parameters()) == 4 and len(model.parameters()) == 13\n"
            "assert model.architecture()['nouts'] == [3, 1] and model.eval() is model\n"
            "assert repr(model).startswith('MLP of [Layer of [ReLUNeuron(2)')\n"
            "assert list(model.modules()) == [model]\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    code = ("import sys, chaingrad.nn\n"
            "chaingrad.nn.MLP(2, [3, 1])([1.0, 2.0]).backward()\n"
            "assert 'numpy' not in sys.modules, 'chaingrad.nn.MLP imported numpy'\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr


def test_manual_seed_is_reached_from_chaingrad_nn() -> None:
    manual_seed(3)
    a = Linear(3, 2).weight.detach().numpy().copy()
    manual_seed(3)
    assert np.array_equal(a, Linear(3, 2).weight.detach().numpy())


def test_a_sequential_is_indexed_and_sliced_as_torchs(torch) -> None:
    ours = Sequential(Linear(2, 3), ReLU(), Linear(3, 1))
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    for index in (slice(1, None), slice(None, None, 2), slice(-1, None)):
        assert list(ours[index].state_dict()) == list(theirs[index].state_dict())
        assert repr(ours[index]) == repr(theirs[index])
    assert ours[-1] is list(ours)[2] and len(ours.append(Tanh())) == 4
    with pytest.raises(IndexError, match="index 4 is out of range"):
        ours[4]


def test_torch_module_methods_a_beginner_uses() -> None:
    import numpy as np

    import chaingrad.nn as cnn

    model = cnn.Sequential(cnn.Linear(2, 3), cnn.ReLU())
    model.add_module("head", cnn.Linear(3, 1))
    model.register_parameter("scale", cnn.Parameter(np.ones(1)))
    assert [n for n, _ in model.named_parameters()] == [
        "scale", "0.weight", "0.bias", "head.weight", "head.bias"]
    assert model.to("cpu") is model and model.cpu() is model
    seen = []
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    assert seen == ["Linear", "ReLU", "Linear", "Sequential"]  # children first, as torch
    assert model.requires_grad_(False) is model
    assert not any(p.requires_grad for p in model.parameters())
    model.requires_grad_()
    assert model.double() is model and model[0].weight.dtype == np.float64
    assert model.to(np.float32)[0].weight.dtype == np.float32
    with pytest.raises(NotImplementedError, match="a device other than it is not in"):
        model.to("cuda")
    with pytest.raises(TypeError, match="only accepts floating point dtypes"):
        model.to(np.int64)
    with pytest.raises(KeyError, match=r'module name can.*got: a\.b'):
        model.add_module("a.b", cnn.ReLU())
    with pytest.raises(TypeError, match="cannot assign 'ndarray' object to parameter 'w'"):
        model.register_parameter("w", np.ones(1))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        model.add_module("x", 3)
    with pytest.raises(AttributeError,
                       match="chaingrad.nn.Module has no 'register_backward_hook' yet"):
        model.register_backward_hook  # noqa: B018
    with pytest.raises(AttributeError, match="'Sequential' object has no attribute 'nope'"):
        model.nope  # noqa: B018


def test_zero_grad_sets_none_or_zeroes_in_place() -> None:
    import numpy as np

    import chaingrad.nn as cnn

    model = cnn.Linear(2, 1)
    model(np.ones((1, 2), dtype=np.float32)).sum().backward()
    grad = model.weight.grad
    model.zero_grad(set_to_none=False)
    assert not np.asarray(model.weight.grad).any()
    model.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None
    assert grad is not None


@pytest.mark.parametrize("cast", ["half", "float", "double", "to_float64", "to_float16"])
def test_half_double_float_and_to_dtype_convert_as_torch(torch, cast) -> None:
    """The floating parameters and buffers take the dtype, in place (the same objects),
    with torch's numbers; an integer buffer keeps its own; the module itself is returned."""
    import chaingrad
    import chaingrad.nn as cnn

    def convert(lib, model):
        if cast.startswith("to_"):
            return model.to(getattr(lib, cast[3:]))
        return getattr(model, cast)()

    ours = cnn.Sequential(cnn.Linear(3, 2), cnn.BatchNorm1d(2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    theirs.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in ours.state_dict().items()})
    weight = ours[0].weight
    assert convert(chaingrad, ours) is ours and ours[0].weight is weight
    convert(torch, theirs)
    mine = dict(ours.named_parameters()) | dict(ours.named_buffers())
    expected = dict(theirs.named_parameters()) | dict(theirs.named_buffers())
    assert list(mine) == list(expected)
    for name, tensor in mine.items():
        assert str(tensor.dtype).split(".")[1] == str(expected[name].dtype).split(".")[1], name
        assert np.array_equal(tensor.detach().numpy(), expected[name].detach().numpy()), name


def test_bfloat16_converts_or_says_chaingrad_lacks_the_dtype() -> None:
    import chaingrad
    import chaingrad.nn as cnn

    model = cnn.Linear(2, 2)
    try:
        bfloat16 = chaingrad.bfloat16
    except AttributeError:  # the dtype is not there yet: the module says so, and is unchanged
        with pytest.raises(NotImplementedError, match="chaingrad has no 'bfloat16' dtype yet"):
            model.bfloat16()
        assert model.weight.dtype == chaingrad.float32
    else:
        assert model.bfloat16() is model and model.weight.dtype == bfloat16
