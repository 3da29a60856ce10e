"""Value: a scalar that remembers how it was computed, so that it can be differentiated.

Each op computes its value with its primitive's ``forward`` and makes an output node whose
``_prev`` holds its inputs and whose ``_rule`` is that primitive: its derivative rule,
stated once in ``chaingrad/rules.py`` (one hop from each op below). ``backward()`` visits
the nodes in reverse topological order and adds (``+=``) what each rule gives into its
inputs' ``.grad``: the chain rule, one node at a time (``chaingrad/autodiff.py``).

The rules work on two kinds of numbers: on floats for an ordinary ``backward()``, and on
the Values themselves for ``backward(create_graph=True)``, where the gradient is itself a
graph that can be differentiated again.

Why a rule and not a closure made by each op, as in micrograd: a closure that reaches its
own output node is a reference cycle, and a graph of cycles is freed only by Python's cyclic
garbage collector, which then spends most of a training step walking the graph. The rules
are plain objects, the graph is freed the moment it is dropped, and ``node._backward``
still hands you the closure to call by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real

from . import autodiff, gradmode, rules
from .declaration import Bound, Primitive, method, on_floats
from .errors import DomainError
from .rules import ADD, MUL, POW, POW_N

Number = int | float

_new = object.__new__


def elementwise(prim: Primitive) -> Callable[..., Value]:
    """An elementwise primitive as a Value's method: ``tanh = elementwise(rules.TANH)`` in the
    class gives ``x.tanh()``, the primitive's forward on x's number and its node, documented
    by its rule. Outside the op's domain (``math.log(0.0)`` raises), ``rules.on_floats``
    raises the ``DomainError`` that names the op. An op with parameters
    (``x.leaky_relu(0.2)``) takes them as its declaration names them and makes its node
    through ``Value._apply`` (``rules.method``).

    Example:
        >>> Value(0.0).tanh().data, Value.tanh.__doc__ == rules.TANH.doc
        (0.0, True)
    """
    if prim.param_names:
        return method(prim)
    forward = prim.forward  # the rule's forward on numbers, called directly: a neuron's
    # relu or tanh is one node in every few dozen, and Value(x).relu() cost twice as much
    # through _apply's general path (S2, S3 in benchmarks/versions.py)

    def apply(self: Value) -> Value:
        try:
            data = forward(self.data)
        except (ValueError, OverflowError, ZeroDivisionError):
            data = None  # outside the domain: on_floats raises the error that names the op
        if type(data) is not float:
            data = on_floats(prim, self.data)
        return make_node(data, self, None, prim)

    apply.__name__ = apply.__qualname__ = prim.method
    apply.__doc__ = prim.doc
    return apply


class Value(autodiff.Node):
    """A scalar node of a computation graph.

    Args:
        data: The number it holds (any real number: int, float, numpy scalar, ...).
        _children: The nodes it was computed from, in argument order.
        _op: The name of the op that made it ('' for a leaf).
        label: A name to show in drawings and explanations.

    Like micrograd's Value (and PyTorch's Tensor), it takes attributes of your own
    (``p.m = 0.0`` for an optimizer's moment, say).

    Example:
        >>> x = Value(2.0, label="x")
        >>> y = x * x + 3 * x
        >>> y.backward()
        >>> y.data, x.grad
        (10.0, 7.0)
    """

    __slots__ = ("data", "grad", "_rule", "__dict__")  # + autodiff.Node's
    data: float
    grad: float  # a Value after backward(create_graph=True)
    label = ""  # a name for drawings and explanations; set, it goes in the node's __dict__
    __array_ufunc__ = None  # numpy scalars on the left defer to our reflected operators
    requires_grad = True  # every Value takes a gradient
    _initial_grad = 0.0  # .grad before any gradient has reached it, as in micrograd

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
        self._a, self._b = autodiff.input_slots(_children)
        if _op:
            self._op = _op
        if label:
            self.label = label
        self._rule = None
        self._mark = None
        if autodiff.leaves_made is not None:  # chaingrad.compile is tracing
            autodiff.leaves_made.append(self)

    # ---- primitives: each forward and rule is its primitive's, in chaingrad/rules.py ----

    def __add__(self, other: Value | Number) -> Value:
        """x + y;  d/dx = 1, d/dy = 1 (``rules.ADD``)."""
        y = other if type(other) is Value else _lift(other)
        if y is None:
            return _not_a_number("+", other)
        return make_node(ADD.forward(self.data, y.data), self, y, ADD)

    def __mul__(self, other: Value | Number) -> Value:
        """x * y;  d/dx = y, d/dy = x (``rules.MUL``)."""
        y = other if type(other) is Value else _lift(other)
        if y is None:
            return _not_a_number("*", other)
        return make_node(MUL.forward(self.data, y.data), self, y, MUL)

    def __pow__(self, other: Value | Number) -> Value:
        """x ** n;  d/dx = n * x**(n-1) (``rules.POW_N``); for a Value exponent y,
        also d/dy = x**y * log(x) (``rules.POW``)."""
        if type(other) is Value:
            return self._apply(POW, other)
        n = _number(other)
        if n is None:
            return _not_a_number("**", other)
        if n - n != 0:
            raise ValueError(f"**: got exponent {n}, needs a finite number")
        return self._apply(POW_N.bind(n, name=f"**{other}"))

    # the elementwise primitives, one line each: x.tanh() is rules.TANH's forward and rule
    relu = elementwise(rules.RELU)
    tanh = elementwise(rules.TANH)
    sigmoid = elementwise(rules.SIGMOID)
    exp = elementwise(rules.EXP)
    log = elementwise(rules.LOG)
    sqrt = elementwise(rules.SQRT)
    abs = elementwise(rules.ABS)
    sin = elementwise(rules.SIN)
    cos = elementwise(rules.COS)
    log1p = elementwise(rules.LOG1P)
    expm1 = elementwise(rules.EXPM1)
    log10 = elementwise(rules.LOG10)
    log2 = elementwise(rules.LOG2)
    erf = elementwise(rules.ERF)
    gelu = elementwise(rules.GELU)
    leaky_relu = elementwise(rules.LEAKY_RELU)  # with parameters, as torch's: x.leaky_relu(0.2)
    softplus = elementwise(rules.SOFTPLUS)

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
        autodiff.backward([self], [Value(1.0) if create_graph else 1.0], create_graph)

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    # ---- what chaingrad.autograd asks of an engine ----

    @staticmethod
    def _lift(x: object, like: object = None) -> Value | None:
        """x as a Value: a Value stays itself, a number becomes a leaf, anything else None."""
        return _lift(x)

    @staticmethod
    def _from_rule(data: float, inputs: list[Value], rule: Primitive | Bound) -> Value:
        """The node of ``data``, computed from ``inputs`` by ``rule`` (``compile``'s)."""
        return make_node(data, *autodiff.input_slots(tuple(inputs)), rule)

    def _apply(self, rule: Primitive | Bound, *others: Value) -> Value:
        """The node of ``rule`` (a primitive, or one bound to its parameters) applied to this
        Value and ``others``: its forward on their numbers (``rules.on_floats``: outside
        the op's domain, a ``DomainError`` that names it)."""
        if not others:  # x ** 2, x.leaky_relu(0.2): one input, most calls
            return make_node(on_floats(rule.primitive, self.data, *rule.params), self, None, rule)
        data = on_floats(rule.primitive, self.data, *[x.data for x in others], *rule.params)
        if len(others) == 1:
            return make_node(data, self, others[0], rule)
        return make_node(data, *autodiff.input_slots((self, *others)), rule)

    def _seed(self, grad: object, create_graph: bool, where: str) -> float | Value:
        """d(loss)/d(self) to start a backward pass from: ``grad``, or 1."""
        if grad is None:
            seed = 1.0
        else:
            seed = _number(grad)
            if seed is None or seed - seed != 0:
                raise TypeError(f"{where}: the gradient of a Value is a finite number, got "
                                f"{type(grad).__name__} {grad!r}")
        return Value(seed) if create_graph else float(seed)


# The node protocol's name for the stored number (autodiff.py): the ``data`` slot itself,
# under a second name; a property would cost the scalar engine a call on every read.
Value._value = Value.__dict__["data"]


# ---- helpers ----


def make_node(data: float, a: object, b: object, rule: Primitive | Bound) -> Value:
    """Make an op's output node from inputs a and b (no input checks: the op did them)."""
    if data - data != 0.0:
        op = rule.name
        inputs = ", ".join(str(c.data) for c in (a, b) if c is not None)
        what = "is not a number (nan)" if data != data else "overflows a float"
        raise DomainError(f"{op}: the result of {op}({inputs}) {what}")
    out = _new(Value)
    out.data = data
    out.grad = 0.0
    out._mark = None
    if gradmode.everywhere or gradmode.is_grad_enabled():  # the global: the fast path
        out._a = a
        out._b = b
        out._rule = rule
    else:
        out._a = out._b = out._rule = None
    return out


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
