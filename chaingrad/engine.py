"""Value: a scalar that remembers how it was computed, so that it can be differentiated.

Every op builds an output node whose ``_prev`` holds its inputs and whose ``_vjp`` is the
op's derivative rule, written right under the op: given the inputs ``xs``, the output
``out`` and the gradient ``g`` flowing into ``out``, it returns ``g * d(out)/d(x)`` for each
input ``x``. ``backward()`` visits the nodes in reverse topological order and adds (``+=``)
what each rule returns into its inputs' ``.grad``: the chain rule, one node at a time.

The rules are written once and work on two kinds of numbers: on floats for an ordinary
``backward()``, and on the Values themselves for ``backward(create_graph=True)``, where the
gradient is itself a graph that can be differentiated again.

Why a rule and not a closure made by each op, as in micrograd: a closure that reaches its
own output node is a reference cycle, and a graph of cycles is freed only by Python's cyclic
garbage collector, which then spends most of a training step walking the graph. The rules
are plain functions, the graph is freed the moment it is dropped, and ``node._backward``
still hands you the closure to call by hand.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real

from . import autodiff
from .errors import DomainError

Number = int | float
Rule = Callable[..., tuple]

_new = object.__new__
_MAX_EXP = math.log(1.7976931348623157e308)  # exp(x) overflows a float beyond this


class Value(autodiff.Node):
    """A scalar node of a computation graph.

    Args:
        data: The number it holds (any real number: int, float, numpy scalar, ...).
        _children: The nodes it was computed from, in argument order.
        _op: The name of the op that made it ('' for a leaf).
        label: A name to show in drawings and explanations.

    Example:
        >>> x = Value(2.0, label="x")
        >>> y = x * x + 3 * x
        >>> y.backward()
        >>> y.data, x.grad
        (10.0, 7.0)
    """

    __slots__ = ("data", "grad", "_op", "label", "_vjp")  # _a, _b (the inputs): autodiff.Node
    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected operators

    def __init__(self, data: Number, _children: tuple = (), _op: str = "", label: str = ""):
        if type(data) is not float:
            data = _to_float(data, "Value")
        if data - data != 0.0:
            raise ValueError(f"Value: got {data}, needs a finite number")
        self.data = data
        self.grad = 0.0
        _children = tuple(_children)
        for child in _children:
            if not isinstance(child, Value):
                raise TypeError(f"Value: _children must be Values, got "
                                f"{type(child).__name__} {child!r}")
        self._a, self._b = autodiff.split(_children)
        self._op = _op
        self.label = label
        self._vjp = None
        self._mark = None

    # ---- primitives: the forward value, then its derivative rule ----

    def __add__(self, other: Value | Number) -> Value:
        """x + y;  d/dx = 1, d/dy = 1."""
        y = other if type(other) is Value else _lift(other)
        if y is None:
            return _not_a_number("+", other)
        return _node(self.data + y.data, self, y, "+", Value._add_vjp)

    @staticmethod
    def _add_vjp(xs, out, g):
        return g, g

    def __mul__(self, other: Value | Number) -> Value:
        """x * y;  d/dx = y, d/dy = x."""
        y = other if type(other) is Value else _lift(other)
        if y is None:
            return _not_a_number("*", other)
        return _node(self.data * y.data, self, y, "*", Value._mul_vjp)

    @staticmethod
    def _mul_vjp(xs, out, g):
        x, y = xs
        return y * g, x * g

    def __pow__(self, other: Value | Number) -> Value:
        """x ** n;  d/dx = n * x**(n-1), and for a Value exponent d/dn = x**n * log(x)."""
        if type(other) is Value:
            return _node(_pow("**", self.data, other.data), self, other, "**", Value._pow_vjp)
        n = _number(other)
        if n is None:
            return _not_a_number("**", other)
        if n - n != 0:
            raise ValueError(f"**: got exponent {n}, needs a finite number")

        def _pow_number_vjp(xs, out, g):  # d/dx = n * x**(n-1); 0 for n = 0
            return (n * xs[0] ** (n - 1) * g,) if n != 0 else (0 * g,)

        return _node(_pow(f"**{other}", self.data, n), self, None, f"**{other}", _pow_number_vjp)

    @staticmethod
    def _pow_vjp(xs, out, g):
        """The rule of x ** y for a Value y, as PyTorch has it: d/dx is 0 where y = 0, and
        d/dy is 0 where x = 0 (log x is only needed where x > 0)."""
        x, y = xs
        xd = _data(x)
        if xd > 0:
            dy = out * _log(x) * g
        elif xd == 0:
            dy = 0 * g
        else:
            raise DomainError(f"**: d/dy of x ** y needs x > 0 (log x), got x = {xd}")
        dx = y * x ** (y - 1) * g if _data(y) != 0 else 0 * g
        return dx, dy

    def relu(self) -> Value:
        """max(0, x);  d/dx = 1 if x > 0 else 0."""
        return _node(self.data if self.data > 0 else 0.0, self, None, "ReLU", Value._relu_vjp)

    @staticmethod
    def _relu_vjp(xs, out, g):
        return ((_data(out) > 0) * g,)

    def tanh(self) -> Value:
        """tanh(x);  d/dx = 1 - tanh(x)**2, reusing the output."""
        return _node(math.tanh(self.data), self, None, "tanh", Value._tanh_vjp)

    @staticmethod
    def _tanh_vjp(xs, out, g):
        return ((1 - out * out) * g,)

    def sigmoid(self) -> Value:
        """1 / (1 + exp(-x));  d/dx = s * (1 - s), reusing the output s."""
        x = self.data
        if x >= 0:
            s = 1.0 / (1.0 + math.exp(-x))
        else:  # exp(-x) would overflow for very negative x; this form never does
            e = math.exp(x)
            s = e / (1.0 + e)
        return _node(s, self, None, "sigmoid", Value._sigmoid_vjp)

    @staticmethod
    def _sigmoid_vjp(xs, out, g):
        return (out * (1 - out) * g,)

    def exp(self) -> Value:
        """e ** x;  d/dx = e ** x, reusing the output."""
        if self.data > _MAX_EXP:
            raise DomainError(f"exp: got {self.data}, needs x <= {_MAX_EXP:.4f} (overflow)")
        return _node(math.exp(self.data), self, None, "exp", Value._exp_vjp)

    @staticmethod
    def _exp_vjp(xs, out, g):
        return (out * g,)

    def log(self) -> Value:
        """ln(x);  d/dx = 1 / x."""
        if self.data <= 0:
            raise DomainError(f"log: got {self.data}, needs x > 0")
        return _node(math.log(self.data), self, None, "log", Value._log_vjp)

    @staticmethod
    def _log_vjp(xs, out, g):
        return (g / xs[0],)

    def sqrt(self) -> Value:
        """sqrt(x);  d/dx = 1 / (2 * sqrt(x)), reusing the output (unbounded at 0)."""
        if self.data < 0:
            raise DomainError(f"sqrt: got {self.data}, needs x >= 0")
        return _node(math.sqrt(self.data), self, None, "sqrt", Value._sqrt_vjp)

    @staticmethod
    def _sqrt_vjp(xs, out, g):
        return (g / (2 * out),)

    def abs(self) -> Value:
        """|x|;  d/dx = sign(x), taken as 0 at x = 0 (as PyTorch does)."""
        return _node(abs(self.data), self, None, "abs", Value._abs_vjp)

    @staticmethod
    def _abs_vjp(xs, out, g):
        x = _data(xs[0])
        return ((1.0 if x > 0 else -1.0 if x < 0 else 0.0) * g,)

    def sin(self) -> Value:
        """sin(x);  d/dx = cos(x)."""
        return _node(math.sin(self.data), self, None, "sin", Value._sin_vjp)

    @staticmethod
    def _sin_vjp(xs, out, g):
        return (_cos(xs[0]) * g,)

    def cos(self) -> Value:
        """cos(x);  d/dx = -sin(x)."""
        return _node(math.cos(self.data), self, None, "cos", Value._cos_vjp)

    @staticmethod
    def _cos_vjp(xs, out, g):
        return (-_sin(xs[0]) * g,)

    # ---- composites: built from the primitives, so they need no rule of their own ----

    def __neg__(self) -> Value:
        """-x, as x * -1."""
        return self * -1

    def __sub__(self, other: Value | Number) -> Value:
        """x - y, as x + (-y)."""
        y = other if type(other) is Value else _lift(other)
        return _not_a_number("-", other) if y is None else self + (-y)

    def __truediv__(self, other: Value | Number) -> Value:
        """x / y, as x * y**-1."""
        y = other if type(other) is Value else _lift(other)
        if y is None:
            return _not_a_number("/", other)
        if y.data == 0:
            raise DomainError(f"/: division by zero ({self.data} / 0.0)")
        return self * y**-1

    # Python calls these for `2 + x` (int.__add__ gave up): the number becomes a leaf.

    def __radd__(self, other: Number) -> Value:
        """other + x, as x + other (the Value comes first in ``_prev``)."""
        return self.__add__(other)

    def __rsub__(self, other: Number) -> Value:
        """other - x, with other made a Value."""
        x = _lift(other)
        return _not_a_number("-", other) if x is None else x - self

    def __rmul__(self, other: Number) -> Value:
        """other * x, as x * other (the Value comes first in ``_prev``)."""
        return self.__mul__(other)

    def __rtruediv__(self, other: Number) -> Value:
        """other / x, with other made a Value."""
        x = _lift(other)
        return _not_a_number("/", other) if x is None else x / self

    def __rpow__(self, other: Number) -> Value:
        """other ** x, with other made a Value: a ``**`` node with a Value exponent."""
        x = _lift(other)
        return _not_a_number("**", other) if x is None else x**self

    def __abs__(self) -> Value:
        """abs(x), the same as ``x.abs()``."""
        return self.abs()

    # ---- backward ----

    def backward(self, create_graph: bool = False) -> None:
        """Add d(self)/d(node) into ``node.grad`` for every node that ``self`` depends on.

        Args:
            create_graph: Make every ``.grad`` a differentiable Value (for higher-order
                derivatives) instead of a float.

        Calling it twice adds the gradients twice, as PyTorch does with
        ``retain_graph=True``; call ``zero_grad()`` (or set ``.grad = 0``) in between.

        Example:
            >>> a = Value(3.0)
            >>> b = a + a
            >>> b.backward()
            >>> a.grad
            2.0
        """
        autodiff.run_backward(self, Value(1.0) if create_graph else 1.0, create_graph)

    @property
    def _backward(self) -> Callable[[], None]:
        """This node's backward step as a closure, to call by hand as in micrograd's lecture.

        It reads ``self.grad`` (the gradient arriving at this node) and adds
        ``self.grad * local derivative`` into each input's ``.grad``.
        """
        rule, out = self._vjp, self
        if rule is None:
            return autodiff.do_nothing
        if type(rule) is autodiff.ClosureRule:
            return rule.backward

        def _backward() -> None:
            grads = rule(tuple(x.data for x in out._prev), out.data, out.grad)
            for x, g in zip(out._prev, grads):
                x.grad += g

        return _backward

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        # micrograd-style custom ops assign their own closure; backward() will call it.
        self._vjp = autodiff.ClosureRule(fn)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


# The backward driver runs the two commonest rules inline: see graph._propagate.
autodiff.ADD_RULE, autodiff.MUL_RULE = Value._add_vjp, Value._mul_vjp


# ---- helpers ----


def _node(data: float, a: object, b: object, op: str, vjp: Rule | None) -> Value:
    """Make an op's output node from inputs a and b (no input checks: the op did them)."""
    if data - data != 0.0:
        inputs = ", ".join(str(c.data) for c in autodiff.unsplit(a, b))
        what = "is not a number (nan)" if data != data else "overflows a float"
        raise DomainError(f"{op}: the result of {op}({inputs}) {what}")
    out = _new(Value)
    out.data = data
    out.grad = 0.0
    out.label = ""
    out._op = op
    out._mark = None
    if autodiff._grad_enabled or autodiff.is_grad_enabled():  # the global: the fast path
        out._a = a
        out._b = b
        out._vjp = vjp
    else:
        out._a = out._b = out._vjp = None
    return out


def _pow(op: str, x: float, n: float) -> float:
    """x ** n on floats, with a DomainError where Python would fail or go complex."""
    if x == 0 and n < 0:
        raise DomainError(f"{op}: got base 0.0 and exponent {n}, needs a base != 0")
    if x < 0 and n != int(n):
        raise DomainError(f"{op}: got base {x} and exponent {n}, needs an integer exponent")
    try:
        return float(x**n)
    except OverflowError:
        raise DomainError(f"{op}: {x} ** {n} overflows a float") from None


def _to_float(data: object, where: str) -> float:
    if isinstance(data, Real):
        try:
            return float(data)
        except OverflowError:  # an int beyond 1.8e308
            raise ValueError(f"{where}: got an int too large for a float (> 1.8e308)") from None
    raise TypeError(f"{where}: data must be a real number, got {type(data).__name__} {data!r}")


def _number(x: object) -> float | None:
    """x as a float if it is a plain real number (int, float, numpy scalar, ...), else None."""
    if type(x) is float or type(x) is int:
        return x
    return float(x) if isinstance(x, Real) and not isinstance(x, Value) else None


def _lift(x: object) -> Value | None:
    """x as a Value: a Value stays itself, a number becomes a leaf, anything else is None."""
    if isinstance(x, Value):
        return x
    n = _number(x)
    return None if n is None else Value(n)


def _not_a_number(op: str, x: object) -> object:
    """NotImplemented, so that Python tries x's own operator; but a TypeError for a sequence,
    which Python would otherwise try to repeat (and fail with a message that hides its type).
    """
    if isinstance(x, (str, bytes, list, tuple)):
        raise TypeError(f"{op}: needs a number or a Value, got {type(x).__name__} {x!r}")
    return NotImplemented


def _data(x: Value | float) -> float:
    return x.data if type(x) is Value else x


def _cos(x: Value | float) -> Value | float:
    return x.cos() if type(x) is Value else math.cos(x)


def _sin(x: Value | float) -> Value | float:
    return x.sin() if type(x) is Value else math.sin(x)


def _log(x: Value | float) -> Value | float:
    return x.log() if type(x) is Value else math.log(x)
