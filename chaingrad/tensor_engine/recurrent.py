"""How a recurrent layer runs over a whole sequence on arrays: the forward of the
``lstm_layer`` primitive (``tensor_engine/rules.py``, where its rule, backpropagation
through time, sits), which ``nn.LSTM`` makes one node of per layer and direction.

Composed of the ops a learner knows (``nn/modules/rnn.py``'s ``lstm_step``), each step of
an LSTM is some twenty nodes, and a language model's 35 steps by 2 layers some 1,400, each
paying the engine's cost per node (benchmarks/RESULTS.md, "A fused LSTM layer"). Here the
input's part of every step's gates is one matrix product, x W_ih^T + b_ih for all the steps
at once, and only the recurrence, h W_hh^T + b_hh and the gates, runs step by step, in
torch's order of operations (the numbers of the composed steps, within rounding). The
composed steps stay the readable reference: ``chaingrad.use_reference()`` runs them.

The node's output keeps, for each step, what backpropagation through time reads: the
gates i, f, g, o (after their sigmoid or tanh), the cell state c and the hidden state h,
side by side along the last axis, (T, N, 6 * hidden). torch's own fused kernels hand
their gates back the same way, as a ``workspace`` or ``reserve`` output beside h and c.

Example:
    >>> import numpy as np
    >>> x, h0, c0 = np.zeros((3, 1, 2)), np.zeros((1, 1)), np.ones((1, 1))
    >>> out = lstm_layer_on_arrays(x, h0, c0, np.zeros((4, 2)), np.zeros((4, 1)), False)
    >>> out.shape, out[:, 0, 4].tolist()  # c halves at each step: f = i = sigmoid(0), g = 0
    ((3, 1, 6), [0.5, 0.25, 0.125])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rules import sigmoid_on_arrays

LSTM_PARTS = 6
"""The blocks of an ``lstm_layer`` node's last axis, each ``hidden`` wide: the gates i, f,
g, o, then c, then h."""


def lstm_layer_on_arrays(x: np.ndarray, h0: np.ndarray, c0: np.ndarray, w_ih: np.ndarray,
                         w_hh: np.ndarray, *rest: Any) -> np.ndarray:
    """An LSTM layer over the sequence x (T, N, I) from the states h0 and c0 (N, H): for
    each step, the gates i, f, g, o, the cell state c and the hidden state h, side by side,
    (T, N, 6H) (``LSTM_PARTS``). ``rest`` is the biases b_ih and b_hh if the layer has them,
    then the parameter ``reverse``: whether the steps run from the last to the first (the
    backward direction of a bidirectional layer; each step's results stay at its place).

    The gates of step t are h W_hh^T + (x_t W_ih^T + b_ih + b_hh), the second term made
    for all the steps in one product (torch adds the same terms in another order: equal
    within rounding); i, f and o are their sigmoids and g its tanh (the sigmoid is taken of
    all four blocks at once, as the composed step takes it), then c = f * c + i * g and
    h = o * tanh(c).
    """
    *biases, reverse = rest
    steps, batch = x.shape[:2]
    n = h0.shape[-1]
    x_parts = (x.reshape(-1, x.shape[-1]) @ w_ih.T).reshape(steps, batch, 4 * n)
    if biases:
        x_parts += biases[0] + biases[1]  # both biases once, not b_hh at every step
    w_hh_t = np.ascontiguousarray(w_hh.T)  # row-major: a step's product is half as long
    out = np.empty((steps, batch, LSTM_PARTS * n), dtype=x_parts.dtype)
    h, c = h0, c0
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        gates = h @ w_hh_t
        gates += x_parts[t]
        step = out[t]  # a view: each block written into it is the node's output
        i, f, g, o, c_new, h_new = (step[:, k * n:(k + 1) * n] for k in range(LSTM_PARTS))
        step[:, :4 * n] = sigmoid_on_arrays(gates)
        np.tanh(gates[:, 2 * n:3 * n], out=g)
        np.multiply(f, c, out=c_new)  # c' = f * c + i * g
        c_new += i * g
        np.tanh(c_new, out=h_new)  # h' = o * tanh(c')
        h_new *= o
        h, c = h_new, c_new
    return out
