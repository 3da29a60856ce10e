"""The backward driver for Tensor graphs, and the one place broadcasting is undone.

It is ``graph.run_backward`` for nodes whose ``data`` and ``grad`` are numpy arrays: the
same topological order (``graph.topological_order``), the same derivative rules
``vjp(xs, out, g) -> one gradient per input``, the same "a second ``backward()`` adds
exactly once more". What arrays add:

- ``.grad`` starts as None (not 0.0): an input's first gradient is stored as it is, later
  ones are added.
- An op whose inputs broadcast returns each gradient in the *output's* shape; the driver
  sums it back to the input's shape with ``sum_to_shape``. Rules never do this themselves.
- An input with ``requires_grad=False`` (data, constants) gets no gradient, and a rule may
  return None for it (matmul does, to skip a product nobody needs).

This module knows nodes only by their attributes, so it imports no Tensor class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import ClosureRule, do_nothing, enable_grad, topological_order
from ..errors import DomainError
from .arrays import all_finite, first_non_finite


def sum_to_shape(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a gradient that was broadcast from ``shape`` back down to ``shape``.

    Broadcasting prepends axes and stretches axes of size 1; the gradient of a stretched
    input is the sum over the stretched axes. ``g`` may be an ndarray or a Tensor (for
    ``create_graph=True``): only ``.shape``, ``.sum`` and ``.reshape`` are used.

    Example:
        >>> import numpy as np
        >>> sum_to_shape(np.ones((4, 2, 3)), (2, 1)).tolist()
        [[12.0], [12.0]]
    """
    if g.shape == shape:
        return g
    lead = len(g.shape) - len(shape)
    if lead < 0:
        raise ValueError(f"sum_to_shape: a gradient of shape {g.shape} cannot belong to an "
                         f"input of shape {shape}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if any(n != 1 and g.shape[lead + i] != n for i, n in enumerate(shape)):
        raise ValueError(f"sum_to_shape: a gradient of shape {g.shape} cannot belong to an "
                         f"input of shape {shape}")
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


def backward_closure(out: Any) -> Callable[[], None]:
    """``out``'s backward step as a closure (``Tensor._backward``), to call by hand as in
    micrograd's lecture: it reads ``out.grad`` and adds each input's share into its
    ``.grad`` (summed back to the input's shape).

    micrograd's ``.grad`` starts at 0; a Tensor's starts as None (nothing has arrived yet).
    Calling the closure before ``out.grad`` is set is a RuntimeError naming the op: treating
    None as zero would silently do nothing, and a by-hand walk that forgot to seed the root
    would end with no gradients and no hint why.

    Example:
        >>> from chaingrad import Tensor
        >>> x = Tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> y.grad = np.ones_like(y.data)  # the seed: d(y)/d(y)
        >>> y._backward()
        >>> x.grad.tolist()
        [3.0, 3.0]
    """
    rule = out._vjp
    if rule is None:
        return do_nothing
    if type(rule) is ClosureRule:
        return rule.backward

    def _backward() -> None:
        if out.grad is None:
            raise RuntimeError(
                f"{out._op or 'backward'}: _backward() needs the gradient that reached this "
                "node, but its .grad is None; set it first (for the output: "
                "out.grad = np.ones_like(out.data)), or call out.backward()")
        grads = rule(tuple(x.data for x in out._prev), out.data, out.grad)
        for x, g in zip(out._prev, grads):
            if g is not None and x.requires_grad:
                g = sum_to_shape(g, x.shape)
                x.grad = g if x.grad is None else x.grad + g

    return _backward


def run_backward(
    root: Any, seed: Any, create_graph: bool, accumulate: bool = True, trace: list | None = None
) -> dict:
    """Back-propagate ``seed`` from ``root`` to every node that requires a gradient.

    Every node of the graph starts the pass at None; with ``accumulate`` the gradients each
    node had before are added back at the end, so calling ``backward()`` twice adds exactly
    twice. Without it, the old gradients are restored and this pass's are returned.

    Args:
        root: The node to differentiate.
        seed: d(root)/d(root): an array of root's shape (a Tensor with ``create_graph``).
        create_graph: Run the rules on the nodes themselves, so that the gradients are
            Tensors with a graph of their own (for higher-order derivatives).
        accumulate: Add this pass into ``.grad`` (True) or return it (False).
        trace: A list to append ``(node, upstream_grad, [(input, before, after), ...])``
            to, per node whose rule runs (the step-by-step view, as in ``graph``).

    Returns:
        ``{id(node): gradient of this pass}`` when ``accumulate`` is False, else ``{}``.
    """
    nodes = [node for node in topological_order(root) if node.requires_grad]
    before = [node.grad for node in nodes]
    for node in nodes:
        node.grad = None
    root.grad = seed
    try:
        with np.errstate(all="ignore"):  # nan and inf are checked for, and raise DomainError
            if create_graph:
                with enable_grad():
                    _propagate(nodes, graph_mode=True, trace=trace, check=True)
            else:
                _propagate(nodes, graph_mode=False, trace=trace, check=trace is not None)
                if not all(all_finite(n.grad) for n in nodes if n._vjp is None and
                           n.grad is not None):
                    _name_the_non_finite_step(nodes, root, seed)
    except BaseException:
        for node, old in zip(nodes, before):  # a failed pass leaves every .grad as it was
            node.grad = old
        raise
    if not accumulate:
        found = {id(node): node.grad for node in nodes}
        for node, old in zip(nodes, before):
            node.grad = old
        return found
    for node, old in zip(nodes, before):
        if old is None or (type(old) is float and old == 0.0):
            continue
        node.grad = old if node.grad is None else old + node.grad
    if not create_graph:
        _own_leaf_grads(nodes)
    return {}


def _name_the_non_finite_step(nodes: list[Any], root: Any, seed: Any) -> None:
    """A leaf got a nan or inf gradient: walk again, checking every step, to name the op.

    Checking every gradient of every pass would cost ~10% of a training step, and is not
    needed: a nan or inf never disappears on its way to the leaves (0 * inf is nan), so
    the pass checks only the leaves, and comes here when one of them is bad.
    """
    for node in nodes:
        node.grad = None
    root.grad = seed
    _propagate(nodes, graph_mode=False, trace=None, check=True)
    leaf = next(n for n in nodes if n._vjp is None and n.grad is not None
                and not all_finite(n.grad))
    raise DomainError(f"backward: the gradient of a leaf of shape {leaf.data.shape} is not "
                      "finite")  # only if a hand-written _backward closure made it


def _propagate(nodes: list[Any], graph_mode: bool, trace: list | None, check: bool) -> None:
    """The loop: each node hands ``rule(inputs, out, out.grad)`` to its inputs.

    In graph mode the rule gets the nodes themselves and builds a graph; otherwise their
    arrays. Gradients are never added in place: a rule may return the very array it was
    given (``+`` does), so one array can be the gradient of several nodes. With ``check``,
    each gradient is checked for nan and inf as it is made.
    """
    for node in reversed(nodes):
        rule, g = node._vjp, node.grad
        if rule is None or g is None:
            continue
        prev = node._prev
        if type(rule) is ClosureRule:
            if graph_mode:
                raise TypeError(
                    f"backward(create_graph=True): node {node._op!r} has a hand-written "
                    "_backward closure, which works on arrays and cannot be differentiated "
                    "again; build it with chaingrad.primitive instead"
                )
            for child in prev:  # a closure written for arrays adds into arrays
                if child.grad is None:
                    child.grad = np.zeros_like(child.data)
            rule.backward()
            continue
        if graph_mode:
            grads = rule(prev, node, g)
        else:
            grads = rule(tuple([child.data for child in prev]), node.data, g)
        if len(grads) != len(prev):
            raise ValueError(f"{node._op}: its rule returned {len(grads)} gradient(s) for "
                             f"{len(prev)} input(s)")
        updates = []
        for child, cg in zip(prev, grads):
            if cg is None or not child.requires_grad:
                continue
            if type(cg) is not np.ndarray and not hasattr(cg, "_vjp"):
                cg = np.asarray(cg)  # numpy turns 0-d results into scalars: undo that
            shape = child.data.shape
            if cg.shape != shape:
                try:
                    cg = sum_to_shape(cg, shape)
                except ValueError as exc:
                    raise ValueError(f"{node._op}: {exc}") from None
            if check:
                array = cg if type(cg) is np.ndarray else cg.data
                if not all_finite(array):
                    raise non_finite_gradient(node, child, array)
            old = child.grad
            if old is None:
                child.grad = cg
            else:
                total = old + cg
                child.grad = total if graph_mode else np.asarray(total)  # 0-d stays an array
            if trace is not None:
                updates.append((child, old, child.grad))
        if trace is not None:
            trace.append((node, g, updates))


def _own_leaf_grads(nodes: list[Any]) -> None:
    """Give every leaf a ``.grad`` of its own: writable, of its dtype, shared with no leaf.

    The loop passes arrays along without copying (``+`` hands the same array to both
    inputs; ``reshape`` and ``.T`` hand views). Interior gradients may stay shared; a
    parameter's gradient must not, since optimizers and users may change it in place.
    """
    seen: set[int] = set()
    for node in nodes:
        g = node.grad
        if node._vjp is not None or g is None or type(g) is float:
            continue
        if (type(g) is not np.ndarray or g.base is not None or id(g) in seen
                or g.dtype != node.data.dtype or not g.flags.writeable):
            g = node.grad = np.array(g, dtype=node.data.dtype)
        seen.add(id(g))


def non_finite_gradient(node: Any, child: Any, g: np.ndarray) -> DomainError:
    """The error for a rule that produced nan or inf: names the op, the input and where."""
    index = first_non_finite(np.asarray(g))
    where = f"index {index}, where the input is {child.data[index].item()!r}" if index else ""
    return DomainError(
        f"{node._op or 'backward'}: the gradient is {np.asarray(g)[index].item()} at "
        f"{where or 'the input ' + repr(child.data.item())} (input of shape "
        f"{child.data.shape}); the derivative is unbounded there or overflows"
    )
