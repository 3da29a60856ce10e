"""The backward pass that both engines share: graph order, the chain rule, and grad mode.

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

``backward`` orders the graph with ``topological_order`` and runs ``backward_step`` on every
node, outputs first: each step is one node's ``_backward``, which adds the gradient that
reached the node, times its local derivative, into each input's ``.grad``.

A Tensor node also carries torch's two guards on a rule that reads numbers of the forward
pass: ``_made_at``, the count of in-place writes when it was made (a step refuses to run
if one of those numbers was changed since), or ``FREED`` after a ``backward()`` without
``retain_graph`` (see ``free``).
"""

from __future__ import annotations

import functools
import gc
import inspect
import math
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import _fast
from .errors import DomainError, _NotFiniteError

# ---- grad mode: whether ops record the graph ----

_grad_enabled = True
"""True while no thread is inside ``no_grad()``: then every op records, and reading this
one module global is all an op pays for grad mode. Otherwise each thread's own mode
(``_mode.enabled``) decides, as PyTorch's per-thread mode does."""

_mode = threading.local()  # .enabled: this thread's mode, once it has set one
_threads_off = 0  # how many threads have recording off now
_mode_lock = threading.Lock()


def is_grad_enabled() -> bool:
    """True when ops record the graph in this thread (the default), False in ``no_grad()``."""
    return _grad_enabled or getattr(_mode, "enabled", True)


def _set_grad_enabled(enabled: bool) -> bool:
    """Set this thread's grad mode; returns the mode it had."""
    global _threads_off, _grad_enabled
    with _mode_lock:
        previous = getattr(_mode, "enabled", True)
        if previous != enabled:
            _threads_off += -1 if enabled else 1
        _mode.enabled = enabled
        _grad_enabled = _threads_off == 0
    return previous


class _GradMode:
    """A context manager and decorator that sets this thread's grad mode, as torch's do.

    As a decorator it also works on generator functions: the mode holds while the
    generator's body runs, each time it is resumed, and not between (PyTorch's behaviour).
    """

    enabled: bool

    def __init__(self) -> None:
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(_set_grad_enabled(self.enabled))

    def __exit__(self, *exc_info: object) -> None:
        _set_grad_enabled(self._previous.pop())

    def __call__(self, fn: Callable) -> Callable:
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}(): decorates a function, got "
                            f"{type(fn).__name__}")
        mode = type(self)
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                sent: Any = None
                while True:
                    try:
                        with mode():
                            item = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
                    sent = yield item
            return generator

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with mode():
                return fn(*args, **kwargs)
        return call


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """A context under which ops compute values but record no graph.

    Also a decorator (``@no_grad()``), generator functions included. As in PyTorch, the
    mode belongs to the thread that enters it: other threads go on recording.

    Example:
        >>> from chaingrad import Value, no_grad
        >>> with no_grad():
        ...     y = Value(2.0) * 3
        >>> y._prev
        ()
    """

    enabled = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Turn graph recording back on in this thread, e.g. inside a ``no_grad()`` block."""

    enabled = True


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Set this thread's grad mode: ``set_grad_enabled(False)`` as a call (it stays so) or
    as a context manager or decorator (restored after), as torch's.

    Example:
        >>> from chaingrad import Value
        >>> with set_grad_enabled(False):
        ...     (Value(2.0) * 3)._prev
        ()
    """

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self.enabled = bool(mode)
        self._previous.append(_set_grad_enabled(self.enabled))

    def __enter__(self) -> None:
        pass  # set already, by the call

    def __exit__(self, *exc_info: object) -> None:
        _set_grad_enabled(self._previous.pop())

    def __call__(self, fn: Callable) -> Callable:
        _set_grad_enabled(self._previous.pop())  # as a decorator: only while fn runs
        enabled = self.enabled

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(enabled):
                return fn(*args, **kwargs)
        return call


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


# ---- nodes ----

_created: list | None = None
"""While ``chaingrad.compile`` traces a function, the leaves made meanwhile (the function's
own constants, as against the parameters it reads); None otherwise."""


class recording_leaves:  # noqa: N801 - used like a function: `with recording_leaves() as made:`
    """A context in which every leaf made (``Value(...)``, ``Tensor(...)``, constants) is
    listed, for ``chaingrad.compile`` to tell the traced function's constants from the
    parameters it reads."""

    def __enter__(self) -> list:
        global _created
        self.outer, _created = _created, []
        return _created

    def __exit__(self, *exc_info: object) -> None:
        global _created
        _created = self.outer


MANY = object()
"""Stored in ``_b`` when ``_a`` holds a tuple of three or more inputs."""


writes = [0]
"""How many in-place writes to tensors so far (a list: modules change it in place)."""

FREED = -1
"""The ``_made_at`` of a Tensor node whose graph a ``backward()`` without
``retain_graph`` has freed (see ``free``): below any count of writes."""


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
    """A Tensor node's count of in-place writes (``writes``) when it was made; None for a
    Value, which is never changed in place. If a tensor was written since, the node's
    ``_changed_input()`` says whether its rule reads one that was (``backward_step``)."""

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
        ``split``) back as a tuple."""
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
        ``backward_step``).
        """
        if self._rule is None:
            return do_nothing
        if type(self._rule) is ClosureRule:
            return self._rule.backward
        return backward_closure(self)

    @_backward.setter
    def _backward(self, fn: Callable[[], None]) -> None:
        # micrograd-style custom ops assign their own closure; backward() will call it.
        self._rule = ClosureRule(fn)

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


def split(children: tuple) -> tuple:
    """Inputs as the pair ``(_a, _b)`` that a node stores."""
    if len(children) <= 2:
        return tuple(children) + (None,) * (2 - len(children))
    return tuple(children), MANY


# ---- the order of the walk ----

_walking = threading.RLock()
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
    with _walking:
        done, waiting = object(), object()  # this walk's marks
        order: list[Any] = []
        stack = [*reversed(more_roots), root]
        while stack:
            node = stack.pop()
            mark = node._mark
            if mark is done:  # reached again through another path
                continue
            a, b = node._a, node._b
            if a is None or mark is waiting:  # a leaf, or all of its inputs are done
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
    """Back-propagate each seed, d(loss)/d(root), through every node the roots depend on.

    Orders the graph (``topological_order``) and runs ``backward_pass`` over it; a graph of
    Values with float gradients goes to ``_fast.backward``, its twin, which gives the same
    gradients bit for bit, faster.

    Args:
        roots: The nodes to differentiate (usually one: the loss).
        seeds: One gradient per root: 1.0 for a Value; an array of its shape for a Tensor;
            a node (a Value or Tensor) with ``create_graph``.
        create_graph: Run the rules on the nodes themselves, so that every gradient is a
            node whose graph can be differentiated again.
        accumulate: Add this pass into ``.grad`` (True), or return it (False).
        trace: A list to append what each step did to (see ``backward_step``).
        retain_graph: False frees the graph afterwards, as torch does (see ``free``);
            None, torch's default, frees it unless ``create_graph``.

    Returns:
        ``{id(node): its gradient from this pass}`` when ``accumulate`` is False, else {}.

    Raises:
        DomainError: A gradient is not finite; it names the op whose step made it, and
            every ``.grad`` is left as it was.
    """
    with _walking, paused_gc():
        order = topological_order(*roots)
        if len(roots) == 1 and type(seeds[0]) is float and not create_graph and trace is None:
            found = _fast.backward(order, seeds[0], accumulate)
            if found is not None:
                return found
            # a gradient was not finite: the checked pass names the op (and raises)
            return backward_pass(order, roots, seeds, check=True)
        found = backward_pass(order, roots, seeds, create_graph, accumulate, trace)
        if not (create_graph if retain_graph is None else retain_graph):
            free(order)
        return found


def free(order: list[Any]) -> None:
    """What torch does after a ``backward()`` without ``retain_graph=True``: each op's node
    forgets the numbers its rule kept from the forward pass. A Tensor node is marked
    ``FREED``; a later pass through it raises if its rule needs them (``backward_step``).
    A Value (whose ``_made_at`` is None) is never freed: micrograd walks a graph as often
    as asked."""
    for node in order:
        if node._made_at is not None:  # a leaf's is None, as a Value's
            node._made_at = FREED


def backward_pass(order: list[Any], roots: Sequence[Any], seeds: Sequence[Any],
                  create_graph: bool = False, accumulate: bool = True,
                  trace: list | None = None, check: bool = False) -> dict[int, Any]:
    """The chain rule over ``order``, a topological order of the roots' graph (see
    ``backward``; ``check``: look at every gradient as it is made, not only at the leaves).

    1. Start every node's gradient empty, and each root's at its seed.
    2. Walk the order backwards, running each node's ``backward_step``: its rule turns
       the gradient that reached it into one gradient per input, added (+=) into that
       input's ``.grad``. Going backwards, a node has received all of its gradient, from
       every op that uses it, before it passes it on.
    3. Put back what each ``.grad`` held before, plus this pass (``accumulate``: calling
       ``backward()`` twice adds twice, as PyTorch does), or return this pass and leave
       every ``.grad`` as it was.
    """
    before = [node.grad for node in order]
    try:
        _start(order, roots, seeds)
        try:
            _walk(order, create_graph, check or create_graph, trace)
            if not all(is_finite(node.grad) for node in order if node._rule is None):
                raise _NotFiniteError
        except _NotFiniteError:  # walk again, checking every step, to name the op
            _start(order, roots, seeds)
            _walk(order, create_graph, True, None)
            raise DomainError("backward: a gradient is not finite, and no op's rule made "
                              "it: a hand-written _backward closure did") from None
    except BaseException:  # a failed pass leaves every .grad as it was
        _restore(order, before)
        raise
    if not accumulate:
        found = {id(node): node.grad for node in order}
        _restore(order, before)
        return found
    _add_earlier_passes(order, before, seeds)
    return {}


def _restore(order: list[Any], before: list[Any]) -> None:
    for node, old in zip(order, before):
        node.grad = old


def _add_earlier_passes(order: list[Any], before: list[Any], seeds: Sequence[Any]) -> None:
    """Each ``.grad`` becomes what it held before this pass plus this pass; a gradient that
    is kept becomes an array of its own (see ``_own``: never a seed, which is the caller's),
    and then what the node's kind shows its users (``_as_grad``: a Tensor's ``.grad`` is a
    Tensor). A node that does not keep its gradient (``Node._keeps_grad``) gets back what
    it held."""
    shared = {id(seed) for seed in seeds}
    for node, old in zip(order, before):
        g = node.grad
        if g is None or not (node._rule is None or node._keeps_grad):
            node.grad = old
            continue
        g = _own(g, node, shared)
        g = g if old is None or (type(old) is float and old == 0.0) else old + g
        node.grad = g if node._as_grad is None else node._as_grad(g)


def _start(order: list[Any], roots: Sequence[Any], seeds: Sequence[Any]) -> None:
    for node in order:
        node.grad = node._initial_grad
    for root, seed in zip(roots, seeds):
        root.grad = _add(root.grad, seed)


def _walk(order: list[Any], create_graph: bool, check: bool, trace: list | None) -> None:
    """Every node's ``backward_step``, outputs before inputs. With a ``trace``, each step
    is recorded as ``(node, out.grad, inputs' grads before, inputs' grads after)``."""
    with enable_grad() if create_graph else _as_it_is():
        for node in reversed(order):
            if trace is None:
                backward_step(node, create_graph, check)
            elif node._rule is not None:
                g, before = node.grad, [_copy(x.grad) for x in node._prev]
                backward_step(node, create_graph, check=True)
                trace.append((node, g, before, [x.grad for x in node._prev]))


def backward_step(out: Any, create_graph: bool = False, check: bool = False) -> None:
    """``out._backward()``: add ``out.grad`` times out's local derivative into each input.

    The rule of out's op, ``vjp(xs, out, g, *params)``, gives each input its share of the
    gradient ``g`` that reached ``out``; a share the op broadcast is summed back to its
    input's shape (``sum_to_shape``), and added into that input's ``.grad``.

    Args:
        out: The node whose step this is.
        create_graph: Hand the rule the nodes themselves rather than their data.
        check: Raise a DomainError naming the op as soon as a gradient is not finite.
    """
    rule, g = out._rule, out.grad
    if rule is None:
        return  # a leaf: nothing before it
    if type(rule) is ClosureRule:
        return _run_closure(out, create_graph, check)
    if g is None:
        raise _no_gradient_yet(out)
    if out._made_at != writes[0] and out._made_at is not None:  # freed, or a tensor written
        _check_kept(out)
    if not check and not rule.primitive.keeps_nan and not is_finite(g):
        raise _NotFiniteError  # this rule might drop it: let the checked pass name its source
    inputs = out._prev
    try:
        if create_graph:
            grads = rule.vjp(inputs, out, g, *rule.params)
        else:
            grads = rule.vjp(tuple([x._value for x in inputs]), out._value, g, *rule.params)
    except (ZeroDivisionError, OverflowError, DomainError) as exc:
        raise _rule_failed(out, exc) from exc
    if len(grads) != len(inputs):
        raise ValueError(f"{out._op}: its rule returned {len(grads)} gradient(s) for "
                         f"{len(inputs)} input(s)")
    for x, gx in zip(inputs, grads):
        if gx is None or not x.requires_grad:
            continue  # a constant: it takes no gradient
        if type(x._value) is not float and gx.shape != x._value.shape:
            gx = _summed_back(out, gx, x)  # the op broadcast x: undo it
        x.grad = gx if x.grad is None else x.grad + gx  # +=, not in place: gx may be shared
        if check and not (is_finite(gx) and is_finite(x.grad)):
            raise _non_finite(out, x, gx)


def _check_kept(out: Any) -> None:
    """torch's two refusals to run a step whose rule reads numbers kept from the forward
    pass: its graph was freed by a ``backward()`` without ``retain_graph``, or one of those
    numbers was changed in place since (torch's version counter)."""
    if out._made_at == FREED:
        if out._reads_forward():
            raise RuntimeError(
                f"{out._op}: Trying to backward through the graph a second time (or directly "
                "access saved tensors after they have already been freed). Saved intermediate "
                "values of the graph are freed when you call .backward() or autograd.grad(). "
                "Specify retain_graph=True if you need to backward through the graph a second "
                "time or if you need to access saved tensors after calling backward.")
        return
    changed = out._changed_input()
    if changed is not None:
        raise _changed_in_place(out, changed)


def _changed_in_place(out: Any, x: Any) -> RuntimeError:
    where = next(i for i, y in enumerate(out._prev) if y is x)
    return RuntimeError(
        f"{out._op}: one of the variables needed for gradient computation has been modified "
        f"by an inplace operation: its input {where} (of shape {tuple(x._value.shape)}) was "
        "changed in place after this node was computed; compute the forward again after "
        "changing it (as torch's version counter says)")


def _no_gradient_yet(out: Any) -> RuntimeError:
    return RuntimeError(
        f"{out._op or 'backward'}: _backward() needs the gradient that reached this node, "
        "but its .grad is None; set it first (for the output: out.grad = ones of its "
        "shape), or call out.backward()")


def _rule_failed(out: Any, exc: Exception) -> Exception:
    """A rule that divided by zero or overflowed: the derivative is unbounded there. A
    DomainError the rule raised itself (naming its op) is passed on as it is."""
    if isinstance(exc, DomainError) and str(exc).startswith(f"{out._op}:"):
        return exc
    return _non_finite(out)


def _summed_back(out: Any, g: Any, x: Any) -> Any:
    try:
        return sum_to_shape(g, x._value.shape)
    except ValueError as exc:
        raise ValueError(f"{out._op}: {exc}") from None


def _run_closure(out: Any, create_graph: bool, check: bool) -> None:
    """Run a ``_backward`` closure assigned by hand (see ``ClosureRule``)."""
    inputs = out._prev
    if create_graph:
        raise TypeError(
            f"backward(create_graph=True): node {out._op!r} has a hand-written _backward "
            "closure, which works on numbers and cannot be differentiated again; build it "
            "with chaingrad.primitive instead")
    for x in inputs:  # the closure adds into .grad: give it something to add to
        if x.grad is None:
            x.grad = x._value * 0
    out._rule.backward()
    if check and not all(is_finite(x.grad) for x in inputs):
        raise DomainError(f"{out._op or 'backward'}: its hand-written _backward closure "
                          "wrote a gradient that is not finite (nan or inf)")


def backward_closure(out: Any) -> Callable[[], None]:
    """``out._backward``: its ``backward_step`` as a closure, to call by hand as in
    micrograd's lecture (set ``out.grad`` first, or run the steps after it)."""

    def _backward() -> None:
        backward_step(out)

    return _backward


def sum_to_shape(g: Any, shape: tuple[int, ...]) -> Any:
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
    if lead < 0 or any(n != 1 and g.shape[lead + i] != n for i, n in enumerate(shape)):
        raise ValueError(f"a gradient of shape {g.shape} cannot belong to an input of shape "
                         f"{shape}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


def is_finite(g: Any) -> bool:
    """True when a number, an array or a node's data has no nan or inf.

    An array of floats is read once, by its dot product with itself: a sum of squares is
    nan or inf if an entry is (a square is never negative, so no inf - inf can hide one),
    and otherwise finite unless it overflows, when each entry is looked at. Two to four
    times as fast as a sum, or as ``np.isfinite(g).all()``, which makes an array of
    booleans first. numpy warns when that sum overflows: the callers (the backward pass,
    an optimizer's step, a compiled forward) run with its warnings off.
    """
    if type(g) is float:
        return g - g == 0  # nan - nan and inf - inf are nan
    if g is None:
        return True
    if hasattr(g, "_prev"):  # a node (create_graph): its data
        g = g._value
    if not hasattr(g, "dtype"):
        return g - g == 0  # a number of another type
    if g.dtype.kind in "biu":
        return True  # booleans and integers are finite
    if g.dtype.kind == "f":  # float16 has no BLAS dot (and would warn when it overflows)
        if g.size == 1:  # one entry (a loss): no call into numpy's loops
            return math.isfinite(g.item())
        if g.itemsize >= 4:
            flat = g.ravel("K")  # a view, unless the array is not one block of memory
            if math.isfinite(flat.dot(flat)):
                return True
    return bool(((g == g) & (abs(g) != math.inf)).all())  # entry by entry: no nan, no inf


def _own(g: Any, node: Any, shared: set[int]) -> Any:
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


def _copy(g: Any) -> Any:
    """A gradient as it is now (a copy of an array, which a closure may change in place)."""
    return g.copy() if hasattr(g, "copy") else g


def _add(old: Any, new: Any) -> Any:
    """``old + new``, where an empty ``old`` (None, or a Value's 0.0) adds nothing."""
    if old is None or (type(old) is float and old == 0.0):
        return new
    return old + new


def _non_finite(node: Any, x: Any = None, g: Any = None) -> DomainError:
    """The error for a step that made a nan or inf: the op, where, and what it got."""
    if x is not None and getattr(x._value, "shape", ()) != ():
        return _non_finite_array(node, x, g)
    inputs = ", ".join(repr(_number(c._value)) for c in node._prev)
    if x is not None and is_finite(g):  # each share was finite: their sum overflowed
        return DomainError(f"{node._op or 'backward'}: the gradients that reach its input(s) "
                           f"{inputs} add up to more than a float holds (overflow)")
    got = "" if x is None else f" (got {_number(g)})"
    return DomainError(
        f"{node._op or 'backward'}: the gradient is not finite at input(s) {inputs}{got}; "
        "the derivative is unbounded there, or the product overflows a float")


def _non_finite_array(node: Any, x: Any, g: Any) -> DomainError:
    if hasattr(g, "_prev"):
        g = g._value
    flat = (g - g != 0).reshape(-1)
    i = int(flat.argmax())
    index = tuple(int(k) for k in _unravel(i, g.shape))
    value = x._value.reshape(-1)[i].item() if x._value.shape == g.shape else None
    where = f"index {index}, where the input is {value!r}" if value is not None else \
        f"index {index}"
    return DomainError(
        f"{node._op or 'backward'}: the gradient is {g.reshape(-1)[i].item()} at {where} "
        f"(input of shape {x._value.shape}); the derivative is unbounded there or overflows")


def _number(x: Any) -> Any:
    """A node's data or a gradient as a plain number when it is one (for messages)."""
    if hasattr(x, "_prev"):
        x = x._value
    return x.item() if getattr(x, "size", 0) == 1 else x


def _unravel(i: int, shape: tuple) -> list[int]:
    index = []
    for n in reversed(shape):
        index.append(i % n)
        i //= n
    return index[::-1]


def quiet_numpy(nodes: Iterable[Any]) -> Any:
    """A context with numpy's floating-point warnings off where a node holds an array (a
    nan or inf is reported as a DomainError, which names the op, and an overflowing sum
    of squares in ``is_finite`` is no error at all); for Values, which need no numpy, a
    context that changes nothing."""
    if not any(hasattr(node._value, "dtype") for node in nodes):
        return _as_it_is()
    import numpy as np

    return np.errstate(all="ignore")


class _as_it_is:  # noqa: N801 - used like a function: `with _as_it_is():`
    """A context that changes nothing (grad mode as it is)."""

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        pass


def do_nothing() -> None:
    """The ``_backward`` of a leaf: there is nothing before it to pass a gradient to."""


class ClosureRule:
    """A micrograd-style ``_backward`` closure that a user assigned by hand, as a rule.

    Such a closure reads ``out.grad`` and adds into its inputs' ``.grad`` itself, so the
    driver runs it and adds nothing more.
    """

    __slots__ = ("backward",)
    params: tuple = ()
    primitive = None
    name = ""

    def __init__(self, backward: Callable[[], None]) -> None:
        self.backward = backward

    def vjp(self, xs: tuple, out: Any, g: Any) -> tuple:
        self.backward()
        return (0.0,) * len(xs)

