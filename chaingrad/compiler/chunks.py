"""A large graph's code, written in chunks: functions of ``CHUNK`` nodes over lists of values.

A graph of more than ``LOCALS_LIMIT`` nodes is not written as one function with a variable
per node: Python would compile it slowly, and keep it large. Each node gets a slot in a list
of values ``V`` and one in a list of gradients ``G`` (its place in the order), and the code
is cut into ``forward_k(V)`` and ``backward_k(V, G, seeds)``, one pair per chunk of
``CHUNK`` nodes, which ``graph`` calls in turn. Within a chunk, its nodes are locals with
short names (``v0``, ``g0``); a node of an earlier chunk is read from the list. The chunks
are compiled one after another and lose their line table (``line_table.py``), so that no
chunk's text is kept once it is compiled.

Example:
    >>> import chaingrad
    >>> from chaingrad import Value
    >>> from chaingrad.compiler import chunks
    >>> w = Value(0.5)
    >>> def chain(x):
    ...     y = Value(x)
    ...     for _ in range(20):
    ...         y = (y * w).tanh()
    ...     return y
    >>> limits = chunks.LOCALS_LIMIT, chunks.CHUNK
    >>> chunks.LOCALS_LIMIT, chunks.CHUNK = 30, 8  # here, graphs of more than 30 nodes
    >>> try:
    ...     step = chaingrad.compile(chain)
    ...     out = step(0.3)
    ... finally:
    ...     chunks.LOCALS_LIMIT, chunks.CHUNK = limits
    >>> out.data == chain(0.3).data, step.last.chunked
    (True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .writer import CodeWriter, tuple_text

LOCALS_LIMIT = 100_000
"""A graph of more nodes is written as chunks of code over a list of values, not as one
function with a variable per node (Python would compile that slowly, and keep it large)."""
CHUNK = 10_000
"""Lines per function in a graph written in chunks."""


def write_in_chunks(writer: CodeWriter, let_go: bool = False) -> list[tuple[str, str]]:
    """A large graph's code as ``(name, text)`` pieces, compiled one after another:
    ``forward_k(V)`` and ``backward_k(V, G, seeds)`` for each chunk of ``CHUNK`` nodes,
    then ``graph``, which calls them.

    With ``let_go``, the trace's outputs are dropped once ``graph`` is written, and each
    chunk's nodes once its backward is: the chunks are written last to first, and a
    node is only an input of later ones, so each chunk is then freed. The graph shrinks
    as the text grows."""
    trace, size = writer.trace, len(writer.trace.order)
    starts = range(0, size, CHUNK)
    texts = [(f"forward_{k}", write_chunk(writer, start, "forward"))
             for k, start in enumerate(starts)]
    outs = ", ".join(f"V[{out._mark}]" for out in trace.outputs)
    body = ["def graph(inputs, params, args):", f"    V = [0.0] * {size}"]
    body += [f"    V[{leaf._mark}] = inputs[{k}]" for k, (_, leaf) in enumerate(trace.inputs)]
    body += [f"    V[{leaf._mark}] = params[{k}]" for k, (_, leaf) in enumerate(trace.params)]
    body += [f"    forward_{k}(V)" for k, _ in enumerate(starts)]
    body += [f"    seeds = yield ({outs},)", "    while True:", f"        G = [0.0] * {size}"]
    body += [f"        backward_{k}(V, G, seeds)" for k in reversed(range(len(starts)))]
    grads = tuple_text(f"G[{leaf._mark}]" for leaf in trace.takes_grad)
    body.append(f"        seeds = yield {grads}")
    if let_go:
        trace.outputs = None
    for k, start in reversed(list(enumerate(starts))):
        texts.append((f"backward_{k}", write_chunk(writer, start, "backward")))
        if let_go:
            nodes = trace.order[start:start + CHUNK]
            for node in nodes:
                node._mark = None  # a leaf lives on
            trace.order[start:start + CHUNK] = [None] * len(nodes)
    return texts + [("graph", "\n".join(body) + "\n")]


def write_chunk(writer: CodeWriter, start: int, kind: str) -> str:
    """The code of the nodes in places [start, start + CHUNK), ``kind`` "forward" or
    "backward": their values (and gradients) as locals ``v0``, ``v1``, ... (``g0``, ...),
    loaded from and stored back into ``V`` (and ``G``) once; a node before the chunk is read
    from the list."""
    trace = writer.trace
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

    value = writer.constant_or(local("v"))
    if kind == "forward":
        body = list(writer.forward(nodes, value))
    else:
        body = list(writer.backward(reversed(nodes), value, local("g"), assign_first=False,
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
