"""The array forwards that are more than one numpy call (``tensor_engine/kernels.py``) and
their fast twins: torch's numbers, and the twins equal to the readable forms."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples

import chaingrad
from chaingrad import Tensor, fast_kernels
from chaingrad import rules as shared
from chaingrad.tensor_engine import kernels, rules

DTYPES = [np.float32, np.float64]


def _ulps(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The largest distance between ours and theirs, in units in the last place of theirs."""
    spacing = np.spacing(np.abs(theirs).astype(ours.dtype)).astype(np.float64)
    return float(np.max(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)) / spacing))


def _points(dtype: type, low: float = -12.0, high: float = 12.0) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([np.linspace(low, high, 20_001),
                           rng.standard_normal(5_000) * 4,
                           [0.0, -0.0, 1e-30, -1e-30, 1e-5]]).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [2, 3, -1, -0.5, 2.0, 3.0])  # -2: rules.pow_n_on_arrays
def test_small_integer_powers_are_torchs_bit_for_bit(torch, dtype, n):
    x = _points(dtype)
    x = np.abs(x) + dtype(0.01) if n == -0.5 else x[np.abs(x) > 1e-10] if n < 0 else x
    ours = (Tensor(x) ** n).numpy()
    theirs = (torch.from_numpy(x) ** n).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_integer_tensors_keep_their_powers_exact(torch, n):
    x = np.arange(-20, 20, dtype=np.int64)
    ours, theirs = (chaingrad.from_numpy(x) ** n).numpy(), (torch.from_numpy(x) ** n).numpy()
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype, ulps", [(np.float32, 4), (np.float64, 2)])
def test_sigmoid_is_torchs_within_a_few_ulps_and_saturates_quietly(torch, dtype, ulps):
    x = _points(dtype, -120, 120)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning would be an error here
        ours = chaingrad.sigmoid(Tensor(x)).numpy()
    theirs = torch.sigmoid(torch.from_numpy(x)).numpy()
    assert ours.dtype == theirs.dtype
    assert _ulps(ours, theirs) <= ulps
    np.testing.assert_array_equal(ours[x < (-110 if dtype == np.float32 else -750)], 0.0)
    np.testing.assert_array_equal(ours[x > 40], 1.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_erf_is_within_2_ulps_of_math_erf_and_of_torch(torch, dtype):
    """float32: numpy polynomials (``fast_kernels.erf_float32``); float64: SciPy's erf.
    (2 ulps: each of them, glibc's and torch's erf is about an ulp from the exact value.)"""
    x = _points(dtype, -6, 6)
    ours = chaingrad.erf(Tensor(x)).numpy()
    exact = np.array([math.erf(float(v)) for v in x])
    assert ours.dtype == dtype
    assert _ulps(ours, exact.astype(dtype)) <= 2
    assert _ulps(ours, torch.erf(torch.from_numpy(x)).numpy()) <= 2


def test_the_float32_erf_twin_takes_inf_nan_and_signed_zeros_as_math_erf():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -1e-45, 3.9, 4.0, 1e30],
                 dtype=np.float32)
    ours = fast_kernels.erf_float32(x)
    with np.errstate(invalid="ignore"):
        expected = np.array([math.erf(float(v)) for v in x], dtype=np.float32)
    np.testing.assert_array_equal(ours, expected)  # nan where nan, -0.0 for -0.0
    assert np.array_equal(np.signbit(ours), np.signbit(expected))


def test_erf_under_the_reference_is_math_erf_entry_by_entry():
    x = _points(np.float32, -6, 6)[::7]
    chaingrad.use_reference()
    try:
        ours = shared.erf_on_arrays(x)
    finally:
        chaingrad.use_reference(False)
    np.testing.assert_array_equal(ours, np.array([math.erf(float(v)) for v in x],
                                                 dtype=np.float32))


def test_erf_without_scipy_is_math_erf_entry_by_entry(monkeypatch):
    monkeypatch.setattr(fast_kernels, "scipy_erf", lambda: None)
    x = _points(np.float64, -6, 6)[::7]
    np.testing.assert_array_equal(shared.erf_on_arrays(x), [math.erf(float(v)) for v in x])


@pytest.mark.parametrize("shape, index_shape, low", [
    ((65, 192), (512,), 0), ((27, 10), (32, 3), 0), ((10,), (40,), -10), ((5, 2, 3), (7,), -5),
    ((512, 8), (512,), 0)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_scatter_twin_is_the_reference_bit_for_bit(shape, index_shape, low, dtype,
                                                      monkeypatch):
    monkeypatch.setattr(kernels, "SCATTERED_ENTRIES", 0)  # the twin at every size
    rng = np.random.default_rng(2)
    index = rng.integers(low, shape[0], index_shape)
    g = rng.standard_normal(index_shape + shape[1:]).astype(dtype)
    ours = kernels.scatter_array_fast(g, index, shape)
    reference = kernels.scatter_array_reference(g, index, shape)
    assert ours.shape == reference.shape and ours.dtype == reference.dtype
    np.testing.assert_array_equal(ours, reference)


def test_an_embeddings_gradient_takes_the_scatter_twin_unless_under_the_reference(monkeypatch):
    calls = []
    monkeypatch.setattr(kernels, "scatter_array_fast",
                        lambda *args: calls.append(args) or kernels.scatter_array_reference(*args))
    table = Tensor(np.ones((5, 3), dtype=np.float32), requires_grad=True)
    table[np.array([0, 2, 2])].sum().backward()
    assert len(calls) == 1
    chaingrad.use_reference()
    try:
        table.grad = None
        table[np.array([0, 2, 2])].sum().backward()
    finally:
        chaingrad.use_reference(False)
    assert len(calls) == 1 and table.grad.tolist()[2] == [2.0, 2.0, 2.0]


def test_a_small_scatter_is_numpys_add_at(monkeypatch):
    """Below SCATTERED_ENTRIES the twin's sorts cost more than they save: the reference."""
    calls = []
    monkeypatch.setattr(kernels, "scatter_array_reference",
                        lambda *args: calls.append(args) or np.zeros(args[2], args[0].dtype))
    index = np.arange(kernels.SCATTERED_ENTRIES // 4) % 7
    kernels.scatter_array_fast(np.ones((index.size, 3), np.float32), index, (7, 3))
    assert len(calls) == 1
    kernels.scatter_array_fast(np.ones((index.size, 4), np.float32), index, (7, 4))
    assert len(calls) == 1  # 4 * SCATTERED_ENTRIES // 4 entries: the twin


@pytest.mark.parametrize("slope", [0.01, 0.2, 1.0, 1.5, -0.3])
def test_leaky_relu_is_torchs_bit_for_bit(torch, slope):
    x = _points(np.float32, -50, 50)
    np.testing.assert_array_equal(
        chaingrad.nn.functional.leaky_relu(Tensor(x), slope).numpy(),
        torch.nn.functional.leaky_relu(torch.from_numpy(x), slope).numpy())


@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 5.0), (0.5, 20.0)])
def test_softplus_is_torchs_within_3_ulps_and_quiet(torch, beta, threshold):
    x = _points(np.float32, -40, 200)  # (below, results are subnormal: ulps mean little)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = chaingrad.nn.functional.softplus(Tensor(x), beta, threshold).numpy()
    theirs = torch.nn.functional.softplus(torch.from_numpy(x), beta, threshold).numpy()
    assert _ulps(ours, theirs) <= 3


@pytest.mark.parametrize("dtype", DTYPES)
def test_leaky_relus_rule_keeps_the_gradients_dtype(dtype):
    """A float64 temporary would double the rule's passes over memory for a float32 g."""
    from chaingrad.rules import LEAKY_RELU

    x = _points(dtype, -3, 3)
    g = np.ones_like(x)
    (grad,) = LEAKY_RELU.vjp((x,), shared.leaky_relu_on_arrays(x, 0.01), g, 0.01)
    assert grad.dtype == dtype
    np.testing.assert_array_equal(grad, np.where(x > 0, 1.0, dtype(0.01)).astype(dtype))


def test_a_square_root_as_a_power_is_sqrt_bit_for_bit():
    """``x ** 0.5`` is ``sqrt(x)``, as torch computes it (torch's own sqrt and numpy's
    differ by an ulp at about one entry in 150: ``x ** 0.5`` follows each library's sqrt)."""
    x = np.abs(_points(np.float32)) + np.float32(0.01)
    np.testing.assert_array_equal((Tensor(x) ** 0.5).numpy(), Tensor(x).sqrt().numpy())


def _rule_both_ways(prim, x, g, *params):
    """A rule's gradient on arrays, with its fast twin and under ``use_reference()``."""
    with np.errstate(all="ignore"):
        (fast,) = prim.vjp((x,), None, g, *params)
        chaingrad.use_reference()
        try:
            (reference,) = prim.vjp((x,), None, g, *params)
        finally:
            chaingrad.use_reference(False)
    assert fast.dtype == reference.dtype == x.dtype
    return fast, reference


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [2, 3, -1, 0.5, -0.5, 1.5, 4, -3])
def test_the_power_rule_twin_is_the_rule_within_an_ulp_of_the_power(dtype, n):
    """x ** (n - 1) as the forward computes it (``pow_n_on_arrays``) where numpy's ``**``
    differs (n = 0.5: 1 / sqrt(x); n = 4: x * x * x, rounded twice): within 3 ulps of the
    gradient (measured: 2.0 and 3.0); identical where the two powers agree."""
    x = np.abs(_points(dtype, -4, 4)) + dtype(0.01)
    g = np.random.default_rng(6).standard_normal(x.shape).astype(dtype)
    fast, reference = _rule_both_ways(shared.POW_N, x, g, n)
    if n in (0.5, 4):
        assert _ulps(fast, reference) <= 3
    else:
        np.testing.assert_array_equal(fast, reference)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("slope", [0.01, 0.2, 1.0, 0.0])
def test_the_leaky_relu_rule_twin_is_the_rule_and_torchs_at_nan(torch, dtype, slope):
    x = _points(dtype, -3, 3)
    g = np.random.default_rng(7).standard_normal(x.shape).astype(dtype)
    fast, reference = _rule_both_ways(shared.LEAKY_RELU, x, g, slope)
    np.testing.assert_array_equal(fast, reference)
    x = np.array([np.nan, 1.0, -1.0], dtype=dtype)
    t = torch.from_numpy(x).requires_grad_()
    torch.nn.functional.leaky_relu(t, slope).backward(torch.ones(3, dtype=t.dtype))
    fast, _ = _rule_both_ways(shared.LEAKY_RELU, x, np.ones_like(x), slope)
    np.testing.assert_array_equal(fast, t.grad.numpy())  # the rule gives 0 at nan


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 5.0), (0.5, 20.0)])
def test_the_softplus_rule_twin_is_the_rule(dtype, beta, threshold):
    x = np.concatenate([_points(dtype, -120, 120), np.array([np.inf, -np.inf, np.nan], dtype)])
    g = np.random.default_rng(8).standard_normal(x.shape).astype(dtype)
    fast, reference = _rule_both_ways(shared.SOFTPLUS, x, g, beta, threshold)
    np.testing.assert_array_equal(fast, reference)


@pytest.mark.parametrize("twin, op", [("pow_n_grad_fast", lambda x: x**3),
                                      ("leaky_relu_grad_fast", lambda x: x.leaky_relu(0.2)),
                                      ("softplus_grad_fast", lambda x: x.softplus())])
def test_the_rules_take_their_twins_on_arrays_only_unless_under_the_reference(monkeypatch,
                                                                              twin, op):
    calls = []
    monkeypatch.setattr(shared, twin, lambda *args: calls.append(1) or args[1])
    x = Tensor(np.array([0.5, -1.0]), requires_grad=True)
    op(x).sum().backward()
    op(x).sum().backward(create_graph=True)  # the rule on Tensors: the rule itself
    chaingrad.use_reference()
    try:
        op(x).sum().backward()
    finally:
        chaingrad.use_reference(False)
    assert calls == [1]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(512, 192), (3, 5, 40), (7, 16), (2, 3)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_softmax_twins_are_the_references_within_rounding(name, shape, dtype):
    x = (np.random.default_rng(3).standard_normal(shape) * 5).astype(dtype)
    x[..., 1] = -np.inf  # a masked entry, as attention's
    with np.errstate(all="ignore"):
        ours = getattr(kernels, f"{name}_fast")(x, x.ndim - 1)
        reference = getattr(kernels, f"{name}_reference")(x, x.ndim - 1)
    assert ours.dtype == reference.dtype and ours.shape == reference.shape
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(reference))
    finite = np.isfinite(reference)
    np.testing.assert_allclose(ours[finite], reference[finite],
                               rtol=8 * np.finfo(dtype).eps, atol=8 * np.finfo(dtype).eps)


@pytest.mark.parametrize("shape", [(512, 192), (3, 4, 64), (1, 16), (5, 17)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_row_maxima_are_numpys_maxima_bit_for_bit(shape, dtype):
    """``row_maxima`` (the softmax twins' shift) against ``x.max(axis=-1, keepdims=True)``,
    a row with nan, one all -inf and one with +inf among them."""
    x = np.random.default_rng(7).standard_normal(shape).astype(dtype)
    rows = x.reshape(-1, shape[-1])
    rows[0, 3], rows[-1, :] = np.nan, -np.inf
    if len(rows) > 2:
        rows[1, 0] = np.inf
    ours, theirs = kernels.row_maxima(x), x.max(axis=-1, keepdims=True)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def test_softmax_runs_its_twin_unless_under_the_reference(monkeypatch):
    calls = []
    monkeypatch.setattr(kernels, "softmax_fast",
                        lambda *args: calls.append(args) or kernels.softmax_reference(*args))
    x = Tensor(np.zeros((2, 32), dtype=np.float32))
    x.softmax(-1)
    chaingrad.use_reference()
    try:
        assert x.softmax(-1).tolist()[0][0] == 1 / 32
    finally:
        chaingrad.use_reference(False)
    assert len(calls) == 1


@pytest.mark.parametrize("name", ["SOFTMAX", "LOG_SOFTMAX"])
@pytest.mark.parametrize("shape", [(512, 192), (3, 5, 40), (7, 16), (2, 3), (4, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_softmax_rule_twins_are_the_rules_within_rounding(name, shape, dtype):
    """``softmax_grad_fast`` and ``log_softmax_grad_fast`` (rows summed by einsum) against
    their rules under ``chaingrad.use_reference()``, at a masked (-inf) entry too."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    if shape[-1] > 1:
        x[..., 0] = -np.inf
    g = rng.standard_normal(shape).astype(dtype)
    rule = getattr(rules, name)
    with np.errstate(all="ignore"):
        out = getattr(kernels, f"{name.lower()}_reference")(x, x.ndim - 1)
        (ours,) = rule.vjp((x,), out, g, x.ndim - 1)
        chaingrad.use_reference()
        try:
            (theirs,) = rule.vjp((x,), out, g, x.ndim - 1)
        finally:
            chaingrad.use_reference(False)
    assert ours.dtype == theirs.dtype == dtype and ours.shape == theirs.shape
    assert ours.flags.c_contiguous
    scale = np.abs(g).sum(axis=-1, keepdims=True) + 1  # each row's sum rounds within it
    assert (np.abs(ours - theirs) <= 4 * np.finfo(dtype).eps * scale).all()


def test_the_softmax_rules_run_their_twins_on_rows_only_unless_under_the_reference(monkeypatch):
    calls = []
    for name in ("softmax_grad_fast", "log_softmax_grad_fast"):
        twin = getattr(rules, name)
        monkeypatch.setattr(rules, name, lambda *a, twin=twin: calls.append(a) or twin(*a))
    x = Tensor(np.random.default_rng(5).standard_normal((3, 8)), requires_grad=True)
    for op in (x.softmax, x.log_softmax):
        op(-1).backward(Tensor(np.ones((3, 8))))  # the last axis: the twin
        op(0).backward(Tensor(np.ones((3, 8))))  # another: the rule
    chaingrad.use_reference()
    try:
        x.softmax(-1).backward(Tensor(np.ones((3, 8))))
    finally:
        chaingrad.use_reference(False)
    assert len(calls) == 2


# ---- the conv, matmul and max-pool twins against their readable references ----


TWIN_CASES = [  # (N, C, H, W), (O, kh, kw), stride, padding: both layouts (SHORT_ROW),
    # and for wide outputs both ways of adding the input gradient's shares back
    ((3, 2, 5, 6), (4, 3, 3), (1, 1), (1, 1)),
    ((2, 3, 8, 7), (2, 2, 3), (2, 3), (0, 2)),
    ((2, 2, 9, 16), (3, 3, 3), (1, 1), (1, 1)),  # rows end to end
    ((1, 3, 11, 21), (2, 5, 4), (2, 1), (2, 0)),  # rows end to end, two rows apart
    ((2, 1, 6, 20), (3, 1, 1), (1, 2), (0, 0)),  # strided adds (stride 2 across)
    ((2, 1, 5, 12), (4, 2, 2), (1, 1), (0, 1)),  # strided adds (fewer shares than g)
]


@pytest.mark.parametrize(("x_shape", "w_shape", "stride", "padding"), TWIN_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv_fast_twins_match_their_references(x_shape, w_shape, stride, padding,
                                                dtype) -> None:
    """Equal within float rounding (the sums run in another order, so not bit for bit):
    1e-12 relative in float64, a few float32 epsilons in float32."""
    rng = np.random.default_rng(6)
    o, kh, kw = w_shape
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal((o, x_shape[1], kh, kw)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    out = kernels.conv2d_fast(x, w, stride, padding, b)
    g = rng.standard_normal(out.shape).astype(dtype)
    pairs = [
        (out, kernels.conv2d_reference(x, w, stride, padding, b)),
        (kernels.conv2d_input_grad_fast(g, w, x_shape[2:], stride, padding),
         kernels.conv2d_input_grad_reference(g, w, x_shape[2:], stride, padding)),
        (kernels.conv2d_weight_grad_fast(x, g, (kh, kw), stride, padding),
         kernels.conv2d_weight_grad_reference(x, g, (kh, kw), stride, padding)),
    ]
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for fast, reference in pairs:
        assert fast.dtype == reference.dtype == dtype and fast.shape == reference.shape
        assert fast.flags.c_contiguous
        scale = np.abs(reference).max()
        np.testing.assert_allclose(fast, reference, rtol=tol, atol=tol * scale)


def test_conv_fast_twins_cover_both_layouts() -> None:
    widths = {kernels.conv_output_size(x[2:], w[1:], s, p)[1] for x, w, s, p in TWIN_CASES}
    assert min(widths) < kernels.SHORT_ROW <= max(widths)


@examples(60)
@given(st.integers(1, 300), st.integers(1, 200), st.integers(1, 200),
       st.sampled_from([np.float32, np.float64]), st.integers(0, 2**32 - 1))
def test_matmuls_transposed_twin_matches_its_formula(n, k, m, dtype, seed) -> None:
    """matmul_y_grad_transposed, (g^T x)^T, against MATMUL's formula x^T @ g: equal within
    float rounding (the BLAS may sum in another order for the transposed product; float32
    here gives the same bits, float64 not always), and in the layout of a y that is a
    transposed matrix (W.T), so that W's gradient is row-major."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, k)).astype(dtype)
    g = rng.standard_normal((n, m)).astype(dtype)
    w = rng.standard_normal((m, k)).astype(dtype)
    reference = rules.swap_last(x) @ g
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for fast in (rules.matmul_y_grad_transposed(x, g),
                 rules.MATMUL.vjp((x, w.T), None, g, (False, True))[1]):
        assert fast.dtype == dtype and fast.shape == reference.shape
        np.testing.assert_allclose(fast, reference, rtol=tol, atol=tol * np.abs(reference).max())
    assert rules.is_transposed_matrix(w.T) == (m > 1 and k > 1)
    gb = rules.MATMUL.vjp((x, w.T), None, g, (False, True))[1]
    assert gb.T.flags.c_contiguous


def test_the_window_positions_of_max_pool2d() -> None:
    positions = kernels.window_positions((1, 2, 4, 5), (2, 3), (2, 1))
    x = np.arange(40.0).reshape(1, 2, 4, 5)
    windows = kernels.windows(x, (2, 3), (2, 1))  # (1, 2, OH, OW, 2, 3)
    assert positions.shape == (6, 2 * 2 * 3)
    assert np.array_equal(x.reshape(-1)[positions],
                          windows.reshape(-1, 6).T)  # entry k of every window
    assert not positions.flags.writeable
    assert kernels.window_positions((1, 2, 4, 5), (2, 3), (2, 1)) is positions  # made once


@examples(60)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 7), st.integers(1, 7),
       st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_max_pools_fast_twin_gives_its_references_bits(n, c, extra_h, extra_w, kh, kw, sh, sw,
                                                        ties, seed) -> None:
    """kernels.max_pool2d_fast against kernels.max_pool2d_reference: the same maxima and the
    same picks (the first largest entry of each window), ties included."""
    rng = np.random.default_rng(seed)
    shape = (n, c, kh + extra_h - 1, kw + extra_w - 1)
    x = rng.integers(0, 3, shape).astype(np.float32) if ties else rng.standard_normal(shape)
    for picks in (True, False):
        fast = kernels.max_pool2d_fast(x, (kh, kw), (sh, sw), picks)
        reference = kernels.max_pool2d_reference(x, (kh, kw), (sh, sw), picks)
        assert np.array_equal(fast[0], reference[0]) and fast[0].dtype == reference[0].dtype
        assert (fast[1] is None and reference[1] is None) or np.array_equal(fast[1],
                                                                            reference[1])


# ---- layer_norm: the forward's and the rule's twins, and torch's float32 numbers ----

LAYER_NORM_SHAPES = [((5, 12), 1), ((3, 4, 6), 2), ((2, 3, 4), 1), ((7,), 1)]


def _layer_norm_inputs(shape, normalized, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    w, b = (rng.standard_normal(shape[len(shape) - normalized:]).astype(dtype) for _ in "wb")
    return x, w, b, rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "normalized"), LAYER_NORM_SHAPES)
@pytest.mark.parametrize("layout", ["C", "transposed"])
def test_the_layer_norm_twins_are_the_references_within_rounding(shape, normalized, dtype,
                                                                 layout):
    """The forward's twin and the rule's twin (``layer_norm_grads_fast``) against the
    readable forms; a transposed x (not C-contiguous) takes the readable forms."""
    x, w, b, g = _layer_norm_inputs(shape, normalized, dtype)
    if layout == "transposed":
        x = np.ascontiguousarray(x.T).T
    axes = tuple(range(x.ndim - normalized, x.ndim))
    tol = {"rtol": 2e-6, "atol": 2e-6} if dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-13}
    needs = (True, True, True)
    fast = kernels.layer_norm_on_arrays(x, w, b, axes, 1e-5, needs)
    fast_grads = rules.LAYER_NORM.vjp((x, w, b), fast, g, axes, 1e-5, needs)
    chaingrad.use_reference()
    try:
        reference = kernels.layer_norm_on_arrays(x, w, b, axes, 1e-5, needs)
        reference_grads = rules.LAYER_NORM.vjp((x, w, b), reference, g, axes, 1e-5, needs)
    finally:
        chaingrad.use_reference(False)
    assert fast.dtype == reference.dtype == dtype and fast.shape == reference.shape
    np.testing.assert_allclose(fast, reference, **tol)
    for ours, theirs, like in zip(fast_grads, reference_grads, (x, w, b)):
        theirs = chaingrad.autodiff.sum_to_shape(theirs, like.shape)  # as the driver sums it
        ours = chaingrad.autodiff.sum_to_shape(ours, like.shape)
        assert ours.dtype == dtype
        np.testing.assert_allclose(ours, theirs, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "axes"), [((5, 12), (1,)), ((3, 4, 6), (1, 2)),
                                             ((3, 4, 6), (0, 1)), ((7,), (0,))])
def test_the_row_mean_twin_is_numpys_mean_within_rounding(shape, axes, dtype):
    """``mean_over_fast`` (rows summed by einsum) against ``x.mean(axis, keepdims=True)``;
    axes that are not the last ones take numpy's mean itself."""
    x = np.random.default_rng(6).standard_normal(shape).astype(dtype) * 3 + 1
    ours, theirs = rules.mean_over_fast(x, axes), x.mean(axis=axes, keepdims=True)
    assert ours.dtype == theirs.dtype == dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_the_layer_norm_rule_twin_gives_only_what_is_needed():
    x, w, b, g = _layer_norm_inputs((4, 6), 1, np.float64)
    for needs in [(True, False, False), (False, True, False), (False, False, True)]:
        grads = rules.LAYER_NORM.vjp((x, w, b), None, g, (1,), 1e-5, needs)
        assert [gr is not None for gr in grads] == list(needs)


def test_layer_norm_runs_its_twins_unless_under_the_reference(monkeypatch):
    calls = []
    for name in ("layer_norm_reference", "layer_norm_fast"):
        monkeypatch.setattr(kernels, name, lambda *args, name=name: calls.append(name)
                            or np.zeros_like(args[0]))
    x = Tensor(np.ones((2, 3)))
    chaingrad.nn.functional.layer_norm(x, (3,))
    chaingrad.use_reference()
    try:
        chaingrad.nn.functional.layer_norm(x, (3,))
    finally:
        chaingrad.use_reference(False)
    assert calls == ["layer_norm_fast", "layer_norm_reference"]


def _scaled_ulps(ours: np.ndarray, theirs: np.ndarray, scale: np.ndarray) -> float:
    """The largest distance between ours and theirs, in units in the last place of
    ``scale`` (float32)."""
    spacing = np.spacing(np.abs(scale).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(ours.astype(np.float64) - theirs.astype(np.float64)) / spacing))


@pytest.mark.parametrize(("shape", "normalized"), [((512, 192), (192,)),
                                                   ((12, 64, 128), (128,)),
                                                   ((4, 5, 6), (5, 6))])
@pytest.mark.parametrize("reference", [False, True], ids=["twins", "reference"])
def test_layer_norm_is_torchs_within_measured_float32_ulps(torch, shape, normalized,
                                                           reference):
    """float32, measured against torch 2.13 (its kernel adds in another order): the output
    and x's gradient within 8 and 4 ulps of max(|torch's|, 1); the weight's and the bias's
    gradients, sums over the rows, within 4 ulps of the sum of their terms' magnitudes
    (measured: 8, 4 and 3)."""
    x, w, b, g = _layer_norm_inputs(shape, len(normalized), np.float32, seed=1)
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    out = torch.nn.functional.layer_norm(theirs[0], normalized, theirs[1], theirs[2])
    out.backward(torch.tensor(g))
    chaingrad.use_reference(reference)
    try:
        ours = [chaingrad.tensor(a, requires_grad=True) for a in (x, w, b)]
        mine = chaingrad.nn.functional.layer_norm(ours[0], normalized, ours[1], ours[2])
        mine.backward(chaingrad.tensor(g))
    finally:
        chaingrad.use_reference(False)
    expected = out.detach().numpy()
    assert mine.dtype == chaingrad.float32
    assert _scaled_ulps(mine.detach().numpy(), expected, np.maximum(np.abs(expected), 1)) <= 8
    dx = theirs[0].grad.numpy()
    assert _scaled_ulps(ours[0].grad.numpy(), dx, np.maximum(np.abs(dx), 1)) <= 4
    rows = tuple(range(x.ndim - len(normalized)))
    xhat = (x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)
    if len(normalized) == 2:
        flat = x.reshape(x.shape[0], -1)
        xhat = ((flat - flat.mean(-1, keepdims=True)) / flat.std(-1, keepdims=True)).reshape(
            x.shape)
    for k, terms in ((1, np.abs(g * xhat).sum(rows)), (2, np.abs(g).sum(rows))):
        assert _scaled_ulps(ours[k].grad.numpy(), theirs[k].grad.numpy(), terms) <= 4


# ---- GELU's rule: its twin reads Phi off the output ----


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_gelu_rule_twin_is_the_rule_within_rounding(dtype):
    """Against the rule's formula with the same Phi (``phi_float32`` for float32, else from
    ``erf_on_arrays``): within 2 ulps of |Phi(x)| + |x phi(x)| (the two terms'
    magnitudes); against the rule under ``use_reference()`` (erf entry by entry by
    ``math.erf``), within 2 ulps of the larger of 1 and that (the float32 erf's 2 ulps).
    Measured over a dense grid, tiny and huge values too; torch's 0.5 at 0 and nan at
    +-inf and nan."""
    x = np.concatenate([_points(dtype), np.array([1e-21, -1e-21, 1e-19, 3e-39, 40.0, -40.0],
                                                 dtype=dtype)])
    ones = np.ones_like(x)
    with np.errstate(all="ignore"):
        out = shared.gelu_on_arrays(x)
        (fast,) = shared.GELU.vjp((x,), out, ones)
        phi_cdf = (fast_kernels.phi_float32(x) if dtype == np.float32
                   else 0.5 * (1 + shared.erf_on_arrays(x * 0.7071067811865476)))
        formula = phi_cdf + x * 0.3989422804014327 * np.exp(-0.5 * (x * x))
        chaingrad.use_reference()
        try:
            (reference,) = shared.GELU.vjp((x,), shared.gelu_on_arrays(x), ones)
        finally:
            chaingrad.use_reference(False)
    assert fast.dtype == reference.dtype == formula.dtype == dtype
    x64 = x.astype(np.float64)
    terms = (0.5 * np.vectorize(math.erfc)(-x64 / math.sqrt(2))
             + np.abs(x64) * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi))
    error = np.abs(fast.astype(np.float64) - formula)
    assert np.max(error / np.spacing(terms.astype(dtype)).astype(np.float64)) <= 2
    error = np.abs(fast.astype(np.float64) - reference)
    assert np.max(error / np.spacing(np.maximum(terms, 1).astype(dtype))) <= 2
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype=dtype)
    with np.errstate(all="ignore"):
        (fast,) = shared.GELU.vjp((special,), shared.gelu_on_arrays(special), np.ones_like(special))
    np.testing.assert_array_equal(fast, [0.5, 0.5, np.nan, np.nan, np.nan])


def test_gelus_polynomial_needs_no_clamp_beyond_its_fit():
    """``minus_erf_of_scaled`` takes |x| as it is: beyond the fit's end (4 * sqrt 2) its
    polynomial stays below -18, and -erf is -1 exactly, as float32's erf(|x| / sqrt 2) is 1
    from |x| = 5.54 on, up to inf."""
    a = np.concatenate([np.linspace(5.54, 100, 200_001), np.geomspace(100, 3e38, 10_000),
                        [np.inf]]).astype(np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fast_kernels.minus_erf_of_scaled(a), -1.0)


def test_the_float32_phi_is_within_2_ulps_of_1_of_the_exact_one():
    """``phi_float32``, GELU's rule's Phi(x), against 0.5 * erfc(-x / sqrt 2) in float64:
    within 2 ulps of 1 (measured over 200,001 points: 0.71; from erf_float32: 0.65; for x < 0,
    1 + erf loses Phi's low bits in every float32 form, torch's too), 0.5 at +-0, 1 and 0
    at +-inf."""
    x = _points(np.float32)
    exact = 0.5 * np.vectorize(math.erfc)(-x.astype(np.float64) / math.sqrt(2))
    ours = fast_kernels.phi_float32(x).astype(np.float64)
    assert np.max(np.abs(ours - exact)) <= 2 * np.spacing(np.float32(1))
    with np.errstate(all="ignore"):
        special = fast_kernels.phi_float32(
            np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32))
    np.testing.assert_array_equal(special, [0.5, 0.5, 1.0, 0.0, np.nan])


def test_the_float32_gelu_twin_is_the_reference_within_2_ulps_of_x(torch):
    """``gelu_float32`` against ``gelu_on_arrays`` under ``use_reference()`` (math.erf
    entry by entry): within 2 ulps of x (measured: 2.0); against torch's, within 5, as the
    reference itself (measured: 4.0 and 5.0). In ulps of x, not of GELU: for x < 0 every
    form loses GELU's low bits to 1 + erf(x / sqrt 2) (torch's too)."""
    x = _points(np.float32)
    with np.errstate(all="ignore"):
        fast = fast_kernels.gelu_float32(x).astype(np.float64)
        chaingrad.use_reference()
        try:
            reference = shared.gelu_on_arrays(x).astype(np.float64)
        finally:
            chaingrad.use_reference(False)
    theirs = torch.nn.functional.gelu(torch.from_numpy(x)).numpy().astype(np.float64)
    unit = np.spacing(np.maximum(np.abs(x), np.float32(1e-30))).astype(np.float64)
    assert np.max(np.abs(fast - reference) / unit) <= 2
    assert np.max(np.abs(reference - theirs) / unit) <= 5
    assert np.max(np.abs(fast - theirs) / unit) <= 5
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 40.0, -40.0], dtype=np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fast_kernels.gelu_float32(special),
                                      [0.0, 0.0, np.inf, np.nan, np.nan, 40.0, 0.0])


@pytest.mark.parametrize("op", [lambda F, x: x.erf(), lambda F, x: F.gelu(x),
                                lambda F, x: x**-0.5, lambda F, x: F.softplus(x),
                                lambda F, x: F.softplus(x, beta=2.0), lambda F, x: x.sigmoid()],
                         ids=["erf", "gelu", "pow_-0.5", "softplus", "softplus_beta_2", "sigmoid"])
def test_the_kernels_take_a_0_d_float32_tensor(torch, op):
    """numpy makes a 0-d array's results scalars, which a kernel working in place cannot
    write into (``erf`` and ``gelu`` of ``tensor(0.5)`` raised a TypeError)."""
    ours = op(chaingrad.nn.functional, Tensor(np.array(0.5, dtype=np.float32)))
    theirs = op(torch.nn.functional, torch.tensor(0.5))
    assert ours.shape == () and ours.dtype == chaingrad.float32
    assert abs(ours.item() - theirs.item()) <= 1e-6


def test_gelus_rule_takes_its_twin_on_arrays_only_unless_under_the_reference(monkeypatch):
    calls = []
    monkeypatch.setattr(shared, "gelu_grad_fast", lambda *args: calls.append(1) or args[1])
    x = Tensor(np.array([0.5, -1.0]), requires_grad=True)
    x.gelu().sum().backward()
    chaingrad.use_reference()
    try:
        x.gelu().sum().backward()
    finally:
        chaingrad.use_reference(False)
    assert calls == [1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_erf_gelu_and_gelus_rule_in_chunks_are_the_whole_arrays_bit_for_bit(monkeypatch, dtype):
    """``in_chunks`` (CHUNK_ENTRIES entries at a time, for the cache; GRAD_CHUNK_ENTRIES
    in GELU's rule) changes no number: chunks of 1,000 (700) entries against one chunk, a
    length that is no multiple of it, and a transposed (not C-contiguous) array, which is
    computed whole."""
    x = np.random.default_rng(4).standard_normal((50, 51)).astype(dtype) * 3
    g = np.random.default_rng(5).standard_normal(x.shape).astype(dtype)

    def run() -> list[np.ndarray]:
        out = shared.gelu_on_arrays(x)
        return [shared.erf_on_arrays(x), out, shared.GELU.vjp((x,), out, g)[0],
                shared.gelu_on_arrays(x.T)]

    whole = run()
    monkeypatch.setattr(fast_kernels, "CHUNK_ENTRIES", 1000)
    monkeypatch.setattr(fast_kernels, "GRAD_CHUNK_ENTRIES", 700)
    for ours, theirs in zip(run(), whole):
        assert ours.dtype == theirs.dtype == dtype
        np.testing.assert_array_equal(ours, theirs)
