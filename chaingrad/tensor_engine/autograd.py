"""``grad`` and ``primitive`` for Tensors: gradients as functions, and new array ops.

They mirror ``chaingrad.autograd``'s versions for Values; ``chaingrad.grad`` and
``chaingrad.primitive`` hand Tensors to these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import autodiff
from ..errors import DomainError
from .arrays import all_finite, as_array, first_non_finite
from .backward import run_backward
from .tensor import Tensor, _const, _node


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    create_graph: bool = False,
    allow_unused: bool = False,
    grad_outputs: Any = None,
) -> list:
    """d(outputs)/d(input) for each input, without touching any ``.grad``.

    Like ``torch.autograd.grad``: with several outputs, their gradients are added.

    Args:
        outputs: A Tensor or several. Each must have one element unless ``grad_outputs``
            gives d(loss)/d(output) for it.
        inputs: The Tensors (with ``requires_grad=True``) to differentiate with respect to.
        create_graph: Return Tensors with a graph (to take ``grad`` again) instead of arrays.
        allow_unused: Return None for an input the outputs do not depend on, instead of
            raising ValueError.
        grad_outputs: One array per output (or one array for a single output), or None.
            (Last, so that the first four arguments mean what they mean for Values.)

    Returns:
        One gradient per input, in order.

    Example:
        >>> import numpy as np
        >>> x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
        >>> (g,) = grad((x**3).sum(), [x], create_graph=True)  # 3x^2
        >>> (h,) = grad(g.sum(), [x])                            # 6x
        >>> g.data.tolist(), h.tolist()
        ([3.0, 12.0], [6.0, 12.0])
    """
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    for what, tensors in (("outputs", outs), ("inputs", ins)):
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"grad: {what} must be Tensors, got {type(t).__name__}")
    for i, x in enumerate(ins):
        if not x.requires_grad:
            raise ValueError(f"grad: input {i} (shape {x.shape}) does not require a gradient")
    if grad_outputs is None or isinstance(grad_outputs, (Tensor, np.ndarray)):
        seeds = [grad_outputs] * len(outs) if len(outs) == 1 or grad_outputs is None \
            else None
    else:
        seeds = list(grad_outputs)
    if seeds is None or len(seeds) != len(outs):
        raise ValueError(f"grad: needs one grad_output per output ({len(outs)})")
    pairs = []
    for i, (out, seed) in enumerate(zip(outs, seeds)):
        if seed is None:
            if out.size != 1:
                raise ValueError(f"grad: output {i} has shape {out.shape}; pass grad_outputs "
                                 "for it or reduce it to one element")
            seed = np.ones_like(out.data)
        seed = as_array(seed, out.dtype, "grad")
        if seed.shape != out.shape:
            raise ValueError(f"grad: grad_outputs[{i}] has shape {seed.shape}, output {i} has "
                             f"shape {out.shape}")
        if out.requires_grad:
            pairs.append((out, seed))
    found: dict = {}
    if pairs:
        if len(pairs) == 1:
            root, seed = pairs[0]
        else:  # one root whose gradient flows into each output as its seed
            with autodiff.enable_grad():
                root = sum((out * _const(seed)).sum() for out, seed in pairs)
            seed = np.ones_like(root.data)
        found = run_backward(root, _const(seed) if create_graph else seed, create_graph,
                             accumulate=False)
    result = []
    for i, x in enumerate(ins):
        g = found.get(id(x))
        if g is None and not allow_unused:
            raise ValueError(f"grad: input {i} (shape {x.shape}) is not used to compute the "
                             "outputs; pass allow_unused=True to get None for it")
        result.append(g)
    return result


def primitive(
    forward: Callable[..., Any],
    backward: Callable[[tuple, Any, Any], Sequence[Any]],
    name: str | None = None,
) -> Callable[..., Tensor]:
    """Make a new differentiable Tensor op from a forward function and its rule.

    Args:
        forward: ``forward(*arrays) -> array``, on numpy arrays.
        backward: ``backward(xs, out, grad) -> tuple``, one gradient per input:
            ``grad`` times d(out)/d(x), in the output's shape or the input's (broadcast
            gradients are summed back for you). Written with operators and
            ``chaingrad.functional`` (``F.exp``) rather than numpy functions, it also runs
            on Tensors, and the op can then be differentiated twice.
        name: The op's name in graphs and errors (default: ``forward.__name__``).

    Returns:
        A function of Tensors, arrays or numbers that returns a Tensor.

    Example:
        >>> import numpy as np
        >>> cube = primitive(lambda x: x**3, lambda xs, out, g: (3 * xs[0]**2 * g,), "cube")
        >>> x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
        >>> cube(x).sum().backward()
        >>> x.grad.tolist()
        [3.0, 12.0]
    """
    if not callable(forward) or not callable(backward):
        raise TypeError("primitive: forward and backward must be callables")
    op = name or getattr(forward, "__name__", "primitive")

    def vjp(xs: tuple, out: Any, g: Any) -> tuple:
        try:
            grads = backward(xs, out, g)
        except TypeError as exc:
            if isinstance(out, Tensor):
                raise TypeError(f"{op}: its backward failed on Tensors ({exc}); to "
                                "differentiate it twice (create_graph=True) write it with "
                                "operators and the functions of chaingrad.functional "
                                "(F.exp, F.log, ...), which take arrays and Tensors") from exc
            raise
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) != len(xs):
            raise ValueError(f"{op}: backward returned {len(grads)} gradient(s) for "
                             f"{len(xs)} input(s)")
        return grads

    def apply(*args: Any) -> Tensor:
        like = next((a for a in args if isinstance(a, Tensor)), None)
        inputs = []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                inputs.append(a)
            elif isinstance(a, (np.ndarray, int, float, np.number)) and not isinstance(a, bool):
                inputs.append(_const(as_array(a, like.dtype if like is not None and
                                              not isinstance(a, np.ndarray) else None, op)))
            else:
                raise TypeError(f"{op}: argument {i} must be a Tensor, an array or a number, "
                                f"got {type(a).__name__}")
        try:
            with np.errstate(all="ignore"):
                data = forward(*(t.data for t in inputs))
        except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError) as exc:
            shapes = ", ".join(str(t.shape) for t in inputs)
            raise DomainError(f"{op}: forward failed on inputs of shapes ({shapes}): "
                              f"{exc}") from exc
        data = as_array(data, None, op)
        if not all_finite(data):
            index = first_non_finite(data)
            raise DomainError(f"{op}: forward returned {data[index]} at index {index}, needs "
                              "finite results")
        return _node(data, tuple(inputs), op, vjp)

    apply.__name__ = op
    apply.__doc__ = f"The chaingrad Tensor primitive {op!r} (forward {forward!r})."
    return apply



def gradcheck(
    fn: Callable[..., Tensor],
    inputs: Sequence[Any],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> bool:
    """``chaingrad.gradcheck`` for Tensors: every entry of every input, in float64.

    Each entry is nudged by ``+-eps`` in turn. An output with more than one entry is first
    weighted by fixed random numbers and summed, so one pass checks its whole Jacobian
    (up to that random projection), as a vector-Jacobian product.

    Args:
        fn: Takes one Tensor per input and returns a Tensor.
        inputs: The point to check at: Tensors or arrays (copied to float64).

    Returns:
        True when every entry passes ``|analytic - numeric| <= atol + rtol * |numeric|``.

    Raises:
        GradcheckError: Naming the first input and index that fail, with both values.

    Example:
        >>> import numpy as np
        >>> gradcheck(lambda x, w: (x @ w).tanh(), [np.ones((2, 3)), np.full((3, 2), 0.1)])
        True
    """
    from ..errors import GradcheckError

    point = [np.array(x.data if isinstance(x, Tensor) else x, dtype=np.float64)
             for x in inputs]
    leaves = [Tensor(x, requires_grad=True) for x in point]
    out = fn(*leaves)
    if not isinstance(out, Tensor):
        raise TypeError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
    weights = np.random.default_rng(0).uniform(0.5, 1.5, size=out.shape)

    def value(*arrays: np.ndarray) -> float:
        with autodiff.no_grad():
            return float((np.asarray(fn(*(Tensor(a) for a in arrays)).data) * weights).sum())

    analytic = grad((out * weights).sum(), leaves, allow_unused=True)
    for i, (x, g) in enumerate(zip(point, analytic)):
        g = np.zeros_like(x) if g is None else np.asarray(g)
        for index in np.ndindex(x.shape):
            nudged = [p.copy() for p in point]
            nudged[i][index] = x[index] + eps
            up = value(*nudged)
            nudged[i][index] = x[index] - eps
            numeric = (up - value(*nudged)) / (2 * eps)
            if not abs(g[index] - numeric) <= atol + rtol * abs(numeric):
                raise GradcheckError(
                    f"gradcheck: input {i} at index {index} (x = {x[index]}): analytic "
                    f"gradient {g[index].item()!r} != numeric {numeric!r} (eps={eps}, "
                    f"atol={atol}, rtol={rtol})")
    return True
