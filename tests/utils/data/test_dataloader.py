"""chaingrad/utils/data/dataloader.py: the DataLoader against torch's, the same batches and
random numbers for the same seed, in the main process and with worker processes; its
arguments checked as torch checks them; reached where torch's programs reach it."""

from __future__ import annotations

import gc

import pytest

import chaingrad
from chaingrad.utils import data as cdata


@pytest.fixture
def passes(plain):
    """``passes(lib, data, make_loader, epochs=2)``: every batch of ``epochs`` passes (as
    plain data), then the next random numbers of the default generator (did the loader draw
    what torch's draws?)."""
    def run(lib, data, make_loader, epochs=2):
        lib.manual_seed(1234)
        loader = make_loader(lib, data)
        seen = [[plain(batch) for batch in loader] for _ in range(epochs)]
        return seen, lib.rand(2).tolist()

    return run


LOADERS = {  # each: (lib, its utils.data, the datasets fixture, more arguments) -> a DataLoader
    "shuffle": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d), batch_size=4, shuffle=True, **kw),
    "sequential-drop-last": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d), batch_size=5, drop_last=True, **kw),
    "no-batches": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d, 5), batch_size=None, shuffle=True, **kw),
    "replacement": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d, 10),
        sampler=d.RandomSampler(range(10), replacement=True, num_samples=70), batch_size=16,
        **kw),
    "generator": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d), batch_size=6, shuffle=True,
        generator=lib.Generator().manual_seed(5), **kw),
    "batch-sampler": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d), batch_sampler=d.BatchSampler(
            d.SubsetRandomSampler(list(range(0, 23, 2))), 3, drop_last=False), **kw),
    "weighted": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d, 4), batch_size=3,
        sampler=d.WeightedRandomSampler([0.1, 2.0, 0.0, 1.0], 9), **kw),
    "collate-fn": lambda lib, d, made, **kw: d.DataLoader(
        made.samples(lib, d, 7), batch_size=3, collate_fn=lambda b: [s[0] for s in b], **kw),
    "iterable": lambda lib, d, made, **kw: d.DataLoader(
        made.stream(lib, d, 3, 12), batch_size=2, **kw),
}


def loader(case, datasets, **more):
    """``LOADERS[case]`` as ``(lib, its utils.data) -> a DataLoader``, with ``more``
    arguments."""
    return lambda lib, d: LOADERS[case](lib, d, datasets, **more)


@pytest.mark.parametrize("case", list(LOADERS))
def test_batches_and_random_numbers_are_torchs(torch, datasets, passes, case):
    ours = passes(chaingrad, cdata, loader(case, datasets))
    assert ours == passes(torch, torch.utils.data, loader(case, datasets))


@pytest.mark.parametrize("case", list(LOADERS))
def test_two_workers_give_the_batches_of_none_and_torchs(torch, datasets, passes, case):
    with_workers = loader(case, datasets, num_workers=2)
    ours = passes(chaingrad, cdata, with_workers)
    if case != "iterable":  # each worker iterates its own part of an iterable dataset
        assert ours == passes(chaingrad, cdata, loader(case, datasets))
    assert ours == passes(torch, torch.utils.data, with_workers)


def test_persistent_workers_keep_torchs_order_over_epochs(torch, datasets, passes):
    def run(lib, d):
        return d.DataLoader(datasets.samples(lib, d, 11), batch_size=3, shuffle=True,
                            num_workers=2, persistent_workers=True)

    ours = passes(chaingrad, cdata, run, epochs=3)
    assert ours == passes(torch, torch.utils.data, run, epochs=3)


def test_persistent_workers_start_an_iterable_dataset_again_after_an_early_stop(datasets):
    loader = cdata.DataLoader(datasets.stream(chaingrad, cdata, 0, 10), batch_size=2,
                              num_workers=2, persistent_workers=True)
    first = next(iter(loader))
    assert first.tolist() == [0, 1]
    assert [b.tolist() for b in loader] == [[0, 1], [5, 6], [2, 3], [7, 8], [4], [9]]
    assert loader._iterator is iter(loader)


def test_dropping_a_loader_stops_its_persistent_workers_at_once(datasets):
    """As torch's: the workers stop when the loader is dropped, with no garbage collection
    (a process that forked them would otherwise keep them, and the pipes they inherited,
    until one ran)."""
    loader = cdata.DataLoader(datasets.stream(chaingrad, cdata, 0, 10), batch_size=2,
                              num_workers=2, persistent_workers=True)
    next(iter(loader))
    processes = loader._iterator.workers.processes
    gc.disable()
    try:
        del loader
        for process in processes:
            process.join(timeout=30)
        assert not any(process.is_alive() for process in processes)
    finally:
        gc.enable()


def test_in_order_false_gives_every_batch(torch, datasets):
    loader = cdata.DataLoader(datasets.samples(chaingrad, cdata, 20), batch_size=3,
                              num_workers=2, in_order=False)
    ids = sorted(i for batch in loader for i in batch[4]["id"].tolist())
    assert ids == list(range(20))


@pytest.mark.parametrize("make, error, message", [
    (lambda made: cdata.DataLoader(range(4), shuffle=True, sampler=[0, 1]), ValueError,
     "sampler and shuffle=True exclude each other"),
    (lambda made: cdata.DataLoader(range(4), batch_size=2, batch_sampler=[[0]]), ValueError,
     "batch_sampler excludes"),
    (lambda made: cdata.DataLoader(range(4), batch_size=None, drop_last=True), ValueError,
     "excludes drop_last"),
    (lambda made: cdata.DataLoader(range(4), num_workers=-1), ValueError, "num_workers"),
    (lambda made: cdata.DataLoader(range(4), prefetch_factor=2), ValueError,
     "prefetch_factor"),
    (lambda made: cdata.DataLoader(range(4), persistent_workers=True), ValueError,
     "persistent_workers needs num_workers > 0"),
    (lambda made: cdata.DataLoader(range(4), num_workers=1, multiprocessing_context="nope"),
     ValueError, "multiprocessing_context must be one of"),
    (lambda made: cdata.DataLoader(range(4), multiprocessing_context="fork"), ValueError,
     "num_workers is 0"),
    (lambda made: cdata.DataLoader(made.stream(chaingrad, cdata, 0, 3), shuffle=True),
     ValueError, "shuffle must not be given"),
    (lambda made: cdata.DataLoader(range(4), batch_size=0), ValueError, "batch_size must be"),
])
def test_bad_arguments_are_named(datasets, make, error, message):
    with pytest.raises(error, match=message):
        make(datasets)


def test_reached_as_torch_reaches_it():
    assert chaingrad.utils.data.DataLoader is cdata.DataLoader
    from chaingrad.utils.data import DataLoader, Dataset  # the import-changed form

    assert (DataLoader, Dataset) == (cdata.DataLoader, cdata.Dataset)
    from chaingrad.utils.data.dataloader import DataLoader  # makemore's and minGPT's form

    assert DataLoader is cdata.DataLoader is chaingrad.utils.data.dataloader.DataLoader
    from chaingrad.utils.data.dataloader import default_collate, get_worker_info

    assert (default_collate, get_worker_info) == (cdata.default_collate, cdata.get_worker_info)
    with pytest.raises(AttributeError, match="chaingrad.utils.data has no 'StackDataset' yet"):
        cdata.StackDataset  # noqa: B018
    with pytest.raises(AttributeError, match="chaingrad.utils has no 'checkpoint' yet"):
        chaingrad.utils.checkpoint  # noqa: B018
