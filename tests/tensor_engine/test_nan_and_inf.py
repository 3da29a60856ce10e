"""inf, -inf and nan as torch has them: every op of the table against torch with such
entries in its inputs (values and gradients, no numpy warning), the functions that find and
replace them (``isnan``, ``nan_to_num``, ``nansum``, ...), ``finfo`` and ``iinfo``."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numerics import examples
from tensor_table import TORCH_OPS, Case, TensorOp, upstream

import chaingrad
from chaingrad import Tensor
from chaingrad.autograd import set_detect_anomaly

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e300]


@st.composite
def poisoned(draw, op: TensorOp) -> Case:
    """A case of ``op`` with some entries of its inputs made nan, inf, -inf, 0 or huge."""
    case = draw(op.cases())
    arrays = []
    for a in case.arrays:
        a = a.copy()
        if a.size:
            flat = a.reshape(-1)
            for i in draw(st.lists(st.integers(0, a.size - 1), max_size=3)):
                flat[i] = draw(st.sampled_from(SPECIAL))
        arrays.append(a)
    return Case(tuple(arrays), case.params)


def _run(fn, lib, case: Case, w: np.ndarray) -> tuple[np.ndarray, list]:
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in case.arrays]
    out = fn(*leaves, **case.params)
    (out * lib.tensor(w)).sum().backward()
    grads = [np.zeros_like(a) if t.grad is None else np.asarray(t.grad.detach().numpy())
             for a, t in zip(case.arrays, leaves)]
    return np.asarray(out.detach().numpy()), grads


# torch's own conventions for a derivative at nan, inf or 0, where chaingrad's rule computes
# the formula it states (seen failing here): relu and leaky_relu pass g at a nan, abs takes
# sign(nan) as 0, maximum, minimum and max_pool2d give the gradient to the nan, topk breaks
# ties otherwise, the norms, var and std at 0 or inf, logsumexp at inf, pow at a zero base,
# conv2d's 0 * nan.
GRADIENTS_DIFFER = {"abs", "relu", "leaky_relu", "leaky_relu_0.2", "maximum", "minimum",
                    "maximum_ties", "max_pool2d", "max_pool2d_ties", "topk", "norm", "norm_1",
                    "var", "std", "logsumexp", "pow", "pow_0.5", "conv2d"}
GRADIENTS_DIFFER |= {"rnn_recurrence_relu"}  # relu's, at each step
# the recurrences' rules (backpropagation through time, written out) group their products
# otherwise than autograd through torch's composed steps: at 1e300 one gives inf where the
# other's inf - inf gives nan; finite inputs are the table's tests, to rounding
GRADIENTS_DIFFER |= {"lstm_recurrence", "gru_recurrence", "rnn_recurrence"}
# the 2-norm of an entry beyond sqrt(float max) overflows to inf here, where torch scales
# first and gives the entry (1e300)
VALUES_DIFFER = {"norm"}
# a matrix holding nan, inf or 1e300: which entries of its inverse, determinant or solution
# turn nan, and whether it counts as singular, is each LAPACK build's own (numpy's here,
# torch's MKL or OpenBLAS there); finite matrices are the table's tests
LINALG = {"linalg.inv", "linalg.det", "linalg.solve_vector", "linalg.solve_matrix",
          "linalg.solve_broadcast", "linalg.solve_left_false", "linalg.svdvals", "linalg.svd",
          "linalg.svd_full", "linalg.matrix_norm_svd", "linalg.norm_svd", "linalg.slogdet",
          "linalg.cholesky", "linalg.cholesky_upper", "linalg.qr", "linalg.eigh_L",
          "linalg.eigh_U", "linalg.eigvalsh", "linalg.pinv", "linalg.lstsq",
          "linalg.matrix_power", "linalg.multi_dot", "linalg.solve_triangular", "linalg.cond",
          "linalg.cond_nuc", "linalg.tensorinv", "linalg.tensorsolve", "linalg.matrix_exp",
          "linalg.matrix_exp_squared", "linalg.lu", "linalg.lu_factor", "linalg.lu_solve_left",
          "linalg.lu_solve_left_adjoint", "linalg.lu_solve_right",
          "linalg.lu_solve_right_adjoint"}
VALUES_DIFFER |= LINALG
GRADIENTS_DIFFER |= LINALG
# vander's powers are torch's cumprod, whose backward divides by x: nan at inf where the
# products' rule gives inf
GRADIENTS_DIFFER |= {"linalg.vander"}
# torch's cross kernel fuses a multiply and a subtract (one rounding): at 1e300, a x a is
# the other product's rounding error there (1.9e283), exactly 0 here
VALUES_DIFFER |= {"linalg.cross"}
# torch.linalg's norms: as "norm" above (an entry beyond sqrt(float max) overflows here; the
# derivative of |x| at nan, and of the norm at inf)
LINALG_NORMS = {"linalg.vector_norm", "linalg.matrix_norm", "linalg.norm"}
VALUES_DIFFER |= LINALG_NORMS
GRADIENTS_DIFFER |= LINALG_NORMS
# layer_norm of a row holding 1e300: its variance overflows to inf here (the mean, then
# the squares' mean), so rstd is 0 and the row 0; torch's one-pass (Welford) variance is nan
# there, and so is its row. Rows holding nan or inf: nan, as torch's
# (test_layer_norm_gives_nan_for_a_row_with_nan_or_inf_as_torch).
VALUES_DIFFER |= {"layer_norm"}
GRADIENTS_DIFFER |= {"layer_norm"}
VALUE_OPS = [op for op in TORCH_OPS if op.name not in VALUES_DIFFER]
GRADIENT_OPS = [op for op in TORCH_OPS if op.name not in GRADIENTS_DIFFER
                and op.name != "binary_cross_entropy"]  # nan refused, as by torch


@pytest.mark.parametrize("op", VALUE_OPS, ids=[op.name for op in VALUE_OPS])
@examples(25)
@given(data=st.data())
def test_special_values_give_torchs_numbers(torch, op: TensorOp, data: st.DataObject) -> None:
    """The output as torch's, and neither the op nor its backward pass lets a numpy warning
    through (torch prints none)."""
    case = data.draw(poisoned(op))
    try:
        w = upstream(case, op)
    except RuntimeError as ours:  # binary_cross_entropy's nan: refused, as torch refuses it
        with pytest.raises(RuntimeError) as theirs:
            op.torch_fn(*(torch.tensor(a) for a in case.arrays), **case.params)
        assert str(theirs.value) in str(ours)
        return
    expected, _ = _run(op.torch_fn, torch, case, w)
    with warnings.catch_warnings(), set_detect_anomaly(False):  # torch's: nan flows
        warnings.simplefilter("error")
        out, _ = _run(op.fn, chaingrad, case, w)
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-12, err_msg=op.name)


@pytest.mark.parametrize("op", GRADIENT_OPS, ids=[op.name for op in GRADIENT_OPS])
@examples(25)
@given(data=st.data())
def test_special_values_give_torchs_gradients(torch, op: TensorOp, data: st.DataObject) -> None:
    case = data.draw(poisoned(op))
    w = upstream(case, op)
    with set_detect_anomaly(False):
        _, grads = _run(op.fn, chaingrad, case, w)
    _, expected = _run(op.torch_fn, torch, case, w)
    for a, e in zip(grads, expected):
        np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12, err_msg=op.name)


# ---- finding and replacing them: torch's functions and methods ----

WITH_SPECIALS = st.one_of(st.floats(-1e3, 1e3), st.sampled_from(SPECIAL))
ARRAYS = hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                    elements=WITH_SPECIALS)
FINDERS = ["isnan", "isinf", "isfinite", "isposinf", "isneginf"]


@pytest.mark.parametrize("name", FINDERS)
@examples(25)
@given(array=ARRAYS, dtype=st.sampled_from(["float32", "float64", "int64", "bool"]))
def test_where_the_specials_are_as_torch_finds_them(torch, name, array, dtype) -> None:
    data = np.asarray(np.nan_to_num(array) if dtype in ("int64", "bool") else array)
    with np.errstate(all="ignore"):  # (the test's own cast of 1e300 to an integer)
        data = data.astype(dtype)
    ours, theirs = chaingrad.from_numpy(data), torch.from_numpy(data.copy())
    for found, expected in [(getattr(chaingrad, name)(ours), getattr(torch, name)(theirs)),
                            (getattr(ours, name)(), getattr(theirs, name)())]:
        assert found.dtype == chaingrad.bool and found.shape == tuple(expected.shape)
        np.testing.assert_array_equal(found.numpy(), expected.numpy())


REDUCE = st.tuples(ARRAYS, st.booleans()).flatmap(lambda ak: st.tuples(
    st.just(ak[0]), st.one_of(st.none(), st.integers(0, max(ak[0].ndim - 1, 0))
                              if ak[0].ndim else st.none()), st.just(ak[1])))


@pytest.mark.parametrize("name", ["nansum", "nanmean"])
@examples(25)
@given(case=REDUCE)
def test_nansum_and_nanmean_are_torchs(torch, name, case) -> None:
    array, dim, keepdim = case
    x = Tensor(array, requires_grad=True)
    t = torch.tensor(array, requires_grad=True)
    with set_detect_anomaly(False), warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = getattr(chaingrad, name)(x, dim, keepdim)
        ours.sum().backward()
    theirs = getattr(torch, name)(t, dim, keepdim)
    theirs.sum().backward()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert getattr(x, name)(dim, keepdim).shape == ours.shape


@examples(25)
@given(array=ARRAYS, dtype=st.sampled_from(["float32", "float64"]),
       replace=st.fixed_dictionaries({}, optional={
           "nan": st.floats(-10, 10), "posinf": st.floats(-10, 10),
           "neginf": st.floats(-10, 10)}))
def test_nan_to_num_is_torchs(torch, array, dtype, replace) -> None:
    with np.errstate(over="ignore"):  # float64 entries past float32's range cast to inf
        array = array.astype(dtype)
    x = Tensor(array, requires_grad=True)
    t = torch.tensor(array, requires_grad=True)
    ours, theirs = chaingrad.nan_to_num(x, **replace), torch.nan_to_num(t, **replace)
    ours.backward(np.ones(ours.shape, dtype))  # (a sum might overflow: float32's max twice)
    theirs.backward(torch.ones_like(theirs))
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
    np.testing.assert_array_equal(x.nan_to_num(**replace).detach().numpy(),
                                  ours.detach().numpy())


def test_nanmean_needs_floats_and_integers_pass_through(torch) -> None:
    with pytest.raises(RuntimeError, match="nanmean.*floating point"):
        chaingrad.tensor([1, 2]).nanmean()
    assert chaingrad.tensor([1, 2]).nansum().item() == torch.tensor([1, 2]).nansum().item()
    assert chaingrad.nan_to_num(chaingrad.tensor([3])).tolist() == [3]


# ---- finfo and iinfo ----

FLOATS = ["float16", "float32", "float64"]
INTEGERS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_is_torchs(torch, name) -> None:
    ours, theirs = chaingrad.finfo(getattr(chaingrad, name)), torch.finfo(getattr(torch, name))
    for attribute in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                      "dtype"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert repr(ours) == repr(theirs)
    assert chaingrad.finfo(np.dtype(name)) == ours


@pytest.mark.parametrize("name", INTEGERS)
def test_iinfo_is_torchs(torch, name) -> None:
    ours, theirs = chaingrad.iinfo(getattr(chaingrad, name)), torch.iinfo(getattr(torch, name))
    for attribute in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert repr(ours) == repr(theirs)


def test_finfo_and_iinfo_refuse_the_other_kind(torch) -> None:
    assert repr(chaingrad.finfo()) == repr(torch.finfo())
    with pytest.raises(TypeError, match="finfo: requires a floating point input type"):
        chaingrad.finfo(chaingrad.int64)
    for kind in (chaingrad.float32, chaingrad.bool):
        with pytest.raises(TypeError, match="iinfo: requires an integer input type"):
            chaingrad.iinfo(kind)


ORDERINGS = {
    "argmax": lambda x: x.argmax(-1), "argmin": lambda x: x.argmin(-1),
    "argmax_all": lambda x: x.argmax(), "max_dim": lambda x: x.max(-1).indices,
    "min_dim": lambda x: x.min(-1).indices, "argsort": lambda x: x.argsort(dim=-1, stable=True),
    "sort_descending": lambda x: x.sort(dim=-1, descending=True, stable=True).values,
    "amax": lambda x: x.amax(-1),  # (topk: the table's row; torch breaks its ties its way)
    "comparisons": lambda x: (x > 0) | (x == x),
}


@pytest.mark.parametrize("name", ORDERINGS)
@examples(25)
@given(array=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4),
                        elements=st.sampled_from([*SPECIAL[:3], 1.0, -2.0, 0.5])))
def test_nan_is_ordered_as_torch_orders_it(torch, name, array) -> None:
    """nan propagates in max and min and counts as the largest (argmax picks it, sort puts
    it last, descending first), as in torch."""
    fn = ORDERINGS[name]
    ours, theirs = fn(Tensor(array)), fn(torch.tensor(array))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
