"""How many threads the Tensor engine computes on: torch's four functions, for numpy's BLAS.

chaingrad's only multi-threaded work is numpy's BLAS (matrix products, convolutions), so
``set_num_threads`` sets the number of BLAS threads, through threadpoolctl (a dependency of
the ``tensor`` extra), and ``get_num_threads`` reports what threadpoolctl says the BLAS
uses. Before any call, chaingrad follows torch's default: ``OMP_NUM_THREADS`` (or
``MKL_NUM_THREADS``) if set, else one thread per physical core; it is applied when this
module is imported (with ``chaingrad.tensor_engine``), and only where the BLAS would use a
different count (a machine with more logical than physical cores).

chaingrad runs no inter-op work, so ``set_num_interop_threads`` and
``get_num_interop_threads`` only keep torch's contract: the number, its checks, and the
refusal of a second call.

Example:
    >>> import chaingrad as torch
    >>> before = torch.get_num_threads()
    >>> torch.set_num_threads(1)
    >>> torch.get_num_threads()
    1
    >>> torch.set_num_threads(before)
    >>> torch.set_num_threads(0)
    Traceback (most recent call last):
    ...
    RuntimeError: set_num_threads expects a positive integer
"""

from __future__ import annotations

import contextlib
import os
from numbers import Integral
from typing import Any

import numpy  # noqa: F401 - loaded before the default is applied: its BLAS is what it limits

__all__ = ["get_num_interop_threads", "get_num_threads", "set_num_interop_threads",
           "set_num_threads"]


def physical_cores() -> int:
    """The number of physical cores (torch's default thread count): on Linux, the distinct
    (package, core) pairs of the online CPUs in /sys; elsewhere, ``os.cpu_count()``."""
    root = "/sys/devices/system/cpu"
    cores = set()
    try:
        for name in os.listdir(root):
            topology = os.path.join(root, name, "topology")
            if not (name.startswith("cpu") and name[3:].isdigit() and os.path.isdir(topology)):
                continue
            with open(os.path.join(topology, "physical_package_id")) as package, \
                    open(os.path.join(topology, "core_id")) as core:
                cores.add((package.read().strip(), core.read().strip()))
    except OSError:
        cores = set()
    return len(cores) or os.cpu_count() or 1


def default_threads() -> int:
    """torch's default number of intra-op threads: ``OMP_NUM_THREADS``, else
    ``MKL_NUM_THREADS`` (a positive integer), else the physical cores."""
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(variable, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return physical_cores()


_threads: list[int] = [default_threads()]  # what was asked for last (a list: set in place)
_interop: list[int | None] = [None]  # set once, as torch allows


def _checked(op: str, n: Any) -> int:
    """n, a positive int, else torch's RuntimeError for ``op``."""
    if isinstance(n, bool) or not isinstance(n, Integral):  # numpy's ints pass, as in torch
        raise RuntimeError(f"{op} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{op} expects a positive integer")
    return int(n)


def _blas_pools() -> list[dict[str, Any]]:
    """threadpoolctl's description of the BLAS libraries loaded (numpy's OpenBLAS, ...)."""
    from threadpoolctl import threadpool_info  # an optional dependency (the tensor extra)

    return [pool for pool in threadpool_info() if pool.get("user_api") == "blas"]


def _limit_blas(n: int) -> None:
    try:
        from threadpoolctl import threadpool_limits
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError("set_num_threads needs threadpoolctl to govern numpy's "
                                  "BLAS threads: pip install 'chaingrad[tensor]' (or "
                                  "pip install threadpoolctl)", name="threadpoolctl") from exc
    threadpool_limits(limits=n, user_api="blas")  # takes effect now, for the process


def set_num_threads(n: int) -> None:
    """Set the number of threads numpy's BLAS computes on (torch's intra-op threads: the
    matrix products and convolutions are chaingrad's only multi-threaded work).

    Args:
        n: A positive int.

    Raises:
        RuntimeError: ``n`` is not a positive int (torch's errors).
        ModuleNotFoundError: threadpoolctl is not installed.

    Example:
        >>> before = get_num_threads()
        >>> set_num_threads(1); get_num_threads()
        1
        >>> set_num_threads(before)
    """
    n = _checked("set_num_threads", n)
    _limit_blas(n)
    _threads[0] = n


def get_num_threads() -> int:
    """The number of threads numpy's BLAS computes on, as threadpoolctl reports it (the
    largest, if several BLAS libraries are loaded); without threadpoolctl or a BLAS, the
    number set last (torch's default at first).

    Example:
        >>> get_num_threads() >= 1
        True
    """
    try:
        pools = _blas_pools()
    except ModuleNotFoundError:
        pools = []
    return max((pool["num_threads"] for pool in pools), default=_threads[0])


def set_num_interop_threads(n: int) -> None:
    """Set the number of inter-op threads, once, as torch allows (chaingrad runs no
    inter-op work: the number is kept and reported, nothing else).

    Raises:
        RuntimeError: ``n`` is not a positive int, or it was set before (torch's errors).

    Example:
        >>> get_num_interop_threads() > 0
        True
    """
    n = _checked("set_num_interop_threads", n)
    if _interop[0] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _interop[0] = n


def get_num_interop_threads() -> int:
    """The number of inter-op threads: the one set, else torch's default (the physical
    cores, as torch's intra-op default without its environment variables)."""
    return _interop[0] if _interop[0] is not None else physical_cores()


def _apply_default() -> None:
    """Give the BLAS torch's default thread count where it would use another: only when
    no thread variable is set and the machine has more logical than physical cores
    (OpenBLAS then takes one thread per logical core, torch one per physical core)."""
    variables = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    if any(os.environ.get(v) for v in variables) or (os.cpu_count() or 1) == _threads[0]:
        return
    with contextlib.suppress(ModuleNotFoundError):  # without it, the BLAS keeps its own
        _limit_blas(_threads[0])


_apply_default()
