"""Gradients as functions (``grad``), your own primitives (``primitive`` and PyTorch's
``Function``), ``gradcheck`` and ``gradgradcheck``; torch's anomaly switches
(``set_detect_anomaly``, ``detect_anomaly``, ``is_anomaly_enabled``), defined in
``chaingrad.gradmode``; the Jacobians and Hessians of ``functional`` (loaded on first use:
it needs the Tensor engine).

Each works on both engines through the node protocol (see ``chaingrad.autodiff``): Values
and numbers, or Tensors and arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from numbers import Real
from typing import Any

from .. import autodiff, gradmode, guards, torch_names
from ..declaration import GENERIC_FORMULA, Primitive
from ..engine import Value
from ..errors import DomainError, GradcheckError
from ..gradmode import detect_anomaly as detect_anomaly  # torch.autograd's names for these
from ..gradmode import enable_grad as enable_grad
from ..gradmode import inference_mode as inference_mode
from ..gradmode import is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled
from ..gradmode import is_anomaly_enabled as is_anomaly_enabled
from ..gradmode import no_grad as no_grad
from ..gradmode import set_detect_anomaly as set_detect_anomaly
from ..gradmode import set_grad_enabled as set_grad_enabled


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """d(outputs)/d(input) for each input, without touching any ``.grad``.

    As ``torch.autograd.grad`` (the same arguments, in its order): with several outputs,
    their gradients are added.

    Args:
        outputs: A Value or Tensor, or several.
        inputs: The Values (or Tensors with ``requires_grad=True``) to differentiate with
            respect to.
        grad_outputs: d(loss)/d(output) for each output (None: 1, for an output with one
            element).
        retain_graph: Keep what a Tensor graph's rules need for another pass through it;
            by default (None) only with ``create_graph``, as in torch (a graph of Values
            is always kept, as in micrograd).
        create_graph: Return differentiable Values (or Tensors), so that you can take
            ``grad`` again, instead of floats (or Tensors that have no graph).
        only_inputs: Accepted for PyTorch's sake (deprecated there, and ignored).
        allow_unused: Return None for an input that the outputs do not depend on,
            instead of raising ValueError.
        is_grads_batched: Only False (a batch of grad_outputs is not in chaingrad yet).
        materialize_grads: Return zeros instead of None for an unused input (implies
            ``allow_unused``).

    Returns:
        A tuple: one gradient per input, in order.

    Example:
        >>> x = Value(2.0)
        >>> f = x**3
        >>> (df,) = grad(f, [x], create_graph=True)   # 3x^2
        >>> (d2f,) = grad(df, [x], create_graph=True)  # 6x
        >>> (d3f,) = grad(d2f, [x])                    # 6
        >>> df.data, d2f.data, d3f
        (12.0, 12.0, 6.0)
    """
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) is not in chaingrad yet")
    allow_unused = allow_unused or materialize_grads
    outs, ins = _nodes("outputs", outputs), _nodes("inputs", inputs)
    for i, x in enumerate(ins):
        if not x.requires_grad:
            raise ValueError(f"grad: input {i} (shape {x._value.shape}) does not require a "
                             "gradient")
    if grad_outputs is None or not isinstance(grad_outputs, (list, tuple)):
        given = [grad_outputs] * len(outs) if len(outs) == 1 or grad_outputs is None else None
    else:
        given = list(grad_outputs)
    if given is None or len(given) != len(outs):
        raise ValueError(f"grad: needs one grad_output per output ({len(outs)})")
    roots, seeds = [], []
    for i, (out, g) in enumerate(zip(outs, given)):
        if out.requires_grad:  # an output computed from no input has no gradient to give
            roots.append(out)
            seeds.append(out._seed(g, create_graph, f"grad: output {i}"))
    with guards.quiet_numpy(roots):  # as Tensor.backward: nan and inf raise DomainError
        found = (autodiff.backward(roots, seeds, create_graph, accumulate=False,
                                   retain_graph=retain_graph) if roots else {})
    result = []
    for i, x in enumerate(ins):
        g = found.get(id(x))
        if g is None and not allow_unused:
            raise ValueError(f"grad: input {i} ({x!r}) is not used to compute the outputs; "
                             "pass allow_unused=True to get None for it")
        if g is None and materialize_grads:
            g = x._value * 0
        if g is not None and x._as_grad is not None:  # as its .grad shows it: a Tensor
            g = x._as_grad(g)
        result.append(g)
    return tuple(result)


def _nodes(what: str, given: Any) -> list:
    """A node, or a non-empty list or tuple of nodes of one engine, as a list."""
    items = [given] if isinstance(given, autodiff.Node) else given
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"grad: {what} must be a Value or Tensor, or a list of them, "
                        f"got {type(given).__name__}")
    if not items:
        raise ValueError(f"grad: {what} is empty")
    for item in items:
        if not isinstance(item, autodiff.Node):
            raise TypeError(f"grad: {what} must be Values or Tensors, got "
                            f"{type(item).__name__}")
        if type(item) is not type(items[0]):
            raise TypeError(f"grad: {what} mix {type(items[0]).__name__}s and "
                            f"{type(item).__name__}s")
    return list(items)


def primitive(
    forward: Callable[..., Any],
    backward: Callable[[tuple[Any, ...], Any, Any], Sequence[Any]],
    name: str | None = None,
) -> Callable[..., Any]:
    """Make a new differentiable op from a forward function and its backward function.

    Args:
        forward: ``forward(*xs)`` on plain floats (or, for Tensors, on numpy arrays).
        backward: ``backward(xs, out, grad) -> tuple`` with one gradient per input:
            ``grad * d(out)/d(x)`` for each ``x`` in ``xs``. Written with arithmetic
            operators and ``chaingrad.generic``'s functions (``G.exp`` rather than
            ``math.exp``), it also works on Values, and the op can be differentiated twice.
            For Tensors, a gradient may be in the output's shape (a broadcast input's
            gradient is summed back for you).
        name: The op's name in graphs and errors (default: ``forward.__name__``).

    Returns:
        A function that takes Values or numbers (or Tensors, arrays and numbers) and
        returns a Value (or a Tensor).

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

    def vjp(xs: tuple, out: Any, g: Any) -> tuple:
        try:
            grads = backward(xs, out, g)
        except TypeError as exc:
            if isinstance(out, autodiff.Node):
                raise TypeError(
                    f"{op}: its backward failed on {type(out).__name__}s ({exc}); to "
                    "differentiate it twice (create_graph=True) write it with operators and "
                    "the functions of chaingrad.generic (G.exp, G.log, ...), which take "
                    "numbers, arrays, Values and Tensors") from exc
            raise
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) != len(xs):
            raise ValueError(f"{op}: backward returned {len(grads)} gradient(s) for "
                             f"{len(xs)} input(s)")
        if type(out) is float:  # the scalar engine: numbers only
            for i, gi in enumerate(grads):
                if isinstance(gi, Value):
                    raise TypeError(f"{op}: backward returned a Value for gradient {i} in an "
                                    "ordinary backward(); it gets floats and must return "
                                    "floats (return g * ..., not a new Value)")
                if not isinstance(gi, Real) or isinstance(gi, bool):
                    raise TypeError(f"{op}: backward must return one number per input; "
                                    f"gradient {i} is {type(gi).__name__} {gi!r}")
        return grads

    rule = Primitive(op, vjp, (GENERIC_FORMULA,), forward=forward, keeps_nan=False)

    def apply(*args: Any) -> Any:
        like = next((a for a in args if isinstance(a, autodiff.Node)), None)
        engine = Value if like is None else type(like)
        inputs = []
        for i, a in enumerate(args):
            x = engine._lift(a, like)
            if x is None:
                kinds = {Value: "a Value or a number"}.get(
                    engine, f"a {engine.__name__}, an array or a number")
                if like is None:
                    kinds = "a Value, a Tensor, a number or an array"
                raise TypeError(f"{op}: argument {i} must be {kinds}, got {type(a).__name__}")
            inputs.append(x)
        return inputs[0]._apply(rule, *inputs[1:])

    apply.__name__ = op
    apply.__doc__ = f"The chaingrad primitive {op!r} (forward {forward!r})."
    return apply


class FunctionCtx:
    """What ``Function.forward`` leaves for ``Function.backward``, as torch's ctx.

    Attributes:
        needs_input_grad: One bool per argument of ``forward``: whether it takes a gradient.
        saved_tensors: What ``save_for_backward`` kept, as a tuple.
    """

    def __init__(self, needs_input_grad: tuple[bool, ...]):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (the inputs or the output, or None) for ``backward``."""
        self.saved_tensors = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        raise NotImplementedError("ctx.mark_dirty is not in chaingrad yet (forward must not "
                                  "change its inputs in place)")

    def mark_non_differentiable(self, *tensors: Any) -> None:
        raise NotImplementedError("ctx.mark_non_differentiable is not in chaingrad yet")

    def set_materialize_grads(self, value: bool) -> None:
        if not value:
            raise NotImplementedError("ctx.set_materialize_grads(False) is not in chaingrad yet")


class Function:
    """A differentiable op written as PyTorch writes one: subclass, define
    ``forward(ctx, *args)`` and ``backward(ctx, grad_output)`` as static methods, call
    ``.apply(*args)``.

    Built on the same mechanism as ``primitive``: the result is one node whose rule is
    your ``backward`` (its vector-Jacobian product). ``forward`` runs with the graph off, on
    the Tensors (or Values) themselves; ``backward`` gets ``grad_output`` as a Tensor (or
    Value) and returns one gradient per argument of ``forward`` (None for one that takes
    none). Written with Tensor ops, it also runs under ``backward(create_graph=True)``, on
    the graph, so that the op can be differentiated again, as torch's. ``setup_context``
    (torch 2's other style, ``forward`` without ctx) is supported too; a ``forward`` that
    returns several outputs is not (yet).

    Example:
        >>> class Cube(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (x,) = ctx.saved_tensors
        ...         return grad_output * 3 * x ** 2
        >>> x = Value(2.0)
        >>> y = Cube.apply(x)
        >>> y.backward()
        >>> y.data, x.grad, y._op
        (8.0, 12.0, 'CubeBackward')
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        """The op's output, computed from the arguments (the graph is off meanwhile)."""
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        """One gradient per argument of ``forward``: grad_output times d(output)/d(arg)."""
        raise NotImplementedError("a Function subclass must define backward(ctx, "
                                  "grad_output)")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        """torch 2's other style: fill ``ctx`` here, and ``forward`` takes no ctx."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and, if an argument takes a gradient, make its output a node
        whose rule is ``backward``."""
        needs = tuple(isinstance(a, autodiff.Node) and bool(a.requires_grad) for a in args)
        ctx = FunctionCtx(needs)
        separate = cls.setup_context is not Function.setup_context
        with gradmode.no_grad():
            out = cls.forward(*args, **kwargs) if separate else cls.forward(ctx, *args,
                                                                               **kwargs)
            if separate:
                cls.setup_context(ctx, args, out)
        if isinstance(out, (tuple, list)):
            raise NotImplementedError(f"{cls.__name__}.forward returned {len(out)} outputs; "
                                      "a Function with several outputs is not in chaingrad "
                                      "yet")
        if not any(needs) or not gradmode.is_grad_enabled():
            return out
        if not isinstance(out, autodiff.Node):
            raise TypeError(f"{cls.__name__}.forward must return a Value or a Tensor, got "
                            f"{type(out).__name__}")
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, autodiff.Node))
        engine = type(out)
        rule = FUNCTION.bind(cls, ctx, positions, len(args), engine,
                             name=f"{cls.__name__}Backward")
        return engine._from_rule(out._value, [args[i] for i in positions], rule)


def _function_vjp(xs: tuple, out: Any, g: Any, cls: type, ctx: FunctionCtx,
                  positions: tuple[int, ...], count: int, engine: type) -> tuple:
    """The rule of a ``Function``'s node: its ``backward``, on a Tensor (or Value)
    ``grad_output``; in an ordinary backward pass, with the graph off and the gradients
    handed back as numbers or arrays."""
    on_graph = isinstance(g, autodiff.Node)
    grad_output = g if on_graph else engine._lift(g, None)
    with gradmode.enable_grad() if on_graph else gradmode.no_grad():
        grads = cls.backward(ctx, grad_output)
    grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    while len(grads) > count and grads[-1] is None:
        grads = grads[:-1]
    if len(grads) != count:
        raise ValueError(f"function {cls.__name__}Backward returned an incorrect number of "
                         f"gradients (expected {count}, got {len(grads)})")
    picked = tuple(grads[i] for i in positions)
    if on_graph:
        return picked
    return tuple(gi._value if isinstance(gi, autodiff.Node) else gi for gi in picked)


FUNCTION = Primitive("function", _function_vjp, (GENERIC_FORMULA,),
                     params=("cls", "ctx", "positions", "count", "engine"), keeps_nan=False)
"""The primitive behind every ``Function``: its rule calls the subclass's ``backward``."""


def gradcheck(
    fn: Callable[..., Any],
    inputs: Sequence[Any] | Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    *,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    fast_mode: bool = False,
    **unsupported: Any,
) -> bool:
    """Compare the engine's gradient with central finite differences, for every input.

    Each input ``x_i`` (each entry of it, for an array) is checked with
    ``(f(x_i + eps) - f(x_i - eps)) / (2 eps)``; the check passes where
    ``|analytic - numeric| <= atol + rtol * |numeric|``. Arrays and Tensors are checked in
    float64; an output with more than one entry is first weighted by fixed random numbers
    and summed, so one pass checks its whole Jacobian (up to that random projection).

    Args:
        fn: Takes one Value per input and returns a Value (or Tensors and a Tensor).
        inputs: The point to check at: numbers or Values (or arrays or Tensors; one Tensor
            alone too, as torch takes it).
        raise_exception: False returns False where the check fails, instead of raising,
            as torch's ``gradcheck``.
        nondet_tol, check_undefined_grad, check_grad_dtypes, fast_mode: torch's, accepted:
            chaingrad's backward is deterministic and always checks every entry. torch's
            other options (``check_forward_ad=True``, batched checks, ``masked``) are not in
            chaingrad yet; asking for them raises NotImplementedError.

    Returns:
        True when every input passes (False where one fails, with
        ``raise_exception=False``).

    Raises:
        GradcheckError: Naming the first input (and index) that fails, with both values,
            or saying that a nudge of ``eps`` left the function's domain.

    Example:
        >>> gradcheck(lambda x, y: (x * y).tanh(), [0.3, -1.2])
        True
        >>> gradcheck(primitive(lambda x: x * x, lambda xs, out, g: (g,)), [3.0],
        ...           raise_exception=False)
        False
    """
    off = {"check_batched_grad": False, "check_batched_forward_grad": False,
           "check_forward_ad": False, "check_backward_ad": True, "masked": None}
    for name, value in unsupported.items():
        if name not in off:
            raise TypeError(f"gradcheck() got an unexpected keyword argument {name!r}")
        if value != off[name] and not (name == "masked" and value is False):
            raise NotImplementedError(f"gradcheck with {name}={value!r} is not in chaingrad "
                                      "yet")
    if hasattr(inputs, "_prev") or (hasattr(inputs, "shape") and hasattr(inputs, "dtype")):
        inputs = (inputs,)  # one Tensor (or array) alone
    try:
        return _gradcheck(fn, inputs, eps, atol, rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Sequence[Any] | Any,
    grad_outputs: Sequence[Any] | Any | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: ``gradcheck`` of the gradient itself, as torch's
    ``gradgradcheck``. The function checked maps the inputs to
    ``grad(func(inputs), inputs, grad_outputs, create_graph=True)`` (weighted by fixed
    random numbers and summed, so that one pass checks every entry up to that projection),
    so that each rule's own derivative is compared with finite differences. The gradient
    is linear in ``grad_outputs``, which torch checks too and chaingrad takes as constants.

    Args:
        func: Takes one Value (or Tensor) per input and returns a Value (or Tensors).
        inputs: The point: numbers or Values, or Tensors (one alone too).
        grad_outputs: d(loss)/d(output) for each output; None: random (for Tensors:
            fixed, in float64) or 1 (for Values), as torch draws its own.
        eps, atol, rtol, raise_exception: as ``gradcheck``'s.
        gen_non_contig_grad_outputs, nondet_tol, check_undefined_grad: torch's, accepted.
        check_grad_dtypes, check_rev_over_rev, fast_mode: torch's, accepted too.
        check_batched_grad, check_fwd_over_rev, masked: True is not in chaingrad yet (a
            NotImplementedError says so).

    Returns:
        True when every input passes (False where one fails, with
        ``raise_exception=False``).

    Example:
        >>> gradgradcheck(lambda x, y: (x * y).tanh(), [0.3, -1.2])
        True
        >>> import chaingrad as torch
        >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        >>> gradgradcheck(lambda t: (t ** 3).sum(), (x,))
        True
    """
    for name, value in (("check_batched_grad", check_batched_grad),
                        ("check_fwd_over_rev", check_fwd_over_rev), ("masked", masked)):
        if value:
            raise NotImplementedError(f"gradgradcheck with {name}=True is not in chaingrad "
                                      "yet")
    if hasattr(inputs, "_prev") or (hasattr(inputs, "shape") and hasattr(inputs, "dtype")):
        inputs = (inputs,)
    inputs = tuple(inputs)
    with gradmode.no_grad():  # only to see the outputs' number and shapes
        outputs = func(*(Value(x) if isinstance(x, Real) else x for x in inputs))
    outs = tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)
    if grad_outputs is None:
        grad_outputs = tuple(_random_like(out, seed) for seed, out in enumerate(outs))
    elif hasattr(grad_outputs, "_prev") or hasattr(grad_outputs, "shape") or isinstance(
            grad_outputs, Real):
        grad_outputs = (grad_outputs,)
    grad_outputs = tuple(grad_outputs)
    if len(grad_outputs) != len(outs):
        raise ValueError(f"gradgradcheck: needs one grad_output per output ({len(outs)}), "
                         f"got {len(grad_outputs)}")

    def gradient(*xs: Any) -> Any:
        xs = tuple(x if x.requires_grad else x.detach().requires_grad_() for x in xs)
        with gradmode.enable_grad():  # the gradient is the function, even where the check
            found = grad(func(*xs), xs, grad_outputs=list(grad_outputs),  # evaluates it
                         create_graph=True, allow_unused=True)  # without a graph
        return sum((g * _random_like(g, 100 + i, positive=True)).sum() if hasattr(g, "shape")
                   else g * (1.5 + 0.25 * i) for i, g in enumerate(found) if g is not None)

    return gradcheck(gradient, inputs, eps, atol, rtol, raise_exception=raise_exception)


def _random_like(x: Any, seed: int, positive: bool = False) -> Any:
    """Fixed random numbers in x's shape, a constant of x's kind (a float for a Value, an
    array for a Tensor): torch's grad_outputs for gradgradcheck, and its weights."""
    if not hasattr(x, "shape"):
        return 1.0 + 0.25 * seed if positive else 1.0
    import numpy as np  # a Tensor is in play: numpy is there

    rng = np.random.default_rng(seed)
    shape = tuple(x.shape)
    return rng.uniform(0.5, 1.5, size=shape) if positive else rng.standard_normal(shape)


def _gradcheck(fn: Callable[..., Any], inputs: Sequence[Any], eps: float, atol: float,
               rtol: float) -> bool:
    """``gradcheck``'s check: True, or a GradcheckError naming the first input that fails."""
    if not (isinstance(eps, Real) and 0 < eps < math.inf):
        raise ValueError(f"gradcheck: eps must be a positive number, got {eps!r}")
    if any(hasattr(x, "shape") for x in inputs):
        return _gradcheck_arrays(fn, inputs, eps, atol, rtol)
    point, names = [], []
    for i, x in enumerate(inputs):
        v = Value._lift(x, None)
        if v is None:
            raise TypeError(f"gradcheck: input {i} must be a number or a Value, "
                            f"got {type(x).__name__} {x!r}")
        point.append(v._value)
        names.append(f"input {i} {x.label!r}" if isinstance(x, Value) and x.label
                     else f"input {i}")
    leaves = [Value(x) for x in point]
    out = fn(*leaves)
    if not isinstance(out, Value):
        raise TypeError(f"gradcheck: fn must return a Value, got {type(out).__name__}")
    analytic = grad(out, leaves, allow_unused=True)

    def value_at(i: int, x: float) -> float:
        with gradmode.no_grad():
            try:
                return fn(*[Value(x if j == i else p) for j, p in enumerate(point)])._value
            except DomainError as exc:
                raise GradcheckError(
                    f"gradcheck: {names[i]} (x = {point[i]}): the nudge to {x} left the "
                    f"function's domain ({exc}); check at a point further from its edge "
                    "or with a smaller eps") from exc

    for i, a in enumerate(analytic):
        a = 0.0 if a is None else a
        numeric = (value_at(i, point[i] + eps) - value_at(i, point[i] - eps)) / (2 * eps)
        if not abs(a - numeric) <= atol + rtol * abs(numeric):
            raise GradcheckError(
                f"gradcheck: {names[i]} (x = {point[i]}): analytic gradient {a!r} "
                f"!= numeric {numeric!r} (eps={eps}, atol={atol}, rtol={rtol})")
    return True


def _gradcheck_arrays(fn: Callable[..., Any], inputs: Sequence[Any], eps: float, atol: float,
                      rtol: float) -> bool:
    """``gradcheck`` on Tensors or arrays: every entry of every input, in float64."""
    import numpy as np

    from ..tensor_engine import Tensor  # the Tensor engine needs numpy: loaded only here

    point = [np.array(x._value if isinstance(x, Tensor) else x, dtype=np.float64)
             for x in inputs]
    leaves = [Tensor(x, requires_grad=True) for x in point]
    out = fn(*leaves)
    if not isinstance(out, Tensor):
        raise TypeError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
    weights = np.random.default_rng(0).uniform(0.5, 1.5, size=out.shape)

    def value(i: int, index: tuple, arrays: list) -> float:
        with gradmode.no_grad(), np.errstate(all="ignore"):
            try:
                found = float((np.asarray(fn(*(Tensor(a) for a in arrays))._value)
                               * weights).sum())
            except DomainError as exc:
                raise _left_domain(i, index, eps, str(exc)) from exc
        if not math.isfinite(found):  # a Tensor op gives torch's nan or inf there
            raise _left_domain(i, index, eps, f"the function's value is {found}")
        return found

    analytic = grad((out * weights).sum(), leaves, allow_unused=True)
    for i, (x, g) in enumerate(zip(point, analytic)):
        g = np.zeros_like(x) if g is None else np.asarray(g)
        for index in np.ndindex(x.shape):
            nudged = [p.copy() for p in point]
            nudged[i][index] = x[index] + eps
            up = value(i, index, nudged)
            nudged[i][index] = x[index] - eps
            numeric = (up - value(i, index, nudged)) / (2 * eps)
            if not abs(g[index] - numeric) <= atol + rtol * abs(numeric):
                raise GradcheckError(
                    f"gradcheck: input {i} at index {index} (x = {x[index]}): analytic "
                    f"gradient {g[index].item()!r} != numeric {numeric!r} (eps={eps}, "
                    f"atol={atol}, rtol={rtol})")
    return True


def _left_domain(i: int, index: tuple, eps: float, what: str) -> GradcheckError:
    return GradcheckError(
        f"gradcheck: input {i} at index {index}: a nudge of eps={eps} left the function's "
        f"domain ({what}); check at a point further from its edge or with a smaller eps")


__getattr__ = torch_names.submodules_on_use(__name__, ("functional",), torch_names.AUTOGRAD)
