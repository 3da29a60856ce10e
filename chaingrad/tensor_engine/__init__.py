"""The Tensor engine: the Value mechanism on numpy arrays (``pip install 'chaingrad[tensor]'``).

- ``tensor.py``: the ``Tensor`` node and its primitive ops, each naming its primitive; the
  rest of the class in parts, one module each (``tensor.py``'s docstring lists their
  methods): torch's methods composed of the primitives in ``reductions.py``,
  ``shaping.py``, ``indexing.py``, ``sorting.py`` and ``sampling.py`` (``multinomial``),
  ``inplace.py`` (in-place writes and the version counter) and ``conversions.py``
  (dtypes, devices, numbers, arrays, printing); ``promotion.py`` gives torch's result dtype
  and ``grad_fn.py`` what ``x.grad_fn`` is;
- ``rules.py``: the primitives only Tensors have (matmul, sum, reshape, conv2d, ...), each
  with its forward on arrays; ``kernels.py`` the forwards that are more than a few numpy
  calls (softmax, scatter, convolution, pooling), each readable reference with its fast
  twin beside it; ``recurrent.py`` a recurrent layer's steps over a whole sequence;
- ``functions.py``: functions of several tensors (``concatenate``, ``stack``, ``where``,
  ``einsum``, ``pad``) (convolution and pooling make their nodes in
  ``chaingrad.nn.functional``'s ``conv2d`` and ``max_pool2d``, which check their arguments);
- what ``import chaingrad as torch`` adds: ``factories.py``, ``maths.py``, ``dtypes.py``,
  ``devices.py``, ``generator.py``, ``sampling.py`` (torch's random numbers) and
  ``threads.py`` (``set_num_threads``: numpy's BLAS threads);
- ``arrays.py``: converting data to arrays, and the checks every op makes.

The backward pass is the scalar engine's (``chaingrad/autodiff.py``).
"""

from . import threads  # noqa: F401 - torch's default number of BLAS threads, applied on import
from .functions import cat, concatenate, stack, where, zero_pad
from .tensor import Tensor

__all__ = ["Tensor", "cat", "concatenate", "stack", "where", "zero_pad"]
