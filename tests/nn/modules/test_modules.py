"""Tensor layers: Linear, Conv2d and MaxPool2d against torch.nn.functional (outputs and
gradients, stride and padding variants), against finite differences, twice differentiated;
conv2d's fast twins against their readable references, in both layouts; PyTorch's
parameter names and initialisation; Sequential, Dropout, Flatten."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples

from chaingrad import Tensor, grad
from chaingrad.nn import (
    Conv2d,
    Dropout,
    Flatten,
    Identity,
    Linear,
    MaxPool2d,
    Module,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
    manual_seed,
)
from chaingrad.nn.functional import conv2d, max_pool2d
from chaingrad.tensor_engine import fast_kernels, rules


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _both_grads(fn_ours, fn_torch, arrays, torch):
    """Outputs and gradients of sum(w * fn(...)) from chaingrad and from torch (float64).
    The leaves are Parameters, which a layer takes as its weight and bias."""
    ours = [Parameter(a) for a in arrays]
    out = fn_ours(*ours)
    w = _rng(9).standard_normal(out.shape)
    (out * Tensor(w)).sum().backward()
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    expected = fn_torch(*theirs)
    (expected * torch.as_tensor(w)).sum().backward()
    return (out.detach().numpy(), [t.grad for t in ours],
            expected.detach().numpy(), [t.grad.numpy() for t in theirs])


def _assert_all_close(ours, theirs) -> None:
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        assert np.allclose(a, b, rtol=1e-10, atol=1e-12)


# ---- against torch.nn.functional ----


@pytest.mark.parametrize("batch_shape", [(5,), (2, 3), ()], ids=["batch", "leading", "one"])
def test_linear_matches_torch(torch, batch_shape) -> None:
    layer = Linear(4, 3, dtype=np.float64)
    x = _rng().standard_normal(batch_shape + (4,))

    def ours(x, w, b):
        layer.weight, layer.bias = w, b
        return layer(x)

    out, grads, expected, expected_grads = _both_grads(
        ours, torch.nn.functional.linear,
        [x, layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy()], torch)
    _assert_all_close([out] + grads, [expected] + expected_grads)


CONV_CASES = [
    # (N, C, H, W), (O, kh, kw), stride, padding, bias
    ((2, 3, 6, 6), (4, 3, 3), 1, 0, True),
    ((1, 2, 7, 5), (3, 3, 3), 2, 1, True),
    ((2, 1, 5, 6), (2, 2, 3), (1, 2), (1, 0), False),
    ((1, 3, 4, 4), (2, 1, 1), 1, 0, True),
    ((1, 2, 5, 5), (2, 5, 5), 1, 2, True),
    ((2, 2, 8, 7), (3, 3, 2), 3, (2, 1), True),
    # outputs at least rules.SHORT_ROW wide: the batch-first layout of the fast twins
    ((2, 3, 6, 12), (4, 3, 3), 1, 1, True),
    ((1, 2, 7, 19), (3, 3, 2), (1, 2), (0, 1), False),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "stride", "padding", "bias"), CONV_CASES)
def test_conv2d_matches_torch(torch, x_shape, w_shape, stride, padding, bias) -> None:
    rng = _rng()
    o, kh, kw = w_shape
    arrays = [rng.standard_normal(x_shape), rng.standard_normal((o, x_shape[1], kh, kw))]
    if bias:
        arrays.append(rng.standard_normal(o))

    def ours(x, w, b=None):
        return conv2d(x, w, b, stride, padding)

    def theirs(x, w, b=None):
        return torch.nn.functional.conv2d(x, w, b, stride, padding)

    out, grads, expected, expected_grads = _both_grads(ours, theirs, arrays, torch)
    _assert_all_close([out] + grads, [expected] + expected_grads)


POOL_CASES = [((2, 3, 6, 6), 2, None), ((1, 2, 7, 5), 3, 1), ((1, 1, 8, 8), 2, 3),
              ((2, 2, 6, 7), (2, 3), (1, 2)), ((1, 1, 5, 5), 5, None)]


@pytest.mark.parametrize(("x_shape", "kernel", "stride"), POOL_CASES)
def test_max_pool2d_matches_torch(torch, x_shape, kernel, stride) -> None:
    x = _rng().permutation(int(np.prod(x_shape))).reshape(x_shape) * 0.1  # no ties

    def theirs(x):
        return torch.nn.functional.max_pool2d(x, kernel, stride)

    out, grads, expected, expected_grads = _both_grads(
        lambda x: max_pool2d(x, kernel, stride), theirs, [x], torch)
    _assert_all_close([out] + grads, [expected] + expected_grads)


_TIED = np.array([[0, 0, 1, 1], [1, 0, 1, 0], [0, 0, 0, 0], [0, 2, 2, 0]], float)
TIE_CASES = [  # input (H, W), kernel, stride, d(sum of outputs)/dx as torch 2.13 gives it
    (np.zeros((2, 2)), 2, None, [[1, 0], [0, 0]]),  # a window of zeros: the first entry
    (np.zeros((3, 3)), 2, 1, [[1, 1, 0], [1, 1, 0], [0, 0, 0]]),  # overlapping zeros
    (np.array([[1, 3, 3], [3, 0, 3], [1, 3, 3]], float), 2, 1,  # 3 at (0, 1) wins twice
     [[0, 2, 0], [1, 0, 1], [0, 0, 0]]),
    (_TIED, 2, None, [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]]),
    (_TIED, (2, 3), 1, [[0, 0, 2, 0], [1, 0, 1, 0], [0, 0, 0, 0], [0, 2, 0, 0]]),
]


@pytest.mark.parametrize(("x", "kernel", "stride", "expected"), TIE_CASES,
                         ids=["zeros", "overlapping_zeros", "overlapping_tie", "partly_tied",
                              "wide_overlapping"])
def test_max_pool2d_ties_go_to_the_first_largest_entry_as_in_torch(
        torch, x, kernel, stride, expected) -> None:
    """Not split among the tied entries: each window's gradient goes to its first largest
    entry (row-major), and an entry picked by several windows gets all of theirs."""
    x = x.reshape((1, 1) + x.shape)
    leaf = Tensor(x, requires_grad=True)
    max_pool2d(leaf, kernel, stride).sum().backward()
    assert leaf.grad[0, 0].tolist() == expected
    out, grads, expected_out, expected_grads = _both_grads(
        lambda x: max_pool2d(x, kernel, stride),
        lambda x: torch.nn.functional.max_pool2d(x, kernel, stride), [x], torch)
    _assert_all_close([out] + grads, [expected_out] + expected_grads)


def test_max_pool2d_ties_in_float32_and_twice_differentiated(torch) -> None:
    x = Tensor(np.zeros((1, 1, 3, 3), np.float32), requires_grad=True)
    w = Tensor(np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32), requires_grad=True)
    (g,) = grad((max_pool2d(x, 2, 1) * w).sum(), [x], create_graph=True)
    assert g[0, 0].tolist() == [[1, 2, 0], [3, 4, 0], [0, 0, 0]]
    (g * Tensor(np.arange(9.0).reshape(1, 1, 3, 3))).sum().backward()
    tx = torch.zeros(1, 1, 3, 3, requires_grad=True)
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    (tg,) = torch.autograd.grad((torch.nn.functional.max_pool2d(tx, 2, 1) * tw).sum(), [tx],
                                create_graph=True)
    (tg * torch.arange(9.0).reshape(1, 1, 3, 3)).sum().backward()
    assert w.grad.tolist() == tw.grad.tolist() == [[[[0.0, 1.0], [3.0, 4.0]]]]


def test_conv_and_pool_layers_match_torch_modules(torch) -> None:
    manual_seed(0)
    ours = Sequential(Conv2d(2, 4, 3, padding=1, dtype=np.float64), ReLU(), MaxPool2d(2),
                      Flatten(), Linear(4 * 3 * 3, 5, dtype=np.float64))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                 torch.nn.Linear(36, 5)).double()
    named = dict(ours.named_parameters())
    assert list(named) == [name for name, _ in theirs.named_parameters()]
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            assert tuple(p.shape) == named[name].shape
            p.copy_(torch.as_tensor(named[name].detach().numpy()))
    x = _rng().standard_normal((3, 2, 6, 6))
    ours(Tensor(x)).log_softmax().sum().backward()
    theirs(torch.as_tensor(x)).log_softmax(-1).sum().backward()
    for name, p in theirs.named_parameters():
        assert np.allclose(named[name].grad, p.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("x_shape", [(1, 2, 5, 5), (2, 2, 5, 17)], ids=["small", "wide"])
def test_conv2d_second_derivative_matches_torch(torch, x_shape) -> None:
    rng = _rng(3)
    x, w = rng.standard_normal(x_shape), rng.standard_normal((2, 2, 3, 3))
    xs = [Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)]
    gx, gw = grad((conv2d(*xs, stride=2, padding=1) ** 2).sum(), xs, create_graph=True)
    ours = grad((gx * gx).sum() + (gw * gw).sum(), xs)
    ts = [torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)]
    tx, tw = torch.autograd.grad(
        (torch.nn.functional.conv2d(*ts, stride=2, padding=1) ** 2).sum(), ts,
        create_graph=True)
    theirs = torch.autograd.grad((tx * tx).sum() + (tw * tw).sum(), ts)
    _assert_all_close(ours, [t.numpy() for t in theirs])


def test_conv2d_third_derivative_matches_torch(torch) -> None:
    """The three conv primitives' rules are made of each other: any order works."""
    rng = _rng(8)
    x, w = rng.standard_normal((2, 2, 4, 9)), rng.standard_normal((3, 2, 2, 3))
    xs = [Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)]
    ts = [torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)]
    found = []
    for leaves, conv, diff in ((xs, conv2d, grad), (ts, torch.nn.functional.conv2d,
                                                      torch.autograd.grad)):
        gx, gw = diff((conv(*leaves, stride=(1, 2), padding=1) ** 2).sum(), leaves,
                      create_graph=True)
        hx, hw = diff((gx ** 2).sum() + (gw * gx.sum()).sum(), leaves, create_graph=True)
        found.append(diff((hx ** 3).sum() + (hw ** 3).sum(), leaves))
    _assert_all_close(found[0], [t.numpy() for t in found[1]])


# ---- the fast twins against their readable references ----

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
    rng = _rng(6)
    o, kh, kw = w_shape
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal((o, x_shape[1], kh, kw)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    out = fast_kernels.conv2d(x, w, stride, padding, b)
    g = rng.standard_normal(out.shape).astype(dtype)
    pairs = [
        (out, rules.conv2d_reference(x, w, stride, padding, b)),
        (fast_kernels.conv2d_input_grad(g, w, x_shape[2:], stride, padding),
         rules.conv2d_input_grad_reference(g, w, x_shape[2:], stride, padding)),
        (fast_kernels.conv2d_weight_grad(x, g, (kh, kw), stride, padding),
         rules.conv2d_weight_grad_reference(x, g, (kh, kw), stride, padding)),
    ]
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for fast, reference in pairs:
        assert fast.dtype == reference.dtype == dtype and fast.shape == reference.shape
        assert fast.flags.c_contiguous
        scale = np.abs(reference).max()
        np.testing.assert_allclose(fast, reference, rtol=tol, atol=tol * scale)


def test_conv_fast_twins_cover_both_layouts() -> None:
    widths = {rules.conv_output_size(x[2:], w[1:], s, p)[1] for x, w, s, p in TWIN_CASES}
    assert min(widths) < fast_kernels.SHORT_ROW <= max(widths)


@examples(60)
@given(st.integers(1, 300), st.integers(1, 200), st.integers(1, 200),
       st.sampled_from([np.float32, np.float64]), st.integers(0, 2**32 - 1))
def test_matmuls_transposed_twin_matches_its_formula(n, k, m, dtype, seed) -> None:
    """matmul_y_grad_transposed, (g^T x)^T, against MATMUL's formula x^T @ g: equal within
    float rounding (the BLAS may sum in another order for the transposed product; float32
    here gives the same bits, float64 not always), and in the layout of a y that is a
    transposed matrix (W.T), so that W's gradient is row-major."""
    rng = _rng(seed)
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


def test_a_linear_layers_weight_gradient_is_row_major_eager_and_compiled() -> None:
    import chaingrad

    manual_seed(0)
    layer = Linear(5, 3)
    x = Tensor(_rng(2).standard_normal((4, 5)).astype(np.float32))
    for fn in (lambda: layer(x).sum(), chaingrad.compile(lambda: layer(x).sum())):
        layer.weight.grad = None
        fn().backward()
        assert layer.weight.grad.numpy().flags.c_contiguous


def test_the_window_positions_of_max_pool2d() -> None:
    positions = fast_kernels.window_positions((1, 2, 4, 5), (2, 3), (2, 1))
    x = np.arange(40.0).reshape(1, 2, 4, 5)
    windows = rules.windows(x, (2, 3), (2, 1))  # (1, 2, OH, OW, 2, 3)
    assert positions.shape == (6, 2 * 2 * 3)
    assert np.array_equal(x.reshape(-1)[positions],
                          windows.reshape(-1, 6).T)  # entry k of every window
    assert not positions.flags.writeable
    assert fast_kernels.window_positions((1, 2, 4, 5), (2, 3), (2, 1)) is positions  # made once


@examples(60)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 7), st.integers(1, 7),
       st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_max_pools_fast_twin_gives_its_references_bits(n, c, extra_h, extra_w, kh, kw, sh, sw,
                                                        ties, seed) -> None:
    """fast_kernels.max_pool2d against rules.max_pool2d_reference: the same maxima and the
    same picks (the first largest entry of each window), ties included."""
    rng = _rng(seed)
    shape = (n, c, kh + extra_h - 1, kw + extra_w - 1)
    x = rng.integers(0, 3, shape).astype(np.float32) if ties else rng.standard_normal(shape)
    for picks in (True, False):
        fast = fast_kernels.max_pool2d(x, (kh, kw), (sh, sw), picks)
        reference = rules.max_pool2d_reference(x, (kh, kw), (sh, sw), picks)
        assert np.array_equal(fast[0], reference[0]) and fast[0].dtype == reference[0].dtype
        assert (fast[1] is None and reference[1] is None) or np.array_equal(fast[1],
                                                                            reference[1])


# ---- against finite differences (no torch needed) ----


def _numeric(fn, arrays, i, eps=1e-6):
    g = np.zeros_like(arrays[i])
    for idx in np.ndindex(g.shape):
        up = [a.copy() for a in arrays]
        down = [a.copy() for a in arrays]
        up[i][idx] += eps
        down[i][idx] -= eps
        g[idx] = (fn(*map(Tensor, up)).numpy().sum() - fn(*map(Tensor, down)).numpy().sum()) / (
            2 * eps)
    return g


@pytest.mark.parametrize(("stride", "padding"), [(1, 0), (2, 1)])
def test_conv2d_gradient_matches_finite_differences(stride, padding) -> None:
    rng = _rng(1)
    arrays = [rng.standard_normal((1, 2, 5, 4)), rng.standard_normal((2, 2, 3, 2)),
              rng.standard_normal(2)]
    w = rng.standard_normal(conv2d(*map(Tensor, arrays), stride=stride,
                                   padding=padding).shape)

    def fn(x, k, b):
        return conv2d(x, k, b, stride, padding) * Tensor(w)

    leaves = [Tensor(a, requires_grad=True) for a in arrays]
    fn(*leaves).sum().backward()
    for i, leaf in enumerate(leaves):
        assert np.allclose(leaf.grad, _numeric(fn, arrays, i), atol=1e-5, rtol=1e-3)


def test_max_pool2d_gradient_matches_finite_differences() -> None:
    x = _rng(2).permutation(36).reshape(1, 1, 6, 6) * 0.1
    w = _rng(4).standard_normal((1, 1, 4, 4))

    def fn(t):
        return max_pool2d(t, 3, 1) * Tensor(w)

    leaf = Tensor(x, requires_grad=True)
    fn(leaf).sum().backward()
    assert np.allclose(leaf.grad, _numeric(fn, [x], 0), atol=1e-5, rtol=1e-3)


# ---- parameters, names, initialisation ----


def test_a_float64_input_to_float32_layers_is_promoted_not_refused() -> None:
    """torch raises a dtype mismatch; chaingrad follows numpy (see Linear's docstring)."""
    layer = Linear(3, 2)
    out = layer(Tensor(np.ones((4, 3))))
    out.sum().backward()
    assert out.dtype == np.float64 and layer.weight.grad.dtype == np.float32
    assert layer(Tensor(np.ones((4, 3), np.float32))).dtype == np.float32


def test_linear_and_conv_have_torch_shapes_and_init() -> None:
    manual_seed(1)
    lin, conv = Linear(400, 30), Conv2d(3, 8, (3, 5))
    assert isinstance(lin, Module)
    assert lin.weight.shape == (30, 400) and lin.bias.shape == (30,)
    assert conv.weight.shape == (8, 3, 3, 5) and conv.bias.shape == (8,)
    assert lin.weight.dtype == np.float32 and lin.weight.requires_grad
    for p, fan_in in ((lin.weight, 400), (lin.bias, 400), (conv.weight, 45), (conv.bias, 45)):
        bound = 1 / np.sqrt(fan_in)
        assert np.abs(p.detach().numpy()).max() <= bound
        if p.numel() > 100:  # uniform on the whole interval, not a corner of it
            assert np.abs(p.detach().numpy()).max() > 0.9 * bound
            assert abs(p.detach().numpy().mean()) < 0.1 * bound
    assert [n for n, _ in lin.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in Linear(3, 2, bias=False).named_parameters()] == ["weight"]


def test_manual_seed_makes_init_reproducible() -> None:
    manual_seed(7)
    a = Linear(5, 3).weight.detach().numpy().copy()
    manual_seed(7)
    assert np.array_equal(a, Linear(5, 3).weight.detach().numpy())


def test_sequential_names_children_like_torch() -> None:
    model = Sequential(Linear(2, 4), Tanh(), Linear(4, 4), Sigmoid(), Identity(),
                       Linear(4, 1))
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias", "5.weight", "5.bias"]
    assert model.parameters()[0] is model[0].weight
    assert len(model) == 6 and isinstance(model[1], Tanh)
    assert [type(m).__name__ for m in model][:2] == ["Linear", "Tanh"]
    assert "(0): Linear(in_features=2, out_features=4, bias=True)" in repr(model)
    out = model(Tensor(np.ones((3, 2))))
    assert out.shape == (3, 1)
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_dropout_train_and_eval() -> None:
    manual_seed(0)
    drop = Sequential(Dropout(0.25))
    x = Tensor(np.ones((200, 50)), requires_grad=True)
    y = drop(x)
    dropped = y.detach().numpy() == 0
    assert 0.2 < dropped.mean() < 0.3
    assert np.allclose(y.detach().numpy()[~dropped], 1 / 0.75)
    y.sum().backward()
    assert np.array_equal(x.grad, y.detach().numpy())  # the mask, scaled
    assert drop.eval() is drop and not drop[0].training
    assert drop(x) is x
    drop.train()
    assert drop[0].training
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                         "but got 1.5"):
        Dropout(1.5)
    assert not Dropout(1.0)(x).detach().numpy().any()  # torch allows p = 1: every entry dropped


def test_flatten_and_activations() -> None:
    x = Tensor(np.arange(24.0).reshape(2, 3, 4) - 12)
    assert Flatten()(x).shape == (2, 12)
    assert Flatten(0)(x).shape == (24,)
    assert (ReLU()(x).numpy() >= 0).all()
    assert np.allclose(Tanh()(x).numpy(), np.tanh(x.numpy()))
    assert np.allclose(Sigmoid()(x).numpy(), 1 / (1 + np.exp(-x.numpy())))


@pytest.mark.parametrize(
    ("fn", "error", "message"),
    [(lambda: Linear(3, 2)(Tensor(np.ones((4, 5)))), ValueError,
      r"Linear: expected an input whose last dimension is 3, got shape \(4, 5\)"),
     (lambda: Linear(0, 2), ValueError, "Linear: in_features must be a positive int"),
     (lambda: Linear(3, 2)([1.0, 2.0, 3.0]), TypeError, "Linear: expected a Tensor"),
     (lambda: Conv2d(3, 2, 3)(Tensor(np.ones((1, 2, 5, 5)))), ValueError,
      "conv2d: .* the input has 2 channels, the weight expects 3"),
     (lambda: Conv2d(1, 2, 5)(Tensor(np.ones((1, 1, 3, 3)))), ValueError,
      r"conv2d: the kernel \(5, 5\) is larger than the padded input \(3, 3\)"),
     (lambda: Conv2d(1, 2, 3)(Tensor(np.ones((3, 3)))), ValueError,
      r"conv2d: needs an input \(N, C, H, W\) or \(C, H, W\)"),
     (lambda: Conv2d(1, 2, 2.5), TypeError, "Conv2d: kernel_size must be an int or a pair"),
     (lambda: Conv2d(1, 2, 3, stride=0), ValueError, "Conv2d: stride must be >= 1"),
     (lambda: Conv2d(1, 2, 3)([[[1.0]]]), TypeError,
      r"conv2d\(\): argument 'input' must be Tensor, not list"),
     (lambda: Conv2d(1, 2, 3, padding="full"), ValueError,
      "Conv2d: invalid padding string 'full'"),
     (lambda: MaxPool2d(4)(Tensor(np.ones((1, 1, 3, 3)))), ValueError,
      "max_pool2d: the kernel"),
     (lambda: MaxPool2d(2)([[[1.0]]]), TypeError,
      r"max_pool2d\(\): argument 'input' must be Tensor, not list"),
     (lambda: MaxPool2d((2, 0)), ValueError, "MaxPool2d: kernel_size must be >= 1"),
     (lambda: Sequential(Linear(2, 2), "relu"), TypeError, "Sequential: argument 1")],
    ids=["linear_shape", "linear_size", "linear_type", "conv_channels", "conv_kernel",
         "conv_ndim", "conv_kernel_type", "conv_stride", "conv_input_type", "conv_padding",
         "pool_kernel", "pool_input_type", "pool_kernel_size", "sequential"],
)
def test_layer_errors(fn, error, message) -> None:
    with pytest.raises(error, match=message):
        fn()


def test_conv2d_and_max_pool2d_have_one_entry_which_the_layers_call(monkeypatch) -> None:
    """F.conv2d and F.max_pool2d take torch's arguments and check them; the layers call
    them, and the Tensor engine offers no other conv2d or max_pool2d (its functions of
    those names are the primitives' nodes, which check nothing)."""
    import chaingrad.nn.functional as F
    from chaingrad import tensor_engine

    assert not {"conv2d", "max_pool2d"} & set(tensor_engine.__all__)
    calls = []
    for name in ("conv2d", "max_pool2d"):
        monkeypatch.setattr(F, name, lambda *args, name=name, **kw: calls.append(name))
    x = Tensor(np.ones((1, 1, 4, 4)))
    Conv2d(1, 2, 3)(x)
    MaxPool2d(2)(x)
    assert calls == ["conv2d", "max_pool2d"]


def test_a_small_cnn_learns() -> None:
    """A few SGD steps on a toy task: the loss goes down (the layers train end to end)."""
    manual_seed(0)
    rng = _rng(5)
    x = rng.standard_normal((32, 1, 6, 6)).astype(np.float32)
    labels = (x[:, 0, :3].sum(axis=(1, 2)) > x[:, 0, 3:].sum(axis=(1, 2))).astype(int)
    model = Sequential(Conv2d(1, 4, 3, padding=1), ReLU(), MaxPool2d(2), Flatten(),
                       Linear(36, 2))
    losses = []
    for _ in range(30):
        model.zero_grad()
        loss = -model(Tensor(x)).log_softmax()[np.arange(32), labels].mean()
        loss.backward()
        for p in model.parameters():
            p.data -= 0.1 * p.grad
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]


def test_state_dict_round_trip_and_errors() -> None:
    manual_seed(0)
    a = Sequential(Conv2d(1, 2, 3), Flatten(), Linear(2, 3))
    b = Sequential(Conv2d(1, 2, 3), Flatten(), Linear(2, 3))
    state = a.state_dict()
    assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert state["0.weight"].dtype == np.float32
    assert not np.shares_memory(state["0.weight"], a[0].weight.detach().numpy())
    view = b[0].weight.detach().numpy()
    b.load_state_dict(state)
    assert all(np.array_equal(state[k], v) for k, v in b.state_dict().items())
    assert view is b[0].weight.detach().numpy()  # updated in place
    before = b.state_dict()
    bad = dict(state, **{"2.bias": np.full(3, np.nan)})
    bad.pop("0.bias")
    with pytest.raises(ValueError, match=r"missing keys \['0.bias'\].*2.bias holds non-finite"):
        b.load_state_dict(bad)
    with pytest.raises(ValueError, match=r"2.weight has shape \(2, 3\), expected \(3, 2\)"):
        b.load_state_dict(dict(state, **{"2.weight": np.zeros((2, 3))}))
    with pytest.raises(ValueError, match=r"unexpected keys \['x'\]"):
        b.load_state_dict(dict(state, x=np.zeros(1)))
    with pytest.raises(TypeError, match="load_state_dict: expected a mapping"):
        b.load_state_dict([1, 2])
    assert all(np.array_equal(before[k], v) for k, v in b.state_dict().items())


def test_state_dict_loads_from_torch(torch) -> None:
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    ours = Sequential(Linear(3, 4), Tanh(), Linear(4, 2))
    ours.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    expected = theirs(torch.as_tensor(x)).detach().numpy()
    assert np.allclose(ours(Tensor(x)).detach().numpy(), expected, atol=1e-6)


# ---- torch's signatures, printed forms and losses ----

TORCH_LAYERS = [  # the same constructor call for chaingrad.nn and torch.nn
    lambda nn: nn.Linear(3, 1), lambda nn: nn.Linear(3, 2, False),
    lambda nn: nn.Flatten(0, 1), lambda nn: nn.Flatten(),
    lambda nn: nn.Conv2d(1, 6, 5), lambda nn: nn.Conv2d(1, 6, (3, 2), 2, 1, bias=False),
    lambda nn: nn.Conv2d(1, 2, 3, padding="same"), lambda nn: nn.Conv2d(1, 2, 3, padding="valid"),
    lambda nn: nn.MaxPool2d(2), lambda nn: nn.MaxPool2d((2, 3), 1),
    lambda nn: nn.ReLU(), lambda nn: nn.ReLU(True), lambda nn: nn.Tanh(), lambda nn: nn.Sigmoid(),
    lambda nn: nn.Dropout(), lambda nn: nn.Dropout(0.2, True), lambda nn: nn.Softmax(dim=1),
    lambda nn: nn.Softmax(), lambda nn: nn.LogSoftmax(1), lambda nn: nn.Identity(),
    lambda nn: nn.MSELoss(), lambda nn: nn.MSELoss(reduction="sum"),
    lambda nn: nn.CrossEntropyLoss(), lambda nn: nn.NLLLoss(), lambda nn: nn.BCEWithLogitsLoss(),
]


def test_every_layer_prints_as_torchs_in_a_sequential(torch) -> None:
    import collections

    import chaingrad.nn as cnn

    ours = cnn.Sequential(*(make(cnn) for make in TORCH_LAYERS))
    theirs = torch.nn.Sequential(*(make(torch.nn) for make in TORCH_LAYERS))
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    named = [("fc", "Linear", (2, 3)), ("act", "Tanh", ())]
    ours = cnn.Sequential(collections.OrderedDict(
        (k, getattr(cnn, c)(*a)) for k, c, a in named))
    theirs = torch.nn.Sequential(collections.OrderedDict(
        (k, getattr(torch.nn, c)(*a)) for k, c, a in named))
    assert repr(ours) == repr(theirs) and ours.fc is ours[0]


@pytest.mark.parametrize(("make", "args"), [
    (lambda nn, w: nn.MSELoss(reduction="none"), "pair"),
    (lambda nn, w: nn.CrossEntropyLoss(weight=w, label_smoothing=0.1), "classes"),
    (lambda nn, w: nn.NLLLoss(w, ignore_index=1, reduction="sum"), "classes"),
    (lambda nn, w: nn.BCEWithLogitsLoss(pos_weight=w), "pair"),
], ids=["mse", "cross_entropy", "nll", "bce"])
def test_loss_modules_agree_with_torch(agrees_with_torch, make, args) -> None:
    import torch

    import chaingrad.nn as cnn

    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(4, 3)), rng.uniform(0.5, 2, size=3)
    target = rng.integers(0, 3, size=4) if args == "classes" else rng.uniform(size=(4, 3))
    agrees_with_torch(lambda x, t: make(cnn, Tensor(w))(x, t),
                      lambda x, t: make(torch.nn, torch.tensor(w))(x, t), x, target)


def test_options_chaingrad_lacks_are_refused_when_the_layer_is_made() -> None:
    import chaingrad.nn as cnn

    for make, what in [(lambda: cnn.Conv2d(1, 2, 3, dilation=2), "Conv2d with dilation=2"),
                       (lambda: cnn.Conv2d(2, 2, 3, groups=2), "Conv2d with groups=2"),
                       (lambda: cnn.Conv2d(1, 2, 3, padding_mode="reflect"),
                        "Conv2d with padding_mode='reflect'"),
                       (lambda: cnn.MaxPool2d(2, padding=1), "MaxPool2d with padding=1"),
                       (lambda: cnn.MaxPool2d(2, ceil_mode=True), "MaxPool2d with ceil_mode"),
                       (lambda: cnn.Linear(2, 2, device="cuda"), "Linear(device='cuda')")]:
        with pytest.raises(NotImplementedError, match=re.escape(what)):
            make()
    assert cnn.Linear(2, 2, device="cpu", dtype=np.float64).weight.dtype == np.float64
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        cnn.Conv2d(1, 2, 3, stride=2, padding="same")


def test_flatten_takes_start_and_end_dim_as_torch(torch) -> None:
    import chaingrad.nn as cnn

    x = np.zeros((2, 3, 4, 5))
    for dims in [(), (0,), (0, 1), (1, 2), (-3, -2), (2, -1), (3, 3)]:
        assert cnn.Flatten(*dims)(Tensor(x)).shape == tuple(
            torch.nn.Flatten(*dims)(torch.tensor(x)).shape)
    with pytest.raises(ValueError, match="start_dim 2 comes after end_dim 1"):
        cnn.Flatten(2, 1)(Tensor(x))
    with pytest.raises(IndexError, match="out of range"):  # torch's IndexError
        cnn.Flatten(4)(Tensor(x))


def test_sequential_is_changed_as_torchs() -> None:
    import chaingrad.nn as cnn

    model = cnn.Sequential(cnn.ReLU(), cnn.Tanh(), cnn.Sigmoid())
    del model[0]
    assert [type(m).__name__ for m in model] == ["Tanh", "Sigmoid"]
    assert [n for n, _ in model.named_children()] == ["0", "1"]  # renumbered
    model[1] = cnn.Identity()
    model.insert(0, cnn.ReLU()).extend([cnn.Tanh()]).append(cnn.Sigmoid())
    assert [type(m).__name__ for m in model] == ["ReLU", "Tanh", "Identity", "Tanh", "Sigmoid"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        model[5]  # noqa: B018
