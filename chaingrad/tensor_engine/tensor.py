"""Tensor: the Value mechanism on numpy arrays.

A Tensor op makes an output node exactly as a Value op does: ``_prev`` holds its inputs in
order, ``_op`` names it, and ``_vjp(xs, out, g)`` is its derivative rule, written right under
it, returning one gradient per input. Rules are written with operators and methods that
ndarrays and Tensors share, so the same line runs on arrays for ``backward()`` and on
Tensors for ``backward(create_graph=True)``. A rule returns each gradient in the output's
shape; ``tensor_backward.sum_to_shape`` undoes broadcasting, once, for every op.

dtype: a floating numpy array keeps its dtype (float64 stays float64, as with
``torch.from_numpy``, and the array is shared, not copied); Python numbers and lists, and
integer or boolean arrays, become float32. A Python number in an op takes the tensor's
dtype (``x * 2`` stays float32). Gradient checks use float64.

Only Tensors created with ``requires_grad=True`` (and what is computed from them) record a
graph and receive a ``.grad``; data and constants do not.

The ops live in three places: arithmetic and matmul here, elementwise functions and
reductions in ``tensor_math``, shapes and indexing in ``tensor_shape`` (mixins of Tensor);
functions of several tensors (``concatenate``, ``stack``, ``where``, ``conv2d``, ...) in
``tensor_ops``.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import Any, Union

import numpy as np

from .. import autodiff
from ..errors import DomainError
from .arrays import ARRAY_TYPES, all_finite, as_array, domain_error, first_non_finite, pow_error
from .backward import backward_closure, run_backward
from .math_ops import MathOps, _data, _log
from .shape_ops import ShapeOps

_new = object.__new__

Operand = Union["Tensor", np.ndarray, float, int]


# ---- making nodes ----


def _node(data: Any, children: tuple, op: str, rule: Callable | None) -> Tensor:
    """An op's output node (no input checks: the op has done them).

    It records the graph only if grad mode is on and some input requires a gradient.
    """
    if type(data) is not np.ndarray:
        data = np.asarray(data)  # numpy turns 0-d results into scalars: undo that
    out = _new(Tensor)
    out.data = data
    out.grad = None
    out.label = ""
    out._op = op
    out._mark = None
    if autodiff._grad_enabled or autodiff.is_grad_enabled():  # the global: the fast path
        for child in children:
            if child.requires_grad:
                out.requires_grad = True
                if len(children) == 2:
                    out._a, out._b = children
                elif len(children) == 1:
                    out._a, out._b = children[0], None
                else:
                    out._a, out._b = autodiff.split(children)
                out._vjp = rule
                return out
    out.requires_grad = False
    out._a = out._b = out._vjp = None
    return out


def _const(data: np.ndarray) -> Tensor:
    """A leaf holding ``data`` that needs no gradient (a constant, or detached data)."""
    out = _new(Tensor)
    out.data = data
    out.grad = None
    out.requires_grad = False
    out._a = out._b = out._mark = None
    out._op = ""
    out.label = ""
    out._vjp = None
    return out


def _number(x: object) -> float | None:
    """x if it is a plain real number (int, float, numpy scalar, ...), else None."""
    if type(x) is float or type(x) is int:
        return x
    if isinstance(x, Real) and not isinstance(x, (Tensor, np.ndarray)):
        return x
    return None


def _lift(x: object, like: Tensor, numbers: bool = True) -> Tensor | None:
    """``x`` as a constant Tensor: a number takes ``like``'s dtype (as in ``x * 2``), an
    array follows the dtype rule; None for anything else (the operator then refuses)."""
    if isinstance(x, Tensor):
        return x
    if numbers and _number(x) is not None:
        return _const(np.asarray(x, dtype=like.data.dtype))
    if isinstance(x, ARRAY_TYPES):  # arrays, and numpy scalars such as np.bool_
        return _const(as_array(x, None, "Tensor"))
    return None


def _operand(op: str, x: object, like: Tensor) -> Any:
    """The other operand of ``op`` as a Tensor (see ``_lift``); NotImplemented for a type
    it doesn't know (Python then asks ``x``), but a TypeError for a list, tuple or string,
    which Python would otherwise repeat or refuse with a message that hides the op."""
    lifted = _lift(x, like)
    if lifted is None and isinstance(x, (str, bytes, list, tuple)):
        raise TypeError(f"{op}: needs a number, an array or a Tensor, got "
                        f"{type(x).__name__} {x!r}")
    return NotImplemented if lifted is None else lifted


def _broadcasting(op: str, ufunc: Any, a: Tensor, b: Tensor, check: bool = True,
                  shapes: bool = False) -> Any:
    """``ufunc(a, b)`` (of the shapes with ``shapes``) with numpy broadcasting, and
    chaingrad's errors."""
    try:
        data = ufunc(a.shape, b.shape) if shapes else ufunc(a.data, b.data)
    except ValueError:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} do not broadcast") from None
    if check and not all_finite(data):
        raise domain_error(op, np.asarray(data), (a.data, b.data), None)
    return data


class Tensor(autodiff.Node, MathOps, ShapeOps):
    """An n-dimensional array node of a computation graph.

    Args:
        data: A number, a (nested) list of numbers, or a numpy array. A floating array
            keeps its dtype and is shared, not copied. Anything else becomes float32:
            Python numbers and lists, integer arrays (``np.arange(3)`` -> [0., 1., 2.]),
            and boolean arrays (True -> 1.0, False -> 0.0). Since the result is always
            floating, it may take ``requires_grad=True`` (torch keeps integer and bool
            dtypes and refuses them a gradient).
        requires_grad: Record the ops applied to it, so that ``backward()`` fills ``.grad``.
        dtype: A floating numpy dtype; None follows the rule above.
        label: A name to show in drawings and explanations.

    ``==`` and hashing are by identity, as for micrograd's Value (graph tools keep Tensors
    in sets and dicts); compare values with ``x.data == y.data``. ``bool(x)`` needs one
    element, as in torch.

    Example:
        >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> y.item(), x.grad.tolist()
        (30.0, [[2.0, 4.0], [6.0, 8.0]])
    """

    __slots__ = ("data", "grad", "requires_grad", "_op", "label", "_vjp")  # + autodiff.Node's
    __array_ufunc__ = None  # ndarray (op) Tensor defers to the Tensor's reflected operator
    _make = staticmethod(_node)  # how the mixins' ops make their nodes
    _as_operand = staticmethod(_lift)

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None,
                 label: str = ""):
        self.data = as_array(data, dtype, "Tensor")
        if not all_finite(self.data):
            index = first_non_finite(self.data)
            raise ValueError(f"Tensor: got {self.data[index]} at index {index}, "
                             "needs finite numbers")
        self.grad: Any = None
        self.requires_grad = bool(requires_grad)
        self._a = self._b = self._mark = None  # a leaf: no inputs (see autodiff.Node)
        self._op = ""
        self.label = label
        self._vjp: Callable | None = None

    # ---- elementwise arithmetic (broadcasting) ----

    def __add__(self, other: Operand) -> Tensor:
        """x + y;  d/dx = 1, d/dy = 1."""
        other = _operand("+", other, self)
        if other is NotImplemented:
            return other
        data = _broadcasting("+", np.add, self, other)
        return _node(data, (self, other), "+", Tensor._add_vjp)

    @staticmethod
    def _add_vjp(xs, out, g):
        return g, g

    def __mul__(self, other: Operand) -> Tensor:
        """x * y;  d/dx = y, d/dy = x."""
        other = _operand("*", other, self)
        if other is NotImplemented:
            return other
        data = _broadcasting("*", np.multiply, self, other)
        return _node(data, (self, other), "*", Tensor._mul_vjp)

    @staticmethod
    def _mul_vjp(xs, out, g):
        x, y = xs
        return y * g, x * g

    def __pow__(self, other: Operand) -> Tensor:
        """x ** n;  d/dx = n * x**(n-1), and for a Tensor exponent d/dn = x**n * log(x)."""
        n = _number(other)
        if n is None:
            other = _operand("**", other, self)
            if other is NotImplemented:
                return other
            with np.errstate(all="ignore"):
                data = _broadcasting("**", np.power, self, other, check=False)
            if not all_finite(data):
                raise pow_error("**", data, self.data, other.data)
            rule = Tensor._pow_vjp if other.requires_grad else Tensor._pow_base_vjp
            return _node(data, (self, other), "**", rule)
        op = f"**{other}"
        with np.errstate(all="ignore"):
            data = self.data**n
        if not all_finite(data):
            raise pow_error(op, data, self.data, n)
        out = _node(data, (self,), op, None)
        if out.requires_grad:  # build no rule for a node that records no graph
            out._vjp = lambda xs, out, g: (n * xs[0] ** (n - 1) * g,)
        return out

    @staticmethod
    def _pow_vjp(xs, out, g):
        """d/dx = y * x**(y-1), d/dy = x**y * log(x) (0 where x = 0, as in PyTorch)."""
        x, y = xs
        xd = _data(x)
        if (xd < 0).any():
            raise DomainError(f"**: d/dy of x ** y needs x >= 0 (log x), got x = "
                              f"{xd[xd < 0].flat[0]}")
        positive = xd > 0
        return y * x ** (y - 1) * g, out * _log(x * positive + ~positive) * g

    @staticmethod
    def _pow_base_vjp(xs, out, g):  # an exponent that needs no gradient
        x, y = xs
        return y * x ** (y - 1) * g, None

    # ---- composites: built from the primitives ----

    def __neg__(self) -> Tensor:
        """-x, as x * -1."""
        return self * -1

    def __sub__(self, other: Operand) -> Tensor:
        """x - y, as x + (-y)."""
        n = _number(other)
        if n is not None:
            return self + (-n)
        other = _operand("-", other, self)
        if other is NotImplemented:
            return other
        _broadcasting("-", np.broadcast_shapes, self, other, check=False, shapes=True)
        return self + (-other)

    def __truediv__(self, other: Operand) -> Tensor:
        """x / y, as x * y**-1 (x * (1/y) for a number y)."""
        n = _number(other)
        if n is not None:
            if n == 0:
                raise DomainError(f"/: division by zero (a tensor of shape {self.shape} / {n})")
            return self * (1.0 / n)
        other = _operand("/", other, self)
        if other is NotImplemented:
            return other
        _broadcasting("/", np.broadcast_shapes, self, other, check=False, shapes=True)
        if not other.data.all():
            index = tuple(int(i) for i in np.argwhere(other.data == 0)[0])
            raise DomainError(f"/: division by zero (the divisor is 0.0 at index {index})")
        return self * other**-1

    def __radd__(self, other: Operand) -> Tensor:  # other + self
        return self + other

    def __rsub__(self, other: Operand) -> Tensor:  # other - self
        lifted = _operand("-", other, self)
        return lifted if lifted is NotImplemented else lifted - self

    def __rmul__(self, other: Operand) -> Tensor:  # other * self
        return self * other

    def __rtruediv__(self, other: Operand) -> Tensor:  # other / self
        lifted = _operand("/", other, self)
        return lifted if lifted is NotImplemented else lifted / self

    def __rpow__(self, other: Operand) -> Tensor:  # other ** self
        lifted = _operand("**", other, self)
        return lifted if lifted is NotImplemented else lifted**self

    def __abs__(self) -> Tensor:
        return self.abs()

    # ---- backward and friends ----

    def backward(self, grad: Any = None, create_graph: bool = False) -> None:
        """Add d(self)/d(t) into ``t.grad`` for every ``t`` that requires a gradient.

        Args:
            grad: d(loss)/d(self), of self's shape; may be left out when self has one
                element (it is then 1).
            create_graph: Make every ``.grad`` a Tensor with a graph of its own, for
                higher-order derivatives.

        Calling it twice adds the gradients twice (reset ``.grad`` to None in between).
        With ``create_graph`` a node's ``.grad`` refers to a graph that refers back to the
        node (as in PyTorch): reset the ``.grad``s when done so that both can be freed.

        Example:
            >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> (x * x).backward(grad=[1.0, 1.0, 0.5])
            >>> x.grad.tolist()
            [2.0, 4.0, 3.0]
        """
        if not self.requires_grad:
            raise RuntimeError("backward: this tensor does not require a gradient (make its "
                               "inputs with requires_grad=True, outside no_grad())")
        if grad is None:
            if self.data.size != 1:
                raise ValueError(f"backward: the output has shape {self.shape}; pass grad= "
                                 "(d(loss)/d(output), of that shape) or reduce it first "
                                 "(e.g. .sum())")
            seed = np.ones_like(self.data)
        else:
            seed = np.array(as_array(grad, self.dtype, "backward"))  # a copy: .grad owns it
            if seed.shape != self.shape:
                raise ValueError(f"backward: grad has shape {seed.shape}, the output has "
                                 f"shape {self.shape}")
            if not all_finite(seed):
                raise ValueError("backward: grad holds nan or inf, needs finite numbers")
        run_backward(self, _const(seed) if create_graph else seed, create_graph)

    @property
    def _backward(self) -> Callable[[], None]:
        """This node's backward step as a closure, to call by hand as in micrograd's lecture
        (see ``tensor_backward.backward_closure``: set ``.grad`` first)."""
        return backward_closure(self)

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        self._vjp = autodiff.ClosureRule(fn)

    def detach(self) -> Tensor:
        """The same data (shared, not copied) in a new leaf that records no graph."""
        return _const(self.data)

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (shared, not copied)."""
        return self.data

    def item(self) -> float:
        """The value of a one-element tensor as a Python float."""
        if self.data.size != 1:
            raise ValueError(f"item: needs a tensor with one element, got shape {self.shape}")
        return float(self.data.item())

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def __bool__(self) -> bool:
        """The truth of a one-element tensor's value (``if loss: ...``), as torch has it."""
        if self.data.size != 1:
            raise RuntimeError(f"bool: the truth value of a tensor of shape {self.shape} "
                               f"({self.data.size} values) is ambiguous; use "
                               "(x.data != 0).any() or .all(), or x.item() for one value")
        return bool(self.data.item())

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len: a 0-d tensor has no length")
        return len(self.data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self.data, dtype=dtype)

    def __repr__(self) -> str:
        text = np.array2string(self.data, separator=", ", threshold=20, precision=4)
        extra = ", requires_grad=True" if self.requires_grad else ""
        extra += f", op={self._op!r}" if self._op else ""
        return f"Tensor({text}, dtype={self.dtype}{extra})"
