"""Gradients as functions on Tensors: ``grad`` (several outputs, ``grad_outputs``, grad of
grad), ``primitive`` from a forward/backward pair on arrays, and ``gradcheck``."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import chaingrad
from chaingrad import AnomalyError, Tensor, grad, primitive

# ---- grad and primitive ----


def test_grad_leaves_dot_grad_alone_and_adds_several_outputs() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (g,) = grad([(x * x).sum(), (3 * x).sum()], [x])
    assert g.tolist() == [5.0, 7.0] and x.grad is None


def test_grad_with_grad_outputs_and_unused_inputs() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    unused = Tensor(np.array([1.0]), requires_grad=True)
    gx, gu = grad(x * x, [x, unused], grad_outputs=np.array([1.0, 0.5]), allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gu is None
    with pytest.raises(ValueError, match="grad: input 1 .* is not used"):
        grad((x * x).sum(), [x, unused])
    with pytest.raises(RuntimeError, match=r"grad: output 0: grad can be implicitly created only "
                       r"for scalar outputs \(the output has shape \(2,\)"):
        grad(x * x, [x])
    with pytest.raises(ValueError, match="does not require a gradient"):
        grad((x * x).sum(), [Tensor([1.0])])
    with pytest.raises(TypeError, match="grad: inputs must be Values or Tensors, got float"):
        grad((x * x).sum(), [1.0])


def test_grad_with_one_grad_output_per_output() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    constant = Tensor(np.array([5.0]))
    (g,) = grad([x * x, x * 3, constant], [x],
                grad_outputs=[np.array([1.0, 1.0]), np.array([0.0, 1.0]), np.array([1.0])])
    assert g.tolist() == [2.0, 7.0]
    with pytest.raises(ValueError, match="grad: needs one grad_output per output"):
        grad([x * x, x * 3], [x], grad_outputs=[np.ones(2)])


def test_grad_of_grad() -> None:
    x = Tensor(np.array([0.5, -1.0]), requires_grad=True)
    (g,) = grad(x.tanh().sum(), [x], create_graph=True)
    (h,) = grad(g.sum(), [x])
    t = np.tanh(x.detach().numpy())
    assert np.allclose(g.detach().numpy(), 1 - t**2) and np.allclose(h, -2 * t * (1 - t**2))


def test_primitive_on_tensors() -> None:
    cube = primitive(lambda x: x**3, lambda xs, out, g: (3 * xs[0] ** 2 * g,), name="cube")
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = cube(x)
    assert y._op == "cube" and y.tolist() == [1.0, 8.0]
    (g,) = grad(y.sum(), [x], create_graph=True)
    (h,) = grad(g.sum(), [x])
    assert g.tolist() == [3.0, 12.0] and h.tolist() == [6.0, 12.0]


def test_primitive_gradients_are_summed_back_to_broadcast_inputs() -> None:
    mul = primitive(np.multiply, lambda xs, out, g: (xs[1] * g, xs[0] * g), name="mul")
    a = Tensor(np.ones((2, 3)), requires_grad=True)
    b = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    mul(a, b).sum().backward()
    assert b.grad.tolist() == [2.0, 2.0, 2.0] and a.grad.shape == (2, 3)


def test_primitive_errors() -> None:
    bad = primitive(lambda x: x, lambda xs, out, g: (g, g), name="bad")
    with pytest.raises(ValueError, match="bad: backward returned 2 gradient"):
        bad(Tensor([1.0], requires_grad=True)).sum().backward()
    inv = primitive(lambda x: 1 / x, lambda xs, out, g: (-g / xs[0] ** 2,), name="inv")
    x = Tensor([0.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's divide warning: not shown, as torch's
        y = inv(x)
    assert y.tolist() == [math.inf, 0.5]  # as numpy (and torch) compute 1 / 0
    with pytest.raises(AnomalyError, match=r"inv: its output is inf at \[0\], where input 0 is "
                       r"0.0, though its inputs \(shape \(2,\)\) are finite; the loss is inf"):
        y.sum().backward()
    with pytest.raises(TypeError, match="inv: argument 0 must be a Value, a Tensor, .* got str"):
        inv("a")


def test_shared_tools_see_tensor_graphs() -> None:
    x = Tensor(np.ones(2), requires_grad=True)
    y = (x * 2 + 1).sum()
    order = chaingrad.topological_order(y)
    assert order[-1] is y and x in order and [n._op for n in order if n._op] == [
        "*", "+", "sum"]


# ---- gradcheck on Tensors ----


def test_gradcheck_on_tensors_passes_a_right_rule_and_names_a_wrong_one() -> None:
    x, w = np.linspace(-1, 1, 6).reshape(2, 3), np.full((3, 2), 0.3)
    assert chaingrad.gradcheck(lambda a, b: (a @ b).tanh(), [x, Tensor(w)])
    wrong = chaingrad.primitive(lambda a: a**2, lambda xs, out, g: (3 * xs[0] * g,), "sq")
    with pytest.raises(chaingrad.GradcheckError,
                       match=r"input 0 at index \(0, 0\) \(x = -1.0\): analytic .* != numeric"):
        chaingrad.gradcheck(lambda a: wrong(a), [x])
    with pytest.raises(TypeError, match="gradcheck: fn must return a Tensor, got float"):
        chaingrad.gradcheck(lambda a: 1.0, [x])
