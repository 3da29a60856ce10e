"""A tensor as text, as torch 2.13 prints it (``repr``, ``str``, ``print``), and
``set_printoptions``: the same numbers, dtype and shape give torch's text, but for a dtype's
module name (``dtype=chaingrad.float64`` where torch prints ``dtype=torch.float64``).

torch writes a tensor in four steps, and so does this module:

1. **What is shown** (``shown_part``): a tensor of more than ``threshold`` entries is
   summarised: along each dim longer than ``2 * edgeitems``, only the first and the last
   ``edgeitems`` are shown, with ``...`` between them.
2. **How an entry is written** (``EntryFormat``), decided once from the entries shown.
   Integers and bools as Python writes them. Floats as whole numbers with a point (``2.``)
   when every finite entry is whole, else with ``precision`` decimals (``2.5000``); in
   scientific notation (``2.5000e+09``) instead when the nonzero finite entries span more
   than 1000x, pass 1e8 or go below 1e-4 (``sci_mode`` forces it on or off). Every entry
   is padded to the width of the widest one, where 0, nan and inf of a floating tensor are
   not measured (``tensor([1., -inf])``).
3. **Lines** (``block``): a row holds as many entries as fit in ``linewidth``; the
   sub-blocks of a d-dim block are separated by a comma and d - 1 newlines, which leaves
   blank lines between matrices.
4. **Suffixes** (``tensor_repr``): ``size=`` for an empty tensor (and when ``edgeitems`` is
   0), ``dtype=`` unless it is the default for its kind (the default floating dtype,
   int64, bool), then ``grad_fn=<...>`` or ``requires_grad=True``, each moved to a line of
   its own when the line would be too long.

Example:
    >>> import chaingrad
    >>> chaingrad.tensor([[1.0, -2.5], [1e-5, 3.0]], requires_grad=True)
    tensor([[ 1.0000e+00, -2.5000e+00],
            [ 1.0000e-05,  3.0000e+00]], requires_grad=True)
    >>> chaingrad.set_printoptions(precision=2)
    >>> chaingrad.tensor([1.0, 2.5], dtype=chaingrad.float64)
    tensor([1.00, 2.50], dtype=chaingrad.float64)
    >>> chaingrad.set_printoptions(profile="default")
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
from typing import Any

import numpy as np

from . import dtypes


@dataclasses.dataclass
class PrintOptions:
    """How tensors print: torch's options, with torch's defaults."""

    precision: int = 4
    """Decimals of a float (after the point, in both notations)."""
    threshold: float = 1000
    """A tensor of more entries than this is summarised."""
    edgeitems: int = 3
    """Entries shown at each end of a summarised dim."""
    linewidth: int = 80
    """The columns a row of entries is broken to fit."""
    sci_mode: bool | None = None
    """Scientific notation always (True), never (False), or as the numbers need (None)."""


OPTIONS = PrintOptions()
"""The options in force, as ``set_printoptions`` last left them."""

PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
"""torch's named sets of options (``sci_mode`` is not part of one)."""


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as ``torch.set_printoptions``: a ``profile``
    (``'default'``, ``'short'``: 2 decimals and 2 edge items, ``'full'``: never
    summarised) first, then each option given. As in torch, every call sets ``sci_mode``
    (to None, the automatic choice, unless it is given). Nothing changes when an option is
    refused.

    Args:
        precision: Decimals of a float (4).
        threshold: A tensor of more entries than this is summarised (1000; ``math.inf``
            never).
        edgeitems: Entries shown at each end of a summarised dim (3).
        linewidth: The columns a row of entries is broken to fit (80).
        profile: ``'default'``, ``'short'`` or ``'full'``, applied before the others.
        sci_mode: True or False to force scientific notation on or off; None to let the
            numbers decide.

    Raises:
        TypeError: An option of the wrong type (a bool is not an int here).
        ValueError: A negative count, a nan threshold or an unknown profile.

    Example:
        >>> import chaingrad
        >>> chaingrad.set_printoptions(threshold=5)
        >>> chaingrad.arange(10)
        tensor([0, 1, 2,  ..., 7, 8, 9])
        >>> chaingrad.set_printoptions(profile="default")
        >>> chaingrad.arange(10)
        tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"set_printoptions: profile must be 'default', 'short' or 'full', "
                         f"got {profile!r}")
    for name, value in (("precision", precision), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            _check_count(name, value)
    if threshold is not None:
        if not isinstance(threshold, numbers.Real) or isinstance(threshold, bool):
            raise TypeError(f"set_printoptions: threshold must be a number, got "
                            f"{_named(threshold)}")
        if math.isnan(threshold):
            raise ValueError("set_printoptions: threshold must be a number, got nan")
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise TypeError(f"set_printoptions: sci_mode must be True, False or None, got "
                        f"{_named(sci_mode)}")
    chosen = dict(PROFILES.get(profile, {}))
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems,
             "linewidth": linewidth}
    chosen.update((name, value) for name, value in given.items() if value is not None)
    for name, value in chosen.items():
        setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The options in force, as keyword arguments for ``set_printoptions``.

    Example:
        >>> get_printoptions()
        {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return dataclasses.asdict(OPTIONS)


def _check_count(name: str, value: Any) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"set_printoptions: {name} must be an int >= 0, got {_named(value)}")
    if value < 0:
        raise ValueError(f"set_printoptions: {name} must be an int >= 0, got {value}")


def _named(value: Any) -> str:
    """A refused value with its type: ``str '80'``."""
    return f"{type(value).__name__} {value!r}"


# ---- the text ----


def tensor_repr(array: np.ndarray, grad_fn: str | None = None,
                requires_grad: bool = False) -> str:
    """The text of a tensor holding ``array``, as torch prints it under the options in force.

    Args:
        array: The tensor's entries.
        grad_fn: The name of the op that made it (``'MulBackward0'``), None for a leaf.
        requires_grad: Whether a leaf takes gradients.

    Example:
        >>> import numpy as np
        >>> print(tensor_repr(np.array([[0.5, -1.0]]), "MulBackward0"))
        tensor([[ 0.5000, -1.0000]], dtype=chaingrad.float64, grad_fn=<MulBackward0>)
    """
    prefix = "tensor("
    indent = len(prefix)
    dtype_suffix = f"dtype={dtypes.of(array.dtype)!r}"
    default_float = dtypes.get_default_dtype().dtype
    suffixes = []
    if array.size == 0:
        body = "[]"
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
        if array.dtype != default_float:  # no entry shows the kind: int64 is named too
            suffixes.append(dtype_suffix)
    else:
        body = entries_text(array, indent)
        if OPTIONS.edgeitems == 0:  # nothing is shown: say how much there is
            suffixes.append(f"size={tuple(array.shape)}")
        if array.dtype not in (default_float, np.dtype(np.int64), np.dtype(np.bool_)):
            suffixes.append(dtype_suffix)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return with_suffixes(prefix + body, suffixes, indent)


def with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """``text`` and its suffixes, each after ``, `` or, when the line would pass
    ``linewidth``, on a line of its own indented by ``indent``; then the ``)``.

    Where to break is decided as torch decides it, so that the lines are torch's: with
    torch's count of the line (which is 2 more than the line holds, until a suffix moves
    to a new line), and a suffix measured as torch spells it (``torch.float64`` is four
    characters shorter than ``chaingrad.float64``).
    """
    parts = [text]
    counted = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        length = len(suffix.replace("dtype=chaingrad.", "dtype=torch."))
        if counted + length + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            counted = indent + length
        else:
            parts.append(", " + suffix)
            counted += length + 2
    return "".join(parts) + ")"


def entries_text(array: np.ndarray, indent: int) -> str:
    """The entries of a nonempty ``array`` in brackets, as torch lays them out: lines after
    the first indented by ``indent`` + 1 (``indent`` is the length of ``tensor(``)."""
    summarise = array.size > OPTIONS.threshold
    edge = OPTIONS.edgeitems
    cut = tuple(summarise and n > 2 * edge for n in array.shape)
    shown = shown_part(array, cut, edge)
    if shown.dtype.name == "bfloat16":  # numpy's kind 'V': its numbers, exactly, as float32
        shown = shown.astype(np.float32)
    texts = EntryFormat(shown).write(shown.ravel().tolist())
    # torch leaves a float's 0, nan and inf out of the measure: they may stick out
    measured = (np.isfinite(shown) & (shown != 0)) if shown.dtype.kind == "f" else \
        np.ones(shown.shape, dtype=bool)
    width = max(map(len, itertools.compress(texts, measured.ravel().tolist())), default=1)
    padded = np.array([text.rjust(width) for text in texts], dtype=object)
    return block(padded.reshape(shown.shape), cut, edge, indent, width)


def shown_part(array: np.ndarray, cut: tuple[bool, ...], edge: int) -> np.ndarray:
    """The entries a summary shows: the first and last ``edge`` along each ``cut`` dim."""
    for axis, is_cut in enumerate(cut):
        if is_cut:
            n = array.shape[axis]
            array = array.take(np.r_[0:edge, n - edge:n], axis=axis)
    return array


class EntryFormat:
    """How every entry of one tensor is written, decided from the entries it shows: for
    floats, from the nonzero finite ones.

    Attributes:
        floating: A floating tensor (else integers and bools, written as Python does).
        int_mode: Every nonzero finite float is a whole number: written ``2.``.
        sci_mode: Floats in scientific notation: ``2.0000e+00``.

    Example:
        >>> f = EntryFormat(np.array([0.5, 1e-5]))
        >>> f.sci_mode, f.write([0.5, 0.0, float("nan")])
        (True, ['5.0000e-01', '0.0000e+00', 'nan'])
    """

    def __init__(self, shown: np.ndarray) -> None:
        self.floating = shown.dtype.kind == "f"
        self.int_mode, self.sci_mode = True, False
        if self.floating:
            values = shown.astype(np.float64)  # exact: what Python's format is given
            measured = values[np.isfinite(values) & (values != 0)]
            if measured.size:
                big, small = float(np.abs(measured).max()), float(np.abs(measured).min())
                self.int_mode = bool((measured == np.ceil(measured)).all())
                self.sci_mode = bool(big / small > 1000.0 or big > 1e8 or small < 1e-4) \
                    if OPTIONS.sci_mode is None else OPTIONS.sci_mode

    def write(self, values: list) -> list[str]:
        """``values`` (Python numbers) as this format writes them, not padded."""
        if not self.floating:
            return list(map(str, values))
        if self.int_mode and not self.sci_mode:
            return [f"{v:.0f}." if math.isfinite(v) else f"{v:.0f}" for v in values]
        notation = "e" if self.sci_mode else "f"
        return list(map(f"{{:.{OPTIONS.precision}{notation}}}".format, values))


def block(texts: np.ndarray, cut: tuple[bool, ...], edge: int, indent: int,
          width: int) -> str:
    """The written entries of a block in brackets: a row broken to fit ``linewidth`` (each
    entry takes ``width`` + 2 columns with its ``, ``), sub-blocks one per line, each in its
    own brackets and indented one more; a ``cut`` dim has ``...`` after its first ``edge``
    parts."""
    if texts.ndim == 0:
        return texts.item()
    parts = list(texts) if texts.ndim == 1 else [
        block(part, cut[1:], edge, indent + 1, width) for part in texts]
    if cut[0]:
        if texts.ndim == 1 and edge == 0:
            parts = ["..."]
        else:
            parts[edge:edge] = [" ..." if texts.ndim == 1 else "..."]
    if texts.ndim == 1:
        per_line = max(1, (OPTIONS.linewidth - indent) // (width + 2))
        lines = [", ".join(parts[i:i + per_line]) for i in range(0, len(parts), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    return "[" + ("," + "\n" * (texts.ndim - 1) + " " * (indent + 1)).join(parts) + "]"
