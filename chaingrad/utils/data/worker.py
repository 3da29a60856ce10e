"""What runs in a ``DataLoader``'s worker processes, and how the main process runs them:
each worker seeds its random generators as torch's does, calls ``worker_init_fn``, then
fetches the batches it is sent (``get_worker_info()`` tells the dataset which worker it runs
in); ``Workers`` starts them, collects their answers, notices one that died or is late, and
stops them. torch's ``torch.utils.data._utils.worker``.

Example:
    >>> get_worker_info() is None  # in the main process
    True
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import DataLoaderWorkerError
from ...tensor_engine.generator import manual_seed
from .fetch import Fetcher

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns in a worker process: its ``id`` (0 ..
    ``num_workers`` - 1), the number of workers, its ``seed`` (``base_seed + id``) and its
    copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None  # set in a worker process only


def get_worker_info() -> WorkerInfo | None:
    """The ``WorkerInfo`` of the worker process this runs in, or None in the main process.

    Example:
        >>> get_worker_info() is None
        True
    """
    return _worker_info


def seed_worker(base_seed: int, worker_id: int) -> int:
    """Seed a worker as torch seeds one: Python's ``random``, chaingrad's default generator
    (torch's) with ``base_seed + worker_id``, and numpy's global generator with the four
    32-bit words that numpy's ``SeedSequence`` makes of ``[worker_id, the low and high
    halves of base_seed, 0]`` (the hash torch's ``_generate_state`` computes); returns the
    seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    words = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    np.random.seed(np.random.SeedSequence(words).generate_state(4))
    return seed


class Exhausted:
    """A worker's answer when its copy of an iterable dataset has no more samples."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class Failure:
    """An exception raised in a worker, carried to the main process as text (the
    exception itself may not pickle) and raised there again."""

    def __init__(self, worker_id: int) -> None:
        error = sys.exc_info()[1]
        self.kind = type(error)
        self.text = (f"Caught {self.kind.__name__} in DataLoader worker process "
                     f"{worker_id}.\nOriginal {traceback.format_exc()}")

    def reraise(self) -> None:
        """Raise the worker's exception again: its type with the worker's traceback as the
        message (a RuntimeError for a type that cannot be made from one message)."""
        if self.kind is KeyError:  # KeyError shows its message as a repr: keep it readable
            raise KeyError(_ReadableMessage(self.text))
        try:
            error = self.kind(self.text)
        except Exception:
            error = None
        if not isinstance(error, BaseException):
            raise RuntimeError(self.text)
        raise error


class _ReadableMessage(str):
    def __repr__(self) -> str:
        return str(self)


class Resume:
    """Sent to a persistent worker at the start of a new pass: start the dataset again."""


_POLL = 5.0  # seconds between a worker's checks that the main process is alive
_CHECK = 1.0  # seconds between the main process's checks that its workers are alive, and
# how long a worker gets to finish its batch when the workers are stopped


def worker_loop(fetcher_args: tuple, base_seed: int, worker_init_fn: Callable | None,
                worker_id: int, num_workers: int, tasks: Any, results: Any,
                done: Any) -> None:
    """A worker process: seed, run ``worker_init_fn``, then fetch each task ``(number,
    index)`` from ``tasks`` and put ``(number, batch)`` on ``results``, until told to stop
    (None) or the main process is gone."""
    global _worker_info
    parent = os.getppid()
    try:
        seed = seed_worker(base_seed, worker_id)
        dataset = fetcher_args[0]
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        failed: Failure | None = None
        fetcher = None
        try:
            if worker_init_fn is not None:
                worker_init_fn(worker_id)
            fetcher = Fetcher(*fetcher_args)
        except Exception:
            failed = Failure(worker_id)  # sent as the answer to the first task
        ended = False
        while True:
            try:
                task = tasks.get(timeout=_POLL)
            except queue.Empty:
                if os.getppid() != parent:  # the main process died: nobody to answer
                    return
                continue
            if task is None:
                return
            if isinstance(task, Resume):
                fetcher, ended = Fetcher(*fetcher_args), False
                results.put((task, None))
                continue
            if done.is_set() or ended:
                continue
            number, index = task
            if failed is not None:
                answer: Any = failed
                failed = None
            else:
                try:
                    answer = fetcher.fetch(index)  # type: ignore[union-attr]
                except StopIteration:
                    if not fetcher.iterable:  # type: ignore[union-attr]
                        answer = Failure(worker_id)
                    else:
                        answer, ended = Exhausted(worker_id), True
                except Exception:
                    answer = Failure(worker_id)
            results.put((number, answer))
            del answer, index, task
    except KeyboardInterrupt:  # Ctrl-C reaches the workers too: the main process reports it
        return


class Workers:
    """The worker processes of one ``DataLoader`` iterator and their queues: a task queue
    each, one results queue. A task is ``(number, index)`` put on a worker's queue; its
    answer comes back on ``results`` as ``(number, batch)``, or a ``Failure`` or an
    ``Exhausted`` in the batch's place.

    Args:
        fetcher_args: The ``Fetcher``'s arguments, for each worker to make its own.
        num_workers: How many processes to start.
        base_seed: Worker i seeds its generators from ``base_seed + i``.
        worker_init_fn: Called in each worker with its id, after seeding.
        context: The multiprocessing context to start them with (None: the default).

    Example:
        >>> workers = Workers((["a", "b", "c"], False, True, list, False), num_workers=1,
        ...                   base_seed=0, worker_init_fn=None)
        >>> workers.tasks[0].put((0, [2, 0]))
        >>> workers.get(timeout=60, alive=[True])
        (0, ['c', 'a'])
        >>> workers.shutdown()
    """

    def __init__(self, fetcher_args: tuple, num_workers: int, base_seed: int,
                 worker_init_fn: Callable | None, context: Any = None) -> None:
        context = context or multiprocessing.get_context()
        self.results = context.Queue()
        self.done = context.Event()
        self.tasks: list[Any] = []
        self.processes: list[Any] = []
        for worker_id in range(num_workers):
            tasks = context.Queue()
            tasks.cancel_join_thread()  # a worker may exit with tasks left: do not wait
            process = context.Process(
                target=worker_loop, daemon=True,
                args=(fetcher_args, base_seed, worker_init_fn, worker_id, num_workers, tasks,
                      self.results, self.done))
            process.start()
            self.tasks.append(tasks)
            self.processes.append(process)
        self.closed = False

    def get(self, timeout: float, alive: list[bool]) -> tuple[Any, Any]:
        """The next answer of any worker; DataLoaderWorkerError if a worker that has work
        died, or nothing came within ``timeout`` seconds (0: wait as long as it takes)."""
        start = time.monotonic()
        while True:
            wait = _CHECK if timeout <= 0 else min(_CHECK, timeout - (time.monotonic() - start))
            try:
                return self.results.get(timeout=max(wait, 0.0))
            except queue.Empty:
                pass
            for worker_id, process in enumerate(self.processes):
                if alive[worker_id] and not process.is_alive():
                    self.shutdown()
                    raise DataLoaderWorkerError(
                        f"DataLoader worker {worker_id} (pid {process.pid}) exited "
                        f"unexpectedly with exit code {process.exitcode} (killed, or out of "
                        "memory?)") from None
            if timeout > 0 and time.monotonic() - start >= timeout:
                self.shutdown()
                raise DataLoaderWorkerError(f"DataLoader timed out after {timeout} seconds "
                                            "waiting for a batch from its workers") from None

    def shutdown(self) -> None:
        """Stop the workers (each finishes the batch it is on), then kill any that stay."""
        if self.closed:
            return
        self.closed = True
        self.done.set()
        for tasks in self.tasks:
            with contextlib.suppress(OSError, ValueError):  # a queue already closed
                tasks.put(None)
        for process in self.processes:
            process.join(timeout=_CHECK)
            if process.is_alive():  # still on a batch nobody will read
                process.terminate()
                process.join(timeout=_CHECK)
        for tasks in self.tasks:
            tasks.close()
        self.results.cancel_join_thread()
        self.results.close()
