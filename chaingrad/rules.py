"""The primitives: every op that chaingrad differentiates by hand, each declared once.

Each is a rule ``vjp(xs, out, g, *params)``, returning ``g * d(out)/d(x)`` for each input
``x`` given the inputs ``xs``, the output ``out`` and the gradient ``g`` that reached it,
decorated with the op's forward on floats (``forward=math.tanh``) and on numpy arrays
(``array=``: numpy's function, or a named function beside the rule), its ``domain``
(outside it a Value raises a ``DomainError``, as Python's ``math`` does), what the rule
reads of the forward pass (``saves``) and PyTorch's names for it (``torch``). The formula
``explain``, the page and ``compile`` print is read off the rule itself (``formulas.py``);
how a declaration becomes an op is ``declaration.py``'s business.

A rule uses only operators and the functions at the end of this module (``cos``, ``log``,
``sign``, ``data``: each works on a float, an array, a Value or a Tensor), so one rule serves
Values, Tensors and ``backward(create_graph=True)``. The Tensor's own primitives (matmul,
sum, conv2d, ...) are in ``tensor_engine/rules.py``; docs/ops.md says how to add one.

Example:
    >>> TANH.vjp((0.5,), TANH.forward(0.5), 1.0) == (1 - TANH.forward(0.5) ** 2,)
    True
    >>> TANH.formulas, TANH.array
    (('(1 - out.data**2) * out.grad',), np.tanh)
"""

from __future__ import annotations

import math
import operator
from typing import Any

from . import fast_kernels, reference
from .declaration import Primitive, any_true, define, numpy, numpy_function
from .errors import DomainError
from .fast_kernels import SQRT1_2
from .formulas import Symbol

# ---- the primitives: forward, domain, rule, what it keeps, one op at a time ----


@define("+", forward=operator.add, saves=("", ""),
        torch=("torch.add", "Tensor.add"))
def ADD(xs, out, g):
    """x + y;  d/dx = 1, d/dy = 1."""
    return g, g


@define("*", forward=operator.mul, saves=("y", "x"),
        torch=("torch.mul", "Tensor.mul"))
def MUL(xs, out, g):
    """x * y;  d/dx = y, d/dy = x."""
    x, y = xs
    return y * g, x * g


def power(op: str, x: float, n: float) -> float:
    """x ** n on floats, with a DomainError where Python would fail or go complex."""
    if x == 0 and n < 0:
        raise DomainError(f"{op}: got base 0.0 and exponent {n}, needs a base != 0")
    if x < 0 and n != int(n):
        raise DomainError(f"{op}: got base {x} and exponent {n}, needs an integer exponent")
    try:
        return float(x**n)
    except OverflowError:
        raise DomainError(f"{op}: {x} ** {n} overflows a float") from None


def pow_n_on_arrays(x: Any, n: Any) -> Any:
    """x ** n for a constant n on an array, as torch computes it: ``x * x`` for n = 2,
    ``x * x * x`` for n = 3, ``sqrt(x)`` for 0.5, ``1 / x`` for -1 and ``1 / sqrt(x)`` for
    -0.5 (torch's numbers, bit for bit in float32 and float64; 4-500x faster than numpy's
    ``x ** 3``, which calls ``pow`` for each entry, or its ``x ** 0.5`` with the exponent
    held in an array, as a Tensor's is), else numpy's ``x ** n``.

    Not -2, which torch computes as ``1 / (x * x)``: the rule of ``x ** -1`` computes
    ``x ** -2`` with numpy's ``**``, and a gradient derived by hand with ``x ** -2`` (the
    makemore lecture's exercise) must equal autograd's bit for bit, as on torch.

    Example:
        >>> import numpy as np
        >>> pow_n_on_arrays(np.array([1.5, -2.0], dtype=np.float32), 3).tolist()
        [3.375, -8.0]
    """
    np = numpy()
    if getattr(n, "ndim", 0) == 0 and x.dtype.kind in "fiu":  # (np.ndim(n) takes 1 us)
        k = float(n)
        if k == 2:
            return np.square(x)  # (x * x, bit for bit; numpy's product of two arrays into
        if k == 3:  # a new one takes up to 1.5x as long, as its output lies in memory)
            out = np.square(x)
            out *= x  # (in place: the product of x * x * x, in one array)
            return out
        if x.dtype.kind == "f":
            if k == 0.5:
                return np.sqrt(x)
            if k == -1:
                return 1 / x
            if k == -0.5:
                out = np.sqrt(x, out=np.empty_like(x))  # (an array for a 0-d x too)
                return np.divide(1, out, out=out)
    return x**n


@define("**n", forward=lambda x, n: power(f"**{n}", x, n),
        array=pow_n_on_arrays, params=("n",), saves=("x",), torch=("torch.pow", "Tensor.pow"))
def POW_N(xs, out, g, n):
    """x ** n for a constant n;  d/dx = n * x**(n-1) (0 for n = 0). On arrays as torch
    computes it: ``x * x * x`` for ``x ** 3`` (``pow_n_on_arrays``), the rule too
    (``pow_n_grad_fast``)."""
    if not any_true(n != 0):
        return (0 * g,)
    if fast_kernels.fast_twin_for(xs[0], g):
        return (pow_n_grad_fast(xs[0], g, n),)
    return (n * xs[0] ** (n - 1) * g,)


def pow_n_grad_fast(x: Any, g: Any, n: Any) -> Any:
    """The twin of ``POW_N``'s rule on arrays, n * x**(n-1) * g in one array, x**(n-1) as a
    Tensor's forward computes it (``pow_n_on_arrays``: ``1 / sqrt(x)`` for ``x ** 0.5``'s
    rule, where numpy's ``x ** -0.5`` calls ``pow`` for each entry, 2.2x as long), so that
    a gradient written by hand with ``**`` equals the rule's, as torch's do. The same
    numbers as the rule where the two powers agree (n - 1 = 2, 0.5, -1, -2, and any
    exponent that is not special); where they do not (n - 1 = -0.5 or 3), within 3 ulps of
    the gradient (tests/tensor_engine/test_kernels.py)."""
    grad = pow_n_on_arrays(x, n - 1)  # (a new array, x ** 1 too)
    grad *= n
    grad *= g
    return grad


@define("**", forward=lambda x, y: power("**", x, y), array=operator.pow, saves=("x y", "x out"),
        exact=False, torch=("torch.pow", "Tensor.pow"))
def POW(xs, out, g):
    """x ** y;  d/dx = y * x**(y-1), d/dy = x**y * log(x).

    As in PyTorch, d/dx is 0 where y = 0 and d/dy is 0 where x = 0 (log x is needed only
    where x > 0); a negative x has no d/dy: a DomainError for a Value, nan in a Tensor's
    entry (torch's).
    """
    x, y = xs
    xd, yd = data(x), data(y)
    if type(xd) is float and xd < 0:
        raise DomainError(f"**: d/dy of x ** y needs x >= 0 (log x), got x = {xd}")
    # (y == 0) and (x == 0) are added where the exact formula would divide by zero
    dx = y * x ** (y - 1 + (yd == 0)) * g
    dy = out * log(x * (xd > 0) + 1.0 * (xd == 0) - 1.0 * (xd < 0)) * g  # log(-1): nan, x < 0
    return dx, dy


def relu_on_arrays(x: Any) -> Any:
    """max(x, 0) entry by entry (numpy's ``maximum``: nan stays nan, as in torch's relu)."""
    return numpy().maximum(x, 0)


@define("ReLU", forward=lambda x: x if x > 0 else 0.0,
        array=relu_on_arrays, saves=("out",), torch=("torch.relu", "Tensor.relu", "F.relu"))
def RELU(xs, out, g):
    """max(0, x);  d/dx = 1 if x > 0 else 0."""
    return ((data(out) > 0) * g,)


@define("tanh", forward=math.tanh, array=numpy_function("tanh"),
        saves=("out",), floats=True, torch=("torch.tanh", "Tensor.tanh", "F.tanh"))
def TANH(xs, out, g):
    """tanh(x);  d/dx = 1 - tanh(x)**2, reusing the output (micrograd's very arithmetic)."""
    return ((1 - out**2) * g,)


def sigmoid_forward(x: float) -> float:
    """1 / (1 + exp(-x)) without overflow: exp only ever sees -|x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def sigmoid_on_arrays(x: Any) -> Any:
    """1 / (1 + exp(-x)) in x's dtype, as torch computes it: exp(-x) overflows to inf for
    x below about -88 (float32), and the result is then 0, as torch's (no warning: a
    Tensor op has numpy's warnings off). Four passes over one array; within 4 ulps of
    torch's float32 numbers (numpy's exp and torch's differ by an ulp here and there).

    Example:
        >>> import numpy as np
        >>> with np.errstate(over="ignore"):
        ...     sigmoid_on_arrays(np.array([-200.0, 0.0, 200.0], dtype=np.float32)).tolist()
        [0.0, 0.5, 1.0]
    """
    np = numpy()
    out = np.negative(x, out=np.empty_like(x))  # (an array for a 0-d x too)
    np.exp(out, out=out)
    out += 1
    return np.divide(1, out, out=out)  # (np.reciprocal: the same numbers, 1.4x as long)


@define("sigmoid", forward=sigmoid_forward,
        array=sigmoid_on_arrays, saves=("out",), floats=True,
        torch=("torch.sigmoid", "Tensor.sigmoid", "F.sigmoid"))
def SIGMOID(xs, out, g):
    """1 / (1 + exp(-x)) (on arrays as torch computes it, ``sigmoid_on_arrays``: exp(-x) may
    overflow to inf, and then the result is 0);  d/dx = s * (1 - s), reusing the output s."""
    return (out * (1 - out) * g,)


@define("exp", forward=math.exp, array=numpy_function("exp"),
        domain="x <= {log_max:.4f} (overflow beyond)", saves=("out",), floats=True,
        torch=("torch.exp", "Tensor.exp"))
def EXP(xs, out, g):
    """e ** x;  d/dx = e ** x, reusing the output."""
    return (out * g,)


@define("log", forward=math.log, array=numpy_function("log"),
        domain="x > 0", saves=("x",), floats=True, torch=("torch.log", "Tensor.log"))
def LOG(xs, out, g):
    """ln(x);  d/dx = 1 / x."""
    return (g / xs[0],)


@define("sqrt", forward=math.sqrt, array=numpy_function("sqrt"),
        domain="x >= 0", saves=("out",), floats=True, torch=("torch.sqrt", "Tensor.sqrt"))
def SQRT(xs, out, g):
    """sqrt(x);  d/dx = 1 / (2 * sqrt(x)), reusing the output (unbounded at 0)."""
    return (g / (2 * out),)


@define("abs", forward=abs, array=numpy_function("abs"), saves=("x",),
        torch=("torch.abs", "Tensor.abs"))
def ABS(xs, out, g):
    """|x|;  d/dx = sign(x), taken as 0 at x = 0 (as PyTorch does)."""
    return (sign(xs[0]) * g,)


@define("sin", forward=math.sin, array=numpy_function("sin"),
        saves=("x",), floats=True, torch=("torch.sin", "Tensor.sin"))
def SIN(xs, out, g):
    """sin(x);  d/dx = cos(x)."""
    return (cos(xs[0]) * g,)


@define("cos", forward=math.cos, array=numpy_function("cos"),
        saves=("x",), floats=True, torch=("torch.cos", "Tensor.cos"))
def COS(xs, out, g):
    """cos(x);  d/dx = -sin(x)."""
    return (-sin(xs[0]) * g,)


@define("log1p", forward=math.log1p, array=numpy_function("log1p"),
        domain="x > -1", saves=("x",), floats=True, torch=("torch.log1p", "Tensor.log1p"))
def LOG1P(xs, out, g):
    """ln(1 + x), exact for small x;  d/dx = 1 / (1 + x)."""
    return (g / (xs[0] + 1),)


@define("expm1", forward=math.expm1, array=numpy_function("expm1"),
        domain="x <= {log_max:.4f} (overflow beyond)", saves=("out",), floats=True,
        torch=("torch.expm1", "Tensor.expm1"))
def EXPM1(xs, out, g):
    """e ** x - 1, exact for small x;  d/dx = e ** x, the output plus 1."""
    return ((out + 1) * g,)


@define("log10", forward=math.log10,
        array=numpy_function("log10"), domain="x > 0", saves=("x",), floats=True,
        torch=("torch.log10", "Tensor.log10"))
def LOG10(xs, out, g):
    """log10(x);  d/dx = 1 / (x * ln 10), ln 10 = 2.302585092994046."""
    return (g / (xs[0] * 2.302585092994046),)


@define("log2", forward=math.log2,
        array=numpy_function("log2"), domain="x > 0", saves=("x",), floats=True,
        torch=("torch.log2", "Tensor.log2"))
def LOG2(xs, out, g):
    """log2(x);  d/dx = 1 / (x * ln 2), ln 2 = 0.6931471805599453."""
    return (g / (xs[0] * 0.6931471805599453),)


def erf_on_arrays(x: Any) -> Any:
    """The error function of each entry, in x's dtype: ``math.erf`` entry by entry (numpy
    has no erf; about 90 ns an entry), the numbers of ``Value.erf``; or, unless
    ``chaingrad.use_reference()`` is on, a fast twin: for float32 ``erf_float32`` (numpy
    polynomials, within 2 ulps; about 3 ns an entry), for float64 SciPy's
    ``scipy.special.erf`` when SciPy is installed (within 2 ulps; about 14 ns an entry).

    Example:
        >>> import numpy as np
        >>> erf_on_arrays(np.array([0.0, 0.5])).tolist()
        [0.0, 0.5204998778130465]
    """
    np = numpy()
    if not reference.only:
        if x.dtype == np.float32:
            return fast_kernels.in_chunks(fast_kernels.erf_float32, x)
        fast = fast_kernels.scipy_erf()
        if fast is not None and x.dtype == np.float64:
            return np.asarray(fast(x))
    return np.asarray(np.frompyfunc(math.erf, 1, 1)(x), dtype=x.dtype)


@define("erf", forward=math.erf,
        array=erf_on_arrays, saves=("x",), floats=True, torch=("torch.erf", "Tensor.erf"))
def ERF(xs, out, g):
    """The error function, 2 / sqrt(pi) times the integral of exp(-t**2) from 0 to x;
    d/dx = 2 / sqrt(pi) * exp(-x**2), 2 / sqrt(pi) = 1.1283791670955126."""
    x = xs[0]
    return (1.1283791670955126 * exp(-(x * x)) * g,)




def gelu_forward(x: float) -> float:
    """x * Phi(x), Phi the standard normal's distribution function, 0.5 * (1 + erf(x / sqrt 2)),
    in torch's order of operations."""
    return x * 0.5 * (1.0 + math.erf(x * SQRT1_2))


def gelu_on_arrays(x: Any) -> Any:
    """x * Phi(x) on an array, in torch's order of operations (``gelu_forward``'s): the
    same numbers as ``x * 0.5 * (1 + erf(x * SQRT1_2))``, computed in erf's array (a
    product by 0.5 is exact: scaling 1 + erf or x by it rounds alike), ``in_chunks``; for
    float32, unless ``chaingrad.use_reference()`` is on, its fast twin ``gelu_float32``."""
    np = numpy()
    if x.dtype == np.float32 and not reference.only:
        return fast_kernels.in_chunks(fast_kernels.gelu_float32, x)
    return fast_kernels.in_chunks(gelu_of_chunk, x)


def gelu_of_chunk(x: Any) -> Any:
    """``gelu_on_arrays`` of one chunk."""
    out = erf_on_arrays(x * 0.7071067811865476)
    out += 1.0
    out *= 0.5
    out *= x
    return out


@define("gelu",
        forward=gelu_forward, array=gelu_on_arrays,
        saves=("x",), floats=True, torch=("F.gelu",))
def GELU(xs, out, g):
    """x * Phi(x), Phi(x) = 0.5 * (1 + erf(x / sqrt(2))) the standard normal's distribution
    function (torch's exact GELU);  d/dx = Phi(x) + x * phi(x), its density
    phi(x) = exp(-x**2 / 2) / sqrt(2 pi); 1 / sqrt(2) = 0.7071067811865476 and
    1 / sqrt(2 pi) = 0.3989422804014327."""
    x = xs[0]
    if fast_kernels.fast_twin_for(x, g):
        return (fast_kernels.in_chunks(gelu_grad_fast, x, g,
                                       size=fast_kernels.GRAD_CHUNK_ENTRIES),)
    return ((0.5 * (1 + erf(x * 0.7071067811865476))
             + x * 0.3989422804014327 * exp(-0.5 * (x * x))) * g,)


def gelu_grad_fast(x: Any, g: Any) -> Any:
    """The twin of ``GELU``'s rule on arrays (equal within float rounding): (Phi(x) + x *
    phi(x)) * g in place, Phi by ``phi_float32`` for float32, else from ``erf_on_arrays``:
    about 30 passes where the rule makes about 45. Phi is computed again from x, as torch's
    backward does (the output may have been changed in place since, or rounded to bfloat16
    under autocast)."""
    np = numpy()
    grad = np.square(x)  # (x * x: see pow_n_on_arrays)
    grad *= -0.5
    np.exp(grad, out=grad)
    grad *= x
    grad *= 0.3989422804014327  # x * phi(x)
    if x.dtype == np.float32:
        grad += fast_kernels.phi_float32(x)
        grad *= g
        return grad
    phi_cdf = erf_on_arrays(x * 0.7071067811865476)
    phi_cdf += 1
    phi_cdf *= 0.5  # Phi(x)
    grad += phi_cdf
    grad *= g
    return grad


def leaky_relu_on_arrays(x: Any, negative_slope: float) -> Any:
    """x where x > 0, else x * negative_slope, as the larger (a slope up to 1) or the smaller
    (a steeper one) of x and x * negative_slope: the numbers of
    ``np.where(x > 0, x, x * negative_slope)`` without its branch on each entry's sign
    (which a random sign makes 30x slower).

    Example:
        >>> import numpy as np
        >>> leaky_relu_on_arrays(np.array([-2.0, 3.0]), 0.1).tolist()
        [-0.2, 3.0]
    """
    np = numpy()
    out = np.asarray(x * negative_slope)  # (an array, to write into, for a 0-d x too)
    return np.maximum(x, out, out=out) if negative_slope <= 1 else np.minimum(x, out, out=out)


@define("leaky_relu",
        forward=lambda x, negative_slope: x if x > 0 else x * negative_slope,
        array=leaky_relu_on_arrays, params=("negative_slope",),
        defaults={"negative_slope": 0.01}, saves=("x",), floats=True, torch=("F.leaky_relu",))
def LEAKY_RELU(xs, out, g, negative_slope):
    """x where x > 0, else negative_slope * x;  d/dx = 1 where x > 0, else negative_slope
    (g multiplied first: a float32 g stays float32, where (x <= 0) * negative_slope alone
    would be a float64 array). On arrays, ``leaky_relu_grad_fast``."""
    x = data(xs[0])
    if fast_kernels.fast_twin_for(x, g) and 0 <= negative_slope <= 1:
        return (leaky_relu_grad_fast(x, g, negative_slope),)
    return (g * (x > 0) + g * (x <= 0) * negative_slope,)


def leaky_relu_grad_fast(x: Any, g: Any, negative_slope: float) -> Any:
    """The twin of ``LEAKY_RELU``'s rule on arrays, for a slope from 0 to 1: g times a
    factor that is 1 where x > 0 and negative_slope elsewhere, the larger of ``x > 0`` (as
    1.0 or 0.0) and negative_slope. Four passes without a branch on each entry's sign (a
    mask with ``np.where`` or ``copyto``, on random signs, takes 5-10x as long), where the
    rule makes about eight, with float temporaries of its bool arrays. The rule's numbers,
    but torch's where the rule's differ: at a nan x (``g * negative_slope``, the rule's 0)
    and at an inf or nan g (g or its product by the slope, where the rule's ``g * 0`` is
    nan)."""
    np = numpy()
    factor = np.greater(x, 0).astype(g.dtype)
    np.maximum(factor, g.dtype.type(negative_slope), out=factor)
    factor *= g
    return factor


def softplus_forward(x: float, beta: float, threshold: float) -> float:
    """log(1 + exp(beta * x)) / beta, written so that exp never overflows; x itself where
    beta * x > threshold (torch's switch to the line it approaches)."""
    z = x * beta
    if z > threshold:
        return x
    return (max(z, 0.0) + math.log1p(math.exp(-abs(z)))) / beta


def softplus_on_arrays(x: Any, beta: float, threshold: float) -> Any:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold, as torch
    computes it (``log1p(exp(beta * x)) / beta``; exp overflows only where x is kept), in
    one array (x is copied in where beta * x > threshold: few entries, where ``np.where``
    would branch on each).

    Example:
        >>> import numpy as np
        >>> softplus_on_arrays(np.array([0.0, 30.0]), 1.0, 20.0).tolist()
        [0.6931471805599453, 30.0]
    """
    np = numpy()
    z = x * beta if beta != 1 else x  # (x * 1.0 is x)
    soft = np.exp(z, out=np.empty_like(z))  # (an array for a 0-d x too)
    np.log1p(soft, out=soft)
    if beta != 1:
        soft /= beta
    np.copyto(soft, x, where=z > threshold)
    return soft


@define("softplus",
        forward=softplus_forward,
        array=softplus_on_arrays,
        params=("beta", "threshold"), defaults={"beta": 1.0, "threshold": 20.0}, saves=("x",),
        floats=True, torch=("F.softplus",))
def SOFTPLUS(xs, out, g, beta, threshold):
    """log(1 + exp(beta * x)) / beta, a smooth relu (x itself where beta * x > threshold, as
    torch's);  d/dx = sigmoid(beta * x), 1 where beta * x > threshold. On arrays,
    ``softplus_grad_fast``."""
    x, z = xs[0], data(xs[0]) * beta
    if fast_kernels.fast_twin_for(x, g):
        return (softplus_grad_fast(z, g, threshold),)
    return (((z > threshold) + (z <= threshold) * sigmoid(x * beta)) * g,)


def softplus_grad_fast(z: Any, g: Any, threshold: float) -> Any:
    """The twin of ``SOFTPLUS``'s rule on arrays (the same numbers), given z = beta * x:
    sigmoid(z) (``sigmoid_on_arrays``), 1 copied in where z > threshold, times g, in one
    array, where the rule makes a dozen passes and float temporaries of its bool arrays."""
    np = numpy()
    grad = sigmoid_on_arrays(z)
    np.copyto(grad, 1, where=z > threshold)
    grad *= g
    return grad


PRIMITIVES: tuple[Primitive, ...] = (ADD, MUL, POW_N, POW, RELU, TANH, SIGMOID, EXP, LOG, SQRT,
                                     ABS, SIN, COS, LOG1P, EXPM1, LOG10, LOG2, ERF, GELU,
                                     LEAKY_RELU, SOFTPLUS)
"""Every primitive of this module: the ops both engines differentiate."""

FUNCTIONS: dict[str, Primitive] = {p.method: p for p in PRIMITIVES if len(p.saves) == 1
                                   and set(p.param_names) <= set(p.defaults)}
"""The elementwise primitives: those of one input that are functions and methods
(``tanh(x)``, ``x.tanh()``; ``x.leaky_relu(0.2)`` for one with parameters, each of which
has a default), by name. Each engine has them as methods (``elementwise``), and so do the
expressions of ``chaingrad graph``."""


def functions_in(namespace: str) -> dict[str, Primitive]:
    """The elementwise primitives (``FUNCTIONS``) that torch has as functions of
    ``namespace`` (``"torch"``, or ``"F"`` for ``torch.nn.functional``), by name:
    ``chaingrad`` and ``chaingrad.nn.functional`` have them too.

    Example:
        >>> "tanh" in functions_in("F"), "exp" in functions_in("F"), "exp" in functions_in("torch")
        (True, False, True)
    """
    return {name: p for name, p in FUNCTIONS.items() if f"{namespace}.{name}" in p.torch}


# ---- the functions the rules use: a primitive applied to a float, an array, a Value or a
# Tensor (see ``Primitive.__call__``; ``chaingrad.generic`` has them all, for your own rules)

exp, log, log1p, sin, cos, sigmoid, erf = EXP, LOG, LOG1P, SIN, COS, SIGMOID, ERF


def data(x: Any) -> Any:
    """The number or array that ``x`` holds: a Value's ``.data``, a Tensor's array, else ``x``.

    Example:
        >>> from chaingrad import Value
        >>> data(Value(2.0)), data(3.0)
        (2.0, 3.0)
    """
    return x if type(x) is float or not hasattr(x, "_prev") else x._value


def sign(x: Any) -> Any:
    """-1, 0 or 1 by the sign of ``x`` (a number, an array, or a node's data), as floats.

    A constant: it is never differentiated (it is the derivative of ``abs``).

    Example:
        >>> sign(-2.5), sign(0.0)
        (-1.0, 0.0)
    """
    x = data(x)
    if type(x).__module__ == "numpy" and not isinstance(x, (int, float)):
        return numpy().sign(x)
    if type(x) is Symbol:  # a rule read for its formula
        return x.call("sign")
    return float((x > 0) - (x < 0))
