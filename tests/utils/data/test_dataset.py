"""chaingrad/utils/data/dataset.py: the datasets, and random_split against torch's (the
same split for the same generator)."""

from __future__ import annotations

import pytest

import chaingrad
from chaingrad.utils import data as cdata


@pytest.mark.parametrize("lengths", [[3, 7], [0.5, 0.5], [0.3, 0.3, 0.4], [0.25] * 4,
                                     [1.0], [0, 10]])
def test_random_split_is_torchs(torch, lengths):
    def run(lib, d):
        g = lib.Generator().manual_seed(42)
        lib.manual_seed(1)
        first = [list(s) for s in d.random_split(range(10), lengths, generator=g)]
        second = [list(s) for s in d.random_split(range(10), lengths)]
        return first, second, lib.rand(1).tolist()

    assert run(chaingrad, cdata) == run(torch, torch.utils.data)


def test_datasets(datasets):
    xs, ys = chaingrad.arange(10).reshape(5, 2), chaingrad.arange(5)
    data = cdata.TensorDataset(xs, ys)
    assert len(data) == 5 and [t.tolist() for t in data[2]] == [[4, 5], 2]
    both = data + cdata.TensorDataset(xs[:2], ys[:2])
    assert isinstance(both, cdata.ConcatDataset) and len(both) == 7
    assert both[5][1].item() == 0 and both[-1][1].item() == 1
    part = cdata.Subset(data, [4, 0])
    assert [t.tolist() for t in part[0]] == [[8, 9], 4]
    assert [s[1].item() for s in part.__getitems__([1, 0])] == [0, 4]
    loader = cdata.DataLoader(part, batch_size=2)
    assert [t.tolist() for t in next(iter(loader))] == [[[8, 9], [0, 1]], [4, 0]]
    assert len(cdata.DataLoader(data, batch_size=2)) == 3
    assert len(cdata.DataLoader(data, batch_size=2, drop_last=True)) == 2
    stream = datasets.stream(chaingrad, cdata, 0, 5)
    assert isinstance(stream + stream, cdata.ChainDataset)


@pytest.mark.parametrize("make, error, message", [
    (lambda: cdata.TensorDataset(chaingrad.zeros(3), chaingrad.zeros(4)), ValueError,
     r"same size in dimension 0, got sizes \[3, 4\]"),
    (lambda: cdata.random_split(range(10), [3, 3]), ValueError, "add up to 6"),
    (lambda: cdata.random_split(range(10), [1.5, -0.5]), ValueError, "not between 0 and 1"),
])
def test_bad_arguments_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_reached_at_torchs_path():
    from chaingrad.utils.data.dataset import Dataset, TensorDataset, random_split

    assert (Dataset, TensorDataset, random_split) == (
        cdata.Dataset, cdata.TensorDataset, cdata.random_split)
    assert chaingrad.utils.data.dataset.Subset is cdata.Subset
