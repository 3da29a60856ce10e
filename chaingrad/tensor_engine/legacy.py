"""What are torch's legacy tensor types (``torch.FloatTensor``, ``torch.LongTensor``, ...),
and how do they make tensors and answer ``isinstance``?

Before dtypes, torch named a tensor's type by a class per dtype; old code still makes
tensors with them (``torch.LongTensor([1, 2])``, ``torch.FloatTensor(2, 3)``) and asks
``isinstance(x, torch.FloatTensor)``. Here each is a class whose call makes a chaingrad
``Tensor`` of its dtype, and which a tensor is an instance of when it has that dtype, as in
torch (none of them is a subclass of ``Tensor``, nor is a Tensor made of them).

Example:
    >>> import chaingrad as torch
    >>> x = torch.LongTensor([1, 2])
    >>> x.dtype, isinstance(x, torch.LongTensor), isinstance(x, torch.FloatTensor)
    (chaingrad.int64, True, False)
    >>> torch.FloatTensor(2, 3).shape
    chaingrad.Size([2, 3])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes
from .devices import check_device
from .factories import empty, tensor
from .tensor import Tensor


class LegacyTensorType(type):
    """The type of each legacy tensor type: calling one makes a Tensor of its dtype, and
    ``isinstance`` asks for that dtype (torch's ``torch.tensortype``)."""

    dtype: dtypes.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        """``FloatTensor()`` (no entries), ``FloatTensor(2, 3)`` (a size: chaingrad fills
        it with zeros, torch leaves it unset), ``FloatTensor([1, 2])`` (data), or
        ``FloatTensor(x)`` of a tensor of this dtype (the same tensor), as torch's."""
        name = cls.__name__
        if device is not None:
            check_device(device, name)
        if not args:
            return empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype != cls.dtype:
                raise TypeError(f"{name}: expected a tensor of dtype {cls.dtype}, got "
                                f"{args[0].dtype} (use x.to({cls.dtype}))")
            return args[0]
        if all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in args):
            return empty(*args, dtype=cls.dtype)
        if len(args) == 1 and (isinstance(args[0], (list, tuple, np.ndarray))):
            return tensor(args[0], dtype=cls.dtype)
        raise TypeError(f"{name}: new(): data must be a sequence (got "
                        f"{', '.join(type(a).__name__ for a in args)})")

    def __instancecheck__(cls, obj: Any) -> bool:
        """Whether ``obj`` is a Tensor of this type's dtype."""
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'chaingrad.{cls.__name__}'>"


class FloatTensor(metaclass=LegacyTensorType):
    """torch.FloatTensor: float32 tensors."""

    dtype = dtypes.float32


class DoubleTensor(metaclass=LegacyTensorType):
    """torch.DoubleTensor: float64 tensors."""

    dtype = dtypes.float64


class HalfTensor(metaclass=LegacyTensorType):
    """torch.HalfTensor: float16 tensors."""

    dtype = dtypes.float16


class LongTensor(metaclass=LegacyTensorType):
    """torch.LongTensor: int64 tensors."""

    dtype = dtypes.int64


class IntTensor(metaclass=LegacyTensorType):
    """torch.IntTensor: int32 tensors."""

    dtype = dtypes.int32


class ShortTensor(metaclass=LegacyTensorType):
    """torch.ShortTensor: int16 tensors."""

    dtype = dtypes.int16


class CharTensor(metaclass=LegacyTensorType):
    """torch.CharTensor: int8 tensors."""

    dtype = dtypes.int8


class ByteTensor(metaclass=LegacyTensorType):
    """torch.ByteTensor: uint8 tensors."""

    dtype = dtypes.uint8


class BoolTensor(metaclass=LegacyTensorType):
    """torch.BoolTensor: bool tensors."""

    dtype = dtypes.bool_
