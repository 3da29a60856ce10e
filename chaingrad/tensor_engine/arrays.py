"""numpy helpers shared by the Tensor modules: the dtype rule, quiet arithmetic, axes (and
the types of a dim argument and of the tensor a method is called on).

Nothing here builds a graph; these are the checks and conversions every Tensor op makes.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from . import dtypes

ARRAY_TYPES = (np.ndarray, np.generic)
"""What a rule's arguments are in a plain ``backward()`` (numpy makes 0-d results scalars)."""

try:  # numpy >= 2 keeps its floating-point error mode in a context variable
    from numpy._core.umath import _extobj_contextvar as _fp_mode

    with np.errstate(all="ignore"):
        _FP_QUIET = _fp_mode.get()
except ImportError:  # numpy 1.x: np.errstate, ten times the cost
    _fp_mode = None


def quietly(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` with numpy's floating-point warnings off: a Tensor op gives torch's
    inf and nan (``log(0) = -inf``, ``1 / 0 = inf``) and, as torch, prints nothing.

    The user's own numpy settings are untouched (the mode is set for this call only, in
    this thread). With numpy 2 this costs a tenth of a ``np.errstate`` block (~0.1 us:
    numpy's mode is a context variable, set and reset here directly).

    Example:
        >>> quietly(np.log, np.zeros(2)).tolist()
        [-inf, -inf]
    """
    if _fp_mode is None:
        with np.errstate(all="ignore"):
            return fn(*args)
    token = _fp_mode.set(_FP_QUIET)
    try:
        return fn(*args)
    finally:
        _fp_mode.reset(token)


def as_array(data: Any, dtype: Any = None, where: str = "Tensor") -> np.ndarray:
    """``data`` as a floating ndarray, by chaingrad's dtype rule.

    A floating array (or numpy floating scalar) keeps its dtype and is not copied; integer
    and boolean arrays, Python numbers and (nested) lists become float32. An explicit
    ``dtype`` (a floating one) wins.

    Example:
        >>> as_array([1, 2]).dtype, as_array(np.zeros(2)).dtype
        (dtype('float32'), dtype('float64'))
    """
    data = _unwrap(data)
    if dtype is not None:
        try:
            wanted = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"{where}: dtype must be a numpy floating dtype, "
                            f"got {dtype!r}") from None
        if wanted.kind != "f":
            raise TypeError(f"{where}: dtype must be a floating dtype (float16, float32, "
                            f"float64), got {wanted}")
        return _convert(data, wanted, where)
    if isinstance(data, (np.ndarray, np.generic)):
        kind = data.dtype.kind
        if kind == "f":
            return np.asarray(data)
        if kind in "biu":
            return np.asarray(data, dtype=np.float32)
        raise TypeError(f"{where}: data must hold real numbers, got dtype {data.dtype}")
    return _convert(data, np.dtype(np.float32), where)


def to_array(data: Any, dtype: Any = None, where: str = "tensor", copy: bool = True) -> np.ndarray:
    """``data`` as an ndarray by torch's rule (``chaingrad.tensor``'s), a copy unless
    ``copy`` is False and nothing needs converting.

    Without a ``dtype``: Python bools give bool, Python ints int64, Python floats the
    default dtype (float32); a numpy array or a Tensor keeps its dtype. Any dtype must be
    one chaingrad has (``chaingrad.float32``, ``chaingrad.int64``, ``chaingrad.bool``, ...).

    Example:
        >>> to_array([1, 2]).dtype, to_array([1.0, 2]).dtype, to_array([True]).dtype
        (dtype('int64'), dtype('float32'), dtype('bool'))
    """
    data = _unwrap(data)
    if isinstance(data, (str, bytes)) or data is None:
        raise TypeError(f"{where}: data must be numbers or an array, got "
                        f"{type(data).__name__} {data!r}")
    if dtype is not None:
        wanted = dtypes.to_numpy(dtype, where)
    elif isinstance(data, (np.ndarray, np.generic)):
        wanted = data.dtype
    else:
        wanted = None
    try:  # (quietly: 1e39 as a float32 is inf, as in torch)
        array = quietly(lambda: np.array(data, dtype=wanted, copy=copy or None))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where}: cannot make a tensor from {type(data).__name__} "
                        f"({exc})") from None
    if array.dtype.kind == "f" and wanted is None:
        array = quietly(array.astype, dtypes.get_default_dtype().dtype)  # Python floats
    dtypes.of(array.dtype)  # an error naming it, for a dtype chaingrad lacks
    return array


def _unwrap(data: Any) -> Any:
    """A Tensor's array, anything else as it is (no import of Tensor needed)."""
    inner = getattr(data, "_value", None)
    return inner if isinstance(inner, np.ndarray) and hasattr(data, "_rule") else data


def _convert(data: Any, dtype: np.dtype, where: str) -> np.ndarray:
    if isinstance(data, (str, bytes)) or data is None:
        raise TypeError(f"{where}: data must be numbers or an array, got "
                        f"{type(data).__name__} {data!r}")
    if isinstance(data, np.ndarray) and data.dtype.kind not in "biuf":
        raise TypeError(f"{where}: data must hold real numbers, got dtype {data.dtype}")
    try:
        return quietly(np.asarray, data, dtype)  # 1e39 as a float32 is inf, as in torch
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where}: cannot make a {dtype} array from {type(data).__name__} "
                        f"({exc})") from None


Dims = Any
"""A ``dim`` argument that may name several: an int, a tuple (or list) of ints, or None for
all (what ``normalize_axes`` reads)."""

SelfTensor = TypeVar("SelfTensor")
"""The tensor a method of one of ``Tensor``'s parts (``shaping.py``'s ``Shaping``, ...) is
called on: ``def t(self: SelfTensor) -> SelfTensor`` tells type checkers that ``x.t()`` is
a ``Tensor`` where those modules cannot import the class."""


def normalize_axes(axis: Any, ndim: int, op: str) -> tuple[int, ...]:
    """``axis`` (an int, a tuple or list of ints, or None for all) as sorted axes >= 0."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and -ndim <= axis < ndim:  # one axis, in range: most calls
        return (axis % ndim,)
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = []
    for a in items:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{op}: axis must be an int, a tuple of ints or None, got {axis!r}")
        if not -ndim <= a < ndim:
            raise IndexError(f"{op}: dimension {a} is out of range (expected to be in "
                             f"[{-ndim}, {ndim - 1}] for {ndim} dimension(s))")
        axes.append(int(a) % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: axis {axis!r} repeats an axis")
    return tuple(sorted(axes))


def normalize_axis(axis: Any, ndim: int, op: str) -> int:
    """A single ``axis`` as an int >= 0 (for softmax and friends)."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{op}: axis must be an int, got {axis!r}")
    return normalize_axes(axis, ndim, op)[0]


def check_index(index: Any) -> Any:
    """An index for ``x[index]``: lists and integer or bool Tensors become arrays; a
    floating index is an IndexError, as in torch."""
    parts = index if isinstance(index, tuple) else (index,)
    checked = []
    for part in parts:
        if hasattr(part, "_rule"):  # a Tensor: its array
            part = part._value
        if isinstance(part, list):
            part = np.asarray(part)
        if isinstance(part, (float, np.floating)) or (
                isinstance(part, np.ndarray) and part.dtype.kind not in "biu"):
            raise IndexError(f"getitem: tensors used as indices must be long, int or bool "
                             f"tensors (or ints, slices, None, ...), got {part!r}")
        checked.append(part)
    return tuple(checked) if isinstance(index, tuple) else checked[0]


def size_of(size: tuple, op: str) -> tuple[int, ...]:
    """``f(2, 3)``'s or ``f((2, 3))``'s size as a tuple of ints >= 0."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if all(type(n) is int and n >= 0 for n in size):  # plain ints: most calls
        return size
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0
               for n in size):
        raise TypeError(f"{op}: size must be ints >= 0 (as {op}(2, 3) or {op}((2, 3))), got "
                        f"{size!r}")
    return tuple(int(n) for n in size)
