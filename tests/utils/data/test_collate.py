"""chaingrad/utils/data/collate.py: default_collate and default_convert against torch's,
the same batch of the same samples."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import chaingrad
from chaingrad.utils import data as cdata

Pair = collections.namedtuple("Pair", "x y")


def test_default_collate_is_torchs(torch, datasets, plain):
    def run(lib, d):
        samples = [datasets.samples(lib, d)[i] for i in range(3)]
        return [plain(d.default_collate(samples)),
                plain(d.default_collate([[1, 2.5], [3, 4.5]])),
                plain(d.default_collate([True, False])),
                plain(d.default_collate([np.float32(1.5), np.float32(2)])),
                plain(d.default_collate([b"a", b"b"])),
                plain(d.default_convert([np.array([1, 2]), (np.float64(3.0), "x")])),
                plain(d.default_convert(Pair(np.array([1]), 2)))]

    assert run(chaingrad, cdata) == run(torch, torch.utils.data)


@pytest.mark.parametrize("make, error, message", [
    (lambda: cdata.default_collate([object()]), TypeError, "default_collate: batch must"),
    (lambda: cdata.default_collate([[1, 2], [3]]), ValueError, "same number of fields"),
])
def test_bad_arguments_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make()
