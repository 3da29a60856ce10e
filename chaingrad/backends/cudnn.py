"""``chaingrad.backends.cudnn``: torch's switches of cuDNN, kept and changing nothing (no
cuDNN here, as on torch's CPU build): ``enabled`` (True), ``allow_tf32`` (True),
``benchmark`` and ``deterministic`` (False), as torch's read at first.

Example:
    >>> import chaingrad.backends.cudnn as cudnn
    >>> cudnn.benchmark = True   # noted; nothing to benchmark on the CPU
    >>> cudnn.is_available(), cudnn.version()
    (False, None)
    >>> cudnn.benchmark = False
"""

enabled = True
allow_tf32 = True
benchmark = False
deterministic = False


def is_available() -> bool:
    """False: chaingrad has no cuDNN (as torch's CPU build)."""
    return False


def version() -> None:
    """None: no cuDNN, so no version (as torch's CPU build)."""
    return None
