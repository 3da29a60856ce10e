"""``chaingrad.compile``: a function of Values as straight-line Python, forward then backward.

``step = chaingrad.compile(loss_fn)`` traces ``loss_fn`` the first time it is called: it
runs it as usual and reads the graph it built. It then writes that graph as Python code —
the forward, one line per op, then the backward, one line per input of each ``_backward``
step, each line its primitive's formula, in the order ``backward()`` runs them — and
compiles it. Later calls run that code: no node is made, no graph is ordered.

``step(*args)`` returns what ``loss_fn`` returns: Values whose ``backward()`` adds the
gradients into every leaf the function reached (the parameters it read through a closure
or a model included), exactly as the eager graph would.

What a trace sees, and what it cannot (as with PyTorch's tracing):

- Operations on Values are recorded. The arguments' numbers that become Values as they
  are (``Value(x)``) are inputs: the next call may change them.
- Anything else is a constant of the trace: Python arithmetic on numbers (``-y`` before it
  becomes a Value), values read from elsewhere, and every branch Python took (``if
  x.data > 0:``). An argument number used that way is guarded: a call with another value
  traces again. A branch on a Value's data is not seen at all: ``compile(fn, check=True)``
  runs the eager function beside the compiled code and raises at the first difference.
- A trace is reused while the call has the same shape: the same structure of arguments
  (numbers, Values, lists and tuples of the same lengths). The parameters are the very
  Values the function read when it was traced: give one a new ``.data`` at will, but if
  you replace one by another Value, compile again.
- A value that overflows is reported when it reaches an output (the eager function is
  then run to say where); one that an op swallows on the way (``relu`` of ``-inf``) is
  not, where the eager function raises at once.

Example:
    >>> import chaingrad
    >>> from chaingrad import Value
    >>> w = Value(-3.0, label="w")
    >>> step = chaingrad.compile(lambda x: (x * w).tanh())
    >>> out = step(0.5)
    >>> out.backward()
    >>> round(out.data, 4), round(w.grad, 4)
    (-0.9051, 0.0904)
    >>> print(step.source.splitlines()[-4])
            mul1_grad = (1 - tanh1**2) * tanh1_grad
"""

from __future__ import annotations

import builtins
import functools
import itertools
import keyword
import operator
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from types import CodeType
from typing import Any

from . import autodiff, gradmode, guards
from .engine import Value
from .errors import CompileCheckError
from .rules import (
    FUNCTIONS,
    GENERIC_FORMULA,
    POW_N,
    PRIMITIVES,
    Primitive,
    any_true,
    array_namespace,
    data,
    fill_in,
    identifier,
    on_floats,
    sign,
    substitute,
)
from .show.names import node_names, reading_order

LOCALS_LIMIT = 100_000
"""A graph of more nodes is written as chunks of code over a list of values, not as one
function with a variable per node (Python would compile that slowly, and keep it large)."""
CHUNK = 10_000
"""Lines per function in a graph written in chunks."""

_INFIX = {operator.add: "+", operator.mul: "*"}  # a forward that is Python's operator is written so


def compile(fn: Callable[..., Any] | None = None, *, check: bool = False) -> Any:  # noqa: A001
    """Compile ``fn``, a function of Values, into straight-line Python (see the module).

    Args:
        fn: Takes numbers, Values, and lists or tuples of them; returns a Value or a tuple
            or list of Values. Also a decorator, with or without ``check``.
        check: Run the eager ``fn`` beside the compiled code at every call, and raise
            ``CompileCheckError`` at the first node whose value or gradient differs.

    Returns:
        A ``Compiled`` function: call it as ``fn``; ``.source`` (or ``print`` it) shows the
        code of its last trace.

    Example:
        >>> from chaingrad import Value
        >>> x = Value(2.0, label="x")
        >>> @compile
        ... def scaled_square(scale):
        ...     return x * x * scale
        >>> scaled_square(3.0).data, scaled_square(0.5).data
        (12.0, 2.0)
    """
    if fn is None:
        return lambda f: compile(f, check=check)
    if not callable(fn):
        raise TypeError(f"compile: needs a function, got {type(fn).__name__}")
    if not isinstance(check, bool):
        raise TypeError(f"compile: check must be True or False, got {check!r}")
    return Compiled(fn, check)


class Compiled:
    """A function compiled by ``chaingrad.compile``: call it as the function it wraps."""

    def __init__(self, fn: Callable[..., Any], check: bool = False):
        self.fn, self.check = fn, check
        self.traces: dict[Any, Trace] = {}
        self.last: Trace | None = None
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args: Any) -> Any:
        flat, shape = _flatten(args)
        trace = self.traces.get(shape)
        if trace is None or not trace.still_holds(flat):
            trace = self.traces[shape] = Trace(self.fn, args, flat, keep_graph=self.check)
        self.last = trace
        out = trace.run(self.fn, args, flat)
        if self.check:
            trace.compare_with_eager(self.fn, args, flat, out)
        return out

    @property
    def source(self) -> str:
        """The code of the last trace: its forward, then its backward."""
        if self.last is None:
            raise RuntimeError(f"compile: {self.__name__} has not been called yet; its code "
                               "is written at its first call")
        return self.last.source

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        traced = "not traced yet" if self.last is None else f"{len(self.traces)} trace(s)"
        return f"<chaingrad.compile of {self.__name__}: {traced}>"


def _flatten(args: tuple) -> tuple[list, tuple]:
    """The numbers and Values in ``args`` (lists and tuples walked), and the shape of the
    call: its structure, and which positions hold the very same object."""
    flat: list = []

    def walk(x: Any) -> Any:
        if isinstance(x, autodiff.Node):  # a Value or a Tensor: a parameter, read live
            flat.append(x)
            return ("T", x._value.shape, x._value.dtype.str) if _is_array(x._value) else "V"
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, tuple(walk(item) for item in x))
        if _is_array(x):
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


def _is_array(x: Any) -> bool:
    """Whether ``x`` is a numpy array (told by what it offers: numpy is not imported)."""
    return hasattr(x, "__array_interface__") and hasattr(x, "shape")


class Trace:
    """One traced call of the function: its graph, what each leaf is, and the code."""

    def __init__(self, fn: Callable[..., Any], args: tuple, flat: list,
                 keep_graph: bool = False):
        with autodiff.recording_leaves() as made, gradmode.enable_grad():
            result = fn(*args)
        self.outputs_kind, self.outputs = _outputs(result)
        del result  # the outputs hold the graph; a large one is let go as its code is written
        self.order = autodiff.topological_order(*self.outputs)
        self.arrays = _is_array(self.outputs[0]._value)  # a Tensor graph
        self._sort_leaves(made, flat)
        self.fn_name = getattr(fn, "__name__", "the function")
        self.chunked = len(self.order) > LOCALS_LIMIT and not self.arrays
        self.takes_grad = [leaf for _, leaf in self.params if leaf.requires_grad]
        self.args = {id(x): i for i, x in enumerate(flat) if _is_array(x)}  # for rules' params
        self.zeros = [out._value * 0 for out in self.outputs]  # the seed of an output not asked
        self.outputs_template = self.outputs[0]
        let_go = self.chunked and not keep_graph  # keep the code, not the graph
        if let_go:
            self.outputs_template = Value(0.0)
        texts = self._write(let_go)
        used = {i for i, _ in self.inputs} | self.lines.used_args
        self.guarded = {i: _snapshot(x) for i, x in enumerate(flat)  # the trace's constants
                        if not isinstance(x, autodiff.Node) and i not in used}
        self.rule = Primitive(self.fn_name, self._vjp, (GENERIC_FORMULA,),
                              params=("state", "k"))
        self.graph = _build(self.lines, texts)
        if let_go:
            self.order = self.needs_grad = self.constants = self.lines = None

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
        ``let_go``, the graph is let go while its chunks are written (``_Lines.chunks``),
        so that the graph, the text and the code are never all held at once."""
        with autodiff.walking:  # meanwhile each node's _mark holds its place in the order
            _number(self.order)  # (a loop here would keep its last node, the output, alive)
            self.needs_grad = _needing_gradients(self)
            self.output_places = {out._mark: k for k, out in enumerate(self.outputs)}
            self.names = {} if self.chunked else _variables(self.outputs, self.order)
            self.lines = (_ArrayLines if self.arrays else _Lines)(self)
            self.text = None if self.chunked else self.lines.source()
            texts = self.lines.chunks(let_go) if self.chunked else [("graph", self.text)]
            for node in self.order:
                if node is not None:  # (a node let go has no mark to clear)
                    node._mark = None
        return texts

    @property
    def source(self) -> str:
        if self.text is None:
            raise RuntimeError(f"compile: the code of a graph of more than {LOCALS_LIMIT:,} "
                               "nodes is written in chunks over lists of values, and not "
                               "kept; trace a smaller graph to read its code")
        return self.text

    def still_holds(self, flat: list) -> bool:
        """Whether a call with these arguments may reuse the trace (see ``guarded``)."""
        return all(_same(flat[i], x) for i, x in self.guarded.items())

    def run(self, fn: Callable[..., Any], args: tuple, flat: list) -> Any:
        """The compiled forward on this call's arguments: nodes that know their backward."""
        leaves = [leaf if i is None else flat[i] for i, leaf in self.params]
        inputs = [flat[i] if self.arrays else float(flat[i]) for i, _ in self.inputs]
        state = self.graph(inputs, [leaf._value for leaf in leaves], flat)
        values = next(state)  # the forward runs, up to its yield
        with guards.quiet_numpy([self.outputs_template]):  # arrays: no overflow warning
            finite = all(guards.is_finite(v) for v in values)
        if not finite:  # an op overflowed: eager says which
            return fn(*args)
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
        _, eager = _outputs(fn(*args))
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
        eager_grads = autodiff.backward(list(eager), [1.0] * len(eager), accumulate=False)
        compiled_grads = autodiff.backward(list(outs), [1.0] * len(outs), accumulate=False)
        for i, leaf in self.params:
            leaf = leaf if i is None else flat[i]
            if not _close(compiled_grads.get(id(leaf), 0.0), eager_grads.get(id(leaf), 0.0)):
                raise CompileCheckError(
                    f"compile(check=True): the gradient of {self.names[id(self.params[0][1])]}"
                    f" differs: {eager_grads.get(id(leaf))!r} eagerly, "
                    f"{compiled_grads.get(id(leaf))!r} compiled")


def _number(order: list) -> None:
    """Mark each node with its place in the order."""
    for place, node in enumerate(order):
        node._mark = place


def _snapshot(x: Any) -> Any:
    """An argument as the trace saw it (a copy of an array, which may change in place)."""
    return x.copy() if _is_array(x) else x


def _same(now: Any, then: Any) -> bool:
    """Whether an argument is what the trace saw."""
    if _is_array(then):
        return _is_array(now) and now.shape == then.shape and bool((now == then).all())
    return now == then


def _outputs(result: Any) -> tuple[Callable[[list], Any], list]:
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


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


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


def _variables(outputs: list, order: list) -> dict[int, str]:
    """A Python name for every node: the names ``explain`` and the drawings use, made into
    identifiers (``x1*w1`` -> ``x1_w1``), unique, and clear of the names the code uses."""
    seen, ids = [], set()
    for out in outputs:
        for node in reading_order(out):
            if id(node) not in ids:
                ids.add(id(node))
                seen.append(node)
    names = node_names(seen)
    taken = set(_NAMESPACE) | set(dir(builtins)) | {"inputs", "params", "seeds", "V", "G"}
    result = {}
    for node in seen:
        base = re.sub(r"\W", "_", names[id(node)]) or "v"
        if base[0].isdigit() or keyword.iskeyword(base) or base in taken:
            base = "_" + base
        name, n = base, 1
        while name in taken or f"{name}_grad" in taken:
            n += 1
            name = f"{base}_{n}"
        taken |= {name, f"{name}_grad"}
        result[id(node)] = name
    return result


def _namespace() -> dict[str, Any]:
    """What the code of a Value graph calls: each primitive's forward on floats by its name
    (``tanh``, ``exp``, with the ``DomainError`` of its domain: ``rules.on_floats``;
    ``cos`` and ``sin`` serve the formulas too), ``sign`` and ``data`` for the formulas, and
    the rules whose formulas are not exact (``vjp_pow``), called whole."""
    space: dict[str, Any] = {"sign": sign, "data": data}
    for prim in PRIMITIVES:
        if prim.forward not in _INFIX:
            space[identifier(prim.name)] = functools.partial(on_floats, prim) if \
                prim.domain else prim.forward
        if not prim.exact:
            space[f"vjp_{identifier(prim.name)}"] = prim.vjp
    return space


_NAMESPACE = _namespace()


class _Lines:
    """The code of a trace, line by line: its forward, then its backward.

    In a graph of up to ``LOCALS_LIMIT`` nodes each node's value is a variable named as
    ``explain`` names the node, and its gradient that name with ``_grad``, all in one
    function. A larger graph is cut into functions of ``CHUNK`` nodes over lists of values
    ``V`` and gradients ``G`` (a node's place in the order is its slot), each with its own
    short names, so that no chunk's text is kept once it is compiled.
    """

    namespace = _NAMESPACE  # what the code calls

    def __init__(self, trace: Trace):
        self.trace = trace
        self.extra: dict[str, Any] = {}  # a user primitive's functions, by the code's names
        self.used_args: set[int] = set()  # arguments the code reads as they are (arrays)

    def constant_or(self, name: Callable[[Any], str]) -> Callable[[Any], str]:
        """``name``, but a constant of the trace is written as its value."""
        constants = self.trace.constants
        return lambda node: (self.param(constants[id(node)]) if id(node) in constants
                             else name(node))

    def param(self, value: Any) -> str:
        """A constant as the code writes it (a float: its repr)."""
        return repr(value)

    def plus(self, grad: str, text: str) -> str:
        """The line adding ``text`` into the gradient ``grad``."""
        return f"{grad} += {text}"

    def exact(self, node: Any) -> bool:
        """Whether the node's formula computes exactly what its rule does (else the rule
        is called)."""
        prim = node._rule.primitive
        return prim.exact and prim.formulas != (GENERIC_FORMULA,) and not (
            prim is POW_N and not any_true(node._rule.params[0] != 0))

    def summed(self, text: str, node: Any, k: int) -> str:
        """``text``, input k's gradient, summed back to the input's shape if broadcast."""
        return text

    def forward(self, nodes: Iterable[Any], value: Callable[[Any], str]) -> Iterator[str]:
        """One line per op: ``mul1 = x1 * w1``, ``tanh1 = tanh(add2)``."""
        for node in nodes:
            rule = node._rule
            if rule is None:
                continue
            prim, inputs = rule.primitive, [value(x) for x in node._prev]
            if prim.forward in _INFIX:
                yield f"{value(node)} = {inputs[0]} {_INFIX[prim.forward]} {inputs[1]}"
                continue
            call = identifier(prim.name)
            if prim not in PRIMITIVES:  # a user's primitive: its forward, by a name of its own
                call = self.function(call, prim.forward)
            args = inputs + [self.param(p) for p in rule.params]
            yield f"{value(node)} = {call}({', '.join(args)})"

    def backward(self, nodes: Iterable[Any], value: Callable[[Any], str],
                 grad: Callable[[Any], str], assign_first: bool,
                 comments: bool = True) -> Iterator[str]:
        """Each node's step, as ``backward()`` runs them (``nodes`` are in that order): a
        comment naming it, then one line per input, its rule's formula. With
        ``assign_first``, the first gradient to reach a node is assigned (=) and the next
        ones added (+=), as ``backward()`` adds them; else every one is added."""
        trace, reached, nodes = self.trace, set(), list(nodes)

        def add(x: Any, text: str) -> str:
            first = assign_first and id(x) not in reached
            reached.add(id(x))
            return f"{grad(x)} = {text}" if first else self.plus(grad(x), text)

        outputs = trace.output_places
        for node in nodes:
            if node._mark in outputs and trace.needs_grad[node._mark]:
                yield add(node, f"seeds[{outputs[node._mark]}]")
        for node in nodes:
            if node._rule is None or not trace.needs_grad[node._mark]:
                continue
            if comments:
                yield f"# {trace.names[id(node)]}: {node._op}"
            yield from (add(x, text) for x, text in self.step(node, value, grad))

    def step(self, node: Any, value: Callable[[Any], str],
             grad: Callable[[Any], str]) -> list[tuple[Any, str]]:
        """(input, what it gets) for each input of the node that needs a gradient."""
        rule, inputs, needs = node._rule, node._prev, self.trace.needs_grad
        prim = rule.primitive
        wanted = [k for k, x in enumerate(inputs) if needs[x._mark] and x.requires_grad]
        if self.exact(node):
            who = dict(zip("xy", inputs))
            params = dict(zip(prim.param_names, rule.params))

            def node_text(w: str, attr: str) -> str:
                if w == "out":
                    return grad(node) if attr == "grad" else value(node)
                if attr in ("shape", "data.T", "data.mT"):
                    return f"{value(who[w])}.{attr.split('.')[-1]}"
                return value(who[w])

            def param_text(p: str) -> str | None:
                if p == "k":
                    return None
                return self.param(params[p]) if p in params else None

            formulas = prim.formulas
            return [(inputs[k], self.summed(fill_in(
                formulas[min(k, len(formulas) - 1)], node_text,
                lambda p, k=k: str(k) if p == "k" else param_text(p)), node, k))
                for k in wanted]
        # the rule itself, called: a user's, or one whose formula is not exact
        call = f"vjp_{identifier(prim.name)}"
        if self.namespace.get(call) is not prim.vjp:
            call = self.function(call, prim.vjp)
        xs = ", ".join(value(x) for x in inputs)
        args = "".join(f", {self.param(p)}" for p in rule.params)
        shares = f"{call}(({xs},), {value(node)}, {grad(node)}{args})"
        return [(inputs[k], self.summed(f"{shares}[{k}]", node, k)) for k in wanted]

    def function(self, name: str, fn: Callable[..., Any]) -> str:
        """A name for the code to call ``fn`` by."""
        while (name in self.extra and self.extra[name] is not fn) or name in self.namespace:
            name += "_"
        self.extra[name] = fn
        return name

    # ---- a graph in one function ----

    def source(self) -> str:
        """The code: a generator that runs the forward, yields the outputs, and then, each
        time ``backward()`` sends the outputs' gradients, runs the backward and yields the
        parameters' gradients."""
        trace, names = self.trace, self.trace.names
        value = self.constant_or(lambda node: names[id(node)])

        def grad(node: Any) -> str:
            return f"{names[id(node)]}_grad"

        outs = ", ".join(value(out) for out in trace.outputs)
        lines = ["def graph(inputs, params, args):",
                 f'    """{trace.fn_name}, traced: its forward; then, each time backward() '
                 'sends the outputs\' gradients, its backward."""']
        lines += _unpack([value(leaf) for _, leaf in trace.inputs], "inputs")
        lines += _unpack([value(leaf) for _, leaf in trace.params], "params")
        lines += [f"    {line}" for line in self.forward(trace.order, value)]
        lines.append(f"    seeds = yield ({outs},)")
        lines.append("    while True:")
        lines += [f"        {line}" for line in self.backward(reversed(trace.order), value,
                                                              grad, assign_first=True)]
        lines.append(f"        seeds = yield {_tuple(grad(leaf) for leaf in trace.takes_grad)}")
        return "\n".join(lines) + "\n"

    # ---- a large graph, in chunks ----

    def chunks(self, let_go: bool = False) -> list[tuple[str, str]]:
        """A large graph's code as ``(name, text)`` pieces, compiled one after another:
        ``forward_k(V)`` and ``backward_k(V, G, seeds)`` for each chunk of ``CHUNK`` nodes,
        then ``graph``, which calls them.

        With ``let_go``, the trace's outputs are dropped once ``graph`` is written, and each
        chunk's nodes once its backward is: the chunks are written last to first, and a
        node is only an input of later ones, so each chunk is then freed. The graph shrinks
        as the text grows."""
        trace, size = self.trace, len(self.trace.order)
        starts = range(0, size, CHUNK)
        texts = [(f"forward_{k}", self._chunk(start, "forward")) for k, start in enumerate(starts)]
        outs = ", ".join(f"V[{out._mark}]" for out in trace.outputs)
        body = ["def graph(inputs, params, args):", f"    V = [0.0] * {size}"]
        body += [f"    V[{leaf._mark}] = inputs[{k}]" for k, (_, leaf) in enumerate(trace.inputs)]
        body += [f"    V[{leaf._mark}] = params[{k}]" for k, (_, leaf) in enumerate(trace.params)]
        body += [f"    forward_{k}(V)" for k, _ in enumerate(starts)]
        body += [f"    seeds = yield ({outs},)", "    while True:", f"        G = [0.0] * {size}"]
        body += [f"        backward_{k}(V, G, seeds)" for k in reversed(range(len(starts)))]
        grads = _tuple(f"G[{leaf._mark}]" for leaf in trace.takes_grad)
        body.append(f"        seeds = yield {grads}")
        if let_go:
            trace.outputs = None
        for k, start in reversed(list(enumerate(starts))):
            texts.append((f"backward_{k}", self._chunk(start, "backward")))
            if let_go:
                nodes = trace.order[start:start + CHUNK]
                for node in nodes:
                    node._mark = None  # a leaf lives on
                trace.order[start:start + CHUNK] = [None] * len(nodes)
        return texts + [("graph", "\n".join(body) + "\n")]

    def _chunk(self, start: int, kind: str) -> str:
        """The code of the nodes in places [start, start + CHUNK): their values (and
        gradients) as locals ``v0``, ``v1``, ... (``g0``, ...), loaded from and stored
        back into ``V`` (and ``G``) once; a node before the chunk is read from the list."""
        trace = self.trace
        nodes = trace.order[start:start + CHUNK]
        end, outside = start + len(nodes), {}

        def local(prefix: str) -> Callable[[Any], str]:
            def name(node: Any) -> str:
                i = node._mark
                if start <= i < end:
                    return f"{prefix}{i - start}"
                if prefix == "g":
                    return f"G[{i}]"
                outside[i] = f"u{i}"
                return f"u{i}"
            return name

        value = self.constant_or(local("v"))
        if kind == "forward":
            body = list(self.forward(nodes, value))
        else:
            body = list(self.backward(reversed(nodes), value, local("g"), assign_first=False,
                                      comments=False))
        values = ", ".join(f"v{i}" for i in range(len(nodes)))
        head = [f"    ({values},) = V[{start}:{end}]"]
        head += [f"    {name} = V[{i}]" for i, name in outside.items()]
        if kind == "forward":
            return ("def forward_chunk(V):\n" + "\n".join(head) + "\n    "
                    + "\n    ".join(body) + f"\n    V[{start}:{end}] = ({values},)\n")
        grads = ", ".join(f"g{i}" for i in range(len(nodes)))
        head.append(f"    ({grads},) = G[{start}:{end}]")
        return ("def backward_chunk(V, G, seeds):\n" + "\n".join(head) + "\n    "
                + "\n    ".join(body or ["pass"]) + f"\n    G[{start}:{end}] = ({grads},)\n")

class _ArrayLines(_Lines):
    """The code of a Tensor graph: numpy's functions for the forwards, the formulas on
    arrays for the backward (``x = x + ...``: arrays are never added to in place, one may
    be the gradient of several nodes), a broadcast gradient summed back where the op
    broadcast its input; constants and arrays in rules' parameters read from ``K`` (or, an
    argument itself, from ``args``)."""

    def __init__(self, trace: Trace):
        super().__init__(trace)
        self.constants: list[Any] = []  # K[i]
        self.shapes = _gradient_shapes(trace)
        self.namespace = _array_namespace()

    def param(self, value: Any) -> str:
        if isinstance(value, tuple):
            return "(" + "".join(f"{self.param(v)}, " for v in value) + ")"
        if _is_array(value):
            if id(value) in self.trace.args:
                self.used_args.add(self.trace.args[id(value)])
                return f"args[{self.trace.args[id(value)]}]"
        elif value is None or isinstance(value, (bool, int, float, str, slice)) or \
                value is Ellipsis:
            return repr(value)
        for i, known in enumerate(self.constants):
            if known is value:
                return f"K[{i}]"
        self.constants.append(value)
        return f"K[{len(self.constants) - 1}]"

    def plus(self, grad: str, text: str) -> str:
        return f"{grad} = {grad} + {text}"

    def exact(self, node: Any) -> bool:
        """As for Values; and matmul's formulas hold for matrices only (a 1-D input is a
        row or a column to its rule)."""
        if node._rule.primitive is _tensor_rules().MATMUL and any(
                x._value.ndim < 2 for x in node._prev):
            return False
        return super().exact(node)

    def step(self, node: Any, value: Callable[[Any], str],
             grad: Callable[[Any], str]) -> list[tuple[Any, str]]:
        shares = super().step(node, value, grad)
        rules = _tensor_rules()
        x, y = node._prev[0], node._prev[-1]
        if (node._rule.primitive is rules.MATMUL and x is not y
                and rules.is_transposed_matrix(y._value)):
            # as the rule does (matmul_y_grad_transposed): y's gradient in y's layout
            transposed = f"({grad(node)}.mT @ {value(x)}).mT"
            shares = [(z, transposed if z is y else text) for z, text in shares]
        return shares

    def summed(self, text: str, node: Any, k: int) -> str:
        shape = node._prev[k]._value.shape
        if self.shapes[(id(node), k)] == shape:
            return text
        return f"sum_to_shape({text}, {shape!r})"

    def forward(self, nodes: Iterable[Any], value: Callable[[Any], str]) -> Iterator[str]:
        """One line per op: its primitive's forward on arrays (``Primitive.array``) with the
        variables filled in; a user's primitive's forward called by a name of its own."""
        for node in nodes:
            rule = node._rule
            if rule is None:
                continue
            prim = rule.primitive
            inputs = [value(x) for x in node._prev]
            if prim.array is None and prim.forward is None:
                raise TypeError(f"compile: {prim.name!r} is not compiled on Tensors: its "
                                "gradient depends on where its result came from (the "
                                "largest entries), which a trace would fix; call the "
                                "function eagerly")
            if prim.array is None:  # a user's primitive
                call = self.function(identifier(prim.name), prim.forward)
                args = inputs + [self.param(p) for p in rule.params]
                yield f"{value(node)} = asarray({call}({', '.join(args)}))"
                continue
            names = dict(zip(prim.param_names, map(self.param, rule.params)))
            names |= dict(zip("xy", inputs)) | {"xs": _tuple(inputs)}
            yield f"{value(node)} = {substitute(prim.array, names)}"


def _tuple(names: Iterable[str]) -> str:
    names = list(names)
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


def _unpack(names: list[str], what: str) -> list[str]:
    if not names:
        return []
    return [f"    ({', '.join(names)}{',' if len(names) == 1 else ''}) = {what}"]


def _build(lines: _Lines, texts: list[tuple[str, str]]) -> Callable[..., Iterator]:
    """The trace's code compiled: the generator function ``graph``. ``texts`` is one
    ``("graph", text)``, or a large graph's chunks (``_Lines.chunks``), which are taken
    from the list as they are compiled, so that the text and the code of all the chunks
    are never held at once."""
    space = dict(lines.namespace)
    while texts:
        name, text = texts.pop(0)  # (then nothing holds the text once it is compiled)
        where = "<chaingrad.compile>" if name == "graph" else f"<chaingrad.compile: {name}>"
        exec(builtins.compile(text, where, "exec"), space)
        if name != "graph":  # each chunk is written as forward_chunk or backward_chunk
            chunk = space.pop(f"{name.split('_')[0]}_chunk")
            chunk.__code__ = _without_positions(chunk.__code__)
            space[name] = chunk
    space |= lines.extra  # a user primitive's functions, named while the lines were written
    space["K"] = getattr(lines, "constants", [])
    return space["graph"]


def _without_positions(code: CodeType) -> CodeType:
    """``code`` with one line number for all its instructions and no columns.

    CPython (3.11 on) keeps each instruction's line and columns, for tracebacks, in a table
    (``co_linetable``) as large as the bytecode itself. A large graph's chunks are not kept
    for reading, so that table is only memory: half of what their code takes. It is
    replaced by entries of "line of the ``def``, no columns", one per 8 code units, in the
    table's documented format (CPython's InternalDocs/code_objects.md): a byte of code 13
    with the units it covers, then the line's offset, 0. On other versions, ``code``.
    """
    if sys.version_info[:2] not in _KNOWN_LOCATION_TABLES:
        return code
    units = len(code.co_code) // 2
    full, rest = divmod(units, 8)
    table = bytes([0x80 | 13 << 3 | 7, 0]) * full
    if rest:
        table += bytes([0x80 | 13 << 3 | rest - 1, 0])
    return code.replace(co_linetable=table)


_KNOWN_LOCATION_TABLES = {(3, 11), (3, 12), (3, 13), (3, 14)}


# ---- Tensor graphs: what the code calls on arrays ----


def _tensor_rules() -> Any:
    from .tensor_engine import rules  # the Tensor engine needs numpy: loaded for Tensors

    return rules


def _array_namespace() -> dict[str, Any]:
    """What Tensor code calls: what the primitives' forwards on arrays call (numpy as
    ``np``, ``rules.array_namespace``), the Tensor rules' helpers and the elementwise
    primitives' forwards on arrays for the formulas (``cos``, ``exp``), numpy's ``asarray``
    and ``sign``, and the rules whose formulas are not exact."""
    space = {name: value for name, value in vars(_tensor_rules()).items()
             if not name.startswith("_")}
    space |= {name: prim.on_arrays for name, prim in FUNCTIONS.items()}
    space |= array_namespace()
    np = space["np"]
    space |= {"asarray": np.asarray, "sign": np.sign, "data": data,
              "sum_to_shape": autodiff.sum_to_shape}
    space |= {name: fn for name, fn in _NAMESPACE.items() if name.startswith("vjp_")}
    return space


def _gradient_shapes(trace: Trace) -> dict[tuple[int, int], tuple]:
    """The shape of what each node's rule gives each input, found by running the rules
    once on the traced arrays: where it is not the input's, the code sums it back."""
    import numpy as np

    shapes = {}
    for node in trace.order:
        rule = node._rule
        if rule is None:
            continue
        g = np.ones_like(node._value)
        with np.errstate(all="ignore"):
            grads = rule.vjp(tuple(x._value for x in node._prev), node._value, g, *rule.params)
        for k, gx in enumerate(grads):
            shapes[(id(node), k)] = None if gx is None else np.shape(gx)
    return shapes
