"""The one random generator behind every random number of chaingrad's Tensors.

``rand``, ``randn``, ``randint``, the layers' initial weights, ``nn.init`` and dropout all
draw from ``generator()``; ``manual_seed(n)`` makes all of them reproducible at once, as
``torch.manual_seed`` does. The numbers are numpy's (a PCG64 ``Generator``), not torch's:
the same seed gives other numbers than in PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_generator = np.random.default_rng()


def generator() -> np.random.Generator:
    """The generator to draw from (ask for it at each use: ``manual_seed`` replaces it).

    Example:
        >>> manual_seed(0)
        >>> a = generator().random()
        >>> manual_seed(0)
        >>> a == generator().random()
        True
    """
    return _generator


def manual_seed(seed: int) -> None:
    """Start the generator afresh from ``seed`` (torch returns its generator; chaingrad
    returns None, so that a bare ``manual_seed(0)`` prints nothing).

    Example:
        >>> import chaingrad
        >>> chaingrad.manual_seed(0); a = chaingrad.rand(2)
        >>> chaingrad.manual_seed(0); chaingrad.equal(a, chaingrad.rand(2))
        True
    """
    global _generator
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__} {seed!r}")
    _generator = np.random.default_rng(int(seed) % 2**64)


def seed() -> int:
    """Seed the generator from the operating system's entropy; returns the seed used."""
    chosen = int(np.random.SeedSequence().entropy % 2**63)
    manual_seed(chosen)
    return chosen


def get_rng_state() -> dict[str, Any]:
    """The generator's state, to give back to ``set_rng_state`` (as torch's)."""
    return _generator.bit_generator.state


def set_rng_state(state: dict[str, Any]) -> None:
    """Put the generator back where ``get_rng_state`` found it."""
    _generator.bit_generator.state = state
