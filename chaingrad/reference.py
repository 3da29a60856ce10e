"""One switch: run chaingrad's readable reference code everywhere, and no fast twin.

A few hot paths have a fast twin beside their reference, tested to compute the same
numbers: the float backward pass of Values (``chaingrad/fast_backward.py``, twin of
``autodiff.backward_pass``), the convolution and pooling forwards, softmax, the scatter of an
embedding's gradient and float32 ``erf`` (``tensor_engine/fast_kernels.py``, twins of the
references in ``tensor_engine/rules.py`` and of ``math.erf``) and matmul's weight gradient
(``tensor_engine.rules.matmul_y_grad_transposed``). With the
switch on, none of them runs: step into ``backward()`` in a debugger and you are in
``autodiff.backward_pass``, the loop that the docs show.

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
    """Run the readable reference code everywhere (``on``), or the fast twins again."""
    global only
    only = bool(on)
