"""How a list of samples becomes a batch: ``default_collate`` (what a ``DataLoader`` does
to each batch unless given a ``collate_fn``) and ``default_convert`` (what it does to each
sample without batches); torch's ``torch.utils.data._utils.collate``, which torch serves
as ``torch.utils.data.default_collate``, as chaingrad does.

Example:
    >>> import chaingrad as torch
    >>> batch = [{"x": torch.tensor([1, 2]), "y": 0}, {"x": torch.tensor([3, 4]), "y": 1}]
    >>> default_collate(batch)
    {'x': tensor([[1, 2],
            [3, 4]]), 'y': tensor([0, 1])}
"""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...tensor_engine import Tensor, stack
from ...tensor_engine.dtypes import float64
from ...tensor_engine.factories import as_tensor, tensor

__all__ = ["default_collate", "default_convert"]


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

