"""chaingrad/nn/modules/activation.py: the layers nn.GELU, nn.LeakyReLU and nn.Softplus, and
chaingrad.nn.functional's gelu, leaky_relu and softplus that they call, against torch
(values and gradients in float64)."""

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
