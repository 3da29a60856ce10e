"""chaingrad/utils/data/sampler.py: the samplers against torch's, the same indices for the
same seed and the same numbers drawn from the default generator."""

from __future__ import annotations

import pytest

import chaingrad
from chaingrad.utils import data as cdata


def test_samplers_are_torchs(torch):
    def run(lib, d):
        lib.manual_seed(0)
        g = lib.Generator().manual_seed(17)
        return [list(d.RandomSampler(range(7))), list(d.RandomSampler(range(7), generator=g)),
                list(d.RandomSampler(range(5), num_samples=12)),
                list(d.RandomSampler(range(5), num_samples=3)),
                list(d.RandomSampler(range(9), replacement=True, num_samples=40)),
                list(d.SubsetRandomSampler([4, 8, 15, 16, 23, 42])),
                list(d.WeightedRandomSampler([1.0, 5.0, 0.5, 2.0], 3, replacement=False)),
                list(d.BatchSampler(d.SequentialSampler(range(10)), 4, drop_last=True)),
                len(d.BatchSampler(range(10), 4, drop_last=False)),
                lib.rand(1).tolist()]

    assert run(chaingrad, cdata) == run(torch, torch.utils.data)


@pytest.mark.parametrize("make, error, message", [
    (lambda: cdata.RandomSampler(range(0)), ValueError, "num_samples must be a positive"),
])
def test_bad_arguments_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_reached_at_torchs_path():
    from chaingrad.utils.data.sampler import BatchSampler, RandomSampler

    assert (BatchSampler, RandomSampler) == (cdata.BatchSampler, cdata.RandomSampler)
    assert chaingrad.utils.data.sampler.Sampler is cdata.Sampler
