"""How an index becomes a batch: the ``Fetcher`` that asks the dataset for the samples
of a batch of indices (or takes the next ones of a stream) and collates them, the same in
the main process and in a worker process; torch's ``torch.utils.data._utils.fetch``.

Example:
    >>> fetcher = Fetcher(["a", "b", "c"], iterable=False, batched=True, collate_fn=list,
    ...                   drop_last=False)
    >>> fetcher.fetch([2, 0])
    ['c', 'a']
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

__all__ = ["Fetcher"]


class Fetcher:
    """Turns an index (or a batch of indices) into a sample (or a collated batch): the
    same in the main process and in a worker.

    Args:
        dataset: A map-style dataset, or an iterable one.
        iterable: Whether ``dataset`` is iterable: then each fetch takes its next samples
            (as many as the batch has indices) and the indices themselves are not used.
        batched: Whether an index is a batch of indices (a ``BatchSampler``'s list).
        collate_fn: Joins the samples of a batch (or converts a sample without batches).
        drop_last: For an iterable dataset, leave out a last batch that is short.

    Example:
        >>> stream = Fetcher(range(5), iterable=True, batched=True, collate_fn=list,
        ...                  drop_last=True)
        >>> stream.fetch([0, 1]), stream.fetch([2, 3])
        ([0, 1], [2, 3])
        >>> stream.fetch([4, 5])
        Traceback (most recent call last):
        ...
        StopIteration
    """

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

