"""Every Tensor op of the table: gradients against central finite differences (float64,
hypothesis-drawn shapes and values; not at ties), outputs and gradients against PyTorch
(where torch has the op), and second derivatives (``create_graph=True``) against PyTorch;
indexing against numpy; then the broadcasting cases by name."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import ATOL, RTOL, examples
from tensor_table import (
    FD_OPS,
    OPS_BY_NAME,
    TORCH_OPS,
    Case,
    TensorOp,
    engine_grads,
    numeric_grads,
    torch_grads,
    upstream,
)

from chaingrad import Tensor, grad

PER_OP = examples(25)
SECOND = examples(10)




def _close(a: np.ndarray, b: np.ndarray, tol: float = 1e-10) -> bool:
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=tol, atol=tol)


def _ids(ops: list[TensorOp]) -> list[str]:
    return [op.name for op in ops]


@pytest.mark.parametrize("op", FD_OPS, ids=_ids(FD_OPS))
@PER_OP
@given(data=st.data())
def test_gradient_matches_finite_differences(op: TensorOp, data: st.DataObject) -> None:
    case = data.draw(op.cases())
    w = upstream(case, op)
    _, analytic = engine_grads(op, case, w)
    numeric = numeric_grads(op, case, w)
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        assert a.shape == case.arrays[i].shape
        assert np.allclose(a, n, atol=ATOL, rtol=RTOL), f"{op.name}, input {i}: {a} vs {n}"


@pytest.mark.parametrize("op", TORCH_OPS, ids=_ids(TORCH_OPS))
@PER_OP
@given(data=st.data())
def test_output_and_gradient_match_torch(torch, op: TensorOp, data: st.DataObject) -> None:
    case = data.draw(op.cases())
    w = upstream(case, op)
    out, grads = engine_grads(op, case, w)
    expected_out, expected_grads = torch_grads(op, case, w)
    assert out.dtype == np.float64
    assert _close(out, expected_out), f"{op.name}: {out} vs {expected_out}"
    for a, e in zip(grads, expected_grads):
        assert _close(a, e), f"{op.name}: {a} vs {e}"


def _second_derivative(fn, arrays, params, w, v, lib):
    """d/dx of sum(v * d/dx sum(w * fn(x))), with chaingrad (lib=None) or torch."""
    if lib is None:
        xs = [Tensor(a, requires_grad=True) for a in arrays]
        gs = grad((fn(*xs, **params) * Tensor(w)).sum(), xs, create_graph=True,
                  allow_unused=True)
        terms = [(g * Tensor(vi)).sum() for g, vi in zip(gs, v)
                 if g is not None and g.requires_grad]
        if not terms:  # the gradient does not depend on x: the second derivative is 0
            return [np.zeros_like(a) for a in arrays]
        hs = grad(sum(terms[1:], terms[0]), xs, allow_unused=True)
        return [np.zeros_like(a) if h is None else h for a, h in zip(arrays, hs)]
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    gs = lib.autograd.grad((fn(*xs, **params) * lib.as_tensor(w)).sum(), xs,
                           create_graph=True, allow_unused=True)
    terms = [(g * lib.as_tensor(vi)).sum() for g, vi in zip(gs, v)
             if g is not None and g.requires_grad]
    if not terms:
        return [np.zeros_like(a) for a in arrays]
    hs = lib.autograd.grad(sum(terms[1:], terms[0]), xs, allow_unused=True)
    return [np.zeros_like(a) if h is None else h.numpy(force=True) for a, h in zip(arrays, hs)]


@pytest.mark.parametrize("op", TORCH_OPS, ids=_ids(TORCH_OPS))
@SECOND
@given(data=st.data())
def test_second_derivative_matches_torch(torch, op: TensorOp, data: st.DataObject) -> None:
    case = data.draw(op.cases())
    w = upstream(case, op)
    rng = np.random.default_rng(1)
    v = [rng.standard_normal(a.shape) for a in case.arrays]
    ours = _second_derivative(op.fn, case.arrays, case.params, w, v, None)
    theirs = _second_derivative(op.torch_fn, case.arrays, case.params, w, v, torch)
    for a, e in zip(ours, theirs):
        assert _close(a, e, 1e-9), f"{op.name}: {a} vs {e}"


@pytest.mark.parametrize("name", ["getitem", "getitem_reversed"])
@PER_OP
@given(data=st.data())
def test_indexing_matches_numpy(name: str, data: st.DataObject) -> None:
    """Outputs of every index case (negative steps too, which torch lacks) as numpy's."""
    case = data.draw(OPS_BY_NAME[name].cases())
    (x,), index = case.arrays, case.params["index"]
    out = Tensor(x, requires_grad=True)[index]
    got = out.detach().numpy()
    assert got.shape == x[index].shape and np.array_equal(got, x[index])


# ---- broadcasting, case by case: scalar, row, column, leading axes, both sides ----

SHAPE_PAIRS = [
    ((3, 4), ()),        # a scalar tensor
    ((3, 4), (4,)),      # a row
    ((3, 4), (3, 1)),    # a column
    ((2, 3, 4), (4,)),   # leading axes
    ((2, 3, 4), (3, 1)),
    ((1, 4), (3, 1)),    # both sides stretch
    ((2, 1, 4), (3, 1)),
]
BINARY = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": lambda x, y: x / y,
    "**": lambda x, y: x**y,
}


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("symbol", BINARY)
@pytest.mark.parametrize("flip", [False, True], ids=["big_left", "big_right"])
def test_broadcast_gradients_sum_back_to_each_shape(shapes, symbol, flip) -> None:
    rng = np.random.default_rng(0)
    a_shape, b_shape = shapes[::-1] if flip else shapes
    arrays = (rng.uniform(0.5, 2.0, a_shape), rng.uniform(0.5, 2.0, b_shape))
    op = TensorOp(symbol, BINARY[symbol], BINARY[symbol], lambda: None)
    case = Case(arrays)
    w = upstream(case, op)
    out, analytic = engine_grads(op, case, w)
    assert out.shape == np.broadcast_shapes(a_shape, b_shape)
    for a, n, x in zip(analytic, numeric_grads(op, case, w), arrays):
        assert a.shape == x.shape
        assert np.allclose(a, n, atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("other", [2.5, np.float64(2.5), np.array(2.5), np.full((3, 1), 2.5)],
                         ids=["float", "numpy_scalar", "0d_array", "column_array"])
@pytest.mark.parametrize("symbol", BINARY)
def test_numbers_and_arrays_work_on_either_side(symbol, other) -> None:
    x = Tensor(np.array([[0.5, 1.0, 2.0]]), requires_grad=True)
    fn = BINARY[symbol]
    for left, right in ((x, other), (other, x)):
        out = fn(left, right)
        assert isinstance(out, Tensor)
        expected = fn(np.asarray(left.detach().numpy() if left is x else left),
                      np.asarray(right.detach().numpy() if right is x else right))
        assert np.allclose(out.detach().numpy(), expected)


def test_repeated_indices_accumulate() -> None:
    x = Tensor(np.arange(4.0), requires_grad=True)
    (x[np.array([1, 1, 1, 3])] * Tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 6.0, 0.0, 4.0]


def test_boolean_mask_and_slice_gradients() -> None:
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x[x.data > 2].sum().backward()
    assert x.grad.tolist() == [[0, 0, 0], [1, 1, 1]]
    x.grad = None
    x[:, ::2].sum().backward()
    assert x.grad.tolist() == [[1, 0, 1], [1, 0, 1]]


def test_max_splits_the_gradient_among_ties_as_torch_amax(torch) -> None:
    """As torch.amax and the full torch.max(); torch.max(x, dim) would give it to one index."""
    data = np.array([[1.0, 5.0, 5.0], [2.0, 2.0, 2.0]])
    x, theirs = Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    x.max(axis=1).sum().backward()
    torch.amax(theirs, 1).sum().backward()
    assert np.allclose(x.grad, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    assert _close(x.grad, theirs.grad.numpy())
    x.grad, theirs.grad = None, None
    x.max().backward()
    theirs.max().backward()
    assert _close(x.grad, [[0, 0.5, 0.5], [0, 0, 0]]) and _close(x.grad, theirs.grad.numpy())


def test_log_softmax_is_stable_for_large_inputs() -> None:
    x = Tensor(np.array([[1000.0, 0.0, -1000.0]]), requires_grad=True)
    out = x.log_softmax()
    assert np.isfinite(out.detach().numpy()).all() and out.detach().numpy()[0, 0] == 0.0
    out.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    assert np.allclose(x.softmax().detach().numpy().sum(), 1.0)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmaxes_at_plus_minus_1000_match_torch(torch, name: str, axis: int) -> None:
    """exp(1000) overflows float64: only a shifted computation gets these right."""
    x = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -999.0, -1000.0]])
    w = np.random.default_rng(2).standard_normal(x.shape)
    ours = Tensor(x, requires_grad=True)
    out = getattr(ours, name)(axis)
    (out * Tensor(w)).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    expected = getattr(theirs, name)(axis)
    (expected * torch.as_tensor(w)).sum().backward()
    assert _close(out.detach().numpy(), expected.detach().numpy())
    assert _close(ours.grad, theirs.grad.numpy())
