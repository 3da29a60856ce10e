"""What guards the chain rule (``autodiff.backward_pass``), each under a name of its own,
and each paid once per pass, not once per node, wherever it can be:

- ``reset``, ``restore`` and ``keep``: a pass starts from empty gradients; a failed one
  puts every ``.grad`` back as it was; after a good one each kept gradient becomes an
  array of its own, added to what ``.grad`` held;
- ``gradients_finite``: after the pass, one look at the gradients for a nan or inf (for a
  Value graph, one sum of all of them); only when there is one does the pass run again,
  watched (``autodiff.Watch``), to name the step that made it (``check_finite``; for a
  Tensor, in ``chaingrad.anomaly``'s words);
- ``rule_failed``: a rule that divided by zero or overflowed (a derivative unbounded at
  the point: ``sqrt`` at 0), named by the node the loop was at;
- ``refusals_due`` and ``check_kept``: PyTorch's two refusals of a step whose rule reads
  numbers of the forward pass (the graph was freed by a ``backward()`` without
  ``retain_graph``, or one of those numbers was changed in place since: ``writes``, its
  version counter), looked for only when a tensor was written or freed since the graph's
  nodes were made;
- ``ClosureRule``: a micrograd-style ``_backward`` closure assigned by hand, run as a rule.

Nothing here computes a gradient; ``backward_pass`` reads the same with or without them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

from . import anomaly
from .errors import AnomalyError, DomainError

writes = [0]
"""How many in-place writes to tensors so far (a list: modules change it in place). A
Tensor node's ``_made_at`` is the count when it was made (see ``check_kept``)."""

FREED = -1
"""The ``_made_at`` of a Tensor node whose graph a ``backward()`` without ``retain_graph``
has freed (see ``free``): below any count of writes."""

# ---- a rule that failed ----


def rule_failed(out: Any, exc: Exception) -> NoReturn:
    """Raise the error for ``exc``, raised at ``out``'s step of the pass (the node the loop
    was at): a division by zero or an overflow in its rule means that the derivative is
    unbounded there, and the error names the op (``non_finite``). A ``DomainError`` that
    names the op already (the rule's own, or ``check_step``'s) is raised as it is."""
    if isinstance(exc, DomainError) and str(exc).startswith(f"{out._op or 'backward'}:"):
        raise exc
    raise non_finite(out) from exc


def no_gradient_yet(out: Any) -> RuntimeError:
    return RuntimeError(
        f"{out._op or 'backward'}: _backward() needs the gradient that reached this node, "
        "but its .grad is None; set it first (for the output: out.grad = ones of its "
        "shape), or call out.backward()")


# ---- torch's refusals: a freed graph, a tensor changed in place ----


def refusals_due(order: list[Any]) -> bool:
    """Whether any node of ``order`` was freed, or made before a tensor was written in
    place since: only then can ``check_kept`` refuse a step. Values are never written in
    place nor freed, so a Value graph is not looked at; a Tensor graph's nodes are few."""
    if not hasattr(order[-1]._value, "dtype"):
        return False
    now = writes[0]
    return any(node._made_at != now and node._made_at is not None for node in order)


def check_kept(out: Any) -> None:
    """torch's two refusals to run a step whose rule reads numbers kept from the forward
    pass: its graph was freed by a ``backward()`` without ``retain_graph``, or one of those
    numbers was changed in place since (torch's version counter). Nothing for a node made
    since the last write."""
    if out._made_at == writes[0] or out._made_at is None:
        return
    if out._made_at == FREED:
        if out._reads_forward():
            raise RuntimeError(
                f"{out._op}: Trying to backward through the graph a second time (or directly "
                "access saved tensors after they have already been freed). Saved intermediate "
                "values of the graph are freed when you call .backward() or autograd.grad(). "
                "Specify retain_graph=True if you need to backward through the graph a second "
                "time or if you need to access saved tensors after calling backward.")
        return
    out._reroute()  # an input written in place since, the write recorded: the one of then
    changed = out._changed_input()
    if changed is not None:
        raise _changed_in_place(out, changed)


def _changed_in_place(out: Any, x: Any) -> RuntimeError:
    what = "its output" if x is out else \
        f"its input {next(i for i, y in enumerate(out._prev) if y is x)}"
    return RuntimeError(
        f"{out._op}: one of the variables needed for gradient computation has been modified "
        f"by an inplace operation: {what} (of shape {tuple(x._value.shape)}) was changed in "
        "place after this node was computed; compute the forward again after changing it "
        "(as torch's version counter says)")


def free(order: list[Any]) -> None:
    """What torch does after a ``backward()`` without ``retain_graph=True``: each op's node
    forgets the numbers its rule kept from the forward pass. A Tensor node is marked
    ``FREED``; a later pass through it raises if its rule needs them (``check_kept``).
    A Value (whose ``_made_at`` is None) is never freed: micrograd walks a graph as often
    as asked."""
    for node in order:
        if node._made_at is not None:  # a leaf's is None, as a Value's
            node._made_at = FREED


# ---- gradients that are not finite ----


def gradients_finite(order: list[Any]) -> bool:
    """Whether a pass over ``order`` left no nan or inf where one would stay unseen: in a
    leaf's gradient, or in the gradient handed to a rule that may drop it (a user's, whose
    ``Primitive.keeps_nan`` is false). Every other rule passes a nan or inf on towards the
    leaves (0 * inf is nan).

    A Value graph's gradients (floats) are first summed, all at once: the sum is finite
    unless one of them is not (or the sum overflows, when each is looked at), and a
    finite sum, the usual answer, costs one call.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(2.0)
        >>> y = x * x
        >>> y.grad, x.grad = 1.0, float("inf")
        >>> gradients_finite([x, y])
        False
    """
    if type(order[-1].grad) is float:
        total = sum([node.grad for node in order])  # (a list: faster than map here)
        if type(total) is float and total - total == 0.0:
            return True
    return all(is_finite(node.grad) for node in order if node._rule is None
               or not getattr(node._rule.primitive, "keeps_nan", True))


def check_finite(out: Any, x: Any, gx: Any) -> None:
    """An error naming ``out``'s op if the share ``gx`` it gave ``x``, or ``x``'s gradient
    so far, is not finite (``non_finite``: an AnomalyError for a Tensor, a DomainError for
    a Value)."""
    if not (is_finite(gx) and is_finite(x.grad)):
        raise non_finite(out, x, gx)


def is_finite(g: Any) -> bool:
    """True when a number, an array or a node's data has no nan or inf (an array:
    ``all_finite``).

    Example:
        >>> is_finite(1.5), is_finite(float("inf")), is_finite(None)
        (True, False, True)
    """
    if type(g) is float:
        return g - g == 0  # nan - nan and inf - inf are nan
    if g is None:
        return True
    if hasattr(g, "_prev"):  # a node (create_graph): its data
        g = g._value
    if not hasattr(g, "dtype"):
        return g - g == 0  # a number of another type
    return all_finite(g)


def all_finite(a: Any) -> bool:
    """True when a numpy array (or numpy scalar) has no nan or inf: the one finiteness
    check of both engines' arrays (the leaves' gradients after a pass, an optimizer's
    update).

    An array of floats is read once, by ``np.vdot(a, a)``, the sum of its squares: nan or
    inf if an entry is (a square is never negative, so no inf - inf can hide one), and
    otherwise finite unless the sum overflows, when each entry is looked at. Two to three
    times as fast as ``np.isfinite(a).all()``, which makes an array of booleans first;
    and ``vdot``, unlike ``dot`` or ``sum``, does not warn when it overflows.

    Example:
        >>> import numpy as np
        >>> all_finite(np.array([1.0, 2.0])), all_finite(np.array([1.0, np.nan]))
        (True, False)
    """
    if a.size == 1:  # one entry (a loss, a tiny graph's node): no call into numpy's loops
        return math.isfinite(a.item())
    if a.dtype.kind in "biu":
        return True  # booleans and integers are finite
    import numpy as np  # (loaded already: ``a`` is an array; Values never come here)

    if 0 in a.strides:  # a broadcast (sum's gradient, g spread over x's shape): each
        a = a[tuple(slice(None, 1) if step == 0 else slice(None) for step in a.strides)]
        # entry once (vdot would copy all the repeats first: 200 us at 512x192, now 2)
    if a.flags.f_contiguous and not a.flags.c_contiguous:
        a = a.T  # a transposed array (a weight's gradient): its entries in place (vdot
        # would copy a strided array first)
    return math.isfinite(np.vdot(a, a)) or bool(np.isfinite(a).all())


def non_finite(node: Any, x: Any = None, g: Any = None) -> DomainError | AnomalyError:
    """The error for a step that made a nan or inf: the op, where, and what it got (for a
    Tensor, ``anomaly.gradient_error``)."""
    if x is not None and hasattr(x._value, "dtype"):
        return anomaly.gradient_error(node, x, g)
    inputs = ", ".join(repr(_number(c._value)) for c in node._prev)
    if x is not None and is_finite(g):  # each share was finite: their sum overflowed
        return DomainError(f"{node._op or 'backward'}: the gradients that reach its input(s) "
                           f"{inputs} add up to more than a float holds (overflow)")
    got = "" if x is None else f" (got {_number(g)})"
    return DomainError(
        f"{node._op or 'backward'}: the gradient is not finite at input(s) {inputs}{got}; "
        "the derivative is unbounded there, or the product overflows a float")


def _number(x: Any) -> Any:
    """A node's data or a gradient as a plain number when it is one (for messages)."""
    if hasattr(x, "_prev"):
        x = x._value
    return x.item() if getattr(x, "size", 0) == 1 else x


def quiet_numpy(nodes: Iterable[Any]) -> Any:
    """A context with numpy's floating-point warnings off where a node holds an array (a
    nan or inf is torch's number there, and ``backward()`` names the op that made it); for
    Values, which need no numpy, a context that changes nothing."""
    if not any(hasattr(node._value, "dtype") for node in nodes):
        return as_it_is()
    import numpy as np

    return np.errstate(all="ignore")


class as_it_is:  # noqa: N801 - used like a function: `with as_it_is():`
    """A context that changes nothing."""

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        pass


# ---- every .grad emptied for a pass, as it was after a failed one, or as it should be kept ----


def reset(order: list[Any]) -> list[Any] | None:
    """Every node's ``.grad`` emptied for a pass (its ``_initial_grad``: 0.0 for a Value,
    None for a Tensor). Returns what they held, for ``restore`` and ``keep``; or None when
    ``order`` is a Value graph whose gradients all hold 0.0 (zeroed parameters, a fresh
    graph: the usual case), where there is nothing to empty and nothing to put back."""
    if type(order[-1]._value) is float and not any([node.grad for node in order]):
        return None
    before = [node.grad for node in order]
    for node in order:
        node.grad = node._initial_grad
    return before


def restore(order: list[Any], before: list[Any] | None) -> None:
    """Put every node's ``.grad`` back to what ``before`` holds (None: 0.0, see ``reset``)."""
    if before is None:
        for node in order:
            node.grad = node._initial_grad
        return
    for node, old in zip(order, before):
        node.grad = old


def keep(order: list[Any], before: list[Any] | None, seeds: Sequence[Any]) -> None:
    """Each ``.grad`` becomes what it held before this pass plus this pass; a gradient that
    is kept becomes an array of its own (see ``own``: never a seed, which is the caller's),
    and then what the node's kind shows its users (``_as_grad``: a Tensor's ``.grad`` is a
    Tensor). A node that does not keep its gradient (``Node._keeps_grad``) gets back what
    it held. With ``before`` None (a Value graph that held no gradient, see ``reset``)
    there is nothing to do: a Value keeps the float, or with ``create_graph`` the node,
    that the pass made."""
    if before is None:
        return
    shared = {id(seed) for seed in seeds}
    for node, old in zip(order, before):
        g = node.grad
        if g is None or not (node._rule is None or node._keeps_grad):
            node.grad = old
            continue
        g = own(g, node, shared)
        g = g if old is None or (type(old) is float and old == 0.0) else old + g
        node.grad = g if node._as_grad is None else node._as_grad(g)


def own(g: Any, node: Any, shared: set[int]) -> Any:
    """A gradient to keep, as an array of its own, in its node's dtype. A rule may hand one
    array to several inputs (``+`` does: ``shared`` holds the arrays nodes have taken, and
    the seeds), a view of another array, or a numpy scalar (numpy makes 0-d results
    scalars); a ``.grad`` must be none of these, since optimizers and users change it in
    place (torch's ``.grad`` is never shared either). A view that shows the whole of its
    array in that array's layout (a transpose transposed back: a Linear weight's gradient)
    is that array, and taken as it is. A copy is row-major, as torch lays out a
    parameter's gradient (an optimizer's arithmetic on it is then fastest). Floats and
    nodes are kept as they are."""
    if type(g) is float or hasattr(g, "_prev"):
        return g
    base = getattr(g, "base", None)  # (an array's, or e.g. the bytes it was read from)
    if type(base) is type(g) and base.shape == g.shape and base.strides == g.strides:
        g = base  # a view that is the whole of its array, seen the same way: that array
    data = node._value
    if (type(g) is not type(data) or g.base is not None or id(g) in shared
            or g.dtype != data.dtype or not g.flags.writeable):
        g = g.__array__().astype(data.dtype, order="C", copy=True)  # row-major, as torch
    shared.add(id(g))
    return g


def copy(g: Any) -> Any:
    """A gradient as it is now (a copy of an array, which a closure may change in place)."""
    return g.copy() if hasattr(g, "copy") else g


# ---- a _backward closure assigned by hand ----


class ClosureRule:
    """A micrograd-style ``_backward`` closure that a user assigned by hand to ``node``, as
    its rule.

    Such a closure reads ``node.grad`` and adds into its inputs' ``.grad`` itself, so as a
    rule it runs the closure and gives each input a share that adds nothing (0.0 for a
    Value's, None for a Tensor's).
    """

    __slots__ = ("backward", "node")
    params: tuple = ()
    primitive = None
    name = ""

    def __init__(self, backward: Callable[[], None], node: Any) -> None:
        self.backward, self.node = backward, node

    def vjp(self, xs: tuple, out: Any, g: Any) -> tuple:
        """Run the closure as its node's step (``xs``, ``out`` and ``g`` are the node's, as
        the pass hands every rule; the closure reads them from the nodes)."""
        node = self.node
        if out is node:  # the pass hands the rules the nodes themselves: create_graph
            raise TypeError(
                f"backward(create_graph=True): node {node._op!r} has a hand-written _backward "
                "closure, which works on numbers and cannot be differentiated again; build it "
                "with chaingrad.primitive instead")
        for x in node._prev:  # the closure adds into .grad: give it something to add to
            if x.grad is None:
                x.grad = x._value * 0
        self.backward()
        return tuple(0.0 if type(x) is float else None for x in xs)
