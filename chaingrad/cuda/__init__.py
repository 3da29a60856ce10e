"""``chaingrad.cuda``: what torch's CPU build answers about GPUs, since chaingrad computes on
the CPU only.

Code written for a GPU when there is one runs as it is on torch's CPU build, and so it does
here: ``cuda.is_available()`` is False, ``device_count()`` 0, ``is_bf16_supported()`` False;
seeding the GPUs (``manual_seed``, ``manual_seed_all``, ``seed``, ``seed_all``) and emptying
their cache do nothing, and their memory counters read 0. What needs a GPU to answer
(``set_device``, ``current_device``, ``synchronize``, ``get_device_name``, ...) raises
``NoCudaError``, an AssertionError with torch's words, "Torch not compiled with CUDA enabled",
as ``x.cuda()`` and ``model.cuda()`` do. ``chaingrad.cuda.amp`` holds torch's older names of
``GradScaler`` and ``autocast``.

Example:
    >>> import chaingrad
    >>> chaingrad.cuda.is_available(), chaingrad.cuda.device_count()
    (False, 0)
    >>> chaingrad.cuda.manual_seed_all(1337)   # no GPU to seed
    >>> chaingrad.cuda.synchronize()
    Traceback (most recent call last):
    ...
    chaingrad.errors.NoCudaError: cuda.synchronize: Torch not compiled with CUDA enabled \
(chaingrad computes on the CPU only; chaingrad.cuda.is_available() is False)
"""

from numbers import Integral
from typing import Any, NoReturn

from .. import torch_names
from ..errors import NoCudaError


def is_available() -> bool:
    """False: chaingrad has no GPU backend (``device="cuda"`` raises an error saying so)."""
    return False


def device_count() -> int:
    """0: no GPU."""
    return 0


def is_initialized() -> bool:
    """False: there is no CUDA state to initialise (as torch's CPU build)."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as torch's CPU build answers: no GPU, so none that supports bfloat16
    (``chaingrad.bfloat16`` itself is there, on the CPU)."""
    return False


def is_tf32_supported() -> bool:
    """False, as torch's CPU build answers: no GPU with TF32 matmuls."""
    return False


def get_arch_list() -> list[str]:
    """``[]``: chaingrad was built for no GPU architecture (torch's CPU build answers the
    same)."""
    return []


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator: nothing to do, there is no GPU (as torch's, without
    one). ``chaingrad.manual_seed(seed)`` seeds the CPU's."""
    _check_seed("cuda.manual_seed", seed)


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: nothing to do, there is none (as torch's, without one)."""
    _check_seed("cuda.manual_seed_all", seed)


def seed() -> None:
    """Seed the current GPU's generator at random: nothing to do, there is no GPU."""


def seed_all() -> None:
    """Seed every GPU's generator at random: nothing to do, there is none."""


def empty_cache() -> None:
    """Free the GPUs' cached memory: nothing to free (as torch's CPU build)."""


def memory_allocated(device: Any = None) -> int:
    """0 bytes: no GPU memory is ever allocated (torch's CPU build answers 0 too)."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """0 bytes: no GPU memory is ever allocated."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """0 bytes: no GPU memory is ever reserved."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """0 bytes: no GPU memory is ever reserved."""
    return 0


def reset_peak_memory_stats(device: Any = None) -> None:
    """Nothing to reset: the peaks are 0 (torch's CPU build fails here on a private name of
    its C extension; a counter that reads 0 resets to 0)."""


def _no_gpu(op: str) -> NoReturn:
    raise NoCudaError(f"{op}: Torch not compiled with CUDA enabled (chaingrad computes on "
                      "the CPU only; chaingrad.cuda.is_available() is False)")


def set_device(device: Any) -> None:
    """An error, as torch's CPU build: there is no GPU to select."""
    _no_gpu("cuda.set_device")


def current_device() -> int:
    """An error, as torch's CPU build: there is no current GPU."""
    _no_gpu("cuda.current_device")


def synchronize(device: Any = None) -> None:
    """An error, as torch's CPU build: there is no GPU to wait for."""
    _no_gpu("cuda.synchronize")


def init() -> None:
    """An error, as torch's CPU build: there is no CUDA to initialise."""
    _no_gpu("cuda.init")


def get_device_name(device: Any = None) -> str:
    """An error, as torch's CPU build: there is no GPU to name."""
    _no_gpu("cuda.get_device_name")


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """An error, as torch's CPU build: there is no GPU."""
    _no_gpu("cuda.get_device_capability")


def get_device_properties(device: Any = None) -> Any:
    """An error, as torch's CPU build: there is no GPU."""
    _no_gpu("cuda.get_device_properties")


def initial_seed() -> int:
    """An error, as torch's CPU build: there is no GPU generator (``chaingrad.initial_seed()``
    is the CPU's)."""
    _no_gpu("cuda.initial_seed")


def get_rng_state(device: Any = "cuda") -> Any:
    """An error, as torch's CPU build: there is no GPU generator
    (``chaingrad.get_rng_state()`` is the CPU's)."""
    _no_gpu("cuda.get_rng_state")


def get_rng_state_all() -> list[Any]:
    """``[]``: the states of no GPU generators (as torch's CPU build)."""
    return []


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Nothing to set: no GPU generator (torch's CPU build accepts it and does nothing)."""


def set_rng_state_all(new_states: Any) -> None:
    """Nothing to set: no GPU generators."""


def current_stream(device: Any = None) -> Any:
    """An error, as torch's CPU build: there is no GPU stream."""
    _no_gpu("cuda.current_stream")


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """An error, as torch's CPU build: there is no GPU memory."""
    _no_gpu("cuda.mem_get_info")


def _check_seed(where: str, seed: object) -> None:
    """The seed torch would take (``int(seed)``), though no generator uses it."""
    if isinstance(seed, Integral):
        return
    try:
        int(seed)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise TypeError(f"{where}: seed must be an int, got {type(seed).__name__} "
                        f"{seed!r}") from None


__getattr__ = torch_names.submodules_on_use(__name__, ("amp",), torch_names.CUDA)
