"""One switch: run chaingrad's readable reference kernels everywhere, and no fast twin.

A few kernels have a fast twin beside their reference, tested to compute the same numbers:
the convolution and pooling forwards, softmax, layer_norm and the scatter of an
embedding's gradient (``tensor_engine/kernels.py``, each beside its reference), float32
``erf`` and GELU (``fast_kernels.erf_float32``, the twin of ``math.erf`` entry by entry, and
``fast_kernels.gelu_float32``), matmul's weight gradient
(``tensor_engine.rules.matmul_y_grad_transposed``), the rules of layer_norm, GELU,
``x ** n``, leaky_relu and softplus on arrays
(``tensor_engine.rules.layer_norm_grads_fast``, ``rules.gelu_grad_fast``,
``rules.pow_n_grad_fast``, ``rules.leaky_relu_grad_fast``, ``rules.softplus_grad_fast``)
and a recurrent layer's steps as one node (``lstm_recurrence``, ``gru_recurrence``,
``rnn_recurrence``, whose reference is the steps composed of ``@``, ``sigmoid``, ``tanh``,
...), the lanes of a float 2-norm (``reduction_order.lane_sums_of_squares``) and a plain
``x += y`` outside a graph (``InPlace._ufunc_in_place``). With the switch on, none of them
runs: step into ``F.conv2d`` in a debugger and you are in the reference that the docs show.
The backward loop has no twin: ``autodiff.backward_pass`` is the one that runs, switch or
not.

Turn it on with the environment variable ``CHAINGRAD_REFERENCE=1``, or in a running program
(a notebook) with ``chaingrad.use_reference()``.

Example:
    >>> import chaingrad
    >>> chaingrad.use_reference(); chaingrad.reference.only
    True
    >>> chaingrad.use_reference(False); chaingrad.reference.only
    False
"""

from __future__ import annotations

import os

only: bool = os.environ.get("CHAINGRAD_REFERENCE", "") == "1"
"""Whether every fast twin is off (read at each use, so that it can change at any time)."""


def use_reference(on: bool = True) -> None:
    """Run the readable reference kernels everywhere (``on``), or their fast twins again."""
    global only
    only = bool(on)
