"""``chaingrad.backends.cuda``: torch's switches of CUDA kernels, kept and changing nothing
(no CUDA here, as on torch's CPU build): ``matmul.allow_tf32`` (False at first, as torch's),
``matmul.allow_fp16_reduced_precision_reduction`` and
``matmul.allow_bf16_reduced_precision_reduction`` (True), the attention kernels' switches.

Example:
    >>> from chaingrad.backends import cuda
    >>> cuda.is_built(), cuda.matmul.allow_tf32
    (False, False)
"""

from .. import torch_names


class Matmul:
    """``backends.cuda.matmul``: whether cuBLAS may round float32 products (TF32) or
    reduce float16 and bfloat16 products in lower precision; kept, and changing nothing on
    the CPU."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    def __repr__(self) -> str:
        return (f"backends.cuda.matmul(allow_tf32={self.allow_tf32}, "
                f"allow_fp16_reduced_precision_reduction="
                f"{self.allow_fp16_reduced_precision_reduction}, "
                f"allow_bf16_reduced_precision_reduction="
                f"{self.allow_bf16_reduced_precision_reduction})")


matmul = Matmul()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """False: chaingrad has no CUDA (as torch's CPU build)."""
    return False


def flash_sdp_enabled() -> bool:
    """Whether the flash attention kernel may be chosen (True at first, as torch's); no
    kernel but the CPU's runs here."""
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash attention kernel: noted, changing nothing on the CPU."""
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient attention kernel may be chosen (True at first)."""
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Allow or forbid the memory-efficient attention kernel: noted, changing nothing."""
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    """Whether the plain (math) attention may be chosen (True at first)."""
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the plain attention: noted, changing nothing."""
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether cuDNN's attention kernel may be chosen (True at first)."""
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Allow or forbid cuDNN's attention kernel: noted, changing nothing."""
    _sdp["cudnn"] = bool(enabled)


__getattr__ = torch_names.submodules_on_use(__name__, (), torch_names.BACKENDS_CUDA)
