"""chaingrad/tensor_engine/inplace.py: in-place ops on tensors in a graph are recorded as
torch records them, and give torch's values and gradients; the cases below run the same code
on both libraries (``lib`` is torch or chaingrad)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
from chaingrad import Tensor


def _leaves(lib):
    lib.manual_seed(0)
    a = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
    b = lib.randn(4, dtype=lib.float64, requires_grad=True)
    return a, b


def plus_equals(lib):
    """makemore part 5's Linear: out = x @ w; out += bias."""
    a, b = _leaves(lib)
    out = a * 2
    out += b
    (out**2).sum().backward()
    return out, a, b


def made_before_the_write(lib):
    """y was made from x before x.mul_(b): its gradient goes to x as it was."""
    a, b = _leaves(lib)
    x = a * 3
    y = x * 2
    x.mul_(b)
    (x + y).sum().backward()
    return x, a, b


def index_minus_equals(lib):
    """x[rows, cols] -= 1 (advanced indexing: a copy), then a loss of x."""
    a, b = _leaves(lib)
    x = a * b
    x[range(3), [0, 2, 1]] -= 1
    (x * x).sum().backward()
    return x, a, b


def view_plus_equals(lib):
    """h = x[:, 0]; h += v writes x, through the view."""
    a, b = _leaves(lib)
    x = a * 1.0
    h = x[:, 0]
    h += b[0]
    (x * x).sum().backward()
    return x, a, b


def slice_plus_equals(lib):
    """x[1:, :2] += v, the augmented assignment on a slice."""
    a, b = _leaves(lib)
    x = a * 2
    x[1:, :2] += b[:2] * 4
    (x * x * x).sum().backward()
    return x, a, b


def accumulate_into_a_constant(lib):
    """dC[ix] += g in a loop, as the manual-backprop exercise accumulates dC."""
    a, b = _leaves(lib)
    acc = lib.zeros(5, 4, dtype=lib.float64)
    ix = lib.tensor([1, 3, 1])
    for k in range(3):
        acc[ix[k]] += a[k] * b
    (acc**2).sum().backward()
    return acc, a, b


def setitem_a_slice(lib):
    a, b = _leaves(lib)
    x = a.clone()
    x[1:, 2] = b[:2] * 5
    (x.exp()).sum().backward()
    return x, a, b


def clamp_zero_fill(lib):
    a, b = _leaves(lib)
    x = a * 1.5
    x.clamp_(-0.5, 0.5)
    z = a * 2
    z.zero_()
    f = a * 1.0
    f.fill_(b[1])
    (x.sum() + z.sum() + (f * a).sum()).backward()
    return x + f, a, b


def twice_in_a_row(lib):
    """Two writes: the versions chain, and a node made between them sees the first."""
    a, b = _leaves(lib)
    x = a * 1.0
    x += b
    middle = (x * 2).tanh()
    x *= b
    x[0] = b * 3
    (x.sum() + middle.sum()).backward()
    return x, a, b


def retained_then_written(lib):
    a, b = _leaves(lib)
    h = a * 2
    h.retain_grad()
    h += b
    (h * 3).sum().backward()
    return h.grad, a, b


CASES = [plus_equals, made_before_the_write, index_minus_equals, view_plus_equals,
         slice_plus_equals, accumulate_into_a_constant, setitem_a_slice, clamp_zero_fill,
         twice_in_a_row, retained_then_written]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_gives_torchs_values_and_gradients(case, torch) -> None:
    ours = case(chaingrad)
    theirs = case(torch)
    for mine, its in zip(ours, theirs):
        expected = its.detach().numpy() if mine is ours[0] else its.grad.numpy()
        got = mine.detach().numpy() if mine is ours[0] else mine.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_the_written_tensor_is_the_ops_output_and_the_old_one_is_kept() -> None:
    x = chaingrad.tensor([1.0, 2.0], requires_grad=True) * 3
    before = x._rule
    x += 1
    assert x._op == "+" and x._rule is not before and x.grad_fn.name() == "AddBackward0"
    old = x._prev[0]
    assert old._rule is before and old.tolist() == [3.0, 6.0] and x.tolist() == [4.0, 7.0]


def test_a_rule_that_needs_the_numbers_written_over_still_has_them() -> None:
    """torch refuses this backward (softmax's output was changed in place, and its rule
    reads it); chaingrad kept a copy for the rule, and gives the gradient of the same
    computation done out of place."""
    def loss(in_place: bool):
        a = chaingrad.tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], dtype=chaingrad.float64,
                             requires_grad=True)
        p = a.softmax(1)
        if in_place:
            p[[0, 1], [2, 0]] -= 1
        else:
            p = p - chaingrad.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], dtype=chaingrad.float64)
        (p * p).sum().backward()
        return a.grad.numpy()

    np.testing.assert_allclose(loss(True), loss(False), rtol=1e-14)


def test_a_view_made_by_reshape_cannot_be_written_in_the_graph() -> None:
    x = chaingrad.ones(2, 3, requires_grad=True) * 2
    y = x.reshape(6)
    with pytest.raises(NotImplementedError, match=r"\+=: this tensor shares its numbers with "
                                                  "the tensor it was made from"):
        y += 1


def test_under_no_grad_a_write_is_plain_and_counted(torch) -> None:
    """No graph is recorded; a rule that reads the numbers written over refuses, as
    torch's version counter makes it."""
    for lib in (chaingrad, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        y = w.exp()
        with lib.no_grad():
            y += 1
        assert y.grad_fn is not None and y.grad_fn.name() == "ExpBackward0"
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_a_write_through_a_view_of_a_leaf_that_requires_grad_is_refused_as_torch_refuses():
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0:1] += 1
    assert x.is_leaf and x.tolist() == [1.0, 2.0]  # nothing written, still a leaf


@pytest.mark.parametrize("write", [
    lambda y: y.uniform_(),
    lambda y: y.normal_(),
    lambda y: y.bernoulli_(0.5),
    lambda y: chaingrad.add(Tensor(np.ones(2)), 1.0, out=y),
])
def test_an_in_place_write_not_recorded_in_the_graph_is_refused_there(write):
    """A tensor an op made, written by an op chaingrad does not record: refused (its
    gradient would be wrong), and allowed under no_grad(), as a plain write."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x * 3
    with pytest.raises(NotImplementedError, match="does not record this in-place op"):
        write(y)
    assert y.tolist() == [3.0, 6.0]
    with chaingrad.no_grad():
        write(y)


def test_a_value_is_not_a_tensor_operand_nor_a_value_to_write():
    t = Tensor(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported operand"):
        t * chaingrad.Value(2.0)
    with pytest.raises(TypeError, match="got Value"):
        t[0] = chaingrad.Value(1.0)


def test_zero_fill_and_copy_in_a_graph_write_over_infinities_and_pass_torchs_gradients():
    x = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    v = Tensor(np.array([5.0]), requires_grad=True)
    y = (x * 1).masked_fill(np.array([True, False, True]), -np.inf)
    y.zero_()  # as x * 0 it was nan, and refused
    assert y.tolist() == [0.0, 0.0, 0.0]
    z = x * 2
    z.fill_(v[0])
    (z * x).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0, 5.0] and v.grad.tolist() == [6.0]  # torch's


WRITES = {
    "+=": lambda x, v: x.__iadd__(v), "-=": lambda x, v: x.__isub__(v),
    "*=": lambda x, v: x.__imul__(v), "/=": lambda x, v: x.__itruediv__(v),
    "add_": lambda x, v: x.add_(v), "sub_": lambda x, v: x.sub_(v),
    "mul_": lambda x, v: x.mul_(v),
}
OPERANDS = {
    "tensor": lambda rng, x: Tensor(rng.standard_normal(x.shape).astype(x.dtype)),
    "array": lambda rng, x: rng.standard_normal(x.shape).astype(x.dtype),
    "float": lambda rng, x: -0.1,
    "int": lambda rng, x: 3,
    "zeros (inf and nan)": lambda rng, x: Tensor(np.zeros(x.shape, x.dtype)),
    "itself": lambda rng, x: x,
    "its transpose": lambda rng, x: x.T,
    "a row (broadcast)": lambda rng, x: Tensor(rng.standard_normal(x.shape[1]).astype(x.dtype)),
    "float64 into float32": lambda rng, x: rng.standard_normal(x.shape),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("operand", OPERANDS)
@pytest.mark.parametrize("write", WRITES)
def test_a_plain_write_by_the_ufunc_twin_gives_the_references_numbers(write, operand, dtype):
    """``x += y`` (and ``-=``, ``*=``, ``/=``, ``add_``, ...) outside a graph: the ufunc
    written into x's array (``InPlace._ufunc_in_place``) gives, bit for bit, the numbers of
    the reference, which computes x + y as a Tensor and copies it in, inf and nan included;
    the write is counted either way."""
    results = []
    for only in (True, False):
        chaingrad.use_reference(only)
        try:
            rng = np.random.default_rng(0)
            data = rng.standard_normal((4, 4)).astype(dtype)
            data[0, 0] = 0.0
            x = Tensor(data)
            before = chaingrad.guards.writes[0]
            out = WRITES[write](x, OPERANDS[operand](rng, x))
        finally:
            chaingrad.use_reference(False)
        assert out is x and chaingrad.guards.writes[0] > before
        results.append(x.numpy())
    np.testing.assert_array_equal(results[1], results[0], strict=True)
