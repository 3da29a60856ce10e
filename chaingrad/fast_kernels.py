"""The numpy kernels behind the fast twins of ``rules.py``: float32 erf and GELU by
polynomials fitted to ``math.erfc``, and the cache-sized chunks a kernel of many passes works
in. Each twin is called from beside the readable reference it stands in for (``rules.py``'s
``erf_on_arrays``, ``gelu_on_arrays``, ``GELU``'s rule, ...), which ``chaingrad.use_reference()``
runs instead; tests/tensor_engine/test_kernels.py measures each against its reference.

Numbers only: nothing here builds a graph or knows an op. numpy is imported on first use, as
in ``rules.py``, so that ``import chaingrad`` needs only the standard library.

Example:
    >>> import numpy as np
    >>> x = np.array([0.0, 0.5, -3.0], dtype=np.float32)
    >>> [round(v, 6) for v in erf_float32(x).tolist()]  # math.erf: 0.5205, -0.999978
    [0.0, 0.5205, -0.999978]
"""

from __future__ import annotations

import functools
import importlib
import math
from typing import Any

from . import reference
from .declaration import numpy

SQRT1_2 = math.sqrt(0.5)
"""1 / sqrt(2): GELU's erf(x / sqrt(2)) is erf(x * SQRT1_2)."""


@functools.cache
def scipy_erf() -> Any:
    """SciPy's vectorised ``erf`` (a ufunc), or None without SciPy (an optional
    dependency: importing it costs about 0.1 s, so only on first use)."""
    try:
        return importlib.import_module("scipy.special").erf
    except ImportError:
        return None


ERF_EXPONENT = (-1.128379225730896, -0.636619508266449, -0.10277344286441803,
                0.019120244309306145, 0.0002617704449221492, -0.0018277278868481517,
                0.0007751657976768911, -0.0001894303277367726, 2.9061115128570236e-05,
                -2.599503204692155e-06, 1.0358267132914989e-07)
"""-S(a) for 0 <= a <= 4 as a polynomial in a, the coefficient of a**0 first, where
erf(a) = 1 - exp(-a * S(a)), that is S(a) = -log(erfc(a)) / a (S(0) = 2 / sqrt(pi), and S
is smooth on [0, 4]). Fitted to math.erfc at 3,000 Chebyshev points by least squares on
the relative error, reweighted towards the largest (Lawson's iteration): largest relative
error 7.2e-9, before the coefficients were rounded to float32. Beyond a = 4, erf is 1 in
float32 (erfc(4) = 1.5e-8)."""


CHUNK_ENTRIES = 65536
"""The entries at a time (256 KB of float32) that a kernel of many numpy passes (erf, GELU
and its rule's twin) works on (``in_chunks``): each pass then finds its arrays in the
CPU's cache where the previous left them. On an MLP's (768, 512) activations, GELU in
chunks takes 1.7 ms, whole 4.6 ms (2.7 ms where the heap keeps its pages)."""


GRAD_CHUNK_ENTRIES = 32768
"""The entries at a time that GELU's rule (its twin, ``gelu_grad_fast``) works on: fewer
than the forward's ``CHUNK_ENTRIES``, as the backward pass that calls it holds more arrays
of its own. At 512x192 (98,304 entries), GELU's forward and backward take 1.0 ms in chunks
of 32,768, 1.1 ms of 16,384 and 1.5 ms whole: the rule's temporaries, a whole array each,
make the heap give pages back and take them again (350 page faults a step)."""


def fast_twin_for(*values: Any) -> bool:
    """Whether a rule may hand its work to its fast twin (``gelu_grad_fast``, ...): each
    value a numpy array with dimensions (not a float, a Value, a Tensor under
    ``backward(create_graph=True)``, nor a formula's symbol), and
    ``chaingrad.use_reference()`` off."""
    if reference.only:
        return False
    for v in values:  # noqa: SIM110 - all() of a generator costs a microsecond more
        if type(v).__module__ != "numpy" or not getattr(v, "ndim", 0):
            return False
    return True


def in_chunks(kernel: Any, *arrays: Any, size: int | None = None) -> Any:
    """``kernel(*arrays)`` for an elementwise kernel, computed ``size`` entries at a time
    (``CHUNK_ENTRIES`` unless given) into one array: the same numbers, entry by entry.
    Arrays of one shape and dtype, each C-contiguous, of more than twice ``size``
    entries; anything else is computed whole (at 98,304 entries, chunks of
    ``CHUNK_ENTRIES`` cost more than they save where the heap keeps its pages: GELU 484
    against 397 us).

    Example:
        >>> import numpy as np
        >>> x = np.arange(200_000, dtype=np.float32)
        >>> bool((in_chunks(np.negative, x) == -x).all())
        True
    """
    x, size = arrays[0], size or CHUNK_ENTRIES
    if x.size <= 2 * size or any(a.shape != x.shape or a.dtype != x.dtype
                                 or not a.flags.c_contiguous for a in arrays):
        return kernel(*arrays)
    out = numpy().empty_like(x)
    into, flat = out.reshape(-1), [a.reshape(-1) for a in arrays]
    for start in range(0, x.size, size):
        into[start:start + size] = kernel(*(f[start:start + size] for f in flat))
    return out


def erf_float32(x: Any) -> Any:
    """The twin of ``erf_on_arrays``'s reference for a float32 array: within 2 ulps of
    ``math.erf`` entry by entry, and of torch's (tests/tensor_engine/test_kernels.py
    measures both over a dense grid), in 25 numpy passes over two arrays (the 20 of
    Horner's rule take most of its time) instead of a Python call per entry.
    erf(|x|) = -expm1(-|x| * S(|x|)), S the polynomial ``ERF_EXPONENT`` (|x| taken as at
    most 4), which expm1 keeps exact near 0 too; then x's sign, set bit by bit (erf is
    odd). nan stays nan; +-inf gives +-1."""
    np = numpy()
    # out= keeps a 0-d x's results arrays (numpy makes them scalars, which ufuncs cannot
    # write into); the coefficients are Python floats: numpy rounds each to float32 (and
    # takes them faster than np.float32 numbers, by 12%)
    a = np.abs(x, out=np.empty_like(x))
    np.minimum(a, 4.0, out=a)
    out = np.multiply(a, ERF_EXPONENT[-1], out=np.empty_like(a))
    for c in ERF_EXPONENT[-2:0:-1]:
        out += c
        out *= a
    out += ERF_EXPONENT[0]
    out *= a  # -|x| S(|x|)
    np.expm1(out, out=out)  # -erf(|x|), in (-1, 0]
    bits = out.view(np.uint32)  # the sign set bit by bit: np.copysign takes 1.7x as long;
    bits &= x.view(np.uint32) | np.uint32(0x7FFFFFFF)  # out's is set: kept where x's is
    return out


PHI_EXPONENT = (-1.128380251487424, -0.6365977336060324, -0.10291961268653763,
                0.01958395907046733, -0.0005369320684316071, -0.0010324024097856752,
                0.0003088024006203143, -3.144018685305106e-05)
"""-S(a) as ``ERF_EXPONENT`` (erf(a) = 1 - exp(-a * S(a)), 0 <= a <= 4), of degree 7, for
Phi(x) = 0.5 * (1 + erf(x / sqrt 2)) (GELU's twins): fitted to math.erfc at 6,000 Chebyshev
points by least squares on Phi's error, S's times 0.5 * a * erfc(a) (Lawson's iteration):
largest error of Phi 8.0e-9. Phi needs S to that absolute accuracy only, where erf itself,
within 2 ulps near 0, needs degree 10 (``ERF_EXPONENT``; degree 9 fits erf to 3.8 ulps)."""

GELU_EXPONENT = tuple(c * SQRT1_2 ** (k + 1) for k, c in enumerate(PHI_EXPONENT))
"""``PHI_EXPONENT`` as a polynomial in |x|: -|x| / sqrt 2 times S(|x| / sqrt 2) is the sum of
these times |x| ** (k + 1), 1 / sqrt 2 ** (k + 1) put into each coefficient (GELU's twins
save the pass that would scale x)."""


def gelu_float32(x: Any) -> Any:
    """The twin of ``gelu_of_chunk`` for a float32 array: 19 numpy passes where it takes
    31; within 2 ulps of x of the reference's numbers (erf by ``math.erf``) and 5 of
    torch's, as the reference itself (tests/tensor_engine/test_kernels.py); for x > 0
    within 1.6 ulps of the exact value (torch's: 4.7). With e = -erf(|x| / sqrt 2)
    (``minus_erf_of_scaled``), GELU is 0.5 * (x - |x| * e): for x >= 0 that is
    0.5 * x * (1 + erf(x / sqrt 2)), for x < 0 0.5 * x * (1 - erf(|x| / sqrt 2)), the
    same, as erf is odd; no sign to set bit by bit, no scaling of x by 1 / sqrt 2
    (``GELU_EXPONENT``), a polynomial of degree 7 (``PHI_EXPONENT``). nan stays nan, inf
    gives inf and -inf nan (as ``gelu_of_chunk``; torch's gives nan at both); -0.0, and x
    below -5.54, give 0.0 where torch's gives -0.0."""
    np = numpy()
    x_abs = np.abs(x, out=np.empty_like(x))  # (out=: arrays for a 0-d x too, as erf_float32)
    out = minus_erf_of_scaled(x_abs)
    out *= x_abs
    np.subtract(x, out, out=out)
    out *= 0.5
    return out


def minus_erf_of_scaled(a: Any) -> Any:
    """-erf(a / sqrt 2) for a float32 array ``a`` of |x|, in a new array, in [-1, 0], to the
    accuracy Phi needs (``PHI_EXPONENT``): -expm1(-a / sqrt 2 * S(a / sqrt 2)) as
    ``erf_float32`` computes erf, the scaling put into the coefficients (``GELU_EXPONENT``):
    16 passes. a is not taken as at most 4 * sqrt 2, where the fit ends: from a = 5.54 on the
    polynomial's -a / sqrt 2 * S is below -18, and the result -1 exactly, up to inf (as
    erf's float32 value; tests/tensor_engine/test_kernels.py checks it)."""
    np = numpy()
    out = np.multiply(a, GELU_EXPONENT[-1], out=np.empty_like(a))
    for c in GELU_EXPONENT[-2:0:-1]:
        out += c
        out *= a
    out += GELU_EXPONENT[0]
    out *= a  # -a / sqrt 2 * S(a / sqrt 2)
    return np.expm1(out, out=out)


def phi_float32(x: Any) -> Any:
    """Phi(x) = 0.5 * (1 + erf(x / sqrt 2)) for a float32 array, GELU's rule's twin's:
    e = -erf(|x| / sqrt 2) (``minus_erf_of_scaled``), its sign bit flipped where x < 0
    (then -erf(x / sqrt 2), erf being odd), 0.5 * (1 - that): 21 passes where erf of
    x / sqrt 2 and 1 + erf take 30; within 0.71 ulps of 1 of the exact Phi (they: 0.65)."""
    np = numpy()
    out = minus_erf_of_scaled(np.abs(x, out=np.empty_like(x)))
    bits = out.view(np.uint32)
    bits ^= x.view(np.uint32) & np.uint32(0x80000000)  # -erf(x / sqrt 2)
    np.subtract(1, out, out=out)
    out *= 0.5
    return out
