"""chaingrad.nn.init: torch's distributions, gains and fans, filled in place from nn's
generator."""

import math

import numpy as np
import pytest

import chaingrad.nn.init as init
from chaingrad.nn import Parameter, manual_seed
from chaingrad.tensor_engine import Tensor


def test_gains_are_torchs(torch):
    for args in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                 ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 0), ("selu",)]:
        assert init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args))
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")


def test_fans_are_torchs(torch):
    for shape in [(3, 4), (8, 3, 5, 2), (2, 7, 3)]:
        ours = init._calculate_fan_in_and_fan_out(Tensor(np.zeros(shape)))
        assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(Tensor(np.zeros(3)))


# (function, keyword arguments, the bound or standard deviation torch's docs give it)
SHAPE = (300, 200)
FILLS = [
    (init.uniform_, {"a": -2.0, "b": 3.0}, ("uniform", -2.0, 3.0)),
    (init.normal_, {"mean": 1.0, "std": 0.5}, ("normal", 1.0, 0.5)),
    (init.xavier_uniform_, {"gain": 2.0}, ("uniform", -2 * math.sqrt(6 / 500),
                                           2 * math.sqrt(6 / 500))),
    (init.xavier_normal_, {}, ("normal", 0.0, math.sqrt(2 / 500))),
    (init.kaiming_uniform_, {"a": math.sqrt(5)}, ("uniform", -1 / math.sqrt(200),
                                                  1 / math.sqrt(200))),
    (init.kaiming_uniform_, {"mode": "fan_out", "nonlinearity": "relu"},
     ("uniform", -math.sqrt(6 / 300), math.sqrt(6 / 300))),
    (init.kaiming_normal_, {"nonlinearity": "tanh"}, ("normal", 0.0, 5 / 3 / math.sqrt(200))),
]


@pytest.mark.parametrize(("fill", "kwargs", "law"), FILLS,
                         ids=[f"{f.__name__}-{k}" for f, k, _ in FILLS])
def test_fills_in_place_with_torchs_distribution(fill, kwargs, law):
    w = Parameter(np.zeros(SHAPE, dtype=np.float32))
    storage = w.detach().numpy()
    manual_seed(0)
    assert fill(w, **kwargs) is w
    assert w.detach().numpy() is storage and w.dtype == np.float32 and w.requires_grad
    x = w.detach().numpy().astype(np.float64)
    kind, a, b = law
    if kind == "uniform":
        assert a <= x.min() and x.max() <= b
        assert x.min() < a + 0.01 * (b - a) and x.max() > b - 0.01 * (b - a)
        assert x.mean() == pytest.approx((a + b) / 2, abs=0.01 * (b - a))
    else:
        assert x.mean() == pytest.approx(a, abs=0.02 * b)
        assert x.std() == pytest.approx(b, rel=0.02)
    again = Parameter(np.zeros(SHAPE, dtype=np.float32))
    manual_seed(0)
    filled = fill(again, **kwargs).detach().numpy()
    np.testing.assert_array_equal(filled, w.detach().numpy())  # the seed decides


def test_constants():
    w = Tensor(np.zeros((2, 3)), requires_grad=True)
    assert init.ones_(w) is w and (w.detach().numpy() == 1).all()
    assert (init.zeros_(w).detach().numpy() == 0).all()
    assert (init.constant_(w, 2.5).detach().numpy() == 2.5).all()
    with pytest.raises(TypeError, match="val must be a number"):
        init.constant_(w, "1")
    with pytest.raises(TypeError, match="expected a Tensor"):
        init.ones_(np.zeros(2))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.raises(AttributeError, match="chaingrad.nn.init has no 'orthogonal_' yet"):
        init.orthogonal_  # noqa: B018


def test_linear_and_conv_start_as_torchs_do():
    import chaingrad.nn as nn

    manual_seed(1)
    for layer, fan_in in [(nn.Linear(50, 40), 50), (nn.Conv2d(3, 40, (5, 4)), 60)]:
        bound = 1 / math.sqrt(fan_in)
        for p in (layer.weight, layer.bias):
            values = np.abs(p.detach().numpy())
            assert values.max() <= bound and values.max() > 0.9 * bound
