"""chaingrad.nn.functional's gelu, leaky_relu, softplus, one_hot and binary_cross_entropy, and
the layers nn.GELU, nn.LeakyReLU and nn.Softplus, against torch (values and gradients in
float64)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as nn
import chaingrad.nn.functional as F

RNG = np.random.default_rng(0)
X = RNG.normal(scale=3.0, size=(4, 5))


@pytest.mark.parametrize("call", [
    lambda F, x: F.gelu(x),
    lambda F, x: F.gelu(x, approximate="tanh"),
    lambda F, x: F.leaky_relu(x),
    lambda F, x: F.leaky_relu(x * 1, 0.2, inplace=True),
    lambda F, x: F.softplus(x),
    lambda F, x: F.softplus(x, beta=2, threshold=3),
    lambda F, x: F.softplus(x, 0.5),
], ids=["gelu", "gelu_tanh", "leaky_relu", "leaky_relu_0.2", "softplus", "softplus_beta_2",
        "softplus_beta_half"])
def test_an_activation_is_torchs(agrees_with_torch, torch, call) -> None:
    """The same call on chaingrad.nn.functional and on torch.nn.functional (X reaches past
    softplus's threshold)."""
    agrees_with_torch(lambda x: call(F, x), lambda x: call(torch.nn.functional, x), X)


def test_the_layers_are_their_functions_and_print_as_torchs(torch) -> None:
    x = chaingrad.tensor(X)
    pairs = [(nn.GELU(), torch.nn.GELU()), (nn.GELU("tanh"), torch.nn.GELU("tanh")),
             (nn.LeakyReLU(), torch.nn.LeakyReLU()),
             (nn.LeakyReLU(0.2, True), torch.nn.LeakyReLU(0.2, True)),
             (nn.Softplus(), torch.nn.Softplus()), (nn.Softplus(2, 5), torch.nn.Softplus(2, 5))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(x).numpy(), theirs(torch.tensor(X)).numpy(),
                                   rtol=1e-12, atol=1e-15)
    model = nn.Sequential(nn.Linear(5, 3), nn.GELU(), nn.Linear(3, 1), nn.LeakyReLU(0.1))
    assert "(1): GELU(approximate='none')" in repr(model) and model(x).shape == (4, 1)
    with pytest.raises(RuntimeError, match="GELU: approximate argument must be either none or "
                                           "tanh, got 'exact'"):
        nn.GELU("exact")
    with pytest.raises(RuntimeError, match="gelu: approximate argument must be"):
        F.gelu(x, approximate="erf")
    with pytest.raises(TypeError, match="leaky_relu: negative_slope must be a number"):
        F.leaky_relu(x, "0.1")


def test_one_hot_is_torchs(torch) -> None:
    classes = np.array([[0, 2], [1, 4]])
    for num_classes in (-1, 5, 7):
        ours = F.one_hot(chaingrad.tensor(classes), num_classes)
        theirs = torch.nn.functional.one_hot(torch.tensor(classes), num_classes)
        assert ours.tolist() == theirs.tolist() and ours.dtype == chaingrad.int64
    assert F.one_hot(chaingrad.tensor(3), 4).tolist() == [0, 0, 0, 1]
    # the lecture's: one_hot(xs, num_classes=27).float() @ W
    xenc = F.one_hot(chaingrad.tensor([0, 5, 13]), num_classes=27).float()
    assert xenc.dtype == chaingrad.float32 and xenc.sum().item() == 3


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.one_hot(chaingrad.tensor([0.0, 1.0])), RuntimeError,
     "one_hot is only applicable to index tensor of type LongTensor"),
    (lambda: F.one_hot(chaingrad.tensor([0, -1])), RuntimeError,
     "Class values must be non-negative"),
    (lambda: F.one_hot(chaingrad.tensor([0, 3]), 3), RuntimeError,
     r"Class values must be smaller than num_classes \(3\), got 3"),
    (lambda: F.one_hot(chaingrad.tensor(np.zeros(0, dtype=np.int64))), RuntimeError,
     "Can not infer total number of classes from empty tensor"),
    (lambda: F.one_hot([0, 1]), TypeError, "argument 'tensor' must be Tensor, not list"),
])
def test_one_hot_refuses_what_torch_refuses(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_is_torchs(agrees_with_torch, torch, reduction) -> None:
    probabilities = RNG.uniform(0.02, 0.98, size=(3, 4))
    targets = RNG.uniform(0, 1, size=(3, 4))
    weight = agrees_with_torch.constant(RNG.uniform(0.5, 2, size=(4,)))
    agrees_with_torch(
        lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction),
        lambda x, t, w: torch.nn.functional.binary_cross_entropy(x, t, w, reduction=reduction),
        probabilities, targets, weight)
    agrees_with_torch(lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction),
                      lambda x, t: torch.nn.functional.binary_cross_entropy(
                          x, t, reduction=reduction), probabilities, targets)


def test_binary_cross_entropy_at_zero_and_one_is_torchs_too(torch) -> None:
    """A sigmoid that saturates gives exactly 0 or 1: torch's loss floors each log at -100,
    and its gradient divides by at least 1e-12."""
    values, targets = [0.0, 1.0, 0.0, 1.0, 1e-13], [0.0, 1.0, 1.0, 0.0, 1.0]
    x = chaingrad.tensor(values, dtype=chaingrad.float64, requires_grad=True)
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    loss = F.binary_cross_entropy(x, chaingrad.tensor(targets, dtype=chaingrad.float64),
                                  reduction="none")
    expected = torch.nn.functional.binary_cross_entropy(
        tx, torch.tensor(targets, dtype=torch.float64), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    loss.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert loss.grad_fn.name() == "BinaryCrossEntropyBackward0"


def test_binary_cross_entropy_refuses_what_torch_refuses() -> None:
    x = chaingrad.tensor([0.5, 0.5])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(chaingrad.tensor([0.5, 1.5]), x)
    with pytest.raises(ValueError, match=r"Using a target size \(torch.Size\(\[1\]\)\) that is "
                                         r"different to the input size"):
        F.binary_cross_entropy(x, chaingrad.tensor([1.0]))
