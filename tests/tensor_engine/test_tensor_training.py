"""The training stack on Tensor models: optimizers against torch.optim, state dicts with
PyTorch's names, save/load of a Sequential (an MLP and a CNN), to_torch, and bad files."""

import copy
import json
import os
import pickle
import struct

import numpy as np
import pytest

import chaingrad.serialization as cio
from chaingrad import Tensor, optim
from chaingrad.losses import cross_entropy
from chaingrad.nn import (
    Conv2d,
    Dropout,
    Flatten,
    Linear,
    MaxPool2d,
    Module,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
    manual_seed,
    registry,
)
from chaingrad.serialization import ModelFileError, load, save, to_torch

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")
nn = torch.nn

IMAGES = np.random.default_rng(0).normal(size=(5, 1, 8, 8)).astype(np.float32)
LABELS = np.array([0, 3, 1, 2, 3])


def make_cnn(seed=0, dtype=np.float32):
    manual_seed(seed)
    return Sequential(
        Conv2d(1, 4, 3, padding=1, dtype=dtype), ReLU(), MaxPool2d(2),
        Conv2d(4, 6, (3, 2), stride=(1, 2), padding=(1, 0), dtype=dtype), Tanh(),
        Flatten(), Dropout(0.25), Linear(48, 8, dtype=dtype), Sigmoid(),
        Linear(8, 4, bias=False, dtype=dtype),
    ).eval()


def torch_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, (3, 2), stride=(1, 2), padding=(1, 0)), nn.Tanh(),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(48, 8), nn.Sigmoid(), nn.Linear(8, 4, bias=False),
    ).eval()


def make_mlp(seed=0, dtype=np.float32):
    manual_seed(seed)
    return Sequential(Linear(64, 16, dtype=dtype), ReLU(), Linear(16, 4, dtype=dtype))


def weights(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def same_weights(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def outputs(model, x=IMAGES):
    return model(Tensor(x)).detach().numpy()


@pytest.fixture
def saved_cnn(tmp_path):
    model = make_cnn()
    path = tmp_path / "cnn.safetensors"
    save(model, path)
    return model, path


# ---- optimizers: the same steps as torch.optim ----


@pytest.mark.parametrize(
    ("make", "make_torch"),
    [
        (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
         lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                    weight_decay=1e-3)),
        (lambda ps: optim.Adam(ps, lr=0.01, weight_decay=1e-3),
         lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=1e-3)),
        (lambda ps: optim.AdamW(ps, lr=0.01), lambda ps: torch.optim.AdamW(ps, lr=0.01)),
    ],
    ids=["sgd-nesterov", "adam", "adamw"],
)
def test_optimizers_train_a_cnn_as_torch_optim_does(make, make_torch):
    model = make_cnn(dtype=np.float64)
    net = to_torch(model, dtype=torch.float64)
    opt, torch_opt = make(model.named_parameters()), make_torch(net.parameters())
    x, tx = Tensor(IMAGES.astype(np.float64)), torch.tensor(IMAGES, dtype=torch.float64)
    for _ in range(4):
        loss = cross_entropy(model(x), LABELS)
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch_loss = nn.functional.cross_entropy(net(tx), torch.tensor(LABELS))
        torch_opt.zero_grad()
        torch_loss.backward()
        torch_opt.step()
        assert loss.item() == pytest.approx(torch_loss.item(), abs=1e-10)
    for name, value in net.state_dict().items():
        np.testing.assert_allclose(model.state_dict()[name], value.numpy(), atol=1e-10)


def test_a_non_finite_gradient_names_the_tensor_parameter():
    model = make_mlp()
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    model(Tensor(np.ones((2, 64)))).sum().backward()
    model[2].bias.grad[1] = np.nan
    before = weights(model)
    with pytest.raises(optim.NonFiniteGradError, match="parameter 2.bias is not finite"):
        opt.step()
    assert same_weights(weights(model), before)


# ---- state dicts, save and load ----


def test_state_dict_has_torchs_names_and_shapes():
    ours = {k: v.shape for k, v in make_cnn().state_dict().items()}
    assert ours == {k: tuple(v.shape) for k, v in torch_cnn().state_dict().items()}
    assert list(ours) == ["0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias",
                          "9.weight"]


def test_architecture_lists_layer_kinds_and_arguments():
    arch = make_cnn().architecture()
    assert [layer["type"] for layer in arch["layers"]] == [
        "Conv2d", "ReLU", "MaxPool2d", "Conv2d", "Tanh", "Flatten", "Dropout", "Linear",
        "Sigmoid", "Linear"]
    assert arch["layers"][3] == {"type": "Conv2d", "in_channels": 4, "out_channels": 6,
                                 "kernel_size": [3, 2], "stride": [1, 2], "padding": [1, 0],
                                 "bias": True}
    assert arch["layers"][9] == {"type": "Linear", "in_features": 8, "out_features": 4,
                                 "bias": False}
    assert json.loads(json.dumps(arch)) == arch


@pytest.mark.parametrize("make", [make_mlp, make_cnn], ids=["mlp", "cnn"])
def test_save_load_round_trip(make, tmp_path):
    model = make(dtype=np.float64)  # saved as float32, loaded as float32
    x = np.random.default_rng(1).normal(size=(3, 64)) if make is make_mlp else IMAGES
    path = tmp_path / "m.safetensors"
    save(model, path)
    loaded = load(path)
    assert type(loaded) is Sequential and loaded.architecture() == model.architecture()
    for (name, p), (name2, q) in zip(model.named_parameters(), loaded.named_parameters(),
                                     strict=True):
        assert name == name2 and q.dtype == np.float32
        np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy().astype(np.float32))
    np.testing.assert_allclose(outputs(loaded.eval(), x), outputs(model, x), atol=1e-5)


def test_the_file_holds_float32_c_contiguous_tensors_and_the_architecture(saved_cnn):
    model, path = saved_cnn
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    assert {header[k]["dtype"] for k in header if k != "__metadata__"} == {"F32"}
    arch = json.loads(header["__metadata__"]["chaingrad"])
    assert arch == dict(model.architecture(), format_version=cio.FORMAT_VERSION)
    transposed = make_cnn(3)
    transposed[7].weight.data = np.asfortranarray(transposed[7].weight.detach().numpy())
    save(transposed, path)
    np.testing.assert_array_equal(safetensors_torch.load_file(str(path))["7.weight"].numpy(),
                                  transposed[7].weight.detach().numpy())


def test_load_keeps_the_callers_generator(saved_cnn):
    _, path = saved_cnn
    manual_seed(5)
    expected = Dropout(0.5)(Tensor(np.ones(50))).numpy()
    manual_seed(5)
    load(path)
    np.testing.assert_array_equal(Dropout(0.5)(Tensor(np.ones(50))).numpy(), expected)


def test_load_into_an_existing_model(saved_cnn):
    model, path = saved_cnn
    other = make_cnn(seed=7)
    assert load(path, model=other) is other
    np.testing.assert_allclose(outputs(other), outputs(model), atol=1e-6)
    wrong = make_mlp()
    before = weights(wrong)
    with pytest.raises(ModelFileError, match=r"holds Sequential\(Conv2d\(in_channels=1.*"
                                             r"model given is Sequential\(Linear"):
        load(path, model=wrong)
    assert same_weights(weights(wrong), before)


def test_save_refuses_layers_it_cannot_rebuild(tmp_path):
    class Scale(Module):
        def forward(self, x):
            return x * 2

    path = tmp_path / "x.safetensors"
    with pytest.raises(TypeError, match="cannot describe Scale; save and load rebuild only"):
        save(Scale(), path)
    with pytest.raises(TypeError, match="Sequential layer 1 is a Scale"):
        save(Sequential(Linear(2, 2), Scale()), path)

    class MyLinear(Linear):
        pass

    with pytest.raises(TypeError, match="cannot describe MyLinear"):
        save(MyLinear(2, 2), path)
    with pytest.raises(TypeError, match="Sequential layer 0 is a MyLinear"):
        save(Sequential(MyLinear(2, 2)), path)
    assert not path.exists()


def test_a_failed_save_leaves_the_old_file_intact(saved_cnn, monkeypatch):
    _, path = saved_cnn
    old = path.read_bytes()
    monkeypatch.setattr(cio.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError("full")))
    with pytest.raises(OSError, match="full"):
        save(make_cnn(9), path)
    assert path.read_bytes() == old and os.listdir(path.parent) == [path.name]


# ---- to_torch, and the file in torch ----


def test_to_torch_gives_the_same_outputs_for_a_cnn():
    model = make_cnn()
    net = to_torch(model)
    assert isinstance(net, nn.Sequential) and not net.training
    assert [type(m).__name__ for m in net] == [type(m).__name__ for m in model]
    got = net(torch.tensor(IMAGES)).detach().numpy()
    np.testing.assert_allclose(got, outputs(model), atol=1e-6, rtol=0)
    assert to_torch(model.train()).training
    assert to_torch(make_mlp(), dtype=torch.float64)[0].weight.dtype == torch.float64


def test_to_torch_refuses_other_objects():
    with pytest.raises(TypeError, match="to_torch: expected an MLP or a Tensor layer"):
        to_torch(object())


@pytest.mark.parametrize("make", [make_mlp, make_cnn], ids=["mlp", "cnn"])
def test_the_file_loads_into_torch_with_strict_keys(make, tmp_path):
    model = make()
    path = tmp_path / "m.safetensors"
    save(model, path)
    net = (nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 4)) if make is make_mlp
           else torch_cnn())
    net.load_state_dict(safetensors_torch.load_file(str(path)), strict=True)
    x = np.random.default_rng(2).normal(size=(3, 64)).astype(np.float32) \
        if make is make_mlp else IMAGES
    np.testing.assert_allclose(net(torch.tensor(x)).detach().numpy(), outputs(model, x),
                               atol=1e-6, rtol=0)


def test_pytorchs_own_file_loads_into_a_chaingrad_model(tmp_path):
    """safetensors.torch.save_file of a torch state dict: a plain file, no chaingrad
    metadata; ``load`` gives its state dict, and ``load(path, model=...)`` fills a model."""
    torch.manual_seed(0)
    net = torch_cnn()
    path = tmp_path / "torch.safetensors"
    safetensors_torch.save_file(net.state_dict(), str(path))
    model = make_cnn(seed=3)
    model.load_state_dict(load(path))
    np.testing.assert_allclose(outputs(model), net(torch.tensor(IMAGES)).detach().numpy(),
                               atol=1e-6, rtol=0)
    other = make_cnn(seed=4)
    assert load(path, model=other) is other
    np.testing.assert_array_equal(outputs(other), outputs(model))


# ---- bad files ----


def layer(i, **changes):
    return lambda arch: arch["layers"][i].update(changes)


BAD_FILES = {
    "unknown layer": (layer(1, type="ELU"), r"layer layers\[1\] is .*ELU"),
    "extra argument": (layer(0, dilation=2), r"Conv2d layers\[0\] has arguments .*dilation"),
    "missing argument": (lambda a: a["layers"][7].pop("bias"), r"expected \['bias', 'in_fea"),
    "bad argument": (layer(7, in_features="48"), r"in_features='48', expected a positive"),
    "bad pair": (layer(2, kernel_size=[2]), "expected a pair of integers"),
    "layers not a list": (lambda a: a.update(layers={"0": 1}), "expected a list of layers"),
    "refused by the layer": (layer(6, p=1.5), r"cannot build .*Dropout\(p=1.5\).*between 0 and 1"),
    "too many weights": (layer(7, in_features=10**9), r"needs 8000000\d+ weights, more than "
                                                      r"its \d+ bytes of tensor data can hold"),
    "wrong shape": (layer(7, in_features=40, out_features=8),
                    r"7.weight has shape \(8, 48\), expected \(8, 40\)"),
    "missing key": (layer(9, bias=True), r"missing keys \['9.bias'\]"),
    "extra key": (layer(7, bias=False), r"unexpected keys \['7.bias'\]"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_raise_model_file_error_and_change_nothing(saved_cnn, model_files, case):
    """Each file is signed again after its edit, so that the check behind the checksum
    is the one that refuses it."""
    model, path = saved_cnn
    edit, message = BAD_FILES[case]
    model_files.rewrite(path, edit)
    before = weights(model)
    with pytest.raises(ModelFileError, match=message):
        load(path)
    with pytest.raises(ModelFileError):
        load(path, model=model)
    assert same_weights(weights(model), before)


@pytest.mark.parametrize(("edit", "what"), [
    (layer(6, p=0.5), "Dropout's p"), (layer(3, stride=[1, 1]), "a stride"),
    (layer(4, type="ReLU"), "an activation"),
    (lambda a: a["layers"].append({"type": "Identity"}), "a layer")])
def test_an_edited_architecture_fails_the_checksum(saved_cnn, model_files, edit, what):
    """Metadata changed after saving would load silently as another model: refused."""
    model, path = saved_cnn
    model_files.rewrite(path, edit, sign=False)
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load(path)
    model_files.rewrite(path, sign=True)  # signed again: then it is a valid, other model
    assert load(path).architecture() != model.architecture()


# ---- nesting: bounded, never a RecursionError ----


def nested(levels):
    """``levels`` Sequentials, one inside the other, around a Linear (the Linear is at
    depth ``levels``)."""
    model = Linear(2, 2)
    for _ in range(levels):
        model = Sequential(model)
    return model


def test_the_deepest_nesting_allowed_round_trips(tmp_path):
    deepest = registry.MAX_DEPTH - 1
    model = nested(deepest)
    path = tmp_path / "deep.safetensors"
    save(model, path)
    loaded = load(path)
    assert loaded.architecture() == model.architecture()
    name = "0." * deepest + "weight"
    np.testing.assert_array_equal(loaded.state_dict()[name], model.state_dict()[name])
    assert list(to_torch(model).state_dict()) == list(model.state_dict())


@pytest.mark.parametrize("levels", [registry.MAX_DEPTH, 500])
def test_a_model_nested_too_deeply_is_refused_clearly(tmp_path, levels):
    model = nested(levels)
    assert len(model.named_parameters()) == 2  # walked without recursion, at any depth
    assert len(model.state_dict()) == 2 and len(list(model.modules())) == levels + 1
    message = f"layers nest more than {registry.MAX_DEPTH} deep"
    for call in (model.architecture, lambda: to_torch(model),
                 lambda: save(model, tmp_path / "deep.safetensors")):
        with pytest.raises(ValueError, match=message):
            call()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("levels", [registry.MAX_DEPTH, 500, 5000])
def test_a_file_nested_too_deeply_is_refused_clearly(tmp_path, model_files, levels):
    path = tmp_path / "deep.safetensors"
    save(nested(0), path)
    arch = ('{"type": "Sequential", "layers": [' * levels + json.dumps(nested(0).architecture())
            + "]}" * levels)
    model_files.rewrite(path, edit_header=lambda h: h["__metadata__"].update(
        chaingrad=arch[:-1] + ', "format_version": 2}'))
    with pytest.raises(ModelFileError, match="nest more than 64 deep|nests too deeply"):
        load(path)


# ---- copies ----


def test_tensor_models_and_optimizers_round_trip_through_copy_and_pickle():
    def one_step(model, opt):
        opt.zero_grad()
        cross_entropy(model(Tensor(IMAGES)), LABELS).backward()
        opt.step()
        return [p.detach().numpy().copy() for p in model.parameters()]

    for make in (lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9), lambda ps: optim.Adam(ps)):
        model = make_cnn().train()
        opt = make(model.named_parameters())
        one_step(model, opt)  # the optimizer now has state (momentum, moments)
        clones = [copy.deepcopy((model, opt)), pickle.loads(pickle.dumps((model, opt)))]
        state = cio.nn.get_rng_state()
        expected = one_step(model, opt)
        for twin, twin_opt in clones:
            assert type(twin[0].weight).__name__ == "Parameter"
            assert twin_opt.params[0] is twin[0].weight  # the copies share as the originals
            cio.nn.set_rng_state(state)  # the same dropout mask
            assert same_weights(one_step(twin, twin_opt), expected)
