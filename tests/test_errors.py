"""Bad input gets a clear, typed error that names the op and the operand; never a silent
wrong number, a complex number, an inf in ``.grad`` or a bare OverflowError."""

from __future__ import annotations

import math
import operator

import pytest

from chaingrad import DomainError, Value
from chaingrad.autodiff import topological_order

# ---- what a Value can hold ----


@pytest.mark.parametrize(("data", "type_name"), [
    ("abc", "str"),
    (None, "NoneType"),
    ([1, 2], "list"),
    ({"x": 1}, "dict"),
    (1 + 2j, "complex"),
])
def test_value_of_a_non_number_is_a_type_error(data: object, type_name: str) -> None:
    with pytest.raises(TypeError, match=type_name):
        Value(data)


@pytest.mark.parametrize("data", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_value_of_a_non_finite_number_is_a_value_error(data: float) -> None:
    with pytest.raises(ValueError, match="Value"):
        Value(data)


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]


@pytest.mark.parametrize(("bad", "type_name"), [("a", "str"), (None, "NoneType")],
                         ids=["str", "None"])
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value_on_left", [True, False], ids=["value_left", "value_right"])
def test_operator_with_a_non_number_names_its_type(op, bad, type_name, value_on_left) -> None:
    with pytest.raises(TypeError) as info:
        op(Value(1.0), bad) if value_on_left else op(bad, Value(1.0))
    assert type_name in str(info.value)


def test_the_issue_examples() -> None:
    with pytest.raises(TypeError, match="str"):
        Value(1) + "a"
    with pytest.raises(TypeError, match="str"):
        "a" * Value(1)


# ---- outside an op's domain: DomainError naming the op and the operand ----

DOMAIN_CASES = [
    ("log(0)", lambda: Value(0.0).log(), "log", "0.0"),
    ("log(-1)", lambda: Value(-1.0).log(), "log", "-1.0"),
    ("sqrt(-1)", lambda: Value(-1.0).sqrt(), "sqrt", "-1.0"),
    ("0**-1", lambda: Value(0.0) ** -1, "**", "0.0"),
    ("0**-0.5", lambda: Value(0.0) ** -0.5, "**", "0.0"),
    ("0**Value(-1)", lambda: Value(0.0) ** Value(-1.0), "**", "0.0"),
    ("number 0**Value(-2)", lambda: 0 ** Value(-2.0), "**", "0.0"),
    ("x/0", lambda: Value(3.0) / 0, "/", "3.0"),
    ("x/Value(0)", lambda: Value(3.0) / Value(0.0), "/", "3.0"),
    ("1/Value(0)", lambda: 1 / Value(0.0), "/", "1.0"),
    ("(-2)**0.5", lambda: Value(-2.0) ** 0.5, "**", "-2.0"),
    ("(-2)**Value(0.5)", lambda: Value(-2.0) ** Value(0.5), "**", "-2.0"),
    ("number (-2)**Value(1.5)", lambda: (-2) ** Value(1.5), "**", "-2.0"),
    ("exp(1000)", lambda: Value(1000.0).exp(), "exp", "1000"),
    ("1e200*1e200", lambda: Value(1e200) * Value(1e200), "*", "1e+200"),
    ("1e308+1e308", lambda: Value(1e308) + 1e308, "+", "1e+308"),
    ("10**400", lambda: Value(10.0) ** 400, "**", "10.0"),
    ("2**Value(5000)", lambda: 2 ** Value(5000.0), "**", "5000"),
]


@pytest.mark.parametrize(("build", "op_name", "operand"), [c[1:] for c in DOMAIN_CASES],
                         ids=[c[0] for c in DOMAIN_CASES])
def test_domain_error_names_the_op_and_the_operand(build, op_name: str, operand: str) -> None:
    with pytest.raises(DomainError) as info:
        build()
    message = str(info.value)
    assert op_name in message, message
    assert operand in message, message
    assert isinstance(info.value, ValueError)


# ---- a backward step with an unbounded derivative ----

UNBOUNDED_CASES = [
    ("sqrt at 0", lambda x: x.sqrt() * 2 + x, 0.0, "sqrt"),
    ("**0.5 at 0", lambda x: x**0.5 + x, 0.0, "**0.5"),
    ("log at 1e-310", lambda x: x.log() + x * 3, 1e-310, "log"),
    ("**-1 at 1e-200", lambda x: x**-1 * 1e-200, 1e-200, "**-1"),
    ("* overflows", lambda x: x * 1e308 * 10, 1e-10, "*"),  # run inline by the driver
    ("a sum overflows", lambda x: x * 1e308 + x * 1e308, 1e-10, "overflow"),
]


@pytest.mark.parametrize(("fn", "x0", "op_name"), [c[1:] for c in UNBOUNDED_CASES],
                         ids=[c[0] for c in UNBOUNDED_CASES])
@pytest.mark.parametrize("create_graph", [False, True], ids=["floats", "create_graph"])
def test_unbounded_gradient_raises_instead_of_writing_inf(fn, x0, op_name, create_graph):
    x = Value(x0)
    out = fn(x)
    with pytest.raises(DomainError) as info:
        out.backward(create_graph=create_graph)
    assert op_name in str(info.value)
    for node in topological_order(out):
        grad = node.grad.data if isinstance(node.grad, Value) else node.grad
        assert math.isfinite(grad), f"{node._op or 'leaf'} has grad {grad}"


def test_failed_backward_keeps_the_gradients_that_were_there() -> None:
    x, w = Value(0.0), Value(2.0)
    out = x.sqrt() * w
    x.grad, w.grad = 5.0, -1.0
    with pytest.raises(DomainError, match="sqrt"):
        out.backward()
    assert (x.grad, w.grad, out.grad) == (5.0, -1.0, 0.0)


def test_sqrt_at_zero_forward_is_fine() -> None:
    assert Value(0.0).sqrt().data == 0.0


# ---- numerically stable saturating functions ----


def test_tanh_saturates_without_overflow() -> None:
    for x0, expected in ((1000.0, 1.0), (-1000.0, -1.0)):
        x = Value(x0)
        y = x.tanh()
        assert y.data == expected
        y.backward()
        assert x.grad == 0.0


@pytest.mark.parametrize("x0", [1000.0, -1000.0, 710.0, -710.0, 1e300, -1e300])
def test_sigmoid_is_finite_with_finite_gradient(x0: float) -> None:
    x = Value(x0)
    y = x.sigmoid()
    assert math.isfinite(y.data) and 0.0 <= y.data <= 1.0
    y.backward()
    assert math.isfinite(x.grad) and x.grad >= 0.0
    assert y.data == pytest.approx(1.0 if x0 > 0 else 0.0, abs=1e-300)


def test_an_int_too_large_for_a_float_is_a_value_error() -> None:
    for build in (lambda: Value(10**400), lambda: Value(1.0) + 10**400):
        with pytest.raises(ValueError, match="Value: got an int too large for a float"):
            build()


# ---- found by auditing: each was a bare error, a crash or a silent number ----


@pytest.mark.parametrize("exponent", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_a_non_finite_exponent_is_a_value_error(exponent: float) -> None:
    with pytest.raises(ValueError, match=r"\*\*: got exponent"):
        Value(1.0) ** exponent


def test_children_must_be_values() -> None:
    with pytest.raises(TypeError, match="Value: _children must be Values, got float 2.0"):
        Value(1.0, (2.0,), "x")


def test_a_closure_assigned_to_a_leaf_runs_and_does_no_harm() -> None:
    calls = []
    v = Value(1.0)
    v._backward = lambda: calls.append(v.grad)
    v.backward()
    assert calls == [1.0] and v.grad == 1.0


def test_a_closure_that_writes_inf_is_named() -> None:
    a = Value(1.0)
    out = Value(2.0, (a,), "mine")

    def _backward() -> None:
        a.grad += math.inf

    out._backward = _backward
    with pytest.raises(DomainError, match="mine: its hand-written _backward closure"):
        out.backward()
    assert a.grad == 0.0


def test_a_nan_result_is_not_called_an_overflow() -> None:
    x = Value(1.0)
    x.data = math.nan  # set by hand: the op still refuses to pass it on
    with pytest.raises(DomainError, match=r"is not a number \(nan\)"):
        x * 2
