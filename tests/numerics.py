"""The one table of tolerances and intervals that the tests share: central finite
differences in float64, where the inputs of an op are drawn from (away from kinks,
singularities, complex results and overflow), PyTorch the lazy oracle, and how many
examples a property-based test draws.

torch is never imported here at module level: ``T.relu`` looks ``torch.relu`` up when the
callable runs, so the finite-difference tests run without torch installed.
"""

from __future__ import annotations

import importlib
from typing import Any

from hypothesis import settings

# Central finite differences, in float64: (f(x + EPS) - f(x - EPS)) / (2 EPS) against the
# gradient, |analytic - numeric| <= ATOL + RTOL * |numeric|.
EPS = 1e-6
ATOL = 1e-5
RTOL = 1e-3

Interval = tuple[float, float]
ANY: tuple[Interval, ...] = ((-3.0, 3.0),)
NONZERO: tuple[Interval, ...] = ((-3.0, -0.1), (0.1, 3.0))
POSITIVE: tuple[Interval, ...] = ((0.1, 3.0),)
# torch masks its pow gradient where the exponent is exactly 0, and its derivatives of
# x**y contain x**(y-1) and x**(y-2): at y = 0, 1, 2 some of its mixed second and third
# partials come out 0 (d2(x**y)/dxdy is 1 at (1, 0), torch says 0). Keep y away from them.
EXPONENT: tuple[Interval, ...] = ((-2.0, -0.1), (0.1, 0.9), (1.1, 1.9))
CLIP_SAFE: tuple[Interval, ...] = ((-3.0, -1.1), (-0.9, 0.9), (1.1, 3.0))  # bounds are +-1


class _LazyTorch:
    """``T.name`` is ``torch.name``, with torch imported at the first use."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what tools probe (doctest's collector asks __wrapped__)
            raise AttributeError(name)
        return getattr(importlib.import_module("torch"), name)


T = _LazyTorch()

QUICK = False
"""Set by tests/conftest.py for ``pytest -m "not slow"``: property-based tests then draw a
fifth of their examples (at least 3), for a quick loop; the full run draws them all."""


def examples(n: int) -> settings:
    """hypothesis settings for ``n`` examples (a fifth of them in the quick loop), with no
    deadline (the machine may be loaded)."""
    return settings(max_examples=max(3, n // 5) if QUICK else n, deadline=None)
