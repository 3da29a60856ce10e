"""torch.nn.utils, laid out file by file as torch lays it out; this module only re-exports.

- ``clip_grad.py``: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm`` and
  ``clip_grads_with_norm_``, called between ``loss.backward()`` and ``optimizer.step()``.
- ``rnn.py`` (``nn.utils.rnn``): sequences of different lengths as one batch for the
  recurrent layers: ``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``,
  ``pad_sequence``, ``pack_sequence``, ``unpad_sequence`` and ``unpack_sequence``.

Example:
    >>> import chaingrad as torch
    >>> w = torch.tensor([3.0, 4.0], requires_grad=True)
    >>> w.grad = torch.tensor([6.0, 8.0])
    >>> clip_grad_norm_([w], max_norm=1.0)
    tensor(10.)
    >>> rnn.pad_sequence([torch.ones(2), torch.ones(1)]).tolist()
    [[1.0, 1.0], [1.0, 0.0]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import torch_names
from . import clip_grad, rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm

__all__ = ["clip_grad", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "rnn"]

if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        raise torch_names.missing("chaingrad.nn.utils", name, torch_names.NN_UTILS)
