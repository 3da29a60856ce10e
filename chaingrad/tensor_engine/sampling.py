"""torch's CPU random numbers, bit for bit: the MT19937 stream and each distribution.

PyTorch draws every random number on the CPU from one Mersenne Twister (MT19937) per
generator, and turns its 32-bit outputs into numbers with a few documented formulas
(ATen's ``CPUGeneratorImpl``, ``DistributionsHelper.h``, ``TransformationHelper.h`` and
the CPU kernels in ``native/cpu/DistributionTemplates.h``). This module does the same with
numpy: ``Stream`` is the generator's state (numpy's ``MT19937`` is the same twister, given
torch's seeding), and each function below is one of torch's algorithms, vectorised where
torch's order of draws allows it, so that the same seed gives the same numbers.

Notation used in the docstrings: ``r32`` is one 32-bit output of the twister, ``r64 =
r32 * 2**32 + r32'`` two of them (the first is the high half), ``u24 = (r32 mod 2**24) /
2**24`` a float32 in [0, 1) and ``u53 = (r64 mod 2**53) / 2**53`` a float64 in [0, 1).
``fma(a, b, c)`` is a * b + c rounded once: torch's AVX2 kernels on x86 and its ARM kernels
are compiled with fused multiply-adds, so its results are rounded that way; its x86 kernels
without AVX2 (older processors, or ``ATEN_CPU_CAPABILITY=default``) round a * b, then the
sum. ``mul_add`` is whichever of the two torch's kernels do on this machine.

``chaingrad.Generator`` (``generator.py``) is the torch-named object around a ``Stream``;
the functions here take such a generator, or None for the default one. ``Sampling`` is the
part of ``Tensor`` that draws from a tensor (``x.multinomial``).

Example:
    >>> stream = Stream(2147483647)
    >>> [round(float(x), 4) for x in draw_uniform(stream, (3,), np.dtype(np.float32), 0.0, 1.0)]
    [0.7081, 0.3542, 0.1054]
"""

from __future__ import annotations

import math
import os
import platform
import struct
from typing import Any

import numpy as np

from ..guards import all_finite
from . import dtypes
from .arrays import SelfTensor

# ---- the stream: torch's CPUGeneratorImpl ----

N = 624  # the twister's state: 624 words of 32 bits
DEFAULT_SEED = 67280421310721  # the seed of a new torch.Generator()
STATE_SIZE = 5056  # bytes of torch's CPU generator state (get_rng_state)
_STATE_LAYOUT = struct.Struct("<QiiQ")  # seed, left, seeded, next (then 624 uint64 words)
_NORMAL_AT, _FLOAT_NORMAL_AT = 5016, 5048  # offsets of the cached normal samples


class Stream:
    """One MT19937 stream as torch's CPU generator holds it: the seed it started from, the
    twister's state, and the second number of the last Box-Muller pair drawn one at a time
    (torch's ``next_double_normal_sample``; ``next_float_normal`` is kept only so that a
    state round-trips: no CPU kernel of torch uses it).

    Seeding is the reference ``init_genrand`` on the low 32 bits of the seed:
    ``mt[0] = seed mod 2**32``, ``mt[i] = (1812433253 * (mt[i-1] xor (mt[i-1] >> 30)) + i)
    mod 2**32``; the first draw then twists all 624 words, as numpy's ``MT19937`` does.

    Example:
        >>> Stream(0).random32(2).tolist()
        [2357136044, 2546248239]
    """

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        """Start again from ``seed`` (an int in [0, 2**64)); forget the cached normals."""
        key = np.empty(N, dtype=np.uint32)
        word = seed & 0xFFFFFFFF
        for i in range(N):
            key[i] = word
            word = (1812433253 * (word ^ (word >> 30)) + i + 1) & 0xFFFFFFFF
        self.initial_seed = seed
        self.twister = np.random.MT19937()
        self.twister.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": N}}
        self.fresh = True  # nothing drawn since seeding: torch's state says next = 0, not 624
        self.next_normal: float | None = None
        self.next_float_normal: float | None = None

    def random32(self, n: int) -> np.ndarray:
        """The next ``n`` outputs of the twister, r32 in [0, 2**32), as uint64."""
        if n:
            self.fresh = False
        return self.twister.random_raw(n)

    def random64(self, n: int) -> np.ndarray:
        """The next ``n`` r64 = r32 * 2**32 + r32' (two outputs each, the first the high
        half), as uint64: torch's ``random64``."""
        pairs = self.random32(2 * n)
        return (pairs[0::2] << np.uint64(32)) | pairs[1::2]

    def state_bytes(self) -> np.ndarray:
        """The state in torch's ``CPUGeneratorImplState`` layout, 5056 bytes: the seed
        (uint64), ``left`` and ``seeded`` (int32), ``next`` (uint64), the 624 words (each
        as uint64), three doubles of which the second is the cached normal, its validity
        (int32), then the cached float normal and its validity (the rest is padding)."""
        state = self.twister.state["state"]
        pos = int(state["pos"])
        if pos == N:  # the next draw twists: torch says left = 1
            left, position = 1, 0 if self.fresh else N
        else:
            left, position = N + 1 - pos, pos
        raw = bytearray(STATE_SIZE)
        _STATE_LAYOUT.pack_into(raw, 0, self.initial_seed, left, 1, position)
        raw[24:24 + 8 * N] = np.asarray(state["key"], dtype="<u8").tobytes()
        if self.next_normal is not None:
            struct.pack_into("<dddi", raw, _NORMAL_AT, 0.0, self.next_normal, 0.0, 1)
        if self.next_float_normal is not None:
            struct.pack_into("<f?", raw, _FLOAT_NORMAL_AT, self.next_float_normal, True)
        return np.frombuffer(bytes(raw), dtype=np.uint8).copy()

    def load_state_bytes(self, raw: bytes, where: str) -> None:
        """Take a state laid out as ``state_bytes`` gives it (torch's, or chaingrad's)."""
        if len(raw) != STATE_SIZE:
            raise RuntimeError(f"{where}: Expected a CPUGeneratorImplState of size "
                               f"{STATE_SIZE} but found the input RNG state size to be "
                               f"{len(raw)}")
        seed, left, seeded, position = _STATE_LAYOUT.unpack_from(raw, 0)
        if not seeded or not 0 < left <= N or position > N:
            raise RuntimeError(f"{where}: Invalid mt19937 state")
        if left != 1 and left + position != N + 1:
            raise RuntimeError(f"{where}: a state with left={left} and next={position} is "
                               "one torch's generator never reaches (left + next must be "
                               f"{N + 1}); chaingrad cannot continue from it")
        key = np.frombuffer(raw, dtype="<u8", count=N, offset=24).astype(np.uint32)
        _, normal, _, normal_valid = struct.unpack_from("<dddi", raw, _NORMAL_AT)
        float_normal, float_valid = struct.unpack_from("<f?", raw, _FLOAT_NORMAL_AT)
        self.initial_seed = seed
        self.twister = np.random.MT19937()
        pos = N if left == 1 else position
        self.twister.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self.fresh = left == 1 and position == 0
        self.next_normal = normal if normal_valid else None
        self.next_float_normal = float_normal if float_valid else None


DEFAULT = Stream(int.from_bytes(os.urandom(8), "little"))  # torch seeds its own from entropy


def stream_of(generator: Any, op: str) -> Stream:
    """The stream to draw from: the default one for None, else the generator's."""
    if generator is None:
        return DEFAULT
    stream = generator if isinstance(generator, Stream) else getattr(generator, "_stream", None)
    if not isinstance(stream, Stream):
        raise TypeError(f"{op}: generator must be a chaingrad.Generator, got "
                        f"{type(generator).__module__}.{type(generator).__qualname__}")
    return stream


def draw_into(target: np.ndarray, draw: Any, generator: Any, *args: Any,
              **kwargs: Any) -> np.ndarray:
    """New numbers for every entry of ``target``, drawn by ``draw`` (``draw_uniform``,
    ``draw_normal``, ...) in the order of target's memory, as torch fills a tensor in place (a
    transposed view's entries column by column), and laid out in target's shape. An array
    among ``args`` (bernoulli's chances) is broadcast to target's shape and read in the
    same order."""
    axes = sorted(range(target.ndim), key=lambda k: -abs(target.strides[k]))  # outer first
    shape = tuple(target.shape[k] for k in axes)
    args = tuple(np.broadcast_to(a, target.shape).transpose(axes)
                 if isinstance(a, np.ndarray) else a for a in args)
    drawn = draw(generator, shape, target.dtype, *args, **kwargs)
    return drawn.transpose(np.argsort(axes))


# ---- uniform numbers ----


def u24(stream: Stream, n: int) -> np.ndarray:
    """``n`` float32 numbers u24 = (r32 mod 2**24) / 2**24, one draw each: torch's
    ``uniform_real_distribution<float>(0, 1)``."""
    return (stream.random32(n) & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2**-24)


def u53(stream: Stream, n: int) -> np.ndarray:
    """``n`` float64 numbers u53 = (r64 mod 2**53) / 2**53, two draws each: torch's
    ``uniform_real_distribution<double>(0, 1)``."""
    return (stream.random64(n) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53


def draw_uniform(generator: Any, shape: tuple[int, ...], dtype: np.dtype, low: float,
            high: float, op: str = "uniform_") -> np.ndarray:
    """Numbers drawn uniformly from [low, high), torch's ``uniform_`` (and ``rand``).

    float64: ``mul_add(u53, high - low, low)``. float32: ``mul_add(u24, high - low, low)`` in
    float32 (low and high rounded to float32 first). float16: the float32 number rounded to
    float16. A number equal to ``high`` after rounding becomes ``low``, as in torch.
    """
    _check_floating(dtype, op)
    if not low <= high:
        raise RuntimeError(f"{op}: uniform_ expects to return a [from, to) range, but found "
                           f"from={low} > to={high}")
    stream, n = stream_of(generator, op), math.prod(shape)
    exact = np.float64 if dtype == np.float64 else np.float32  # torch's opmath type
    a, b = exact(low), exact(high)
    x = u53(stream, n) if exact is np.float64 else u24(stream, n)
    value = (x + a if b - a == 1 else mul_add(x, b - a, a)).astype(dtype)  # x * 1 is exact
    value[value == _rounded(high, dtype)] = _rounded(low, dtype)
    return value.reshape(shape)


# ---- normal numbers ----


def draw_normal(generator: Any, shape: tuple[int, ...], dtype: np.dtype, mean: float = 0.0,
           std: float = 1.0, contiguous: bool = True, op: str = "normal_") -> np.ndarray:
    """Numbers drawn from N(mean, std**2), torch's ``normal_`` (and ``randn``).

    Fewer than 16 numbers, or a tensor whose memory is not row-major, are drawn one at a
    time by ``normal_serial``. Otherwise torch fills the tensor with uniform numbers (u53 for
    float64, u24 for float32; float16 draws them for the whole blocks only), turns each
    block of 16, uniforms u[0:16], into 16 normals by the Box-Muller transform,

        r_j = sqrt(-2 log(1 - u[j])),  t_j = 2 pi u[j + 8]            (j = 0 .. 7)
        out[j] = mul_add(r_j cos t_j, std, mean),  out[j + 8] = mul_add(r_j sin t_j, std, mean)

    and, when the count is not a multiple of 16, draws 16 more uniforms and recomputes the
    last 16 numbers from them (overwriting some of the previous block).
    """
    _check_floating(dtype, op)
    if not std >= 0.0:
        raise RuntimeError(f"{op}: normal expects std >= 0.0, but found std {std}")
    stream, n = stream_of(generator, op), math.prod(shape)
    if n < 16 or not contiguous:
        return normal_serial(stream, n, mean, std).astype(_via(dtype)).astype(dtype).reshape(shape)
    if dtype == np.float64:
        uniforms, block = u53, box_muller_16_double
    else:
        uniforms, block = u24, BOX_MULLER_16_FLOAT
    whole = n - n % 16
    # float and double draw a uniform for every entry; half only for the whole blocks
    drawn = uniforms(stream, whole if dtype == np.float16 else n)
    out = np.zeros(n, dtype=drawn.dtype)
    out[:len(drawn)] = drawn
    blocks = out[:whole].reshape(-1, 16)
    for start in range(0, len(blocks), ROWS_AT_ONCE):  # a piece at a time stays in cache
        piece = blocks[start:start + ROWS_AT_ONCE]
        piece[...] = block(piece, mean, std)
    if n % 16:
        out[n - 16:] = block(uniforms(stream, 16).reshape(1, 16), mean, std).ravel()
    return out.astype(dtype).reshape(shape)


ROWS_AT_ONCE = 8192  # blocks of 16 computed together: 2**17 numbers, about twice as fast


def normal_serial(stream: Stream, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` float64 normals drawn one at a time (torch's ``normal_distribution<double>``):
    each pair takes u1 = u53 and u2 = u53, r = sqrt(-2 log1p(-u2)), t = 2 pi u1, and gives
    ``r cos t`` now and ``r sin t`` to the next number (kept in the generator until then);
    each is returned as mul_add(x, std, mean)."""
    first = [] if stream.next_normal is None or n == 0 else [stream.next_normal]
    if first:
        stream.next_normal = None
    pairs = (n - len(first) + 1) // 2
    u = u53(stream, 2 * pairs).reshape(pairs, 2)
    radius = np.sqrt(-2.0 * np.log1p(-u[:, 1]))
    angle = 2.0 * math.pi * u[:, 0]
    drawn = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1).ravel()
    values = np.concatenate([first, drawn])
    if len(values) > n:  # the last pair's sine waits for the next call
        stream.next_normal = float(values[n])
    return mul_add(values[:n], np.float64(std), np.float64(mean))


def box_muller_16_double(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Blocks of 16 float64 uniforms (rows of ``u``) as 16 normals each, with libm's log,
    cos and sin (numpy's float64 functions agree with them to the last bit or one ulp)."""
    radius = np.sqrt(-2.0 * np.log(1.0 - u[:, :8]))
    angle = 2.0 * math.pi * u[:, 8:]
    normals = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return mul_add(normals, np.float64(std), np.float64(mean))


def box_muller_16_float_libm(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Blocks of 16 float32 uniforms as 16 normals each, as torch computes them where it
    has no AVX2 kernel (ARM, older x86): float32 log, cos and sin from the C library,
    here each computed in float64 and rounded to float32 (the C library's float32
    functions round a few results the other way, so these can differ by an ulp or two);
    t = 2 pi u is computed in float64 and rounded to float32, as torch does."""
    radius = np.sqrt(np.float32(-2) * np.log(1.0 - u[:, :8].astype(np.float64)).astype(np.float32))
    angle = (2.0 * math.pi * u[:, 8:].astype(np.float64)).astype(np.float32)
    cos = np.cos(angle.astype(np.float64)).astype(np.float32)
    sin = np.sin(angle.astype(np.float64)).astype(np.float32)
    normals = np.concatenate([radius * cos, radius * sin], axis=1)
    return mul_add(normals, np.float32(std), np.float32(mean))


def box_muller_16_float_avx2(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Blocks of 16 float32 uniforms as 16 normals each, as torch's AVX2 kernel computes
    them (every x86 machine with AVX2, AVX-512 ones included): the same Box-Muller
    transform, with log, sin and cos from the Cephes polynomials of ``avx_mathfun.h``
    (``log_cephes``, ``sincos_cephes``), every step rounded to float32 as that kernel rounds
    it. The result is torch's to the last bit."""
    radius = np.sqrt(np.float32(-2) * log_cephes(np.float32(1) - u[:, :8]))
    sin, cos = sincos_cephes(np.float32(2 * math.pi) * u[:, 8:])
    normals = np.concatenate([radius * cos, radius * sin], axis=1)
    if std == 1.0:  # fma(x, 1, mean) is x + mean rounded once
        return normals + np.float32(mean)
    return fma(normals, np.float32(std), np.float32(mean))


# Cephes' float32 log: log(x) = log(m) + e log 2 for x = m 2**e, m in [sqrt(1/2), sqrt(2));
# log(1 + f) = f - f**2 / 2 + f**3 P(f), P a polynomial of degree 8 (coefficients below);
# log 2 is split as 0.693359375 - 2.12194440e-4 so that e log 2 adds without error.
LOG_P = tuple(np.float32(c) for c in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
LOG2_HIGH, LOG2_LOW = np.float32(0.693359375), np.float32(-2.12194440e-4)


def log_cephes(x: np.ndarray) -> np.ndarray:
    """log(x) for float32 x in (0, 1], rounded step by step as ``log256_ps`` of torch's
    ``avx_mathfun.h`` (compiled with fused multiply-adds) rounds it.

    x = m 2**e with m in [1/2, 1); if m < sqrt(1/2), m = 2m and e = e - 1; f = m - 1; then
    log x = f + (f**3 P(f) + e LOG2_LOW - f**2 / 2) + e LOG2_HIGH, P by Horner's rule.
    """
    bits = x.view(np.int32)
    e = ((bits >> 23) - 126).astype(np.float32)  # x = m 2**e, m in [1/2, 1)
    m = ((bits & 0x007FFFFF) | 0x3F000000).view(np.float32)
    small = m < np.float32(math.sqrt(0.5))
    e = np.where(small, e - np.float32(1), e)
    f = (m - np.float32(1)) + np.where(small, m, np.float32(0))
    f2 = f * f
    p = np.full_like(f, LOG_P[0])
    for c in LOG_P[1:]:
        p = fma(p, f, c)
    y = fma(p * f, f2, e * LOG2_LOW)  # f**3 P(f) + e LOG2_LOW
    y = fma(-f2, np.float32(0.5), y)
    return fma(e, LOG2_HIGH, f + y)


# Cephes' float32 sine and cosine: t = j pi/4 + x, |x| <= pi/4, j even, reduced in three
# steps (pi/4 = DP1 + DP2 + DP3 exactly enough); then cos x = 1 - x**2/2 + x**4 C(x**2) and
# sin x = x + x**3 S(x**2), and the octant j chooses which one and its sign.
FOUR_OVER_PI = np.float32(1.27323954473516)
PI_OVER_4 = tuple(np.float32(c) for c in (
    -0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8))
SIN_P = tuple(np.float32(c) for c in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1))
COS_P = tuple(np.float32(c) for c in (
    2.443315711809948e-005, -1.388731625493765e-003, 4.166664568298827e-002))


def sincos_cephes(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sin t, cos t) for float32 t >= 0, rounded as ``sincos256_ps`` of torch's
    ``avx_mathfun.h`` rounds them (with fused multiply-adds).

    j = 2 ceil(floor(4t / pi) / 2) (the even octant nearest above), x = t - j pi/4; in
    octants j = 0, 4 (mod 8) sin t = +-S and cos t = +-C, in j = 2, 6 they swap:
    sin is negative for j mod 8 in {4, 6}, cos for j mod 8 in {2, 4}.
    """
    j = (t * FOUR_OVER_PI).astype(np.int32)
    j = (j + 1) & ~1
    x = t
    for part in PI_OVER_4:
        x = fma(j.astype(np.float32), part, x)
    x2 = x * x
    c = fma(fma(np.full_like(x, COS_P[0]), x2, COS_P[1]), x2, COS_P[2])
    c = fma(c * x2, x2, -(x2 * np.float32(0.5))) + np.float32(1)
    s = fma(fma(np.full_like(x, SIN_P[0]), x2, SIN_P[1]), x2, SIN_P[2])
    s = fma(x, s * x2, x)
    swap = (j & 2) != 0
    sin, cos = np.where(swap, c, s), np.where(swap, s, c)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where(((j + 2) & 4) != 0, -cos, cos)
    return sin, cos


def _torch_has_avx2_kernel() -> bool:
    """Whether torch runs its AVX2 kernels here, as it decides: $ATEN_CPU_CAPABILITY if set,
    else an x86-64 processor with AVX2 and FMA (AVX-512 machines use the AVX2 kernel for
    normal numbers too)."""
    chosen = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if chosen:
        return chosen in ("avx2", "avx512")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = next((line for line in info if line.startswith("flags")), "").split()
    except OSError:
        return True  # not Linux: every x86-64 machine of the last ten years has both
    return "avx2" in flags and "fma" in flags


BOX_MULLER_16_FLOAT = (box_muller_16_float_avx2 if _torch_has_avx2_kernel()
                       else box_muller_16_float_libm)
# x86 kernels fuse a * b + c only when compiled for AVX2; ARM's always do
TORCH_FUSES = (_torch_has_avx2_kernel()
               if platform.machine().lower() in ("x86_64", "amd64") else True)


# ---- exponential, integers, Bernoulli ----


def draw_exponential(generator: Any, shape: tuple[int, ...], dtype: np.dtype, lambd: float = 1.0,
                op: str = "exponential_") -> np.ndarray:
    """Numbers drawn from the exponential distribution of rate ``lambd``, torch's
    ``exponential_``: ``-1/lambd * log1p(-u53)`` in float64, rounded to ``dtype``."""
    _check_floating(dtype, op, "Exponential distribution is a continuous probability "
                    "distribution. dtype must be a floating point but you specified")
    if not lambd > 0.0:
        raise RuntimeError(f"{op}: exponential_ expects lambda > 0.0, but found "
                           f"lambda={lambd}")
    stream, n = stream_of(generator, op), math.prod(shape)
    values = (-1.0 / lambd) * np.log1p(-u53(stream, n))
    return values.astype(_via(dtype)).astype(dtype).reshape(shape)


def draw_integers(generator: Any, shape: tuple[int, ...], dtype: np.dtype, low: int, high: int,
             op: str = "random_") -> np.ndarray:
    """Integers drawn from [low, high), torch's ``random_(from, to)`` (and ``randint``):
    with ``span = high - low``, ``low + (r64 mod span)`` if span >= 2**28, else
    ``low + (r32 mod span)``, then converted to ``dtype``."""
    if not low < high:
        raise RuntimeError(f"{op}: random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    stream, n, span = stream_of(generator, op), math.prod(shape), high - low
    drawn = stream.random64(n) if span >= 2**28 else stream.random32(n)
    values = (drawn % np.uint64(span)).astype(np.int64)
    if low:
        values += low
    return values.astype(dtype, copy=False).reshape(shape)


def random_bits(generator: Any, shape: tuple[int, ...], dtype: np.dtype,
                op: str = "random_") -> np.ndarray:
    """torch's ``random_()`` without bounds: r64 mod 2**63 (int64), r64 mod (2**53 + 1)
    (float64), r32 mod (2**24 + 1) (float32), r32 mod 2049 (float16), r32 mod 2**31,
    2**15, 2**7, 2**8 (int32, int16, int8, uint8), r32 mod 2 (bool)."""
    stream, n = stream_of(generator, op), math.prod(shape)
    wide = dtype in (np.dtype(np.int64), np.dtype(np.float64))
    drawn = stream.random64(n) if wide else stream.random32(n)
    if dtype.kind == "f":
        modulus = 2 ** np.finfo(dtype).nmant * 2 + 1
    elif dtype.kind == "b":
        modulus = 2
    else:
        modulus = int(np.iinfo(dtype).max) + 1
    return (drawn % np.uint64(modulus)).astype(dtype).reshape(shape)


def draw_bernoulli(generator: Any, shape: tuple[int, ...], dtype: np.dtype, p: Any,
              op: str = "bernoulli_") -> np.ndarray:
    """1 with probability p, else 0, torch's ``bernoulli_``. For a number p (and a float64
    array of them): ``u53 < p``; for a float32 or float16 array: ``u24 < p`` in float32.
    One draw per entry, in order; an array p is broadcast to ``shape``."""
    stream, n = stream_of(generator, op), math.prod(shape)
    single = isinstance(p, np.ndarray) and p.dtype != np.float64
    chances = np.asarray(p, dtype=np.float32 if single else np.float64)
    if not ((chances >= 0) & (chances <= 1)).all():
        raise RuntimeError(f"{op}: bernoulli_ expects p to be in [0, 1], but got p={p}")
    if chances.ndim:  # one chance per entry
        chances = np.broadcast_to(chances, shape).ravel()
    drawn = u24(stream, n) if single else u53(stream, n)
    return (drawn < chances).astype(dtype).reshape(shape)


def draw_randperm(generator: Any, n: int, op: str = "randperm") -> np.ndarray:
    """A random permutation of 0 .. n-1 as int64, torch's: for i = 0 .. n-2, swap entries
    i and i + (r32 mod (n - i)) (``swaps``; computed by its twin ``swaps_at_once``)."""
    stream = stream_of(generator, op)
    spans = np.arange(n, 1, -1, dtype=np.uint64)  # n - i for i = 0 .. n-2
    offsets = (stream.random32(max(n - 1, 0)) % spans).astype(np.int64)
    return swaps_at_once(n, offsets)


def swaps(n: int, offsets: np.ndarray) -> np.ndarray:
    """0 .. n-1 with entries i and i + offsets[i] swapped, for i = 0, 1, ... in turn: the
    specification of ``swaps_at_once`` (one swap after the other, as torch does them)."""
    order = list(range(n))
    for i, offset in enumerate(offsets.tolist()):
        j = i + offset
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)


def swaps_at_once(n: int, offsets: np.ndarray) -> np.ndarray:
    """The twin of ``swaps`` (the same permutation, tested so), without a loop over n.

    Step i swaps positions i and t_i = i + offsets[i] >= i (the last step is i = n-1,
    t = n-1), so after it position i never changes: the result at i is what position t_i
    held just before step i. A position p >= i holds what the last earlier step aimed at p
    moved there (else p itself), and a step k moves what position k held before it, v_k.
    So v_k is v of the last step before k that aimed at k (else k): following those links
    to the first step without one gives v_k (by pointer doubling); and result[i] is v_i if
    t_i = i, else v of the previous step aimed at t_i, else t_i.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    step = np.arange(n, dtype=np.int64)
    target = np.append(step[:-1] + offsets, n - 1)
    by_target = np.argsort(target, kind="stable")  # grouped by target, each group in order
    sorted_target = target[by_target]
    same = sorted_target[1:] == sorted_target[:-1]
    previous = np.full(n, -1, dtype=np.int64)  # the previous step aimed at the same target
    previous[by_target[1:][same]] = by_target[:-1][same]
    last = np.full(n, -1, dtype=np.int64)  # the last step aimed at each position
    last[sorted_target] = by_target  # a later step overwrites an earlier one
    stays = target == step
    before = np.where(stays, previous, last)  # the last step before k aimed at k
    root = np.where(before >= 0, before, step)
    while True:  # pointer doubling: each pass halves the links left to follow
        further = root[root]
        if np.array_equal(further, root):
            break
        root = further
    moved_in = np.where(previous >= 0, root[np.maximum(previous, 0)], target)
    return np.where(stays, root, moved_in)


# ---- multinomial ----

_lecture_override: list[bool | None] = [None]  # use_lecture_rng's choice; None: the environment


def use_lecture_rng(enabled: bool | None = True) -> None:
    """Draw ``draw_multinomial`` with replacement as the torch of the Zero to Hero lectures did
    (``multinomial_cdf``), so that makemore's samples are the video's: the same as setting
    the environment variable CHAINGRAD_LECTURE_RNG=1. False draws as today's torch again,
    whatever the environment says; None follows the environment."""
    _lecture_override[0] = enabled


def lecture_rng() -> bool:
    """Whether ``draw_multinomial`` draws as the lectures' torch did: ``use_lecture_rng``'s
    choice, else whether CHAINGRAD_LECTURE_RNG is 1 (read at each draw)."""
    chosen = _lecture_override[0]
    return os.environ.get("CHAINGRAD_LECTURE_RNG") == "1" if chosen is None else chosen


def draw_multinomial(generator: Any, probs: np.ndarray, num_samples: int,
                replacement: bool = False, op: str = "multinomial") -> np.ndarray:
    """``num_samples`` category indices per row of ``probs`` (1-D or 2-D, weights that need
    not sum to 1), torch's ``draw_multinomial``, int64.

    Without replacement, or for one sample, torch 2.x draws q ~ Exp(1) for every entry (in
    ``probs``' dtype, ``draw_exponential``) and takes the indices of the largest p / q (the
    exponential form of the Gumbel-max trick): ``multinomial_exponential``. With
    replacement and several samples (and for one, under ``use_lecture_rng``), it walks the
    cumulative distribution: ``multinomial_cdf``.
    """
    _check_multinomial(probs, num_samples, replacement, op)
    rows = probs.reshape(-1, probs.shape[-1])
    if not replacement or (num_samples == 1 and not lecture_rng()):
        picked = multinomial_exponential(generator, rows, num_samples, op)
    else:
        picked = multinomial_cdf(generator, rows, num_samples, op)
    return picked.reshape(probs.shape[:-1] + (num_samples,))


def multinomial_exponential(generator: Any, rows: np.ndarray, num_samples: int,
                            op: str) -> np.ndarray:
    """argmax (one sample) or the top ``num_samples`` (best first) of p / q per row, with
    q ~ Exp(1) drawn for all entries in row-major order."""
    if not (all_finite(rows) and (rows >= 0).all()):
        raise RuntimeError(f"{op}: probability tensor contains either `inf`, `nan` or "
                           "element < 0")
    if (rows.sum(axis=1) == 0).any():
        raise RuntimeError(f"{op}: invalid multinomial distribution (sum of probabilities "
                           "<= 0)")
    score = rows / draw_exponential(generator, rows.shape, rows.dtype, 1.0, op)
    if num_samples == 1:
        return np.argmax(score, axis=1)[:, None]
    return np.argsort(-score, axis=1, kind="stable")[:, :num_samples]


def multinomial_cdf(generator: Any, rows: np.ndarray, num_samples: int, op: str) -> np.ndarray:
    """For each row: the cumulative sums c (in float32 for float16 and bfloat16 rows, else
    in the rows' dtype, added left to right), divided by their total, the last set to 1;
    then per sample one u53 and the first index j with c[j] >= u (a binary search). Row by row, the
    samples of a row in order."""
    if not (rows >= 0).all():  # nan too, as in torch
        raise RuntimeError(f"{op}: invalid multinomial distribution (encountering "
                           "probability entry < 0)")
    if not all_finite(rows):
        raise RuntimeError(f"{op}: invalid multinomial distribution (encountering "
                           "probability entry = infinity or NaN)")
    exact = np.float32 if rows.dtype.itemsize == 2 else rows.dtype  # half, bfloat16
    cumulative = np.cumsum(rows, axis=1, dtype=exact)
    totals = cumulative[:, -1:]
    if not (totals > 0).all():
        raise RuntimeError(f"{op}: invalid multinomial distribution (sum of probabilities "
                           "<= 0)")
    cumulative = cumulative / totals
    cumulative[:, -1] = 1
    u = u53(stream_of(generator, op), rows.shape[0] * num_samples).reshape(-1, num_samples)
    return np.stack([np.searchsorted(c.astype(np.float64), draws, side="left")
                     for c, draws in zip(cumulative, u)]).astype(np.int64)


def _check_multinomial(probs: np.ndarray, num_samples: int, replacement: bool,
                       op: str) -> None:
    """torch's checks of multinomial's arguments, with its messages."""
    if probs.ndim not in (1, 2):
        raise RuntimeError(f"{op}: prob_dist must be 1 or 2 dim")
    if not dtypes.is_floating_dtype(probs.dtype):
        raise RuntimeError(f"{op}: multinomial only supports floating-point dtypes for "
                           f"input, got: {_torch_name(probs.dtype)}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"{op}: num_samples must be an int, got "
                        f"{type(num_samples).__name__}")
    if num_samples <= 0:
        raise RuntimeError(f"{op}: cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError(f"{op}: cannot sample n_sample > prob_dist.size(-1) samples "
                           "without replacement")
    if probs.shape[-1] > 2**24:
        raise RuntimeError(f"{op}: number of categories cannot exceed 2^24")


# ---- x.multinomial(): the Sampling part of Tensor ----


class Sampling:
    """The methods of ``Tensor`` that draw random numbers from it (torch's
    ``Tensor.multinomial``; the random fills, ``uniform_`` and the like, write in place
    and are in ``inplace.py``)."""

    __slots__ = ()

    def multinomial(self: SelfTensor, num_samples: int, replacement: bool = False, *,
                    generator: Any = None) -> SelfTensor:
        """``num_samples`` indices drawn per row of this tensor of weights, as
        torch.multinomial (``chaingrad.multinomial``: torch's numbers for the seed).

        Example:
            >>> import chaingrad
            >>> g = chaingrad.Generator().manual_seed(0)
            >>> chaingrad.Tensor([0.0, 1.0]).multinomial(2, replacement=True, generator=g)
            tensor([1, 1])
        """
        drawn = draw_multinomial(generator, self._value, num_samples, bool(replacement))
        return self._constant(drawn)


# ---- arithmetic as torch's kernels round it ----


def fma(a: Any, b: Any, c: Any) -> np.ndarray:
    """a * b + c rounded once, in the dtype of ``a`` (float32 or float64).

    float32: a * b is exact in float64; s = a * b + c in float64 rounds again only where s
    falls exactly halfway between two float32 numbers, and there the exact error of the
    float64 sum says which way to go. float64: the product split exactly into two doubles
    (Dekker), the sum by TwoSum, and the low parts added rounded to odd before the last
    rounding (Boldo and Melquiond), which makes the result correctly rounded.
    """
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if b.ndim == 0 and b == 1:  # a * 1 is exact: one rounding is the sum's
        return a + c.astype(a.dtype)
    if a.dtype == np.float32:
        return _fma32(a, b.astype(np.float32), c.astype(np.float32))
    return _fma64(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64))


def mul_add(a: Any, b: Any, c: Any) -> np.ndarray:
    """a * b + c in the dtype of ``a`` as torch's kernels compute it on this machine:
    ``fma(a, b, c)`` where they are compiled with fused multiply-adds (``TORCH_FUSES``), else
    a * b rounded, then the sum rounded.

    Example:
        >>> a = np.float64(1 + 2**-30)  # a * a needs 61 bits: its rounding shows
        >>> float(fma(a, a, np.float64(-1))), float(a * a - 1)
        (1.8626451500983188e-09, 1.862645149230957e-09)
        >>> float(mul_add(a, a, np.float64(-1))) == (1.8626451500983188e-09 if TORCH_FUSES
        ...                                         else 1.862645149230957e-09)
        True
    """
    if TORCH_FUSES:
        return fma(a, b, c)
    a = np.asarray(a)
    return a * np.asarray(b).astype(a.dtype) + np.asarray(c).astype(a.dtype)


def _fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    wide = np.multiply(a, b, dtype=np.float64)  # exact
    wide += c
    halfway = np.flatnonzero(
        (wide.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000))
    if halfway.size:  # a tie for float32: the sign of the sum's rounding error breaks it
        product = np.broadcast_to(np.multiply(a, b, dtype=np.float64), wide.shape).ravel()
        addend = np.broadcast_to(c, wide.shape).ravel().astype(np.float64)
        flat = wide.reshape(-1)
        tied = flat[halfway]
        error = _two_sum_error(product[halfway], addend[halfway], tied)
        toward = np.where(error > 0, np.inf, np.where(error < 0, -np.inf, tied))
        flat[halfway] = np.nextafter(tied, toward)
    return wide.astype(np.float32)


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    product_error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high
                     + a_low * b_low)
    total = product + c
    total_error = _two_sum_error(product, c, total)
    low = total_error + product_error
    low_error = _two_sum_error(total_error, product_error, low)
    odd = (low.view(np.uint64) & np.uint64(1)) == np.uint64(1)
    low = np.where((low_error != 0) & ~odd,
                   np.nextafter(low, np.where(low_error > 0, np.inf, -np.inf)), low)
    return total + low


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = high + low exactly, each with at most 26 significant bits (Veltkamp)."""
    scaled = x * 134217729.0  # 2**27 + 1
    high = scaled - (scaled - x)
    return high, x - high


def _two_sum_error(a: np.ndarray, b: np.ndarray, total: np.ndarray) -> np.ndarray:
    """(a + b) - total exactly, for total = a + b rounded (Knuth's TwoSum)."""
    b_part = total - a
    return (a - (total - b_part)) + (b - b_part)


# ---- helpers ----


def _rounded(number: float, dtype: np.dtype) -> Any:
    """A Python number as torch converts it to ``dtype`` (to half through float)."""
    return np.array(number, dtype=np.float64).astype(_via(dtype)).astype(dtype)


def _via(dtype: np.dtype) -> np.dtype:
    """The dtype a float64 result passes through on its way to ``dtype``: torch converts a
    double to half (and to bfloat16) through float."""
    return np.dtype(np.float32) if dtype.itemsize == 2 else dtype  # half and bfloat16


def _check_floating(dtype: np.dtype, op: str, message: str | None = None) -> None:
    if not dtypes.is_floating_dtype(dtype):
        text = message or f"{op} expects a floating point dtype, but got"
        raise RuntimeError(f"{op}: {text} {_torch_name(dtype)}")


def _torch_name(dtype: np.dtype) -> str:
    """torch's name of a dtype in its messages: Float, Double, Long, ..."""
    names = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
             "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
             "bool": "Bool"}
    return names.get(dtypes.of(dtype).name, dtypes.of(dtype).name)
