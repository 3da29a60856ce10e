"""Gradients as functions: higher-order derivatives against torch, ``grad``, ``primitive``
and ``gradcheck``."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples
from ops_table import OP_IDS, OPS, Op, agrees_with_numeric, close, numeric_grads

import chaingrad
from chaingrad import GradcheckError, Value, grad, gradcheck, no_grad, primitive

HIGHER = examples(30)
PER_CASE = examples(60)




# ---- second and third derivatives, every op of the table, against torch ----


def _number(g: object) -> float:
    """A derivative as a float: None (does not depend on the input) is 0."""
    if g is None:
        return 0.0
    if isinstance(g, Value):
        return g.data
    return float(g.item()) if hasattr(g, "item") else float(g)


def _engine_grads(out: Value | None, leaves: list[Value], create: bool) -> list:
    if out is None:
        return [None] * len(leaves)
    return grad(out, leaves, create_graph=create, allow_unused=True)


def _torch_grads(torch, out, leaves: list, create: bool) -> list:
    if out is None or not out.requires_grad:  # a constant: every derivative is 0
        return [None] * len(leaves)
    return list(
        torch.autograd.grad(
            out, leaves, create_graph=create, retain_graph=True, allow_unused=True
        )
    )


def _derivatives(grads_of, out, leaves) -> tuple[list, list, list]:
    """First, second and third partial derivatives of ``out`` (as nested lists of floats)."""
    first = grads_of(out, leaves, True)
    second = [grads_of(g, leaves, True) for g in first]
    third = [[grads_of(g, leaves, False) for g in row] for row in second]
    return (
        [_number(g) for g in first],
        [[_number(g) for g in row] for row in second],
        [[[_number(g) for g in col] for col in row] for row in third],
    )


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@HIGHER
@given(data=st.data())
def test_second_and_third_derivatives_match_torch(torch, op: Op, data: st.DataObject) -> None:
    point = data.draw(op.points(), label="point")
    leaves = [Value(x) for x in point]
    ours = _derivatives(_engine_grads, op.fn(*leaves), leaves)
    tensors = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in point]
    theirs = _derivatives(lambda o, ls, c: _torch_grads(torch, o, ls, c),
                          op.torch_fn(*tensors), tensors)
    flat = [_flatten(d) for d in ours], [_flatten(d) for d in theirs]
    for order, (mine, ref) in enumerate(zip(*flat, strict=True), start=1):
        for a, b in zip(mine, ref, strict=True):
            assert close(a, b, 1e-10), f"{op.name} order {order} at {point}: {mine} vs {ref}"
    assert all(leaf.grad == 0.0 for leaf in leaves)


def _flatten(nested: object) -> list[float]:
    if isinstance(nested, list):
        return [x for item in nested for x in _flatten(item)]
    return [nested]


def test_cube_derivatives_with_grad() -> None:
    x = Value(2.0)
    f = x**3
    (d1,) = grad(f, [x], create_graph=True)
    (d2,) = grad(d1, [x], create_graph=True)
    (d3,) = grad(d2, [x])
    assert isinstance(d1, Value) and isinstance(d2, Value)
    assert (d1.data, d2.data, d3) == (12.0, 12.0, 6.0)
    assert x.grad == 0.0


def test_cube_derivatives_with_backward_create_graph() -> None:
    x = Value(2.0)
    f = x**3
    f.backward(create_graph=True)
    d1 = x.grad
    assert isinstance(d1, Value) and d1.data == 12.0
    x.grad = 0.0
    d1.backward(create_graph=True)
    d2 = x.grad
    assert isinstance(d2, Value) and d2.data == 12.0
    x.grad = 0.0
    d2.backward()
    assert x.grad == 6.0


def _mixed(x, y):
    return x**2 * y**3 + (x * y).sin()


@examples(40)
@given(st.floats(-2, 2), st.floats(-2, 2))
def test_mixed_partials_agree_with_each_other_and_the_formula(x0: float, y0: float) -> None:
    x, y = Value(x0), Value(y0)
    dx, dy = grad(_mixed(x, y), [x, y], create_graph=True)
    (dxy,) = grad(dx, [y])
    (dyx,) = grad(dy, [x])
    expected = 6 * x0 * y0**2 + math.cos(x0 * y0) - x0 * y0 * math.sin(x0 * y0)
    assert close(dxy, dyx, 1e-12)
    assert close(dxy, expected, 1e-10)


def test_mixed_partials_match_torch(torch) -> None:
    x, y = Value(0.7), Value(-1.1)
    tx, ty = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.7, -1.1))
    ours = _derivatives(_engine_grads, _mixed(x, y), [x, y])
    theirs = _derivatives(lambda o, ls, c: _torch_grads(torch, o, ls, c), _mixed(tx, ty),
                          [tx, ty])
    for a, b in zip(_flatten(list(ours)), _flatten(list(theirs)), strict=True):
        assert close(a, b, 1e-10)


# ---- grad() ----


def test_grad_sums_several_outputs_and_leaves_grad_alone() -> None:
    x, y = Value(1.5), Value(-2.0)
    x.grad = 7.0
    gx, gy = grad([x * y, x.exp()], [x, y])
    assert (gx, gy) == (-2.0 + math.exp(1.5), 1.5)
    assert (x.grad, y.grad) == (7.0, 0.0)


def test_grad_unused_input() -> None:
    x, z = Value(1.0), Value(2.0)
    with pytest.raises(ValueError, match="allow_unused"):
        grad(x * 2, [x, z])
    assert grad(x * 2, [x, z], allow_unused=True) == (2.0, None)  # a tuple, as torch's


def test_grad_rejects_non_values() -> None:
    x = Value(1.0)
    with pytest.raises(TypeError, match="float"):
        grad(x * 2, [1.0])
    with pytest.raises(TypeError, match="str"):
        grad("y", [x])
    with pytest.raises(TypeError, match="grad: outputs must be a Value or Tensor, or a list "
                                        "of them, got float"):
        grad(3.0, [x])
    with pytest.raises(TypeError, match="grad: inputs must be a Value or Tensor, or a list"):
        grad(x * 2, 1.0)
    with pytest.raises(ValueError, match="grad: inputs is empty"):
        grad(x * 2, [])


# ---- primitive ----


def square(x: float) -> float:
    return x * x


def square_backward(xs, out, g):
    (x,) = xs
    return (2 * x * g,)  # operators only: works on Values too


def softplus(x: float) -> float:
    return math.log1p(math.exp(x))


def softplus_backward(xs, out, g):
    (x,) = xs
    return (g / (1 + math.exp(-x)),)  # math: floats only


def hypot(x: float, y: float) -> float:
    return math.hypot(x, y)


def hypot_backward(xs, out, g):
    x, y = xs
    return (x / out * g, y / out * g)


def fma(x: float, y: float, z: float) -> float:
    return x * y + z


def fma_backward(xs, out, g):
    x, y, z = xs
    return (y * g, x * g, g)


SQUARE = primitive(square, square_backward)
SOFTPLUS = primitive(softplus, softplus_backward, name="softplus")
HYPOT = primitive(hypot, hypot_backward)
FMA = primitive(fma, fma_backward, name="fused_multiply_add")

PRIMITIVES = [
    ("square", SQUARE, (-3.0, 3.0), 1),
    ("softplus", SOFTPLUS, (-5.0, 5.0), 1),
    ("hypot", HYPOT, (0.2, 3.0), 2),
    ("fused_multiply_add", FMA, (-3.0, 3.0), 3),
]


@pytest.mark.parametrize(("name", "op", "bounds", "arity"), PRIMITIVES,
                         ids=[p[0] for p in PRIMITIVES])
@PER_CASE
@given(data=st.data())
def test_primitive_matches_central_differences(name, op, bounds, arity, data) -> None:
    point = data.draw(st.tuples(*[st.floats(*bounds)] * arity), label="point")
    leaves = [Value(x) for x in point]
    out = op(*leaves)
    assert out._op == name
    assert out._prev == tuple(leaves)
    out.backward()
    for i, (leaf, numeric) in enumerate(zip(leaves, numeric_grads(op, point), strict=True)):
        assert agrees_with_numeric(leaf.grad, numeric), f"{name} input {i} at {point}"
    assert gradcheck(op, list(point))


def test_primitive_name_defaults_to_the_forward_name() -> None:
    assert SQUARE(Value(2.0))._op == "square"
    assert SQUARE.__name__ == "square"
    assert FMA(1.0, 2.0, 3.0)._op == "fused_multiply_add"


def test_primitive_accepts_numbers() -> None:
    y = Value(3.0)
    out = FMA(2, y, 1.5)
    assert isinstance(out, Value) and out.data == 7.5
    out.backward()
    assert y.grad == 2.0
    assert FMA(1, 2, 3).data == 5.0


def test_primitive_inside_a_larger_graph() -> None:
    x = Value(0.5)
    out = (SQUARE(x.sin()) + x).exp()
    out.backward()
    (numeric,) = numeric_grads(lambda v: (SQUARE(v.sin()) + v).exp(), [0.5])
    assert agrees_with_numeric(x.grad, numeric)


def test_primitive_under_create_graph() -> None:
    x = Value(1.5)
    (d1,) = grad(SQUARE(x) * x, [x], create_graph=True)  # x**3 through the primitive
    (d2,) = grad(d1, [x], create_graph=True)
    (d3,) = grad(d2, [x])
    assert (d1.data, d2.data, d3) == pytest.approx((3 * 1.5**2, 6 * 1.5, 6.0), abs=1e-12)
    x.grad = 0.0
    y, z = Value(2.0), Value(-1.0)
    (dy,) = grad(FMA(x, y, z) ** 2, [y], create_graph=True)
    (dyx,) = grad(dy, [x])  # d/dx of 2 (xy + z) x
    assert dyx == pytest.approx(2 * (2 * 1.5 * 2.0 - 1.0), abs=1e-12)


def test_primitive_with_the_wrong_number_of_gradients() -> None:
    def doubled(x: float) -> float:
        return 2 * x

    bad = primitive(doubled, lambda xs, out, g: (2 * g, g))
    out = bad(Value(1.0))
    with pytest.raises(ValueError, match="doubled") as info:
        out.backward()
    assert "2" in str(info.value) and "1" in str(info.value)


def test_primitive_needs_callables() -> None:
    with pytest.raises(TypeError):
        primitive(3, square_backward)
    with pytest.raises(TypeError):
        primitive(square, "not a function")


def test_an_inf_stopped_by_a_primitive_still_raises() -> None:
    # A straight-through op hands back a constant, whatever gradient reaches it: the inf
    # that log puts into its output's .grad never reaches the leaf, and must still be caught.
    def straight_through(x: float) -> float:
        return x

    passthrough = primitive(straight_through, lambda xs, out, g: (1.0,))
    x = Value(1e-310)
    y = passthrough(x)
    with pytest.raises(chaingrad.DomainError, match="log"):
        y.log().backward()
    assert (x.grad, y.grad) == (0.0, 0.0)


# ---- gradcheck ----


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
def test_gradcheck_passes_on_correct_ops(op: Op) -> None:
    point = [lo + 0.3 * (hi - lo) for (lo, hi), *_ in op.domains]
    assert gradcheck(op.fn, point) is True
    assert gradcheck(op.fn, [Value(x) for x in point]) is True


def test_gradcheck_on_a_composite() -> None:
    assert gradcheck(lambda x, y: (x * y).tanh() + x / (y * y + 1), [0.3, -1.2])


def test_gradcheck_catches_a_wrong_primitive() -> None:
    def product(x: float, y: float) -> float:
        return x * y

    def wrong_backward(xs, out, g):
        x, y = xs
        return (y * g, 3 * x * g)  # d/dy should be x, not 3x

    wrong = primitive(product, wrong_backward)
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong, [1.25, 2.0])
    message = str(info.value)
    assert "input 1" in message
    assert "3.75" in message  # the analytic gradient
    numbers = [float(n) for n in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", message)]
    assert any(abs(n - 1.25) < 1e-6 for n in numbers), message  # the numeric one
    assert isinstance(info.value, RuntimeError)


def test_gradcheck_names_the_first_wrong_input() -> None:
    def product(x: float, y: float) -> float:
        return x * y

    wrong = primitive(product, lambda xs, out, g: (-xs[1] * g, xs[0] * g))
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(wrong, [1.0, 0.5])


@pytest.mark.parametrize("returned", [None, "1.0", [None]], ids=["None", "str", "[None]"])
def test_primitive_backward_must_return_numbers(returned) -> None:
    sq = primitive(square, lambda xs, out, g: returned, name="sq")
    with pytest.raises(TypeError, match="sq: backward must return one number per input"):
        sq(Value(2.0)).backward()


@pytest.mark.parametrize("eps", [0, -1e-6, math.inf, math.nan])
def test_gradcheck_needs_a_positive_eps(eps: float) -> None:
    with pytest.raises(ValueError, match="gradcheck: eps must be a positive number"):
        gradcheck(lambda x: x * x, [1.0], eps=eps)


def test_gradcheck_input_must_be_a_number() -> None:
    with pytest.raises(TypeError, match="gradcheck: input 1 must be a number or a Value, got str"):
        gradcheck(lambda x, y: x * y, [1.0, "2"])


def test_gradcheck_names_a_labelled_input() -> None:
    wrong = primitive(square, lambda xs, out, g: (xs[0] * g,))
    with pytest.raises(GradcheckError, match="input 0 'w'"):
        gradcheck(wrong, [Value(1.5, label="w")])


def test_gradcheck_can_say_false_instead_of_raising_as_torchs(torch) -> None:
    """The custom autograd.Function program: ``gradcheck(..., raise_exception=False)``."""
    import numpy as np

    wrong = primitive(square, lambda xs, out, g: (xs[0] * g,))
    assert gradcheck(wrong, [1.5], raise_exception=False) is False
    assert gradcheck(lambda x: x * x, [1.5], raise_exception=False) is True
    legendre = _legendre(chaingrad.autograd.Function)
    x = chaingrad.tensor(np.linspace(-1, 1, 5), dtype=chaingrad.float64, requires_grad=True)
    assert chaingrad.autograd.gradcheck(legendre.apply, (x,), eps=1e-6, atol=1e-4,
                                        raise_exception=False) is True
    assert chaingrad.autograd.gradcheck(lambda t: legendre.apply(t) * 2, x, nondet_tol=0.0,
                                        check_undefined_grad=True, fast_mode=True) is True
    broken = primitive(lambda a: a * a, lambda xs, out, g: (g,))
    assert gradcheck(lambda t: broken(t), x, raise_exception=False) is False
    theirs = torch.autograd.gradcheck(lambda t: t * t, torch.ones(2, dtype=torch.float64,
                                                                  requires_grad=True))
    assert theirs is gradcheck(lambda t: t * t, chaingrad.ones(2, dtype=chaingrad.float64))


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"check_forward_ad": True}, NotImplementedError,
     "gradcheck with check_forward_ad=True is not in chaingrad yet"),
    ({"check_batched_grad": True}, NotImplementedError, "check_batched_grad=True"),
    ({"raise_exceptions": False}, TypeError,
     r"gradcheck\(\) got an unexpected keyword argument 'raise_exceptions'"),
])
def test_gradcheck_names_the_options_it_lacks(kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        gradcheck(lambda x: x * x, [1.0], **kwargs)


def test_errors_are_exported() -> None:
    assert issubclass(chaingrad.DomainError, ValueError)
    assert issubclass(chaingrad.GradcheckError, RuntimeError)


# ---- chaingrad.autograd.Function, written as torch's ----


def _legendre(base):
    """The P3 Function of PyTorch's examples, for torch.autograd.Function or chaingrad's."""

    class LegendrePolynomial3(base):
        @staticmethod
        def forward(ctx, input):  # noqa: A002
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors  # noqa: A001
            return grad_output * 1.5 * (5 * input**2 - 1)

    return LegendrePolynomial3


def test_function_agrees_with_torchs_also_differentiated_twice(torch):
    import numpy as np

    from chaingrad.autograd import Function
    from chaingrad.tensor_engine import Tensor

    x0 = np.linspace(-1, 1, 7)
    ours, theirs = Tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    y, t = _legendre(Function).apply(ours * 2), _legendre(torch.autograd.Function).apply(theirs * 2)
    assert y._op == "LegendrePolynomial3Backward"
    np.testing.assert_allclose(y.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    (dy,) = grad(y.sum(), [ours], create_graph=True)
    (dt,) = torch.autograd.grad(t.sum(), [theirs], create_graph=True)
    np.testing.assert_allclose(dy.detach().numpy(), dt.detach().numpy(), rtol=1e-12)
    (d2y,) = grad(dy.sum(), [ours])
    (d2t,) = torch.autograd.grad(dt.sum(), [theirs])
    np.testing.assert_allclose(np.asarray(d2y), d2t.numpy(), rtol=1e-12)
    assert gradcheck(lambda x: _legendre(Function).apply(x), [x0])


def test_function_context_and_arguments_as_torchs():
    import numpy as np

    from chaingrad.autograd import Function, FunctionCtx
    from chaingrad.tensor_engine import Tensor

    seen = {}

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor, w):
            seen["needs"] = ctx.needs_input_grad
            ctx.factor = factor
            ctx.save_for_backward(x, w)
            return x * factor * w

        @staticmethod
        def backward(ctx, grad_output):
            x, w = ctx.saved_tensors
            return grad_output * ctx.factor * w, None, grad_output * ctx.factor * x

    x, w = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0])
    y = Scale.apply(x, 2.0, w)
    assert seen["needs"] == (True, False, False)
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [6.0, 8.0])
    with no_grad():
        assert not Scale.apply(x, 2.0, w).requires_grad

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(ValueError, match=r"TooManyBackward returned an incorrect number of "
                                         r"gradients \(expected 1, got 2\)"):
        TooMany.apply(Value(1.0)).backward()
    with pytest.raises(NotImplementedError, match="mark_dirty is not in chaingrad yet"):
        FunctionCtx(()).mark_dirty()


def test_function_with_setup_context_on_values():
    from chaingrad.autograd import Function

    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    x = Value(3.0)
    y = Square.apply(x) * 2
    y.backward()
    assert (y.data, x.grad) == (18.0, 12.0)


def test_gradgradcheck_passes_true_second_derivatives_and_catches_a_frozen_rule() -> None:
    """A rule that reads its input's numbers as a constant has the right first derivative
    (gradcheck passes) but no second (gradgradcheck catches it), on either engine."""
    from chaingrad.autograd import gradgradcheck
    from chaingrad.rules import data

    def true_rule(xs, out, g):
        return (3 * xs[0] ** 2 * g,)

    def frozen_rule(xs, out, g):
        return (3 * data(xs[0]) ** 2 * g,)

    cube = primitive(lambda x: x ** 3, true_rule)
    frozen = primitive(lambda x: x ** 3, frozen_rule)
    x = chaingrad.tensor([0.5, -1.5], dtype=chaingrad.float64, requires_grad=True)
    for point in ([0.7], x):
        assert gradcheck(frozen, point) and gradgradcheck(cube, point)
        with pytest.raises(GradcheckError, match="analytic gradient"):
            gradgradcheck(frozen, point)
        assert gradgradcheck(frozen, point, raise_exception=False) is False
    assert gradgradcheck(lambda t: (t.tanh(), t.sin() * t), x,
                         grad_outputs=(chaingrad.ones(2), chaingrad.ones(2)))


def test_gradgradcheck_takes_torchs_arguments(torch) -> None:
    import inspect

    from chaingrad.autograd import gradgradcheck

    ours = inspect.signature(gradgradcheck).parameters
    theirs = inspect.signature(torch.autograd.gradgradcheck).parameters
    assert list(ours) == list(theirs)
    assert all(ours[name].default == theirs[name].default for name in list(theirs)[2:])
    with pytest.raises(NotImplementedError, match="check_fwd_over_rev=True is not in chaingrad"):
        gradgradcheck(lambda v: v * v, [1.0], check_fwd_over_rev=True)
