"""How a dataset becomes batches: the ``DataLoader``, and one pass over it in the main
process or through worker processes; torch's ``torch.utils.data.dataloader`` (which also
serves ``default_collate``, ``default_convert`` and ``get_worker_info``, as torch's does).

A ``DataLoader`` asks its sampler for indices, groups them into batches of ``batch_size``
(a ``BatchSampler``), fetches each sample and joins them with ``collate_fn``
(``default_collate`` stacks Tensors, numbers and numpy arrays into Tensors, and goes into
tuples, lists and dicts).

The random numbers are torch's for the same seed: ``shuffle=True`` draws a seed from the
default generator (or ``generator=``) at each pass and shuffles with ``randperm`` on a
generator started from it, and each pass draws one more number first, the base of the
workers' seeds, as torch's does even without workers. So after ``manual_seed(n)`` the
batches are torch's, in torch's order.

With ``num_workers=N``, N worker processes fetch and collate the batches (batch k by worker
k mod N), and the loader hands them out in the sampler's order: the same batches as
without workers (``worker.py`` says how the workers are seeded and run).

Example:
    >>> import chaingrad as torch
    >>> from chaingrad.utils.data import TensorDataset
    >>> xs = torch.arange(10.0).reshape(5, 2)
    >>> ys = torch.tensor([0, 1, 0, 1, 1])
    >>> for x, y in DataLoader(TensorDataset(xs, ys), batch_size=2):
    ...     print(x.tolist(), y.tolist())
    [[0.0, 1.0], [2.0, 3.0]] [0, 1]
    [[4.0, 5.0], [6.0, 7.0]] [0, 1]
    [[8.0, 9.0]] [1]
"""

from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.context
import os
import warnings
import weakref
from collections.abc import Callable, Iterator
from numbers import Real
from typing import Any, Generic, Protocol, TypeVar

from ...tensor_engine.generator import Generator
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .fetch import Fetcher
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, draw_seed
from .worker import Exhausted, Failure, Resume, Workers, get_worker_info

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)


class Indexable(Protocol[_T_co]):
    """What ``DataLoader`` takes as its dataset: samples by index (a ``Dataset``, an
    ``IterableDataset``, or a list, a range, ...)."""

    def __getitem__(self, index: int, /) -> _T_co:
        ...


class _Endless(Sampler[None]):
    """The sampler of an iterable dataset: None, for ever (the dataset says when to stop)."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


class DataLoader(Generic[_T]):
    """Batches from a dataset, as torch's ``DataLoader``.

    Args:
        dataset: A map-style ``Dataset`` (anything with ``__getitem__`` and ``__len__``)
            or an ``IterableDataset``.
        batch_size: Samples per batch (default 1); None gives the samples one by one,
            through ``default_convert``.
        shuffle: A new random order at each pass (a ``RandomSampler``).
        sampler: The order of the indices, instead of ``shuffle``.
        batch_sampler: Batches of indices, instead of ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``.
        num_workers: Worker processes that fetch the batches (0: the main process).
        collate_fn: Joins a list of samples into a batch (default ``default_collate``).
        pin_memory: Accepted; it changes nothing (chaingrad has only the CPU's memory).
        drop_last: Leave out the last batch if it is short.
        timeout: Seconds to wait for a worker's batch before giving up (0: no limit).
        worker_init_fn: Called in each worker with its id, after seeding.
        multiprocessing_context: 'fork', 'spawn', 'forkserver' or a context (default: the
            platform's); with 'spawn' the dataset and functions must pickle.
        generator: The generator for ``shuffle`` and the workers' base seed.
        prefetch_factor: Batches each worker works ahead (default 2 with workers).
        persistent_workers: Keep the workers (and their copies of the dataset) from one
            pass to the next.
        pin_memory_device: Accepted (deprecated in torch).
        in_order: False hands the batches out as the workers finish them.

    Raises:
        ValueError: arguments that contradict each other (torch's rules), or out of range.

    Example:
        >>> import chaingrad as torch
        >>> _ = torch.manual_seed(0)
        >>> [batch.tolist() for batch in DataLoader(range(6), batch_size=4, shuffle=True)]
        [[0, 4, 3, 5], [2, 1]]
    """

    def __init__(self, dataset: Indexable[_T], batch_size: int | None = 1,
                 shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or \
                num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be an int >= 0 (0: load in the "
                             f"main process), got {num_workers!r}")
        if not isinstance(timeout, Real) or timeout < 0:
            raise ValueError(f"DataLoader: timeout must be a number >= 0, got {timeout!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor needs num_workers > 0 (it is how many "
                             "batches each worker loads ahead)")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and (isinstance(prefetch_factor, bool) or not
                                            isinstance(prefetch_factor, int) or
                                            prefetch_factor < 1):
            raise ValueError(f"DataLoader: prefetch_factor must be a positive int, got "
                             f"{prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers needs num_workers > 0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader: an IterableDataset orders its own samples: "
                                     f"{name} must not be given, got {name}={value!r}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True exclude each other (the "
                             "sampler decides the order)")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler excludes batch_size, shuffle, "
                                 "sampler and drop_last (it makes the batches itself)")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None (no batches) excludes drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _Endless()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = _context(multiprocessing_context, num_workers)
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator: _LoaderIterator | None = None
        _warn_about_too_many_workers(num_workers)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _LoaderIterator:
        """A pass over the dataset (with ``persistent_workers``, the same workers'
        next pass)."""
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _LoaderIterator(self)
            else:
                self._iterator.restart()
            return self._iterator
        return _LoaderIterator(self)

    def __len__(self) -> int:
        """The number of batches of a pass (for an IterableDataset, as torch estimates it:
        its length divided by the batch size)."""
        if not self._iterable:
            return len(self._index_sampler)
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class _LoaderIterator:
    """One pass over a DataLoader: in the main process, or through worker processes."""

    def __init__(self, loader: DataLoader) -> None:
        # what a pass reads of its loader, taken now, as torch's iterator takes it: no
        # reference back to the loader, which holds a persistent iterator (a cycle would
        # keep the workers alive after the loader is dropped, until a garbage collection)
        self.index_sampler, self.num_workers = loader._index_sampler, loader.num_workers
        self.timeout, self.prefetch_factor = loader.timeout, loader.prefetch_factor
        self.in_order, self.persistent = loader.in_order, loader.persistent_workers
        self.indices = iter(self.index_sampler)  # a shuffle draws at its first index
        self.base_seed = draw_seed(loader.generator)  # torch draws it even without workers
        self.workers: Workers | None = None
        fetcher_args = (loader.dataset, loader._iterable, loader._auto_collation,
                        loader.collate_fn, loader.drop_last)
        if loader.num_workers == 0:
            self.fetcher = Fetcher(*fetcher_args)
            return
        self.workers = Workers(fetcher_args, loader.num_workers, self.base_seed,
                               loader.worker_init_fn, loader.multiprocessing_context)
        self._finalizer = weakref.finalize(self, self.workers.shutdown)
        self._start_pass()

    def __iter__(self) -> _LoaderIterator:
        return self

    def __len__(self) -> int:
        return len(self.index_sampler)

    def __next__(self) -> Any:
        if self.workers is None:
            return self.fetcher.fetch(next(self.indices))
        return self._next_from_workers()

    def restart(self) -> None:
        """Begin the next pass with the same (persistent) workers: each starts its copy of
        the dataset again, and what the last pass left unread is dropped."""
        self.indices = iter(self.index_sampler)
        for tasks in self.workers.tasks:  # type: ignore[union-attr] (persistent: there are)
            tasks.put(Resume())
        waiting = self.num_workers
        while waiting:  # until every worker has answered the Resume (the rest is stale)
            number, _ = self.workers.get(self.timeout, [True] * self.num_workers)
            waiting -= isinstance(number, Resume)
        self._start_pass()

    # -- with workers: tasks numbered in the sampler's order, handed out in that order --

    def _start_pass(self) -> None:
        n = self.num_workers
        self.sent = self.received = 0  # tasks sent; the next task to hand out
        self.tasks: dict[int, tuple] = {}  # number -> (worker,) or (worker, answer)
        self.alive = [True] * n  # False: the worker's iterable dataset has ended
        self.load = [0] * n  # tasks each worker holds
        self.turns = itertools.cycle(range(n))
        for _ in range(self.prefetch_factor * n):
            self._send_next()

    def _send_next(self) -> None:
        """Send the next index to the next worker in turn (to a worker with fewer tasks
        than its share, if ``in_order`` is False)."""
        try:
            index = next(self.indices)
        except StopIteration:
            return
        share = self.prefetch_factor * self.num_workers
        for _ in range(self.num_workers):
            worker = next(self.turns)
            if self.alive[worker] and (self.in_order or
                                       self.load[worker] < share // sum(self.alive)):
                break
        else:
            return  # every worker's dataset has ended
        self.workers.tasks[worker].put((self.sent, index))  # type: ignore[union-attr]
        self.tasks[self.sent] = (worker,)
        self.load[worker] += 1
        self.sent += 1

    def _next_from_workers(self) -> Any:
        while True:
            while self.received < self.sent:  # skip the tasks of workers that have ended
                task = self.tasks.get(self.received)
                if task is not None and (len(task) == 2 or self.alive[task[0]]):
                    break
                self.tasks.pop(self.received, None)
                self.received += 1
            else:
                if not self.persistent:
                    self._finalizer()
                raise StopIteration
            if len(self.tasks[self.received]) == 2:  # arrived earlier, kept for its turn
                worker, answer = self.tasks.pop(self.received)
                self.received += 1
                return self._hand_out(answer, worker)
            number, answer = self.workers.get(self.timeout, self.alive)  # type: ignore
            if isinstance(answer, Exhausted):
                self._retire(answer.worker_id)
                self._send_next()
                continue
            if number == self.received or not self.in_order:
                worker = self.tasks.pop(number)[0]
                self.received += number == self.received
                return self._hand_out(answer, worker)
            self.tasks[number] += (answer,)

    def _retire(self, worker: int) -> None:
        self.alive[worker] = False
        if not self.persistent:
            self.workers.tasks[worker].put(None)  # type: ignore[union-attr]

    def _hand_out(self, answer: Any, worker: int) -> Any:
        self.load[worker] -= 1
        self._send_next()
        if isinstance(answer, Failure):
            answer.reraise()
        return answer


def _context(given: Any, num_workers: int) -> Any:
    """A multiprocessing context from a start method's name or a context; None: default."""
    if given is None:
        return None
    if num_workers == 0:
        raise ValueError(f"DataLoader: multiprocessing_context is for worker processes, but "
                         f"num_workers is 0 (got multiprocessing_context={given!r})")
    if isinstance(given, str):
        methods = multiprocessing.get_all_start_methods()
        if given not in methods:
            raise ValueError(f"DataLoader: multiprocessing_context must be one of {methods}, "
                             f"got {given!r}")
        return multiprocessing.get_context(given)
    if not isinstance(given, multiprocessing.context.BaseContext):
        raise TypeError(f"DataLoader: multiprocessing_context must be a start method's name "
                        f"or a multiprocessing context, got {type(given).__name__}")
    return given


def _warn_about_too_many_workers(num_workers: int) -> None:
    """torch's warning when there are more workers than CPUs this process may use."""
    if num_workers == 0:
        return
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if cpus is not None and num_workers > cpus:
        warnings.warn(f"DataLoader: {num_workers} worker processes for {cpus} CPUs; more "
                      "workers than CPUs can make loading slower, not faster", stacklevel=3)
