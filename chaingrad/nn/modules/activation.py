"""The activation layers, as torch.nn.modules.activation: each applies its function of
``chaingrad.nn.functional`` elementwise (``Softmax`` and ``LogSoftmax`` along ``dim``), and
prints as torch's.

Example:
    >>> import chaingrad
    >>> LeakyReLU(0.1)(chaingrad.tensor([-1.0, 2.0]))
    tensor([-0.1000,  2.0000])
"""

from __future__ import annotations

from typing import Any

from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["GELU", "LeakyReLU", "LogSoftmax", "ReLU", "Sigmoid", "Softmax", "Softplus", "Tanh"]


class ReLU(Module):
    """max(0, x), elementwise (``inplace=True`` computes out of place)."""

    def __init__(self, inplace: bool = False):
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(tensor_argument(input, "ReLU"))

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x), elementwise (arguments are accepted and ignored, as torch's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanh(tensor_argument(input, "Tanh"))


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise (arguments are accepted and ignored, as torch's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.sigmoid(tensor_argument(input, "Sigmoid"))


class Softmax(Module):
    """exp(x) / sum(exp(x)) along ``dim`` (torch's implicit choice, with its warning, for
    None)."""

    def __init__(self, dim: int | None = None):
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(tensor_argument(input, "Softmax"), self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x - log(sum(exp(x))) along ``dim``, computed stably."""

    def __init__(self, dim: int | None = None):
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(tensor_argument(input, "LogSoftmax"), self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x), Phi the standard normal's distribution function (``F.gelu``; torch's
    tanh form with ``approximate='tanh'``).

    Example:
        >>> GELU()(Tensor([0.0, 1.0]))
        tensor([0.0000, 0.8413])
    """

    def __init__(self, approximate: str = "none"):
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"GELU: approximate argument must be either none or tanh, got "
                               f"{approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(tensor_argument(input, "GELU"), self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x (``F.leaky_relu``; ``inplace=True`` computes
    out of place)."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.leaky_relu(tensor_argument(input, "LeakyReLU"), self.negative_slope)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold (``F.softplus``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(tensor_argument(input, "Softplus"), self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"
