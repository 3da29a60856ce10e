"""How a primitive is declared: the machinery behind every ``@define`` of ``rules.py`` and
``tensor_engine/rules.py``, kept apart so that a reader opening the rules meets rules.

- ``Primitive``: a named op with its forwards (on floats, ``forward``; on numpy arrays,
  ``array``), its domain, its derivative rule ``vjp`` and that rule as a formula, what the
  rule keeps of the forward pass, and its names in PyTorch; ``Bound``: one with the values
  of its parameters, the rule of one node; ``define``: the decorator that makes a rule a
  primitive.
- ``on_floats``: a primitive's forward on floats, with the ``DomainError`` that names it.
- ``numpy_function`` and ``numpy``: numpy's functions named where numpy may not be imported
  (the scalar engine needs only the standard library).
- ``fill_in`` and ``identifier``: a formula with names or numbers put in (``explain``, the
  step-by-step page and ``compile`` print them), an op's name as a Python identifier.
- ``method`` and ``signature``: an elementwise primitive as a method of either engine.

Example:
    >>> from chaingrad.rules import TANH
    >>> TANH.formulas, TANH.saves, TANH.torch
    (('(1 - out.data**2) * out.grad',), ('out',), ('torch.tanh', 'Tensor.tanh', 'F.tanh'))
"""

from __future__ import annotations

import functools
import importlib
import inspect
import io
import math
import tokenize
from collections.abc import Callable
from numbers import Real
from types import ModuleType
from typing import Any

from .errors import DomainError
from .formulas import Symbol, derive

LOG_MAX = math.log(1.7976931348623157e308)  # exp(x) overflows a float beyond this

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
            one, in ``k``, for a primitive with any number of inputs), in the words of
            ``fill_in``. None (the rules of ``chaingrad/rules.py``): read off ``vjp``
            itself (``formulas.derive``), so that each derivative is stated once.
        forward: The op on floats, or None for a Tensor-only primitive. For a user's
            primitive (``chaingrad.primitive``), the op on whatever its inputs hold.
        array: The op on numpy arrays, a function called with the inputs then the
            parameters: a numpy function (``numpy_function("tanh")`` where numpy may not be
            imported yet), or a named function beside the rule; None: ``forward`` serves
            arrays too.
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

    __slots__ = ("name", "vjp", "_formulas", "forward", "array", "param_names", "domain",
                 "saves", "torch", "floats", "exact", "keeps_nan", "defaults", "primitive",
                 "__dict__")
    params: tuple = ()  # the parameter values of this rule: none (see ``bind``)

    def __init__(self, name: str, vjp: Callable[..., tuple],
                 formulas: tuple[str, ...] | None = None,
                 forward: Callable[..., Any] | None = None,
                 array: Callable[..., Any] | None = None,
                 params: tuple[str, ...] = (), domain: str = "",
                 saves: tuple[str, ...] | None = None, torch: tuple[str, ...] = (),
                 floats: bool = False, exact: bool = True, keeps_nan: bool = True,
                 defaults: dict[str, float] | None = None):
        self.name, self.vjp, self._formulas = name, vjp, formulas
        self.forward, self.array, self.param_names = forward, array, params
        self.domain, self.saves, self.torch = domain, saves, torch
        self.floats, self.exact, self.keeps_nan = floats, exact, keeps_nan
        self.defaults = defaults or {}
        self.primitive = self  # as a rule, it is its own primitive (a Bound rule has one)

    @property
    def formulas(self) -> tuple[str, ...]:
        """The rule as one expression per input (``explain``, the page and ``compile`` print
        them): as declared, or read off the rule (``formulas.derive``).

        Example:
            >>> from chaingrad.rules import TANH
            >>> TANH.formulas
            ('(1 - out.data**2) * out.grad',)
        """
        if self._formulas is None:
            self._formulas = derive(self.vjp, len(self.saves or ("",)), self.param_names)
        return self._formulas

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
        """The forward on numpy arrays, called with the inputs then the parameters:
        ``array`` (a numpy function named with ``numpy_function`` is looked up now), or
        ``forward`` where there is no ``array``.

        Example:
            >>> import numpy as np
            >>> from chaingrad.rules import TANH
            >>> TANH.on_arrays is np.tanh
            True
        """
        if self.array is None:
            return self.forward
        if type(self.array) is NumpyFunction:
            return getattr(numpy(), self.array.name)
        return self.array

    def needs(self, log_max: float = LOG_MAX) -> str:
        """The domain as words, for an error message (``{log_max}`` filled in)."""
        return self.domain.format(log_max=log_max)

    def bind(self, *params: Any, name: str = "") -> Bound:
        """This primitive's rule for one node, with its parameters' values (and the name
        the node shows, if not the primitive's: ``x ** 2`` is ``**2``).

        Example:
            >>> from chaingrad.rules import POW_N
            >>> POW_N.bind(2, name="**2").params
            (2,)
        """
        return Bound(self, params, name)

    def called(self, *args: Any, **kwargs: Any) -> Primitive | Bound:
        """The rule of a call of this op that gave its parameters as ``args`` and
        ``kwargs``, those left out taking their ``defaults``: the primitive itself, for an
        op without parameters. Each must be a real number.

        Example:
            >>> from chaingrad.rules import LEAKY_RELU
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
        if type(x) is Symbol:  # a rule read for its formula (chaingrad/formulas.py)
            return x.call(self.method, *args, *kwargs.values())
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
    """A primitive with the values of its parameters: the rule of one node. Its ``vjp`` has
    them put in, so that every rule, bound or not, is called ``rule.vjp(xs, out, g)``
    (``params`` keeps them, for what shows or compiles the rule)."""

    __slots__ = ("primitive", "params", "name", "_vjp")

    def __init__(self, primitive: Primitive, params: tuple, name: str = ""):
        if len(params) != len(primitive.param_names):
            raise TypeError(f"{primitive.name}: needs parameters {primitive.param_names}, "
                            f"got {len(params)} value(s)")
        self.primitive, self.params, self._vjp = primitive, params, None
        self.name = name or primitive.name

    @property
    def vjp(self) -> Callable[..., tuple]:
        """The primitive's rule with this node's parameters put in (made when first asked
        for: most bound nodes of a forward pass never run their rule)."""
        if self._vjp is None:
            self._vjp = with_params(self.primitive.vjp, self.params) if self.params else \
                self.primitive.vjp
        return self._vjp

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in zip(self.primitive.param_names, self.params))
        return f"<primitive {self.name} ({values})>"


def with_params(vjp: Callable[..., tuple], params: tuple) -> Callable[[Any, Any, Any], tuple]:
    """A rule ``vjp(xs, out, g, *params)`` with its parameters' values put in: a function of
    ``(xs, out, g)``, as a rule without parameters is (the backward loop calls each so).

    Example:
        >>> from chaingrad.rules import POW_N
        >>> with_params(POW_N.vjp, (3,))((2.0,), 8.0, 1.0)
        (12.0,)
    """

    def vjp_with_params(xs: Any, out: Any, g: Any) -> tuple:
        return vjp(xs, out, g, *params)

    vjp_with_params.__doc__ = vjp.__doc__
    return vjp_with_params


def define(name: str, formulas: tuple[str, ...] | None = None, **declared: Any,
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
        >>> from chaingrad.rules import LOG
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


# ---- numpy, named before it is imported ----


@functools.cache
def numpy() -> ModuleType:
    """numpy, imported on first use: a Value graph never needs it."""
    return importlib.import_module("numpy")


class NumpyFunction:
    """numpy's function ``name`` (``np.tanh``) as a primitive's ``array``: named in a
    declaration, looked up when a Tensor first runs the op (``Primitive.on_arrays``), so
    that ``import chaingrad`` does not import numpy.

    Example:
        >>> numpy_function("tanh")
        np.tanh
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(numpy(), self.name)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"np.{self.name}"


def numpy_function(name: str) -> NumpyFunction:
    """numpy's function ``name``, for a declaration: ``array=numpy_function("tanh")``."""
    return NumpyFunction(name)


# ---- an elementwise primitive as a method ----


def method(prim: Primitive) -> Callable[[Any], Any]:
    """An elementwise primitive as a method of either engine, the node made by the
    engine's ``_apply``, documented by the rule: what each engine's ``elementwise`` gives an
    op with parameters (``x.leaky_relu(0.2)``, which takes them as the declaration names
    them); an op without calls its forward directly there.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.rules import LEAKY_RELU
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


