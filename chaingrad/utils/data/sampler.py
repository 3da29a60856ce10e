"""In what order a ``DataLoader`` asks for the samples: the samplers that give the indices
(``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``,
``WeightedRandomSampler``) and the ``BatchSampler`` that groups them into batches; torch's
``torch.utils.data.sampler``, with torch's random numbers for the same seed.

Example:
    >>> import chaingrad as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> list(BatchSampler(RandomSampler(range(5), generator=g), batch_size=2, drop_last=False))
    [[4, 0], [1, 3], [2]]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...tensor_engine.dtypes import float64, int64
from ...tensor_engine.factories import as_tensor, empty, multinomial, randint, randperm
from ...tensor_engine.generator import Generator

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

_T = TypeVar("_T")


class Sampler(Generic[_T]):
    """An iterable of indices (or of batches of indices) into a dataset: a subclass writes
    ``__iter__()`` and usually ``__len__()``."""

    def __iter__(self) -> Iterator[_T]:
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


def draw_seed(generator: Generator | None) -> int:
    """A seed drawn as torch's data loading draws one: ``random_()`` of an int64 scalar from
    ``generator`` (the default generator if None), a number in [0, 2**63).

    A ``RandomSampler`` without a generator draws one at each pass, and each pass of a
    ``DataLoader`` draws one for its workers' seeds.

    Example:
        >>> import chaingrad as torch
        >>> seeds = [draw_seed(torch.Generator().manual_seed(7)) for _ in range(2)]
        >>> seeds[0] == seeds[1] and 0 <= seeds[0] < 2**63
        True
    """
    return int(empty((), dtype=int64).random_(generator=generator).item())
