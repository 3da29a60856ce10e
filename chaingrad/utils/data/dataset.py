"""What a dataset is: the map-style ``Dataset`` (samples by index) and the
``IterableDataset`` (a stream), the datasets made of others (``TensorDataset``,
``ConcatDataset``, ``ChainDataset``, ``Subset``) and ``random_split``; torch's
``torch.utils.data.dataset``.

Example:
    >>> import chaingrad as torch
    >>> data = TensorDataset(torch.arange(6).reshape(3, 2), torch.tensor([0, 1, 0]))
    >>> len(data + data), Subset(data, [2, 0])[0]
    (6, (tensor([4, 5]), tensor(0)))
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from numbers import Integral, Real
from typing import Any, Generic, TypeVar

from ...tensor_engine import Tensor
from ...tensor_engine.factories import randperm
from ...tensor_engine.generator import Generator, default_generator

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "Subset",
           "TensorDataset", "random_split"]

_T = TypeVar("_T")


class Dataset(Generic[_T]):
    """A map from indices to samples: a subclass writes ``__getitem__(index)`` and, for
    the default samplers, ``__len__()``. ``a + b`` is their ``ConcatDataset``.

    Example:
        >>> class Squares(Dataset):
        ...     def __len__(self):
        ...         return 4
        ...     def __getitem__(self, i):
        ...         return i * i
        >>> from chaingrad.utils.data import DataLoader
        >>> [batch.tolist() for batch in DataLoader(Squares(), batch_size=3)]
        [[0, 1, 4], [9]]
    """

    def __getitem__(self, index: Any) -> _T:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __add__(self, other: Dataset[_T]) -> ConcatDataset[_T]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T]):
    """A stream of samples: a subclass writes ``__iter__()``. With worker processes each
    worker iterates over its own copy, so the dataset should split the stream between them
    (``get_worker_info()`` says which worker asks, and how many there are). ``a + b`` is
    their ``ChainDataset``.

    Example:
        >>> class Countdown(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(3, 0, -1))
        >>> from chaingrad.utils.data import DataLoader
        >>> [batch.tolist() for batch in DataLoader(Countdown(), batch_size=2)]
        [[3, 2], [1]]
    """

    def __iter__(self) -> Iterator[_T]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")

    def __add__(self, other: Dataset[_T]) -> ChainDataset:  # type: ignore[override]
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


class ConcatDataset(Dataset[_T]):
    """Map-style datasets one after another: index ``len(first)`` is the second's 0.

    Example:
        >>> both = ConcatDataset([[1, 2, 3], [10, 20]])
        >>> len(both), both[3], both[-1]
        (5, 10, 20)
    """

    def __init__(self, datasets: Iterable[Dataset[_T]]) -> None:
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

    def __getitem__(self, index: int) -> _T:
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


class Subset(Dataset[_T]):
    """The samples of ``dataset`` at ``indices``, in that order.

    Example:
        >>> part = Subset(["a", "b", "c", "d"], [3, 1])
        >>> len(part), part[0], part.__getitems__([0, 1])
        (2, 'd', ['d', 'b'])
    """

    def __init__(self, dataset: Dataset[_T], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> _T:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices: list[int]) -> list[_T]:
        """A batch's samples at once (the DataLoader asks for them so), through the
        dataset's own ``__getitems__`` when it has one."""
        picked = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(picked)  # type: ignore[attr-defined]
        return [self.dataset[i] for i in picked]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset[_T], lengths: Sequence[int | float],
                 generator: Generator | None = default_generator) -> list[Subset[_T]]:
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


def _length_of(t: Any, where: str) -> int:
    """The length of ``t``'s first dimension, for ``TensorDataset``; a typed error naming
    ``where`` if ``t`` is no Tensor or has no dimension."""
    if not isinstance(t, Tensor):
        raise TypeError(f"{where}: expected Tensors, got {type(t).__name__}")
    if t.ndim == 0:
        raise ValueError(f"{where}: a 0-d tensor has no first dimension to index")
    return int(t.shape[0])

