"""Tensor: the Value mechanism on numpy arrays, with PyTorch's API.

A Tensor op makes an output node exactly as a Value op does: ``_prev`` holds its inputs in
order, ``_op`` names it, and ``_rule`` is its primitive, whose derivative rule is stated
once: in ``chaingrad/rules.py`` for the ops both engines share (``+``, ``*``, ``**``, tanh,
exp, ...), in ``chaingrad/tensor_engine/rules.py`` for the Tensor's own (matmul, sum,
reshape, indexing, ...). Each op below names its primitive in its docstring: one hop to
its derivative. The backward pass is the one in ``chaingrad/autodiff.py``, which also sums
a broadcast gradient back to its input's shape.

The methods are torch's: their names, argument order and defaults (``dim``/``keepdim``;
numpy's ``axis``/``keepdims`` are accepted too), ``transpose(dim0, dim1)``, comparisons
giving bool tensors, ``.grad`` a Tensor. What chaingrad lacks raises an error naming it.

This module holds the node and its primitive ops; torch's surface composed of them is in
the parts that ``class Tensor`` names as its bases, one module each, named for what it
answers. From a method to its code is one hop: the list below names its module (an
editor's "go to definition" lands there too, ``inspect.getsource(Tensor.sort)`` shows it,
and ``help(Tensor.sort)`` its docstring):

- here: the node (its array, the node protocol ``autodiff.py`` reads, ``_apply``,
  ``backward``, ``grad_fn``, ``detach``, ``data``, ...), the operators (``+``, ``@``,
  ``==``, ... and their names, ``add``, ``matmul``, ``eq``, ...), the elementwise
  primitives (``tanh``, ``exp``, ...), and the ops that make nodes of the Tensor's own
  primitives: ``clamp``, ``sum``, ``mean``, ``max``, ``min``, ``amax``, ``amin``,
  ``softmax``, ``log_softmax``, ``cumsum``, and the four that move entries, ``reshape``,
  ``permute``, ``broadcast_to`` and ``x[index]``; with ``where``, ``maximum``, ``minimum``
  and ``nan_to_num`` (where nodes), and what takes no gradient beside them (``argmax``,
  ``argmin``, ``any``, ``all``, ``isnan``, ``isinf``, ...);
- ``reductions.py``: ``var``, ``std``, ``norm``, ``logsumexp``, ``nansum``, ``nanmean``;
- ``shaping.py``: ``view``, ``view_as``, ``reshape_as``, ``ravel``, ``flatten``,
  ``unflatten``, ``squeeze``, ``unsqueeze``, ``transpose``, ``t``, ``T``, ``mT``,
  ``expand``, ``expand_as``, ``repeat``, ``split``, ``chunk``, ``unbind``, ``narrow``;
- ``indexing.py``: ``gather``, ``scatter_add``, ``roll``, ``flip``, ``masked_fill``,
  ``masked_fill_``, ``tril``, ``triu``;
- ``sorting.py``: ``sort``, ``argsort``, ``topk``, ``nonzero``, ``unique``, ``bincount``,
  ``histc``, ``histogram``;
- ``sampling.py``: ``multinomial``;
- ``inplace.py``: ``x[i] = v``, ``+=`` and the other in-place operators, ``add_``,
  ``sub_``, ``mul_``, ``div_``, ``pow_``, ``clamp_``, ``zero_``, ``fill_``, ``copy_``, the
  random fills ``uniform_``, ``normal_``, ``exponential_``, ``random_``, ``bernoulli_``,
  and the version counter;
- ``conversions.py``: ``to``, ``type``, ``type_as``, ``float``, ``double``, ``half``,
  ``bfloat16``, ``long``, ``int``, ``bool``, ``cpu``, ``cuda``, ``new_tensor``, ``new_zeros``,
  ``new_ones``, ``new_empty``, ``new_full``, ``numpy``, ``item``, ``tolist``, ``dtype``,
  ``device``, ``is_cuda``, ``is_floating_point``, ``shape``, ``size``, ``ndim``, ``dim``,
  ``ndimension``, ``numel``, ``nelement``, ``element_size``, and printing.

``promotion.py`` gives the dtype an op computes in (and computes the binary operators in
it); ``grad_fn.py`` is what ``x.grad_fn`` gives.

dtype: ``chaingrad.tensor`` and the factories follow torch (Python floats float32, ints
int64, bools bool); the ``Tensor(data)`` constructor, like ``torch.Tensor``, makes
floating tensors (a floating numpy array keeps its dtype and is shared, not copied, as
with ``torch.from_numpy``; anything else becomes float32). An op's result dtype is torch's
(``promotion.py``). Gradient checks use float64.

Only Tensors with ``requires_grad=True`` (and what is computed from them) record a graph
and receive a ``.grad``; data and constants do not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from operator import attrgetter
from typing import Any, Union

import numpy as np

# rules: chaingrad/rules.py, the primitives both engines share (this folder's rules.py
# declares the Tensor's own)
from .. import anomaly, autodiff, gradmode, guards, rules, torch_names
from ..declaration import Bound, Primitive, method
from ..errors import AnomalyError
from ..rules import ADD, MUL, POW, POW_N
from . import autocast_state, dtypes
from .arrays import (
    ARRAY_TYPES,
    Dims,
    as_array,
    check_index,
    normalize_axes,
    normalize_axis,
    quietly,
    to_array,
)
from .conversions import Conversions
from .grad_fn import GradFn
from .indexing import Indexing
from .inplace import InPlace
from .promotion import (
    broadcasting,
    by_a_number,
    compare,
    floating,
    lift,
    logical,
    number,
    operands,
    promoted,
    rounded_back,
)
from .reductions import Reductions
from .rules import (
    BROADCAST_TO,
    CLIP,
    CUMSUM,
    DIV,
    GETITEM,
    LOG_SOFTMAX,
    MATMUL,
    MAX,
    MIN,
    RESHAPE,
    SCALE,
    SOFTMAX,
    SUM,
    TRANSPOSE,
    WHERE,
    tie_share,
)
from .sampling import Sampling
from .shaping import Shaping
from .sorting import Sorting, values_indices

_new = object.__new__
_BOOL = np.dtype(bool)

Operand = Union["Tensor", np.ndarray, float, int]
Rule = Primitive | Bound


# ---- making nodes: each op's output (make_node), and the leaves ops and factories make ----


def make_node(data: Any, children: tuple, rule: Rule) -> Tensor:
    """An op's output node (no input checks: the op has done them).

    It records the graph only if grad mode is on and some input requires a gradient.
    """
    if type(data) is not np.ndarray:
        data = np.asarray(data)  # numpy turns 0-d results into scalars: undo that
    out = _new(Tensor)
    out._value = data
    out.grad = None
    out._mark = None
    if gradmode.everywhere or gradmode.is_grad_enabled():  # the global: the fast path
        for child in children:
            if child.requires_grad:
                out.requires_grad = True
                if len(children) == 2:  # most ops: no call to autodiff.input_slots
                    out._a, out._b = children
                elif len(children) == 1:
                    out._a, out._b = children[0], None
                else:
                    out._a, out._b = autodiff.input_slots(children)
                out._rule = rule
                out._made_at = guards.writes[0]
                out._keeps_grad = False  # its .grad is dropped after a pass (retain_grad)
                if gradmode.anomaly_traced:  # set_detect_anomaly(True): where it was made
                    anomaly.record(out)
                return out
    out.requires_grad = out._keeps_grad = False
    out._a = out._b = out._rule = out._made_at = None
    return out


def constant(data: np.ndarray) -> Tensor:
    """A leaf holding ``data`` that needs no gradient (a constant, or detached data)."""
    out = _new(Tensor)
    out._value = data
    out.grad = None
    out.requires_grad = out._keeps_grad = False
    out._a = out._b = out._mark = None
    out._rule = out._made_at = None
    if autodiff.leaves_made is not None:  # chaingrad.compile is tracing
        autodiff.leaves_made.append(out)
    return out


def leaf(data: np.ndarray, requires_grad: bool, where: str) -> Tensor:
    """A leaf of any dtype (the factories'); only a floating one may require grad."""
    out = constant(data)
    if requires_grad:
        if not dtypes.is_floating_dtype(data.dtype):
            raise RuntimeError(f"{where}: Only Tensors of floating point dtype can require "
                               f"gradients, got {dtypes.of(data.dtype)}")
        out.requires_grad = True
    return out


def elementwise(prim: Primitive) -> Callable[..., Tensor]:
    """An elementwise primitive as a Tensor's method: ``tanh = elementwise(rules.TANH)`` in the
    class gives ``x.tanh()``, its forward on x's array (``Primitive.on_arrays``), an integer
    or bool x first made the default float dtype where the op computes in floats (as
    torch's ``exp``), a bool x refused by the others (torch's ``relu`` and ``abs`` refuse
    one). Outside the op's domain it gives torch's numbers (``log(0) = -inf``,
    ``sqrt(-1) = nan``), quietly; ``backward()`` names the op if they reach the loss.

    An op with parameters (``x.leaky_relu(0.2)``, ``x.softplus(beta=2)``) takes them as its
    declaration names them, those left out taking their defaults (``Primitive.called``),
    and makes its node through ``_apply``.

    Example:
        >>> Tensor([0.0, 1.0]).tanh()
        tensor([0.0000, 0.7616])
    """
    if prim.param_names:
        return method(prim)  # x._apply(LEAKY_RELU.called(0.2)): not a hot path
    forward, floats, name = prim.on_arrays, prim.floats, prim.method

    def apply(self: Tensor) -> Tensor:
        x = self
        if floats:
            x = floating(x)
        elif x._value.dtype is _BOOL:
            raise RuntimeError(f"{name}: Boolean inputs not supported for {name} (as in torch)")
        out = make_node(quietly(forward, x._value), (x,), prim)
        return out if x is self else rounded_back(out, self)

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = prim.doc
    return apply


class Tensor(Reductions, Shaping, Indexing, Sorting, Sampling, InPlace, Conversions, autodiff.Node):
    """An n-dimensional array node of a computation graph.

    Args:
        data: A number, a (nested) list of numbers, or a numpy array. A floating array
            keeps its dtype and is shared, not copied. Anything else becomes float32:
            Python numbers and lists, integer arrays (``np.arange(3)`` -> [0., 1., 2.]),
            and boolean arrays (True -> 1.0, False -> 0.0), as ``torch.Tensor(data)``
            makes them. ``chaingrad.tensor(data)`` infers the dtype as ``torch.tensor``.
        requires_grad: Record the ops applied to it, so that ``backward()`` fills ``.grad``
            (a keyword argument).
        dtype: A floating dtype (``chaingrad.float64``, ``np.float64``); None follows the
            rule above.
        label: A name to show in drawings and explanations.

    ``==``, ``<`` ... compare entry by entry and give bool tensors, as in torch; hashing is
    by identity, so Tensors can be dict keys and set members. ``bool(x)`` needs one
    element, as in torch. Like a torch tensor, it takes attributes of your own.

    Its node and primitive ops are in ``tensor.py``; torch's methods composed of them in
    the parts named as its bases (``Shaping`` in ``shaping.py``, ...), which the docstring
    of ``tensor.py`` lists method by method.

    Example:
        >>> x = Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> y.item(), x.grad.tolist()
        (30.0, [[2.0, 4.0], [6.0, 8.0]])
    """

    __slots__ = ("_value", "grad", "requires_grad", "_rule", "_made_at", "_keeps_grad",
                 "__dict__")
    label = ""  # a name for drawings and explanations; set, it goes in the node's __dict__
    _initial_grad = None  # .grad before any gradient has reached it, as in PyTorch
    _changed_at = 0  # the count of in-place writes when this tensor was last written
    __hash__ = autodiff.Node.__hash__  # by identity, though == compares entries
    # how the parts of the class in other modules (sorting.py, conversions.py, ...) make
    # tensors, without importing this module
    _node = staticmethod(make_node)
    _constant = staticmethod(constant)
    _leaf = staticmethod(leaf)

    def __init__(self, data: Any, *sizes: int, requires_grad: bool = False, dtype: Any = None,
                 label: str = ""):
        if sizes or type(data) is int:
            raise TypeError(f"Tensor: chaingrad.Tensor{(data, *sizes)!r} would be torch's "
                            "uninitialized tensor of that size, which chaingrad has not; use "
                            "chaingrad.zeros(...) (or Tensor(2.0) for the number 2)")
        self._value = as_array(data, dtype, "Tensor")
        self.grad: Any = None
        self.requires_grad = bool(requires_grad)
        self._a = self._b = self._mark = self._made_at = None  # a leaf (see autodiff.Node)
        self._keeps_grad = False  # were it made by an op, it would drop its .grad, as torch
        if label:
            self.label = label
        self._rule: Rule | None = None
        if autodiff.leaves_made is not None:  # chaingrad.compile is tracing
            autodiff.leaves_made.append(self)

    # ---- elementwise arithmetic (broadcasting, torch's result dtype) ----

    def __add__(self, other: Operand) -> Tensor:
        """x + y;  d/dx = 1, d/dy = 1 (``rules.ADD``)."""
        if type(other) is Tensor and other._value.dtype is self._value.dtype:  # most calls
            return make_node(broadcasting("+", np.add, self, other, None), (self, other), ADD)
        return promoted("+", np.add, ADD, self, other)

    def __mul__(self, other: Operand) -> Tensor:
        """x * y;  d/dx = y, d/dy = x (``rules.MUL``)."""
        if type(other) is Tensor and other._value.dtype is self._value.dtype:  # most calls
            return make_node(broadcasting("*", np.multiply, self, other, None), (self, other), MUL)
        return promoted("*", np.multiply, MUL, self, other)

    def __pow__(self, other: Operand) -> Tensor:
        """x ** n;  d/dx = n * x**(n-1) (``rules.POW_N``); for an exponent y that takes a
        gradient, also d/dy = x**y * log(x) (``rules.POW``)."""
        both = operands("**", self, other)
        if both is NotImplemented:
            return both
        x, y, dtype = both
        n = number(other)
        if dtype.kind in "iub" and (y._value < 0).any():
            raise RuntimeError("**: Integers to negative integer powers are not allowed "
                               f"(got exponent {other if n is not None else 'a tensor'})")
        if n is None:
            data = broadcasting("**", np.power, x, y, dtype)
            if y.requires_grad:
                return make_node(data, (x, y), POW)
            return make_node(data, (x,), POW_N.bind(y._value, name="**"))
        data = quietly(POW_N.on_arrays, x._value, y._value)  # x * x * x for x ** 3, as torch
        return make_node(data, (x,), POW_N.bind(n, name=f"**{other}"))

    @autocast_state.casts("matmul")
    def __matmul__(self, other: Any) -> Tensor:
        """x @ y as np.matmul (1-D, 2-D, batched);  d/dx = g @ y^T, d/dy = x^T @ g
        (``tensor_engine.rules.MATMUL``).

        Example:
            >>> (Tensor([[1.0, 2.0]]) @ Tensor([[3.0], [4.0]])).tolist()
            [[11.0]]
        """
        other = lift(other, self, numbers=False)
        if other is None:
            return NotImplemented
        a, b = self._value, other._value
        if a.dtype != b.dtype and not (a.dtype.kind == b.dtype.kind == "f"):
            raise RuntimeError(f"matmul: expected both operands to have the same dtype, got "
                               f"{self.dtype} and {other.dtype}")
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape}: both operands need at "
                             "least one dimension")
        ka, kb = a.shape[-1], b.shape[-2 if b.ndim > 1 else 0]
        if ka != kb:
            raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not align "
                             f"({ka} != {kb})")
        needs = (self.requires_grad, other.requires_grad)
        try:
            data = quietly(MATMUL.on_arrays, a, b, needs)
        except ValueError:
            raise ValueError(f"matmul: the batch dimensions of shapes {a.shape} and {b.shape} "
                             "do not broadcast") from None
        return make_node(data, (self, other), MATMUL.bind(needs))

    def matmul(self, other: Any) -> Tensor:
        """x @ other (see ``__matmul__``)."""
        return self @ other

    def mm(self, mat2: Tensor) -> Tensor:
        """The product of two 2-D tensors, as torch.mm."""
        if self.ndim != 2 or getattr(mat2, "ndim", None) != 2:
            raise RuntimeError(f"mm: expects two 2-D tensors, got shapes {tuple(self.shape)} "
                               f"and {tuple(getattr(mat2, 'shape', ()))} (use matmul)")
        return self @ mat2

    def bmm(self, mat2: Tensor) -> Tensor:
        """The products of two batches of matrices, (b, n, m) @ (b, m, p) -> (b, n, p), as
        torch.bmm (a matmul, after torch's checks).

        Example:
            >>> Tensor(np.ones((2, 1, 3))).bmm(Tensor(np.ones((2, 3, 4)))).shape
            chaingrad.Size([2, 1, 4])
        """
        other = lift(mat2, self, numbers=False)
        if other is None:
            raise TypeError(f"bmm: mat2 must be a Tensor, got {type(mat2).__name__}")
        for name, t in (("batch1", self), ("batch2", other)):
            if t.ndim != 3:
                raise RuntimeError(f"bmm: {name} must be a 3D tensor, got shape {tuple(t.shape)}")
        if self.shape[0] != other.shape[0] or self.shape[2] != other.shape[1]:
            raise RuntimeError(f"bmm: shapes {tuple(self.shape)} and {tuple(other.shape)} do "
                               "not match (b, n, m) and (b, m, p)")
        return self @ other

    @autocast_state.casts("dot")
    def dot(self, other: Tensor) -> Tensor:
        """The dot product of two 1-D tensors, as torch.dot."""
        if self.ndim != 1 or getattr(other, "ndim", None) != 1:
            raise RuntimeError(f"dot: expects two 1-D tensors, got shapes {tuple(self.shape)} "
                               f"and {tuple(getattr(other, 'shape', ()))}")
        return self @ other

    def __rmatmul__(self, other: Any) -> Tensor:  # other @ self
        lifted = lift(other, self, numbers=False)
        return NotImplemented if lifted is None else lifted @ self

    # ---- composites: built from the primitives, so they need no rule of their own ----

    def __neg__(self) -> Tensor:
        """-x, as x scaled by -1 (``tensor_engine.rules.SCALE``)."""
        if self._value.dtype.kind == "b":
            raise RuntimeError("-: Negation, the `-` operator, on a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` "
                               "operator instead.")
        return make_node(np.negative(self._value), (self,), SCALE.bind(-1, name="neg"))

    def __sub__(self, other: Operand) -> Tensor:
        """x - y, as x + (-y)."""
        both = operands("-", self, other)
        if both is NotImplemented:
            return both
        _no_bool_minus(self, other)
        x, y, _ = both
        _broadcast_shape("-", x, y)
        return _named(x + (-y), "-")

    def __truediv__(self, other: Operand) -> Tensor:
        """x / y, rounded once, as torch divides;  d/dx = 1 / y, d/dy = -x / y**2
        (``tensor_engine.rules.DIV``). Integers divide into the default floating dtype, as
        in torch; by zero, it gives torch's inf, -inf or nan (0 / 0)."""
        if (scaled := by_a_number("/", self, other)) is not None:  # bfloat16 / 3.0
            return scaled
        both = operands("/", self, other, floating=True)
        if both is NotImplemented:
            return both
        x, y, dtype = both
        return make_node(broadcasting("/", np.divide, x, y, dtype), (x, y), DIV)

    def __radd__(self, other: Operand) -> Tensor:  # other + self
        return self + other

    def __rsub__(self, other: Operand) -> Tensor:  # other - self
        both = operands("-", self, other)
        if both is not NotImplemented:
            _no_bool_minus(self, other)
        return both if both is NotImplemented else _named(both[1] - both[0], "rsub")

    def __rmul__(self, other: Operand) -> Tensor:  # other * self
        return self * other

    def __rtruediv__(self, other: Operand) -> Tensor:  # other / self
        both = operands("/", self, other, floating=True)
        return both if both is NotImplemented else _named(both[1] / both[0], "*")  # torch's

    def __rpow__(self, other: Operand) -> Tensor:  # other ** self
        both = operands("**", self, other)
        return both if both is NotImplemented else both[1] ** both[0]

    def __abs__(self) -> Tensor:
        return self.abs()

    # ---- comparisons: bool tensors, no gradient (torch's) ----

    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        return compare("==", np.equal, self, other)

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        return compare("!=", np.not_equal, self, other)

    def __lt__(self, other: Operand) -> Tensor:
        return compare("<", np.less, self, other)

    def __le__(self, other: Operand) -> Tensor:
        return compare("<=", np.less_equal, self, other)

    def __gt__(self, other: Operand) -> Tensor:
        return compare(">", np.greater, self, other)

    def __ge__(self, other: Operand) -> Tensor:
        return compare(">=", np.greater_equal, self, other)

    def eq(self, other: Operand) -> Tensor:
        """x == other, entry by entry, as a bool tensor."""
        return self == other

    def ne(self, other: Operand) -> Tensor:
        """x != other, entry by entry, as a bool tensor."""
        return self != other

    def lt(self, other: Operand) -> Tensor:
        """x < other, entry by entry, as a bool tensor."""
        return self < other

    def le(self, other: Operand) -> Tensor:
        """x <= other, entry by entry, as a bool tensor."""
        return self <= other

    def gt(self, other: Operand) -> Tensor:
        """x > other, entry by entry, as a bool tensor."""
        return self > other

    def ge(self, other: Operand) -> Tensor:
        """x >= other, entry by entry, as a bool tensor."""
        return self >= other

    def __invert__(self) -> Tensor:
        """~x: logical not of a bool tensor, bitwise not of an integer one (torch's)."""
        if self._value.dtype.kind == "f":
            raise TypeError("~: needs a bool or integer tensor, got "
                            f"{self.dtype} (use x == 0 or 1 - x)")
        return constant(~self._value)

    def __and__(self, other: Operand) -> Tensor:
        return logical("&", np.bitwise_and, self, other)

    def __or__(self, other: Operand) -> Tensor:
        return logical("|", np.bitwise_or, self, other)

    def __xor__(self, other: Operand) -> Tensor:
        return logical("^", np.bitwise_xor, self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def equal(self, other: Tensor) -> bool:
        """True when both have the same shape and entries (``torch.equal``)."""
        other = lift(other, self)
        return self.shape == other.shape and bool((self._value == other._value).all())

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        """``|self - other| <= atol + rtol * |other|`` everywhere (``torch.allclose``)."""
        other = lift(other, self)
        return bool(np.allclose(self._value, other._value, rtol=rtol, atol=atol,
                                equal_nan=equal_nan))

    # ---- nan and inf: where they are, and replaced (nansum, nanmean: reductions.py) ----

    def isnan(self) -> Tensor:
        """Where the entries are nan, as a bool tensor (torch.isnan; no gradient).

        Example:
            >>> Tensor([1.0, float("nan")]).isnan()
            tensor([False,  True])
        """
        return self._where_is("isnan", np.isnan)

    def isinf(self) -> Tensor:
        """Where the entries are inf or -inf, as a bool tensor (torch.isinf)."""
        return self._where_is("isinf", np.isinf)

    def isfinite(self) -> Tensor:
        """Where the entries are neither nan nor +-inf, as a bool tensor (torch.isfinite)."""
        return self._where_is("isfinite", np.isfinite, integers=True)

    def isposinf(self) -> Tensor:
        """Where the entries are inf, as a bool tensor (torch.isposinf)."""
        return self._where_is("isposinf", np.isposinf)

    def isneginf(self) -> Tensor:
        """Where the entries are -inf, as a bool tensor (torch.isneginf)."""
        return self._where_is("isneginf", np.isneginf)

    def _where_is(self, op: str, test: Callable, integers: bool = False) -> Tensor:
        """``test`` entry by entry, for floats; for integers and bools, whose entries are
        all finite numbers, ``integers`` everywhere."""
        x = self._value
        if x.dtype.kind != "f":
            return constant(np.full(x.shape, integers))
        return constant(np.asarray(test(x)))

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Tensor:
        """nan, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0,
        and the largest and smallest numbers of the dtype), as torch.nan_to_num; the
        gradient passes where the entry was finite, 0 elsewhere (a ``where``).

        Example:
            >>> Tensor([float("nan"), float("-inf"), 2.0]).nan_to_num(neginf=-1.0)
            tensor([ 0., -1.,  2.])
        """
        x = self._value
        if x.dtype.kind != "f":
            return self.clone()
        filled = quietly(np.nan_to_num, x, True, nan, posinf, neginf)  # (True: a copy)
        return _where(np.isfinite(x), self, constant(filled), x.dtype)

    # ---- elementwise functions: the forward with numpy, the rule from chaingrad.rules ----

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
    # chaingrad's own methods (torch has them in F only): one rule for both engines
    gelu = elementwise(rules.GELU)
    leaky_relu = elementwise(rules.LEAKY_RELU)  # with parameters, as torch's: x.leaky_relu(0.2)
    softplus = elementwise(rules.SOFTPLUS)

    def pow(self, exponent: Operand) -> Tensor:
        """x ** exponent (see ``__pow__``)."""
        return self**exponent

    def add(self, other: Operand, *, alpha: float = 1) -> Tensor:
        """x + alpha * other."""
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other: Operand, *, alpha: float = 1) -> Tensor:
        """x - alpha * other."""
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other: Operand) -> Tensor:
        """x * other."""
        return self * other

    def div(self, other: Operand, *, rounding_mode: str | None = None) -> Tensor:
        """x / other (true division: integers give floats); with ``rounding_mode``, the
        quotient rounded as torch rounds it (``rounded_quotient``): ``'trunc'`` toward zero,
        ``'floor'`` down, an integer dtype kept; its gradient is zero, as torch's.

        Example:
            >>> Tensor([7.0, -7.0]).div(2, rounding_mode="floor")
            tensor([ 3., -4.])
        """
        if rounding_mode is None:
            return self / other
        return rounded_quotient(self, other, rounding_mode)

    def __floordiv__(self, other: Operand) -> Tensor:
        """x // y: torch's floor division, ``x.div(y, rounding_mode="floor")``."""
        return self.div(other, rounding_mode="floor")

    def __rfloordiv__(self, other: Operand) -> Tensor:  # other // self
        both = operands("//", self, other)
        return both if both is NotImplemented else both[1].div(both[0], rounding_mode="floor")

    def neg(self) -> Tensor:
        """-x."""
        return -self

    def square(self) -> Tensor:
        """x ** 2."""
        return self**2

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        """Clamp into [min, max];  d/dx = 1 where min <= x <= max, else 0, as torch.clamp
        (``tensor_engine.rules.CLIP``).

        Example:
            >>> Tensor([-2.0, 0.5, 3.0]).clamp(-1, 1).tolist()
            [-1.0, 0.5, 1.0]
        """
        bounds = []
        for name, bound in (("min", min), ("max", max)):
            if bound is not None and (not isinstance(bound, (int, float, np.number))
                                      or isinstance(bound, bool) or math.isnan(bound)):
                raise TypeError(f"clamp: {name} must be a number or None, got {bound!r}")
            bounds.append(bound)
        low, high = bounds
        if low is None and high is None:
            raise ValueError("clamp: needs min, max or both")
        if low is not None and high is not None and low > high:
            raise ValueError(f"clamp: min {low} is greater than max {high}")
        x = self
        if self._value.dtype.kind != "f" and any(
                isinstance(b, (float, np.floating)) for b in bounds):
            x = floating(self)
        return make_node(CLIP.on_arrays(x._value, low, high), (x,), CLIP.bind(low, high))

    clip = clamp

    # ---- reductions: dim and keepdim, numpy's axis and keepdims accepted (var, std, norm,
    # logsumexp: reductions.py) ----

    def sum(self, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None,
            axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """Sum over ``dim`` (an int, a tuple, or None for all);  d/dx = 1 for every entry
        (``tensor_engine.rules.SUM``). Integers and bools sum to int64, as in torch."""
        dim, keepdim = _dims_args("sum", dim, keepdim, axis, keepdims)
        x = self if dtype is None else self.to(dtype)
        if x._value.dtype.kind in "biu":
            x = x.to(dtypes.int64)
        elif x._value.dtype.kind != "f":
            return rounded_back(floating(x).sum(dim, keepdim), x)  # bfloat16, as torch's
        axes = normalize_axes(dim, x.ndim, "sum")
        data = quietly(SUM.on_arrays, x._value, axes, keepdim)
        return make_node(data, (x,), SUM.bind(axes, keepdim))

    def mean(self, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None,
             axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The mean over ``dim``: the sum, scaled by 1 / count (``rules.SCALE``)."""
        dim, keepdim = _dims_args("mean", dim, keepdim, axis, keepdims)
        x = self if dtype is None else self.to(dtype)
        if x._value.dtype.kind != "f":
            if not dtypes.is_floating_dtype(x._value.dtype):
                raise RuntimeError("mean(): could not infer output dtype. Input dtype must "
                                   f"be either a floating point or complex dtype. Got: "
                                   f"{x.dtype} (use x.float().mean())")
            return rounded_back(floating(x).mean(dim, keepdim), x)  # bfloat16, as torch's
        axes = normalize_axes(dim, x.ndim, "mean")
        count = math.prod(x.shape[a] for a in axes)
        if count == 0:
            raise ValueError(f"mean: nothing to average over dim {dim} of shape {tuple(x.shape)}")
        total = x.sum(axes, keepdim)
        return make_node(quietly(np.multiply, total._value, 1.0 / count), (total,),
                         SCALE.bind(1.0 / count, name="mean"))

    def max(self, dim: Any = None, keepdim: bool = False, *, axis: Dims = None,
            keepdims: bool | None = None) -> Any:
        """The largest entry: of all (a 0-d tensor), or along ``dim``, as torch.max.

        ``x.max()`` shares the gradient equally among tied largest entries, as torch's
        full ``max`` and ``amax`` do. ``x.max(dim)`` returns ``(values, indices)``, indices
        of the first largest entry, which gets all of the gradient, as in torch. numpy's
        ``axis=`` gives the values only, as ``amax``.

        Example:
            >>> x = Tensor([[1.0, 3.0], [4.0, 2.0]])
            >>> x.max().item(), x.max(1).values.tolist(), x.max(1).indices.tolist()
            (4.0, [3.0, 4.0], [1, 0])
        """
        return self._extreme(MAX, dim, keepdim, axis, keepdims)

    def min(self, dim: Any = None, keepdim: bool = False, *, axis: Dims = None,
            keepdims: bool | None = None) -> Any:
        """The smallest entry: of all, or along ``dim`` as ``(values, indices)`` (see
        ``max``)."""
        return self._extreme(MIN, dim, keepdim, axis, keepdims)

    def where(self, condition: Any, y: Operand) -> Tensor:
        """This tensor where ``condition`` holds, else ``y``, as torch.Tensor.where (that is,
        ``torch.where(condition, self, y)``): g goes to the one chosen
        (``tensor_engine.rules.WHERE``).

        Example:
            >>> x = Tensor([-1.0, 2.0], requires_grad=True)
            >>> x.where(x > 0, 0.0).tolist()
            [0.0, 2.0]
        """
        return where_node(condition, self, y)

    def maximum(self, other: Operand) -> Tensor:
        """The larger of x and other, entry by entry (broadcasting), as torch.maximum;
        composed of ``where`` (``tensor_engine.rules.WHERE``): where they tie, each gets
        half of the gradient, as in torch.

        Example:
            >>> Tensor([1.0, 5.0]).maximum(Tensor([3.0, 2.0])).tolist()
            [3.0, 5.0]
        """
        return _pick("maximum", np.greater, self, other)

    def minimum(self, other: Operand) -> Tensor:
        """The smaller of x and other, entry by entry, as torch.minimum (see ``maximum``)."""
        return _pick("minimum", np.less, self, other)

    def amax(self, dim: Dims = (), keepdim: bool = False) -> Tensor:
        """The largest entry over ``dim`` (an int, a tuple; () or None: all), tied largest
        entries sharing the gradient equally (``tensor_engine.rules.MAX``).

        Example:
            >>> x = Tensor([1.0, 3.0, 3.0], requires_grad=True)
            >>> x.amax().backward()
            >>> x.grad.tolist()
            [0.0, 0.5, 0.5]
        """
        return self._tied_extreme(MAX, None if dim == () else dim, keepdim)

    def amin(self, dim: Dims = (), keepdim: bool = False) -> Tensor:
        """The smallest entry over ``dim``, ties sharing the gradient (``rules.MIN``)."""
        return self._tied_extreme(MIN, None if dim == () else dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the first largest entry (of the flattened tensor if ``dim`` is
        None), int64, as torch.argmax."""
        return self._arg(np.argmax, "argmax", dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """The index of the first smallest entry, int64, as torch.argmin."""
        return self._arg(np.argmin, "argmin", dim, keepdim)

    def _arg(self, fn: Callable, op: str, dim: int | None, keepdim: bool) -> Tensor:
        if self._value.size == 0:
            raise IndexError(f"{op}: the tensor of shape {tuple(self.shape)} is empty")
        if dim is None:
            found = fn(self._value.reshape(-1))
            return constant(np.asarray(found, dtype=np.int64).reshape(
                (1,) * self.ndim if keepdim else ()))
        ax = normalize_axis(dim, max(self.ndim, 1), op)
        found = fn(self._value.reshape(self.shape or (1,)), axis=ax, keepdims=keepdim)
        return constant(np.asarray(found, dtype=np.int64))

    def _extreme(self, rule: Primitive, dim: Any, keepdim: bool, axis: Dims,
                 keepdims: bool | None) -> Any:
        op = rule.name
        if isinstance(dim, Tensor):  # torch's max(x, other): the elementwise maximum
            return self.maximum(dim) if rule is MAX else self.minimum(dim)
        if axis is not None or keepdims is not None or isinstance(dim, (tuple, list)):
            dim, keepdim = _dims_args(op, dim, keepdim, axis, keepdims)
            return self._tied_extreme(rule, dim, keepdim)
        if dim is None:
            return self._tied_extreme(rule, None, False)
        indices = self._arg(np.argmax if rule is MAX else np.argmin, op, dim, True)
        ax = normalize_axis(dim, max(self.ndim, 1), op)
        x = self if self.ndim else self.reshape(1)
        grid = list(np.indices(indices.shape, sparse=True))
        grid[ax] = indices._value
        values = x[tuple(grid)]  # the first extreme entry of each row: it takes the gradient
        if not keepdim:
            values = values.squeeze(ax) if self.ndim else values.reshape(())
            indices = indices.squeeze(ax) if self.ndim else indices.reshape(())
        return values_indices(values, indices)

    def _tied_extreme(self, rule: Primitive, dim: Dims, keepdim: bool) -> Tensor:
        op = rule.name
        axes = normalize_axes(dim, self.ndim, op)
        if any(self.shape[a] == 0 for a in axes) or (not axes and self._value.size == 0):
            raise ValueError(f"{op}: got an empty dim in shape {tuple(self.shape)}")
        x = self._value
        kept = (x.max if rule is MAX else x.min)(axis=axes, keepdims=True)
        data = kept if keepdim else kept.squeeze(axis=axes)
        share = quietly(tie_share, x, kept, axes) if self.requires_grad else None
        return make_node(data, (self,), rule.bind(axes, share))

    def softmax(self, dim: int = -1, *, axis: int | None = None) -> Tensor:
        """exp(x) / sum(exp(x)) along ``dim``, computed stably;  vjp: s * (g - sum(g * s))
        (``tensor_engine.rules.SOFTMAX``)."""
        dim, _ = _dims_args("softmax", dim, False, axis, None, default=-1)
        x = floating(self)
        ax = normalize_axis(dim, max(x.ndim, 1), "softmax")
        out = make_node(quietly(SOFTMAX.on_arrays, x._value, ax), (x,), SOFTMAX.bind(ax))
        return out if x is self else rounded_back(out, self)

    def log_softmax(self, dim: int = -1, *, axis: int | None = None) -> Tensor:
        """x - log(sum(exp(x))) along ``dim``, computed stably;  vjp: g - softmax * sum(g)
        (``tensor_engine.rules.LOG_SOFTMAX``).

        Example:
            >>> Tensor([0.0, 1000.0]).log_softmax().tolist()
            [-1000.0, 0.0]
        """
        dim, _ = _dims_args("log_softmax", dim, False, axis, None, default=-1)
        x = floating(self)
        ax = normalize_axis(dim, max(x.ndim, 1), "log_softmax")
        out = make_node(quietly(LOG_SOFTMAX.on_arrays, x._value, ax), (x,),
                        LOG_SOFTMAX.bind(ax))
        return out if x is self else rounded_back(out, self)

    # ---- running sums (sorting and counting: sorting.py) ----

    def cumsum(self, dim: int, *, dtype: Any = None) -> Tensor:
        """The running sums along ``dim``, out[i] = x[0] + ... + x[i]; integers and bools
        sum to int64, as in torch;  d/dx[i] = g[i] + g[i+1] + ...
        (``tensor_engine.rules.CUMSUM``).

        Example:
            >>> Tensor([1.0, 2.0, 3.0]).cumsum(0).tolist()
            [1.0, 3.0, 6.0]
        """
        x = self if dtype is None else self.to(dtype)
        if x._value.dtype.kind in "biu":
            x = x.to(dtypes.int64)
        ax = normalize_axis(dim, max(x.ndim, 1), "cumsum")
        if x.ndim == 0:
            return x.reshape(1).cumsum(0).reshape(())
        data = quietly(CUMSUM.on_arrays, x._value, ax)
        return make_node(data, (x,), CUMSUM.bind(ax))

    # ---- the four ops that move entries, each rule moving the gradient back (the views,
    # split and chunk made of them: shaping.py; gather, masked_fill, ...: indexing.py) ----

    def reshape(self, *shape: Any) -> Tensor:
        """The same entries in a new shape (one dimension may be -1)
        (``tensor_engine.rules.RESHAPE``).

        Example:
            >>> Tensor([1.0, 2.0, 3.0, 4.0]).reshape(2, -1).shape
            chaingrad.Size([2, 2])
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape):
            raise TypeError(f"reshape: the shape must be ints, got {shape!r}")
        try:
            data = self._value.reshape(shape)
        except ValueError:
            raise ValueError(f"reshape: cannot reshape a tensor of shape {tuple(self.shape)} "
                             f"into {tuple(shape)}") from None
        return make_node(data, (self,), RESHAPE.bind(data.shape))

    def permute(self, *dims: Any) -> Tensor:
        """The dims in the order ``dims`` (``tensor_engine.rules.TRANSPOSE``).

        Example:
            >>> Tensor(np.zeros((2, 3, 4))).permute(2, 0, 1).shape
            chaingrad.Size([4, 2, 3])
        """
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        ndim = self._value.ndim
        if not all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in dims):
            raise TypeError(f"permute: dims must be ints, got {dims!r}")
        if len(dims) != ndim or any(not -ndim <= a < max(ndim, 1) for a in dims) or len(
                {a % max(ndim, 1) for a in dims}) != ndim:
            raise ValueError(f"permute: dims {dims} are not a permutation of the {ndim} "
                             f"dims of shape {tuple(self.shape)}")
        axes = tuple(int(a) % ndim for a in dims)
        return make_node(self._value.transpose(axes), (self,), TRANSPOSE.bind(axes))

    def broadcast_to(self, *shape: Any) -> Tensor:
        """Repeat along new or size-1 dims, as torch.broadcast_to; the driver sums the
        gradient back (``tensor_engine.rules.BROADCAST_TO``)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        try:
            data = np.broadcast_to(self._value, shape)
        except (ValueError, TypeError):
            raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(self.shape)} "
                             f"to {shape!r}") from None
        return make_node(data, (self,), BROADCAST_TO.bind(data.shape))

    def __getitem__(self, index: Any) -> Tensor:
        """x[index] with ints, slices, None, ..., integer arrays or tensors, or boolean
        masks; the gradient is scattered back into zeros, an entry picked twice getting both
        (``tensor_engine.rules.GETITEM``).

        Example:
            >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> x[[0, 0, 2]].sum().backward()
            >>> x.grad.tolist()
            [2.0, 0.0, 1.0]
        """
        checked = check_index(index)
        try:
            data = self._value[checked]
        except IndexError as exc:
            raise IndexError(f"getitem: {exc} (tensor of shape {tuple(self.shape)})") from None
        out = make_node(data, (self,), GETITEM.bind(checked))
        if np.may_share_memory(data, self._value):  # a view: written in place, it writes x
            out._view_of = (self, index)
        return out

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (on a leaf); returns the tensor."""
        if self._rule is not None and not requires_grad:
            raise RuntimeError("requires_grad_: you can only change requires_grad flags of "
                               "leaf variables; use y.detach() for a tensor without a graph")
        if requires_grad and not dtypes.is_floating_dtype(self._value.dtype):
            raise RuntimeError(f"requires_grad_: only Tensors of floating point dtype can "
                               f"require gradients, this one is {self.dtype}")
        self.requires_grad = bool(requires_grad)
        return self

    # ---- backward and friends ----

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None, *, grad: Any = None) -> None:
        """Add d(self)/d(t) into ``t.grad`` for every ``t`` that requires a gradient.

        Args:
            gradient: d(loss)/d(self), of self's shape; may be left out when self has one
                element (it is then 1). ``grad=`` is its older name.
            retain_graph: Keep what the graph's rules need for another backward pass
                through it; by default (None) only with ``create_graph``, as in torch. A
                second pass through a freed node that needs it raises torch's error.
            create_graph: Make every ``.grad`` a Tensor with a graph of its own, for
                higher-order derivatives.
            inputs: Not supported yet (an error says so).

        Calling it again (after ``retain_graph=True``) adds the gradients again (reset
        ``.grad`` to None in between).

        If the loss is not finite, or a gradient computed is not, it raises
        ``AnomalyError`` naming the op that made the nan or inf (torch's anomaly detection,
        on by default here: it costs nothing while the numbers are finite;
        ``chaingrad.autograd.set_detect_anomaly(False)`` lets nan flow into ``.grad``, as
        torch does by default), and leaves every ``.grad`` as it was.
        With ``create_graph`` a node's ``.grad`` refers to a graph that refers back to the
        node (as in PyTorch): reset the ``.grad``s when done so that both can be freed.

        Example:
            >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
            >>> (x * x).backward(gradient=Tensor([1.0, 1.0, 0.5]))
            >>> x.grad
            tensor([2., 4., 3.])
        """
        if inputs is not None:
            raise NotImplementedError("chaingrad.Tensor has no backward(inputs=...) yet; use "
                                      "chaingrad.autograd.grad(output, inputs)")
        if grad is not None:
            if gradient is not None:
                raise TypeError("backward: got both gradient= and grad= (the same argument)")
            gradient = grad
        seed = self._seed(gradient, create_graph, "backward")
        with np.errstate(all="ignore"):  # once per pass: nan and inf are the anomaly check's
            autodiff.backward([self], [seed], create_graph, retain_graph=retain_graph)

    def _seed(self, grad: Any, create_graph: bool, where: str) -> Any:
        """d(loss)/d(self) to start a backward pass from: ``grad`` (checked), or ones."""
        if not self.requires_grad:
            raise RuntimeError(f"{where}: element 0 of tensors does not require grad and does "
                               "not have a grad_fn (make its inputs with requires_grad=True, "
                               "outside no_grad())")
        if grad is None:
            if self._value.size != 1:
                raise RuntimeError(f"{where}: grad can be implicitly created only for scalar "
                                   f"outputs (the output has shape {tuple(self.shape)}; pass "
                                   "gradient=, d(loss)/d(output) of that shape, or reduce it "
                                   "first, e.g. .sum())")
            seed = np.ones_like(self._value)
        else:
            seed = as_array(grad, self._value.dtype, where)  # not copied: no .grad will be
            # the caller's array (``autodiff._own``), and the rules never write into it
            if seed.shape != self.shape:
                raise ValueError(f"{where}: grad has shape {seed.shape}, the output has "
                                 f"shape {tuple(self.shape)}")
            if gradmode.anomaly_checks and not guards.all_finite(seed):
                raise AnomalyError(f"{where}: the gradient given holds nan or inf "
                                           "(set_detect_anomaly(False) lets it flow)")
        return constant(seed.copy()) if create_graph else seed

    @staticmethod
    def _as_grad(g: Any) -> Tensor:
        """What ``.grad`` holds once a backward pass is done: a Tensor (the driver works on
        arrays, and hands each node's total through here; see ``autodiff``)."""
        return g if isinstance(g, Tensor) else constant(np.asarray(g))

    @property
    def grad_fn(self) -> GradFn | None:
        """The op that made this tensor (None for a leaf), named as torch names it."""
        return None if self._rule is None else GradFn(self)

    @property
    def is_leaf(self) -> bool:
        """True for a tensor no recorded op made (torch's)."""
        return self._rule is None

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's ``.grad`` after ``backward()`` (as torch's; without
        it, only leaves keep theirs). Nothing to do for a leaf.

        Example:
            >>> x = Tensor([1.0, 2.0], requires_grad=True)
            >>> y = x * 3
            >>> y.retain_grad()
            >>> y.sum().backward()
            >>> y.grad, x.grad
            (tensor([1., 1.]), tensor([3., 3.]))
        """
        if self._rule is not None:
            self._keeps_grad = True
        elif not self.requires_grad:
            raise RuntimeError("retain_grad: can't retain_grad on Tensor that has "
                               "requires_grad=False")

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf tensor whose ``.grad`` is kept (``retain_grad()``)."""
        return self._rule is not None and self._keeps_grad

    def detach(self) -> Tensor:
        """The same data (shared, not copied) in a new leaf that records no graph."""
        return constant(self._value)

    @property
    def data(self) -> Tensor:
        """This tensor's numbers as a new leaf that shares them (no copy), requires no
        gradient and is outside the graph, as torch's ``x.data``.

        Writing through it (``p.data -= lr * p.grad``, ``p.data.zero_()``, ``p.data[0] = 1``)
        changes this tensor, and, as in torch, is not counted as a write to it: a graph that
        saved this tensor runs its backward on the new numbers, without an error. That is
        why torch recommends ``detach()`` and ``no_grad()`` instead. Setting ``x.data = y``
        (a Tensor, or an array as chaingrad also takes) makes ``x`` hold ``y``'s numbers,
        shape and dtype.

        Example:
            >>> w = Tensor([1.0, 2.0], requires_grad=True)
            >>> w.data.requires_grad, w.data.is_leaf
            (False, True)
            >>> w.data -= 0.5 * w.data   # w itself changes
            >>> w
            tensor([0.5000, 1.0000], requires_grad=True)
        """
        return constant(self._value)

    @data.setter
    def data(self, value: Any) -> None:
        if isinstance(value, Tensor):
            array = value._value
        elif isinstance(value, (np.ndarray, np.generic, list, tuple, Real)):
            array = to_array(value, None, "Tensor.data", copy=False)
        else:
            raise TypeError(f"Tensor.data: needs a Tensor (or an array), got "
                            f"{type(value).__name__}")
        if self.requires_grad and array.dtype.kind != "f":
            raise RuntimeError(f"Tensor.data: data set to a tensor that requires gradients "
                               f"must be floating point, got {dtypes.of(array.dtype)}")
        self._value = array

    def detach_(self) -> Tensor:
        """This tensor made a leaf that records no graph, in place."""
        self._a = self._b = self._rule = self._made_at = None
        self.requires_grad = False
        return self

    def clone(self) -> Tensor:
        """A copy of the data, through which gradients flow (a reshape to the same shape)."""
        return make_node(self._value.copy(), (self,), RESHAPE.bind(self._value.shape))

    def contiguous(self) -> Tensor:
        """Itself (chaingrad never needs a contiguous copy)."""
        return self

    def any(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        """Whether any entry is nonzero (over ``dim``), as a bool tensor."""
        axes = normalize_axes(dim, self.ndim, "any")
        return constant(np.asarray(self._value.any(axis=axes, keepdims=keepdim)))

    def all(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        """Whether every entry is nonzero (over ``dim``), as a bool tensor."""
        axes = normalize_axes(dim, self.ndim, "all")
        return constant(np.asarray(self._value.all(axis=axes, keepdims=keepdim)))

    def __dir__(self) -> list[str]:
        """The attributes a Tensor has (without torch's names it lacks, see ``_NotYet``)."""
        return [name for name in super().__dir__() if name not in _NOT_YET]

    # ---- what chaingrad.autograd asks of an engine ----

    @staticmethod
    def _lift(x: Any, like: Tensor | None) -> Tensor | None:
        """x as a Tensor: a Tensor stays itself; an array or a number becomes a constant (a
        number takes ``like``'s dtype); anything else is None."""
        if isinstance(x, Tensor):
            return x
        if number(x) is not None and not isinstance(x, bool):
            return constant(np.asarray(x, dtype=np.float32 if like is None else like._value.dtype))
        if isinstance(x, ARRAY_TYPES):
            return constant(as_array(x, None, "Tensor"))
        return None

    @staticmethod
    def _from_rule(data: Any, inputs: list[Tensor], rule: Rule) -> Tensor:
        """The node of ``data``, computed from ``inputs`` by ``rule`` (``compile``'s)."""
        return make_node(data, tuple(inputs), rule)

    def _apply(self, rule: Rule, *others: Tensor) -> Tensor:
        """The node of ``rule`` (a primitive, or one bound to its parameters) applied to this
        tensor and ``others``: the primitive's forward on their arrays, in the default float
        dtype for an op that computes in floats (``floats``), numpy's warnings off (nan and
        inf are torch's results; ``backward()`` names the op they come from)."""
        prim = rule.primitive
        inputs = (self, *others) if others else (self,)
        if prim.floats and (others or self._value.dtype.kind != "f"):
            inputs = tuple(map(floating, inputs))
        if prim.array is None:
            return make_node(_forward_of_users(rule, inputs), inputs, rule)
        if others:
            return make_node(quietly(prim.on_arrays, *map(_value_of, inputs), *rule.params),
                             inputs, rule)
        out = make_node(quietly(prim.on_arrays, inputs[0]._value, *rule.params), inputs, rule)
        return out if inputs[0] is self else rounded_back(out, self)


_value_of = attrgetter("_value")


def _forward_of_users(rule: Rule, inputs: tuple) -> np.ndarray:
    """A user's primitive's forward (``chaingrad.primitive``) on the inputs' arrays, numpy's
    warnings off, its result made an array; a ``ValueError`` naming the op where it fails."""
    try:
        data = quietly(rule.primitive.on_arrays, *[t._value for t in inputs], *rule.params)
    except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError) as exc:
        shapes = ", ".join(str(tuple(t.shape)) for t in inputs)
        raise ValueError(f"{rule.name}: forward failed on inputs of shapes ({shapes}): "
                         f"{exc}") from exc
    return data if type(data) is np.ndarray else as_array(data, None, rule.name)


class _NotYet:
    """A torch Tensor attribute that chaingrad lacks: reading it raises an AttributeError
    that says so (``chaingrad.Tensor has no 'cummax' yet``), never a different result.

    These are class attributes rather than a ``__getattr__``: a class with ``__getattr__``
    makes Python look up every attribute of every tensor the slow way (25% of a tiny
    tensor's forward, 20% of its backward: ``benchmarks/versions.py``, workload T3).
    A user's own attribute of the same name still takes precedence (it is in the instance's
    ``__dict__``).
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        raise torch_names.missing("chaingrad.Tensor", self.name, torch_names.TENSOR)


_NOT_YET = torch_names.TENSOR - set(dir(Tensor))
for _name in _NOT_YET:
    setattr(Tensor, _name, _NotYet(_name))
del _name


def _named(out: Tensor, op: str) -> Tensor:
    """The last node of a composite op (``x - y`` is ``x + (-y)``) named after the op, as
    drawings, ``explain`` and ``grad_fn`` show it (``SubBackward0``); its rule is the same."""
    if out._rule is not None:
        out._rule = out._rule.primitive.bind(*out._rule.params, name=op)
    return out


def rounded_quotient(x: Tensor, other: Any, rounding_mode: Any) -> Tensor:
    """torch.div's quotient with ``rounding_mode`` ``'trunc'`` (toward zero) or ``'floor'``
    (down), in torch's result dtype (integers stay integers), rounded as torch rounds it:
    a float quotient floored as Python's ``//`` floors it (``1.0 // 0.1`` is 9.0, where
    ``floor(1.0 / 0.1)`` is 10), a division by zero giving torch's inf or nan.

    The quotient is flat between its steps, so its gradient is zero, as torch's: it is
    chosen by a ``where`` whose other branch is ``0 * x + 0 * other``, so that zeros reach
    x and other.

    Example:
        >>> x = Tensor([7.0, -7.0, 1.0], requires_grad=True)
        >>> q = rounded_quotient(x, 2.0, "trunc")
        >>> q.sum().backward()
        >>> q.tolist(), x.grad.tolist()
        ([3.0, -3.0, 0.0], [0.0, 0.0, 0.0])
    """
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found {rounding_mode!r}")
    both = operands("div", x, other)
    if both is NotImplemented:
        raise TypeError(f"div: needs a number, an array or a Tensor to divide by, got "
                        f"{type(other).__name__}")
    x, y, dtype = both
    a, b = np.broadcast_arrays(x._value.astype(dtype, copy=False),
                               y._value.astype(dtype, copy=False))
    if dtype.kind in "iu":
        if np.any(b == 0):
            raise RuntimeError("ZeroDivisionError: div: an integer divided by zero "
                               f"(rounding_mode={rounding_mode!r})")
        quotient = np.floor_divide(a, b)
        if rounding_mode == "trunc":  # up by one where the floor went below a negative one
            quotient += (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            quotient = np.floor_divide(a, b) if rounding_mode == "floor" else np.trunc(a / b)
    rounded = constant(np.asarray(quotient, dtype=dtype))
    if not gradmode.is_grad_enabled() or not (x.requires_grad or y.requires_grad):
        return rounded
    return _named(where_node(np.ones(a.shape, dtype=bool), rounded, x * 0 + y * 0), "/")


def where_node(condition: Any, x: Any, y: Any) -> Tensor:
    """torch.where's node, x or y (or both) a Tensor, the other a Tensor, an array or a
    number: x where ``condition`` holds, else y, in torch's result dtype
    (``tensor_engine.rules.WHERE``)."""
    if isinstance(condition, Tensor):
        condition = condition._value
    cond = np.asarray(condition)
    if cond.dtype != bool:
        if cond.dtype.kind not in "biuf":
            raise TypeError(f"where: condition must be booleans, got dtype {cond.dtype}")
        cond = cond != 0
    if isinstance(x, Tensor):
        both = operands("where", x, y)
        x, y = (None, None) if both is NotImplemented else both[:2]
    else:
        both = operands("where", y, x)
        y, x = (None, None) if both is NotImplemented else both[:2]
    if x is None:
        raise TypeError("where: expected Tensors, arrays or numbers")
    try:
        data = np.where(cond, x._value, y._value)
    except ValueError:
        raise ValueError(f"where: shapes {cond.shape}, {tuple(x.shape)} and {tuple(y.shape)} "
                         "do not broadcast") from None
    return make_node(data.astype(both[2], copy=False), (x, y), WHERE.bind(cond))


def _where(condition: np.ndarray, x: Tensor, y: Tensor, dtype: np.dtype) -> Tensor:
    """x where ``condition`` holds, else y (``tensor_engine.rules.WHERE``)."""
    data = np.where(condition, x._value, y._value).astype(dtype, copy=False)
    return make_node(data, (x, y), WHERE.bind(condition))


def _pick(op: str, wins: Any, x: Tensor, other: object) -> Tensor:
    """x where ``wins(x, other)``, other where ``wins(other, x)``, and where they tie their
    mean (the same number), so that each gets half of the gradient, as torch's does; a nan
    on either side wins (torch's maximum and minimum propagate it)."""
    both = operands(op, x, other)
    if both is NotImplemented:
        raise TypeError(f"{op}: expected a Tensor, an array or a number, got "
                        f"{type(other).__name__}")
    a, b, dtype = both
    _broadcast_shape(op, a, b)
    if dtype.kind != "f":
        return constant(np.where(wins(a._value, b._value), a._value, b._value).astype(dtype))
    tie = _where(a._value == b._value, (a + b) * 0.5, b, dtype)
    return _where(wins(a._value, b._value) | np.isnan(a._value), a, tie, dtype)  # nan wins


def _no_bool_minus(x: Tensor, other: object) -> None:
    """torch's error for ``-`` with a bool tensor on either side."""
    if x._value.dtype.kind == "b" or (isinstance(other, Tensor) and other._value.dtype.kind == "b"):
        raise RuntimeError("-: Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


def _broadcast_shape(op: str, a: Tensor, b: Tensor) -> None:
    """A ValueError naming ``op`` if the shapes of ``a`` and ``b`` do not broadcast."""
    try:
        np.broadcast_shapes(a._value.shape, b._value.shape)
    except ValueError:
        raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         "broadcast") from None


def _dims_args(op: str, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None,
               default: Any = None) -> tuple[Any, bool]:
    """torch's ``dim``/``keepdim`` or numpy's ``axis``/``keepdims`` (not both)."""
    if axis is not None:
        if dim is not None and dim != default:
            raise TypeError(f"{op}: got both dim= and axis= (the same argument)")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise TypeError(f"{op}: got both keepdim= and keepdims= (the same argument)")
        keepdim = keepdims
    return dim, bool(keepdim)
