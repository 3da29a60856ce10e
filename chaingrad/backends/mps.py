"""``chaingrad.backends.mps``: Apple's Metal devices, as torch's CPU build answers: none.

Example:
    >>> from chaingrad.backends import mps
    >>> mps.is_available(), mps.is_built()
    (False, False)
"""


def is_available() -> bool:
    """False: chaingrad computes on the CPU only."""
    return False


def is_built() -> bool:
    """False: chaingrad has no Metal backend."""
    return False
