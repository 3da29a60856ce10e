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
- A mask or an index given as an argument (a boolean or integer Tensor outside the graph,
  or a numpy array) is read from each call where a rule takes it as it is
  (``masked_fill(x, m, v)``, ``where(m, x, y)``, a loss's targets); an argument the trace
  used otherwise (``m == 0``; ``x[m]``, whose shape it decides) is guarded: a call with
  another one traces again. A buffer changed in place is read as it is now.
- A trace is reused while the call has the same shape: the same structure of arguments
  (numbers, Values, lists and tuples of the same lengths). The parameters are the very
  Values the function read when it was traced: give one a new ``.data`` at will, but if
  you replace one by another Value, compile again.
- A value that overflows is reported when it reaches an output (the eager function is
  then run to say where); one that an op swallows on the way (``relu`` of ``-inf``) is
  not, where the eager function raises at once.

The package, by purpose:

- ``tracing.py``: one traced call: its graph, its leaves sorted into inputs, parameters and
  constants, when a call may reuse it, its code run, ``check=True``'s comparison;
- ``writer.py``: the code writer, one for both engines: a graph as Python text, forward
  then backward, and that text compiled;
- ``engines.py``: how the code of a Value graph and of a Tensor graph differ, given to the
  writer as data;
- ``chunks.py``: a large graph's code, in functions of ``CHUNK`` nodes over lists of values;
- ``line_table.py``: CPython's line table rewritten, for those chunks.

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

from collections.abc import Callable
from typing import Any

from .tracing import Trace, flatten_args


def compile_function(fn: Callable[..., Any] | None = None, *, check: bool = False) -> Any:
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
        >>> @compile_function
        ... def scaled_square(scale):
        ...     return x * x * scale
        >>> scaled_square(3.0).data, scaled_square(0.5).data
        (12.0, 2.0)
    """
    if fn is None:
        return lambda f: compile_function(f, check=check)
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
        flat, shape = flatten_args(args)
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


