"""chaingrad.generic: one function for floats, Values, Tensors and arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chaingrad
import chaingrad.generic as F
from chaingrad import Tensor, Value

CASES = [
    ("exp", 0.7, math.exp(0.7)),
    ("log", 0.7, math.log(0.7)),
    ("sqrt", 0.7, math.sqrt(0.7)),
    ("tanh", -0.7, math.tanh(-0.7)),
    ("sigmoid", -0.7, 1 / (1 + math.exp(0.7))),
    ("sin", 0.7, math.sin(0.7)),
    ("cos", 0.7, math.cos(0.7)),
    ("abs", -0.7, 0.7),
    ("relu", -0.7, 0.0),
    ("relu", 0.7, 0.7),
]


@pytest.mark.parametrize(("name", "x", "expected"), CASES)
def test_same_number_on_every_kind_of_input(name: str, x: float, expected: float) -> None:
    fn = getattr(F, name)
    assert fn(x) == pytest.approx(expected, abs=1e-15)
    assert fn(Value(x)).data == pytest.approx(expected, abs=1e-15)
    assert fn(np.float64(x)) == pytest.approx(expected, abs=1e-15)
    assert fn(np.array([x, x])).tolist() == pytest.approx([expected] * 2, abs=1e-15)
    if hasattr(Tensor, name):
        assert fn(Tensor(np.array([x]))).tolist() == pytest.approx([expected], abs=1e-15)


def test_something_else_is_a_type_error_naming_the_function() -> None:
    with pytest.raises(TypeError, match=r"^exp: needs a number, an array, a Value or a "
                                        r"Tensor, got str"):
        F.exp("1.0")


def test_sigmoid_of_a_very_negative_number_does_not_overflow() -> None:
    assert F.sigmoid(-1000.0) == 0.0
    assert F.sigmoid(1000.0) == 1.0


def test_a_primitive_written_with_functional_is_twice_differentiable() -> None:
    softplus = chaingrad.primitive(
        lambda x: math.log1p(math.exp(x)),
        lambda xs, out, g: (F.sigmoid(xs[0]) * g,),
        name="softplus",
    )
    x = Value(0.3)
    (d1,) = chaingrad.grad(softplus(x), [x], create_graph=True)
    (d2,) = chaingrad.grad(d1, [x])
    s = 1 / (1 + math.exp(-0.3))
    assert d1.data == pytest.approx(s, abs=1e-15)
    assert d2 == pytest.approx(s * (1 - s), abs=1e-15)
    assert chaingrad.gradcheck(softplus, [0.3])
