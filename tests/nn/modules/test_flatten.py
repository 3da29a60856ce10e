"""chaingrad/nn/modules/flatten.py: Flatten's start_dim and end_dim as torch's (and the
elementwise activations on the same input)."""

from __future__ import annotations

import numpy as np
import pytest

from chaingrad import Tensor
from chaingrad.nn import Flatten, ReLU, Sigmoid, Tanh


def test_flatten_and_activations() -> None:
    x = Tensor(np.arange(24.0).reshape(2, 3, 4) - 12)
    assert Flatten()(x).shape == (2, 12)
    assert Flatten(0)(x).shape == (24,)
    assert (ReLU()(x).numpy() >= 0).all()
    assert np.allclose(Tanh()(x).numpy(), np.tanh(x.numpy()))
    assert np.allclose(Sigmoid()(x).numpy(), 1 / (1 + np.exp(-x.numpy())))


def test_flatten_takes_start_and_end_dim_as_torch(torch) -> None:
    import chaingrad.nn as cnn

    x = np.zeros((2, 3, 4, 5))
    for dims in [(), (0,), (0, 1), (1, 2), (-3, -2), (2, -1), (3, 3)]:
        assert cnn.Flatten(*dims)(Tensor(x)).shape == tuple(
            torch.nn.Flatten(*dims)(torch.tensor(x)).shape)
    with pytest.raises(ValueError, match="start_dim 2 comes after end_dim 1"):
        cnn.Flatten(2, 1)(Tensor(x))
    with pytest.raises(IndexError, match="out of range"):  # torch's IndexError
        cnn.Flatten(4)(Tensor(x))
