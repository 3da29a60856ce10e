"""dtypes as PyTorch has them: ``chaingrad.float32`` (``float``), ``float64`` (``double``),
``int64`` (``long``), ``bool``, ... and torch's rule for the dtype of an op's result.

A chaingrad dtype is a small object that names a numpy dtype. It prints as
``chaingrad.float32`` (where torch prints ``torch.float32``), equals the module constant
and the numpy dtype it names (``Tensor(...).dtype == np.float32`` holds too), and numpy
takes it wherever it takes a dtype (``np.zeros(2, dtype=chaingrad.float64)``).

The result dtype of an op (``promote``) is torch's: a Python float with an integer tensor
gives the default dtype (float32), not numpy's float64; a Python number never widens a
tensor of its own kind (``float32 tensor * 2.5`` stays float32); a 0-d tensor widens a
dimensioned one only when it is of a higher kind (bool < integer < floating).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

try:  # bfloat16 as numpy has none: the optional extra chaingrad[bfloat16]
    import ml_dtypes
except ModuleNotFoundError:
    ml_dtypes = None


class dtype:  # noqa: N801 - torch's name
    """A tensor's element type: ``chaingrad.float32``, ``chaingrad.int64``, ...

    Example:
        >>> import chaingrad
        >>> chaingrad.float32, chaingrad.float is chaingrad.float32
        (chaingrad.float32, True)
        >>> chaingrad.int64.is_floating_point, chaingrad.float64.itemsize
        (False, 8)
    """

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, numpy_dtype: Any) -> None:
        self.name = name
        self.dtype = np.dtype(numpy_dtype)  # what np.dtype(this) reads

    @property
    def is_floating_point(self) -> bool:
        return is_floating_dtype(self.dtype)

    @property
    def is_signed(self) -> bool:
        return self.dtype.kind in "if"

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __repr__(self) -> str:
        return f"chaingrad.{self.name}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, dtype):
            return other is self
        if isinstance(other, np.dtype) or (isinstance(other, type)
                                          and issubclass(other, np.generic)):
            return np.dtype(other) == self.dtype
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __reduce__(self) -> tuple:
        return of, (self.dtype,)  # unpickled as the module's own constant


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
uint8 = dtype("uint8", np.uint8)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)

DTYPES: tuple[dtype, ...] = (float16, float32, float64, uint8, int8, int16, int32, int64, bool_)
"""Every dtype chaingrad has."""

if ml_dtypes is not None:
    bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16)
    """torch's bfloat16: float32's 8 exponent bits with 7 of its mantissa bits, numpy's
    through ml_dtypes (``pip install 'chaingrad[bfloat16]'``)."""
    DTYPES += (bfloat16,)


def __getattr__(name: str) -> object:
    """``bfloat16`` without ml_dtypes: an error saying which extra brings it."""
    if name == "bfloat16":
        raise ModuleNotFoundError("chaingrad.bfloat16 needs ml_dtypes: pip install "
                                  "'chaingrad[bfloat16]'", name="ml_dtypes")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_floating_dtype(numpy_dtype: np.dtype) -> bool:
    """Whether a numpy dtype is floating: float16, 32, 64, and bfloat16 (which numpy, not
    knowing it, gives the kind 'V').

    Example:
        >>> is_floating_dtype(np.dtype("float32")), is_floating_dtype(np.dtype("int64"))
        (True, False)
    """
    kind = numpy_dtype.kind  # (``name`` is numpy Python code, 3 us: read only for a 'V')
    return kind == "f" or kind == "V" and numpy_dtype.name == "bfloat16"

ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
           "long": int64, "bool": bool_}
"""torch's other names for them (``chaingrad.float`` is ``chaingrad.float32``), given as
attributes of the ``chaingrad`` module only, so that no module here shadows a builtin."""

_BY_NUMPY = {d.dtype: d for d in DTYPES}

_default = float32


def get_default_dtype() -> dtype:
    """The dtype of floating tensors made from Python numbers and lists (float32).

    Example:
        >>> get_default_dtype()
        chaingrad.float32
    """
    return _default


def set_default_dtype(d: dtype) -> None:
    """Make ``d`` (float32 or float64) the dtype of floating data without one."""
    global _default
    if not isinstance(d, dtype) or d not in (float32, float64):
        raise TypeError(f"set_default_dtype: only chaingrad.float32 and chaingrad.float64 "
                        f"are supported, got {d!r}")
    _default = d


def of(numpy_dtype: Any) -> dtype:
    """The chaingrad dtype of a numpy dtype (an error naming it if chaingrad has none)."""
    found = _BY_NUMPY.get(np.dtype(numpy_dtype))
    if found is None:
        raise TypeError(f"chaingrad has no dtype for numpy's {np.dtype(numpy_dtype)} yet "
                        f"(it has {', '.join(d.name for d in DTYPES)})")
    return found


def scalar_type(numpy_dtype: Any) -> str:
    """torch's name of a dtype in its error messages (its ScalarType): Float, Double,
    Long, ...

    Example:
        >>> scalar_type(np.dtype(np.int64))
        'Long'
    """
    name = np.dtype(numpy_dtype).name
    return {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(name, name)


def to_numpy(d: Any, where: str) -> np.dtype:
    """A dtype argument (a chaingrad dtype, a numpy dtype or type, None) as a numpy dtype."""
    if isinstance(d, dtype):
        return d.dtype
    try:
        wanted = np.dtype(d)
    except TypeError:
        raise TypeError(f"{where}: dtype must be a chaingrad dtype such as chaingrad.float32, "
                        f"got {d!r}") from None
    return of(wanted).dtype


def kind(numpy_dtype: np.dtype) -> int:
    """0 for bool, 1 for integers, 2 for floating: the order in which kinds promote."""
    return 2 if is_floating_dtype(numpy_dtype) else {"b": 0, "i": 1, "u": 1}[numpy_dtype.kind]


def number_dtype(x: Any) -> np.dtype:
    """The dtype torch gives a Python number: bool, int64, or the default floating dtype."""
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(x, (int, np.integer)):
        return np.dtype(np.int64)
    return _default.dtype


NUMBER, ZERO_DIM, DIMENSIONED = 0, 1, 2
"""How much an operand's dtype counts in ``promote``: a Python number least, then a 0-d
tensor, then a tensor with dimensions."""


def promote(operands: list[tuple[np.dtype, int]]) -> np.dtype:
    """torch's result dtype for an op on ``operands``, each (its numpy dtype, how much it
    counts: NUMBER, ZERO_DIM or DIMENSIONED).

    The operands that count most decide the dtype among themselves; those that count less
    change it only if they are of a higher kind (bool < integer < floating), and then
    their own dtype wins (a Python number's being the default one of its kind).

    Example:
        >>> f32, i64 = np.dtype("float32"), np.dtype("int64")
        >>> promote([(i64, DIMENSIONED), (np.dtype("float32"), NUMBER)])  # int tensor * 2.5
        dtype('float32')
        >>> promote([(f32, DIMENSIONED), (np.dtype("float64"), ZERO_DIM)])
        dtype('float32')
    """
    result: np.dtype | None = None
    for rank in (DIMENSIONED, ZERO_DIM, NUMBER):
        group = [d for d, r in operands if r == rank]
        if not group:
            continue
        d = functools.reduce(_promote_types, group)
        if result is None or kind(d) > kind(result):
            result = d
    return result


def _promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """Two dtypes that count alike: the higher kind wins as it is (torch: int64 and
    float16 give float16, where numpy gives float64); within a kind, numpy's rule."""
    ka, kb = kind(a), kind(b)
    if ka != kb:
        return a if ka > kb else b
    if a != b and "bfloat16" in (a.name, b.name) and max(a.itemsize, b.itemsize) == 2:
        return np.dtype(np.float32)  # bfloat16 with float16: float32, as torch
    return np.promote_types(a, b)


class finfo:  # noqa: N801 - torch's name
    """The numbers a floating dtype holds, as ``torch.finfo``: ``bits``, ``eps`` (the gap
    from 1.0 to the next number), ``max``, ``min`` (= -max), ``tiny`` and
    ``smallest_normal`` (the smallest positive normal number), ``resolution`` (10 to the
    minus its decimal digits) and ``dtype`` (its name). ``finfo()`` describes the default
    dtype.

    Example:
        >>> import chaingrad as torch
        >>> torch.finfo(torch.float32).eps, torch.finfo(torch.float16).max
        (1.1920928955078125e-07, 65504.0)
        >>> torch.finfo()
        finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, \
smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - torch's argument name
        wanted = _default.dtype if type is None else to_numpy(type, "finfo")
        if not is_floating_dtype(wanted):
            raise TypeError(f"finfo: requires a floating point input type, got {of(wanted)!r} "
                            "(use chaingrad.iinfo for an integer one)")
        info = np.finfo(wanted) if wanted.kind == "f" else ml_dtypes.finfo(wanted)
        self.bits, self.dtype = int(info.bits), of(wanted).name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(10.0 ** -int(info.precision))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - torch's name
    """The numbers an integer dtype holds, as ``torch.iinfo``: ``bits``, ``min``, ``max``
    and ``dtype`` (its name).

    Example:
        >>> import chaingrad as torch
        >>> torch.iinfo(torch.uint8).max, torch.iinfo(torch.int64).min
        (255, -9223372036854775808)
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: Any) -> None:  # noqa: A002 - torch's argument name
        wanted = to_numpy(type, "iinfo")
        if wanted.kind not in "iu":
            raise TypeError(f"iinfo: requires an integer input type, got {of(wanted)!r} (use "
                            "chaingrad.finfo for a floating one)")
        info = np.iinfo(wanted)
        self.bits, self.dtype = int(info.bits), of(wanted).name
        self.min, self.max = int(info.min), int(info.max)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
