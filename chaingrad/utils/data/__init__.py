"""torch.utils.data: datasets, the samplers that order them, and the ``DataLoader`` that
turns them into batches, in the main process or in worker processes. This module only
gathers the names; each is defined in the file where torch has it:

- ``dataset.py``: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``ConcatDataset``,
  ``ChainDataset``, ``Subset``, ``random_split``;
- ``sampler.py``: ``Sampler``, ``SequentialSampler``, ``RandomSampler``,
  ``SubsetRandomSampler``, ``WeightedRandomSampler``, ``BatchSampler``;
- ``collate.py``: ``default_collate``, ``default_convert`` (torch's
  ``_utils/collate.py``);
- ``fetch.py``: how a batch of indices becomes a batch (torch's ``_utils/fetch.py``);
- ``worker.py``: the worker processes, ``WorkerInfo``, ``get_worker_info`` (torch's
  ``_utils/worker.py``);
- ``dataloader.py``: ``DataLoader``.

A map-style ``Dataset`` has ``__getitem__(i)`` and ``__len__()``; a ``DataLoader`` asks its
sampler for indices, groups them into batches of ``batch_size`` (a ``BatchSampler``), fetches
each sample and joins them with ``collate_fn``::

    for x, y in DataLoader(TensorDataset(X, Y), batch_size=32, shuffle=True):
        ...                                  # x: X[indices of the batch], y: Y[...]

For the same seed, the batches, their order and the random numbers drawn are torch's, with
worker processes or without.

Example (``dataloader.py`` shows a DataLoader at work):
    >>> import chaingrad as torch
    >>> from chaingrad.utils.data import TensorDataset, random_split
    >>> _ = torch.manual_seed(0)
    >>> train, test = random_split(TensorDataset(torch.arange(10.0)), [0.8, 0.2])
    >>> len(train), len(test)
    (8, 2)
"""

from typing import TYPE_CHECKING

from ... import torch_names
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import WorkerInfo, get_worker_info

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset",
           "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo",
           "default_collate", "default_convert", "get_worker_info", "random_split"]


if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        raise torch_names.missing("chaingrad.utils.data", name, torch_names.DATA)
