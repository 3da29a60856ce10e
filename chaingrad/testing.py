"""Are two results close, as ``torch.testing.assert_close`` decides it?

``assert_close(actual, expected)`` compares tensors (and numbers, and lists, tuples and
dicts of them, item by item) with torch's tolerances for their dtype, and fails with
torch's message: how many entries differ, and the greatest absolute and relative
differences and where they are.

Example:
    >>> import chaingrad as torch
    >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0000001]))
    >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 2 (50.0%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from numbers import Number
from typing import Any

import numpy as np

from . import torch_names
from .tensor_engine import Tensor
from .tensor_engine.factories import from_numpy

TOLERANCES: dict[np.dtype, tuple[float, float]] = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
}
"""torch's default ``(rtol, atol)`` for each floating dtype; 0 and 0 (equality) for the
others (bfloat16's, (1.6e-2, 1e-5), where chaingrad has that dtype)."""


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise an AssertionError unless ``actual`` and ``expected`` are close, as
    ``torch.testing.assert_close``: of the same kind (tensors, numpy arrays, or numbers), shape
    and (with ``check_dtype``) dtype, and ``|actual - expected| <= atol + rtol * |expected|``
    entry by entry. Lists, tuples and dicts are compared item by item.

    Args:
        actual: A Tensor, a numpy array, a number, or a list, tuple or dict of them.
        expected: The same, to compare with.
        rtol, atol: The tolerances; both or neither. Left out, torch's for the dtype (the
            larger of the two inputs'): float16 (1e-3, 1e-5), float32 (1.3e-6, 1e-5),
            float64 and Python floats (1e-7, 1e-7), integers and bools (0, 0).
        equal_nan: nan equals nan.
        check_dtype: The dtypes must be the same (else both are compared in the one
            torch promotes them to).
        msg: The message instead of torch's (or a function of torch's that gives it).
        allow_subclasses, check_device, check_layout, check_stride: torch's, accepted
            (chaingrad has one Tensor class, one device and one layout).

    Raises:
        AssertionError: Naming what differs, in torch's words.
        ValueError: Only one of ``rtol`` and ``atol`` given.
        TypeError: Inputs that cannot be compared (a Tensor and a number, say).

    Example:
        >>> import chaingrad as torch
        >>> assert_close([torch.tensor(1.0), 2], [torch.tensor(1.0), 2])
        >>> assert_close(1.0, 1.5)
        Traceback (most recent call last):
        ...
        AssertionError: Scalars are not close!
        <BLANKLINE>
        Expected 1.5 but got 1.0.
        Absolute difference: 0.5 (up to 1e-07 allowed)
        Relative difference: 0.3333333333333333 (up to 1e-07 allowed)
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, "", rtol=rtol, atol=atol, equal_nan=equal_nan,
             check_dtype=check_dtype, msg=msg)


def _compare(actual: Any, expected: Any, where: str, **options: Any) -> None:
    """The comparison of one pair, or of each pair of items (``where`` is the path to it:
    ``[1]['a']``)."""
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match:\nMissing keys in the "
                                 f"actual mapping: {sorted(map(str, set(expected) - set(actual)))}"
                                 f"\nExtra keys in the actual mapping: "
                                 f"{sorted(map(str, set(actual) - set(expected)))}")
        for key in expected:
            _compare(actual[key], expected[key], f"{where}[{key!r}]", **options)
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != "
                                 f"{len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{where}[{i}]", **options)
        return
    try:
        _compare_values(actual, expected, **options)
    except AssertionError as exc:
        if where and options["msg"] is None:
            raise AssertionError(f"{exc}\n\nThe failure occurred for item {where}") from None
        raise


def _is_sequence(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def _compare_values(actual: Any, expected: Any, *, rtol: float | None, atol: float | None,
                    equal_nan: bool, check_dtype: bool, msg: Any) -> None:
    """Two tensors (or numpy arrays), or two numbers: torch's ``TensorLikePair`` and
    ``NumberPair``."""
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        actual, expected = from_numpy(actual), from_numpy(expected)  # as torch takes them
    tensors = isinstance(actual, Tensor) and isinstance(expected, Tensor)
    numbers = all(isinstance(x, (Number, np.number)) and not isinstance(x, (Tensor, np.ndarray))
                  for x in (actual, expected))
    if not tensors and not numbers:
        raise TypeError(f"No comparison pair was able to handle inputs of type "
                        f"{type(actual)} and {type(expected)}.")
    if tensors:
        a, e = actual.detach().numpy(), expected.detach().numpy()
        for attr, x, y in (("shape", actual.shape, expected.shape),
                           ("dtype", actual.dtype, expected.dtype)):
            if x != y and (attr == "shape" or check_dtype):
                raise AssertionError(f"The values for attribute '{attr}' do not match: {x} != "
                                     f"{y}.")
    else:
        a, e = (np.asarray(x, dtype=np.float64 if isinstance(x, (float, np.floating))
                           else complex if isinstance(x, complex) else np.int64)
                for x in (actual, expected))
    if rtol is None or atol is None:
        rtol, atol = (max(TOLERANCES.get(x.dtype, (0.0, 0.0))[i] for x in (a, e))
                      for i in (0, 1))
    if a.dtype != e.dtype:
        common = np.promote_types(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    with np.errstate(all="ignore"):
        matches = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan) \
            if a.dtype.kind in "fc" else a == e
    if matches.all():
        return
    text = _scalar_mismatch(a, e, rtol, atol) if numbers or a.ndim == 0 else \
        _tensor_mismatch(a, e, matches, rtol, atol)
    raise AssertionError(msg(text) if callable(msg) else msg if msg is not None else text)


def _tensor_mismatch(a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol: float,
                     atol: float) -> str:
    """torch's message for tensors: the mismatches counted, the greatest differences
    among them, computed as torch computes them (integers as int64)."""
    total, wrong = matches.size, int(matches.size - matches.sum())
    head = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    if a.dtype.kind not in "fc":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e).reshape(-1)
        abs_diff[matches.reshape(-1)] = 0
        rel_diff = (abs_diff / np.abs(e.reshape(-1))).astype(
            abs_diff.dtype if abs_diff.dtype.kind in "fc" else np.float32)
        rel_diff[matches.reshape(-1)] = 0
    at_abs, at_rel = _first_max(abs_diff), _first_max(rel_diff)
    return _mismatch("Tensor-likes", head, abs_diff[at_abs].item(),
                     np.unravel_index(at_abs, a.shape), rel_diff[at_rel].item(),
                     np.unravel_index(at_rel, a.shape), rtol, atol)


def _first_max(x: np.ndarray) -> int:
    """Where torch.max finds the largest entry: a nan first, else the first largest."""
    nan = np.flatnonzero(np.isnan(x)) if x.dtype.kind == "f" else ()
    return int(nan[0]) if len(nan) else int(np.argmax(x))


def _scalar_mismatch(a: np.ndarray, e: np.ndarray, rtol: float, atol: float) -> str:
    """torch's message for numbers (or 0-dim tensors)."""
    got, wanted = a.item(), e.item()
    abs_diff = abs(got - wanted)
    rel_diff = abs_diff / abs(wanted) if wanted != 0 else float("inf") if abs_diff else 0.0
    return _mismatch("Scalars", f"Expected {wanted} but got {got}.", abs_diff, None,
                     rel_diff, None, rtol, atol)


def _mismatch(what: str, head: str, abs_diff: Any, abs_at: Any, rel_diff: Any, rel_at: Any,
              rtol: float, atol: float) -> str:
    """torch's ``_make_mismatch_msg``: "not equal" when both tolerances are 0."""
    equality = rtol == 0 and atol == 0
    lines = [f"{what} are not {'equal' if equality else 'close'}!", "", head]
    for kind, diff, at, tol in (("absolute", abs_diff, abs_at, atol),
                                ("relative", rel_diff, rel_at, rtol)):
        line = f"{kind.title()} difference: {diff}" if at is None else \
            f"Greatest {kind} difference: {diff} at index {tuple(int(i) for i in at)}"
        lines.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


__getattr__ = torch_names.submodules_on_use("chaingrad.testing", (), torch_names.TESTING)
