"""chaingrad/tensor_engine/reduction_order.py: torch's order of adding a float norm, checked
against plain loops (what each order says it does) and against torch 2.13 itself, to the
bit, over sizes, layouts, dims, ords and both float types; and the gradient, unchanged."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import chaingrad
from chaingrad.tensor_engine import reduction_order
from chaingrad.tensor_engine.reduction_order import (
    LANE_BYTES,
    ROUNDED_TAIL,
    exact_sum,
    fused_square_add,
    norm_in_torch_order,
    sum_of_squares_in_lanes,
    sum_one_at_a_time,
)

SIZES = [1, 2, 3, 7, 8, 9, 12, 13, 31, 33, 100, 1000, 4099, 65537]
DTYPES = [np.float32, np.float64]


def rounded(exact: Fraction, dtype: type) -> np.floating:
    """``exact`` rounded once to ``dtype``: the nearer of the two floats around it (the
    even one at a tie)."""
    first = dtype(float(exact))  # float64: rounded once; float32: maybe twice, so look
    candidates = [first, np.nextafter(first, dtype(math.inf)),
                  np.nextafter(first, dtype(-math.inf))]
    unsigned = f"u{np.dtype(dtype).itemsize}"
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact),
                                          int(np.array(c).view(unsigned)) % 2))


def lanes_loop(row: np.ndarray) -> np.floating:
    """ATen's loop for a contiguous 2-norm, entry by entry as the C++ is written."""
    dtype = row.dtype.type
    width = LANE_BYTES // row.dtype.itemsize
    whole = len(row) - len(row) % width
    lanes = [dtype(0)] * width
    for start in range(0, whole, width):
        for j in range(width):
            lanes[j] = dtype(lanes[j] + row[start + j] * row[start + j])
    total = lanes[0]
    for j in range(1, width):
        total = dtype(total + lanes[j])
    tail = row[whole:]
    for k, v in enumerate(tail):
        if len(tail) >= ROUNDED_TAIL and k < ROUNDED_TAIL:
            total = dtype(total + v * v)
        else:  # fused: rounded once
            total = rounded(Fraction(float(total)) + Fraction(float(v)) ** 2, dtype)
    return total


@pytest.mark.parametrize("dtype", DTYPES)
def test_each_order_is_its_plain_loop(dtype):
    rng = np.random.default_rng(0)
    for n in SIZES[:-1]:
        row = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3)).astype(dtype)
        assert sum_of_squares_in_lanes(row) == lanes_loop(row), n
        running = dtype(0)
        for v in row:
            running = dtype(running + v)
        assert sum_one_at_a_time(row) == running
    rows = rng.standard_normal((5, 3, 21)).astype(dtype)  # many rows at once: each its own
    expected = [[lanes_loop(r) for r in block] for block in rows]
    assert np.array_equal(sum_of_squares_in_lanes(rows), expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_fused_square_add_rounds_once(dtype):
    rng = np.random.default_rng(1)
    totals = np.abs(rng.standard_normal(3000) * 10.0 ** rng.integers(-4, 4, 3000)).astype(dtype)
    xs = (rng.standard_normal(3000) * 10.0 ** rng.integers(-4, 4, 3000)).astype(dtype)
    # and where rounding to float64 first lands halfway between two float32s: 1 + 2**-24
    # + 2**-60 is nearer 1 + 2**-23 than 1
    totals[:2], xs[:2] = 1.0, [2.0**-12, 2.0**-12 * (1 + 2.0**-23)]
    got = fused_square_add(totals, xs)
    assert got.dtype == dtype
    for t, x, g in zip(totals, xs, got):
        assert g == rounded(Fraction(float(t)) + Fraction(float(x)) ** 2, dtype), (t, x)
    assert fused_square_add(np.float32([1.0]), np.float32([np.inf]))[0] == np.inf


def test_the_exact_sum_is_not_torch_s():
    """Why the order matters: 2,000,000 float32 entries (issue 34's example)."""
    x = (np.random.default_rng(0).standard_normal(2_000_000) * 1e-4).astype(np.float32)
    assert norm_in_torch_order(x, 2) == np.float32(0.14139245)  # torch 2.13's
    assert np.sqrt(exact_sum(x * x)) == np.float32(0.14139695)


# ---- against torch, to the bit ----


@pytest.fixture(autouse=True)
def one_thread(request):
    """torch and chaingrad on one thread each: on more, a one-at-a-time sum of 32768 entries
    or more is split between the threads (``test_a_long_sum_...``)."""
    if "torch" not in request.fixturenames:
        yield
        return
    torch = request.getfixturevalue("torch")
    threads = torch.get_num_threads(), chaingrad.get_num_threads()
    torch.set_num_threads(1)
    chaingrad.set_num_threads(1)
    yield
    torch.set_num_threads(threads[0])
    chaingrad.set_num_threads(threads[1])


def same_bits(ours, theirs) -> bool:
    mine = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours)
    return mine.dtype == theirs.numpy().dtype and np.array_equal(mine, theirs.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [2, 1, math.inf, 3.0, 0.5, -1.0])
def test_vector_norm_of_a_vector_is_torch_s(torch, dtype, ord):
    rng = np.random.default_rng(2)
    for n in SIZES + ([2_000_000] if ord in (1, 2) else []):
        for scale in (1.0, 1e-4):
            x = (rng.standard_normal(n) * scale).astype(dtype)
            expected = torch.linalg.vector_norm(torch.from_numpy(x), ord)
            assert same_bits(norm_in_torch_order(x, ord), expected), n
            ours = chaingrad.linalg.vector_norm(chaingrad.tensor(x), ord)
            if ord in (2, 1, math.inf):
                assert same_bits(ours, expected), n
            else:  # the terms are chaingrad's |x| ** p, numpy's power: not always C's pow
                np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-6)


VIEWS = {  # the same view made on both sides: chaingrad's strides are torch's
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, 1),
    "every other": lambda t: t[:, ::2],
    "a slice": lambda t: t[1:, 1:],
    "permuted": lambda t: t.permute(2, 0, 1) if t.ndim == 3 else t.t(),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 33), (64, 100), (5, 4, 9), (3, 17, 6)])
@pytest.mark.parametrize("view", list(VIEWS))
def test_norms_over_dims_of_views_are_torch_s(torch, dtype, shape, view):
    base = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    ours, theirs = (VIEWS[view](lib.tensor(base)) for lib in (chaingrad, torch))
    dims = [None, 0, 1, -1, (0, 1), (0, -1)]
    for dim in dims:
        for ord in (2, 1):
            for keepdim in (False, True):
                expected = torch.linalg.vector_norm(theirs, ord, dim, keepdim)
                got = chaingrad.linalg.vector_norm(ours, ord, dim, keepdim)
                assert same_bits(got, expected), (dim, ord, keepdim)
        if dim is not None:
            assert same_bits(ours.norm(dim=dim), theirs.norm(dim=dim)), dim
            assert same_bits(chaingrad.norm(ours, 1, dim), torch.norm(theirs, 1, dim)), dim
    assert same_bits(ours.norm(), theirs.norm())
    assert same_bits(chaingrad.linalg.norm(ours), torch.linalg.norm(theirs))


@pytest.mark.parametrize("threads", [2, 3])
def test_a_long_sum_one_at_a_time_is_split_between_threads_as_torch_s(torch, threads):
    """On several threads torch cuts a one-at-a-time sum of one output (a 1-norm, a 2-norm of
    a strided view) into a piece per thread; told the same number, chaingrad cuts the same."""
    before = chaingrad.get_num_threads(), torch.get_num_threads()
    chaingrad.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        rng = np.random.default_rng(6)
        for n in (32767, 32768, 65537, 300001):
            x = rng.standard_normal(2 * n).astype(np.float32)
            for view in (lambda t, n=n: t[:n], lambda t: t[::2]):  # contiguous, strided
                ours, theirs = view(chaingrad.tensor(x)), view(torch.from_numpy(x))
                for ord in (1, 2):
                    expected = torch.linalg.vector_norm(theirs, ord)
                    assert same_bits(chaingrad.linalg.vector_norm(ours, ord), expected), n
    finally:
        chaingrad.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_one_entry_is_its_magnitude_as_torch_s(torch):
    """torch takes |x| where each norm has one entry: no square to overflow."""
    x = np.array([[1e20], [-3.0]], dtype=np.float32)
    expected = torch.linalg.vector_norm(torch.from_numpy(x), dim=1)
    assert same_bits(chaingrad.linalg.vector_norm(chaingrad.tensor(x), dim=1), expected)
    assert norm_in_torch_order(x[:1], 2) == np.float32(1e20)
    zero = np.array([0.0, 2.0, -3.0], dtype=np.float32)  # |0| ** -1 is inf, the norm 0
    assert same_bits(norm_in_torch_order(zero, -1.0),
                     torch.linalg.vector_norm(torch.from_numpy(zero), -1.0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [2, 1])
def test_the_gradient_is_the_composed_norm_s(torch, dtype, ord):
    """Only the order of the sum changed, not the rule: ord 1's gradient, sign(x) g, is
    torch's to the bit; ord 2's, x * (g / norm) from the composed norm, is within rounding
    of torch's x * g / norm."""
    x = np.random.default_rng(4).standard_normal((6, 1001)).astype(dtype)
    weights = np.random.default_rng(5).uniform(0.5, 1.5, 1001).astype(dtype)
    for dim in (None, 1, 0):
        ours = chaingrad.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        for lib, t in ((chaingrad, ours), (torch, theirs)):
            norm = lib.linalg.vector_norm(t, ord, dim)
            (norm * lib.tensor(weights[:norm.numel()]).reshape(norm.shape)).sum().backward()
        if ord == 1:
            assert np.array_equal(ours.grad.numpy(), theirs.grad.numpy()), dim
        else:
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(),
                                       rtol=2 * np.finfo(dtype).eps)


def test_a_norm_compiles_to_the_same_bits():
    x = chaingrad.tensor(np.random.default_rng(5).standard_normal((9, 13)).astype(np.float32),
                         requires_grad=True)

    def loss(t):
        return chaingrad.linalg.vector_norm(t, dim=1).sum() + t.norm(p=1) + t.t().norm()

    step = chaingrad.compile(loss)
    for fn in (loss, step, step):
        x.grad = None
        out = fn(x)
        out.backward()
        if fn is loss:
            expected = (out.item(), x.grad.numpy().copy())
        assert out.item() == expected[0]
        assert np.array_equal(x.grad.numpy(), expected[1])
    assert "sum_of_squares" in step.source and "sum_in_order" in step.source


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_lanes_twin_gives_the_references_bits(dtype, monkeypatch):
    """``lane_sums_of_squares``'s einsum twin against its reference (squares rounded, added
    row after row by numpy's reduce), bit for bit, for one block and for many at once; and
    a numpy whose einsum did not round each product runs the reference."""
    rng = np.random.default_rng(2)
    for shape in [(1, 8), (37, 8), (3, 1000, 8), (2, 5, 3, 8)]:
        steps = (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, shape)).astype(dtype)
        chaingrad.use_reference()
        try:
            expected = reduction_order.lane_sums_of_squares(steps)
        finally:
            chaingrad.use_reference(False)
        np.testing.assert_array_equal(reduction_order.lane_sums_of_squares(steps), expected,
                                      strict=True)
    monkeypatch.setattr(reduction_order, "einsum_rounds_each_product", lambda: False)
    monkeypatch.setattr(np, "einsum", None)  # the reference must not need it
    np.testing.assert_array_equal(reduction_order.lane_sums_of_squares(steps), expected)
