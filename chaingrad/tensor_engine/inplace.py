"""A Tensor's in-place writes, and the version counter that guards them (the ``InPlace``
part of ``Tensor``).

As in PyTorch, an in-place op on a tensor in a graph (``y += b``, ``y[i] = v``,
``y.mul_(2)``), or one that writes a tensor that requires grad into another, is recorded:
the tensor becomes the op's output, a node whose input is the tensor as it was (a copy of
its numbers, kept for the rules that read them). A node made from the tensor before the
write still gets its gradient to the tensor as it was then (``_reroute``). A view
(``x[:, 0]``) written in place writes its base, ``x``, and stays its view. A leaf that
requires grad cannot be written in place while the graph is recorded (torch's error); under
``no_grad()`` it can, and stays a leaf.

Each write is counted (``guards.writes``): a node made before it whose rule reads numbers
that were written over (its primitive's ``saves``, PyTorch's saved tensors) refuses its
backward step (``guards.check_kept``), as torch's version counter makes it.

Example:
    >>> from chaingrad import Tensor, no_grad
    >>> w = Tensor([1.0, 2.0], requires_grad=True)
    >>> with no_grad():
    ...     w -= 0.5
    >>> w
    tensor([0.5000, 1.5000], requires_grad=True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from numbers import Real
from typing import Any

import numpy as np

from .. import autodiff, gradmode, guards, reference
from . import dtypes, sampling
from .arrays import SelfTensor, check_index, quietly
from .rules import SETITEM

Operand = Any  # a Tensor, an array or a number

_UFUNC_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""The dtypes whose plain ``+=`` (``-=``, ...) numpy writes in place (``_ufunc_in_place``)."""


@functools.cache
def _kept(primitive: Any) -> tuple[frozenset[str], ...] | None:
    """For each input's gradient, what its primitive's rule reads of the forward pass
    (``Primitive.saves``: ``x``, ``y``, ``out``); None for a rule that may read anything
    (a user's)."""
    if primitive.saves is None:
        return None
    return tuple(frozenset(entry.split()) for entry in primitive.saves)



def _holds_array(param: Any) -> bool:
    """Whether a rule's parameter is an array, or a tuple holding one (an index)."""
    if isinstance(param, tuple):
        return any(_holds_array(p) for p in param)
    return isinstance(param, np.ndarray)



def _made_from(root: Any, tensor: Any, old: Any) -> None:
    """Every node of ``root``'s graph made from ``tensor`` made from ``old`` instead: root is
    what ``tensor`` becomes in an in-place write (``x[i] -= 1`` computes ``x[i] - 1`` from
    x first), and its nodes saw x as it was, ``old``; without this the graph would go round
    from x back to x. The walk does not enter ``old``, whose graph was made before."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node is old or node is tensor or id(node) in seen:
            continue
        seen.add(id(node))
        inputs = node._prev
        if any(x is tensor for x in inputs):
            then = tuple(old if x is tensor else x for x in inputs)
            node._a, node._b = autodiff.input_slots(then)
        stack.extend(inputs)


class InPlace:
    """The in-place methods of ``Tensor`` (torch's ``add_``, ``+=``, ``x[i] = v``, the random
    fills, ...), with the checks and the counting of writes."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> None:
        """``x[index] = value``, as torch: recorded in the graph where x is in one (or value
        requires grad); on a leaf that requires grad, only under ``no_grad()``.

        Example:
            >>> from chaingrad import Tensor
            >>> t = Tensor(np.ones((2, 3)))
            >>> t[:, 1] = 0
            >>> t.tolist()
            [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
        """
        view = value.__dict__.get("_view_of") if isinstance(value, autodiff.Node) else None
        if view is not None and view[0] is self and view[1] is index:
            return  # x[i] += v wrote x through the view x[i] already (see _record)
        if isinstance(value, autodiff.Node) and not isinstance(value, InPlace) or \
                not isinstance(value, (autodiff.Node, Real, np.ndarray, np.generic, list, tuple)):
            raise TypeError(f"setitem: the value must be a number, a Tensor or an array, got "
                            f"{type(value).__name__}")
        checked = check_index(index)
        if self._records("setitem", value):
            self._record("setitem", lambda x: x._put(checked, value), at=checked)
            return
        self._check_in_place("setitem")
        try:
            self._value[checked] = value._value if isinstance(value, autodiff.Node) else value
        except (IndexError, ValueError) as exc:
            raise type(exc)(f"setitem: {exc} (tensor of shape {tuple(self.shape)})") from None
        self._wrote()

    def _records(self, op: str, operand: Any = None) -> bool:
        """Whether an in-place op goes in the graph, as torch records it: grad mode is on,
        and this tensor is in a graph (an op made it), or the value written requires grad.
        A leaf that requires grad cannot be written in place then (torch's error)."""
        if not gradmode.is_grad_enabled():
            return False
        if self.requires_grad and self._rule is None:
            raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an "
                               "in-place operation. (Do it under chaingrad.no_grad().)")
        return self._rule is not None or (isinstance(operand, autodiff.Node)
                                          and operand.requires_grad)

    def _record(self, op: str, compute: Callable[[Any], Any], at: Any = None) -> Any:
        """An in-place op on a tensor in a graph, recorded: ``compute(old)`` gives the op's
        result out of place from ``old``, the tensor as it was (a copy of its numbers and
        its place in the graph); this tensor takes the result's numbers (in its own array,
        which its views share) and becomes its node. A view ``x[index]`` writes its base
        instead, at its index, and becomes the view of the new base. ``at``, an index, says
        that the result differs from the tensor only there (``x[index] = v``): only those
        entries are copied in."""
        view = self.__dict__.get("_view_of")
        if view is not None and view[0].requires_grad and view[0]._rule is None:
            raise RuntimeError(f"{op}: a view of a leaf Variable that requires grad is being "
                               "used in an in-place operation. (Do it under "
                               "chaingrad.no_grad().)")
        old = self._as_it_was()
        new = compute(old)
        _made_from(new, self, old)
        if view is not None:
            base, index = view
            base._record(op, lambda x: x._put(check_index(index), new))
            self._become(base[index], old, view)
            return self
        if self._a is not None and any(np.may_share_memory(self._value, x._value)
                                       for x in self._prev):
            raise NotImplementedError(
                f"{op}: this tensor shares its numbers with the tensor it was made from (a "
                "view: reshape, transpose, expand); chaingrad records in-place writes through "
                "x[index] views only: write y = y ... (a new tensor) instead")
        if new.shape != self.shape:
            raise RuntimeError(f"{op}: output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(new.shape)}")
        if at is None:
            self._value[...] = new._value
        else:
            self._value[at] = new._value[at]
        self._become(new, old, None)
        return self

    def _as_it_was(self) -> Any:
        """A new node that is this tensor as it is now (a copy of its numbers, its rule and
        inputs), for the nodes made from it so far and the op about to write over it."""
        old = self._node(self._value.copy(), (), None)
        old._rule, old._a, old._b = self._rule, self._a, self._b
        old.requires_grad, old._made_at = self.requires_grad, self._made_at
        old._changed_at = self._changed_at
        if self.label:
            old.label = self.label
        return old

    def _become(self, new: Any, old: Any, view: Any) -> None:
        """This tensor made the node ``new`` (its rule and inputs; its numbers are this
        tensor's already), after a write that is counted; ``old``, what it was, is kept in
        ``_versions`` for the nodes made from it until now (``_reroute``)."""
        self._wrote()
        self.__dict__.setdefault("_versions", []).append((guards.writes[0], old))
        self._rule, self._a, self._b = new._rule, new._a, new._b
        self.requires_grad, self._made_at = new.requires_grad, guards.writes[0]
        if view is not None:
            self._view_of = view

    def _put(self, index: Any, value: Any) -> Any:
        """This tensor with ``value`` written at ``index``, out of place: a ``setitem``
        node (``rules.SETITEM``), the value cast to this tensor's dtype."""
        if not isinstance(value, autodiff.Node):
            value = self._constant(np.asarray(value, dtype=self._value.dtype))
        elif value._value.dtype != self._value.dtype:
            value = value.to(self._value.dtype)
        return self._apply(SETITEM.bind(index), value)

    def _check_in_place(self, op: str) -> None:
        """A plain write (nothing recorded): not into a leaf that requires grad while the
        graph is recorded, nor into read-only numbers (a broadcast's)."""
        if self.requires_grad and self._rule is None and gradmode.is_grad_enabled():
            raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an "
                               "in-place operation. (Do it under chaingrad.no_grad().)")
        if self._rule is not None and gradmode.is_grad_enabled():  # not recorded: refused
            raise NotImplementedError(  # rather than give a wrong gradient
                f"{op}: chaingrad does not record this in-place op in a graph, and this "
                "tensor was computed in one; write y = y ... (a new tensor) instead, or do "
                "it under chaingrad.no_grad()")
        if not self._value.flags.writeable:
            raise RuntimeError(f"{op}: this tensor's data is a read-only view (of a "
                               "broadcast, say); make a copy with .clone() first")

    def _write(self, op: str, value: np.ndarray) -> Any:
        """Put ``value`` (computed out of place) into this tensor's own array: a plain write,
        counted (see ``_check_in_place``)."""
        self._check_in_place(op)
        if value.shape != self._value.shape:
            raise RuntimeError(f"{op}: output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(value.shape)}")
        if value.dtype != self._value.dtype and not np.can_cast(value.dtype, self._value.dtype,
                                                                 "same_kind"):
            raise RuntimeError(f"{op}: result type {dtypes.of(value.dtype).name} can't be cast "
                               f"to the desired output type {self.dtype.name}")
        self._value[...] = value
        self._wrote()
        return self

    def _wrote(self) -> None:
        """Count an in-place write: a node made before it that reads this tensor's numbers
        (or, for a view, its base's) refuses to run its backward step (``_changed_input``),
        as torch's version counter makes it."""
        guards.writes[0] += 1
        self._changed_at = guards.writes[0]
        view = self.__dict__.get("_view_of")
        if view is not None:
            view[0]._changed_at = guards.writes[0]

    def _in_place(self, op: str, compute: Callable[[Any], Any], operand: Any = None,
                  ufunc: Any = None) -> Any:
        """``op`` done in place: recorded in the graph (``_record``), or a plain write of
        ``compute``'s numbers (then neither this tensor nor the operand takes a gradient,
        or grad mode is off: computing them makes no graph).

        A plain write of ``+=``, ``-=``, ``*=`` or ``/=`` (``ufunc``: numpy's) has a fast
        twin, ``_ufunc_in_place``: the same numbers written by the ufunc straight into this
        tensor's array, where ``compute`` makes a Tensor and copies its array in (an
        optimizer's ``p.data += -lr * p.grad``; ``x += y`` at 512x192 float32: 15 us where
        it took 38, torch's 11: ``benchmarks/updates.py``)."""
        if self._records(op, operand):
            return self._record(op, compute)
        if ufunc is not None and not reference.only and self._ufunc_in_place(op, ufunc, operand):
            return self
        return self._write(op, compute(self)._value)

    def _ufunc_in_place(self, op: str, ufunc: Any, operand: Any) -> bool:
        """``ufunc(x, operand, out=x)`` on this tensor's array, for a floating x (float32 or
        float64) and an operand of its dtype and shape (a Tensor or an array) or a Python
        number: then ``compute``'s numbers are these (an elementwise op rounds each entry
        alike, in x's dtype) and the write is counted as ``_write`` counts it. False, with
        nothing done, for any other case (broadcasting, promotion, integers, bfloat16),
        which ``compute`` handles."""
        x = self._value
        if x.dtype not in _UFUNC_DTYPES:
            return False
        if type(operand) is float or type(operand) is int and abs(operand) <= 2**53:
            other = operand  # (a larger int: compute's promotion rules)
        else:
            other = getattr(operand, "_value", operand)
            if type(other) is not np.ndarray or other.dtype != x.dtype or other.shape != x.shape:
                return False
        self._check_in_place(op)
        quietly(ufunc, x, other, x)  # numpy copies first where other overlaps x (x += x.T)
        self._wrote()
        return True

    def _reroute(self) -> None:
        """An input of this node that was written in place (the write recorded) after this
        node was made from it is, for this node, the tensor as it was then: the version kept
        in its ``_versions``, which the gradient goes to."""
        inputs, made = self._prev, self._made_at
        then = []
        for x in inputs:
            versions = x.__dict__.get("_versions")
            if versions and versions[-1][0] > made:
                x = next(old for at, old in versions if at > made)
            then.append(x)
        if any(a is not b for a, b in zip(then, inputs)):
            self._a, self._b = autodiff.input_slots(tuple(then))

    def _reads_forward(self) -> bool:
        """Whether the rule reads numbers of the forward pass (an input's or the output's,
        or an array it was bound to, as an index) for a gradient that is needed: what torch
        calls the node's saved tensors (``Primitive.saves``)."""
        kept = _kept(self._rule.primitive)
        if kept is None or any(_holds_array(p) for p in self._rule.params):
            return True
        last = len(kept) - 1  # one entry may serve every input (concatenate's)
        return any(kept[min(k, last)] for k, x in enumerate(self._prev) if x.requires_grad)

    def _changed_input(self) -> Any:
        """An input changed in place since this node was made, whose numbers the rule
        reads for a gradient that is needed (that gradient would be wrong); else None."""
        inputs, kept = self._prev, _kept(self._rule.primitive)
        if kept is None:  # a user's rule: any input may be read
            read = set(range(len(inputs)))
        else:
            last = len(kept) - 1
            needed = [kept[min(k, last)] for k, x in enumerate(inputs) if x.requires_grad]
            read = {"xy".index(who) for saves in needed for who in saves if who in ("x", "y")}
            if any("out" in saves for saves in needed) and self._changed_at > self._made_at:
                return self  # its own numbers, which its rule reads, were written over
        return next((inputs[k] for k in sorted(read)
                     if inputs[k]._changed_at > self._made_at), None)

    def add_(self: SelfTensor, other: Operand, *, alpha: float = 1) -> SelfTensor:
        """x += alpha * other, in place (see ``_in_place``)."""
        return self._in_place("add_", lambda x: x.add(other, alpha=alpha), other,
                              np.add if alpha == 1 else None)

    def sub_(self: SelfTensor, other: Operand, *, alpha: float = 1) -> SelfTensor:
        """x -= alpha * other, in place."""
        return self._in_place("sub_", lambda x: x.sub(other, alpha=alpha), other,
                              np.subtract if alpha == 1 else None)

    def mul_(self: SelfTensor, other: Operand) -> SelfTensor:
        """x *= other, in place."""
        return self._in_place("mul_", lambda x: x * other, other, np.multiply)

    def div_(self: SelfTensor, other: Operand, *,
             rounding_mode: str | None = None) -> SelfTensor:
        """x /= other, in place (an integer tensor cannot hold the quotient, as in torch),
        or rounded with ``rounding_mode`` (see ``Tensor.div``), which an integer one can."""
        return self._in_place("div_", lambda x: x.div(other, rounding_mode=rounding_mode),
                              other)

    def pow_(self: SelfTensor, exponent: Operand) -> SelfTensor:
        """x **= exponent, in place."""
        return self._in_place("pow_", lambda x: x**exponent, exponent)

    def clamp_(self: SelfTensor, min: float | None = None, max: float | None = None) -> SelfTensor:  # noqa: A002
        """x clamped into [min, max], in place."""
        return self._in_place("clamp_", lambda x: x.clamp(min, max))

    def __iadd__(self: SelfTensor, other: Operand) -> SelfTensor:
        return self._in_place("+=", lambda x: x + other, other, np.add)

    def __isub__(self: SelfTensor, other: Operand) -> SelfTensor:
        return self._in_place("-=", lambda x: x - other, other, np.subtract)

    def __imul__(self: SelfTensor, other: Operand) -> SelfTensor:
        return self._in_place("*=", lambda x: x * other, other, np.multiply)

    def __itruediv__(self: SelfTensor, other: Operand) -> SelfTensor:
        return self._in_place("/=", lambda x: x / other, other, np.true_divide)

    def zero_(self: SelfTensor) -> SelfTensor:
        """Every entry 0, in place (in a graph: the gradient stops here, as torch's)."""
        if self._records("zero_"):
            return self._record("zero_", lambda x: x._put(Ellipsis, 0))
        return self._write("zero_", np.zeros_like(self._value))

    def fill_(self: SelfTensor, value: Any) -> SelfTensor:
        """Every entry ``value`` (a number, or a one-element Tensor), in place."""
        if self._records("fill_", value):
            return self._record("fill_", lambda x: x._put(Ellipsis, value))
        value = value.item() if isinstance(value, autodiff.Node) else value
        return self._write("fill_", np.full_like(self._value, value))

    def copy_(self: SelfTensor, src: Any) -> SelfTensor:
        """The entries of ``src`` (broadcast to this shape), in place, cast to this dtype."""
        if self._records("copy_", src):
            return self._record("copy_", lambda x: x._put(Ellipsis, src))
        src = src._value if isinstance(src, autodiff.Node) else np.asarray(src)
        try:
            value = np.broadcast_to(src, self.shape).astype(self._value.dtype)
        except ValueError:
            raise RuntimeError(f"copy_: the source of shape {src.shape} does not broadcast to "
                               f"{tuple(self.shape)}") from None
        return self._write("copy_", value)

    def uniform_(self: SelfTensor, a: float = 0.0, b: float = 1.0, *,
                 generator: Any = None) -> SelfTensor:
        """Entries drawn uniformly from [a, b), in place (``sampling.draw_uniform``)."""
        return self._write("uniform_", sampling.draw_into(
            self._value, sampling.draw_uniform, generator, a, b, op="uniform_"))

    def normal_(self: SelfTensor, mean: float = 0.0, std: float = 1.0, *,
                generator: Any = None) -> SelfTensor:
        """Entries drawn from N(mean, std**2), in place (``sampling.draw_normal``)."""
        return self._write("normal_", sampling.draw_into(
            self._value, sampling.draw_normal, generator, mean, std,
            contiguous=self._value.flags.c_contiguous, op="normal_"))

    def exponential_(self: SelfTensor, lambd: float = 1.0, *, generator: Any = None) -> SelfTensor:
        """Entries drawn from the exponential distribution of rate ``lambd``, in place
        (``sampling.draw_exponential``)."""
        return self._write("exponential_", sampling.draw_into(
            self._value, sampling.draw_exponential, generator, lambd, op="exponential_"))

    def random_(self: SelfTensor, from_: int | None = None, to: int | None = None, *,
                generator: Any = None) -> SelfTensor:
        """Integers drawn uniformly, in place: ``random_(to)`` from [0, to), ``random_(from,
        to)`` from [from, to), ``random_()`` torch's whole range for the dtype
        (``sampling.draw_integers``, ``sampling.random_bits``)."""
        if from_ is None and to is None:
            drawn = sampling.draw_into(self._value, sampling.random_bits, generator)
        else:
            low, high = (0, from_) if to is None else (from_, to)
            drawn = sampling.draw_into(self._value, sampling.draw_integers, generator, low, high)
        return self._write("random_", drawn)

    def bernoulli_(self: SelfTensor, p: Any = 0.5, *, generator: Any = None) -> SelfTensor:
        """Each entry 1 with probability ``p`` (a number, or a Tensor of them broadcast to
        this shape), else 0, in place (``sampling.draw_bernoulli``)."""
        chances = p._value if isinstance(p, autodiff.Node) else p
        return self._write("bernoulli_", sampling.draw_into(
            self._value, sampling.draw_bernoulli, generator, chances, op="bernoulli_"))

