"""Build a graph from an expression typed by a user, safely: parsed, never ``eval``-ed.

``parse_expression("(x1*w1 + x2*w2 + b).tanh()", {"x1": 2.0, ...})`` returns the output
Value of the graph. Python's ``ast`` parses the text and only this small language is
accepted:

- the names given in ``variables`` (each becomes a leaf Value labelled with its name, read
  as Python reads names: ``ﬁ`` is ``fi``);
- numbers (each becomes a leaf labelled with the number as written, or with its value as a
  float when that is shorter than a long literal; an exponent that is a plain number stays
  a number, so ``x**2`` is the op ``**2`` as in micrograd; an integer too large to be
  exact as a float, as Python computes ``x ** n``, is written as that float);
- ``+ - * / **`` and unary ``-`` / ``+``;
- Value's elementwise methods, as ``x.tanh()`` or ``tanh(x)`` (``METHODS``: relu, tanh,
  sigmoid, exp, log, sqrt, abs, sin, cos: every primitive of one input in
  ``chaingrad.rules``).

Anything else (attribute access, other calls, subscripts, strings, lambdas, ...) is an
``ExpressionError`` naming what was found.
"""

from __future__ import annotations

import ast
import contextlib
import math
import sys
import unicodedata
from collections.abc import Iterator, Mapping

from ..engine import Value
from ..errors import DomainError, ExpressionError
from ..rules import FUNCTIONS

METHODS = tuple(FUNCTIONS)
"""The functions an expression may call: the elementwise primitives (``rules.FUNCTIONS``)."""
MAX_LENGTH = 10_000
MAX_LABEL = 24  # a longer number literal is labelled with its value as a float
EXACT_INT = 2**53  # a larger int is not exact as a float

_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def parse_expression(text: str, variables: Mapping[str, float]) -> Value:
    """The output Value of the graph that ``text`` describes.

    Args:
        text: The expression, e.g. ``"(x1*w1 + x2*w2 + b).tanh()"``.
        variables: The value of each name used in it.

    Returns:
        The Value the expression computes; its leaves are labelled with their names.

    Raises:
        ExpressionError: For a syntax error, a construct outside the language, a name not
            in ``variables`` (or two that Python reads as one), or a value outside an op's
            domain (e.g. ``log`` of 0).

    Example:
        >>> out = parse_expression("(x * w).tanh()", {"x": 2.0, "w": -3.0})
        >>> out._op, [v.label for v in out._prev[0]._prev]
        ('tanh', ['x', 'w'])
    """
    if not isinstance(text, str):
        raise TypeError(f"expression: must be a str, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression: {len(text)} characters, at most {MAX_LENGTH}")
    if not text.strip():
        raise ExpressionError('expression: it is empty; write one, e.g. "(x*w + b).tanh()"')
    try:
        with _recursion_limit(MAX_LENGTH):
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        if "integer string conversion" in exc.msg:  # Python's limit on an int's digits
            raise ExpressionError(f"expression: a number of more than "
                                  f"{sys.get_int_max_str_digits()} digits is too large for a "
                                  "float, needs |x| < 1.8e308") from None
        detail = "" if exc.msg == "invalid syntax" else f": {exc.msg}"
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise ExpressionError(f"expression: invalid syntax in {shown!r}{detail}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError("expression: nested too deeply") from None
    if any(isinstance(node, ast.BitXor) for node in ast.walk(tree)):
        meant = shorten(text.strip().replace("^", "**"), 60)
        raise ExpressionError(f"expression: '^' is bitwise xor in Python, not a power; did "
                              f"you mean {meant}?")
    leaves: dict[str, Value] = {}
    for name, v in variables.items():
        read = python_name(name)
        if read in leaves:
            raise ExpressionError(f"expression: two variables are the name {read!r} to "
                                  f"Python, {leaves[read].label!r} and {name!r}")
        leaves[read] = Value(float(v), label=read)
    try:
        return _evaluate(tree.body, leaves)
    except DomainError as exc:
        raise ExpressionError(f"expression: {exc}") from None
    except (ZeroDivisionError, OverflowError) as exc:
        raise ExpressionError(f"expression: {exc}") from None


def python_name(name: str) -> str:
    """``name`` as Python's parser reads it, NFKC-normalised (``"ﬁ"`` is ``"fi"``).

    Example:
        >>> python_name("ﬁx"), python_name("x1")
        ('fix', 'x1')
    """
    return unicodedata.normalize("NFKC", name)


def shorten(text: str, limit: int = 40) -> str:
    """``text`` for a message: whole, or its start and its length when it is longer.

    Example:
        >>> shorten("x" * 100, limit=10)
        'xxxxxxx... (100 characters)'
    """
    return text if len(text) <= limit else f"{text[:limit - 3]}... ({len(text)} characters)"


@contextlib.contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    """Raise Python's recursion limit to at least ``limit`` inside.

    ``ast.parse`` turns its tree into Python objects recursively, and CPython 3.10 and
    3.11 count that against the recursion limit: a flat sum ``x + x + ... + x`` of n terms
    is a tree n deep, so 3,000 terms would be "too deep" at the default limit of 1,000.
    """
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def _evaluate(root: ast.AST, leaves: dict[str, Value]) -> Value:
    """Post-order walk with an explicit stack (a long ``1+1+...`` would be deep recursion)."""
    done: dict[int, Value | float] = {}
    stack: list[tuple[ast.AST, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            done[id(node)] = _apply(node, [done[id(c)] for c in _operands(node)], leaves)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_operands(node)))
    return done[id(root)]


def _operands(node: ast.AST) -> list[ast.AST]:
    """The sub-expressions to compute before ``node``; rejects anything outside the language."""
    if isinstance(node, ast.Constant):
        if type(node.value) in (int, float):
            return []
        raise ExpressionError(f"expression: only numbers are allowed, got {node.value!r}")
    if isinstance(node, ast.Name):
        return []
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        if isinstance(node.op, ast.Pow) and _plain_number(node.right) is not None:
            return [node.left]
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return [] if _plain_number(node) is not None else [node.operand]
    if isinstance(node, ast.Call):
        return [_call_argument(node)]
    raise ExpressionError(
        f"expression: {_source(node)!r} is not allowed (only names, numbers, + - * / **, "
        f"and the methods {', '.join(METHODS)})"
    )


def _call_argument(node: ast.Call) -> ast.AST:
    """The Value a call applies its method to: ``x`` in ``x.tanh()`` or ``tanh(x)``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        name, args, target = func.attr, 0, func.value
    elif isinstance(func, ast.Name):
        name, args, target = func.id, 1, node.args[0] if len(node.args) == 1 else None
    else:
        raise ExpressionError(f"expression: {_source(node)!r} is not a call of a method")
    if name not in METHODS:
        raise ExpressionError(
            f"expression: unknown function {name!r}; the methods are {', '.join(METHODS)}"
        )
    if node.keywords or len(node.args) != args or target is None:
        form = f"x.{name}()" if isinstance(func, ast.Attribute) else f"{name}(x)"
        raise ExpressionError(f"expression: {name} takes no other arguments: write {form}, "
                              f"got {_source(node)!r}")
    return target


def _apply(node: ast.AST, args: list, leaves: dict[str, Value]) -> Value | float:
    if isinstance(node, ast.Name):
        if node.id not in leaves:
            known = ", ".join(sorted(leaves)) or "none"
            name = shorten(node.id)
            raise ExpressionError(
                f"expression: {name!r} is not set (give it with --set {name}=VALUE; "
                f"set: {known})"
            )
        return leaves[node.id]
    number = _plain_number(node)
    if number is not None:
        written = _source(node, limit=None)
        return Value(number, label=written if len(written) <= MAX_LABEL else repr(float(number)))
    if isinstance(node, ast.BinOp):
        left = args[0]
        right = args[1] if len(args) == 2 else _plain_number(node.right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        return -args[0] if isinstance(node.op, ast.USub) else args[0]
    name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
    return getattr(args[0], name)()


def _plain_number(node: ast.AST) -> int | float | None:
    """The number ``node`` is written as (``2``, ``-0.5``), or None if it is not one."""
    negative = False
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        negative ^= isinstance(node.op, ast.USub)
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        try:
            finite = math.isfinite(node.value)  # an int beyond 1.8e308 raises OverflowError
        except OverflowError:
            finite = False
        if not finite:  # a float literal beyond the range is already inf
            raise ExpressionError(f"expression: a number {_too_large(node.value)} is too "
                                  "large for a float, needs |x| < 1.8e308")
        value = -node.value if negative else node.value  # an int stays an int: '**2'
        return float(value) if abs(value) > EXACT_INT else value
    return None


def _too_large(value: int | float) -> str:
    """How the message names a literal beyond a float's range: ``99999999999999999...
    (400 digits)``, ``of 6021 digits`` (too long for ``str``, e.g. a long hex literal),
    or ``literal (it rounds to inf)`` for a float."""
    if type(value) is not int:
        return "literal (it rounds to inf)"
    # counted without str(), which Python refuses for an int of more than
    # sys.get_int_max_str_digits() digits: from the logarithm, then made exact
    size = abs(value)
    digits = int(math.log10(size)) + 1
    digits += (size >= 10**digits) - (size < 10 ** (digits - 1))
    try:
        return f"{str(value)[:17]}... ({digits} digits)"
    except ValueError:  # beyond that limit
        return f"of {digits} digits"


def _source(node: ast.AST, limit: int | None = 60) -> str:
    """The text of ``node``, cut to ``limit`` characters (None: the whole of it)."""
    try:
        text = ast.unparse(node)
    except (RecursionError, ValueError):
        return type(node).__name__
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."
