"""One traced call of a function: the graph it built, what each leaf is (an input, a
parameter or a constant), when a later call may reuse it, its code run on a call, and
``check=True``'s comparison with the eager function.

A trace runs the function once with its leaves recorded (``autodiff.recording_leaves``),
orders the graph, sorts its leaves, and has the code writer (``writer.py``) write the
graph's code, in chunks if it is large (``chunks.py``). Its outputs' rule is that code's
backward, resumed: a compiled output is a node whose inputs are the parameters.

Example:
    >>> from chaingrad import Value
    >>> w = Value(2.0, label="w")
    >>> args = (3.0,)
    >>> flat, shape = flatten_args(args)
    >>> trace = Trace(lambda x: Value(x) * w, args, flat)
    >>> [leaf.label for _, leaf in trace.params], len(trace.inputs), trace.run(None, args, flat)
    (['w'], 1, Value(data=6.0, grad=0.0))
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator
from typing import Any

from .. import autodiff, gradmode, guards
from ..declaration import GENERIC_FORMULA, Primitive
from ..engine import Value
from ..errors import CompileCheckError
from . import chunks
from .engines import VALUES, engine_of, is_array
from .writer import CodeWriter, build, variables


def flatten_args(args: tuple) -> tuple[list, tuple]:
    """The numbers and Values in ``args`` (lists and tuples walked), and the shape of the
    call: its structure, and which positions hold the very same object."""
    flat: list = []

    def walk(x: Any) -> Any:
        if isinstance(x, autodiff.Node):  # a Value or a Tensor: a parameter, read live
            flat.append(x)
            return ("T", x._value.shape, x._value.dtype.str) if is_array(x._value) else "V"
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, tuple(walk(item) for item in x))
        if is_array(x):
            flat.append(x)
            return ("a", x.shape, x.dtype.str)
        if isinstance(x, (int, float)) and not isinstance(x, bool) or (
                hasattr(x, "__float__") and not hasattr(x, "__len__")):
            flat.append(x)
            return "n"
        raise TypeError(f"compile: arguments may be numbers, Values, Tensors, numpy arrays, "
                        f"and lists or tuples of them; got {type(x).__name__}")

    structure = tuple(walk(a) for a in args)
    first: dict[int, int] = {}
    return flat, (structure, tuple(first.setdefault(id(x), i) for i, x in enumerate(flat)))


class Trace:
    """One traced call of the function: its graph, what each leaf is, and the code."""

    def __init__(self, fn: Callable[..., Any], args: tuple, flat: list,
                 keep_graph: bool = False):
        with autodiff.recording_leaves() as made, gradmode.enable_grad():
            result = fn(*args)
        self.outputs_kind, self.outputs = _outputs_of(result)
        del result  # the outputs hold the graph; a large one is let go as its code is written
        self.order = autodiff.topological_order(*self.outputs)
        self.engine = engine_of(self.outputs[0])
        self.arrays = self.engine is not VALUES  # a Tensor graph
        self._sort_leaves(made, flat)
        self.fn_name = getattr(fn, "__name__", "the function")
        self.chunked = len(self.order) > chunks.LOCALS_LIMIT and not self.arrays
        self.takes_grad = [leaf for _, leaf in self.params if leaf.requires_grad]
        self.args = _arguments_read(self.order, flat, self.params)  # for rules' params
        self.zeros = [out._value * 0 for out in self.outputs]  # the seed of an output not asked
        self.outputs_template = self.outputs[0]
        let_go = self.chunked and not keep_graph  # keep the code, not the graph
        if let_go:
            self.outputs_template = Value(0.0)
        texts = self._write(let_go)
        used = {i for i, _ in self.inputs} | {i for i, _ in self.params} | self.writer.used_args
        self.guarded = {i: _snapshot(x) for i, x in enumerate(flat)  # the trace's constants
                        if i not in used and not (isinstance(x, autodiff.Node)
                                                  and not is_array(x._value))}
        self.rule = Primitive(self.fn_name, self._vjp, (GENERIC_FORMULA,),
                              params=("state", "k"))
        self.graph = build(self.writer, texts)
        if let_go:
            self.order = self.needs_grad = self.constants = self.writer = None

    def _sort_leaves(self, made: list, flat: list) -> None:
        """Each leaf is an input (a number argument made a Value), a parameter (a Value
        argument, or one read from elsewhere: read live), or a constant of the code."""
        made_ids = {id(leaf) for leaf in made}
        numbers = {id(x): i for i, x in enumerate(flat) if not isinstance(x, autodiff.Node)}
        values = {id(x): i for i, x in enumerate(flat) if isinstance(x, autodiff.Node)}
        self.inputs: list[tuple[int, Any]] = []  # (position in the arguments, leaf)
        self.params: list[tuple[int | None, Any]] = []  # (position, or None: read live)
        self.constants: dict[int, float] = {}  # id(leaf) -> its value, written in the code
        for node in self.order:
            if node._a is not None or node._rule is not None:
                if node._rule is None or type(node._rule) is guards.ClosureRule:
                    raise TypeError(f"compile: node {node._op!r} has a hand-written "
                                    "_backward closure (or none), whose code compile cannot "
                                    "read; build the op with chaingrad.primitive instead")
            elif id(node) in values:
                self.params.append((values[id(node)], node))
            elif id(node) in made_ids and id(node._value) in numbers:
                self.inputs.append((numbers[id(node._value)], node))
            elif id(node) in made_ids:
                self.constants[id(node)] = node._value
            else:
                self.params.append((None, node))

    def _write(self, let_go: bool) -> list[tuple[str, str]]:
        """The code's text: one ``("graph", text)``, or a large graph's chunks. With
        ``let_go``, the graph is let go while its chunks are written
        (``chunks.write_in_chunks``), so that the graph, the text and the code are never
        all held at once."""
        with autodiff.walking:  # meanwhile each node's _mark holds its place in the order
            _number(self.order)  # (a loop here would keep its last node, the output, alive)
            self.needs_grad = _needing_gradients(self)
            self.output_places = {out._mark: k for k, out in enumerate(self.outputs)}
            self.names = {} if self.chunked else variables(self.outputs, self.order,
                                                           self.engine.namespace)
            self.writer = CodeWriter(self, self.engine)
            self.text = None if self.chunked else self.writer.source()
            texts = (chunks.write_in_chunks(self.writer, let_go) if self.chunked
                     else [("graph", self.text)])
            for node in self.order:
                if node is not None:  # (a node let go has no mark to clear)
                    node._mark = None
        return texts

    @property
    def source(self) -> str:
        if self.text is None:
            raise RuntimeError(f"compile: the code of a graph of more than "
                               f"{chunks.LOCALS_LIMIT:,} nodes is written in chunks over lists "
                               "of values, and not kept; trace a smaller graph to read its code")
        return self.text

    def still_holds(self, flat: list) -> bool:
        """Whether a call with these arguments may reuse the trace (see ``guarded``)."""
        return all(_same(flat[i], x) for i, x in self.guarded.items())

    def run(self, fn: Callable[..., Any], args: tuple, flat: list) -> Any:
        """The compiled forward on this call's arguments: nodes that know their backward."""
        leaves = [leaf if i is None else flat[i] for i, leaf in self.params]
        inputs = [flat[i] if self.arrays else float(flat[i]) for i, _ in self.inputs]
        state = self.graph(inputs, [leaf._value for leaf in leaves], flat)
        with guards.quiet_numpy([self.outputs_template]):  # arrays: torch's inf, no warning
            values = next(state)  # the forward runs, up to its yield
            finite = all(guards.is_finite(v) for v in values)
        if not finite:  # eager says which op: a Value's raises, a Tensor graph's backward()
            return fn(*args)  # names it (chaingrad.anomaly), which the compiled node cannot
        node = type(self.outputs_template)
        if not gradmode.is_grad_enabled() or not self.takes_grad:  # no graph to keep
            return self.outputs_kind([node._lift(v, None) if self.arrays else Value(v)
                                      for v in values])
        children = [leaf if i is None else flat[i] for i, leaf in self.params
                    if leaf.requires_grad]
        return self.outputs_kind([node._from_rule(v, children, self.rule.bind(state, k))
                                  for k, v in enumerate(values)])

    def _vjp(self, xs: tuple, out: Any, g: Any, state: Iterator, k: int) -> tuple:
        """The rule of a compiled output: the backward part of the code, resumed."""
        if isinstance(g, autodiff.Node):
            raise TypeError("compile: backward(create_graph=True) needs the eager graph; "
                            "call the function itself, not its compiled form, for "
                            "higher-order gradients")
        seeds = [0.0 * z for z in self.zeros]
        seeds[k] = g
        return state.send(seeds)

    def compare_with_eager(self, fn: Callable[..., Any], args: tuple, flat: list,
                           compiled: Any) -> None:
        """Run ``fn`` eagerly and raise at the first node whose value or gradient differs."""
        _, eager = _outputs_of(fn(*args))
        order = autodiff.topological_order(*eager)
        traced = {} if self.arrays else _values_of(self, flat)
        for mine, now in itertools.zip_longest(self.order, order):
            name = self.names[id(mine)] if mine is not None else "the end of the graph"
            if mine is None or now is None or mine._op != now._op:
                raise CompileCheckError(
                    f"compile(check=True): at {name} the graph differs from the traced one "
                    f"(traced {getattr(mine, '_op', None)!r}, now {getattr(now, '_op', None)!r})"
                    ": the function took another path for these arguments (Python control "
                    "flow on values, which a trace cannot see)")
            value = traced.get(id(mine), now._value)
            if not _close(value, now._value):
                raise CompileCheckError(
                    f"compile(check=True): {name} ({mine._op or 'a leaf'}) is {now._value!r} "
                    f"eagerly but {value!r} compiled: a value the trace took as a constant "
                    "has changed")
        outs = compiled if isinstance(compiled, (list, tuple)) else (compiled,)
        eager_grads = autodiff.backward(list(eager), [_ones_like(o._value) for o in eager],
                                        accumulate=False)
        compiled_grads = autodiff.backward(list(outs), [_ones_like(o._value) for o in outs],
                                           accumulate=False)
        for i, traced_leaf in self.params:
            leaf = traced_leaf if i is None else flat[i]
            if not _close(compiled_grads.get(id(leaf), 0.0), eager_grads.get(id(leaf), 0.0)):
                raise CompileCheckError(
                    f"compile(check=True): the gradient of {self.names[id(traced_leaf)]}"
                    f" differs: {eager_grads.get(id(leaf))!r} eagerly, "
                    f"{compiled_grads.get(id(leaf))!r} compiled")


def _number(order: list) -> None:
    """Mark each node with its place in the order."""
    for place, node in enumerate(order):
        node._mark = place


def _arguments_read(order: list, flat: list, params: list) -> dict[int, tuple[int, str]]:
    """The arrays among the rules' parameters that the code reads from the call's arguments
    instead of keeping them: ``id(array)`` -> (the argument's place, the code that reads it).

    A numpy array argument is read as it is (``args[i]``); a Tensor argument outside the
    graph (a mask, an index: no rule takes its gradient) by its array (``args[i]._value``),
    or broadcast as the rule took it (``masked_fill``'s mask). A boolean index of ``x[m]``
    is not read: the result's shape depends on it, so its argument is guarded instead (a
    call with another mask traces again), as is an argument that a rule reads only through
    what the function made of it (``m == 0``)."""
    leaves = {i for i, _ in params}
    arrays = {id(x): (i, x) for i, x in enumerate(flat) if is_array(x)}
    tensors = {id(x._value): (i, x._value) for i, x in enumerate(flat)
               if isinstance(x, autodiff.Node) and is_array(x._value) and i not in leaves}
    read: dict[int, tuple[int, str]] = {}
    for node in order:
        if node._rule is None:
            continue
        prim = node._rule.primitive
        shapes_output = operator.getitem in (prim.array, prim.forward)  # x[m]
        for p in _arrays_among(node._rule.params):
            if shapes_output and p.dtype.kind == "b":
                continue
            if id(p) in arrays:
                read[id(p)] = (arrays[id(p)][0], f"args[{arrays[id(p)][0]}]")
                continue
            base = p.base if p.base is not None and id(p.base) in tensors else p
            if id(base) not in tensors:
                continue
            i, array = tensors[id(base)]
            if p is array:
                read[id(p)] = (i, f"args[{i}]._value")
            elif _is_broadcast_of(p, array):
                read[id(p)] = (i, f"np.broadcast_to(args[{i}]._value, {p.shape!r})")
    return read


def _arrays_among(params: tuple) -> Iterator:
    """The arrays among a rule's parameters (an index tuple's included)."""
    for p in params:
        if is_array(p):
            yield p
        elif isinstance(p, tuple):
            yield from _arrays_among(p)


def _is_broadcast_of(view: Any, array: Any) -> bool:
    """Whether ``view`` is ``np.broadcast_to(array, view.shape)``: the same numbers from the
    same place, laid out as broadcasting lays them out (stride 0 along a new or stretched
    axis, the array's own stride elsewhere), not a slice of them, say."""
    lead = view.ndim - array.ndim
    if view.dtype != array.dtype or lead < 0 or (view.__array_interface__["data"][0]
                                                 != array.__array_interface__["data"][0]):
        return False
    for k, (n, stride) in enumerate(zip(view.shape, view.strides)):
        own = (1, 0) if k < lead else (array.shape[k - lead], array.strides[k - lead])
        if n != 1 and stride != (own[1] if own[0] == n else 0 if own[0] == 1 else None):
            return False
    return True


def _snapshot(x: Any) -> Any:
    """An argument as the trace saw it (a copy of an array or of a Tensor's, which may
    change in place)."""
    if isinstance(x, autodiff.Node):
        x = x._value
    return x.copy() if is_array(x) else x


def _same(now: Any, then: Any) -> bool:
    """Whether an argument is what the trace saw."""
    if isinstance(now, autodiff.Node):
        now = now._value
    if is_array(then):
        return is_array(now) and now.shape == then.shape and bool((now == then).all())
    return now == then


def _outputs_of(result: Any) -> tuple[Callable[[list], Any], list]:
    """The Values a function returned, and how to give results back in the same form."""
    if isinstance(result, autodiff.Node):
        return (lambda outs: outs[0]), [result]
    if isinstance(result, (list, tuple)) and result and all(
            isinstance(r, autodiff.Node) and type(r) is type(result[0]) for r in result):
        return type(result), list(result)
    raise TypeError(f"compile: the function must return a Value or a Tensor, or a tuple or "
                    f"list of them; got {type(result).__name__}")


def _values_of(trace: Trace, flat: list) -> dict[int, float]:
    """Every node's value in a call with these arguments, as the compiled code computes it
    (a check=True call's forward, run again with every value kept)."""
    inputs = {id(leaf): float(flat[i]) for i, leaf in trace.inputs}
    params = {id(leaf): (leaf if i is None else flat[i])._value for i, leaf in trace.params}
    values: dict[int, float] = {}
    for node in trace.order:
        if node._rule is None:
            values[id(node)] = inputs.get(id(node), params.get(id(node), node._value))
        else:
            rule = node._rule
            forward = rule.primitive.forward
            values[id(node)] = forward(*(values[id(x)] for x in node._prev), *rule.params)
    return values


def _close(a: Any, b: Any) -> bool:
    """Whether two values or gradients agree to 1e-12 relative: floats, or arrays entry by
    entry (of one shape; nan agrees with nan, as a Tensor holds it); None (no gradient)
    agrees with None and with zeros."""
    if a is None or b is None:  # no gradient: zeros
        other = a if b is None else b
        return other is None or not (other.any() if hasattr(other, "any") else other)
    if hasattr(a, "shape") or hasattr(b, "shape"):
        if getattr(a, "shape", ()) != getattr(b, "shape", ()):
            return False
        near = (a == b) | ((a != a) & (b != b)) | (abs(a - b) <= 1e-12 * abs(b))
        return bool(near.all())
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def _ones_like(value: Any) -> Any:
    """The seed of an output: 1.0, or an array of ones of its shape and dtype (``v ** 0``
    is 1 for every entry, nan and inf included)."""
    return 1.0 if type(value) is float else value ** 0


def _needing_gradients(trace: Trace) -> bytearray:
    """Which nodes' gradients the backward computes, by place in the order (``_mark``):
    those on a path to a parameter."""
    needs = bytearray(len(trace.order))
    for leaf in trace.takes_grad:
        needs[leaf._mark] = 1
    for i, node in enumerate(trace.order):
        if node._rule is not None and any(needs[x._mark] for x in node._prev):
            needs[i] = 1
    return needs


