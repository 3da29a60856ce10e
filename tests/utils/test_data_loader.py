"""chaingrad.utils.data against torch.utils.data: the same samples, batches and random
numbers for the same seed, in the main process and with worker processes."""

from __future__ import annotations

import collections
import gc
import multiprocessing
import os
import random
import signal
import time

import numpy as np
import pytest

import chaingrad
from chaingrad.errors import DataLoaderWorkerError
from chaingrad.utils import data as cdata

Point = collections.namedtuple("Point", "x y")


def plain(batch):
    """A batch as plain Python data, the same for torch's and chaingrad's: each tensor as
    ("tensor", its dtype's name, its numbers)."""
    if hasattr(batch, "tolist") and hasattr(batch, "dtype") and not isinstance(batch, np.ndarray):
        return ("tensor", str(batch.dtype).split(".")[-1], batch.tolist())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, *map(plain, batch))
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [plain(b) for b in batch])
    if isinstance(batch, dict):
        return {key: plain(value) for key, value in batch.items()}
    return batch


def library(torch, name):
    """(the library, its utils.data) for 'torch' or 'chaingrad'."""
    return (torch, torch.utils.data) if name == "torch" else (chaingrad, cdata)


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


class WhereAmI:
    """Each sample says which worker fetched it and what that worker's random generators
    give: Python's, numpy's and the library's."""

    def __init__(self, lib, n=8):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = (self.lib.utils.data.get_worker_info() if self.lib is not chaingrad
                else cdata.get_worker_info())
        worker = -1 if info is None else info.id
        seed = -1 if info is None else info.seed
        return (i, worker, seed, random.random(), float(np.random.rand()),
                float(self.lib.rand(1).item()))


class Stream:
    """An iterable dataset that splits range(start, end) between the workers, as torch's
    documentation shows (each worker takes a contiguous part)."""

    def __init__(self, lib, start, end):
        self.lib, self.start, self.end = lib, start, end

    def __iter__(self):
        info = self.lib.utils.data.get_worker_info() if self.lib is not chaingrad else \
            cdata.get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = -(-(self.end - self.start) // info.num_workers)
        first = self.start + info.id * per_worker
        return iter(range(first, min(first + per_worker, self.end)))


def make_stream(lib, data, start, end):
    base = data.IterableDataset
    return type("StreamDataset", (Stream, base), {})(lib, start, end)


def make_map(lib, data, cls, *args):
    return type(cls.__name__ + "Dataset", (cls, data.Dataset), {})(lib, *args)


def passes(lib, data, make_loader, epochs=2):
    """Every batch of ``epochs`` passes, then the next random number of the default
    generator (did the loader draw what torch's draws?)."""
    lib.manual_seed(1234)
    loader = make_loader(lib, data)
    seen = [[plain(batch) for batch in loader] for _ in range(epochs)]
    return seen, lib.rand(2).tolist()


LOADERS = {  # each: (lib, its utils.data, more DataLoader arguments) -> a DataLoader
    "shuffle": lambda lib, d, **kw: d.DataLoader(make_map(lib, d, Samples), batch_size=4,
                                                 shuffle=True, **kw),
    "sequential-drop-last": lambda lib, d, **kw: d.DataLoader(
        make_map(lib, d, Samples), batch_size=5, drop_last=True, **kw),
    "no-batches": lambda lib, d, **kw: d.DataLoader(make_map(lib, d, Samples, 5),
                                                    batch_size=None, shuffle=True, **kw),
    "replacement": lambda lib, d, **kw: d.DataLoader(
        make_map(lib, d, Samples, 10),
        sampler=d.RandomSampler(range(10), replacement=True, num_samples=70), batch_size=16,
        **kw),
    "generator": lambda lib, d, **kw: d.DataLoader(
        make_map(lib, d, Samples), batch_size=6, shuffle=True,
        generator=lib.Generator().manual_seed(5), **kw),
    "batch-sampler": lambda lib, d, **kw: d.DataLoader(
        make_map(lib, d, Samples), batch_sampler=d.BatchSampler(
            d.SubsetRandomSampler(list(range(0, 23, 2))), 3, drop_last=False), **kw),
    "weighted": lambda lib, d, **kw: d.DataLoader(
        make_map(lib, d, Samples, 4), batch_size=3,
        sampler=d.WeightedRandomSampler([0.1, 2.0, 0.0, 1.0], 9), **kw),
    "collate-fn": lambda lib, d, **kw: d.DataLoader(
        make_map(lib, d, Samples, 7), batch_size=3, collate_fn=lambda b: [s[0] for s in b],
        **kw),
    "iterable": lambda lib, d, **kw: d.DataLoader(make_stream(lib, d, 3, 12), batch_size=2,
                                                  **kw),
}


@pytest.mark.parametrize("case", list(LOADERS))
def test_batches_and_random_numbers_are_torchs(torch, case):
    ours = passes(chaingrad, cdata, LOADERS[case])
    assert ours == passes(torch, torch.utils.data, LOADERS[case])


@pytest.mark.parametrize("case", list(LOADERS))
def test_two_workers_give_the_batches_of_none_and_torchs(torch, case):
    def with_workers(lib, d):
        return LOADERS[case](lib, d, num_workers=2)

    ours = passes(chaingrad, cdata, with_workers)
    if case != "iterable":  # each worker iterates its own part of an iterable dataset
        assert ours == passes(chaingrad, cdata, LOADERS[case])
    assert ours == passes(torch, torch.utils.data, with_workers)


def test_workers_are_seeded_as_torchs_and_call_worker_init_fn(torch):
    def run(lib, d):
        calls = multiprocessing.get_context("fork").Manager().list()
        lib.manual_seed(99)
        loader = d.DataLoader(make_map(lib, d, WhereAmI), batch_size=2, num_workers=2,
                              worker_init_fn=calls.append)
        seen = [plain(batch) for batch in loader]
        return seen, sorted(calls), lib.rand(1).tolist()

    ours, theirs = run(chaingrad, cdata), run(torch, torch.utils.data)
    assert ours == theirs
    workers = [batch[1][1] for batch in ours[0]]
    assert workers == [("tensor", "int64", [0, 0]), ("tensor", "int64", [1, 1])] * 2
    assert ours[1] == [0, 1]


def test_a_map_dataset_in_the_main_process_sees_no_worker(torch):
    loader = cdata.DataLoader(make_map(chaingrad, cdata, WhereAmI, 2), batch_size=2)
    (batch,) = list(loader)
    assert batch[1].tolist() == [-1, -1]


def test_an_iterable_dataset_split_between_workers_is_torchs(torch):
    def run(lib, d):
        loader = d.DataLoader(make_stream(lib, d, 3, 14), batch_size=2, num_workers=2)
        return [plain(batch) for batch in loader]

    ours = run(chaingrad, cdata)
    assert ours == run(torch, torch.utils.data)
    assert sorted(x for b in ours for x in b[2]) == list(range(3, 14))


def test_persistent_workers_keep_torchs_order_over_epochs(torch):
    def run(lib, d):
        return d.DataLoader(make_map(lib, d, Samples, 11), batch_size=3, shuffle=True,
                            num_workers=2, persistent_workers=True)

    ours = passes(chaingrad, cdata, run, epochs=3)
    assert ours == passes(torch, torch.utils.data, run, epochs=3)


def test_persistent_workers_start_an_iterable_dataset_again_after_an_early_stop():
    loader = cdata.DataLoader(make_stream(chaingrad, cdata, 0, 10), batch_size=2,
                              num_workers=2, persistent_workers=True)
    first = next(iter(loader))
    assert first.tolist() == [0, 1]
    assert [b.tolist() for b in loader] == [[0, 1], [5, 6], [2, 3], [7, 8], [4], [9]]
    assert loader._iterator is iter(loader)


def test_in_order_false_gives_every_batch(torch):
    loader = cdata.DataLoader(make_map(chaingrad, cdata, Samples, 20), batch_size=3,
                              num_workers=2, in_order=False)
    ids = sorted(i for batch in loader for i in batch[4]["id"].tolist())
    assert ids == list(range(20))


@pytest.mark.slow  # starts fresh interpreters
def test_spawned_workers_give_the_same_batches():
    chaingrad.manual_seed(3)
    data = cdata.TensorDataset(chaingrad.arange(12).reshape(6, 2), chaingrad.arange(6))
    expected = [plain(b) for b in cdata.DataLoader(data, batch_size=4, shuffle=True)]
    chaingrad.manual_seed(3)
    loader = cdata.DataLoader(data, batch_size=4, shuffle=True, num_workers=2,
                              multiprocessing_context="spawn")
    assert [plain(b) for b in loader] == expected


class Failing:
    def __init__(self, lib, error):
        self.lib, self.error = lib, error

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise self.error
        return i


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("error, shown", [(ValueError("bad sample"), "bad sample"),
                                          (KeyError("missing"), "missing")])
def test_an_error_in_the_dataset_is_raised_with_its_type(workers, error, shown):
    loader = cdata.DataLoader(make_map(chaingrad, cdata, Failing, error), batch_size=2,
                              num_workers=workers)
    batches = iter(loader)
    assert next(batches).tolist() == [0, 1]
    with pytest.raises(type(error), match=shown) as caught:
        next(batches)
    if workers:
        assert "in DataLoader worker process 1" in str(caught.value)


def test_a_worker_that_dies_is_reported():
    class Dies(cdata.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(DataLoaderWorkerError, match=r"worker 0 \(pid \d+\) exited "
                                                    r"unexpectedly with exit code -9"):
        list(cdata.DataLoader(Dies(), num_workers=1))
    assert issubclass(DataLoaderWorkerError, RuntimeError)


@pytest.mark.slow  # waits out the timeout
def test_a_worker_that_sends_nothing_within_the_timeout_is_reported():
    class Stuck(cdata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(60)

    with pytest.raises(DataLoaderWorkerError, match="timed out after 0.5 seconds"):
        next(iter(cdata.DataLoader(Stuck(), num_workers=1, timeout=0.5)))


def test_leaving_a_loop_early_stops_the_workers():
    loader = cdata.DataLoader(make_map(chaingrad, cdata, Samples), batch_size=2, num_workers=2)
    batches = iter(loader)
    next(batches)
    workers = list(batches.workers.processes)
    assert all(p.is_alive() for p in workers)
    del batches
    gc.collect()
    assert not any(p.is_alive() for p in workers)


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


def test_default_collate_is_torchs(torch):
    def run(lib, d):
        samples = [make_map(lib, d, Samples)[i] for i in range(3)]
        return [plain(d.default_collate(samples)),
                plain(d.default_collate([[1, 2.5], [3, 4.5]])),
                plain(d.default_collate([True, False])),
                plain(d.default_collate([np.float32(1.5), np.float32(2)])),
                plain(d.default_collate([b"a", b"b"])),
                plain(d.default_convert([np.array([1, 2]), (np.float64(3.0), "x")])),
                plain(d.default_convert(Point(np.array([1]), 2)))]

    assert run(chaingrad, cdata) == run(torch, torch.utils.data)


def test_datasets(torch):
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
    stream = make_stream(chaingrad, cdata, 0, 5)
    assert isinstance(stream + stream, cdata.ChainDataset)


@pytest.mark.parametrize("make, error, message", [
    (lambda: cdata.TensorDataset(chaingrad.zeros(3), chaingrad.zeros(4)), ValueError,
     r"same size in dimension 0, got sizes \[3, 4\]"),
    (lambda: cdata.DataLoader(range(4), shuffle=True, sampler=[0, 1]), ValueError,
     "sampler and shuffle=True exclude each other"),
    (lambda: cdata.DataLoader(range(4), batch_size=2, batch_sampler=[[0]]), ValueError,
     "batch_sampler excludes"),
    (lambda: cdata.DataLoader(range(4), batch_size=None, drop_last=True), ValueError,
     "excludes drop_last"),
    (lambda: cdata.DataLoader(range(4), num_workers=-1), ValueError, "num_workers"),
    (lambda: cdata.DataLoader(range(4), prefetch_factor=2), ValueError, "prefetch_factor"),
    (lambda: cdata.DataLoader(range(4), persistent_workers=True), ValueError,
     "persistent_workers needs num_workers > 0"),
    (lambda: cdata.DataLoader(range(4), num_workers=1, multiprocessing_context="nope"),
     ValueError, "multiprocessing_context must be one of"),
    (lambda: cdata.DataLoader(range(4), multiprocessing_context="fork"), ValueError,
     "num_workers is 0"),
    (lambda: cdata.DataLoader(make_stream(chaingrad, cdata, 0, 3), shuffle=True), ValueError,
     "shuffle must not be given"),
    (lambda: cdata.DataLoader(range(4), batch_size=0), ValueError, "batch_size must be"),
    (lambda: cdata.RandomSampler(range(0)), ValueError, "num_samples must be a positive"),
    (lambda: cdata.random_split(range(10), [3, 3]), ValueError, "add up to 6"),
    (lambda: cdata.random_split(range(10), [1.5, -0.5]), ValueError, "not between 0 and 1"),
    (lambda: cdata.default_collate([object()]), TypeError, "default_collate: batch must"),
    (lambda: cdata.default_collate([[1, 2], [3]]), ValueError, "same number of fields"),
])
def test_bad_arguments_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_reached_as_torch_reaches_it():
    assert chaingrad.utils.data.DataLoader is cdata.DataLoader
    from chaingrad.utils.data import DataLoader, Dataset  # the import-changed form

    assert (DataLoader, Dataset) == (cdata.DataLoader, cdata.Dataset)
    from chaingrad.utils.data.dataloader import DataLoader  # makemore's and minGPT's form

    assert DataLoader is cdata.DataLoader is chaingrad.utils.data.dataloader.DataLoader
    with pytest.raises(AttributeError, match="chaingrad.utils.data has no 'StackDataset' yet"):
        cdata.StackDataset  # noqa: B018
    with pytest.raises(AttributeError, match="chaingrad.utils has no 'checkpoint' yet"):
        chaingrad.utils.checkpoint  # noqa: B018
