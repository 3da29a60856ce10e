"""torch.utils.data: datasets, the samplers that order them, and the ``DataLoader`` that
turns them into batches, in the main process or in worker processes.

A map-style ``Dataset`` has ``__getitem__(i)`` and ``__len__()``; a ``DataLoader`` asks its
sampler for indices, groups them into batches of ``batch_size`` (a ``BatchSampler``), fetches
each sample and joins them with ``collate_fn`` (``default_collate`` stacks Tensors, numbers
and numpy arrays into Tensors, and goes into tuples, lists and dicts)::

    for x, y in DataLoader(TensorDataset(X, Y), batch_size=32, shuffle=True):
        ...                                  # x: X[indices of the batch], y: Y[...]

The random numbers are torch's for the same seed: ``shuffle=True`` draws a seed from the
default generator (or ``generator=``) at each pass and shuffles with ``randperm`` on a
generator started from it, and each pass draws one more number first, the base of the
workers' seeds, as torch's does even without workers. So after ``manual_seed(n)`` the
batches are torch's, in torch's order.

With ``num_workers=N``, N worker processes fetch and collate the batches (batch k by worker
k mod N), and the loader hands them out in the sampler's order: the same batches as
without workers. Worker i starts by seeding ``random``, chaingrad's generator and numpy's
global generator from ``base_seed + i`` as torch's worker does, then calls
``worker_init_fn(i)``; ``get_worker_info()`` tells the dataset which worker it runs in.

Example:
    >>> import chaingrad as torch
    >>> from chaingrad.utils.data import DataLoader, TensorDataset
    >>> xs = torch.arange(10.0).reshape(5, 2)
    >>> ys = torch.tensor([0, 1, 0, 1, 1])
    >>> for x, y in DataLoader(TensorDataset(xs, ys), batch_size=2):
    ...     print(x.tolist(), y.tolist())
    [[0.0, 1.0], [2.0, 3.0]] [0, 1]
    [[4.0, 5.0], [6.0, 7.0]] [0, 1]
    [[8.0, 9.0]] [1]
"""

from __future__ import annotations

import bisect
import collections.abc
import contextlib
import copy
import itertools
import math
import multiprocessing
import multiprocessing.context
import os
import queue
import random
import sys
import time
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import numpy as np

from ... import torch_names
from ...errors import DataLoaderWorkerError
from ...tensor_engine import Tensor, stack
from ...tensor_engine.dtypes import float64, int64
from ...tensor_engine.factories import as_tensor, empty, multinomial, randint, randperm, tensor
from ...tensor_engine.generator import Generator, default_generator, manual_seed

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo",
           "default_collate", "default_convert", "get_worker_info", "random_split"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Indexable(Protocol[T_co]):
    """What ``DataLoader`` takes as its dataset: samples by index (a ``Dataset``, an
    ``IterableDataset``, or a list, a range, ...)."""

    def __getitem__(self, index: int, /) -> T_co:
        ...

# ---- datasets ----


class Dataset(Generic[T]):
    """A map from indices to samples: a subclass writes ``__getitem__(index)`` and, for
    the default samplers, ``__len__()``. ``a + b`` is their ``ConcatDataset``.

    Example:
        >>> class Squares(Dataset):
        ...     def __len__(self):
        ...         return 4
        ...     def __getitem__(self, i):
        ...         return i * i
        >>> [batch.tolist() for batch in DataLoader(Squares(), batch_size=3)]
        [[0, 1, 4], [9]]
    """

    def __getitem__(self, index: Any) -> T:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __add__(self, other: Dataset[T]) -> ConcatDataset[T]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T]):
    """A stream of samples: a subclass writes ``__iter__()``. With worker processes each
    worker iterates over its own copy, so the dataset should split the stream between them
    (``get_worker_info()`` says which worker asks, and how many there are). ``a + b`` is
    their ``ChainDataset``.

    Example:
        >>> class Countdown(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(3, 0, -1))
        >>> [batch.tolist() for batch in DataLoader(Countdown(), batch_size=2)]
        [[3, 2], [1]]
    """

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")

    def __add__(self, other: Dataset[T]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Tensors of the same length, sample i being the tuple of their rows i.

    Raises:
        ValueError: no tensor is given, or their first dimensions differ.

    Example:
        >>> import chaingrad as torch
        >>> data = TensorDataset(torch.tensor([[1, 2], [3, 4]]), torch.tensor([7, 8]))
        >>> len(data), data[1]
        (2, (tensor([3, 4]), tensor(8)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor, got none")
        sizes = [_length_of(t, "TensorDataset") for t in tensors]
        if len(set(sizes)) != 1:
            raise ValueError(f"TensorDataset: the tensors must have the same size in "
                             f"dimension 0, got sizes {sizes}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return _length_of(self.tensors[0], "TensorDataset")


class ConcatDataset(Dataset[T]):
    """Map-style datasets one after another: index ``len(first)`` is the second's 0.

    Example:
        >>> both = ConcatDataset([[1, 2, 3], [10, 20]])
        >>> len(both), both[3], both[-1]
        (5, 10, 20)
    """

    def __init__(self, datasets: Iterable[Dataset[T]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: expected at least one dataset, got none")
        for i, dataset in enumerate(self.datasets):
            if isinstance(dataset, IterableDataset):
                raise TypeError(f"ConcatDataset: dataset {i} is an IterableDataset, which has "
                                "no indices: chain those with ChainDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> T:
        if index < 0:
            if -index > len(self):
                raise IndexError(f"ConcatDataset: index {index} is out of range for "
                                 f"{len(self)} samples")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} is out of range for "
                             f"{len(self)} samples")
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another.

    Example:
        >>> class Upto(IterableDataset):
        ...     def __init__(self, n):
        ...         self.n = n
        ...     def __iter__(self):
        ...         return iter(range(self.n))
        >>> list(ChainDataset([Upto(2), Upto(3)]))
        [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for i, dataset in enumerate(self.datasets):
            if not isinstance(dataset, IterableDataset):
                raise TypeError(f"ChainDataset: dataset {i} is not an IterableDataset, got "
                                f"{type(dataset).__name__}")
            yield from dataset

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class Subset(Dataset[T]):
    """The samples of ``dataset`` at ``indices``, in that order.

    Example:
        >>> part = Subset(["a", "b", "c", "d"], [3, 1])
        >>> len(part), part[0], part.__getitems__([0, 1])
        (2, 'd', ['d', 'b'])
    """

    def __init__(self, dataset: Dataset[T], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> T:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list[int]) -> list[T]:
        """A batch's samples at once (the DataLoader asks for them so), through the
        dataset's own ``__getitems__`` when it has one."""
        picked = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(picked)  # type: ignore[attr-defined]
        return [self.dataset[i] for i in picked]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset[T], lengths: Sequence[int | float],
                 generator: Generator | None = default_generator) -> list[Subset[T]]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given ``lengths``,
    or of the given fractions of its length (summing to 1: each gets ``floor(fraction *
    len)``, and the samples left over go one each to the subsets in turn). The split is
    torch's for the same generator: the indices of ``randperm(len(dataset))``, cut in order.

    Example:
        >>> import chaingrad as torch
        >>> train, test = random_split(range(10), [0.7, 0.3],
        ...                            generator=torch.Generator().manual_seed(42))
        >>> list(train), list(test)
        ([2, 6, 1, 8, 4, 5, 0], [9, 3, 7])
    """
    lengths = list(lengths)
    for i, length in enumerate(lengths):
        if isinstance(length, bool) or not isinstance(length, Real):
            raise TypeError(f"random_split: lengths must be numbers, got "
                            f"{type(length).__name__} at index {i}")
    total = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:  # fractions
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split: the fraction at index {i} is {fraction}, "
                                 "not between 0 and 1")
        counts = [math.floor(total * fraction) for fraction in lengths]
        for i in range(total - sum(counts)):
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(f"random_split: the split at index {i} is empty", stacklevel=2)
        lengths = counts
    for i, length in enumerate(lengths):
        if not isinstance(length, Integral) or length < 0:
            raise ValueError(f"random_split: lengths must be whole numbers >= 0 (or "
                             f"fractions summing to 1), got {length!r} at index {i}")
    if sum(lengths) != total:
        raise ValueError(f"random_split: the lengths add up to {sum(lengths)}, but the "
                         f"dataset has {total} samples")
    order = randperm(total, generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - length:end]) for end, length in zip(ends, lengths)]


# ---- samplers: the order of the indices ----


class Sampler(Generic[T]):
    """An iterable of indices (or of batches of indices) into a dataset: a subclass writes
    ``__iter__()`` and usually ``__len__()``."""

    def __iter__(self) -> Iterator[T]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1.

    Example:
        >>> list(SequentialSampler("abc"))
        [0, 1, 2]
    """

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """The indices of ``data_source`` in a random order: a new permutation at each pass,
    or, with ``replacement``, ``num_samples`` indices drawn independently.

    Each pass draws from ``generator``; without one, it draws a seed from the default
    generator and uses a new generator started from it (so that ``manual_seed`` decides
    every pass), as torch's does. The numbers are torch's: ``randperm(n)`` for each
    permutation (the last one cut to ``num_samples % n``), ``randint(n)`` in blocks of 32
    with replacement.

    Args:
        data_source: The dataset (anything with a length).
        replacement: Draw with replacement.
        num_samples: How many indices a pass gives (default: the length).
        generator: The generator to draw from.

    Example:
        >>> import chaingrad as torch
        >>> list(RandomSampler(range(5), generator=torch.Generator().manual_seed(0)))
        [4, 0, 1, 3, 2]
    """

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be True or False, got "
                            f"{replacement!r}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        n = self.num_samples
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"RandomSampler: num_samples must be a positive int, got "
                             f"{n!r}")

    @property
    def num_samples(self) -> int:
        """How many indices a pass gives."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = Generator().manual_seed(draw_seed(None))
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), dtype=int64, generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), dtype=int64,
                               generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in a random order (``randperm`` of their count), new at each
    pass.

    Example:
        >>> import chaingrad as torch
        >>> list(SubsetRandomSampler([10, 20, 30], generator=torch.Generator().manual_seed(0)))
        [30, 10, 20]
    """

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``
    (``multinomial``, torch's numbers), with or without replacement.

    Example:
        >>> import chaingrad as torch
        >>> g = torch.Generator().manual_seed(0)
        >>> list(WeightedRandomSampler([1.0, 2.0, 0.0, 3.0], 8, generator=g))
        [3, 3, 1, 3, 3, 3, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or \
                num_samples <= 0:
            raise ValueError(f"WeightedRandomSampler: num_samples must be a positive int, "
                             f"got {num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement must be True or False, got "
                             f"{replacement!r}")
        self.weights = as_tensor(weights, dtype=float64)
        if self.weights.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights must be a 1-d sequence, got "
                             f"shape {tuple(self.weights.shape)}")
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """The indices of ``sampler`` in lists of ``batch_size`` (the last one shorter, or left
    out with ``drop_last``).

    Example:
        >>> list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size must be a positive int, got "
                             f"{batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be True or False, got "
                             f"{drop_last!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while True:
            batch = list(itertools.islice(indices, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


# ---- collation: a list of samples -> a batch ----


def default_collate(batch: Sequence[Any]) -> Any:
    """Join a list of samples into a batch, as torch's ``default_collate``:

    - Tensors are stacked (a new first dimension); numpy arrays become Tensors, stacked;
    - Python floats become a float64 Tensor, ints an int64 one (bools a bool one), numpy
      scalars a Tensor of their dtype;
    - strings and bytes stay a list;
    - a tuple or list of fields is collated field by field (a tuple gives a list, a
      namedtuple a namedtuple), a dict key by key.

    Raises:
        TypeError: a sample of another kind.
        ValueError: samples that are lists of different lengths.

    Example:
        >>> import chaingrad as torch
        >>> default_collate([(torch.tensor([1.0, 2.0]), 0), (torch.tensor([3.0, 4.0]), 1)])
        [tensor([[1., 2.],
                [3., 4.]]), tensor([0, 1])]
    """
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch), 0)
    if isinstance(first, np.ndarray):
        if first.dtype.kind in "USO":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found an array of {first.dtype}")
        return default_collate([as_tensor(array) for array in batch])
    if isinstance(first, (np.bool_, np.number)):
        return as_tensor(np.array(batch))
    if isinstance(first, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(first, int):  # bools too, as in torch: a bool tensor
        return tensor(list(batch))
    if isinstance(first, (str, bytes)):
        return batch
    if isinstance(first, collections.abc.Mapping):
        return _rebuilt_mapping(first, {key: default_collate([sample[key] for sample in batch])
                                        for key in first})
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        sizes = {len(sample) for sample in batch}
        if len(sizes) != 1:
            raise ValueError(f"default_collate: each sample of the batch must have the same "
                             f"number of fields, got {sorted(sizes)}")
        fields = [default_collate(field) for field in zip(*batch)]  # strings stay tuples
        return fields if isinstance(first, tuple) else _rebuilt_sequence(first, fields)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(first)}")


def default_convert(data: Any) -> Any:
    """What a ``DataLoader`` without batches (``batch_size=None``) does to each sample:
    numpy arrays and scalars become Tensors, inside tuples, lists and dicts too; anything
    else is left as it is.

    Example:
        >>> import numpy as np
        >>> default_convert({"x": np.array([1, 2]), "name": "emma"})
        {'x': tensor([1, 2]), 'name': 'emma'}
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in "USO" else as_tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuilt_mapping(like: Any, values: dict) -> Any:
    """``values`` in a mapping of ``like``'s type where it can be made (torch's rule)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuilt_sequence(like: Any, items: list) -> Any:
    """``items`` in a sequence of ``like``'s type where it can be made (torch's rule)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return items


# ---- worker processes ----


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


class _Exhausted:
    """A worker's answer when its copy of an iterable dataset has no more samples."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _Failure:
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


class _Resume:
    """Sent to a persistent worker at the start of a new pass: start the dataset again."""


class _Fetcher:
    """Turns an index (or a batch of indices) into a sample (or a collated batch): the
    same in the main process and in a worker."""

    def __init__(self, dataset: Any, iterable: bool, batched: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.dataset, self.iterable, self.batched = dataset, iterable, batched
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.items = iter(dataset) if iterable else None
        self.ended = False

    def fetch(self, index: Any) -> Any:
        """The collated batch for ``index``; StopIteration when an iterable dataset ends."""
        if self.iterable:
            return self.collate_fn(self._next_items(index))
        if not self.batched:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        samples = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        return self.collate_fn(samples)

    def _next_items(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.batched:
            return next(self.items)
        samples = list(itertools.islice(self.items, len(index)))
        if len(samples) < len(index):
            self.ended = True
        if not samples or (self.drop_last and len(samples) < len(index)):
            raise StopIteration
        return samples


_POLL = 5.0  # seconds between a worker's checks that the main process is alive
_CHECK = 1.0  # seconds between the main process's checks that its workers are alive, and
# how long a worker gets to finish its batch when the workers are stopped


def _worker_loop(fetcher_args: tuple, base_seed: int, worker_init_fn: Callable | None,
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
        failed: _Failure | None = None
        fetcher = None
        try:
            if worker_init_fn is not None:
                worker_init_fn(worker_id)
            fetcher = _Fetcher(*fetcher_args)
        except Exception:
            failed = _Failure(worker_id)  # sent as the answer to the first task
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
            if isinstance(task, _Resume):
                fetcher, ended = _Fetcher(*fetcher_args), False
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
                        answer = _Failure(worker_id)
                    else:
                        answer, ended = _Exhausted(worker_id), True
                except Exception:
                    answer = _Failure(worker_id)
            results.put((number, answer))
            del answer, index, task
    except KeyboardInterrupt:  # Ctrl-C reaches the workers too: the main process reports it
        return


class _Workers:
    """The worker processes of one iterator and their queues: a task queue each, one
    results queue."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self.results = context.Queue()
        self.done = context.Event()
        self.tasks: list[Any] = []
        self.processes: list[Any] = []
        fetcher_args = (loader.dataset, loader._iterable, loader._auto_collation,
                        loader.collate_fn, loader.drop_last)
        for worker_id in range(loader.num_workers):
            tasks = context.Queue()
            tasks.cancel_join_thread()  # a worker may exit with tasks left: do not wait
            process = context.Process(
                target=_worker_loop, daemon=True,
                args=(fetcher_args, base_seed, loader.worker_init_fn, worker_id,
                      loader.num_workers, tasks, self.results, self.done))
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


# ---- the loader ----


def draw_seed(generator: Generator | None) -> int:
    """A seed drawn as torch's data loading draws one: ``random_()`` of an int64 scalar from
    ``generator`` (the default generator if None), a number in [0, 2**63)."""
    return int(empty((), dtype=int64).random_(generator=generator).item())


class _Endless(Sampler[None]):
    """The sampler of an iterable dataset: None, for ever (the dataset says when to stop)."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


class DataLoader(Generic[T]):
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

    def __init__(self, dataset: Indexable[T], batch_size: int | None = 1,
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
        self.loader = loader
        self.indices = iter(loader._index_sampler)  # a shuffle draws at its first index
        self.base_seed = draw_seed(loader.generator)  # torch draws it even without workers
        self.workers: _Workers | None = None
        if loader.num_workers == 0:
            self.fetcher = _Fetcher(loader.dataset, loader._iterable, loader._auto_collation,
                                    loader.collate_fn, loader.drop_last)
            return
        self.workers = _Workers(loader, self.base_seed)
        self._finalizer = weakref.finalize(self, self.workers.shutdown)
        self._start_pass()

    def __iter__(self) -> _LoaderIterator:
        return self

    def __len__(self) -> int:
        return len(self.loader._index_sampler)

    def __next__(self) -> Any:
        if self.workers is None:
            return self.fetcher.fetch(next(self.indices))
        return self._next_from_workers()

    def restart(self) -> None:
        """Begin the next pass with the same (persistent) workers: each starts its copy of
        the dataset again, and what the last pass left unread is dropped."""
        self.indices = iter(self.loader._index_sampler)
        for tasks in self.workers.tasks:  # type: ignore[union-attr] (persistent: there are)
            tasks.put(_Resume())
        waiting = self.loader.num_workers
        while waiting:  # until every worker has answered the _Resume (the rest is stale)
            number, _ = self.workers.get(self.loader.timeout, [True] * self.loader.num_workers)
            waiting -= isinstance(number, _Resume)
        self._start_pass()

    # -- with workers: tasks numbered in the sampler's order, handed out in that order --

    def _start_pass(self) -> None:
        n = self.loader.num_workers
        self.sent = self.received = 0  # tasks sent; the next task to hand out
        self.tasks: dict[int, tuple] = {}  # number -> (worker,) or (worker, answer)
        self.alive = [True] * n  # False: the worker's iterable dataset has ended
        self.load = [0] * n  # tasks each worker holds
        self.turns = itertools.cycle(range(n))
        for _ in range(self.loader.prefetch_factor * n):
            self._send_next()

    def _send_next(self) -> None:
        """Send the next index to the next worker in turn (to a worker with fewer tasks
        than its share, if ``in_order`` is False)."""
        try:
            index = next(self.indices)
        except StopIteration:
            return
        share = self.loader.prefetch_factor * self.loader.num_workers
        for _ in range(self.loader.num_workers):
            worker = next(self.turns)
            if self.alive[worker] and (self.loader.in_order or
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
                if not self.loader.persistent_workers:
                    self._finalizer()
                raise StopIteration
            if len(self.tasks[self.received]) == 2:  # arrived earlier, kept for its turn
                worker, answer = self.tasks.pop(self.received)
                self.received += 1
                return self._hand_out(answer, worker)
            number, answer = self.workers.get(self.loader.timeout, self.alive)  # type: ignore
            if isinstance(answer, _Exhausted):
                self._retire(answer.worker_id)
                self._send_next()
                continue
            if number == self.received or not self.loader.in_order:
                worker = self.tasks.pop(number)[0]
                self.received += number == self.received
                return self._hand_out(answer, worker)
            self.tasks[number] += (answer,)

    def _retire(self, worker: int) -> None:
        self.alive[worker] = False
        if not self.loader.persistent_workers:
            self.workers.tasks[worker].put(None)  # type: ignore[union-attr]

    def _hand_out(self, answer: Any, worker: int) -> Any:
        self.load[worker] -= 1
        self._send_next()
        if isinstance(answer, _Failure):
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


def _length_of(t: Any, where: str) -> int:
    if not isinstance(t, Tensor):
        raise TypeError(f"{where}: expected Tensors, got {type(t).__name__}")
    if t.ndim == 0:
        raise ValueError(f"{where}: a 0-d tensor has no first dimension to index")
    return int(t.shape[0])


# torch's module of DataLoader, for imports from there: loaded on first use
_SUBMODULES = ("dataloader",)

if TYPE_CHECKING:  # what __getattr__ serves, for type checkers (tests/test_typing.py)
    from . import dataloader as dataloader
else:
    __getattr__ = torch_names.submodules_on_use("chaingrad.utils.data", _SUBMODULES,
                                                torch_names.DATA)
