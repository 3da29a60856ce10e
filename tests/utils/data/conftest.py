"""The datasets and the batch comparison that the tests of chaingrad.utils.data share,
as fixtures: each dataset made for either library, torch or chaingrad, so that one test
runs the same code on both and compares what comes out."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest

Point = collections.namedtuple("Point", "x y")


def _plain(batch: Any) -> Any:
    """A batch as plain Python data, the same for torch's and chaingrad's: each tensor as
    ("tensor", its dtype's name, its numbers)."""
    if hasattr(batch, "tolist") and hasattr(batch, "dtype") and not isinstance(batch, np.ndarray):
        return ("tensor", str(batch.dtype).split(".")[-1], batch.tolist())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, *map(_plain, batch))
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [_plain(b) for b in batch])
    if isinstance(batch, dict):
        return {key: _plain(value) for key, value in batch.items()}
    return batch


@pytest.fixture(scope="session")
def plain() -> Any:
    """``plain(batch)``: a batch of either library as plain Python data, to compare."""
    return _plain


class Samples:
    """A map-style dataset of mixed samples (made for either library): a tensor, an int, a
    float, a numpy array, a dict, a string and a namedtuple."""

    def __init__(self, lib, n=23):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return (self.lib.tensor([i, 2 * i]), i % 3, i / 2, np.array([i, -i], np.float32),
                {"id": i, "even": i % 2 == 0}, f"name{i}", Point(i, np.int16(i)))


class Stream:
    """An iterable dataset that splits range(start, end) between the workers, as torch's
    documentation shows (each worker takes a contiguous part)."""

    def __init__(self, lib, start, end):
        self.lib, self.start, self.end = lib, start, end

    def __iter__(self):
        info = self.lib.utils.data.get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = -(-(self.end - self.start) // info.num_workers)
        first = self.start + info.id * per_worker
        return iter(range(first, min(first + per_worker, self.end)))


class Datasets:
    """Makers of datasets for either library: ``data`` is that library's ``utils.data``,
    and each dataset is a subclass of its ``Dataset`` or ``IterableDataset``."""

    @staticmethod
    def map(lib, data, cls, *args):
        """A map-style dataset of ``cls`` (whose ``__init__`` takes ``lib, *args``)."""
        return type(cls.__name__ + "Dataset", (cls, data.Dataset), {})(lib, *args)

    @staticmethod
    def samples(lib, data, n=23):
        """``n`` mixed samples (``Samples``): every kind that ``default_collate`` takes."""
        return Datasets.map(lib, data, Samples, n)

    @staticmethod
    def stream(lib, data, start, end):
        """range(start, end) as an iterable dataset, split between the workers."""
        return type("StreamDataset", (Stream, data.IterableDataset), {})(lib, start, end)


@pytest.fixture(scope="session")
def datasets() -> Datasets:
    """The makers of the shared datasets (``Datasets``), for either library."""
    return Datasets()
