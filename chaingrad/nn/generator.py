"""The random numbers of ``chaingrad.nn``: initial weights (``nn.init``) and dropout masks.

One numpy generator serves them all; ``manual_seed(n)`` restarts it, so that a model built
and trained after it is the same every run. The numbers are chaingrad's own: the same seed
gives other numbers than PyTorch's generator does.

This module is the one place that holds the generator: ``nn.init`` and ``F.dropout`` ask
``generator()`` for it each time (never keep it: ``manual_seed`` replaces it).

Example:
    >>> manual_seed(0)
    >>> a = generator().uniform(size=2)
    >>> manual_seed(0)
    >>> bool((generator().uniform(size=2) == a).all())
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

_rng = np.random.default_rng()


def generator() -> np.random.Generator:
    """The generator behind initial weights and dropout masks (as it is now)."""
    return _rng


def manual_seed(seed: int) -> None:
    """Restart the generator at ``seed``."""
    global _rng
    _rng = np.random.default_rng(seed)


def get_rng_state() -> dict[str, Any]:
    """The generator's state, to give back to ``set_rng_state`` (as torch's)."""
    return _rng.bit_generator.state


def set_rng_state(state: dict[str, Any]) -> None:
    """Put the generator back where ``get_rng_state`` found it."""
    _rng.bit_generator.state = state
