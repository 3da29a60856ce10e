"""torch's factory functions: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange``,
``linspace``, ``eye``, ``rand``, ``randn``, ``randint``, ``from_numpy``, the ``*_like``s.

Each makes a leaf with torch's dtype rule (Python floats give the default dtype, float32;
ints int64; bools bool) and takes torch's keyword arguments: ``dtype=``, ``device=`` (the
CPU only), ``requires_grad=`` (floating dtypes only). Random numbers come from the one
generator of ``chaingrad/tensor_engine/generator.py`` (``manual_seed``): numpy's, so the
same seed gives other numbers than torch's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import dtypes
from .arrays import all_finite, to_array
from .devices import check_device
from .generator import generator
from .tensor import Tensor, _leaf, _size


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, an array, a Tensor),
    as torch.tensor: Python floats give float32, ints int64, bools bool; an array keeps its
    dtype.

    Example:
        >>> tensor([1.0, 2.0]), tensor([1, 2]).dtype, tensor(3) * 2.5
        (tensor([1., 2.]), chaingrad.int64, tensor(7.5000))
    """
    check_device(device, "tensor")
    array = to_array(data, dtype, "tensor")
    _check_finite(array, "tensor")
    return _leaf(array, requires_grad, "tensor")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing a numpy array's memory when no conversion is needed."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtype):
        return data
    check_device(device, "as_tensor")
    array = to_array(data, dtype, "as_tensor", copy=False)
    _check_finite(array, "as_tensor")
    return _leaf(array, False, "as_tensor")


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing ``ndarray``'s memory (changes to one show in the other).

    Example:
        >>> a = np.zeros(2)
        >>> t = from_numpy(a)
        >>> a[0] = 5.0
        >>> t
        tensor([5., 0.], dtype=chaingrad.float64)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(ndarray).__name__})")
    dtypes.of(ndarray.dtype)  # an error naming it, for a dtype chaingrad lacks
    _check_finite(ndarray, "from_numpy")
    return _leaf(ndarray, False, "from_numpy")


def zeros(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of ``size`` (``zeros(2, 3)`` or ``zeros((2, 3))``).

    Example:
        >>> zeros(2, 3).shape, zeros(2).dtype
        (chaingrad.Size([2, 3]), chaingrad.float32)
    """
    return _filled("zeros", size, 0, dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of ``size``."""
    return _filled("ones", size, 1, dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` (chaingrad fills it with zeros; torch leaves it unset)."""
    return _filled("empty", size, 0, dtype, device, requires_grad)


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``, whose type gives the dtype if
    ``dtype`` is None (a float: float32; an int: int64; a bool: bool), as torch.full.

    Example:
        >>> full((2,), 7), full((), 0.5, requires_grad=True)
        (tensor([7, 7]), tensor(0.5000, requires_grad=True))
    """
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    wanted = dtypes.number_dtype(fill_value) if dtype is None else dtype
    return _filled("full", (size,), fill_value, wanted, device, requires_grad)


def zeros_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False) -> Tensor:
    """Zeros of ``input``'s shape and dtype."""
    return _filled("zeros_like", (_like(input, "zeros_like").shape,), 0,
                   dtype or input._value.dtype, device, requires_grad)


def ones_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False) -> Tensor:
    """Ones of ``input``'s shape and dtype."""
    return _filled("ones_like", (_like(input, "ones_like").shape,), 1,
                   dtype or input._value.dtype, device, requires_grad)


def empty_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False) -> Tensor:
    """A tensor of ``input``'s shape and dtype (zeros, in chaingrad)."""
    return zeros_like(input, dtype, device, requires_grad)


def full_like(input: Tensor, fill_value: Any, dtype: Any = None,  # noqa: A002
              device: Any = None, requires_grad: bool = False) -> Tensor:
    """``fill_value`` in ``input``'s shape and dtype."""
    return _filled("full_like", (_like(input, "full_like").shape,), fill_value,
                   dtype or input._value.dtype, device, requires_grad)


def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Numbers drawn uniformly from [0, 1), of ``size``, from chaingrad's generator.

    Example:
        >>> import chaingrad; chaingrad.manual_seed(0)
        >>> x = rand(2, 3)
        >>> x.shape, x.dtype, bool(((0 <= x) & (x < 1)).all())
        (chaingrad.Size([2, 3]), chaingrad.float32, True)
    """
    shape, wanted = _shape_and_float("rand", size, dtype, device, generator)
    return _leaf(_generator().random(shape).astype(wanted), requires_grad, "rand")


def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Numbers drawn from the standard normal distribution, of ``size``."""
    shape, wanted = _shape_and_float("randn", size, dtype, device, generator)
    return _leaf(_generator().standard_normal(shape).astype(wanted), requires_grad, "randn")


def rand_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False) -> Tensor:
    """Uniform numbers from [0, 1) in ``input``'s shape and dtype."""
    return rand(_like(input, "rand_like").shape, dtype=dtype or input._value.dtype,
                device=device, requires_grad=requires_grad)


def randn_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False) -> Tensor:
    """Standard normal numbers in ``input``'s shape and dtype."""
    return randn(_like(input, "randn_like").shape, dtype=dtype or input._value.dtype,
                 device=device, requires_grad=requires_grad)


def randint(*args: Any, size: Any = None, generator: Any = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``, int64 unless ``dtype`` says otherwise, as torch.randint.

    Example:
        >>> import chaingrad; chaingrad.manual_seed(0)
        >>> r = randint(3, 10, (4,))
        >>> r.dtype, bool(((3 <= r) & (r < 10)).all())
        (chaingrad.int64, True)
    """
    if size is not None:
        args = (*args, size)
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError("randint: expected randint(high, size) or randint(low, high, size), "
                        f"got {len(args)} positional argument(s)")
    shape = _size((size,), "randint")
    if not high > low:
        raise ValueError(f"randint: needs low < high, got low={low}, high={high}")
    _no_generator(generator, "randint")
    check_device(device, "randint")
    wanted = np.dtype(np.int64) if dtype is None else dtypes.to_numpy(dtype, "randint")
    drawn = _generator().integers(low, high, size=shape).astype(wanted)
    return _leaf(drawn, requires_grad, "randint")


def randperm(n: int, dtype: Any = None, device: Any = None) -> Tensor:
    """A random permutation of 0 .. n-1 (int64)."""
    check_device(device, "randperm")
    wanted = np.dtype(np.int64) if dtype is None else dtypes.to_numpy(dtype, "randperm")
    return _leaf(_generator().permutation(int(n)).astype(wanted), False, "randperm")


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """start, start + step, ... up to (not including) end; int64 when all three are ints,
    else the default floating dtype, as torch.arange.

    Example:
        >>> arange(3), arange(0, 1, 0.25)
        (tensor([0, 1, 2]), tensor([0.0000, 0.2500, 0.5000, 0.7500]))
    """
    if end is None:
        start, end = 0, start
    numbers = [_plain(v, "arange") for v in (start, end, step)]
    if numbers[2] == 0:
        raise ValueError("arange: step must be nonzero")
    check_device(device, "arange")
    if dtype is not None:
        wanted = dtypes.to_numpy(dtype, "arange")
    elif all(isinstance(v, int) for v in numbers):
        wanted = np.dtype(np.int64)
    else:
        wanted = dtypes.get_default_dtype().dtype
    start, end, step = numbers
    count = max(0, math.ceil((end - start) / step))
    values = (start + step * np.arange(count, dtype=np.float64 if wanted.kind == "f" else
                                       np.int64)).astype(wanted)
    return _leaf(values, requires_grad, "arange")


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced numbers from start to end, both included (float32 unless
    ``dtype`` says otherwise), as torch.linspace.

    Example:
        >>> linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise TypeError(f"linspace: steps must be an int >= 0, got {steps!r}")
    check_device(device, "linspace")
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(
        dtype, "linspace")
    values = np.linspace(_plain(start, "linspace"), _plain(end, "linspace"), int(steps))
    return _leaf(values.astype(wanted), requires_grad, "linspace")


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The n x m identity matrix (m = n if not given)."""
    check_device(device, "eye")
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(dtype, "eye")
    return _leaf(np.eye(int(n), None if m is None else int(m), dtype=wanted), requires_grad,
                 "eye")


# ---- helpers ----


def _generator() -> np.random.Generator:
    return generator()


def _filled(op: str, size: tuple, value: Any, dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:
    check_device(device, op)
    shape = _size(size, op)
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(dtype, op)
    array = np.full(shape, value, dtype=wanted)
    _check_finite(array, op)
    return _leaf(array, requires_grad, op)


def _shape_and_float(op: str, size: tuple, dtype: Any, device: Any,
                     generator: Any) -> tuple[tuple[int, ...], np.dtype]:
    _no_generator(generator, op)
    check_device(device, op)
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(dtype, op)
    if wanted.kind != "f":
        raise TypeError(f"{op}: needs a floating dtype, got {dtypes.of(wanted)}")
    return _size(size, op), wanted


def _no_generator(generator: Any, op: str) -> None:
    if generator is not None:
        raise NotImplementedError(f"chaingrad has no {op}(generator=...) yet: it draws from its "
                                  "one generator (seed it with chaingrad.manual_seed)")


def _like(input: Any, op: str) -> Tensor:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    return input


def _plain(value: Any, op: str) -> int | float:
    """A number argument as a Python int or float (a one-element Tensor's value)."""
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: expected a number, got {type(value).__name__} {value!r}")
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def _check_finite(array: np.ndarray, op: str) -> None:
    if array.dtype.kind == "f" and array.size and not all_finite(array):
        raise ValueError(f"{op}: got nan or inf; chaingrad's tensors hold finite numbers")
