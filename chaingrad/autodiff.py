"""The backward pass that both engines share: what a node is, the order of the walk, and the
chain rule, on one screen (``backward_pass``).

A node (a ``Value`` or a ``Tensor``) is what this module walks. It has:

- ``_value``: its number (a float for a Value, a numpy array for a Tensor). This module and
  everything that walks nodes (the rules, ``compile``, ``show``, the optimizers) read it
  by this name: a Tensor's ``.data`` is PyTorch's (a Tensor sharing the array), a Value's
  is micrograd's (the float), and ``Value._value`` is the same slot as ``Value.data``;
- ``grad``: the gradient that reached it; ``_initial_grad`` before any has (micrograd's
  0.0 for a Value, PyTorch's None for a Tensor). During a pass it holds what the rules
  work on (floats, arrays, or nodes with ``create_graph``); after it, ``_as_grad`` of
  that, if the node's kind has one (a Tensor's ``.grad`` is a Tensor), kept on every
  Value but only on a Tensor leaf or one given ``retain_grad()`` (``_keeps_grad``);
- ``_prev``: the nodes it was computed from, in argument order (empty for a leaf);
- ``_rule``: its op's primitive (see ``chaingrad.rules``), None for a leaf;
- ``requires_grad``: whether it takes a gradient (always, for a Value).

``backward`` orders the graph with ``topological_order`` and runs ``backward_pass``, the
one loop that ``backward()`` runs on Values and on Tensors: for each node, outputs first,
its rule turns the gradient that reached it into one gradient per input, added (``+=``)
into that input's ``.grad``. What guards the pass is in ``chaingrad/guards.py``, each
guard paid once per pass rather than once per node (every ``.grad`` emptied before and put
back after a failure, one look for a nan or inf after it, PyTorch's refusals only where a
tensor was written or freed); where a nan or inf came from, in ``chaingrad/anomaly.py``;
grad mode (``no_grad``) and anomaly mode, in ``chaingrad/gradmode.py``.

A Tensor node also carries torch's two guards on a rule that reads numbers of the forward
pass: ``_made_at``, the count of in-place writes when it was made (a step refuses to run
if one of those numbers was changed since), or ``FREED`` after a ``backward()`` without
``retain_graph`` (``guards.check_kept``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import anomaly, guards
from .errors import DomainError
from .gradmode import enable_grad
from .guards import ClosureRule

# ---- nodes ----

leaves_made: list | None = None
"""While ``chaingrad.compile`` traces a function, the leaves made meanwhile (the function's
own constants, as against the parameters it reads); None otherwise."""


class recording_leaves:  # noqa: N801 - used like a function: `with recording_leaves() as made:`
    """A context in which every leaf made (``Value(...)``, ``Tensor(...)``, constants) is
    listed, for ``chaingrad.compile`` to tell the traced function's constants from the
    parameters it reads."""

    def __enter__(self) -> list:
        global leaves_made
        self.outer, leaves_made = leaves_made, []
        return leaves_made

    def __exit__(self, *exc_info: object) -> None:
        global leaves_made
        leaves_made = self.outer


MANY = object()
"""Stored in ``_b`` when ``_a`` holds a tuple of three or more inputs."""


class Node:
    """The part of a graph node that both engines share: its inputs, in argument order.

    ``_prev`` gives them as a tuple, and ``_op`` names the op (its rule's name, or the
    name given to a micrograd-style ``Value(data, children, op)``). A node stores its
    inputs in two slots, ``_a`` and ``_b``
    (None where there is no such input; three or more inputs go in ``_a`` as a tuple, with
    ``_b`` set to ``MANY``): a tuple per node would be one more object for Python to
    allocate and free, and a training step makes ~65,000 nodes. ``_mark`` is scratch
    space for ``topological_order``. ``_backward`` is the node's step as a closure, for
    Values and Tensors alike.
    """

    __slots__ = ("_a", "_b", "_mark")

    _made_at: int | None = None
    """A Tensor node's count of in-place writes (``guards.writes``) when it was made; None
    for a Value, which is never changed in place. If a tensor was written since, the node's
    ``_changed_input()`` says whether its rule reads one that was (``guards.check_kept``)."""

    _as_grad: Callable[[Any], Any] | None = None
    """What a node's ``.grad`` holds after a pass, made from the array (or node) the pass
    worked with; None keeps that (a Value's float). A Tensor's makes it a Tensor."""

    _keeps_grad = True
    """Whether a node an op made keeps its ``.grad`` after a pass (leaves always do). A
    Value does, as in micrograd; a Tensor does not unless ``retain_grad()`` was called, as
    in PyTorch, where an intermediate's gradient is freed once it has been passed on."""

    @property
    def _prev(self) -> tuple:
        """The input nodes, in argument order (empty for a leaf): ``_a`` and ``_b`` (see
        ``input_slots``) back as a tuple."""
        a, b = self._a, self._b
        if b is None:
            return () if a is None else (a,)
        return a if b is MANY else (a, b)

    _given_op = ""  # the name a micrograd-style Value(data, children, "op") was given

    @property
    def _op(self) -> str:
        """The name of the op that made the node: its rule's ('' for a leaf)."""
        rule = self._rule
        return self._given_op or ("" if rule is None else rule.name)

    @_op.setter
    def _op(self, name: str) -> None:
        self._given_op = name

    @property
    def _backward(self) -> Callable[[], None]:
        """This node's backward step as a closure, to call by hand as in micrograd's lecture.

        It reads ``self.grad`` (the gradient arriving at this node) and adds
        ``self.grad * local derivative`` into each input's ``.grad`` (see
        ``backward_pass``, which runs the same step for every node).
        """
        if self._rule is None:
            return do_nothing
        if type(self._rule) is ClosureRule:
            return self._rule.backward
        return backward_closure(self)

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        # micrograd-style custom ops assign their own closure; backward() will call it. The
        # rule holds the node, to find its inputs (the closure itself holds it already).
        self._rule = ClosureRule(fn, self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Leaves copy and pickle (a model's parameters do); a node an op made refers to its
        whole graph, and refuses, as PyTorch's deepcopy does."""
        if self._a is not None or self._rule is not None:
            kind = type(self).__name__
            raise TypeError(f"{kind}: only leaves can be copied or pickled; this one is the "
                            f"output of {self._op or 'an op'!r} and refers to its whole graph "
                            f"(copy the leaves, e.g. a model's parameters, and compute again)")
        self._mark = None  # scratch space of a walk: nothing to keep
        return super().__reduce_ex__(protocol)


def input_slots(children: tuple) -> tuple:
    """Inputs as the pair ``(_a, _b)`` that a node stores."""
    if len(children) <= 2:
        return tuple(children) + (None,) * (2 - len(children))
    return tuple(children), MANY


def do_nothing() -> None:
    """The ``_backward`` of a leaf: there is nothing before it to pass a gradient to."""


def backward_closure(out: Any) -> Callable[[], None]:
    """``out._backward``: its step of ``backward_pass`` as a closure, to call by hand as in
    micrograd's lecture (set ``out.grad`` first, or run the steps after it)."""

    def _backward() -> None:
        if out.grad is None:
            raise guards.no_gradient_yet(out)
        backward_pass([out], watch=Watch.of([out]))

    return _backward


class paused_gc:  # noqa: N801 - used like a function: `with paused_gc():`
    """Pause Python's cyclic garbage collector while chaingrad builds or walks a graph.

    chaingrad's graphs hold no reference cycles (a node points to its inputs, never back),
    so reference counting frees them the moment they are dropped and the cyclic collector
    has nothing to find in them. Left running, it would walk the whole growing graph again
    and again while it is built. The pause is scoped (a model's forward pass, one backward
    pass), nests, and restores the collector's state even on error; its thresholds are
    never changed.
    """

    __slots__ = ("was_enabled",)

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self.was_enabled:
            gc.enable()


# ---- the order of the walk ----

walking = threading.RLock()
"""Held while a thread orders or back-propagates a graph. Graphs share nodes (a model's
parameters), and a walk marks nodes and a pass resets and adds their gradients: one at a
time, every pass sees only its own marks and adds up exactly, as PyTorch's do."""


def topological_order(root: Node, *more_roots: Node) -> list[Any]:
    """Every node that ``root`` depends on, each after all of its inputs; ``root`` last.

    With more roots, every node that any of them depends on, in the same kind of order.

    A depth-first walk with an explicit stack (no recursion, so a chain of a million
    ops is fine). A node met for the first time goes back on the stack, marked as
    waiting, under its inputs; when it comes up again, all of them have been emitted,
    and so is it. Marks are stored in each node's ``_mark`` slot as tokens made for
    this walk: twice as fast as a set of visited nodes, and two walks never mix.

    Example:
        >>> from chaingrad import Value
        >>> a = Value(1.0, label="a")
        >>> [n.label or n._op for n in topological_order(a * 2 + a)]
        ['a', '', '*', '+']
    """
    with walking:
        done, waiting = object(), object()  # this walk's marks
        order: list[Any] = []
        stack = [*reversed(more_roots), root]
        while stack:
            node = stack.pop()
            mark = node._mark
            if mark is waiting:  # back to it: all of its inputs are done
                node._mark = done
                order.append(node)
                continue
            if mark is done:  # reached again through another path
                continue
            a, b = node._a, node._b
            if a is None:  # a leaf
                node._mark = done
                order.append(node)
                continue
            node._mark = waiting
            stack.append(node)
            if b is MANY:
                stack.extend(child for child in reversed(a) if child._mark is not done)
                continue
            if b is not None and b._mark is not done:
                stack.append(b)
            if a._mark is not done:
                stack.append(a)  # on top: the first input is walked first
        return order


# ---- the chain rule ----


def backward(roots: Sequence[Any], seeds: Sequence[Any], create_graph: bool = False,
             accumulate: bool = True, trace: list | None = None,
             retain_graph: bool | None = True) -> dict[int, Any]:
    """Back-propagate each seed, d(loss)/d(root), through every node the roots depend on:
    ``backward_pass`` over the graph's ``topological_order``, guarded once per pass
    (``chaingrad/guards.py``).

    Args:
        roots: The nodes to differentiate (usually one: the loss).
        seeds: One gradient per root: 1.0 for a Value; an array of its shape for a Tensor;
            a node (a Value or Tensor) with ``create_graph``.
        create_graph: Run the rules on the nodes themselves, so that every gradient is a
            node whose graph can be differentiated again.
        accumulate: Add this pass into ``.grad`` (True: calling ``backward()`` twice adds
            twice, as PyTorch does), or return it and leave every ``.grad`` as it was.
        trace: A list to append what each step did to (see ``Watch``).
        retain_graph: False frees the graph afterwards, as torch does (``guards.free``);
            None, torch's default, frees it unless ``create_graph``.

    Returns:
        ``{id(node): its gradient from this pass}`` when ``accumulate`` is False, else {}.

    Raises:
        AnomalyError: (Tensors) The loss is not finite, or a gradient is not: it names the
            op that made it (``chaingrad.anomaly``), and every ``.grad`` is left as it
            was; not under ``set_detect_anomaly(False)``, where nan and inf flow.
        DomainError: (Values) A gradient is not finite; it names the op whose step made
            it, and every ``.grad`` is left as it was.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> backward([x * x], [1.0], accumulate=False)[id(x)]
        6.0
    """
    with walking, paused_gc(), enable_grad() if create_graph else guards.as_it_is():
        order = topological_order(*roots)
        finite = anomaly.watches(roots[0])  # False: set_detect_anomaly(False), nan flows
        if finite:
            anomaly.check_loss(order, roots)  # a loss that is not finite: the op that made it
        before = guards.reset(order)  # every .grad emptied; None: all were 0.0 (Values)
        try:
            seed_roots(roots, seeds)
            backward_pass(order, create_graph, Watch.of(order, trace=trace))
            if finite and not guards.gradients_finite(order):  # again, watched, to name the op
                guards.restore(order, None)
                seed_roots(roots, seeds)
                backward_pass(order, create_graph, Watch.of(order, check=True))
                raise DomainError("backward: a gradient is not finite, and no op's rule made "
                                  "it: a hand-written _backward closure did")
        except BaseException:  # a failed pass leaves every .grad as it was
            guards.restore(order, before)
            raise
        found = {id(node): node.grad for node in order} if not accumulate else {}
        if accumulate:
            guards.keep(order, before, seeds)
        else:
            guards.restore(order, before)
        if not (create_graph if retain_graph is None else retain_graph):
            guards.free(order)
        return found


def seed_roots(roots: Sequence[Any], seeds: Sequence[Any]) -> None:
    """Each root's gradient starts at its seed, d(loss)/d(root), added to what it holds
    (``accumulate``: nothing, after ``guards.reset``)."""
    for root, g in zip(roots, seeds):
        root.grad = accumulate(root.grad, g)


def backward_pass(order: list[Any], create_graph: bool = False, watch: Watch | None = None) -> None:
    """The chain rule, over ``order``, a topological order of the graph (inputs first):
    the loop that ``backward()`` runs, on Values and on Tensors.

    Walking the order backwards, each node's rule (``rule.vjp``, see ``chaingrad.rules``)
    turns the gradient that reached it, ``out.grad``, into one gradient per input, added
    (+=) into that input's ``.grad``. Going backwards, a node has received all of its
    gradient, from every op that uses it, before it passes it on.

    The rule gets the numbers of the node's inputs and output (``_value``: floats for a
    Value, arrays for a Tensor), or with ``create_graph`` the nodes themselves, so that
    the gradients it makes are nodes too. A Value's gradient starts at 0.0, and a Value
    node has one or two inputs (bar a user's op): the first two branches are those, as
    micrograd's ``_backward`` closures write them. The last is any other node: a Tensor's
    gradient starts at None, an input that takes no gradient (a constant) gets none, and a
    share that the op broadcast is summed back to the input's shape first.

    What guards the pass is outside the loop (``backward``, ``chaingrad/guards.py``), but
    for a rule that fails (a division by zero, an overflow: a derivative unbounded at the
    point), named by the node the loop was at. ``watch``, when given, looks at each step
    before and after it (``Watch``: torch's refusals, a checked pass, explain's trace).

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> y = x * x + x
        >>> y.grad = 1.0  # d(y)/d(y): where the chain rule starts
        >>> backward_pass(topological_order(y))
        >>> x.grad
        7.0
    """
    floats = not create_graph and type(order[-1]._value) is float  # a Value graph's numbers
    try:
        for out in reversed(order) if watch is None else watch.around(reversed(order)):
            rule, g = out._rule, out.grad
            if rule is None or g is None:
                continue  # a leaf, or a node no gradient reached: nothing to pass on
            x, y = out._a, out._b  # its inputs (see Node)
            if floats and y is not None and y is not MANY:  # a Value's op of two: x + y, x * y
                gx, gy = rule.vjp((x._value, y._value), out._value, g)
                x.grad += gx
                y.grad += gy
            elif floats and x is not None and y is None:  # of one: x.tanh()
                (gx,) = rule.vjp((x._value,), out._value, g)
                x.grad += gx
            else:  # any node: a Tensor's (arrays), create_graph's (nodes), three inputs or more
                inputs = out._prev  # the rule gets their numbers, or with create_graph the nodes
                xs, o = (inputs, out) if create_graph else ([x._value for x in inputs], out._value)
                for x, gx in zip(inputs, rule.vjp(tuple(xs), o, g), strict=True):
                    if gx is None or not x.requires_grad:
                        continue  # a constant: it takes no gradient
                    if type(x._value) is not float and gx.shape != x._value.shape:
                        gx = sum_to_shape(gx, x._value.shape, out._op)  # the op broadcast x
                    x.grad = gx if x.grad is None else x.grad + gx  # not in place: gx may be shared
    except (ZeroDivisionError, OverflowError, DomainError) as exc:
        guards.rule_failed(out, exc)  # raises the error that names the op


class Watch:
    """What looks at each step of ``backward_pass``, before its rule runs and after, when
    something must; a pass that needs nothing looked at (most) runs with no Watch at all.

    - ``refusals``: torch's two refusals of a step (``guards.check_kept``), looked for only
      when a tensor was written in place or a graph freed since the graph's nodes were
      made (``guards.refusals_due``, once per pass);
    - ``check``: each step's gradients, for a nan or inf, named by the op (``check_step``;
      ``backward`` runs such a pass only after an unchecked one found one);
    - ``trace``: a list to append what each step did to: ``(node, out.grad, its inputs'
      grads before, after)``, which ``chaingrad.explain`` prints.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(3.0)
        >>> y = x * x
        >>> Watch.of([x, y]) is None  # a Value graph is never written in place nor freed
        True
        >>> trace = []
        >>> y.grad = 1.0
        >>> backward_pass([x, y], watch=Watch.of([x, y], trace=trace))
        >>> [(node._op, g, before, after) for node, g, before, after in trace]
        [('*', 1.0, [0.0, 0.0], [6.0, 6.0])]
    """

    def __init__(self, refusals: bool, check: bool, trace: list | None) -> None:
        self.refusals, self.check, self.trace = refusals, check, trace
        self.grads_before: list[Any] = []

    @classmethod
    def of(cls, order: list[Any], check: bool = False,
           trace: list | None = None) -> Watch | None:
        """The Watch a pass over ``order`` needs, or None if it needs none."""
        refusals = guards.refusals_due(order)
        return cls(refusals, check, trace) if refusals or check or trace is not None else None

    def around(self, steps: Iterator[Any]) -> Iterator[Any]:
        """The nodes of ``steps``, each looked at before its step and after it (a step runs
        between one node's yield and the next): for a node with a rule that a gradient
        reached, the nodes ``backward_pass`` runs a step for."""
        for out in steps:
            runs = out._rule is not None and out.grad is not None
            if runs:
                self.before(out)
            yield out
            if runs:
                self.after(out)

    def before(self, out: Any) -> None:
        """Before ``out``'s rule runs."""
        if self.refusals:
            guards.check_kept(out)  # may point out's inputs at the versions it was made from
        if self.trace is not None:
            self.grads_before = [guards.copy(x.grad) for x in out._prev]

    def after(self, out: Any) -> None:
        """After ``out``'s gradient was passed on to its inputs."""
        if self.check:
            check_step(out)
        if self.trace is not None:
            self.trace.append((out, out.grad, self.grads_before, [x.grad for x in out._prev]))


def check_step(out: Any) -> None:
    """An error naming ``out``'s op if its step has just left an input's gradient not
    finite. Its rule, a pure function, is asked again for each input's share, to say
    whether that share was not finite or the shares added up to more than a number holds.
    """
    inputs = out._prev
    if all(guards.is_finite(x.grad) for x in inputs):
        return
    rule = out._rule
    if type(rule) is ClosureRule:
        raise DomainError(f"{out._op or 'backward'}: its hand-written _backward closure "
                          "wrote a gradient that is not finite (nan or inf)")
    g = out.grad._value if isinstance(out.grad, Node) else out.grad
    shares = rule.vjp(tuple([x._value for x in inputs]), out._value, g)
    for x, gx in zip(inputs, shares):
        if gx is not None and x.requires_grad:
            if type(x._value) is not float and gx.shape != x._value.shape:
                gx = sum_to_shape(gx, x._value.shape, out._op)
            guards.check_finite(out, x, gx)


def accumulate(old: Any, new: Any) -> Any:
    """``old + new``, where an empty ``old`` (None, or a Value's 0.0) adds nothing."""
    if old is None or (type(old) is float and old == 0.0):
        return new
    return old + new


def sum_to_shape(g: Any, shape: tuple[int, ...], op: str = "") -> Any:
    """The gradient ``g`` of a broadcast input, summed back to the input's ``shape``.

    Broadcasting prepends axes and stretches axes of size 1; the gradient of a stretched
    input is the sum over the stretched axes. ``g`` may be an array or a Tensor (with
    ``create_graph``): only ``.shape``, ``.sum`` and ``.reshape`` are used.

    Example:
        >>> import numpy as np
        >>> sum_to_shape(np.ones((4, 2, 3)), (2, 1)).tolist()
        [[12.0], [12.0]]
    """
    if g.shape == shape:
        return g
    lead = len(g.shape) - len(shape)
    if lead > 0 and g.shape[lead:] == shape:  # axes prepended only (a bias): their sum
        return g.sum(axis=tuple(range(lead)))
    if lead < 0 or any(n != 1 and g.shape[lead + i] != n for i, n in enumerate(shape)):
        raise ValueError(f"{op + ': ' if op else ''}a gradient of shape {g.shape} cannot "
                         f"belong to an input of shape {shape}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)
