"""``chaingrad.cuda``: chaingrad computes on the CPU only, so no GPU is ever available.

Example:
    >>> import chaingrad
    >>> chaingrad.cuda.is_available(), chaingrad.cuda.device_count()
    (False, 0)
"""


def is_available() -> bool:
    """False: chaingrad has no GPU backend (``device="cuda"`` raises an error saying so)."""
    return False


def device_count() -> int:
    """0: no GPU."""
    return 0
