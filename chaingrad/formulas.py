"""A rule's formula, read off the rule itself: each derivative is stated once, as code.

``explain``, the step-by-step page and ``compile`` print a rule as one expression per input,
in the words of a node (``x.data``, ``out.grad``: ``declaration.fill_in`` puts names or
numbers in). Those expressions are not written a second time beside the rule: ``derive``
runs the rule on ``Symbol``s, stand-ins that answer every operation with its text, and what
the rule returns is its formula. ``TANH``'s ``(1 - out**2) * g`` returns
``(1 - out.data**2) * out.grad``.

A rule's branches on its numbers cannot be read this way (a symbol is no number); a
symbol's truth is the general case's: ``POW_N``'s ``if not any_true(n != 0)`` (n = 0) takes
the branch of every other n. A symbol stands for a matrix (its ``ndim`` is 2), so that the
Tensor's rules that branch on the number of axes (matmul's vectors and batches) are read in
their 2-D case. A rule whose branches matter keeps its formula, declared, and
``exact=False`` (compiled code then calls the rule itself).

The Tensor's rules call helpers (``expand``, ``scatter``, ...) whose bodies are not the
derivative: a helper marked ``@shown()`` appears in the formula as a call by its name
(``expand(out.grad, axes, x.shape)``), or, with a template, as the numpy words it stands for
(``swap_last`` as ``y.data.mT``). The mark costs nothing at run time: ``derive`` reads a
copy of the rule whose helpers are stand-ins (``reading``).

Example:
    >>> x, g = Symbol("x.data"), Symbol("out.grad")
    >>> str((1 - x ** 2) * g)
    '(1 - x.data**2) * out.grad'
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

Helper = TypeVar("Helper", bound=Callable[..., Any])

BINDS_ATOM, BINDS_POWER, BINDS_UNARY, BINDS_PRODUCT = 9, 8, 7, 6
BINDS_SUM, BINDS_AND, BINDS_COMPARISON = 5, 4, 3
"""How tightly each kind of expression binds, as Python's grammar has it: an operand is put
in parentheses only where it binds less tightly than its operator."""


class Symbol:
    """A number, an array, a Value or a Tensor known only by its text: every operator and
    every call on it gives the text of the result (``x.data * out.grad``).

    Example:
        >>> a, b = Symbol("a"), Symbol("b")
        >>> str(-(a + b) * 2), str(a - (b - 1)), str((a ** b) ** 2)
        ('-(a + b) * 2', 'a - (b - 1)', '(a**b)**2')
    """

    __slots__ = ("text", "binds")

    def __init__(self, text: str, binds: int = BINDS_ATOM):
        self.text, self.binds = text, binds

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Symbol({self.text!r})"

    def __bool__(self) -> bool:
        return True  # a branch on a symbol takes the general case (see the module's doc)

    ndim = 2
    """A symbol stands for a matrix (see the module's doc)."""

    def call(self, name: str, *args: Any, **kwargs: Any) -> Symbol:
        """``name(self, *args)``: a primitive or a helper applied to this symbol."""
        return Symbol(f"{name}({_arguments((self, *args), kwargs)})")

    # what arrays and Tensors share, that the Tensor's rules use: attributes and methods
    def __getattr__(self, name: str) -> Any:
        if name in ARRAY_ATTRIBUTES:  # x.data.shape is x.shape, as formulas write it
            base = self.text[:-len(".data")] if name == "shape" and \
                self.text.endswith(".data") else _operand(self, BINDS_ATOM, False)
            return Symbol(f"{base}.{name}")
        if name in ARRAY_METHODS:
            receiver = _operand(self, BINDS_ATOM, False)
            return lambda *args, **kwargs: Symbol(
                f"{receiver}.{name}({_arguments(args, kwargs)})")
        raise AttributeError(name)

    def __getitem__(self, index: Any) -> Symbol:
        inside = ", ".join(map(_index, index)) if isinstance(index, tuple) else _index(index)
        return Symbol(f"{_operand(self, BINDS_ATOM, False)}[{inside}]")

    def __iter__(self) -> Iterator[Symbol]:
        """A symbol's entries are one: the k-th (``for piece in pieces`` gives
        ``pieces[k]``), as the formula of a primitive of any number of inputs speaks of
        input k."""
        yield Symbol(f"{_operand(self, BINDS_ATOM, False)}[k]")

    # binary operators: (operator's text, how tightly it binds)
    def _binary(self, other: Any, op: str, binds: int, reflected: bool = False) -> Symbol:
        left, right = (other, self) if reflected else (self, other)
        return Symbol(f"{_operand(left, binds, op == '**')}{_spaced(op)}"
                      f"{_operand(right, binds + (op != '**'), False)}", binds)

    def __add__(self, other: Any) -> Symbol: return self._binary(other, "+", BINDS_SUM)
    def __radd__(self, other: Any) -> Symbol: return self._binary(other, "+", BINDS_SUM, True)
    def __sub__(self, other: Any) -> Symbol: return self._binary(other, "-", BINDS_SUM)
    def __rsub__(self, other: Any) -> Symbol: return self._binary(other, "-", BINDS_SUM, True)
    def __mul__(self, other: Any) -> Symbol: return self._binary(other, "*", BINDS_PRODUCT)
    def __rmul__(self, other: Any) -> Symbol: return self._binary(other, "*", BINDS_PRODUCT, True)
    def __truediv__(self, other: Any) -> Symbol: return self._binary(other, "/", BINDS_PRODUCT)
    def __rtruediv__(self, other: Any) -> Symbol:
        return self._binary(other, "/", BINDS_PRODUCT, True)
    def __matmul__(self, other: Any) -> Symbol: return self._binary(other, "@", BINDS_PRODUCT)
    def __pow__(self, other: Any) -> Symbol: return self._binary(other, "**", BINDS_POWER)
    def __rpow__(self, other: Any) -> Symbol: return self._binary(other, "**", BINDS_POWER, True)
    def __and__(self, other: Any) -> Symbol: return self._binary(other, "&", BINDS_AND)
    def __gt__(self, other: Any) -> Symbol: return self._binary(other, ">", BINDS_COMPARISON)
    def __ge__(self, other: Any) -> Symbol: return self._binary(other, ">=", BINDS_COMPARISON)
    def __lt__(self, other: Any) -> Symbol: return self._binary(other, "<", BINDS_COMPARISON)
    def __le__(self, other: Any) -> Symbol: return self._binary(other, "<=", BINDS_COMPARISON)
    def __eq__(self, other: Any) -> Symbol: return self._binary(other, "==", BINDS_COMPARISON)  # type: ignore[override]
    def __ne__(self, other: Any) -> Symbol: return self._binary(other, "!=", BINDS_COMPARISON)  # type: ignore[override]

    def __neg__(self) -> Symbol:
        return Symbol(f"-{_operand(self, BINDS_UNARY, False)}", BINDS_UNARY)

    def __abs__(self) -> Symbol:
        return self.call("abs")

    def __invert__(self) -> Symbol:
        return Symbol(f"~{_operand(self, BINDS_UNARY, False)}", BINDS_UNARY)

    __hash__ = None  # type: ignore[assignment]  # (== gives a symbol, not a bool)


ARRAY_ATTRIBUTES = frozenset({"shape", "dtype", "T", "mT"})
ARRAY_METHODS = frozenset({"reshape", "sum", "cumsum", "transpose", "astype", "broadcast_to"})
"""What a symbol answers as an array would: ``g.reshape(x.shape)``."""


def _arguments(args: tuple, kwargs: dict[str, Any]) -> str:
    return ", ".join([*map(_text, args), *(f"{k}={_text(v)}" for k, v in kwargs.items())])


def _index(i: Any) -> str:
    """One entry of an index as Python writes it: ``2:``, ``...``, ``None``, a symbol."""
    if isinstance(i, slice):
        text = f"{_bound(i.start)}:{_bound(i.stop)}"
        return text if i.step is None else f"{text}:{_text(i.step)}"
    return "..." if i is Ellipsis else _text(i)


def _bound(x: Any) -> str:
    return "" if x is None else _text(x)


def _spaced(op: str) -> str:
    return op if op == "**" else f" {op} "


def _text(x: Any) -> str:
    return x.text if isinstance(x, Symbol) else repr(x)


def _operand(x: Any, binds: int, tie_needs_parentheses: bool) -> str:
    """``x``'s text as an operand of an operator that binds ``binds`` tightly: in
    parentheses where it binds less tightly (or as tightly, on the side where Python would
    group it the other way), or where it is a negative number before ``**``."""
    if not isinstance(x, Symbol):
        text = repr(x)
        return f"({text})" if text.startswith("-") and binds >= BINDS_UNARY else text
    if x.binds < binds or (x.binds == binds and tie_needs_parentheses):
        return f"({x.text})"
    return x.text


def derive(vjp: Callable[..., tuple], inputs: int, params: tuple[str, ...]) -> tuple[str, ...]:
    """The formulas of the rule ``vjp`` of a primitive of ``inputs`` inputs: the rule run
    on symbols (``x.data``, ``y.data``, ``out.data``, ``out.grad``, and each parameter by
    its name), one expression per input.

    Example:
        >>> from chaingrad.rules import MUL
        >>> derive(MUL.vjp, 2, ())
        ('y.data * out.grad', 'x.data * out.grad')
    """
    xs = tuple(Symbol(f"{'xyz'[k]}.data") for k in range(max(inputs, 2)))  # (one formula
    # for any number of inputs, in k, may read y: a recurrence's weight)
    grads = reading(vjp)(xs, Symbol("out.data"), Symbol("out.grad"), *map(Symbol, params))
    return tuple(_text(g) for g in grads)


def shown(template: str = "") -> Callable[[Helper], Helper]:
    """Mark a helper of the rules to appear in formulas as a call by its name, or as
    ``template`` (``"{0}.mT"``: its arguments put in), rather than as what its body does.
    The helper itself is returned unchanged.

    Example:
        >>> @shown("{0}.mT")
        ... def swap(x): return x.swapaxes(-1, -2)
        >>> derive(lambda xs, out, g: (g @ swap(xs[0]),), 1, ())
        ('out.grad @ x.data.mT',)
    """

    def mark(helper: Helper) -> Helper:
        helper.shown_as = template or helper.__name__ + "({})"  # type: ignore[attr-defined]
        return helper

    return mark


def reading(vjp: Callable[..., tuple]) -> Callable[..., tuple]:
    """``vjp`` with each ``@shown`` helper that it calls by name standing for itself: a
    copy of the function, run on the same code with those names bound to stand-ins."""
    scope = vjp.__globals__
    stand_ins = {name: _stand_in(scope[name].shown_as) for name in _names(vjp.__code__)
                 if hasattr(scope.get(name), "shown_as")}
    if not stand_ins:
        return vjp
    return types.FunctionType(vjp.__code__, {**scope, **stand_ins}, vjp.__name__,
                              vjp.__defaults__, vjp.__closure__)


def _names(code: types.CodeType) -> set[str]:
    """The global names a function's code reads, its nested code (a generator) included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _stand_in(template: str) -> Callable[..., Symbol]:
    def stand_in(*args: Any) -> Symbol:
        if "{}" in template:  # a call by the helper's name
            return Symbol(template.format(_arguments(args, {})))
        return Symbol(template.format(*(_operand(a, BINDS_ATOM, False) for a in args)))

    return stand_in
