"""The primitives: every op that chaingrad differentiates by hand, each declared once.

A primitive is a named object that says everything about its op, in one place:

- ``forward``: the op on numbers (floats), and ``array``: the op on numpy arrays, as the
  Python text that the Tensor engine runs and that ``compile`` writes into its code;
- ``domain``: where it is defined (``log``: ``x > 0``); outside it, either engine raises a
  ``DomainError`` that says so (``log: got 0.0, needs x > 0``);
- ``vjp``: its derivative rule, ``vjp(xs, out, g, *params) -> one gradient per input``.
  Given the inputs ``xs``, the output ``out`` and the gradient ``g`` that reached the
  output, it returns ``g * d(out)/d(x)`` for each input ``x`` (a vector-Jacobian product);
- ``formulas``: the same rule as text, one Python expression per input, in the words that
  ``explain``, the step-by-step page and ``compile`` print: ``x`` and ``y`` are inputs 0
  and 1, ``out`` is the output, ``.data`` a node's value as a constant (its ``_value``: a
  Value's number, a Tensor's array) and ``.grad`` its gradient. A test evaluates every
  formula and checks it against the rule;
- ``saves``: what the rule reads of the forward pass, for each input's gradient (PyTorch's
  "saved tensors"): a Tensor graph freed by ``backward()``, or one whose tensor was
  changed in place since, refuses a second pass only where a rule needs what is gone;
- ``torch``: where PyTorch has the op (``torch.tanh``, ``Tensor.tanh``, ``F.tanh``): the
  Value and Tensor methods, ``chaingrad.tanh``, ``chaingrad.nn.functional.tanh`` and the
  expression language of ``chaingrad graph`` are made from it.

A rule uses only operators and the functions at the end of this module (``cos``, ``log``,
``sign``, ``data``, ...: each primitive as a function of a float, an array, a Value or a
Tensor). So one rule serves the scalar engine (floats), the Tensor engine (arrays), and
``backward(create_graph=True)``, where it runs on the nodes themselves and the gradient
becomes a graph that can be differentiated again.

The Tensor engine's own primitives (matmul, sum, reshape, conv2d, ...) are declared the same
way in ``chaingrad/tensor_engine/rules.py``. "Adding an op" in docs/ops.md says how to add
one.

Example:
    >>> TANH.formulas
    ('(1 - out.data**2) * out.grad',)
    >>> TANH.vjp((0.5,), TANH.forward(0.5), 1.0) == (1 - TANH.forward(0.5) ** 2,)
    True
    >>> TANH.array, TANH.saves, TANH.torch
    ('np.tanh(x)', ('out',), ('torch.tanh', 'Tensor.tanh', 'F.tanh'))
"""

from __future__ import annotations

import functools
import importlib
import inspect
import io
import math
import operator
import re
import tokenize
from collections.abc import Callable
from numbers import Real
from typing import Any

from .errors import DomainError

LOG_MAX = math.log(1.7976931348623157e308)  # exp(x) overflows a float beyond this
SQRT1_2 = math.sqrt(0.5)  # 1 / sqrt(2): gelu's erf(x / sqrt(2)) is erf(x * SQRT1_2)

GENERIC_FORMULA = "d(out)/d(x) * out.grad"
"""The formula of a primitive made with ``chaingrad.primitive``: its rule is the user's own
function, and only the local derivative it gives (its answer for ``g = 1``) can be shown."""


class Primitive:
    """A named op: its forwards, its domain, its derivative rule and that rule as text,
    what the rule keeps of the forward pass, and its names in PyTorch.

    Args:
        name: The op's name, as a node shows it in ``_op`` ('+', 'tanh', ...).
        vjp: ``vjp(xs, out, g, *params) -> one gradient per input``.
        formulas: One Python expression per input: what ``vjp`` returns for that input (or
            one, in ``k``, for a primitive with any number of inputs).
        forward: The op on floats, or None for a Tensor-only primitive. For a user's
            primitive (``chaingrad.primitive``), the op on whatever its inputs hold.
        array: The op on numpy arrays, as Python text over ``x`` and ``y`` (inputs 0 and
            1), ``xs`` (all of them), the parameters, ``np`` and the array functions of
            ``chaingrad.tensor_engine.kernels``; None: ``forward`` serves arrays too.
        params: The names of what the op takes besides its inputs (the ``n`` of ``x ** n``,
            the axes of a sum, ...), in the order ``vjp`` receives them.
        domain: Where the op is defined, as text (``"x > 0"``; ``{log_max}`` stands for the
            log of the largest number of the float type), for the ``DomainError`` raised
            outside it; "" where the forward says itself, or is defined everywhere.
        saves: For each input's gradient (one entry for all, with ``k``), what of the
            forward pass the rule reads, space-separated: ``x``, ``y`` (the inputs' numbers;
            not only their shape) and ``out``. A parameter that holds an array (an index)
            is kept too. None: the rule may read anything (a user's).
        torch: Where PyTorch has the op: ``torch.<name>``, ``Tensor.<name>``,
            ``F.<name>`` (``torch.nn.functional``). Each engine has the ``Tensor`` name as a
            method; ``chaingrad`` and ``chaingrad.nn.functional`` get the others.
        floats: An integer or bool tensor is first made one of the default float dtype,
            as torch computes ``exp`` or ``sqrt`` of one.
        exact: Whether the formulas compute what the rule does, everywhere (``compile``
            writes them as its code); False where they show the rule but the rule handles
            cases they do not (``x ** y`` at ``x <= 0``): then the code calls the rule.
        keeps_nan: Whether a nan or inf in ``g`` always reaches the rule's results (true
            of every rule here, which multiplies by ``g``; the backward pass checks ``g``
            before calling a rule that may drop it, such as a user's primitive).
        defaults: The numbers that parameters take when a call leaves them out
            (``leaky_relu``'s ``negative_slope=0.01``). An op of one input whose
            parameters all have one is an elementwise primitive (``FUNCTIONS``): a method
            of both engines (``x.leaky_relu()``, ``x.leaky_relu(0.2)``) and a function.

    A primitive is its own rule for a node when it has no parameters; ``bind`` gives the
    rule of a node whose op has some.
    """

    __slots__ = ("name", "vjp", "formulas", "forward", "array", "param_names", "domain",
                 "saves", "torch", "floats", "exact", "keeps_nan", "defaults", "primitive",
                 "__dict__")
    params: tuple = ()  # the parameter values of this rule: none (see ``bind``)

    def __init__(self, name: str, vjp: Callable[..., tuple], formulas: tuple[str, ...],
                 forward: Callable[..., Any] | None = None, array: str | None = None,
                 params: tuple[str, ...] = (), domain: str = "",
                 saves: tuple[str, ...] | None = None, torch: tuple[str, ...] = (),
                 floats: bool = False, exact: bool = True, keeps_nan: bool = True,
                 defaults: dict[str, float] | None = None):
        self.name, self.vjp, self.formulas = name, vjp, formulas
        self.forward, self.array, self.param_names = forward, array, params
        self.domain, self.saves, self.torch = domain, saves, torch
        self.floats, self.exact, self.keeps_nan = floats, exact, keeps_nan
        self.defaults = defaults or {}
        self.primitive = self  # as a rule, it is its own primitive (a Bound rule has one)

    @property
    def doc(self) -> str:
        """What the op computes and its derivative: its rule's docstring."""
        return self.vjp.__doc__ or ""

    @property
    def method(self) -> str:
        """The op's name as a Python identifier: the name of its Value and Tensor method
        (``tanh``, ``relu``), and of its function (``chaingrad.tanh``)."""
        return identifier(self.name)

    @functools.cached_property
    def on_arrays(self) -> Callable[..., Any]:
        """The forward on numpy arrays, called with the inputs then the parameters: ``array``
        made a function (needs numpy), or ``forward`` where there is no ``array``.

        Example:
            >>> import numpy as np
            >>> TANH.on_arrays(np.zeros(2)).tolist()
            [0.0, 0.0]
        """
        if self.array is None:
            return self.forward
        ufunc = re.fullmatch(r"np\.(\w+)\(x\)", self.array)
        if ufunc and not self.param_names:  # np.tanh(x): the ufunc itself, one call less
            return getattr(array_namespace()["np"], ufunc[1])
        params = list(self.param_names)
        code = ("def forward_on_arrays(*args):\n"
                f"    xs = args[:len(args) - {len(params)}]\n"
                f"    {''.join(p + ', ' for p in params)}= args[len(args) - {len(params)}:]\n"
                "    x, y = (xs + (None, None))[:2]\n"
                f"    return {self.array}\n") if params or _mentions(self.array, "xs") else \
            f"def forward_on_arrays(x, y=None):\n    return {self.array}\n"
        space = dict(array_namespace())
        exec(code, space)  # our own text, from the declaration above
        forward = space["forward_on_arrays"]
        forward.__qualname__ = forward.__name__ = f"{identifier(self.name)}_on_arrays"
        return forward

    def needs(self, log_max: float = LOG_MAX) -> str:
        """The domain as words, for an error message (``{log_max}`` filled in)."""
        return self.domain.format(log_max=log_max)

    def bind(self, *params: Any, name: str = "") -> Bound:
        """This primitive's rule for one node, with its parameters' values (and the name
        the node shows, if not the primitive's: ``x ** 2`` is ``**2``).

        Example:
            >>> POW_N.bind(2, name="**2").params
            (2,)
        """
        return Bound(self, params, name)

    def called(self, *args: Any, **kwargs: Any) -> Primitive | Bound:
        """The rule of a call of this op that gave its parameters as ``args`` and
        ``kwargs``, those left out taking their ``defaults``: the primitive itself, for an
        op without parameters. Each must be a real number.

        Example:
            >>> LEAKY_RELU.called()
            <primitive leaky_relu (negative_slope=0.01)>
            >>> LEAKY_RELU.called(negative_slope=0.2).params
            (0.2,)
        """
        if not self.param_names and not args and not kwargs:
            return self
        op, names = self.method, self.param_names
        if len(args) > len(names):
            raise TypeError(f"{op}: takes at most {len(names)} parameter(s) {names}, got "
                            f"{len(args)}")
        given = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in names:
                raise TypeError(f"{op}: got an unexpected keyword argument {name!r} (its "
                                f"parameters are {names})")
            if name in given:
                raise TypeError(f"{op}: got {name} twice")
            given[name] = value
        params = []
        for name in names:
            value = given.get(name, self.defaults.get(name))
            if isinstance(value, bool) or not isinstance(value, Real) or value != value:
                missing = name not in given and name not in self.defaults
                raise TypeError(f"{op}: {name} must be a number, got "
                                f"{'nothing' if missing else repr(value)}")
            params.append(float(value))
        return self.bind(*params)

    def __call__(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        """The op applied to one float, array, Value or Tensor (see ``cos``, ``log``, ...
        below), with its parameters if it has any: a node's own method, the array forward
        or the float forward."""
        if hasattr(x, "_prev"):  # a Value or a Tensor: its method makes the node
            return getattr(x, self.method)(*args, **kwargs)
        rule = self.called(*args, **kwargs)
        if type(x).__module__ == "numpy" and not isinstance(x, (int, float)):
            return self.on_arrays(x, *rule.params)  # an ndarray or a numpy scalar
        if isinstance(x, Real):
            return on_floats(self, float(x), *rule.params)
        raise TypeError(f"{self.method or self.name}: needs a number, an array, a Value or a "
                        f"Tensor, got {type(x).__name__} {x!r}")

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


def define(name: str, formulas: tuple[str, ...], **declared: Any,
           ) -> Callable[[Callable[..., tuple]], Primitive]:
    """Make the decorated rule ``vjp(xs, out, g, *params)`` into the ``Primitive`` ``name``
    (``declared``: its other parts, as ``Primitive`` takes them)."""

    def make(vjp: Callable[..., tuple]) -> Primitive:
        return Primitive(name, vjp, formulas, **declared)

    return make


def on_floats(prim: Primitive, *args: Any) -> float:
    """``prim``'s forward on floats (the inputs, then the parameters): a ``DomainError``
    naming the op where Python's ``math`` fails (outside the op's domain), a ``TypeError``
    for a forward that does not give a number (a user's).

    Example:
        >>> on_floats(LOG, 0.0)
        Traceback (most recent call last):
        ...
        chaingrad.errors.DomainError: log: got 0.0, needs x > 0
    """
    try:
        out = prim.forward(*args)
    except DomainError:
        raise
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        got = ", ".join(str(a) for a in args[:len(args) - len(prim.param_names)])
        if prim.domain:
            raise DomainError(f"{prim.name}: got {got}, needs {prim.needs()}") from None
        raise DomainError(f"{prim.name}: forward failed at ({got}): {exc}") from exc
    if type(out) is not float:
        if not isinstance(out, Real) or hasattr(out, "_prev"):
            raise TypeError(f"{prim.name}: forward must return a real number, got "
                            f"{type(out).__name__}")
        out = float(out)
    return out


@functools.cache
def array_namespace() -> dict[str, Any]:
    """What a primitive's ``array`` text may call: numpy as ``np``, and the array functions
    of ``chaingrad.tensor_engine.kernels`` (imported on first use: the scalar engine needs
    no numpy)."""
    kernels = importlib.import_module("chaingrad.tensor_engine.kernels")
    return {"np": kernels.np} | {name: value for name, value in vars(kernels).items()
                                 if not name.startswith("_") and callable(value)}


def _mentions(text: str, name: str) -> bool:
    """Whether Python text uses the variable ``name`` (not as an attribute)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    return any(t.type == tokenize.NAME and t.string == name
               and not (i and tokens[i - 1].string == ".") for i, t in enumerate(tokens))


def substitute(text: str, names: dict[str, str]) -> str:
    """Python text with each variable in ``names`` replaced by its text (an attribute of the
    same name stays: in ``x.sum(axis=axes)`` only ``x`` and ``axes`` are variables).

    Example:
        >>> substitute("x.sum(axis=axes, keepdims=keepdims)", {"x": "a1", "axes": "(0,)"})
        'a1.sum(axis=(0,), keepdims=keepdims)'
    """
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    out, last = [], 0
    for i, t in enumerate(tokens):
        if (t.type == tokenize.NAME and t.string in names
                and not (i and tokens[i - 1].string == ".")
                and not (i + 1 < len(tokens) and tokens[i + 1].string == "=")):
            out.append(text[last:t.start[1]] + names[t.string])
            last = t.end[1]
    return "".join(out) + text[last:]


def identifier(name: str) -> str:
    """An op's name as a Python identifier (``**n`` is ``pow_n``, ``ReLU`` ``relu``)."""
    named = {"+": "add", "*": "mul", "**n": "pow_n", "**": "pow"}.get(name)
    return named or "".join(c if c.isalnum() or c == "_" else "_" for c in name).lower() or "op"


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


# ---- the forwards on floats that Python's operators and math do not give as they are ----


def sigmoid_forward(x: float) -> float:
    """1 / (1 + exp(-x)) without overflow: exp only ever sees -|x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def gelu_forward(x: float) -> float:
    """x * Phi(x), Phi the standard normal's distribution function, 0.5 * (1 + erf(x / sqrt 2)),
    in torch's order of operations."""
    return x * 0.5 * (1.0 + math.erf(x * SQRT1_2))


def softplus_forward(x: float, beta: float, threshold: float) -> float:
    """log(1 + exp(beta * x)) / beta, written so that exp never overflows; x itself where
    beta * x > threshold (torch's switch to the line it approaches)."""
    z = x * beta
    if z > threshold:
        return x
    return (max(z, 0.0) + math.log1p(math.exp(-abs(z)))) / beta


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


# ---- the primitives: forward, domain, rule and formula, what it keeps, one op at a time ----


@define("+", ("out.grad", "out.grad"), forward=operator.add, array="x + y", saves=("", ""),
        torch=("torch.add", "Tensor.add"))
def ADD(xs, out, g):
    """x + y;  d/dx = 1, d/dy = 1."""
    return g, g


@define("*", ("y.data * out.grad", "x.data * out.grad"), forward=operator.mul,
        array="x * y", saves=("y", "x"), torch=("torch.mul", "Tensor.mul"))
def MUL(xs, out, g):
    """x * y;  d/dx = y, d/dy = x."""
    x, y = xs
    return y * g, x * g


@define("**n", ("n * x.data**(n - 1) * out.grad",), forward=lambda x, n: power(f"**{n}", x, n),
        array="pow_n(x, n)", params=("n",), saves=("x",), torch=("torch.pow", "Tensor.pow"))
def POW_N(xs, out, g, n):
    """x ** n for a constant n;  d/dx = n * x**(n-1) (0 for n = 0). On arrays as torch
    computes it: ``x * x * x`` for ``x ** 3`` (``kernels.pow_n``)."""
    if not any_true(n != 0):
        return (0 * g,)
    return (n * xs[0] ** (n - 1) * g,)


@define("**", ("y.data * x.data**(y.data - 1) * out.grad", "out.data * log(x.data) * out.grad"),
        forward=lambda x, y: power("**", x, y), array="x ** y", saves=("x y", "x out"),
        exact=False, torch=("torch.pow", "Tensor.pow"))
def POW(xs, out, g):
    """x ** y;  d/dx = y * x**(y-1), d/dy = x**y * log(x).

    As in PyTorch, d/dx is 0 where y = 0 and d/dy is 0 where x = 0 (log x is needed only
    where x > 0); a negative x has no d/dy: a DomainError for a Value, nan in a Tensor's
    entry (torch's).
    """
    x, y = xs
    xd, yd = data(x), data(y)
    if type(xd) is float and xd < 0:
        raise DomainError(f"**: d/dy of x ** y needs x >= 0 (log x), got x = {xd}")
    # (y == 0) and (x == 0) are added where the exact formula would divide by zero
    dx = y * x ** (y - 1 + (yd == 0)) * g
    dy = out * log(x * (xd > 0) + (xd == 0) - (xd < 0)) * g  # log(-1): nan where x < 0
    return dx, dy


@define("ReLU", ("(out.data > 0) * out.grad",), forward=lambda x: x if x > 0 else 0.0,
        array="np.maximum(x, 0)", saves=("out",), torch=("torch.relu", "Tensor.relu", "F.relu"))
def RELU(xs, out, g):
    """max(0, x);  d/dx = 1 if x > 0 else 0."""
    return ((data(out) > 0) * g,)


@define("tanh", ("(1 - out.data**2) * out.grad",), forward=math.tanh, array="np.tanh(x)",
        saves=("out",), floats=True, torch=("torch.tanh", "Tensor.tanh", "F.tanh"))
def TANH(xs, out, g):
    """tanh(x);  d/dx = 1 - tanh(x)**2, reusing the output (micrograd's very arithmetic)."""
    return ((1 - out**2) * g,)


@define("sigmoid", ("out.data * (1 - out.data) * out.grad",), forward=sigmoid_forward,
        array="sigmoid(x)", saves=("out",), floats=True,
        torch=("torch.sigmoid", "Tensor.sigmoid", "F.sigmoid"))
def SIGMOID(xs, out, g):
    """1 / (1 + exp(-x)) (on arrays as torch computes it, ``kernels.sigmoid``: exp(-x) may
    overflow to inf, and then the result is 0);  d/dx = s * (1 - s), reusing the output s."""
    return (out * (1 - out) * g,)


@define("exp", ("out.data * out.grad",), forward=math.exp, array="np.exp(x)",
        domain="x <= {log_max:.4f} (overflow beyond)", saves=("out",), floats=True,
        torch=("torch.exp", "Tensor.exp"))
def EXP(xs, out, g):
    """e ** x;  d/dx = e ** x, reusing the output."""
    return (out * g,)


@define("log", ("out.grad / x.data",), forward=math.log, array="np.log(x)", domain="x > 0",
        saves=("x",), floats=True, torch=("torch.log", "Tensor.log"))
def LOG(xs, out, g):
    """ln(x);  d/dx = 1 / x."""
    return (g / xs[0],)


@define("sqrt", ("out.grad / (2 * out.data)",), forward=math.sqrt, array="np.sqrt(x)",
        domain="x >= 0", saves=("out",), floats=True, torch=("torch.sqrt", "Tensor.sqrt"))
def SQRT(xs, out, g):
    """sqrt(x);  d/dx = 1 / (2 * sqrt(x)), reusing the output (unbounded at 0)."""
    return (g / (2 * out),)


@define("abs", ("sign(x.data) * out.grad",), forward=abs, array="np.abs(x)", saves=("x",),
        torch=("torch.abs", "Tensor.abs"))
def ABS(xs, out, g):
    """|x|;  d/dx = sign(x), taken as 0 at x = 0 (as PyTorch does)."""
    return (sign(xs[0]) * g,)


@define("sin", ("cos(x.data) * out.grad",), forward=math.sin, array="np.sin(x)",
        saves=("x",), floats=True, torch=("torch.sin", "Tensor.sin"))
def SIN(xs, out, g):
    """sin(x);  d/dx = cos(x)."""
    return (cos(xs[0]) * g,)


@define("cos", ("-sin(x.data) * out.grad",), forward=math.cos, array="np.cos(x)",
        saves=("x",), floats=True, torch=("torch.cos", "Tensor.cos"))
def COS(xs, out, g):
    """cos(x);  d/dx = -sin(x)."""
    return (-sin(xs[0]) * g,)


@define("log1p", ("out.grad / (x.data + 1)",), forward=math.log1p, array="np.log1p(x)",
        domain="x > -1", saves=("x",), floats=True, torch=("torch.log1p", "Tensor.log1p"))
def LOG1P(xs, out, g):
    """ln(1 + x), exact for small x;  d/dx = 1 / (1 + x)."""
    return (g / (xs[0] + 1),)


@define("expm1", ("(out.data + 1) * out.grad",), forward=math.expm1, array="np.expm1(x)",
        domain="x <= {log_max:.4f} (overflow beyond)", saves=("out",), floats=True,
        torch=("torch.expm1", "Tensor.expm1"))
def EXPM1(xs, out, g):
    """e ** x - 1, exact for small x;  d/dx = e ** x, the output plus 1."""
    return ((out + 1) * g,)


@define("log10", ("out.grad / (x.data * 2.302585092994046)",), forward=math.log10,
        array="np.log10(x)", domain="x > 0", saves=("x",), floats=True,
        torch=("torch.log10", "Tensor.log10"))
def LOG10(xs, out, g):
    """log10(x);  d/dx = 1 / (x * ln 10), ln 10 = 2.302585092994046."""
    return (g / (xs[0] * 2.302585092994046),)


@define("log2", ("out.grad / (x.data * 0.6931471805599453)",), forward=math.log2,
        array="np.log2(x)", domain="x > 0", saves=("x",), floats=True,
        torch=("torch.log2", "Tensor.log2"))
def LOG2(xs, out, g):
    """log2(x);  d/dx = 1 / (x * ln 2), ln 2 = 0.6931471805599453."""
    return (g / (xs[0] * 0.6931471805599453),)


@define("erf", ("1.1283791670955126 * exp(-(x.data * x.data)) * out.grad",), forward=math.erf,
        array="erf(x)", saves=("x",), floats=True, torch=("torch.erf", "Tensor.erf"))
def ERF(xs, out, g):
    """The error function, 2 / sqrt(pi) times the integral of exp(-t**2) from 0 to x;
    d/dx = 2 / sqrt(pi) * exp(-x**2), 2 / sqrt(pi) = 1.1283791670955126."""
    x = xs[0]
    return (1.1283791670955126 * exp(-(x * x)) * g,)


@define("gelu", ("(0.5 * (1 + erf(x.data * 0.7071067811865476)) + x.data * 0.3989422804014327"
                 " * exp(-0.5 * (x.data * x.data))) * out.grad",),
        forward=gelu_forward, array="x * 0.5 * (1.0 + erf(x * 0.7071067811865476))",
        saves=("x",), floats=True, torch=("F.gelu",))
def GELU(xs, out, g):
    """x * Phi(x), Phi(x) = 0.5 * (1 + erf(x / sqrt(2))) the standard normal's distribution
    function (torch's exact GELU);  d/dx = Phi(x) + x * phi(x), its density
    phi(x) = exp(-x**2 / 2) / sqrt(2 pi); 1 / sqrt(2) = 0.7071067811865476 and
    1 / sqrt(2 pi) = 0.3989422804014327."""
    x = xs[0]
    return ((0.5 * (1 + erf(x * 0.7071067811865476))
             + x * 0.3989422804014327 * exp(-0.5 * (x * x))) * g,)


@define("leaky_relu", ("out.grad * (x.data > 0) + out.grad * (x.data <= 0) * negative_slope",),
        forward=lambda x, negative_slope: x if x > 0 else x * negative_slope,
        array="leaky_relu(x, negative_slope)", params=("negative_slope",),
        defaults={"negative_slope": 0.01}, saves=("x",), floats=True, torch=("F.leaky_relu",))
def LEAKY_RELU(xs, out, g, negative_slope):
    """x where x > 0, else negative_slope * x;  d/dx = 1 where x > 0, else negative_slope
    (g multiplied first: a float32 g stays float32, where (x <= 0) * negative_slope alone
    would be a float64 array)."""
    x = data(xs[0])
    return (g * (x > 0) + g * (x <= 0) * negative_slope,)


@define("softplus", ("((x.data * beta > threshold) + (x.data * beta <= threshold)"
                     " * sigmoid(x.data * beta)) * out.grad",),
        forward=softplus_forward,
        array="softplus(x, beta, threshold)",
        params=("beta", "threshold"), defaults={"beta": 1.0, "threshold": 20.0}, saves=("x",),
        floats=True, torch=("F.softplus",))
def SOFTPLUS(xs, out, g, beta, threshold):
    """log(1 + exp(beta * x)) / beta, a smooth relu (x itself where beta * x > threshold, as
    torch's);  d/dx = sigmoid(beta * x), 1 where beta * x > threshold."""
    x, z = xs[0], data(xs[0]) * beta
    return (((z > threshold) + (z <= threshold) * sigmoid(x * beta)) * g,)


PRIMITIVES: tuple[Primitive, ...] = (ADD, MUL, POW_N, POW, RELU, TANH, SIGMOID, EXP, LOG, SQRT,
                                     ABS, SIN, COS, LOG1P, EXPM1, LOG10, LOG2, ERF, GELU,
                                     LEAKY_RELU, SOFTPLUS)
"""Every primitive of this module: the ops both engines differentiate."""

FUNCTIONS: dict[str, Primitive] = {p.method: p for p in PRIMITIVES if len(p.formulas) == 1
                                   and set(p.param_names) <= set(p.defaults)}
"""The elementwise primitives: those of one input that are functions and methods
(``tanh(x)``, ``x.tanh()``; ``x.leaky_relu(0.2)`` for one with parameters, each of which
has a default), by name. Each engine has them as methods (``elementwise``), and so do the
expressions of ``chaingrad graph``."""


def method(prim: Primitive) -> Callable[[Any], Any]:
    """An elementwise primitive as a method of either engine, the node made by the
    engine's ``_apply``, documented by the rule: what each engine's ``elementwise`` gives an
    op with parameters (``x.leaky_relu(0.2)``, which takes them as the declaration names
    them); an op without calls its forward directly there.

    Example:
        >>> from chaingrad import Value
        >>> Value.leaky_relu.__doc__ == LEAKY_RELU.doc
        True
    """

    def apply(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._apply(prim.called(*args, **kwargs))

    apply.__signature__ = signature(prim)
    apply.__name__ = apply.__qualname__ = prim.method
    apply.__doc__ = prim.doc
    return apply


def signature(prim: Primitive, first: str = "self") -> inspect.Signature:
    """How a method (or, with ``first="input"``, a function) of an elementwise primitive
    with parameters is called: ``(self, negative_slope=0.01)``, for ``help``."""
    return inspect.Signature(
        [inspect.Parameter(first, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             default=prim.defaults[name]) for name in prim.param_names])


def functions_in(namespace: str) -> dict[str, Primitive]:
    """The elementwise primitives (``FUNCTIONS``) that torch has as functions of
    ``namespace`` (``"torch"``, or ``"F"`` for ``torch.nn.functional``), by name:
    ``chaingrad`` and ``chaingrad.nn.functional`` have them too.

    Example:
        >>> "tanh" in functions_in("F"), "exp" in functions_in("F"), "exp" in functions_in("torch")
        (True, False, True)
    """
    return {name: p for name, p in FUNCTIONS.items() if f"{namespace}.{name}" in p.torch}


# ---- the functions the rules use: a primitive applied to a float, an array, a Value or a
# Tensor (see ``Primitive.__call__``; ``chaingrad.generic`` has them all, for your own rules)

exp, log, log1p, sin, cos, sigmoid, erf = EXP, LOG, LOG1P, SIN, COS, SIGMOID, ERF


def data(x: Any) -> Any:
    """The number or array that ``x`` holds: a Value's ``.data``, a Tensor's array, else ``x``.

    Example:
        >>> from chaingrad import Value
        >>> data(Value(2.0)), data(3.0)
        (2.0, 3.0)
    """
    return x if type(x) is float or not hasattr(x, "_prev") else x._value


def sign(x: Any) -> Any:
    """-1, 0 or 1 by the sign of ``x`` (a number, an array, or a node's data), as floats.

    A constant: it is never differentiated (it is the derivative of ``abs``).

    Example:
        >>> sign(-2.5), sign(0.0)
        (-1.0, 0.0)
    """
    x = data(x)
    if type(x).__module__ == "numpy" and not isinstance(x, (int, float)):
        return array_namespace()["np"].sign(x)
    return float((x > 0) - (x < 0))
