"""chaingrad/nn/modules/ as a whole: its names, each file's (its ``__all__``), as
``chaingrad.nn`` and the registry serve them; the layers together against torch's (a small
CNN's gradients, training, state_dict, the printed forms, the errors and the options
chaingrad lacks)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import chaingrad.nn as nn
from chaingrad import Tensor
from chaingrad.nn import (
    Conv2d,
    Flatten,
    Linear,
    MaxPool2d,
    ReLU,
    Sequential,
    Tanh,
    manual_seed,
    modules,
)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---- the names: each file's __all__ ----


def test_each_files_all_is_what_the_package_and_chaingrad_nn_serve() -> None:
    """A Tensor module is named once, in the ``__all__`` of the file of its kind: the
    package's ``__all__``, ``chaingrad.nn``'s names and ``dir()`` are made from those
    lists, and every Module class a file defines (but the private) is in its list."""
    found = modules.tensor_modules()
    for kind in modules.KINDS:
        file = importlib.import_module(f"chaingrad.nn.modules.{kind}")
        classes = {name for name, value in vars(file).items() if inspect.isclass(value)
                   and issubclass(value, nn.Module) and value.__module__ == file.__name__
                   and not name.startswith("_")}
        assert set(file.__all__) == classes, kind
        for name in file.__all__:
            assert found[name] is getattr(file, name) is getattr(modules, name)
            assert getattr(nn, name) is found[name] and name in dir(nn)
    assert len(found) == sum(len(getattr(modules, kind).__all__) for kind in modules.KINDS)
    assert modules.__all__ == ["Module", *found]


def test_every_file_of_the_package_is_a_kind_declared_for_checkers() -> None:
    """A new file of modules is one of ``KINDS``, and the ``if TYPE_CHECKING:`` blocks of the
    package and of ``chaingrad.nn`` import its names (``*``), as checkers read them."""
    folder = Path(modules.__file__).parent
    files = {path.stem for path in folder.glob("*.py")} - {"__init__", "module", "utils"}
    assert files == set(modules.KINDS)
    for package, prefix in ((modules, ""), (nn, "modules.")):
        (block,) = [node for node in ast.parse(inspect.getsource(package)).body
                    if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"]
        starred = {s.module for s in block.body
                   if isinstance(s, ast.ImportFrom) and s.names[0].name == "*"}
        assert starred == {prefix + kind for kind in modules.KINDS}, package.__name__


# ---- the layers together ----


def test_conv_and_pool_layers_match_torch_modules(torch) -> None:
    manual_seed(0)
    ours = Sequential(Conv2d(2, 4, 3, padding=1, dtype=np.float64), ReLU(), MaxPool2d(2),
                      Flatten(), Linear(4 * 3 * 3, 5, dtype=np.float64))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                 torch.nn.Linear(36, 5)).double()
    named = dict(ours.named_parameters())
    assert list(named) == [name for name, _ in theirs.named_parameters()]
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            assert tuple(p.shape) == named[name].shape
            p.copy_(torch.as_tensor(named[name].detach().numpy()))
    x = _rng().standard_normal((3, 2, 6, 6))
    ours(Tensor(x)).log_softmax().sum().backward()
    theirs(torch.as_tensor(x)).log_softmax(-1).sum().backward()
    for name, p in theirs.named_parameters():
        assert np.allclose(named[name].grad, p.grad.numpy(), rtol=1e-10, atol=1e-12)


# ---- errors, training, state_dict ----


@pytest.mark.parametrize(
    ("fn", "error", "message"),
    [(lambda: Linear(3, 2)(Tensor(np.ones((4, 5)))), ValueError,
      r"Linear: expected an input whose last dimension is 3, got shape \(4, 5\)"),
     (lambda: Linear(0, 2), ValueError, "Linear: in_features must be a positive int"),
     (lambda: Linear(3, 2)([1.0, 2.0, 3.0]), TypeError,
     r"Linear\(\): argument 'input' must be Tensor, not list"),
     (lambda: Conv2d(3, 2, 3)(Tensor(np.ones((1, 2, 5, 5)))), ValueError,
      "conv2d: .* the input has 2 channels, the weight expects 3"),
     (lambda: Conv2d(1, 2, 5)(Tensor(np.ones((1, 1, 3, 3)))), ValueError,
      r"conv2d: the kernel \(5, 5\) is larger than the padded input \(3, 3\)"),
     (lambda: Conv2d(1, 2, 3)(Tensor(np.ones((3, 3)))), ValueError,
      r"conv2d: needs an input \(N, C, H, W\) or \(C, H, W\)"),
     (lambda: Conv2d(1, 2, 2.5), TypeError, "Conv2d: kernel_size must be an int or a pair"),
     (lambda: Conv2d(1, 2, 3, stride=0), ValueError, "Conv2d: stride must be >= 1"),
     (lambda: Conv2d(1, 2, 3)([[[1.0]]]), TypeError,
      r"conv2d\(\): argument 'input' must be Tensor, not list"),
     (lambda: Conv2d(1, 2, 3, padding="full"), ValueError,
      "Conv2d: invalid padding string 'full'"),
     (lambda: MaxPool2d(4)(Tensor(np.ones((1, 1, 3, 3)))), ValueError,
      "max_pool2d: the kernel"),
     (lambda: MaxPool2d(2)([[[1.0]]]), TypeError,
      r"max_pool2d\(\): argument 'input' must be Tensor, not list"),
     (lambda: MaxPool2d((2, 0)), ValueError, "MaxPool2d: kernel_size must be >= 1"),
     (lambda: Sequential(Linear(2, 2), "relu"), TypeError, "Sequential: argument 1")],
    ids=["linear_shape", "linear_size", "linear_type", "conv_channels", "conv_kernel",
         "conv_ndim", "conv_kernel_type", "conv_stride", "conv_input_type", "conv_padding",
         "pool_kernel", "pool_input_type", "pool_kernel_size", "sequential"],
)
def test_layer_errors(fn, error, message) -> None:
    with pytest.raises(error, match=message):
        fn()


def test_a_small_cnn_learns() -> None:
    """A few SGD steps on a toy task: the loss goes down (the layers train end to end)."""
    manual_seed(0)
    rng = _rng(5)
    x = rng.standard_normal((32, 1, 6, 6)).astype(np.float32)
    labels = (x[:, 0, :3].sum(axis=(1, 2)) > x[:, 0, 3:].sum(axis=(1, 2))).astype(int)
    model = Sequential(Conv2d(1, 4, 3, padding=1), ReLU(), MaxPool2d(2), Flatten(),
                       Linear(36, 2))
    losses = []
    for _ in range(30):
        model.zero_grad()
        loss = -model(Tensor(x)).log_softmax()[np.arange(32), labels].mean()
        loss.backward()
        for p in model.parameters():
            p.data -= 0.1 * p.grad
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]


def test_state_dict_round_trip_and_errors() -> None:
    manual_seed(0)
    a = Sequential(Conv2d(1, 2, 3), Flatten(), Linear(2, 3))
    b = Sequential(Conv2d(1, 2, 3), Flatten(), Linear(2, 3))
    state = a.state_dict()
    assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert state["0.weight"].dtype == np.float32
    assert not np.shares_memory(state["0.weight"], a[0].weight.detach().numpy())
    view = b[0].weight.detach().numpy()
    b.load_state_dict(state)
    assert all(np.array_equal(state[k], v) for k, v in b.state_dict().items())
    assert view is b[0].weight.detach().numpy()  # updated in place
    before = b.state_dict()
    bad = dict(state, **{"2.bias": np.full(3, np.nan)})
    bad.pop("0.bias")
    with pytest.raises(ValueError, match=r"missing keys \['0.bias'\].*2.bias holds non-finite"):
        b.load_state_dict(bad)
    with pytest.raises(ValueError, match=r"2.weight has shape \(2, 3\), expected \(3, 2\)"):
        b.load_state_dict(dict(state, **{"2.weight": np.zeros((2, 3))}))
    with pytest.raises(ValueError, match=r"unexpected keys \['x'\]"):
        b.load_state_dict(dict(state, x=np.zeros(1)))
    with pytest.raises(TypeError, match="load_state_dict: expected a mapping"):
        b.load_state_dict([1, 2])
    assert all(np.array_equal(before[k], v) for k, v in b.state_dict().items())


def test_state_dict_loads_from_torch(torch) -> None:
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    ours = Sequential(Linear(3, 4), Tanh(), Linear(4, 2))
    ours.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    expected = theirs(torch.as_tensor(x)).detach().numpy()
    assert np.allclose(ours(Tensor(x)).detach().numpy(), expected, atol=1e-6)


# ---- torch's signatures and printed forms ----

TORCH_LAYERS = [  # the same constructor call for chaingrad.nn and torch.nn
    lambda nn: nn.Linear(3, 1), lambda nn: nn.Linear(3, 2, False),
    lambda nn: nn.Flatten(0, 1), lambda nn: nn.Flatten(),
    lambda nn: nn.Conv2d(1, 6, 5), lambda nn: nn.Conv2d(1, 6, (3, 2), 2, 1, bias=False),
    lambda nn: nn.Conv2d(1, 2, 3, padding="same"), lambda nn: nn.Conv2d(1, 2, 3, padding="valid"),
    lambda nn: nn.MaxPool2d(2), lambda nn: nn.MaxPool2d((2, 3), 1),
    lambda nn: nn.ReLU(), lambda nn: nn.ReLU(True), lambda nn: nn.Tanh(), lambda nn: nn.Sigmoid(),
    lambda nn: nn.Dropout(), lambda nn: nn.Dropout(0.2, True), lambda nn: nn.Softmax(dim=1),
    lambda nn: nn.Softmax(), lambda nn: nn.LogSoftmax(1), lambda nn: nn.Identity(),
    lambda nn: nn.MSELoss(), lambda nn: nn.MSELoss(reduction="sum"),
    lambda nn: nn.CrossEntropyLoss(), lambda nn: nn.NLLLoss(), lambda nn: nn.BCEWithLogitsLoss(),
]


def test_every_layer_prints_as_torchs_in_a_sequential(torch) -> None:
    import collections

    import chaingrad.nn as cnn

    ours = cnn.Sequential(*(make(cnn) for make in TORCH_LAYERS))
    theirs = torch.nn.Sequential(*(make(torch.nn) for make in TORCH_LAYERS))
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    named = [("fc", "Linear", (2, 3)), ("act", "Tanh", ())]
    ours = cnn.Sequential(collections.OrderedDict(
        (k, getattr(cnn, c)(*a)) for k, c, a in named))
    theirs = torch.nn.Sequential(collections.OrderedDict(
        (k, getattr(torch.nn, c)(*a)) for k, c, a in named))
    assert repr(ours) == repr(theirs) and ours.fc is ours[0]


def test_options_chaingrad_lacks_are_refused_when_the_layer_is_made() -> None:
    import chaingrad.nn as cnn

    for make, what in [(lambda: cnn.Conv2d(1, 2, 3, dilation=2), "Conv2d with dilation=2"),
                       (lambda: cnn.Conv2d(2, 2, 3, groups=2), "Conv2d with groups=2"),
                       (lambda: cnn.Conv2d(1, 2, 3, padding_mode="reflect"),
                        "Conv2d with padding_mode='reflect'"),
                       (lambda: cnn.MaxPool2d(2, padding=1), "MaxPool2d with padding=1"),
                       (lambda: cnn.MaxPool2d(2, ceil_mode=True), "MaxPool2d with ceil_mode"),
                       (lambda: cnn.Linear(2, 2, device="cuda"), "Linear(device='cuda')")]:
        with pytest.raises(NotImplementedError, match=re.escape(what)):
            make()
    assert cnn.Linear(2, 2, device="cpu", dtype=np.float64).weight.dtype == np.float64
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        cnn.Conv2d(1, 2, 3, stride=2, padding="same")


