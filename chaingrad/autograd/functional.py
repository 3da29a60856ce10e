"""torch.autograd.functional: the derivatives of a whole function at a point, as tensors:
its Jacobian, its Hessian, and their products with a vector (``vjp``, ``jvp``, ``vhp``,
``hvp``).

Each is made of ``chaingrad.grad`` (reverse mode, the one backward pass): a Jacobian is one
gradient per output entry, stacked; a Hessian the Jacobian of the gradient, taken with
``create_graph=True``; ``jvp`` a product with the Jacobian, ``hvp`` (equal to ``vhp``: a
Hessian is symmetric) the gradient of the gradient's product with v. The arguments are
torch's; ``vectorize`` and the strategies are accepted and compute the same numbers.

Example:
    >>> import chaingrad as torch
    >>> from chaingrad.autograd.functional import jacobian, hessian
    >>> x = torch.tensor([1.0, 2.0])
    >>> jacobian(lambda a: a ** 2, x).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    >>> hessian(lambda a: (a ** 3).sum(), x).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor_engine import Tensor, stack
from ..tensor_engine.factories import zeros
from . import grad

Tensors = Tensor | tuple[Tensor, ...]


def jacobian(func: Callable[..., Any], inputs: Tensors, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """d(output)/d(input) of ``func`` at ``inputs``, as torch.autograd.functional.jacobian:
    for each output and input, a tensor of shape ``output.shape + input.shape``; a tuple
    over the inputs where ``inputs`` is a tuple, over the outputs where ``func`` returns
    one (a tuple of tuples for both).

    Args:
        func: Takes the input tensors, returns a tensor or a tuple of them.
        inputs: A tensor or a tuple of tensors: the point.
        create_graph: Keep the graph, so that the result can be differentiated again.
        strict: An output independent of an input is an error (else its block is zeros).
        vectorize, strategy: torch's ways of computing the same numbers: accepted.

    Example:
        >>> import chaingrad as torch
        >>> x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0])
        >>> dx, dy = jacobian(lambda a, b: a * b, (x, y))
        >>> dx.tolist(), dy.tolist()
        ([[3.0, 0.0], [0.0, 3.0]], [[1.0], [2.0]])
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         f'Hint: If your strategy is "{strategy}", please double check the '
                         "spelling.")
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    is_tuple, xs = _tensors("inputs", inputs, "jacobian")
    xs = _prepared(xs, create_graph)
    outs_tuple, outs = _outputs(func(*xs), "jacobian")
    blocks = [[_block(out, i, xs, j, create_graph, strict) for j in range(len(xs))]
              for i, out in enumerate(outs)]
    rows = [tuple(row) if is_tuple else row[0] for row in blocks]
    return tuple(rows) if outs_tuple else rows[0]


def hessian(func: Callable[..., Any], inputs: Tensors, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The second derivatives of a function with a single-element output, as
    torch.autograd.functional.hessian: a tensor of shape ``input.shape + input.shape``, or
    for a tuple of inputs a tuple of tuples (block ``[i][j]`` for inputs i and j).

    Example:
        >>> import chaingrad as torch
        >>> hessian(lambda a: (a[0] * a[1]) ** 2, torch.tensor([1.0, 2.0])).tolist()
        [[8.0, 8.0], [8.0, 2.0]]
    """
    is_tuple, xs = _tensors("inputs", inputs, "hessian")

    def gradient(*args: Tensor) -> tuple[Tensor, ...]:
        _, outs = _outputs(func(*args), "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return jacobian(lambda *a: func(*a).reshape(()), args, create_graph=True,
                        strict=strict)

    result = jacobian(gradient, xs, create_graph=create_graph, strict=strict,
                      strategy=outer_jacobian_strategy)
    return result if is_tuple else result[0][0]


def vjp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the output, and the vector-Jacobian product (a gradient
    with ``v`` as d(loss)/d(output)), as torch.autograd.functional.vjp; ``v`` may be left
    out for a single-element output.

    Example:
        >>> import chaingrad as torch
        >>> out, product = vjp(lambda a: a ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
        >>> out.tolist(), product.tolist()
        ([1.0, 4.0], [2.0, 4.0])
    """
    is_tuple, xs = _tensors("inputs", inputs, "vjp")
    xs = _prepared(xs, create_graph)
    outs_tuple, outs = _outputs(func(*xs), "vjp")
    vs = _vectors(v, outs, "vjp")
    found = _gradient(outs, xs, vs, create_graph, strict)
    return _shaped(outs, outs_tuple, create_graph), _shaped(found, is_tuple, create_graph)


def jvp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the output, and the Jacobian-vector product (how the output
    moves as the inputs move along ``v``), as torch.autograd.functional.jvp; ``v`` may be
    left out for a single-element input.

    Example:
        >>> import chaingrad as torch
        >>> out, product = jvp(lambda a: a ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
        >>> product.tolist()
        [2.0, 4.0]
    """
    is_tuple, xs = _tensors("inputs", inputs, "jvp")
    vs = _vectors(v, xs, "jvp")
    blocks = jacobian(func, tuple(xs), create_graph=create_graph, strict=strict)
    outs_tuple, outs = _outputs(func(*[x.detach() for x in xs]), "jvp")
    rows = blocks if outs_tuple else (blocks,)
    products = tuple(
        sum((block.reshape(out.numel(), -1) @ u.reshape(-1)).reshape(out.shape)
            for block, u in zip(row, vs))
        for row, out in zip(rows, outs))
    return _shaped(outs, outs_tuple, False), products if outs_tuple else products[0]


def vhp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a function with a single-element output, as
    torch.autograd.functional.vhp: the gradient of (gradient . v).

    Example:
        >>> import chaingrad as torch
        >>> out, product = vhp(lambda a: (a ** 3).sum(), torch.tensor([1.0, 2.0]),
        ...                    torch.ones(2))
        >>> out.item(), product.tolist()
        (9.0, [6.0, 12.0])
    """
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable[..., Any], inputs: Tensors, v: Tensors | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a function with a single-element output, as
    torch.autograd.functional.hvp: ``vhp``'s numbers, the Hessian being symmetric.

    Example:
        >>> import chaingrad as torch
        >>> hvp(lambda a: (a ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))[1].tolist()
        [6.0, 12.0]
    """
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(fn: str, func: Callable[..., Any], inputs: Tensors, v: Any,
                     create_graph: bool, strict: bool) -> tuple[Any, Any]:
    """``vhp``'s and ``hvp``'s work: the gradient of (gradient . v); ``fn`` names the
    function in errors."""
    is_tuple, xs = _tensors("inputs", inputs, fn)
    xs = _prepared(xs, True)
    _, outs = _outputs(func(*xs), fn)
    if len(outs) != 1 or outs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should "
                           "contain a single element")
    vs = _vectors(v, xs, fn)
    gradients = _gradient(outs, xs, (None,), True, strict)
    product = sum((g * u).sum() for g, u in zip(gradients, vs))
    found = _gradient((product,), xs, (None,), create_graph, strict, "the gradient")
    return _shaped(outs, False, create_graph), _shaped(found, is_tuple, create_graph)


# ---- the pieces ----


def _tensors(what: str, given: Any, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    """Whether ``given`` was a tuple (or list), and its tensors; torch's TypeError else."""
    is_tuple = isinstance(given, (tuple, list))
    items = tuple(given) if is_tuple else (given,)
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but the value at index {items.index(item)} has type "
                            f"{type(item)}.")
    return is_tuple, items


def _outputs(result: Any, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    """What ``func`` returned, as ``_tensors`` does it for its inputs."""
    is_tuple = isinstance(result, (tuple, list))
    items = tuple(result) if is_tuple else (result,)
    if not all(isinstance(item, Tensor) for item in items):
        kind = type(result) if not is_tuple else type(next(
            item for item in items if not isinstance(item, Tensor)))
        raise TypeError(f"The outputs of the user-provided function given to {fn} must be "
                        f"either a Tensor or a tuple of Tensors but the given outputs of the "
                        f"user-provided function has type {kind}.")
    return is_tuple, items


def _prepared(xs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """The inputs as tensors to differentiate with respect to: new leaves, or (with
    ``create_graph``, for a graph that needs them) their own graph continued."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(True) for x in xs)


def _vectors(v: Any, like: tuple[Tensor, ...], fn: str) -> tuple[Tensor, ...]:
    """``v`` as one tensor per tensor of ``like``, each of its shape; None only where
    ``like`` is one single-element tensor (then v is 1)."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the "
                               + ("user-provided function returns a single Tensor with a "
                                  "single element." if fn == "vjp" else "input to the "
                                  "user-provided function is a single Tensor with a single "
                                  "element."))
        return (None,) if fn == "vjp" else (like[0].detach() * 0 + 1,)
    _, vs = _tensors("v", v, fn)
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got "
                           f"{len(vs)}.")
    for u, x in zip(vs, like):
        if u.shape != x.shape:
            raise RuntimeError(f"v has invalid size: should be {x.shape} but got {u.shape}.")
    return vs


def _gradient(outs: tuple[Tensor, ...], xs: tuple[Tensor, ...], vs: tuple[Any, ...],
              create_graph: bool, strict: bool, what: str = "output") -> tuple[Tensor, ...]:
    """d(sum of v . output)/d(input) for each input: zeros for an input the outputs do not
    depend on, or (``strict``) torch's error."""
    found = grad(outs, xs, grad_outputs=list(vs), create_graph=create_graph,
                 retain_graph=True, allow_unused=True)
    for j, g in enumerate(found):
        if g is None and strict:
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {j}. This is not allowed in strict mode.")
    return tuple(zeros(x.shape, dtype=x.dtype) if g is None else g
                 for g, x in zip(found, xs))


def _block(out: Tensor, i: int, xs: tuple[Tensor, ...], j: int, create_graph: bool,
           strict: bool) -> Tensor:
    """d(output i)/d(input j), of shape ``out.shape + x.shape``: one gradient per entry
    of the output, stacked."""
    x = xs[j]
    flat = out.reshape(-1)
    rows = []
    for k in range(flat.shape[0]):
        (g,) = grad(flat[k], (x,), retain_graph=True, create_graph=create_graph,
                    allow_unused=True) if out.requires_grad else (None,)
        if g is None:
            if strict:
                raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                   f"of input {j}. This is not allowed in strict mode.")
            g = zeros(x.shape, dtype=x.dtype)
        rows.append(g if create_graph else g.detach())
    if not rows:
        return zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype)
    return stack(rows).reshape(tuple(out.shape) + tuple(x.shape))


def _shaped(items: tuple[Tensor, ...], is_tuple: bool, create_graph: bool) -> Any:
    """Results as torch returns them: detached unless ``create_graph``, a tuple or one."""
    kept = tuple(t if create_graph else t.detach() for t in items)
    return kept if is_tuple else kept[0]
