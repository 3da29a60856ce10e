"""The Tensor engine: the Value mechanism on numpy arrays (``pip install 'chaingrad[tensor]'``).

- ``tensor.py``: the ``Tensor`` class and its ops, each naming its primitive;
- ``rules.py``: the primitives only Tensors have (matmul, sum, reshape, conv's pieces, ...);
- ``functions.py``: functions of several tensors (``concatenate``, ``stack``, ``where``) and
  the nodes of convolution and pooling (whose one entry is ``chaingrad.nn.functional``'s
  ``conv2d`` and ``max_pool2d``, which check their arguments);
- ``arrays.py``: the dtype rule and the checks every op makes.

The backward pass is the scalar engine's (``chaingrad/autodiff.py``).
"""

from .functions import cat, concatenate, pad, stack, where
from .tensor import Tensor

__all__ = ["Tensor", "cat", "concatenate", "pad", "stack", "where"]
