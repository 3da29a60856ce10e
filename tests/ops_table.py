"""The one table of scalar ops that the engine tests are driven by.

Each row names an op, how to call it on chaingrad Values, how to call it on torch tensors
(the oracle) and where its inputs may be drawn from: intervals kept away from kinks (relu,
abs at 0), singularities (log, sqrt, division, negative powers near 0), complex results
(a negative base to a non-integer power) and overflow (exp). Finite differences, the
PyTorch comparison and the higher-order tests all read this table, so a new op is tested
everywhere by adding one row.

torch is never imported here at module level: ``T.relu`` looks ``torch.relu`` up when the
callable runs, so the finite-difference tests run without torch installed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hypothesis import strategies as st
from numerics import ANY, ATOL, EPS, EXPONENT, NONZERO, POSITIVE, RTOL, Interval, T

import chaingrad
from chaingrad import Value


@dataclass(frozen=True)
class Op:
    """One row: an op, its oracle and a safe domain per input."""

    name: str
    fn: Callable[..., Value]  # on chaingrad Values
    torch_fn: Callable  # on torch float64 tensors
    domains: tuple[tuple[Interval, ...], ...]  # one tuple of intervals per input

    @property
    def arity(self) -> int:
        return len(self.domains)

    def points(self) -> st.SearchStrategy[tuple[float, ...]]:
        """Points inside the op's safe domain, one float per input."""
        return st.tuples(*(_floats(intervals) for intervals in self.domains))


def _floats(intervals: Sequence[Interval]) -> st.SearchStrategy[float]:
    return st.one_of(
        *(st.floats(lo, hi, allow_nan=False, allow_infinity=False) for lo, hi in intervals)
    )


def _unary(name, fn, torch_fn, domain=ANY) -> Op:
    return Op(name, fn, torch_fn, (domain,))


def _binary(name, fn, torch_fn, left=ANY, right=ANY) -> Op:
    return Op(name, fn, torch_fn, (left, right))


OPS: list[Op] = [
    # binary operators, Value on both sides
    _binary("add", lambda x, y: x + y, lambda x, y: T.add(x, y)),
    _binary("sub", lambda x, y: x - y, lambda x, y: T.sub(x, y)),
    _binary("mul", lambda x, y: x * y, lambda x, y: T.mul(x, y)),
    _binary("div", lambda x, y: x / y, lambda x, y: T.div(x, y), right=NONZERO),
    _binary("pow_value", lambda x, y: x**y, lambda x, y: T.pow(x, y), POSITIVE, EXPONENT),
    # ** with a number exponent: integer exponents for any base, others for a positive one
    _unary("pow_2", lambda x: x**2, lambda x: T.pow(x, 2)),
    _unary("pow_3", lambda x: x**3, lambda x: T.pow(x, 3)),
    _unary("pow_0", lambda x: x**0, lambda x: T.pow(x, 0)),
    _unary("pow_-1", lambda x: x**-1, lambda x: T.pow(x, -1), NONZERO),
    _unary("pow_-2", lambda x: x**-2, lambda x: T.pow(x, -2), NONZERO),
    _unary("pow_0.5", lambda x: x**0.5, lambda x: T.pow(x, 0.5), POSITIVE),
    _unary("pow_2.5", lambda x: x**2.5, lambda x: T.pow(x, 2.5), POSITIVE),
    _unary("pow_-1.5", lambda x: x**-1.5, lambda x: T.pow(x, -1.5), POSITIVE),
    _unary("pow_float_3.0", lambda x: x**3.0, lambda x: T.pow(x, 3.0)),
    # unary minus and the reflected operators (a number on the left)
    _unary("neg", lambda x: -x, lambda x: T.neg(x)),
    _unary("radd", lambda x: 2 + x, lambda x: T.add(x, 2)),
    _unary("rsub", lambda x: 2 - x, lambda x: T.sub(2, x)),
    _unary("rmul", lambda x: 2 * x, lambda x: T.mul(x, 2)),
    _unary("rtruediv", lambda x: 2 / x, lambda x: T.div(2, x), NONZERO),
    _unary("rpow", lambda x: 2**x, lambda x: T.pow(2, x)),
    _unary("rpow_half", lambda x: 0.5**x, lambda x: T.pow(0.5, x)),
    # a number on the right
    _unary("add_number", lambda x: x + 1.5, lambda x: T.add(x, 1.5)),
    _unary("sub_number", lambda x: x - 1.5, lambda x: T.sub(x, 1.5)),
    _unary("mul_number", lambda x: x * -1.5, lambda x: T.mul(x, -1.5)),
    _unary("div_number", lambda x: x / -1.5, lambda x: T.div(x, -1.5)),
    # methods
    _unary("relu", lambda x: x.relu(), lambda x: T.relu(x), NONZERO),
    _unary("tanh", lambda x: x.tanh(), lambda x: T.tanh(x), ((-4.0, 4.0),)),
    _unary("sigmoid", lambda x: x.sigmoid(), lambda x: T.sigmoid(x), ((-6.0, 6.0),)),
    _unary("exp", lambda x: x.exp(), lambda x: T.exp(x), ((-5.0, 5.0),)),
    _unary("log", lambda x: x.log(), lambda x: T.log(x), POSITIVE),
    _unary("sqrt", lambda x: x.sqrt(), lambda x: T.sqrt(x), POSITIVE),
    _unary("abs", lambda x: x.abs(), lambda x: T.abs(x), NONZERO),
    _unary("builtin_abs", lambda x: abs(x), lambda x: T.abs(x), NONZERO),
    _unary("sin", lambda x: x.sin(), lambda x: T.sin(x), ((-6.0, 6.0),)),
    _unary("cos", lambda x: x.cos(), lambda x: T.cos(x), ((-6.0, 6.0),)),
    _unary("log1p", lambda x: x.log1p(), lambda x: T.log1p(x), ((-0.9, 3.0),)),
    _unary("expm1", lambda x: x.expm1(), lambda x: T.expm1(x)),
    _unary("log10", lambda x: x.log10(), lambda x: T.log10(x), POSITIVE),
    _unary("log2", lambda x: x.log2(), lambda x: T.log2(x), POSITIVE),
    _unary("erf", lambda x: x.erf(), lambda x: T.erf(x)),
    _unary("gelu", lambda x: x.gelu(), lambda x: T.nn.functional.gelu(x)),
    _unary("leaky_relu", lambda x: x.leaky_relu(), lambda x: T.nn.functional.leaky_relu(x),
           NONZERO),
    _unary("leaky_relu_0.2", lambda x: x.leaky_relu(0.2),
           lambda x: T.nn.functional.leaky_relu(x, 0.2), NONZERO),
    _unary("softplus", lambda x: x.softplus(), lambda x: T.nn.functional.softplus(x)),
    # beta * x > threshold is the line x itself: a kink at x = 1.5, kept away from
    _unary("softplus_beta_2", lambda x: x.softplus(beta=2.0, threshold=3.0),
           lambda x: T.nn.functional.softplus(x, beta=2.0, threshold=3.0),
           ((-3.0, 1.4), (1.6, 3.0))),
]

OP_IDS = [op.name for op in OPS]


def close(a: float, b: float, tol: float = 1e-12) -> bool:
    """Equal up to a relative (and, near zero, absolute) tolerance ``tol``."""
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def engine_grads(fn: Callable[..., Value], point: Sequence[float]) -> tuple[float, list[float]]:
    """fn's value at ``point`` and its gradient from ``backward()``."""
    leaves = [Value(x) for x in point]
    out = fn(*leaves)
    out.backward()
    return out.data, [leaf.grad for leaf in leaves]


def numeric_grads(fn: Callable[..., Value], point: Sequence[float]) -> list[float]:
    """Central finite differences of fn at ``point``, one per input."""
    grads = []
    with chaingrad.no_grad():
        for i in range(len(point)):
            up = [x + EPS if j == i else x for j, x in enumerate(point)]
            down = [x - EPS if j == i else x for j, x in enumerate(point)]
            f_up = fn(*map(Value, up)).data
            f_down = fn(*map(Value, down)).data
            grads.append((f_up - f_down) / (2 * EPS))
    return grads


def agrees_with_numeric(analytic: float, numeric: float) -> bool:
    return abs(analytic - numeric) <= ATOL + RTOL * abs(numeric)
