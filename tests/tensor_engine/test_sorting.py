"""chaingrad/tensor_engine/sorting.py: sort, argsort, topk, nonzero, histc and histogram
against torch (sorting at ties, the bins' edges), and the gradient of what sort and topk
pick."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
from chaingrad import Tensor


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_ops_without_a_gradient_give_torchs_numbers(torch, dtype) -> None:
    rng = np.random.default_rng(0)
    array = np.round(rng.normal(size=(4, 6)), 1).astype(dtype)  # rounded: ties to sort
    array[1, 2] = array[0, 0] = 0
    ours, theirs = chaingrad.tensor(array), torch.tensor(array)  # the dtype kept
    for dim in (0, 1, -1):
        for descending in (False, True):
            mine = chaingrad.argsort(ours, dim, descending, stable=True)
            assert mine.tolist() == torch.argsort(theirs, stable=True, dim=dim,
                                                  descending=descending).tolist()
            values, indices = ours.sort(dim, descending)
            expected = theirs.sort(stable=True, dim=dim, descending=descending)
            assert values.tolist() == expected.values.tolist()
            assert indices.tolist() == expected.indices.tolist()
    assert ours.nonzero().tolist() == theirs.nonzero().tolist()
    assert [t.tolist() for t in chaingrad.nonzero(ours, as_tuple=True)] == [
        t.tolist() for t in theirs.nonzero(as_tuple=True)]
    for args in ((), (7,), (5, -1.0, 1.0), (4, 0.5, 0.5)):
        assert np.array_equal(ours.histc(*args).numpy(), theirs.histc(*args).numpy()), args
    weight = rng.uniform(0, 2, size=array.shape).astype(dtype)
    for bins, kwargs in ((5, {}), (3, {"range": (-1.0, 2.0)}), (4, {"density": True}),
                         (6, {"weight": weight}), (np.array([-1.0, 0.0, 0.5, 3.0]), {})):
        edges = (chaingrad.tensor(bins.astype(dtype)), torch.tensor(bins.astype(dtype))) \
            if isinstance(bins, np.ndarray) else (bins, bins)
        mine = chaingrad.histogram(ours, edges[0], **kwargs)
        theirs_kwargs = kwargs | ({"weight": torch.tensor(weight)} if "weight" in kwargs else {})
        expected = torch.histogram(theirs, edges[1], **theirs_kwargs)
        assert np.array_equal(mine.bin_edges.numpy(), expected.bin_edges.numpy()), kwargs
        np.testing.assert_allclose(mine.hist.numpy(), expected.hist.numpy(), rtol=1e-6)
    one = chaingrad.tensor(np.array([2.0], dtype=dtype)).histogram(2)
    assert one.hist.tolist() == [0.0, 1.0] and one.bin_edges.tolist() == [1.5, 2.0, 2.5]


def test_a_stable_topk_and_the_gradient_of_what_it_picks() -> None:
    x = Tensor([2.0, 5.0, 5.0, 1.0], requires_grad=True)
    top = chaingrad.topk(x, 2)
    assert top.indices.tolist() == [1, 2] and top.values.tolist() == [5.0, 5.0]
    low = x.topk(1, largest=False)
    (top.values.sum() + low.values.sum() * 10).backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 10.0]


def _same(ours, theirs) -> bool:
    """Two results (a tensor, or a tuple of them) alike: values, shapes and dtypes."""
    if isinstance(theirs, tuple):
        return len(ours) == len(theirs) and all(map(_same, ours, theirs))
    return (ours.shape == tuple(theirs.shape) and str(ours.dtype).split(".")[1]
            == str(theirs.dtype).split(".")[1]
            and np.array_equal(ours.numpy(), theirs.numpy(), equal_nan=True))


@pytest.mark.parametrize("array", [
    np.array([[3.0, 1.0], [3.0, 1.0], [2.0, 2.0]]), np.array([3, 1, 2, 1, 3]),
    np.array([True, False, True]), np.array(5.0, dtype=np.float32),
    np.array([np.nan, 1.0, np.nan, 1.0]), np.zeros((2, 0))], ids=str)
def test_unique_gives_torchs_values_inverse_and_counts(torch, array) -> None:
    ours, theirs = chaingrad.tensor(array), torch.tensor(array)
    for flags in [(False, False), (True, False), (False, True), (True, True)]:
        for sorted_ in (True, False):  # torch sorts on the CPU either way
            assert _same(chaingrad.unique(ours, sorted_, *flags),
                         torch.unique(theirs, sorted_, *flags)), flags
            # by dim: not for nan (torch orders it by accident) nor empty (the test below)
            by_dim = array.size and not np.isnan(array).any()
            for dim in range(-array.ndim, array.ndim) if by_dim else ():
                assert _same(ours.unique(sorted_, *flags, dim=dim),
                             theirs.unique(sorted_, *flags, dim=dim)), (flags, dim)


def test_bincount_gives_torchs_counts_sums_and_dtypes(torch) -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, size=50)
    weights = rng.normal(size=50)
    for ours_args, theirs_args in [((), ()), ((None, 9), (None, 9))] + [
            ((chaingrad.tensor(weights.astype(d)),), (torch.tensor(weights.astype(d)),))
            for d in (np.float32, np.float64, np.float16, np.int64)]:
        assert _same(chaingrad.bincount(chaingrad.tensor(x), *ours_args),
                     torch.bincount(torch.tensor(x), *theirs_args))
    assert _same(chaingrad.tensor(np.array([], dtype=np.int64)).bincount(),
                 torch.tensor(np.array([], dtype=np.int64)).bincount())
    assert _same(chaingrad.tensor(np.array([1, 2], dtype=np.uint8)).bincount(minlength=5),
                 torch.tensor(np.array([1, 2], dtype=np.uint8)).bincount(minlength=5))


@pytest.mark.parametrize(("call", "error"), [
    (lambda t: t.bincount(t.tensor([-1])), "bincount only supports 1-d non-negative integral"),
    (lambda t: t.bincount(t.tensor([[1]])), "bincount only supports 1-d non-negative integral"),
    (lambda t: t.bincount(t.tensor([1.0])), "\"bincount_cpu\" not implemented for 'Float'"),
    (lambda t: t.bincount(t.tensor([1, 2]), t.ones(3)), "weights should be 1-d and have the same"),
    (lambda t: t.bincount(t.tensor([1]), minlength=-1), "minlength should be >= 0"),
    (lambda t: t.unique(t.ones(2, 2), dim=2), "ut of range"),
    (lambda t: t.unique(t.ones(2, 0), dim=0), "There are 0 sized dimensions, and they aren't"),
])
def test_unique_and_bincount_refuse_what_torch_refuses(torch, call, error) -> None:
    with pytest.raises(Exception, match=error.replace("(", r"\(")) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value), match=error.replace("(", r"\(")):
        call(chaingrad)
