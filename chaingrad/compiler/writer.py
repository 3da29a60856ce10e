"""The code writer: a traced graph as Python text, its forward then its backward, and that
text compiled.

One writer serves both engines. Where the code of a Tensor graph differs from a Value
graph's (numpy's functions for the forwards, arrays never added to in place, a broadcast
gradient summed back, constants read from a list), the writer asks the ``Engine`` it is
given: ``chaingrad/compiler/engines.py`` has the two.

The forward is one line per op, ``mul1 = x1 * w1``; the backward one line per input of
each node, its primitive's formula filled in with the code's variables (``rules.fill_in``),
in the order ``backward()`` runs the nodes, so that the code reads as ``explain`` does.

Example:
    >>> import chaingrad
    >>> from chaingrad import Value
    >>> x = Value(3.0, label="x")
    >>> step = chaingrad.compile(lambda: (x * x).exp())
    >>> step().data == (x * x).exp().data
    True
    >>> print("\\n".join(step.source.splitlines()[3:5]))
        mul1 = x * x
        exp1 = exp(mul1)
"""

from __future__ import annotations

import builtins
import functools
import itertools
import keyword
import linecache
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..declaration import GENERIC_FORMULA, Primitive, any_true, fill_in, identifier
from ..rules import POW_N
from ..show.names import node_names, reading_order
from .line_table import without_positions

RESERVED = frozenset({"inputs", "params", "args", "seeds", "K", "V", "G"})
"""The names the code itself uses, besides what it calls: no variable or function of the
code takes them."""


def always(anything: Any) -> bool:
    """True, whatever it is asked of: an engine that writes every constant as its repr."""
    return True


@dataclass(frozen=True)
class Engine:
    """What the code writer needs to know of one engine: how its code differs.

    Attributes:
        name: The engine's graphs, for messages ("Values", "Tensors").
        namespace: What the code calls, by name (``tanh``, ``np``, ``vjp_pow``).
        in_place: Whether a share is added into a gradient in place (``g += share``), or
            the gradient made anew (``g = g + share``).
        literal: Whether a constant (a leaf's value, a rule's parameter) is written as its
            ``repr``; one that is not is read from the list ``K`` (or, an argument of the
            call itself, from ``args``).
        forward: The text of a primitive's forward, given its inputs' and parameters'
            texts; None for a user's primitive, whose forward is called by a name of its
            own.
        user_forward: How a user's primitive's forward is called: ``{call}`` is the call.
        formula_holds: Whether the node's formulas compute what its rule does (else the
            code calls the rule), beyond what the primitive declares (``exact``); None:
            wherever the primitive declares it.
        layout: The shares of a node whose formulas hold, as its rule computes them where
            it departs from its formula (the layout of a gradient; a rule that is called
            computes its own); None: the formulas are what the rules compute.
        gradient_shapes: The shape of what each node's rule gives each input, by
            ``(id(node), k)``, for the code to sum back a broadcast gradient; None where
            gradients are never broadcast.
    """

    name: str
    namespace: Mapping[str, Any]
    in_place: bool
    literal: Callable[[Any], bool]
    forward: Callable[[Primitive, list[str], list[str]], str | None]
    user_forward: str
    formula_holds: Callable[[Any], bool] | None = None
    layout: Callable[..., list[tuple[Any, str]]] | None = None
    gradient_shapes: Callable[[Any], dict[tuple[int, int], tuple | None]] | None = None


class CodeWriter:
    """The code of one trace, line by line: its forward, then its backward.

    In a graph of up to ``chunks.LOCALS_LIMIT`` nodes each node's value is a variable named
    as ``explain`` names the node (``trace.names``), and its gradient that name with
    ``_grad``, all in one function (``source``). A larger graph is cut into functions over
    lists of values (``chunks.write_in_chunks``), which call ``forward`` and ``backward``
    with names of their own.

    Args:
        trace: The trace (``tracing.Trace``): its order, leaves, outputs and names.
        engine: What differs between the engines' code (``engines.VALUES``, or
            ``engines.tensors()``).
    """

    def __init__(self, trace: Any, engine: Engine):
        self.trace, self.engine = trace, engine
        self.namespace = engine.namespace  # what the code calls
        self.extra: dict[str, Any] = {}  # a user primitive's functions, by the code's names
        self.stored: list[Any] = []  # K[i]: the constants not written as their repr
        self.used_args: set[int] = set()  # arguments the code reads as they are (arrays)
        self.shapes = None if engine.gradient_shapes is None else engine.gradient_shapes(trace)

    def constant_or(self, name: Callable[[Any], str]) -> Callable[[Any], str]:
        """``name``, but a constant of the trace is written as its value."""
        constants = self.trace.constants
        return lambda node: (self.constant(constants[id(node)]) if id(node) in constants
                             else name(node))

    def constant(self, value: Any) -> str:
        """A constant as the code writes it: its repr (a float), a tuple of constants, an
        argument of the call (``args[i]``), or ``K[i]``, an entry of the stored constants."""
        if self.engine.literal(value):
            return repr(value)
        if isinstance(value, tuple):
            return "(" + "".join(f"{self.constant(v)}, " for v in value) + ")"
        if id(value) in self.trace.args:  # read from the call's arguments (args[i])
            place, text = self.trace.args[id(value)]
            self.used_args.add(place)
            return text
        for i, known in enumerate(self.stored):
            if known is value:
                return f"K[{i}]"
        self.stored.append(value)
        return f"K[{len(self.stored) - 1}]"

    def exact(self, node: Any) -> bool:
        """Whether the node's formula computes exactly what its rule does (else the rule
        is called)."""
        prim, holds = node._rule.primitive, self.engine.formula_holds
        return prim.exact and prim.formulas != (GENERIC_FORMULA,) and not (
            prim is POW_N and not any_true(node._rule.params[0] != 0)) and (
            holds is None or holds(node))

    def summed(self, text: str, node: Any, k: int) -> str:
        """``text``, input k's gradient, summed back to the input's shape if broadcast."""
        if self.shapes is None:
            return text
        shape = node._prev[k]._value.shape
        if self.shapes[(id(node), k)] == shape:
            return text
        return f"sum_to_shape({text}, {shape!r})"

    def forward(self, nodes: Iterable[Any], value: Callable[[Any], str]) -> Iterator[str]:
        """One line per op, its primitive's forward as the engine writes it (``mul1 = x1 *
        w1``, ``tanh1 = tanh(add2)``; on Tensors, the primitive's ``array`` text); a user's
        primitive's forward called by a name of its own."""
        engine = self.engine
        for node in nodes:
            rule = node._rule
            if rule is None:
                continue
            prim = rule.primitive
            inputs = [value(x) for x in node._prev]
            params = list(map(self.constant, rule.params)) if rule.params else []
            text = engine.forward(prim, inputs, params)
            if text is None:
                if prim.forward is None:
                    raise TypeError(f"compile: {prim.name!r} is not compiled on {engine.name}: "
                                    "its gradient depends on where its result came from (the "
                                    "largest entries), which a trace would fix; call the "
                                    "function eagerly")
                call = self.function(identifier(prim.name), prim.forward)
                text = engine.user_forward.format(call=f"{call}({', '.join(inputs + params)})")
            yield f"{value(node)} = {text}"

    def backward(self, nodes: Iterable[Any], value: Callable[[Any], str],
                 grad: Callable[[Any], str], assign_first: bool,
                 comments: bool = True) -> Iterator[str]:
        """Each node's step, as ``backward()`` runs them (``nodes`` are in that order): a
        comment naming it, then one line per input, its rule's formula. With
        ``assign_first``, the first gradient to reach a node is assigned (=) and the next
        ones added, as ``backward()`` adds them; else every one is added."""
        trace, reached, nodes = self.trace, set(), list(nodes)
        in_place = self.engine.in_place

        def add(x: Any, text: str) -> str:
            first = assign_first and id(x) not in reached
            reached.add(id(x))
            if first:
                return f"{grad(x)} = {text}"
            return f"{grad(x)} += {text}" if in_place else f"{grad(x)} = {grad(x)} + {text}"

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
        """(input, what it gets) for each input of the node that needs a gradient: the
        formula filled in, or the rule called where the formula is not exact."""
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
                return self.constant(params[p]) if p in params else None

            formulas = prim.formulas
            shares = [(inputs[k], self.summed(fill_in(
                formulas[min(k, len(formulas) - 1)], node_text,
                lambda p, k=k: str(k) if p == "k" else param_text(p)), node, k))
                for k in wanted]
            layout = self.engine.layout
            return shares if layout is None else layout(node, shares, value, grad)
        # the rule itself, called: a user's, or one whose formula is not exact
        call = f"vjp_{identifier(prim.name)}"
        if self.namespace.get(call) is not prim.vjp:
            call = self.function(call, prim.vjp)
        xs = ", ".join(value(x) for x in inputs)
        args = "".join(f", {self.constant(p)}" for p in rule.params)
        whole = f"{call}(({xs},), {value(node)}, {grad(node)}{args})"
        return [(inputs[k], self.summed(f"{whole}[{k}]", node, k)) for k in wanted]

    @functools.cached_property
    def variables(self) -> set[str]:
        """The names of the code's variables: the nodes' and their gradients'."""
        return {v for name in self.trace.names.values() for v in (name, f"{name}_grad")}

    def function(self, name: str, fn: Callable[..., Any]) -> str:
        """A name for the code to call ``fn`` by: none of what else it calls, nor a
        variable's."""
        while (name in self.extra and self.extra[name] is not fn) or name in self.namespace \
                or name in self.variables or name in RESERVED:
            name += "_"
        self.extra[name] = fn
        return name

    def source(self) -> str:
        """The code of a graph in one function: a generator that runs the forward, yields
        the outputs, and then, each time ``backward()`` sends the outputs' gradients, runs
        the backward and yields the parameters' gradients."""
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
        lines.append(f"        seeds = yield "
                     f"{tuple_text(grad(leaf) for leaf in trace.takes_grad)}")
        return "\n".join(lines) + "\n"


def variables(outputs: list, order: list, namespace: Mapping[str, Any]) -> dict[int, str]:
    """A Python name for every node: the names ``explain`` and the drawings use, made into
    identifiers (``x1*w1`` -> ``x1_w1``), unique, and clear of the names the code uses."""
    seen, ids = [], set()
    for out in outputs:
        for node in reading_order(out):
            if id(node) not in ids:
                ids.add(id(node))
                seen.append(node)
    names = node_names(seen)
    taken = set(namespace) | set(dir(builtins)) | RESERVED
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


def tuple_text(names: Iterable[str]) -> str:
    """Python text of a tuple of these names: ``(a,)``, ``(a, b)``."""
    names = list(names)
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


def _unpack(names: list[str], what: str) -> list[str]:
    return [f"    {tuple_text(names)} = {what}"] if names else []


def build(writer: CodeWriter, texts: list[tuple[str, str]]) -> Callable[..., Iterator]:
    """The trace's code compiled: the generator function ``graph``. ``texts`` is one
    ``("graph", text)``, or a large graph's chunks (``chunks.write_in_chunks``), which are
    taken from the list as they are compiled. Each text is registered with ``linecache``
    under a name of its own (``<chaingrad.compile #3>``), so that a traceback, ``pdb`` and
    ``inspect.getsource`` show the code that ran, for as long as the function lives."""
    space = dict(writer.namespace)
    compiled = next(_compiled)
    where = []
    while texts:
        name, text = texts.pop(0)
        where.append(f"<chaingrad.compile #{compiled}>" if name == "graph" else
                     f"<chaingrad.compile #{compiled}: {name}>")
        linecache.cache[where[-1]] = (len(text), None, text.splitlines(True), where[-1])
        exec(builtins.compile(text, where[-1], "exec"), space)
        if name != "graph":  # each chunk is written as forward_chunk or backward_chunk
            chunk = space.pop(f"{name.split('_')[0]}_chunk")
            chunk.__code__ = without_positions(chunk.__code__)
            space[name] = chunk
    space |= writer.extra  # a user primitive's functions, named while the lines were written
    space["K"] = writer.stored
    weakref.finalize(space["graph"], _forget, where)
    return space["graph"]


_compiled = itertools.count(1)
"""Numbers each compiled function's source (its ``linecache`` name)."""


def _forget(where: list[str]) -> None:
    """Drop a compiled function's source from ``linecache`` once the function is gone."""
    for name in where:
        linecache.cache.pop(name, None)
