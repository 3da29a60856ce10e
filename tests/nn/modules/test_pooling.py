"""chaingrad/nn/modules/pooling.py: AvgPool2d and AdaptiveAvgPool2d against torch's, their
printed forms, and a model of them saved and built again."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad.nn as cnn
from chaingrad import Tensor

POOLS = [
    lambda nn: nn.AvgPool2d(2),
    lambda nn: nn.AvgPool2d((3, 2), stride=1, padding=1, count_include_pad=False),
    lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True, divisor_override=4),
    lambda nn: nn.AdaptiveAvgPool2d((3, 2)),
    lambda nn: nn.AdaptiveAvgPool2d((None, 4)),
    lambda nn: nn.AdaptiveAvgPool2d(1),
    lambda nn: nn.MaxPool2d(2),
]


@pytest.mark.parametrize("make", POOLS, ids=lambda make: repr(make(cnn)))
def test_pooling_layers_agree_with_torch(torch, agrees_with_torch, make) -> None:
    assert repr(make(cnn)) == repr(make(torch.nn))
    x = np.random.default_rng(6).standard_normal((2, 3, 7, 6))
    agrees_with_torch(make(cnn), make(torch.nn), x)


def test_a_model_with_the_new_layers_saves_and_builds_again(tmp_path) -> None:
    import chaingrad

    chaingrad.manual_seed(0)
    model = cnn.Sequential(cnn.Conv1d(2, 4, 3, padding=1, padding_mode="circular"),
                           cnn.AvgPool2d(2, ceil_mode=True), cnn.AdaptiveAvgPool2d((2, None)))
    path = tmp_path / "model.safetensors"
    chaingrad.save(model, path)
    loaded = chaingrad.load(path)
    assert loaded.architecture() == model.architecture()
    x = Tensor(np.random.default_rng(1).standard_normal((3, 2, 9)).astype(np.float32))
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
