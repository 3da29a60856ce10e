"""The lookup tables, as torch.nn.modules.sparse: ``Embedding`` (through ``F.embedding``)."""

from __future__ import annotations

from typing import Any

from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import check_sizes, new_parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table: row i of ``weight`` for each index i of the input, as
    torch.nn.Embedding (through ``F.embedding``).

    Args:
        num_embeddings: How many rows (indices 0 .. num_embeddings - 1).
        embedding_dim: The length of each row.
        padding_idx: A row that starts at zero and takes no gradient, as in torch (or
            None; negative counts from the end).
        max_norm, scale_grad_by_freq, sparse: At their defaults only (refused, by name,
            otherwise: not in chaingrad yet).
        norm_type: Kept and printed, as torch's (it matters only with ``max_norm``).
        device, dtype: As for ``Linear``.

    Attributes:
        weight: Shape (num_embeddings, embedding_dim), drawn from N(0, 1) (torch's
            ``nn.init.normal_``: torch's numbers for the seed), the padding row zeroed.

    Example:
        >>> import chaingrad, numpy as np
        >>> _ = chaingrad.manual_seed(0)
        >>> table = Embedding(27, 2)
        >>> table(np.array([0, 5])).shape
        chaingrad.Size([2, 2])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None):
        check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        F.embedding_options("Embedding", max_norm, scale_grad_by_freq, sparse)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = new_parameter("Embedding", (num_embeddings, embedding_dim), device, dtype)
            self.weight.requires_grad = not _freeze
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: the weight given has shape "
                                 f"{tuple(_weight.shape)}, which does not match "
                                 f"num_embeddings and embedding_dim "
                                 f"{(num_embeddings, embedding_dim)}")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (a 2-D Tensor, its data shared, as
        torch shares it; the padding row is left as it is), frozen (no gradient) unless
        ``freeze`` is False.

        Example:
            >>> table = Embedding.from_pretrained(Tensor([[1.0, 2.0], [3.0, 4.0]]))
            >>> table(Tensor([1]).long()).tolist(), table.weight.requires_grad
            ([[3.0, 4.0]], False)
        """
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            got = (f"shape {tuple(embeddings.shape)}" if isinstance(embeddings, Tensor)
                   else type(embeddings).__name__)
            raise ValueError(f"Embedding.from_pretrained: embeddings must be a 2-D Tensor "
                             f"(rows, length), got {got}")
        rows, length = embeddings.shape
        return cls(rows, length, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def reset_parameters(self) -> None:
        """Draw the weights afresh from N(0, 1) (the padding row back to zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._value[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The rows of ``weight`` for the indices in ``input`` (a Tensor or array of ints)."""
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text + ("" if self.norm_type == 2 else f", norm_type={self.norm_type}")
