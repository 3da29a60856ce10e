"""What the Tensor modules' files share: checking a layer's sizes and its input, and the
zeros its parameters and buffers start from, on the CPU (torch keeps its like in
``torch/nn/modules/utils.py``).

Example:
    >>> new_zeros("BatchNorm1d", (2,), None, None)
    tensor([0., 0.])
    >>> check_sizes("Linear", in_features=0)
    Traceback (most recent call last):
    ...
    ValueError: Linear: in_features must be a positive int, got 0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor_engine.devices import check_device
from ...tensor_engine.tensor import Tensor, constant
from ..parameter import Parameter


def new_parameter(where: str, shape: tuple[int, ...], device: Any, dtype: Any) -> Parameter:
    """A Parameter of zeros of ``shape`` (its numbers then set by the layer's
    ``reset_parameters``), float32 unless ``dtype`` says otherwise."""
    return Parameter(new_zeros(where, shape, device, dtype))


def new_zeros(where: str, shape: tuple[int, ...], device: Any, dtype: Any) -> Tensor:
    """A Tensor of zeros of ``shape``, float32 unless ``dtype`` says otherwise (a layer's
    buffer, or a parameter's numbers); a ``device`` other than the CPU is refused, naming
    the layer."""
    check_device(device, f"{where}(device={device!r})")
    return constant(np.zeros(shape, dtype=np.float32 if dtype is None else np.dtype(dtype)))


def check_sizes(where: str, **sizes: Any) -> None:
    """Each of ``sizes`` a positive int, else a ValueError naming the layer and the size."""
    for name, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{where}: {name} must be a positive int, got {n!r}")
