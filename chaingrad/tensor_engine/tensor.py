"""Tensor: the Value mechanism on numpy arrays.

A Tensor op makes an output node exactly as a Value op does: ``_prev`` holds its inputs in
order, ``_op`` names it, and ``_rule`` is its primitive, whose derivative rule is stated
once: in ``chaingrad/rules.py`` for the ops both engines share (``+``, ``*``, ``**``, tanh,
exp, ...), in ``chaingrad/tensor_engine/rules.py`` for the Tensor's own (matmul, sum,
reshape, indexing, ...). Each op below names its primitive in its docstring: one hop to
its derivative. The backward pass is the one in ``chaingrad/autodiff.py``, which also sums
a broadcast gradient back to its input's shape.

dtype: a floating numpy array keeps its dtype (float64 stays float64, as with
``torch.from_numpy``, and the array is shared, not copied); Python numbers and lists, and
integer or boolean arrays, become float32. A Python number in an op takes the tensor's
dtype (``x * 2`` stays float32). Gradient checks use float64.

Only Tensors created with ``requires_grad=True`` (and what is computed from them) record a
graph and receive a ``.grad``; data and constants do not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from typing import Any, Union

import numpy as np

from .. import autodiff
from ..errors import DomainError
from ..rules import (
    ABS,
    ADD,
    COS,
    EXP,
    LOG,
    MUL,
    POW,
    POW_N,
    RELU,
    SIGMOID,
    SIN,
    SQRT,
    TANH,
    Bound,
    Primitive,
)
from .arrays import (
    ARRAY_TYPES,
    all_finite,
    as_array,
    check_index,
    domain_error,
    first_non_finite,
    normalize_axes,
    normalize_axis,
    pow_error,
)
from .rules import (
    BROADCAST_TO,
    CLIP,
    GETITEM,
    LOG_SOFTMAX,
    MATMUL,
    MAX,
    MIN,
    RESHAPE,
    SOFTMAX,
    SUM,
    TRANSPOSE,
    stable_sigmoid,
    tie_share,
)

_new = object.__new__

Operand = Union["Tensor", np.ndarray, float, int]
Axis = Any  # an int, a tuple of ints, or None
Rule = Primitive | Bound


class Tensor(autodiff.Node):
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
    element, as in torch. Like a torch tensor, it takes attributes of your own.

    Example:
        >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> y.item(), x.grad.tolist()
        (30.0, [[2.0, 4.0], [6.0, 8.0]])
    """

    __slots__ = ("data", "grad", "requires_grad", "_rule", "__dict__")
    label = ""  # a name for drawings and explanations; set, it goes in the node's __dict__
    __array_ufunc__ = None  # ndarray (op) Tensor defers to the Tensor's reflected operator
    _initial_grad = None  # .grad before any gradient has reached it, as in PyTorch

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
        if label:
            self.label = label
        self._rule: Rule | None = None
        if autodiff._created is not None:  # chaingrad.compile is tracing
            autodiff._created.append(self)

    # ---- elementwise arithmetic (broadcasting) ----

    def __add__(self, other: Operand) -> Tensor:
        """x + y;  d/dx = 1, d/dy = 1 (``rules.ADD``)."""
        other = _operand("+", other, self)
        if other is NotImplemented:
            return other
        return _node(_broadcasting("+", np.add, self, other), (self, other), ADD)

    def __mul__(self, other: Operand) -> Tensor:
        """x * y;  d/dx = y, d/dy = x (``rules.MUL``)."""
        other = _operand("*", other, self)
        if other is NotImplemented:
            return other
        return _node(_broadcasting("*", np.multiply, self, other), (self, other), MUL)

    def __pow__(self, other: Operand) -> Tensor:
        """x ** n;  d/dx = n * x**(n-1) (``rules.POW_N``); for an exponent y that takes a
        gradient, also d/dy = x**y * log(x) (``rules.POW``)."""
        n = _number(other)
        if n is None:
            other = _operand("**", other, self)
            if other is NotImplemented:
                return other
            with np.errstate(all="ignore"):
                data = _broadcasting("**", np.power, self, other, check=False)
            if not all_finite(data):
                raise pow_error("**", data, self.data, other.data)
            if other.requires_grad:
                return _node(data, (self, other), POW)
            return _node(data, (self,), POW_N.bind(other.data, name="**"))
        with np.errstate(all="ignore"):
            data = self.data**n
        if not all_finite(data):
            raise pow_error(f"**{other}", data, self.data, n)
        return _node(data, (self,), POW_N.bind(n, name=f"**{other}"))

    def __matmul__(self, other: Any) -> Tensor:
        """x @ y as np.matmul (1-D, 2-D, batched);  d/dx = g @ y^T, d/dy = x^T @ g
        (``tensor_engine.rules.MATMUL``).

        Example:
            >>> (Tensor([[1.0, 2.0]]) @ Tensor([[3.0], [4.0]])).data.tolist()
            [[11.0]]
        """
        other = _lift(other, self, numbers=False)
        if other is None:
            return NotImplemented
        a, b = self.data, other.data
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape}: both operands need at "
                             "least one dimension")
        ka, kb = a.shape[-1], b.shape[-2 if b.ndim > 1 else 0]
        if ka != kb:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align "
                             f"({ka} != {kb})")
        try:
            data = np.matmul(a, b)
        except ValueError:
            raise ValueError(f"matmul: the batch dimensions of shapes {a.shape} and {b.shape} "
                             "do not broadcast") from None
        if not all_finite(data):
            raise domain_error("matmul", data, (), None)
        needs = (self.requires_grad, other.requires_grad)
        return _node(data, (self, other), MATMUL.bind(needs))

    def __rmatmul__(self, other: Any) -> Tensor:  # other @ self
        lifted = _lift(other, self, numbers=False)
        return NotImplemented if lifted is None else lifted @ self

    # ---- composites: built from the primitives, so they need no rule of their own ----

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

    # ---- elementwise functions: the forward with numpy, the rule from chaingrad.rules ----

    def exp(self) -> Tensor:
        """e ** x;  d/dx = e ** x, reusing the output (``rules.EXP``)."""
        with np.errstate(over="ignore"):
            data = np.exp(self.data)
        if not all_finite(data):
            limit = math.log(np.finfo(data.dtype).max)
            raise domain_error("exp", data, (self.data,),
                               f"x <= {limit:.4f} ({data.dtype} overflows beyond)")
        return _node(data, (self,), EXP)

    def log(self) -> Tensor:
        """ln(x);  d/dx = 1 / x (``rules.LOG``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            data = np.log(self.data)
        if not all_finite(data):
            raise domain_error("log", data, (self.data,), "x > 0")
        return _node(data, (self,), LOG)

    def sqrt(self) -> Tensor:
        """sqrt(x);  d/dx = 1 / (2 * sqrt(x)), unbounded at 0 (``rules.SQRT``)."""
        with np.errstate(invalid="ignore"):
            data = np.sqrt(self.data)
        if not all_finite(data):
            raise domain_error("sqrt", data, (self.data,), "x >= 0")
        return _node(data, (self,), SQRT)

    def abs(self) -> Tensor:
        """|x|;  d/dx = sign(x), taken as 0 at x = 0 as PyTorch does (``rules.ABS``)."""
        return _node(np.abs(self.data), (self,), ABS)

    def tanh(self) -> Tensor:
        """tanh(x);  d/dx = 1 - tanh(x)**2, reusing the output (``rules.TANH``)."""
        return _node(np.tanh(self.data), (self,), TANH)

    def sigmoid(self) -> Tensor:
        """1 / (1 + exp(-x));  d/dx = s * (1 - s), reusing the output s (``rules.SIGMOID``)."""
        return _node(stable_sigmoid(self.data), (self,), SIGMOID)

    def relu(self) -> Tensor:
        """max(0, x);  d/dx = 1 if x > 0 else 0 (``rules.RELU``)."""
        return _node(np.maximum(self.data, 0), (self,), RELU)

    def sin(self) -> Tensor:
        """sin(x);  d/dx = cos(x) (``rules.SIN``)."""
        return _node(np.sin(self.data), (self,), SIN)

    def cos(self) -> Tensor:
        """cos(x);  d/dx = -sin(x) (``rules.COS``)."""
        return _node(np.cos(self.data), (self,), COS)

    def clip(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        """Clamp into [min, max];  d/dx = 1 where min <= x <= max, else 0, as torch.clamp
        (``tensor_engine.rules.CLIP``).

        Example:
            >>> Tensor([-2.0, 0.5, 3.0]).clip(-1, 1).data.tolist()
            [-1.0, 0.5, 1.0]
        """
        bounds = []
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and (not isinstance(bound, (int, float, np.number))
                                      or isinstance(bound, bool) or math.isnan(bound)):
                raise TypeError(f"clip: {name} must be a number or None, got {bound!r}")
            bounds.append(bound)
        low, high = bounds
        if low is None and high is None:
            raise ValueError("clip: needs min, max or both")
        if low is not None and high is not None and low > high:
            raise ValueError(f"clip: min {low} is greater than max {high}")
        return _node(CLIP.forward(self.data, low, high), (self,), CLIP.bind(low, high))

    # ---- reductions ----

    def sum(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """Sum over ``axis`` (an int, a tuple, or None for all);  d/dx = 1 for every entry
        (``tensor_engine.rules.SUM``)."""
        axes = normalize_axes(axis, self.ndim, "sum")
        data = SUM.forward(self.data, axes, keepdims)
        if not all_finite(np.asarray(data)):
            raise domain_error("sum", np.asarray(data), (), None)
        return _node(data, (self,), SUM.bind(axes, keepdims))

    def mean(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """The mean over ``axis``, as sum * (1 / count)."""
        axes = normalize_axes(axis, self.ndim, "mean")
        count = math.prod(self.shape[a] for a in axes)
        if count == 0:
            raise ValueError(f"mean: nothing to average over axis {axis} of shape {self.shape}")
        return self.sum(axes, keepdims) * (1.0 / count)

    def max(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """The largest entry over ``axis`` (an int, a tuple, or None for all)
        (``tensor_engine.rules.MAX``).

        Tied largest entries share the gradient equally, as with ``torch.amax`` and the
        full ``torch.max(x)``. ``torch.max(x, dim)``, which also returns indices, gives it
        all to the one index it returns instead; so does ``max_pool2d`` (to the first).

        Example:
            >>> x = Tensor([1.0, 3.0, 3.0], requires_grad=True)
            >>> x.max().backward()
            >>> x.grad.tolist()
            [0.0, 0.5, 0.5]
        """
        return self._extreme(MAX, axis, keepdims)

    def min(self, axis: Axis = None, keepdims: bool = False) -> Tensor:
        """The smallest entry over ``axis`` (an int, a tuple, or None for all)
        (``tensor_engine.rules.MIN``).

        Tied smallest entries share the gradient equally, as with ``torch.amin`` and the
        full ``torch.min(x)``; ``torch.min(x, dim)`` gives it all to the index it returns.
        """
        return self._extreme(MIN, axis, keepdims)

    def _extreme(self, rule: Primitive, axis: Axis, keepdims: bool) -> Tensor:
        op = rule.name
        axes = normalize_axes(axis, self.ndim, op)
        if any(self.shape[a] == 0 for a in axes):
            raise ValueError(f"{op}: got an empty axis in shape {self.shape}")
        x = self.data
        kept = (x.max if rule is MAX else x.min)(axis=axes, keepdims=True)
        data = kept if keepdims else kept.squeeze(axis=axes)
        share = tie_share(x, kept, axes) if self.requires_grad else None
        return _node(data, (self,), rule.bind(axes, share))

    def softmax(self, axis: int = -1) -> Tensor:
        """exp(x) / sum(exp(x)) along ``axis``, computed stably;  vjp: s * (g - sum(g * s))
        (``tensor_engine.rules.SOFTMAX``)."""
        ax = normalize_axis(axis, self.ndim, "softmax")
        return _node(SOFTMAX.forward(self.data, ax), (self,), SOFTMAX.bind(ax))

    def log_softmax(self, axis: int = -1) -> Tensor:
        """x - log(sum(exp(x))) along ``axis``, computed stably;  vjp: g - softmax * sum(g)
        (``tensor_engine.rules.LOG_SOFTMAX``).

        Example:
            >>> Tensor([0.0, 1000.0]).log_softmax().data.tolist()
            [-1000.0, 0.0]
        """
        ax = normalize_axis(axis, self.ndim, "log_softmax")
        return _node(LOG_SOFTMAX.forward(self.data, ax), (self,), LOG_SOFTMAX.bind(ax))

    # ---- shapes and indexing: entries move, and each rule moves the gradient back ----

    def reshape(self, *shape: Any) -> Tensor:
        """The same entries in a new shape (one dimension may be -1), as ndarray.reshape
        (``tensor_engine.rules.RESHAPE``).

        Example:
            >>> Tensor([1.0, 2.0, 3.0, 4.0]).reshape(2, -1).shape
            (2, 2)
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape):
            raise TypeError(f"reshape: the shape must be ints, got {shape!r}")
        try:
            data = self.data.reshape(shape)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape a tensor of shape {self.shape} "
                             f"into {tuple(shape)}") from None
        return _node(data, (self,), RESHAPE.bind(data.shape))

    def flatten(self, start_dim: int = 0) -> Tensor:
        """Merge the axes from ``start_dim`` on into one (a reshape)."""
        if not -self.ndim <= start_dim < max(self.ndim, 1):
            raise ValueError(f"flatten: start_dim {start_dim} is out of range for shape "
                             f"{self.shape}")
        return self.reshape(self.shape[:start_dim % max(self.ndim, 1)] + (-1,))

    def transpose(self, *axes: Any) -> Tensor:
        """Permute the axes (reverse them if none are given), as ndarray.transpose
        (``tensor_engine.rules.TRANSPOSE``)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        ndim = self.ndim
        if not axes:
            axes = tuple(range(ndim - 1, -1, -1))
        else:
            if not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                       for a in axes):
                raise TypeError(f"transpose: axes must be ints, got {axes!r}")
            if len(axes) != ndim or any(not -ndim <= a < ndim for a in axes) or len(
                    {a % ndim for a in axes}) != ndim:
                raise ValueError(f"transpose: axes {axes} are not a permutation of the {ndim} "
                                 f"axes of shape {self.shape}")
            axes = tuple(int(a) % ndim for a in axes)
        return _node(self.data.transpose(axes), (self,), TRANSPOSE.bind(axes))

    @property
    def T(self) -> Tensor:
        """The transpose: all axes reversed."""
        return self.transpose()

    def broadcast_to(self, shape: tuple[int, ...]) -> Tensor:
        """Repeat along new or size-1 axes, as np.broadcast_to; the driver sums the
        gradient back (``tensor_engine.rules.BROADCAST_TO``)."""
        try:
            data = np.broadcast_to(self.data, shape)
        except (ValueError, TypeError):
            raise ValueError(f"broadcast_to: cannot broadcast shape {self.shape} "
                             f"to {shape!r}") from None
        return _node(data, (self,), BROADCAST_TO.bind(data.shape))

    def __getitem__(self, index: Any) -> Tensor:
        """x[index] with ints, slices, None, ..., integer arrays or boolean masks; the
        gradient is scattered back into zeros, an entry picked twice getting both
        (``tensor_engine.rules.GETITEM``).

        Example:
            >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> x[[0, 0, 2]].sum().backward()
            >>> x.grad.tolist()
            [2.0, 0.0, 1.0]
        """
        index = check_index(index)
        try:
            data = self.data[index]
        except IndexError as exc:
            raise IndexError(f"getitem: {exc} (tensor of shape {self.shape})") from None
        return _node(data, (self,), GETITEM.bind(index))

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
        seed = self._seed(grad, create_graph, "backward")
        with np.errstate(all="ignore"):  # nan and inf are looked for, and raise DomainError
            autodiff.backward([self], [seed], create_graph)

    def _seed(self, grad: Any, create_graph: bool, where: str) -> Any:
        """d(loss)/d(self) to start a backward pass from: ``grad`` (checked), or ones."""
        if not self.requires_grad:
            raise RuntimeError(f"{where}: this tensor does not require a gradient (make its "
                               "inputs with requires_grad=True, outside no_grad())")
        if grad is None:
            if self.data.size != 1:
                raise ValueError(f"{where}: the output has shape {self.shape}; pass grad= "
                                 "(d(loss)/d(output), of that shape) or reduce it first "
                                 "(e.g. .sum())")
            seed = np.ones_like(self.data)
        else:
            seed = np.array(as_array(grad, self.dtype, where))  # a copy: .grad owns it
            if seed.shape != self.shape:
                raise ValueError(f"{where}: grad has shape {seed.shape}, the output has "
                                 f"shape {self.shape}")
            if not all_finite(seed):
                raise ValueError(f"{where}: grad holds nan or inf, needs finite numbers")
        return _const(seed) if create_graph else seed

    @property
    def _backward(self) -> Callable[[], None]:
        """This node's backward step as a closure, to call by hand as in micrograd's lecture:
        set ``.grad`` first (see ``autodiff.backward_step``)."""
        if self._rule is None:
            return autodiff.do_nothing
        if type(self._rule) is autodiff.ClosureRule:
            return self._rule.backward
        return autodiff.backward_closure(self)

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        self._rule = autodiff.ClosureRule(fn)

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

    # ---- what chaingrad.autograd asks of an engine ----

    @staticmethod
    def _lift(x: Any, like: Tensor | None) -> Tensor | None:
        """x as a Tensor: a Tensor stays itself; an array or a number becomes a constant (a
        number takes ``like``'s dtype); anything else is None."""
        if isinstance(x, Tensor):
            return x
        if _number(x) is not None and not isinstance(x, bool):
            return _const(np.asarray(x, dtype=np.float32 if like is None else like.dtype))
        if isinstance(x, ARRAY_TYPES):
            return _const(as_array(x, None, "Tensor"))
        return None

    @staticmethod
    def _from_rule(data: Any, inputs: list[Tensor], rule: Rule) -> Tensor:
        """The node of ``data``, computed from ``inputs`` by ``rule`` (``compile``'s)."""
        return _node(data, tuple(inputs), rule)

    @staticmethod
    def _apply(rule: Rule, inputs: list[Tensor]) -> Tensor:
        """The node of ``rule`` (a primitive, or one bound to its parameters) applied to
        ``inputs``: its forward on their arrays, checked."""
        op = rule.name
        try:
            with np.errstate(all="ignore"):
                data = rule.primitive.forward(*(t.data for t in inputs), *rule.params)
        except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError) as exc:
            shapes = ", ".join(str(t.shape) for t in inputs)
            raise DomainError(f"{op}: forward failed on inputs of shapes ({shapes}): "
                              f"{exc}") from exc
        data = as_array(data, None, op)
        if not all_finite(data):
            index = first_non_finite(data)
            raise DomainError(f"{op}: forward returned {data[index]} at index {index}, needs "
                              "finite results")
        return _node(data, tuple(inputs), rule)


# ---- making nodes ----


def _node(data: Any, children: tuple, rule: Rule) -> Tensor:
    """An op's output node (no input checks: the op has done them).

    It records the graph only if grad mode is on and some input requires a gradient.
    """
    if type(data) is not np.ndarray:
        data = np.asarray(data)  # numpy turns 0-d results into scalars: undo that
    out = _new(Tensor)
    out.data = data
    out.grad = None
    out._mark = None
    if autodiff._grad_enabled or autodiff.is_grad_enabled():  # the global: the fast path
        for child in children:
            if child.requires_grad:
                out.requires_grad = True
                if len(children) == 2:  # most ops: no call to autodiff.split
                    out._a, out._b = children
                else:
                    out._a, out._b = autodiff.split(children)
                out._rule = rule
                return out
    out.requires_grad = False
    out._a = out._b = out._rule = None
    return out


def _const(data: np.ndarray) -> Tensor:
    """A leaf holding ``data`` that needs no gradient (a constant, or detached data)."""
    out = _new(Tensor)
    out.data = data
    out.grad = None
    out.requires_grad = False
    out._a = out._b = out._mark = None
    out._rule = None
    if autodiff._created is not None:  # chaingrad.compile is tracing
        autodiff._created.append(out)
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

