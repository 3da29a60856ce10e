"""``chaingrad.backends``: the switches of torch's kernels, and its float32 matmul
precision, accepted and changing nothing, as on torch's CPU build.

A program that sets ``torch.backends.cuda.matmul.allow_tf32 = True``,
``torch.backends.cudnn.allow_tf32``, ``.benchmark`` or ``.deterministic``, or calls
``torch.set_float32_matmul_precision("high")``, computes on torch's CPU build exactly what
it computes without them: those switches choose among GPU kernels (TF32 and bfloat16
products), which the CPU build does not run. chaingrad keeps what is set, so that it reads
back as in torch, and its numbers are its own float32 ones either way.
``backends.mps.is_available()`` and ``backends.cuda.is_built()`` are False.

Example:
    >>> import chaingrad as torch
    >>> torch.backends.cuda.matmul.allow_tf32 = True   # noted; changes nothing on the CPU
    >>> torch.backends.cudnn.benchmark, torch.backends.mps.is_available()
    (False, False)
    >>> torch.set_float32_matmul_precision("high")
    >>> torch.get_float32_matmul_precision()
    'high'
    >>> torch.set_float32_matmul_precision("highest")   # back as they were
    >>> torch.backends.cuda.matmul.allow_tf32 = False
"""

from .. import torch_names

PRECISIONS = ("highest", "high", "medium")
"""What ``set_float32_matmul_precision`` takes, as torch."""

_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """Note ``precision`` ('highest', 'high' or 'medium'), as torch: on torch's CPU build it
    changes no number (TF32 and bfloat16 products are GPU kernels), and so it is here.

    Args:
        precision: 'highest' (torch's default: float32 products), 'high' or 'medium'.

    Raises:
        ValueError: another string (torch warns and keeps the old one; chaingrad says so
            at once).
    """
    global _precision
    if precision not in PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: {precision!r} is not one of "
                         "'highest', 'high', or 'medium'")
    _precision = precision


def get_float32_matmul_precision() -> str:
    """The precision last set by ``set_float32_matmul_precision`` ('highest' at first)."""
    return _precision


__getattr__ = torch_names.submodules_on_use(__name__, ("cpu", "cuda", "cudnn", "mps"),
                                            torch_names.BACKENDS)
