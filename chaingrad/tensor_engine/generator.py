"""torch's random generators: ``Generator``, ``default_generator``, ``manual_seed``.

Every random number of chaingrad's Tensors (``rand``, ``randn``, ``randint``, ``randperm``,
``multinomial``, ``normal_``, the layers' initial weights, ``nn.init``, dropout's masks)
is drawn from a ``Generator``: the one passed as ``generator=``, or the default one, which
``manual_seed(n)`` restarts. The numbers are PyTorch's for the same seed, dtype and shape:
a Generator is torch's Mersenne Twister, and each distribution is torch's algorithm
(``sampling.py`` holds them, and docs/pytorch.md says where an ulp can differ).

Example:
    >>> import chaingrad
    >>> g = chaingrad.Generator().manual_seed(2147483647)
    >>> p = chaingrad.rand(3, generator=g)
    >>> p / p.sum()
    tensor([0.6064, 0.3033, 0.0903])
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from . import sampling
from .devices import CPU, check_device
from .sampling import lecture_rng, use_lecture_rng
from .tensor import Tensor, leaf

__all__ = ["Generator", "default_generator", "get_rng_state", "initial_seed", "lecture_rng",
           "manual_seed", "seed", "set_rng_state", "use_lecture_rng"]


class Generator:
    """A random-number generator, as ``torch.Generator``: its own stream, reproducible from
    its seed. A new one starts from torch's fixed seed 67280421310721.

    Args:
        device: The CPU only (None, 'cpu').

    Example:
        >>> g = Generator().manual_seed(0)
        >>> g.initial_seed(), g.device
        (0, device(type='cpu'))
        >>> state = g.get_state()
        >>> a = g.manual_seed(5).initial_seed()
        >>> g.set_state(state).initial_seed()
        0
    """

    def __init__(self, device: Any = None) -> None:
        check_device(device, "Generator")
        self._stream = sampling.Stream()

    @classmethod
    def _around(cls, stream: sampling.Stream) -> Generator:
        """A Generator drawing from an existing stream (the default generator's)."""
        generator = cls.__new__(cls)
        generator._stream = stream
        return generator

    @property
    def device(self) -> Any:
        """The device the generator is for: the CPU."""
        return CPU

    def manual_seed(self, seed: int) -> Generator:
        """Start afresh from ``seed`` (an int in [-2**63, 2**64); a negative one counts
        modulo 2**64, as in torch); returns the generator, so that
        ``Generator().manual_seed(2147483647)`` can be kept in one line."""
        self._stream.manual_seed(_seed_value(seed, "manual_seed"))
        return self

    def seed(self) -> int:
        """Start afresh from a seed taken from the operating system's entropy; returns it."""
        chosen = int.from_bytes(os.urandom(8), "little")
        self._stream.manual_seed(chosen)
        return chosen

    def initial_seed(self) -> int:
        """The seed the generator last started from (as a number in [0, 2**64))."""
        return self._stream.initial_seed

    def get_state(self) -> Tensor:
        """The generator's state: 5056 uint8 numbers laid out as torch's CPU generator
        state, so that ``torch.Generator().set_state(torch.from_numpy(state.numpy()))``
        continues where this one is, and the other way round with ``set_state``."""
        return leaf(self._stream.state_bytes(), False, "get_state")

    def set_state(self, new_state: Any) -> Generator:
        """Put the generator where ``get_state`` found it (this generator's, another's, or
        torch's: a chaingrad or torch uint8 tensor, or a numpy array); returns it."""
        self._stream.load_state_bytes(_state_bytes(new_state, "set_state"), "set_state")
        return self

    def __repr__(self) -> str:
        return f"<chaingrad.Generator (initial_seed={self.initial_seed()})>"


default_generator = Generator._around(sampling.DEFAULT)


def manual_seed(seed: Any) -> Generator:
    """Restart the default generator from ``seed`` (anything ``int()`` takes, as
    ``torch.manual_seed``); returns it.

    Example:
        >>> import chaingrad
        >>> _ = chaingrad.manual_seed(0); a = chaingrad.rand(2)
        >>> _ = chaingrad.manual_seed(0); chaingrad.equal(a, chaingrad.rand(2))
        True
    """
    try:
        number = int(seed)
    except (TypeError, ValueError):
        raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__} "
                        f"{seed!r}") from None
    return default_generator.manual_seed(number)


def seed() -> int:
    """Restart the default generator from the operating system's entropy; returns the
    seed used."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator last started from."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (a uint8 Tensor in torch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Put the default generator where ``get_rng_state`` found it."""
    default_generator.set_state(new_state)


def _seed_value(seed: Any, op: str) -> int:
    """A seed as the int in [0, 2**64) torch keeps: negative ones wrap around."""
    if not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{op}: expected an int seed, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    if not -2**63 <= seed < 2**64:
        raise ValueError(f"{op}: seed {seed} is out of range: a seed is an int in "
                         "[-2**63, 2**64)")
    return seed % 2**64


def _state_bytes(state: Any, op: str) -> bytes:
    """The bytes of a state given as a chaingrad Tensor, a torch tensor or a numpy array
    of uint8."""
    if isinstance(state, Tensor):
        array = state._value
    elif isinstance(state, np.ndarray):
        array = state
    elif hasattr(state, "numpy") and hasattr(state, "dtype"):  # a torch tensor
        array = state.detach().cpu().numpy()
    else:
        raise TypeError(f"{op}: expected a uint8 Tensor, got {type(state).__name__}")
    if array.dtype != np.uint8:
        raise TypeError(f"{op}: RNG state must be a uint8 (byte) tensor, got {array.dtype}")
    return np.ascontiguousarray(array).ravel().tobytes()
