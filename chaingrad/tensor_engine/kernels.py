"""What the primitives' ``array`` texts call: the forwards on numpy arrays that are more than
one numpy call (``np`` itself is there too).

Convolution and pooling run their fast twins (``fast_kernels.py``) unless
``chaingrad.use_reference()`` is on, when they run the readable references beside their
primitives in ``rules.py``; the rest have one form.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import reference
from . import fast_kernels, rules
from .rules import log_softmax, matmul, put, scatter_array, softmax, unpool_array

__all__ = ["conv2d", "conv2d_input_grad", "conv2d_weight_grad", "erf", "log_softmax",
           "matmul", "max_pool2d", "np", "put", "scatter_array", "softmax", "unpool_array"]

_erf_of_each = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of each entry, in x's dtype: ``math.erf`` entry by entry (numpy
    has no erf), so an array's numbers are those of ``Value.erf`` (about 0.2 us an entry).

    Example:
        >>> erf(np.array([0.0, 0.5])).tolist()
        [0.0, 0.5204998778130465]
    """
    return np.asarray(_erf_of_each(x), dtype=x.dtype)


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
