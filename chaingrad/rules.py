"""The primitives: every op that chaingrad differentiates by hand, each stated once.

A primitive is a named object with three parts that belong together:

- ``forward``: what the op computes on floats (a ``DomainError`` where it is undefined);
- ``vjp``: its derivative rule, ``vjp(xs, out, g, *params) -> one gradient per input``.
  Given the inputs ``xs``, the output ``out`` and the gradient ``g`` that reached the
  output, it returns ``g * d(out)/d(x)`` for each input ``x`` (a vector-Jacobian product);
- ``formulas``: the same rule as text, one Python expression per input, in the words that
  ``explain``, the step-by-step page and ``compile`` print: ``x`` and ``y`` are inputs 0
  and 1, ``out`` is the output, ``.data`` a node's value as a constant (its ``_value``: a
  Value's number, a Tensor's array) and ``.grad`` its gradient. A test evaluates every
  formula and checks it against the rule.

A rule uses only operators and the functions of ``chaingrad.functional`` (``cos``, ``log``,
``sign``, ``data``), which take floats, numpy arrays, Values and Tensors alike. So one rule
serves the scalar engine (floats), the Tensor engine (arrays), and
``backward(create_graph=True)``, where it runs on the nodes themselves and the gradient
becomes a graph that can be differentiated again.

The Tensor engine's own primitives (matmul, sum, reshape, conv2d, ...) are written the same
way in ``chaingrad/tensor_engine/rules.py``.

Example:
    >>> TANH.formulas
    ('(1 - out.data**2) * out.grad',)
    >>> TANH.vjp((0.5,), TANH.forward(0.5), 1.0) == (1 - TANH.forward(0.5) ** 2,)
    True
"""

from __future__ import annotations

import functools
import io
import math
import operator
import tokenize
from collections.abc import Callable
from typing import Any

from .errors import DomainError
from .functional import cos, data, log, sign, sin

_MAX_EXP = math.log(1.7976931348623157e308)  # exp(x) overflows a float beyond this

GENERIC_FORMULA = "d(out)/d(x) * out.grad"
"""The formula of a primitive made with ``chaingrad.primitive``: its rule is the user's own
function, and only the local derivative it gives (its answer for ``g = 1``) can be shown."""


class Primitive:
    """A named op: its forward on floats, its derivative rule, and that rule as text.

    Args:
        name: The op's name, as a node shows it in ``_op`` ('+', 'tanh', ...).
        vjp: ``vjp(xs, out, g, *params) -> one gradient per input``.
        formulas: One Python expression per input: what ``vjp`` returns for that input.
        forward: The op on floats (for a Tensor-only primitive: on arrays), or None.
        params: The names of what the op takes besides its inputs (the ``n`` of
            ``x ** n``, the axes of a sum, ...), in the order ``vjp`` receives them.
        keeps_nan: Whether a nan or inf in ``g`` always reaches the rule's results (true
            of every rule here, which multiplies by ``g``; the backward pass checks ``g``
            before calling a rule that may drop it, such as a user's primitive).

    A primitive is its own rule for a node when it has no parameters; ``bind`` gives the
    rule of a node whose op has some.
    """

    __slots__ = ("name", "vjp", "formulas", "forward", "param_names", "keeps_nan", "primitive")
    params: tuple = ()  # the parameter values of this rule: none (see ``bind``)

    def __init__(self, name: str, vjp: Callable[..., tuple], formulas: tuple[str, ...],
                 forward: Callable[..., Any] | None = None, params: tuple[str, ...] = (),
                 keeps_nan: bool = True):
        self.name, self.vjp, self.formulas = name, vjp, formulas
        self.forward, self.param_names, self.keeps_nan = forward, params, keeps_nan
        self.primitive = self  # as a rule, it is its own primitive (a Bound rule has one)

    @property
    def doc(self) -> str:
        """What the op computes and its derivative: its rule's docstring."""
        return self.vjp.__doc__ or ""

    def bind(self, *params: Any, name: str = "") -> Bound:
        """This primitive's rule for one node, with its parameters' values (and the name
        the node shows, if not the primitive's: ``x ** 2`` is ``**2``).

        Example:
            >>> POW_N.bind(2, name="**2").params
            (2,)
        """
        return Bound(self, params, name)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class Bound:
    """A primitive with the values of its parameters: the rule of one node."""

    __slots__ = ("primitive", "params", "vjp", "name")

    def __init__(self, primitive: Primitive, params: tuple, name: str = ""):
        if len(params) != len(primitive.param_names):
            raise TypeError(f"{primitive.name}: needs parameters {primitive.param_names}, "
                            f"got {len(params)} value(s)")
        self.primitive, self.params, self.vjp = primitive, params, primitive.vjp
        self.name = name or primitive.name

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in zip(self.primitive.param_names, self.params))
        return f"<primitive {self.name} ({values})>"


def define(name: str, formulas: tuple[str, ...], forward: Callable[..., Any] | None = None,
           params: tuple[str, ...] = ()) -> Callable[[Callable[..., tuple]], Primitive]:
    """Make the decorated rule ``vjp(xs, out, g, *params)`` into the ``Primitive`` ``name``."""

    def make(vjp: Callable[..., tuple]) -> Primitive:
        return Primitive(name, vjp, formulas, forward, params)

    return make


def fill_in(formula: str, node_text: Callable[[str, str], str],
            param_text: Callable[[str], str | None]) -> str:
    """A formula with ``who.attr`` (who: x, y, out) and parameters replaced, spacing kept.

    ``node_text(who, attr)`` gives the text for ``x.data``, ``out.grad``, ``x.shape`` ...
    (``attr`` may be ``"data.T"``/``"data.mT"``); ``param_text(name)`` the text for a
    parameter, or None to keep its name. A negative number raised to a power is put in
    parentheses. ``explain`` fills formulas in with names and numbers, ``compile`` with
    the variables of the code it writes.

    Example:
        >>> fill_in("y.data * out.grad", lambda who, attr: f"{who}_{attr}", lambda p: None)
        'y_data * out_grad'
    """
    out = []
    for kind, text, before_power in _pieces(formula):
        if kind == "node":
            text = node_text(*text.split(".", 1))
        elif kind == "name":
            replaced = param_text(text)
            text = text if replaced is None else replaced
        if before_power and text.startswith("-"):
            text = f"({text})"
        out.append(text)
    return "".join(out)


@functools.cache
def _pieces(formula: str) -> tuple[tuple[str, str, bool], ...]:
    """A formula cut into (kind, text, followed by **) pieces: "node" for ``x.data``,
    ``out.grad``, ``x.data.T`` ...; "name" for a name that may be a parameter; "text" for
    the rest, as written (the spaces between tokens included)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(formula).readline))

    def at(i: int, text: str) -> bool:
        return 0 <= i < len(tokens) and tokens[i].string == text

    pieces, i, last = [], 0, 0
    while i < len(tokens) and tokens[i].type not in (tokenize.NEWLINE, tokenize.ENDMARKER,
                                                      tokenize.NL):
        tok = tokens[i]
        if tok.start[1] > last:
            pieces.append(("text", formula[last:tok.start[1]], False))
        kind, j = "text", i + 1
        if tok.type == tokenize.NAME and tok.string in ("x", "y", "out") and at(i + 1, "."):
            kind, j = "node", i + 3
            if tokens[i + 2].string == "data" and at(j, ".") and tokens[j + 1].string in (
                    "T", "mT"):
                j += 2
        elif tok.type == tokenize.NAME and not at(i - 1, ".") and not at(i + 1, "="):
            kind = "name"
        last = tokens[j - 1].end[1]
        pieces.append((kind, formula[tok.start[1]:last], at(j, "**")))
        i = j
    return tuple(pieces)


def any_true(condition: Any) -> bool:
    """Whether a condition holds anywhere: a bool, or any entry of a boolean array."""
    return bool(condition.any()) if hasattr(condition, "any") else bool(condition)


# ---- the forwards on floats, with the errors that make them total ----


def exp_forward(x: float) -> float:
    if x > _MAX_EXP:
        raise DomainError(f"exp: got {x}, needs x <= {_MAX_EXP:.4f} (overflow)")
    return math.exp(x)


def log_forward(x: float) -> float:
    if x <= 0:
        raise DomainError(f"log: got {x}, needs x > 0")
    return math.log(x)


def sqrt_forward(x: float) -> float:
    if x < 0:
        raise DomainError(f"sqrt: got {x}, needs x >= 0")
    return math.sqrt(x)


def sigmoid_forward(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)  # exp(-x) would overflow for very negative x; this form never does
    return e / (1.0 + e)


def power(op: str, x: float, n: float) -> float:
    """x ** n on floats, with a DomainError where Python would fail or go complex."""
    if x == 0 and n < 0:
        raise DomainError(f"{op}: got base 0.0 and exponent {n}, needs a base != 0")
    if x < 0 and n != int(n):
        raise DomainError(f"{op}: got base {x} and exponent {n}, needs an integer exponent")
    try:
        return float(x**n)
    except OverflowError:
        raise DomainError(f"{op}: {x} ** {n} overflows a float") from None


# ---- the primitives: forward, rule and formula, one op at a time ----


@define("+", ("out.grad", "out.grad"), forward=operator.add)
def ADD(xs, out, g):
    """x + y;  d/dx = 1, d/dy = 1."""
    return g, g


@define("*", ("y.data * out.grad", "x.data * out.grad"), forward=operator.mul)
def MUL(xs, out, g):
    """x * y;  d/dx = y, d/dy = x."""
    x, y = xs
    return y * g, x * g


@define("**n", ("n * x.data**(n - 1) * out.grad",),
        forward=lambda x, n: power(f"**{n}", x, n), params=("n",))
def POW_N(xs, out, g, n):
    """x ** n for a constant n;  d/dx = n * x**(n-1) (0 for n = 0)."""
    if not any_true(n != 0):
        return (0 * g,)
    return (n * xs[0] ** (n - 1) * g,)


@define("**", ("y.data * x.data**(y.data - 1) * out.grad", "out.data * log(x.data) * out.grad"),
        forward=lambda x, y: power("**", x, y))
def POW(xs, out, g):
    """x ** y;  d/dx = y * x**(y-1), d/dy = x**y * log(x).

    As in PyTorch, d/dx is 0 where y = 0 and d/dy is 0 where x = 0 (log x is needed only
    where x > 0); a negative x has no d/dy.
    """
    x, y = xs
    xd, yd = data(x), data(y)
    if any_true(xd < 0):
        raise DomainError(f"**: d/dy of x ** y needs x >= 0 (log x), got x = {xd}")
    # (y == 0) and (x <= 0) are added where the exact formula would divide by zero
    dx = y * x ** (y - 1 + (yd == 0)) * g
    dy = out * log(x * (xd > 0) + (xd <= 0)) * g
    return dx, dy


@define("ReLU", ("(out.data > 0) * out.grad",), forward=lambda x: x if x > 0 else 0.0)
def RELU(xs, out, g):
    """max(0, x);  d/dx = 1 if x > 0 else 0."""
    return ((data(out) > 0) * g,)


@define("tanh", ("(1 - out.data**2) * out.grad",), forward=math.tanh)
def TANH(xs, out, g):
    """tanh(x);  d/dx = 1 - tanh(x)**2, reusing the output (micrograd's very arithmetic)."""
    return ((1 - out**2) * g,)


@define("sigmoid", ("out.data * (1 - out.data) * out.grad",), forward=sigmoid_forward)
def SIGMOID(xs, out, g):
    """1 / (1 + exp(-x));  d/dx = s * (1 - s), reusing the output s."""
    return (out * (1 - out) * g,)


@define("exp", ("out.data * out.grad",), forward=exp_forward)
def EXP(xs, out, g):
    """e ** x;  d/dx = e ** x, reusing the output."""
    return (out * g,)


@define("log", ("out.grad / x.data",), forward=log_forward)
def LOG(xs, out, g):
    """ln(x);  d/dx = 1 / x."""
    return (g / xs[0],)


@define("sqrt", ("out.grad / (2 * out.data)",), forward=sqrt_forward)
def SQRT(xs, out, g):
    """sqrt(x);  d/dx = 1 / (2 * sqrt(x)), reusing the output (unbounded at 0)."""
    return (g / (2 * out),)


@define("abs", ("sign(x.data) * out.grad",), forward=abs)
def ABS(xs, out, g):
    """|x|;  d/dx = sign(x), taken as 0 at x = 0 (as PyTorch does)."""
    return (sign(xs[0]) * g,)


@define("sin", ("cos(x.data) * out.grad",), forward=math.sin)
def SIN(xs, out, g):
    """sin(x);  d/dx = cos(x)."""
    return (cos(xs[0]) * g,)


@define("cos", ("-sin(x.data) * out.grad",), forward=math.cos)
def COS(xs, out, g):
    """cos(x);  d/dx = -sin(x)."""
    return (-sin(xs[0]) * g,)


PRIMITIVES: tuple[Primitive, ...] = (ADD, MUL, POW_N, POW, RELU, TANH, SIGMOID, EXP, LOG, SQRT,
                                     ABS, SIN, COS)
"""Every primitive of this module: the ops both engines differentiate."""
