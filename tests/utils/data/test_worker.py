"""chaingrad/utils/data/worker.py: the worker processes, seeded as torch's, each told which
it is; an error in one raised in the main process with its type; one that dies, or is late,
reported; all of them stopped when the loop is left."""

from __future__ import annotations

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


class WhereAmI:
    """Each sample says which worker fetched it and what that worker's random generators
    give: Python's, numpy's and the library's."""

    def __init__(self, lib, n=8):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = self.lib.utils.data.get_worker_info()
        worker = -1 if info is None else info.id
        seed = -1 if info is None else info.seed
        return (i, worker, seed, random.random(), float(np.random.rand()),
                float(self.lib.rand(1).item()))


def test_workers_are_seeded_as_torchs_and_call_worker_init_fn(torch, datasets, plain):
    def run(lib, d):
        calls = multiprocessing.get_context("fork").Manager().list()
        lib.manual_seed(99)
        loader = d.DataLoader(datasets.map(lib, d, WhereAmI), batch_size=2, num_workers=2,
                              worker_init_fn=calls.append)
        seen = [plain(batch) for batch in loader]
        return seen, sorted(calls), lib.rand(1).tolist()

    ours, theirs = run(chaingrad, cdata), run(torch, torch.utils.data)
    assert ours == theirs
    workers = [batch[1][1] for batch in ours[0]]
    assert workers == [("tensor", "int64", [0, 0]), ("tensor", "int64", [1, 1])] * 2
    assert ours[1] == [0, 1]


def test_a_map_dataset_in_the_main_process_sees_no_worker(torch, datasets):
    loader = cdata.DataLoader(datasets.map(chaingrad, cdata, WhereAmI, 2), batch_size=2)
    (batch,) = list(loader)
    assert batch[1].tolist() == [-1, -1]


def test_an_iterable_dataset_split_between_workers_is_torchs(torch, datasets, plain):
    def run(lib, d):
        loader = d.DataLoader(datasets.stream(lib, d, 3, 14), batch_size=2, num_workers=2)
        return [plain(batch) for batch in loader]

    ours = run(chaingrad, cdata)
    assert ours == run(torch, torch.utils.data)
    assert sorted(x for b in ours for x in b[2]) == list(range(3, 14))


@pytest.mark.slow  # starts fresh interpreters
def test_spawned_workers_give_the_same_batches(plain):
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
def test_an_error_in_the_dataset_is_raised_with_its_type(datasets, workers, error, shown):
    loader = cdata.DataLoader(datasets.map(chaingrad, cdata, Failing, error), batch_size=2,
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


def test_leaving_a_loop_early_stops_the_workers(datasets):
    loader = cdata.DataLoader(datasets.samples(chaingrad, cdata), batch_size=2, num_workers=2)
    batches = iter(loader)
    next(batches)
    workers = list(batches.workers.processes)
    assert all(p.is_alive() for p in workers)
    del batches
    gc.collect()
    assert not any(p.is_alive() for p in workers)
