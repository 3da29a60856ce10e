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
