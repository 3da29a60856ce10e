"""Parameter: a Tensor that a Module registers when it is set as an attribute (torch's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor_engine.tensor import Tensor
from .modules.module import ParameterMark


class Parameter(Tensor, ParameterMark):
    """A Tensor that is part of a Module: ``self.w = Parameter(...)`` registers it, so that
    ``parameters()``, ``state_dict()`` and the optimizers find it. A plain Tensor attribute
    is not registered, as in PyTorch.

    Args:
        data: A Tensor (its array is shared, not copied, as torch shares storage), an
            array, a number or a (nested) list; None gives an empty float32 tensor.
        requires_grad: Whether it takes gradients (True, unlike a Tensor's default).

    Ops on a Parameter give plain Tensors; the Parameter is a leaf of the graph.

    Example:
        >>> import numpy as np
        >>> from chaingrad.nn import Module
        >>> class Affine(Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.scale = Parameter(np.ones(3))
        ...         self.note = Tensor(np.zeros(3))   # a plain Tensor: not a parameter
        >>> [name for name, _ in Affine().named_parameters()]
        ['scale']
    """

    def __init__(self, data: Any = None, requires_grad: bool = True):
        if data is None:
            data = np.empty(0, dtype=np.float32)
        elif isinstance(data, Tensor):
            data = data._value
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return f"Parameter containing:\n{super().__repr__()}"
