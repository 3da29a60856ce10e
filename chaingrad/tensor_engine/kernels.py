"""What the primitives' ``array`` texts call: the forwards on numpy arrays that are more than
one numpy call (``np`` itself is there too).

Convolution, pooling, softmax, an embedding's gradient and float32 erf run their fast twins
(``fast_kernels.py``) unless ``chaingrad.use_reference()`` is on, when they run the
readable references beside their primitives in ``rules.py``; the rest have one form. Where
they overflow (exp), their callers have numpy's warnings off: a Tensor op (``quietly``), a
backward pass (once for the pass). ``benchmarks/ops.py`` times each op
against torch's.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .. import reference
from . import fast_kernels, rules
from .rules import matmul, put, unpool_array

__all__ = ["conv2d", "conv2d_input_grad", "conv2d_weight_grad", "erf", "leaky_relu",
           "log_softmax", "matmul", "max_pool2d", "np", "pow_n", "put", "scatter_array",
           "sigmoid", "softmax", "softplus", "unpool_array"]

_erf_of_each = np.frompyfunc(math.erf, 1, 1)


@functools.cache
def _scipy_erf() -> Any:
    """SciPy's vectorised ``erf`` (a ufunc), or None without SciPy (an optional
    dependency: importing it costs about 0.1 s, so only on first use)."""
    try:
        from scipy.special import erf as scipy_erf
    except ImportError:
        return None
    return scipy_erf


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of each entry, in x's dtype: ``math.erf`` entry by entry (numpy
    has no erf; about 90 ns an entry), the numbers of ``Value.erf``, or its fast twins
    unless ``chaingrad.use_reference()`` is on: for float32, ``fast_kernels.erf_float32``
    (numpy polynomials, within 2 ulps; about 3 ns an entry), for float64 SciPy's
    ``scipy.special.erf`` when SciPy is installed (within 2 ulps; about 14 ns an entry).

    Example:
        >>> erf(np.array([0.0, 0.5])).tolist()
        [0.0, 0.5204998778130465]
    """
    if not reference.only:
        if x.dtype == np.float32:
            return fast_kernels.erf_float32(x)
        fast = _scipy_erf()
        if fast is not None and x.dtype == np.float64:
            return np.asarray(fast(x))
    return np.asarray(_erf_of_each(x), dtype=x.dtype)


def pow_n(x: np.ndarray, n: Any) -> np.ndarray:
    """x ** n for a constant n (a number, or an array of them), as torch computes it:
    ``x * x`` for n = 2, ``x * x * x`` for n = 3, ``1 / x`` for -1 and ``1 / sqrt(x)`` for
    -0.5 (torch's numbers, bit for bit in float32 and float64; and 60-500x faster than
    numpy's ``x ** 3``, which calls ``pow`` for each entry), else numpy's ``x ** n``.

    Not -2, which torch computes as ``1 / (x * x)``: the rule of ``x ** -1`` computes
    ``x ** -2`` with numpy's ``**``, and a gradient derived by hand with ``x ** -2`` (the
    makemore lecture's exercise) must equal autograd's bit for bit, as on torch.

    Example:
        >>> pow_n(np.array([1.5, -2.0], dtype=np.float32), 3).tolist()
        [3.375, -8.0]
    """
    if np.ndim(n) == 0 and x.dtype.kind in "fiu":
        k = float(n)
        if k == 2:
            return x * x
        if k == 3:
            return x * x * x
        if x.dtype.kind == "f":
            if k == -1:
                return 1 / x
            if k == -0.5:
                return 1 / np.sqrt(x)
    return x**n


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in x's dtype, as torch computes it: exp(-x) overflows to inf for
    x below about -88 (float32), and the result is then 0, as torch's (no warning). Four
    passes over one array; within 4 ulps of torch's float32 numbers (numpy's exp and
    torch's differ by an ulp here and there).

    Example:
        >>> with np.errstate(over="ignore"):  # as a Tensor op calls it
        ...     sigmoid(np.array([-200.0, 0.0, 200.0], dtype=np.float32)).tolist()
        [0.0, 0.5, 1.0]
    """
    out = np.negative(x, out=np.empty_like(x))
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def scatter_array(g: np.ndarray, index: Any, shape: tuple[int, ...]) -> np.ndarray:
    """g added into zeros of ``shape`` at ``index`` (``rules.scatter_array``, or its fast
    twin)."""
    if reference.only:
        return rules.scatter_array(g, index, shape)
    return fast_kernels.scatter_array(g, index, shape)


def leaky_relu(x: np.ndarray, negative_slope: float) -> np.ndarray:
    """x where x > 0, else x * negative_slope, as the larger (a slope up to 1) or the smaller
    (a steeper one) of x and x * negative_slope: the numbers of
    ``np.where(x > 0, x, x * negative_slope)`` without its branch on each entry's sign
    (which a random sign makes 30x slower).

    Example:
        >>> leaky_relu(np.array([-2.0, 3.0]), 0.1).tolist()
        [-0.2, 3.0]
    """
    out = np.asarray(x * negative_slope)  # (an array, to write into, for a 0-d x too)
    return np.maximum(x, out, out=out) if negative_slope <= 1 else np.minimum(x, out, out=out)


def softplus(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold, as torch
    computes it (``log1p(exp(beta * x)) / beta``; exp overflows only where x is kept).

    Example:
        >>> softplus(np.array([0.0, 30.0]), 1.0, 20.0).tolist()
        [0.6931471805599453, 30.0]
    """
    z = x * beta
    soft = np.log1p(np.exp(z))
    soft /= beta
    return np.where(z > threshold, x, soft)


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """softmax along ``axis`` (``rules.softmax``, or its fast twin)."""
    if reference.only:
        return rules.softmax(x, axis)
    return fast_kernels.softmax(x, axis)


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """log_softmax along ``axis`` (``rules.log_softmax``, or its fast twin)."""
    if reference.only:
        return rules.log_softmax(x, axis)
    return fast_kernels.log_softmax(x, axis)


def conv2d(x: np.ndarray, w: np.ndarray, stride: tuple[int, int], padding: tuple[int, int],
           bias: np.ndarray | None = None) -> np.ndarray:
    """conv2d on arrays (``rules.conv2d_reference``, or its fast twin)."""
    if reference.only:
        return rules.conv2d_reference(x, w, stride, padding, bias)
    return fast_kernels.conv2d(x, w, stride, padding, bias)


def conv2d_input_grad(g: np.ndarray, w: np.ndarray, size: tuple[int, int],
                      stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """conv2d's gradient for its input (``rules.conv2d_input_grad_reference``, or its twin)."""
    if reference.only:
        return rules.conv2d_input_grad_reference(g, w, tuple(size), stride, padding)
    return fast_kernels.conv2d_input_grad(g, w, tuple(size), stride, padding)


def conv2d_weight_grad(x: np.ndarray, g: np.ndarray, kernel: tuple[int, int],
                       stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """conv2d's gradient for its filters (``rules.conv2d_weight_grad_reference``, or its
    twin)."""
    if reference.only:
        return rules.conv2d_weight_grad_reference(x, g, tuple(kernel), stride, padding)
    return fast_kernels.conv2d_weight_grad(x, g, tuple(kernel), stride, padding)


def max_pool2d(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
               picks: bool) -> tuple[np.ndarray, Any]:
    """Max pooling on arrays, and where each window's first largest entry is
    (``rules.max_pool2d_reference``, or its twin)."""
    if reference.only:
        return rules.max_pool2d_reference(x, kernel, stride, picks)
    return fast_kernels.max_pool2d(x, kernel, stride, picks)
