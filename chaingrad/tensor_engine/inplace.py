"""A Tensor's in-place writes, and the version counter that guards them (the ``InPlace``
part of ``Tensor``).

PyTorch's rule for changing a tensor in place: not a leaf that requires grad while the graph
is recorded, and not a tensor computed in a graph (chaingrad has no in-place nodes yet, so it
refuses rather than give a wrong gradient). Each write is counted (``guards.writes``): a node
made before it whose rule reads the changed numbers (its primitive's ``saves``, PyTorch's
saved tensors) refuses its backward step (``guards.check_kept``), as torch's version counter
makes it.

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

from .. import autodiff, gradmode, guards
from . import dtypes, sampling
from .arrays import check_index

Operand = Any  # a Tensor, an array or a number


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



def _no_graph_into(op: str, value: Any) -> None:
    """A NotImplementedError for writing a tensor that requires grad into another in place
    while the graph is recorded: torch would record it; chaingrad would lose the gradient."""
    if (isinstance(value, autodiff.Node) and value.requires_grad
            and gradmode.is_grad_enabled()):
        raise NotImplementedError(
            f"{op}: chaingrad has no in-place op that takes a tensor requiring grad into "
            "another yet (torch records one); build the result out of place instead (with "
            "+, cat, stack or where), or write .detach() to copy the numbers only")




class InPlace:
    """The in-place methods of ``Tensor`` (torch's ``add_``, ``+=``, ``x[i] = v``, the random
    fills, ...), with the checks and the counting of writes."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> None:
        """``x[index] = value``, as torch: on a tensor that needs no gradient, or on a leaf
        under ``no_grad()``.

        Example:
            >>> from chaingrad import Tensor
            >>> t = Tensor(np.ones((2, 3)))
            >>> t[:, 1] = 0
            >>> t.tolist()
            [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
        """
        self._check_in_place("setitem")
        _no_graph_into("setitem", value)
        index = check_index(index)
        if isinstance(value, autodiff.Node):
            value = value._value
        elif not isinstance(value, (Real, np.ndarray, np.generic, list, tuple)):
            raise TypeError(f"setitem: the value must be a number, a Tensor or an array, got "
                            f"{type(value).__name__}")
        try:
            self._value[index] = value
        except (IndexError, ValueError) as exc:
            raise type(exc)(f"setitem: {exc} (tensor of shape {tuple(self.shape)})") from None
        self._wrote()

    def _check_in_place(self, op: str) -> None:
        """torch's rule for changing a tensor in place: not a leaf that requires grad while
        the graph is recorded; not a tensor computed in a graph (chaingrad has no in-place
        nodes, so it refuses rather than give a wrong gradient). A write is counted
        (``_wrote``): a graph made before it may refuse its backward."""
        if not self.requires_grad:
            if not self._value.flags.writeable:
                raise RuntimeError(f"{op}: this tensor's data is a read-only view (of a "
                                   "broadcast, say); make a copy with .clone() first")
            return
        if self._rule is not None:
            raise NotImplementedError(
                f"{op}: chaingrad has no in-place ops on a tensor computed in a graph yet; "
                "write y = y + ... (a new tensor) instead")
        if gradmode.is_grad_enabled():
            raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an "
                               "in-place operation. (Do it under chaingrad.no_grad().)")

    def _write(self, op: str, value: np.ndarray) -> Any:
        """Put ``value`` (computed out of place) into this tensor's own array."""
        self._check_in_place(op)
        if value.shape != self.shape:
            raise RuntimeError(f"{op}: output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(value.shape)}")
        if not np.can_cast(value.dtype, self._value.dtype, "same_kind"):
            raise RuntimeError(f"{op}: result type {dtypes.of(value.dtype).name} can't be cast "
                               f"to the desired output type {self.dtype.name}")
        self._value[...] = value
        self._wrote()
        return self

    def _wrote(self) -> None:
        """Count an in-place write: a node made before it that reads this tensor's numbers
        refuses to run its backward step (``_changed_input``), as torch's version counter
        makes it."""
        guards.writes[0] += 1
        self._changed_at = guards.writes[0]

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
            read = {"xy".index(who) for k, x in enumerate(inputs) if x.requires_grad
                    for who in kept[min(k, last)] if who in ("x", "y")}
        return next((inputs[k] for k in sorted(read)
                     if inputs[k]._changed_at > self._made_at), None)

    def _computed(self, op: str, fn: Callable[[], Any], operand: Any = None) -> np.ndarray:
        """``fn()``'s numbers, computed out of place without a graph, for ``op`` to write in
        place: refused when ``operand`` requires grad while the graph is recorded (torch would
        make this tensor a node of the graph; chaingrad has no in-place nodes)."""
        _no_graph_into(op, operand)
        with gradmode.no_grad():
            return fn()._value

    def add_(self, other: Operand, *, alpha: float = 1) -> Any:
        """x += alpha * other, in place (see ``_check_in_place``)."""
        value = self._computed("add_", lambda: self.add(other, alpha=alpha), other)
        return self._write("add_", value)

    def sub_(self, other: Operand, *, alpha: float = 1) -> Any:
        """x -= alpha * other, in place."""
        value = self._computed("sub_", lambda: self.sub(other, alpha=alpha), other)
        return self._write("sub_", value)

    def mul_(self, other: Operand) -> Any:
        """x *= other, in place."""
        return self._write("mul_", self._computed("mul_", lambda: self * other, other))

    def div_(self, other: Operand) -> Any:
        """x /= other, in place (an integer tensor cannot hold the quotient, as in torch)."""
        return self._write("div_", self._computed("div_", lambda: self / other, other))

    def pow_(self, exponent: Operand) -> Any:
        """x **= exponent, in place."""
        return self._write("pow_", self._computed("pow_", lambda: self**exponent, exponent))

    def clamp_(self, min: float | None = None, max: float | None = None) -> Any:  # noqa: A002
        """x clamped into [min, max], in place."""
        return self._write("clamp_", self._computed("clamp_", lambda: self.clamp(min, max)))

    def __iadd__(self, other: Operand) -> Any:
        return self._write("+=", self._computed("+=", lambda: self + other, other))

    def __isub__(self, other: Operand) -> Any:
        return self._write("-=", self._computed("-=", lambda: self - other, other))

    def __imul__(self, other: Operand) -> Any:
        return self._write("*=", self._computed("*=", lambda: self * other, other))

    def __itruediv__(self, other: Operand) -> Any:
        return self._write("/=", self._computed("/=", lambda: self / other, other))

    def zero_(self) -> Any:
        """Every entry 0, in place."""
        return self._write("zero_", np.zeros_like(self._value))

    def fill_(self, value: Any) -> Any:
        """Every entry ``value``, in place."""
        value = value.item() if isinstance(value, autodiff.Node) else value
        return self._write("fill_", np.full_like(self._value, value))

    def copy_(self, src: Any) -> Any:
        """The entries of ``src`` (broadcast to this shape), in place, cast to this dtype."""
        _no_graph_into("copy_", src)
        src = src._value if isinstance(src, autodiff.Node) else np.asarray(src)
        try:
            value = np.broadcast_to(src, self.shape).astype(self._value.dtype)
        except ValueError:
            raise RuntimeError(f"copy_: the source of shape {src.shape} does not broadcast to "
                               f"{tuple(self.shape)}") from None
        return self._write("copy_", value)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Any:
        """Entries drawn uniformly from [a, b), in place (``sampling.uniform``)."""
        return self._write("uniform_", sampling.fill(
            self._value, sampling.uniform, generator, a, b, op="uniform_"))

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
        """Entries drawn from N(mean, std**2), in place (``sampling.normal``)."""
        return self._write("normal_", sampling.fill(
            self._value, sampling.normal, generator, mean, std,
            contiguous=self._value.flags.c_contiguous, op="normal_"))

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Any:
        """Entries drawn from the exponential distribution of rate ``lambd``, in place
        (``sampling.exponential``)."""
        return self._write("exponential_", sampling.fill(
            self._value, sampling.exponential, generator, lambd, op="exponential_"))

    def random_(self, from_: int | None = None, to: int | None = None, *,
                generator: Any = None) -> Any:
        """Integers drawn uniformly, in place: ``random_(to)`` from [0, to), ``random_(from,
        to)`` from [from, to), ``random_()`` torch's whole range for the dtype
        (``sampling.integers``, ``sampling.random_bits``)."""
        if from_ is None and to is None:
            drawn = sampling.fill(self._value, sampling.random_bits, generator)
        else:
            low, high = (0, from_) if to is None else (from_, to)
            drawn = sampling.fill(self._value, sampling.integers, generator, low, high)
        return self._write("random_", drawn)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Any:
        """Each entry 1 with probability ``p`` (a number, or a Tensor of them broadcast to
        this shape), else 0, in place (``sampling.bernoulli``)."""
        chances = p._value if isinstance(p, autodiff.Node) else p
        return self._write("bernoulli_", sampling.fill(
            self._value, sampling.bernoulli, generator, chances, op="bernoulli_"))

