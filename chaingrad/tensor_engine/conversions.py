"""A Tensor as other things: another dtype or device, numbers, arrays, lists, and text
(``print``, written by ``printing.py``), as torch gives them (the ``Conversions`` part of
``Tensor``).

Example:
    >>> from chaingrad import Tensor
    >>> t = Tensor([1.5, 2.0])
    >>> t.double().dtype, t.tolist(), t.shape
    (chaingrad.float64, [1.5, 2.0], chaingrad.Size([2]))
    >>> t
    tensor([1.5000, 2.0000])
"""

from __future__ import annotations

import math

# the builtins under other names, for the annotations in Conversions, whose float(), int() and
# bool() methods hide them there (as torch's own stubs name them)
from builtins import bool as _bool
from builtins import float as _float
from builtins import int as _int
from collections.abc import Iterator
from typing import Any, SupportsIndex, overload

import numpy as np

from .. import autodiff
from . import dtypes
from .arrays import SelfTensor, normalize_axis, quietly, size_of, to_array
from .devices import CPU, check_device
from .printing import tensor_repr
from .rules import CAST


class Size(tuple[int, ...]):
    """A tensor's shape, as ``torch.Size``: a tuple of ints; its slices, sums and repeats
    are Sizes too, so ``x.shape[1:]`` prints as torch's does.

    Example:
        >>> Size((2, 3)), Size((2, 3)) == (2, 3), Size((2, 3)).numel()
        (chaingrad.Size([2, 3]), True, 6)
        >>> Size((2, 3))[1:], (1,) + Size((2, 3))
        (chaingrad.Size([3]), chaingrad.Size([1, 2, 3]))
    """

    def __repr__(self) -> str:
        return f"chaingrad.Size({list(self)})"

    @overload
    def __getitem__(self, key: SupportsIndex) -> int: ...

    @overload
    def __getitem__(self, key: slice) -> Size: ...

    def __getitem__(self, key: SupportsIndex | slice) -> int | Size:
        if type(key) is slice:
            return Size(tuple.__getitem__(self, key))
        return tuple.__getitem__(self, key)  # type: ignore[index]  (not a slice: an index)

    def __add__(self, other: Any) -> Size:
        return Size(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Size:
        return Size(tuple.__add__(tuple(other), self))

    def __mul__(self, times: Any) -> Size:
        return Size(tuple.__mul__(self, times))

    __rmul__ = __mul__

    def numel(self) -> int:
        """The number of entries."""
        return math.prod(self)


_UFUNC_OPS = {
    np.add: ("__add__", "__radd__"), np.subtract: ("__sub__", "__rsub__"),
    np.multiply: ("__mul__", "__rmul__"), np.true_divide: ("__truediv__", "__rtruediv__"),
    np.power: ("__pow__", "__rpow__"), np.matmul: ("__matmul__", "__rmatmul__"),
    np.equal: ("__eq__", "__eq__"), np.not_equal: ("__ne__", "__ne__"),
    np.less: ("__lt__", "__gt__"), np.less_equal: ("__le__", "__ge__"),
    np.greater: ("__gt__", "__lt__"), np.greater_equal: ("__ge__", "__le__"),
}
"""numpy's ufunc for each operator, and the Tensor's method for it: (``tensor op x``,
``x op tensor``)."""

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


Scalar = int | float | bool
"""What ``item()`` gives (torch calls it ``Number``)."""

class Conversions:
    """The conversions of ``Tensor``: ``to``, ``float()``, ``numpy()``, ``item()``,
    ``shape``, Python's number and sequence protocols, numpy's, and ``repr``."""

    __slots__ = ()

    def to(self: SelfTensor, *args: Any, **kwargs: Any) -> SelfTensor:
        """This tensor in another dtype and/or on a device (only the CPU exists): ``to(dtype)``,
        ``to(device)``, ``to(other)``, ``to(device, dtype)``; itself when nothing changes,
        as in torch. A floating cast is differentiable (``tensor_engine.rules.CAST``).

        Example:
            >>> from chaingrad import Tensor
            >>> import chaingrad
            >>> Tensor([1.5]).to(chaingrad.float64).dtype
            chaingrad.float64
        """
        wanted = None
        for arg in (*args, kwargs.pop("dtype", None), kwargs.pop("device", None)):
            if arg is None:
                continue
            if isinstance(arg, autodiff.Node):
                wanted = arg._value.dtype
            elif isinstance(arg, dtypes.dtype) or (isinstance(arg, type) and issubclass(
                    arg, np.generic)) or isinstance(arg, np.dtype):
                wanted = dtypes.to_numpy(arg, "to")
            else:
                check_device(arg, "to")
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to: unexpected arguments {sorted(kwargs)}")
        if wanted is None or wanted == self._value.dtype:
            return self.clone() if copy else self
        data = quietly(self._value.astype, wanted)  # 1e300 as a float32 is inf, as in torch
        if not (dtypes.is_floating_dtype(wanted) and dtypes.is_floating_dtype(self._value.dtype)):
            return self._constant(data)
        return self._node(data, (self,), CAST.bind(wanted.name))

    def type(self, dtype: Any = None) -> Any:
        """The dtype's name as torch's ``x.type()`` gives it, or ``to(dtype)``: a dtype, a
        legacy type (``x.type(chaingrad.DoubleTensor)``) or its name
        (``x.type("torch.LongTensor")``, as torch's code writes it).

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([1.5])
            >>> x.type(), x.type("torch.LongTensor").tolist()
            ('chaingrad.FloatTensor', [1])
        """
        if dtype is None:
            return f"chaingrad.{_TYPE_NAMES.get(self._value.dtype.name, self.dtype.name)}"
        if isinstance(dtype, str):
            module, _, name = dtype.rpartition(".")
            named = {legacy: numpy_name for numpy_name, legacy in _TYPE_NAMES.items()}
            if module not in ("torch", "chaingrad") or name not in named:
                raise ValueError(f"type: invalid type: {dtype!r}")
            dtype = np.dtype(named[name])
        elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), dtypes.dtype):
            dtype = dtype.dtype  # a legacy type (chaingrad.FloatTensor): its dtype
        return self.to(dtype)

    def type_as(self: SelfTensor, other: Any) -> SelfTensor:
        """This tensor in ``other``'s dtype."""
        return self.to(other._value.dtype)

    def float(self: SelfTensor) -> SelfTensor:
        """This tensor as float32 (itself if it is)."""
        return self.to(dtypes.float32)

    def double(self: SelfTensor) -> SelfTensor:
        """This tensor as float64."""
        return self.to(dtypes.float64)

    def half(self: SelfTensor) -> SelfTensor:
        """This tensor as float16."""
        return self.to(dtypes.float16)

    def bfloat16(self: SelfTensor) -> SelfTensor:
        """This tensor as bfloat16 (through ml_dtypes: ``pip install 'chaingrad[bfloat16]'``).

        Example:
            >>> import chaingrad
            >>> chaingrad.tensor([1.1, 2.2]).bfloat16()
            tensor([1.1016, 2.2031], dtype=chaingrad.bfloat16)
        """
        return self.to(dtypes.bfloat16)

    def long(self: SelfTensor) -> SelfTensor:
        """This tensor as int64 (floats rounded toward 0)."""
        return self.to(dtypes.int64)

    def int(self: SelfTensor) -> SelfTensor:
        """This tensor as int32."""
        return self.to(dtypes.int32)

    def bool(self: SelfTensor) -> SelfTensor:
        """This tensor as bool (True where nonzero)."""
        return self.to(dtypes.bool_)

    def new_tensor(self: SelfTensor, data: Any, dtype: Any = None,
                   requires_grad: _bool = False) -> SelfTensor:
        """A new tensor of ``data`` with this tensor's dtype unless ``dtype`` is given."""
        array = to_array(data, self._value.dtype if dtype is None else dtype, "new_tensor")
        return self._leaf(array, requires_grad, "new_tensor")

    def new_zeros(self: SelfTensor, *size: Any, dtype: Any = None,
                  requires_grad: _bool = False) -> SelfTensor:
        """Zeros of ``size``, in this tensor's dtype unless ``dtype`` is given."""
        return self.new_full(size_of(size, "new_zeros"), 0, dtype=dtype,
                             requires_grad=requires_grad)

    def new_ones(self: SelfTensor, *size: Any, dtype: Any = None,
                 requires_grad: _bool = False) -> SelfTensor:
        """Ones of ``size``, in this tensor's dtype unless ``dtype`` is given.

        Example:
            >>> import chaingrad
            >>> chaingrad.tensor([1, 2]).new_ones(2, 2, dtype=chaingrad.float64).dtype
            chaingrad.float64
        """
        return self.new_full(size_of(size, "new_ones"), 1, dtype=dtype,
                             requires_grad=requires_grad)

    new_empty = new_zeros

    def new_full(self: SelfTensor, size: Any, fill_value: Any, dtype: Any = None,
                 requires_grad: _bool = False) -> SelfTensor:
        """``fill_value`` in ``size``, in this tensor's dtype unless ``dtype`` is given."""
        wanted = self._value.dtype if dtype is None else dtypes.to_numpy(dtype, "new_full")
        array = np.full(size_of((size,), "new_full"), fill_value, dtype=wanted)
        return self._leaf(array, requires_grad, "new_full")

    def cpu(self: SelfTensor) -> SelfTensor:
        """Itself: chaingrad's tensors are on the CPU."""
        return self

    def cuda(self: SelfTensor, *args: Any, **kwargs: Any) -> SelfTensor:
        """An error, as torch's CPU build: chaingrad computes on the CPU only (a
        ``NoCudaError``, the AssertionError "Torch not compiled with CUDA enabled")."""
        check_device("cuda", "Tensor.cuda")
        return self  # not reached: check_device raises

    def is_floating_point(self) -> _bool:
        """True for a floating dtype."""
        return dtypes.is_floating_dtype(self._value.dtype)

    @property
    def device(self) -> Any:
        """Where the data is: always ``device('cpu')``."""
        return CPU

    @property
    def is_cuda(self) -> _bool:
        """False: chaingrad computes on the CPU only."""
        return False

    @property
    def dtype(self) -> dtypes.dtype:
        """The element type, a chaingrad dtype (``chaingrad.float32``, ...)."""
        return dtypes.of(self._value.dtype)

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (shared, not copied); as torch, not of a tensor that
        requires grad (use ``x.detach().numpy()``)."""
        if self.requires_grad:
            raise RuntimeError("numpy: Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._value

    def item(self) -> Scalar:
        """The value of a one-element tensor as a Python number (float, int or bool)."""
        if self._value.size != 1:
            raise RuntimeError(f"item: a Tensor with {self._value.size} elements cannot be "
                               f"converted to Scalar (shape {tuple(self.shape)})")
        return self._value.item()

    def tolist(self) -> Any:
        """The entries as (nested) Python lists of numbers."""
        return self._value.tolist()

    @property
    def shape(self) -> Size:
        """The size of each dim, a ``Size``."""
        return Size(self._value.shape)

    @overload
    def size(self, dim: None = None) -> Size: ...

    @overload
    def size(self, dim: _int) -> _int: ...

    def size(self, dim: _int | None = None) -> Size | _int:
        """The shape (a ``Size``), or the size of ``dim``, as torch's ``size()``."""
        if dim is None:
            return Size(self._value.shape)
        return self._value.shape[normalize_axis(dim, self.ndim, "size")]

    @property
    def ndim(self) -> _int:
        """The number of dims."""
        return self._value.ndim

    def dim(self) -> _int:
        """The number of dims."""
        return self._value.ndim

    ndimension = dim

    def numel(self) -> _int:
        """The number of entries."""
        return int(self._value.size)

    nelement = numel

    def element_size(self) -> _int:
        """The bytes of one entry."""
        return self._value.itemsize

    def __bool__(self) -> _bool:
        """The truth of a one-element tensor's value (``if loss: ...``), as torch has it."""
        if self._value.size != 1:
            raise RuntimeError(f"bool: Boolean value of Tensor with more than one value is "
                               f"ambiguous (shape {tuple(self.shape)}); use .any() or .all()")
        return bool(self._value.item())

    def __float__(self) -> _float:
        return float(self.item())

    def __int__(self) -> _int:
        return int(self.item())

    def __index__(self) -> _int:
        if self._value.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors of a single element can be converted to an "
                            f"index, this one is {self.dtype}")
        return int(self.item())

    def __format__(self, spec: str) -> str:
        if self._value.size == 1 and self.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __iter__(self: SelfTensor) -> Iterator[SelfTensor]:
        """The sub-tensors along dim 0 (``x[0]``, ``x[1]``, ...); a 0-d tensor has none to
        give, and says so, as in torch."""
        if self._value.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def __len__(self) -> _int:
        if self._value.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._value)

    def __array__(self, dtype: Any = None, copy: _bool | None = None) -> np.ndarray:
        return np.asarray(self._value, dtype=dtype)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy meeting a Tensor: ``array + tensor`` (any arithmetic or comparison
        operator) is the Tensor's op, recorded in the graph; anything else, such as
        ``np.isfinite(t)`` or ``array -= t`` (an ``out=``), runs on the arrays and gives
        arrays."""
        if method == "__call__" and not kwargs and ufunc in _UFUNC_OPS and len(inputs) == 2:
            forward, reflected = _UFUNC_OPS[ufunc]
            x, y = inputs
            mine = isinstance(x, autodiff.Node)
            return getattr(x, forward)(y) if mine else getattr(y, reflected)(x)
        arrays = [x._value if isinstance(x, autodiff.Node) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o._value if isinstance(o, autodiff.Node) else o
                                  for o in kwargs["out"])
        return getattr(ufunc, method)(*arrays, **kwargs)

    def __repr__(self) -> str:
        """As torch prints a tensor (``printing.tensor_repr``):
        ``tensor([1., 2.], requires_grad=True)``; ``str`` and ``print`` give the same."""
        grad_fn = None if self._rule is None else self.grad_fn.name()
        return tensor_repr(self._value, grad_fn, self.requires_grad)
