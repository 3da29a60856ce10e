"""``chaingrad.cuda``: chaingrad computes on the CPU only, so no GPU is ever available.

Code written for a GPU when there is one runs as it is: ``cuda.is_available()`` is False,
and seeding the GPUs (``cuda.manual_seed``, ``cuda.manual_seed_all``) does nothing, as it
does in torch on a machine without one (the CPU's numbers come from ``manual_seed``).

Example:
    >>> import chaingrad
    >>> chaingrad.cuda.is_available(), chaingrad.cuda.device_count()
    (False, 0)
    >>> chaingrad.cuda.manual_seed_all(1337)   # no GPU to seed
"""

from numbers import Integral


def is_available() -> bool:
    """False: chaingrad has no GPU backend (``device="cuda"`` raises an error saying so)."""
    return False


def device_count() -> int:
    """0: no GPU."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator: nothing to do, there is no GPU (as torch's, without
    one). ``chaingrad.manual_seed(seed)`` seeds the CPU's."""
    _check_seed("cuda.manual_seed", seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: nothing to do, there is none (as torch's, without one)."""
    _check_seed("cuda.manual_seed_all", seed)


def _check_seed(where: str, seed: object) -> None:
    """The seed torch would take (``int(seed)``), though no generator uses it."""
    if isinstance(seed, Integral):
        return
    try:
        int(seed)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise TypeError(f"{where}: seed must be an int, got {type(seed).__name__} "
                        f"{seed!r}") from None
