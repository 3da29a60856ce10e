"""``chaingrad.accelerator``: torch's device-agnostic questions about an accelerator (a GPU,
an MPS or XPU device), answered as torch's CPU build answers them: there is none.

``is_available()`` is False, ``device_count()`` 0 and ``current_accelerator()`` None, so
that the device line of PyTorch's current examples picks the CPU::

    device = torch.accelerator.current_accelerator().type \\
        if torch.accelerator.is_available() else "cpu"

What needs a device to answer (``current_device_index``, ``synchronize``, ...) raises torch's
RuntimeError, "Cannot access accelerator device when none is available."

Example:
    >>> import chaingrad as torch
    >>> torch.accelerator.is_available(), torch.accelerator.device_count()
    (False, 0)
    >>> print(torch.accelerator.current_accelerator())
    None
"""

from typing import Any, NoReturn

from . import torch_names


def is_available() -> bool:
    """False: chaingrad computes on the CPU only, which torch does not count as an
    accelerator."""
    return False


def device_count() -> int:
    """0: no accelerator."""
    return 0


def current_accelerator(check_available: bool = False) -> None:
    """None: no accelerator (torch's CPU build answers None, whether or not
    ``check_available``)."""
    return None


def _none_available(op: str) -> NoReturn:
    raise RuntimeError(f"accelerator.{op}: Cannot access accelerator device when none is "
                       "available. (chaingrad computes on the CPU only)")


def current_device_index() -> int:
    """An error, as torch's CPU build: no accelerator device to index."""
    _none_available("current_device_index")


def set_device_index(device: Any) -> None:
    """An error, as torch's CPU build: no accelerator device to select."""
    _none_available("set_device_index")


def synchronize(device: Any = None) -> None:
    """An error, as torch's CPU build: no accelerator device to wait for."""
    _none_available("synchronize")


def empty_cache() -> None:
    """An error, as torch's CPU build: no accelerator memory to free."""
    _none_available("empty_cache")


def memory_allocated(device_index: Any = None) -> int:
    """An error, as torch's CPU build: no accelerator memory to count."""
    _none_available("memory_allocated")


def max_memory_allocated(device_index: Any = None) -> int:
    """An error, as torch's CPU build: no accelerator memory to count."""
    _none_available("max_memory_allocated")


__getattr__ = torch_names.submodules_on_use(__name__, (), torch_names.ACCELERATOR)
