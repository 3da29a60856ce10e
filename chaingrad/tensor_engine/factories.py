"""torch's factory functions: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange``,
``linspace``, ``eye``, ``from_numpy``, the ``*_like``s, and the random ones: ``rand``,
``randn``, ``randint``, ``randperm``, ``normal``, ``bernoulli``, ``multinomial``.

Each makes a leaf with torch's dtype rule (Python floats give the default dtype, float32;
ints int64; bools bool) and takes torch's keyword arguments: ``dtype=``, ``device=`` (the
CPU only), ``requires_grad=`` (floating dtypes only), and for the random ones
``generator=`` (a ``chaingrad.Generator``; the default generator otherwise). The random
numbers are torch's for the same seed, dtype and shape (``sampling.py`` has the
algorithms, ``generator.py`` the generators).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..gradmode import is_grad_enabled
from . import dtypes, sampling
from .arrays import quietly, size_of, to_array
from .devices import check_device
from .tensor import Tensor, leaf


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
    return leaf(array, requires_grad, "tensor")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing a numpy array's memory when no conversion is needed."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtype):
        return data
    check_device(device, "as_tensor")
    array = to_array(data, dtype, "as_tensor", copy=False)
    return leaf(array, False, "as_tensor")


def with_out(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` taking torch's ``out=``: the result is written into that tensor (resized to
    the result's shape if need be), which is returned; as in torch, not while the inputs
    record a graph. (Typed as giving a Tensor; ``with_outs`` is the same for a function that
    gives torch's namedtuple.)

    Example:
        >>> @with_out
        ... def double(x):
        ...     return x * 2
        >>> y = zeros(2)
        >>> double(ones(2), out=y) is y, y.tolist()
        (True, [2.0, 2.0])
    """
    return _taking_out(fn)


def with_outs(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``with_out`` for a function that gives torch's namedtuple (``max`` along a dim gives
    ``(values, indices)``): ``out`` is a tuple of as many tensors, each written, given back
    as that namedtuple."""
    return _taking_out(fn)


def _taking_out(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking ``out=`` (see ``with_out``)."""

    @functools.wraps(fn)
    def call(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if out is None:
            return result
        op = f"{fn.__name__.rstrip('_')}(out=...)"
        if not isinstance(result, tuple):
            return _write_out(op, out, result)
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{op}: out must be a tuple of {len(result)} Tensors "
                            f"({', '.join(getattr(result, '_fields', ()))}), got "
                            f"{type(out).__name__}")
        return type(result)(*(_write_out(op, o, r) for o, r in zip(out, result)))

    return call


def _write_out(op: str, out: Any, result: Tensor) -> Tensor:
    """``result``'s numbers written into ``out`` (resized to its shape if need be)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}: out must be a Tensor, got {type(out).__name__}")
    if result.requires_grad and is_grad_enabled():
        raise RuntimeError(f"{op}: functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires "
                           "grad")
    if out.shape != result.shape:
        out._check_in_place(op)
        out._value = np.zeros(result.shape, dtype=out._value.dtype)  # torch resizes out
    return out._write(op, result._value)


def dense_only(op: str, layout: Any = None, memory_format: Any = None,
               pin_memory: bool = False) -> None:
    """torch's ``layout=``, ``memory_format=`` and ``pin_memory=``, taken at their defaults
    (chaingrad's tensors are dense, contiguous and in ordinary memory); any other value a
    NotImplementedError naming it."""
    for name, value in (("layout", layout), ("memory_format", memory_format),
                        ("pin_memory", pin_memory or None)):
        if value is not None:
            raise NotImplementedError(f"{op}: chaingrad does not take {name}={value!r} yet "
                                      "(its tensors are dense, contiguous, on the CPU)")


def tensor_argument(x: Any, where: str, arg: str = "input", *, numbers: bool = False,
                    like: Tensor | None = None) -> Tensor:
    """``x`` as the Tensor an op or a layer works on: the one way chaingrad makes a Tensor
    of an argument. A Tensor is itself; a numpy array becomes a constant (a copy); with
    ``numbers``, so do a number (in ``like``'s dtype where given, else torch's) and (nested)
    lists and tuples of numbers. Anything else is torch's TypeError, naming the function
    and the argument.

    Example:
        >>> tensor_argument(np.ones(2), "relu").tolist()
        [1.0, 1.0]
        >>> tensor_argument([1, 2], "relu")
        Traceback (most recent call last):
        ...
        TypeError: relu(): argument 'input' must be Tensor, not list
    """
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return leaf(to_array(x, None, where), False, where)
    if numbers and isinstance(x, (int, float, np.number, np.bool_, list, tuple)):
        if like is not None and isinstance(x, (int, float, np.number)):
            return leaf(np.asarray(x, dtype=like._value.dtype), False, where)
        return leaf(to_array(x, None, where), False, where)
    raise TypeError(f"{where}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


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
    return leaf(ndarray, False, "from_numpy")


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          **named: Any) -> Tensor:
    """A tensor of zeros of ``size`` (``zeros(2, 3)``, ``zeros((2, 3))`` or
    ``zeros(size=(2, 3))``).

    Example:
        >>> zeros(2, 3).shape, zeros(2).dtype, zeros(size=(1, 2)).shape
        (chaingrad.Size([2, 3]), chaingrad.float32, chaingrad.Size([1, 2]))
    """
    return _filled("zeros", _sizes("zeros", size, named), 0, dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         **named: Any) -> Tensor:
    """A tensor of ones of ``size``."""
    return _filled("ones", _sizes("ones", size, named), 1, dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          **named: Any) -> Tensor:
    """A tensor of ``size`` (chaingrad fills it with zeros; torch leaves it unset)."""
    return _filled("empty", _sizes("empty", size, named), 0, dtype, device, requires_grad)


@with_out
def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, *, layout: Any = None) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``, whose type gives the dtype if
    ``dtype`` is None (a float: float32; an int: int64; a bool: bool), as torch.full.

    Example:
        >>> full((2,), 7), full((), 0.5, requires_grad=True)
        (tensor([7, 7]), tensor(0.5000, requires_grad=True))
    """
    dense_only("full", layout)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    wanted = dtypes.number_dtype(fill_value) if dtype is None else dtype
    return _filled("full", (size,), fill_value, wanted, device, requires_grad)


def zeros_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False,
               *, layout: Any = None, memory_format: Any = None) -> Tensor:
    """Zeros of ``input``'s shape and dtype."""
    dense_only("zeros_like", layout, memory_format)
    return _filled("zeros_like", (_like(input, "zeros_like").shape,), 0,
                   dtype or input._value.dtype, device, requires_grad)


def ones_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False,
              *, layout: Any = None, memory_format: Any = None) -> Tensor:
    """Ones of ``input``'s shape and dtype."""
    dense_only("ones_like", layout, memory_format)
    return _filled("ones_like", (_like(input, "ones_like").shape,), 1,
                   dtype or input._value.dtype, device, requires_grad)


def empty_like(input: Tensor, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False,
               *, layout: Any = None, memory_format: Any = None) -> Tensor:
    """A tensor of ``input``'s shape and dtype (zeros, in chaingrad)."""
    dense_only("empty_like", layout, memory_format)
    return zeros_like(input, dtype, device, requires_grad)


def full_like(input: Tensor, fill_value: Any, dtype: Any = None,  # noqa: A002
              device: Any = None, requires_grad: bool = False,
              *, layout: Any = None, memory_format: Any = None) -> Tensor:
    """``fill_value`` in ``input``'s shape and dtype."""
    dense_only("full_like", layout, memory_format)
    return _filled("full_like", (_like(input, "full_like").shape,), fill_value,
                   dtype or input._value.dtype, device, requires_grad)


def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, **named: Any) -> Tensor:
    """Numbers drawn uniformly from [0, 1), of ``size``: torch's numbers for the seed of
    ``generator`` (or of the default generator): u24 = (r32 mod 2**24) / 2**24 in float32,
    u53 = (r64 mod 2**53) / 2**53 in float64 (``sampling.draw_uniform``).

    Example:
        >>> import chaingrad
        >>> rand(3, generator=chaingrad.Generator().manual_seed(2147483647))
        tensor([0.7081, 0.3542, 0.1054])
    """
    shape, wanted = _shape_and_float("rand", _sizes("rand", size, named), dtype, device)
    drawn = sampling.draw_uniform(generator, shape, wanted, 0.0, 1.0, "rand")
    return leaf(drawn, requires_grad, "rand")


def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, **named: Any) -> Tensor:
    """Numbers drawn from the standard normal distribution, of ``size``: torch's numbers
    for the seed (the Box-Muller transform of ``sampling.draw_normal``).

    Example:
        >>> import chaingrad
        >>> randn(2, generator=chaingrad.Generator().manual_seed(0))
        tensor([ 1.5410, -0.2934])
    """
    shape, wanted = _shape_and_float("randn", _sizes("randn", size, named), dtype, device)
    drawn = sampling.draw_normal(generator, shape, wanted, 0.0, 1.0, op="randn")
    return leaf(drawn, requires_grad, "randn")


def rand_like(input: Tensor, *, generator: Any = None, dtype: Any = None,  # noqa: A002
              device: Any = None, requires_grad: bool = False,
              layout: Any = None, memory_format: Any = None) -> Tensor:
    """Uniform numbers from [0, 1) in ``input``'s shape and dtype (as ``rand``)."""
    dense_only("rand_like", layout, memory_format)
    return rand(_like(input, "rand_like").shape, generator=generator,
                dtype=dtype or input._value.dtype, device=device, requires_grad=requires_grad)


def randn_like(input: Tensor, *, generator: Any = None, dtype: Any = None,  # noqa: A002
               device: Any = None, requires_grad: bool = False,
               layout: Any = None, memory_format: Any = None) -> Tensor:
    """Standard normal numbers in ``input``'s shape and dtype (as ``randn``)."""
    dense_only("randn_like", layout, memory_format)
    return randn(_like(input, "randn_like").shape, generator=generator,
                 dtype=dtype or input._value.dtype, device=device, requires_grad=requires_grad)


@with_out
def randint(*args: Any, low: Any = None, high: Any = None, size: Any = None,
            generator: Any = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, layout: Any = None) -> Tensor:
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``, any of them by keyword too (``randint(high=10,
    size=(3,))``; ``low`` is 0 if not given), int64 unless ``dtype`` says otherwise, as
    torch.randint: low + (r32 mod (high - low)), or r64 for a span of 2**28 or more
    (``sampling.draw_integers``).

    Example:
        >>> import chaingrad
        >>> randint(3, 10, (4,), generator=chaingrad.Generator().manual_seed(0))
        tensor([7, 6, 3, 5])
    """
    dense_only("randint", layout)
    named = {"low": low, "high": high, "size": size}
    # by position: (high, size) or (low, high, size); one or two with keywords for the rest
    if len(args) == 3:
        slots = ("low", "high", "size")
    elif len(args) == 2:
        slots = ("low", "high") if size is not None else ("high", "size")
    else:
        slots = (("low",) if high is not None else ("high",))[:len(args)]
    twice = [name for name in slots if named[name] is not None]
    if len(args) > 3 or twice:
        raise TypeError(f"randint: got {twice[0]} twice (by position and by keyword)" if twice
                        else f"randint: takes at most 3 positional arguments, got {len(args)}")
    named |= dict(zip(slots, args))
    if named["high"] is None or named["size"] is None:
        raise TypeError("randint: expected randint(high, size) or randint(low, high, size), "
                        f"missing {'high' if named['high'] is None else 'size'}")
    shape = size_of((named["size"],), "randint")
    low = 0 if named["low"] is None else _plain(named["low"], "randint")
    high = _plain(named["high"], "randint")
    if not high > low:
        raise ValueError(f"randint: needs low < high, got low={low}, high={high}")
    check_device(device, "randint")
    wanted = np.dtype(np.int64) if dtype is None else dtypes.to_numpy(dtype, "randint")
    drawn = sampling.draw_integers(generator, shape, wanted, int(low), int(high), "randint")
    return leaf(drawn, requires_grad, "randint")


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *,  # noqa: A002
                 generator: Any = None, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False,
                 layout: Any = None, memory_format: Any = None) -> Tensor:
    """Integers from [low, high) in ``input``'s shape and dtype: ``randint_like(x, high)``
    or ``randint_like(x, low, high)``, as torch.randint_like."""
    dense_only("randint_like", layout, memory_format)
    if high is None:
        low, high = 0, low
    return randint(low, high, _like(input, "randint_like").shape, generator=generator,
                   dtype=dtype or input._value.dtype, device=device,
                   requires_grad=requires_grad)


@with_out
def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless ``dtype`` says otherwise), torch's
    for the seed: entry i swapped with entry i + (r32 mod (n - i)), i = 0 .. n-2.

    Example:
        >>> import chaingrad
        >>> randperm(5, generator=chaingrad.Generator().manual_seed(0))
        tensor([4, 0, 1, 3, 2])
    """
    dense_only("randperm", layout, pin_memory=pin_memory)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"randperm: n must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    check_device(device, "randperm")
    wanted = np.dtype(np.int64) if dtype is None else dtypes.to_numpy(dtype, "randperm")
    return leaf(sampling.draw_randperm(generator, int(n)).astype(wanted), requires_grad,
                 "randperm")


@with_out
def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Numbers drawn from N(mean, std**2), as torch.normal: ``normal(mean, std, size)``
    with numbers, or ``normal(mean, std)`` with a Tensor for either or both (broadcast),
    computed as torch does: ``randn * std + mean`` (one rounding each).

    Example:
        >>> import chaingrad
        >>> normal(2.0, 0.5, (2,), generator=chaingrad.Generator().manual_seed(0))
        tensor([2.7705, 1.8533])
    """
    check_device(device, "normal")
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal: with a number for both mean and std, give a size: "
                            "normal(mean, std, size)")
        shape, wanted = _shape_and_float("normal", (size,), dtype, device)
        drawn = sampling.draw_normal(generator, shape, wanted, _plain(mean, "normal"),
                                _plain(std, "normal"), op="normal")
        return leaf(drawn, requires_grad, "normal")
    if isinstance(std, Tensor) and (std._value < 0).any():
        raise RuntimeError("normal: normal expects all elements of std >= 0.0")
    like = mean if isinstance(mean, Tensor) else std
    shape = np.broadcast_shapes(np.shape(_values(mean)), np.shape(_values(std)))
    wanted = like._value.dtype
    if isinstance(std, Tensor):  # torch: randn, then * std, then + mean
        values = sampling.draw_normal(generator, shape, wanted, op="normal") * std._value
    else:
        values = sampling.draw_normal(generator, shape, wanted, 0.0, _plain(std, "normal"),
                                 op="normal")
    values = (values + np.asarray(_values(mean), dtype=wanted)).astype(wanted)
    return leaf(values, requires_grad, "normal")


def bernoulli(input: Tensor, p: float | None = None, *,  # noqa: A002
              generator: Any = None) -> Tensor:
    """1 with probability ``input`` (entry by entry), else 0, in ``input``'s dtype, as
    torch.bernoulli; ``bernoulli(x, p)`` uses the number p for every entry instead.
    ``u53 < p`` for float64 probabilities and numbers, ``u24 < p`` otherwise.

    Example:
        >>> import chaingrad
        >>> bernoulli(chaingrad.tensor([0.0, 1.0, 0.5]), generator=chaingrad.Generator())
        tensor([0., 1., 1.])
    """
    chances = _like(input, "bernoulli")._value if p is None else _plain(p, "bernoulli")
    drawn = sampling.draw_bernoulli(generator, input.shape, input._value.dtype, chances,
                               "bernoulli")
    return leaf(drawn, False, "bernoulli")


@with_out
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Any = None) -> Tensor:
    """``num_samples`` indices drawn per row of ``input`` (weights, 1-D or 2-D, that need
    not sum to 1), with or without replacement, as torch.multinomial (int64).

    Today's torch draws one sample, or samples without replacement, through exponential
    variables (the index of the largest p / q, q ~ Exp(1)), and several samples with
    replacement by inverting the cumulative distribution; under ``use_lecture_rng()`` (or
    CHAINGRAD_LECTURE_RNG=1) one sample with replacement is drawn that second way too, as
    the torch of the Zero to Hero lectures did (``sampling.draw_multinomial``).

    Example:
        >>> import chaingrad
        >>> g = chaingrad.Generator().manual_seed(0)
        >>> multinomial(chaingrad.tensor([0.1, 0.0, 0.9]), 4, replacement=True, generator=g)
        tensor([2, 2, 2, 2])
    """
    probs = _like(input, "multinomial")._value
    drawn = sampling.draw_multinomial(generator, probs, num_samples, bool(replacement))
    return leaf(drawn, False, "multinomial")

@with_out
def arange(start: Any = None, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False, layout: Any = None) -> Tensor:
    """start, start + step, ... up to (not including) end; int64 when all three are ints,
    else the default floating dtype, as torch.arange (``arange(end)``, ``arange(start,
    end)``, and by keyword: ``arange(end=3)``).

    Example:
        >>> arange(3), arange(0, 1, 0.25)
        (tensor([0, 1, 2]), tensor([0.0000, 0.2500, 0.5000, 0.7500]))
    """
    if end is None:
        if start is None:
            raise TypeError("arange: expected arange(end), arange(start, end) or "
                            "arange(start, end, step), got no end")
        start, end = 0, start
    elif start is None:
        start = 0
    numbers = [_plain(v, "arange") for v in (start, end, step)]
    if numbers[2] == 0:
        raise ValueError("arange: step must be nonzero")
    check_device(device, "arange")
    dense_only("arange", layout)
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
    return leaf(values, requires_grad, "arange")


@with_out
def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None) -> Tensor:
    """``steps`` evenly spaced numbers from start to end, both included (float32 unless
    ``dtype`` says otherwise), as torch.linspace.

    Example:
        >>> linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise TypeError(f"linspace: steps must be an int >= 0, got {steps!r}")
    check_device(device, "linspace")
    dense_only("linspace", layout)
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(
        dtype, "linspace")
    values = np.linspace(_plain(start, "linspace"), _plain(end, "linspace"), int(steps))
    return leaf(values.astype(wanted), requires_grad, "linspace")


@with_out
def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False, layout: Any = None) -> Tensor:
    """The n x m identity matrix (m = n if not given)."""
    check_device(device, "eye")
    dense_only("eye", layout)
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(dtype, "eye")
    return leaf(np.eye(int(n), None if m is None else int(m), dtype=wanted), requires_grad,
                 "eye")


# ---- helpers ----


def _filled(op: str, size: tuple, value: Any, dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:
    check_device(device, op)
    shape = size_of(size, op)
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(dtype, op)
    array = quietly(np.full, shape, value, wanted)  # 1e40 as float32 is inf, as in torch
    return leaf(array, requires_grad, op)


def _sizes(op: str, positional: tuple, named: dict[str, Any]) -> tuple:
    """A factory's size: given by position (``zeros(2, 3)``, ``zeros((2, 3))``) or as
    ``size=`` (``zeros(size=(2, 3))``), as torch takes it; any other keyword is refused."""
    unknown = set(named) - {"size"}
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if "size" not in named:
        return positional
    if positional:
        raise TypeError(f"{op}: got a size both by position and as size=")
    return (named["size"],)


def _shape_and_float(op: str, size: tuple, dtype: Any,
                     device: Any) -> tuple[tuple[int, ...], np.dtype]:
    check_device(device, op)
    wanted = dtypes.get_default_dtype().dtype if dtype is None else dtypes.to_numpy(dtype, op)
    if wanted.kind != "f":
        raise TypeError(f"{op}: needs a floating dtype, got {dtypes.of(wanted)}")
    return size_of(size, op), wanted


def _like(input: Any, op: str) -> Tensor:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    return input


def _values(x: Any) -> Any:
    """A Tensor's array, or the number itself."""
    return x._value if isinstance(x, Tensor) else x


def _plain(value: Any, op: str) -> int | float:
    """A number argument as a Python int or float (a one-element Tensor's value)."""
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: expected a number, got {type(value).__name__} {value!r}")
    return int(value) if isinstance(value, (int, np.integer)) else float(value)
