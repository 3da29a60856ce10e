"""Gradients as functions: ``grad``, user-defined ``primitive`` ops and ``gradcheck``."""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable, Sequence
from numbers import Real
from typing import Any

from . import autodiff
from .engine import Value, _lift, _node
from .errors import DomainError, GradcheckError


def grad(
    outputs: Value | Sequence[Value],
    inputs: Value | Sequence[Value],
    create_graph: bool = False,
    allow_unused: bool = False,
    grad_outputs: Any = None,
) -> list:
    """d(outputs)/d(input) for each input, without touching any ``.grad``.

    Like ``torch.autograd.grad``: several outputs are summed first.

    Args:
        outputs: A Value, or several whose sum is differentiated.
        inputs: The Values to differentiate with respect to.
        create_graph: Return differentiable Values (so that you can take ``grad`` again)
            instead of floats.
        allow_unused: Return None for an input that ``outputs`` does not depend on,
            instead of raising ValueError.
        grad_outputs: For Tensors: d(loss)/d(output) for each output that has more than
            one element (see ``chaingrad.tensor_autograd.grad``).

    Returns:
        One gradient per input, in order.

    Example:
        >>> x = Value(2.0)
        >>> f = x**3
        >>> (df,) = grad(f, [x], create_graph=True)   # 3x^2
        >>> (d2f,) = grad(df, [x], create_graph=True)  # 6x
        >>> (d3f,) = grad(d2f, [x])                    # 6
        >>> df.data, d2f.data, d3f
        (12.0, 12.0, 6.0)
    """
    tensors = _tensor_side(outputs, inputs)
    if tensors is not None:
        return tensors.grad(outputs, inputs, create_graph, allow_unused, grad_outputs)
    outs, ins = _values("outputs", outputs), _values("inputs", inputs)
    for what, values in (("outputs", outs), ("inputs", ins)):
        for v in values:
            if not isinstance(v, Value):
                raise TypeError(f"grad: {what} must be Values, got {type(v).__name__}")
    with autodiff.enable_grad():
        root = outs[0] if len(outs) == 1 else _sum(outs)
    seed = Value(1.0) if create_graph else 1.0
    found = autodiff.run_backward(root, seed, create_graph, accumulate=False)
    result = []
    for i, x in enumerate(ins):
        if id(x) in found:
            result.append(found[id(x)])
        elif allow_unused:
            result.append(None)
        else:
            raise ValueError(
                f"grad: input {i} ({x!r}) is not used to compute the outputs; "
                "pass allow_unused=True to get None for it"
            )
    return result


def _values(what: str, given: object) -> list:
    """A Value, or a list or tuple of them, as a list (checked by the caller)."""
    if isinstance(given, Value):
        return [given]
    if not isinstance(given, (list, tuple)):
        raise TypeError(f"grad: {what} must be a Value or a list of Values, "
                        f"got {type(given).__name__}")
    if not given:
        raise ValueError(f"grad: {what} is empty")
    return list(given)


def _sum(values: list[Value]) -> Value:
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total


def primitive(
    forward: Callable[..., float],
    backward: Callable[[tuple, float, float], Sequence[float]],
    name: str | None = None,
) -> Callable[..., Value]:
    """Make a new differentiable op from a forward function and its backward function.

    Args:
        forward: ``forward(*xs) -> float`` on plain floats.
        backward: ``backward(xs, out, grad) -> tuple`` with one gradient per input:
            ``grad * d(out)/d(x)`` for each ``x`` in ``xs``. Written with arithmetic
            operators and ``chaingrad.functional``'s functions (``F.exp`` rather than
            ``math.exp``), it also works on Values, and the op can be differentiated twice.
        name: The op's name in graphs and errors (default: ``forward.__name__``).

    Returns:
        A function that takes Values or numbers and returns a Value.

    Example:
        >>> def square(x):
        ...     return x * x
        >>> def square_backward(xs, out, grad):
        ...     (x,) = xs
        ...     return (2 * x * grad,)
        >>> sq = primitive(square, square_backward)
        >>> x = Value(3.0)
        >>> y = sq(x)
        >>> y.backward()
        >>> y.data, y._op, x.grad
        (9.0, 'square', 6.0)
    """
    if not callable(forward) or not callable(backward):
        raise TypeError("primitive: forward and backward must be callables")
    op = name or getattr(forward, "__name__", "primitive")

    def vjp(xs: tuple, out: float, g: float) -> tuple:
        try:
            grads = backward(xs, out, g)
        except TypeError as exc:
            if isinstance(out, Value):
                raise TypeError(
                    f"{op}: its backward failed on Values ({exc}); to differentiate it "
                    "twice (create_graph=True) write it with operators and the functions "
                    "of chaingrad.functional (F.exp, F.log, ...), which take floats and Values"
                ) from exc
            raise
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) != len(xs):
            raise ValueError(
                f"{op}: backward returned {len(grads)} gradient(s) for {len(xs)} input(s)"
            )
        for i, g in enumerate(grads):
            if not isinstance(g, (Real, Value)) or isinstance(g, bool):
                raise TypeError(f"{op}: backward must return one number per input; "
                                f"gradient {i} is {type(g).__name__} {g!r}")
        return grads

    tensor_op = None

    def apply(*args: Value | float) -> Value:
        nonlocal tensor_op
        if _tensor_side(args) is not None:  # the same pair of functions, on arrays
            if tensor_op is None:
                tensor_op = _tensor_side(args).primitive(forward, backward, name=op)
            return tensor_op(*args)
        inputs = []
        for i, a in enumerate(args):
            v = _lift(a)
            if v is None:
                raise TypeError(f"{op}: argument {i} must be a Value or a number, "
                                f"got {type(a).__name__}")
            inputs.append(v)
        try:
            data = forward(*(v.data for v in inputs))
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            args_text = ", ".join(str(v.data) for v in inputs)
            raise DomainError(f"{op}: forward failed at ({args_text}): {exc}") from exc
        data = _check_output(op, data)
        return _node(data, *autodiff.split(tuple(inputs)), op, vjp)

    apply.__name__ = op
    apply.__doc__ = f"The chaingrad primitive {op!r} (forward {forward!r})."
    return apply


def _tensor_side(*objects: Any) -> Any:
    """``chaingrad.tensor_autograd`` if any object (or item of one) is a Tensor, else None.

    Tensors need numpy; the scalar engine must not import it, and no Tensor can exist
    before ``chaingrad.tensor`` has been imported, so only then is there anything to check.
    """
    tensor = sys.modules.get("chaingrad.tensor_engine.tensor")
    if tensor is None:
        return None
    for obj in objects:
        items = obj if isinstance(obj, (list, tuple)) else (obj,)
        if any(isinstance(item, tensor.Tensor) for item in items):
            return importlib.import_module("chaingrad.tensor_engine.autograd")
    return None


def _is_array(x: object) -> bool:
    """Whether ``x`` is a Tensor or a numpy array (of any shape), importing neither."""
    tensor = sys.modules.get("chaingrad.tensor_engine.tensor")
    if tensor is not None and isinstance(x, tensor.Tensor):
        return True
    return type(x).__module__ == "numpy" and type(x).__name__ == "ndarray"


def _check_output(op: str, data: object) -> float:
    if not isinstance(data, Real) or isinstance(data, Value):
        raise TypeError(f"{op}: forward must return a real number, got {type(data).__name__}")
    data = float(data)
    if not math.isfinite(data):
        raise DomainError(f"{op}: forward returned {data}, needs a finite number")
    return data


def gradcheck(
    fn: Callable[..., Value],
    inputs: Sequence[float | Value],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """Compare the engine's gradient with central finite differences for every input.

    Each input ``x_i`` is checked with ``(f(x_i + eps) - f(x_i - eps)) / (2 eps)``; the
    check passes where ``|analytic - numeric| <= atol + rtol * |numeric|``.

    Args:
        fn: Takes one Value per input and returns a Value (or, when any input is a
            Tensor or an array, Tensors and a Tensor: see ``tensor_autograd.gradcheck``).
        inputs: The point to check at (numbers, or Values whose ``.data`` is used).

    Returns:
        True when every input passes.

    Raises:
        GradcheckError: Naming the first input that fails, with both values.

    Example:
        >>> gradcheck(lambda x, y: (x * y).tanh(), [0.3, -1.2])
        True
    """
    if any(_is_array(x) for x in inputs):
        tensor_autograd = importlib.import_module("chaingrad.tensor_engine.autograd")
        return tensor_autograd.gradcheck(fn, inputs, eps, atol, rtol)
    if not (isinstance(eps, Real) and 0 < eps < math.inf):
        raise ValueError(f"gradcheck: eps must be a positive number, got {eps!r}")
    point, names = [], []
    for i, x in enumerate(inputs):
        v = _lift(x)
        if v is None:
            raise TypeError(f"gradcheck: input {i} must be a number or a Value, "
                            f"got {type(x).__name__} {x!r}")
        point.append(v.data)
        names.append(f"input {i} {x.label!r}" if isinstance(x, Value) and x.label
                     else f"input {i}")
    leaves = [Value(x) for x in point]
    out = fn(*leaves)
    if not isinstance(out, Value):
        raise TypeError(f"gradcheck: fn must return a Value, got {type(out).__name__}")
    analytic = grad(out, leaves, allow_unused=True)
    for i, a in enumerate(analytic):
        a = 0.0 if a is None else a
        with autodiff.no_grad():
            up = fn(*[Value(x + eps if j == i else x) for j, x in enumerate(point)]).data
            down = fn(*[Value(x - eps if j == i else x) for j, x in enumerate(point)]).data
        numeric = (up - down) / (2 * eps)
        if not abs(a - numeric) <= atol + rtol * abs(numeric):
            raise GradcheckError(
                f"gradcheck: {names[i]} (x = {point[i]}): analytic gradient {a!r} "
                f"!= numeric {numeric!r} (eps={eps}, atol={atol}, rtol={rtol})"
            )
    return True
