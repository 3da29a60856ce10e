"""``chaingrad.backends.cpu``: what the CPU's kernels use.

Example:
    >>> from chaingrad.backends import cpu
    >>> cpu.get_cpu_capability()
    'DEFAULT'
"""


def get_cpu_capability() -> str:
    """'DEFAULT', torch's name for kernels without vector extensions of their own: chaingrad
    runs numpy's, which choose their own at run time (torch names AVX2, AVX512, ...)."""
    return "DEFAULT"
