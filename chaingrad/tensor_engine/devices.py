"""Devices as torch names them; chaingrad computes on the CPU only.

``device("cpu")`` and ``device=`` arguments naming the CPU are accepted everywhere torch
takes them; another device (``"cuda"``, ``"mps"``) can be named, as in torch, but a tensor
cannot be put on it: that raises an error saying chaingrad has only the CPU.
"""

from __future__ import annotations

from typing import Any

from ..errors import NoCudaError


class device:  # noqa: N801 - torch's name
    """A device: ``device("cpu")``, ``device("cuda", 0)``, ``device("cuda:0")``.

    Example:
        >>> device("cpu"), str(device("cpu")), device("cpu") == "cpu"
        (device(type='cpu'), 'cpu', True)
    """

    __slots__ = ("type", "index")

    def __init__(self, type: Any, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        if not isinstance(type, str):
            raise TypeError(f"device: expected a string such as 'cpu', got "
                            f"{type.__class__.__name__} {type!r}")
        name, _, number = type.partition(":")
        if name not in ("cpu", "cuda", "mps", "meta", "xpu"):
            raise RuntimeError(f"device: expected one of cpu, cuda, mps device type at start "
                               f"of device string: {type}")
        self.type = name
        self.index = int(number) if number else index

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


def check_device(where_to: Any, op: str) -> device:
    """The CPU, if ``where_to`` (a device, a string, None) names it; else an error naming
    ``op`` and the device: a ``NoCudaError``, both the AssertionError of torch's CPU build
    ("Torch not compiled with CUDA enabled") and a NotImplementedError (a RuntimeError), the
    one check of a ``device=`` argument, a tensor's or a layer's.

    Example:
        >>> check_device("cpu", "zeros")
        device(type='cpu')
        >>> check_device("cuda", "Linear(device='cuda')")
        Traceback (most recent call last):
        ...
        chaingrad.errors.NoCudaError: Linear(device='cuda'): chaingrad computes on the CPU \
only, got device 'cuda' (chaingrad.cuda.is_available() is False)
    """
    if where_to is None:
        return CPU
    if isinstance(where_to, int) and not isinstance(where_to, bool):
        where_to = device("cuda", where_to)
    if not isinstance(where_to, (str, device)):
        raise TypeError(f"{op}: expected a dtype or a device, got "
                        f"{type(where_to).__name__} {where_to!r}")
    found = device(where_to)
    if found.type != "cpu":
        raise NoCudaError(f"{op}: chaingrad computes on the CPU only, got device "
                          f"{str(found)!r} (chaingrad.cuda.is_available() is False)")
    return CPU


_default = CPU


def set_default_device(device: Any) -> None:
    """Accepted for the CPU (the only device chaingrad has); another device is an error."""
    check_device(device, "set_default_device")


def get_default_device() -> device:
    """The CPU: the one device chaingrad has."""
    return _default
