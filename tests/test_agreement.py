"""The scalar and the tensor engine agree: the same MLP, the same weights, element by
element equal gradients (float64, to 1e-12), with node counts and times side by side."""

from __future__ import annotations

import random

import numpy as np
import pytest

from chaingrad import Tensor, no_grad
from chaingrad.agreement import compare_engines, tensor_copy
from chaingrad.nn import MLP


@pytest.mark.parametrize(
    ("sizes", "activation", "batch"),
    [((2, [16, 16, 1]), "relu", 8), ((3, [8, 4]), "tanh", 5), ((4, [6, 6, 3]), "sigmoid", 7),
     ((2, [5, 1]), "linear", 1)],
    ids=["moons_mlp", "tanh_multi_output", "sigmoid", "linear_single"],
)
def test_value_and_tensor_gradients_agree(sizes, activation, batch) -> None:
    random.seed(11)
    model = MLP(*sizes, activation=activation)
    result = compare_engines(model, batch=batch, seed=3)
    assert len(result.parameters) == 2 * len(model.layers)
    for p in result.parameters:
        assert p.scalar_grad.shape == p.tensor_grad.shape
        assert np.allclose(p.scalar_grad, p.tensor_grad, rtol=0, atol=1e-12), p.name
        assert np.any(p.scalar_grad != 0)  # a real comparison, not zeros against zeros
    assert abs(result.scalar_loss - result.tensor_loss) <= 1e-12
    assert result.agrees(1e-12)


def test_report_shows_both_engines_side_by_side() -> None:
    result = compare_engines(seed=0)
    text = str(result)
    assert "MLP 2-16-16-1, batch 8" in text
    for word in ("0.weight", "4.bias", "graph nodes", "forward + backward", "Value", "Tensor"):
        assert word in text
    assert result.scalar_nodes > 100 * result.tensor_nodes
    assert result.scalar_seconds > 0 and result.tensor_seconds > 0


def test_given_inputs_and_targets_are_used() -> None:
    random.seed(0)
    model = MLP(2, [3, 2])
    x, y = [[0.5, -1.0], [1.0, 2.0]], [[0.0, 1.0], [1.0, 0.0]]
    result = compare_engines(model, x, y)
    assert result.batch == 2 and result.agrees()


def test_a_disagreement_would_be_seen() -> None:
    result = compare_engines(seed=1)
    result.parameters[0].tensor_grad = result.parameters[0].tensor_grad + 1e-9
    assert not result.agrees(1e-12)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="compare_engines: model must be a chaingrad.nn.MLP"):
        compare_engines(model="mlp")
    with pytest.raises(ValueError, match=r"inputs must have shape \(batch, 2\)"):
        compare_engines(inputs=np.ones((4, 3)))


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid", "linear"])
def test_tensor_copy_computes_what_the_scalar_mlp_computes(activation) -> None:
    random.seed(5)
    model = MLP(3, [6, 4, 2], activation=activation)
    twin = tensor_copy(model)
    assert [type(m).__name__ for m in twin][::2] == ["Linear"] * 3
    points = np.random.default_rng(0).uniform(-2, 2, (50, 3))
    with no_grad():
        batch = twin(Tensor(points)).numpy()
    assert batch.dtype == np.float64
    rows = np.array([[o.data for o in model(list(p))] for p in points.tolist()])
    assert np.allclose(batch, rows, rtol=0, atol=1e-13)
    for name, weights in twin.state_dict().items():  # the same names and numbers
        assert np.array_equal(weights, model.state_dict()[name]), name


def test_tensor_copy_is_a_copy() -> None:
    random.seed(0)
    model = MLP(2, [3, 1])
    twin = tensor_copy(model)
    model.parameters()[0].data += 1.0
    assert twin.state_dict()["0.weight"][0, 0] == model.parameters()[0].data - 1.0
    with pytest.raises(TypeError, match="tensor_copy: model must be a chaingrad.nn.MLP, got "
                                        "str"):
        tensor_copy("mlp")
