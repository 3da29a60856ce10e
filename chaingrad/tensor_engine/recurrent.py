"""How a recurrent layer's steps run over a whole sequence on arrays: the forwards of the
``lstm_recurrence``, ``gru_recurrence`` and ``rnn_recurrence`` primitives
(``tensor_engine/rules.py``, where their rules, backpropagation through time, sit), of
which ``nn.LSTM``, ``nn.GRU`` and ``nn.RNN`` make one node per layer and direction.

Composed of the ops a learner knows (``nn/modules/rnn.py``'s ``lstm_step``), each step of
an LSTM is some twenty nodes, and a language model's 35 steps by 2 layers some 1,400, each
paying the engine's cost per node (benchmarks/RESULTS.md, "A fused LSTM layer"). The
layer makes the input's part of every step's gates, x W_ih^T + b_ih + b_hh, for all the
steps at once, as one matrix product (a ``matmul`` node); only the recurrence, h W_hh^T and
the gates, runs step by step, here, in one node. The composed steps stay the readable
reference: ``chaingrad.use_reference()`` runs them. A GRU's and an Elman RNN's layers run
the same way (``gru_recurrence_on_arrays``, ``rnn_recurrence_on_arrays``).

The LSTM node's output keeps what backpropagation through time reads: for each step, the gates
i, f, g, o (after their sigmoid or tanh), the cell state c and the hidden state h, side by
side along the last axis, and, in a row of its own, the state the steps started from (its
gates' blocks zeros): (T + 1, N, 6 * hidden). torch's fused kernels hand their gates back
the same way, as a ``workspace`` or ``reserve`` output beside h and c.

Example:
    >>> import numpy as np
    >>> x_parts, h0, c0 = np.zeros((3, 1, 4)), np.zeros((1, 1)), np.ones((1, 1))
    >>> out = lstm_recurrence_on_arrays(x_parts, np.zeros((4, 1)), h0, c0, False)
    >>> out.shape, out[:, 0, 4].tolist()  # c halves at each step: f = i = sigmoid(0), g = 0
    ((4, 1, 6), [1.0, 0.5, 0.25, 0.125])
"""

from __future__ import annotations

import numpy as np

from ..rules import sigmoid_on_arrays

LSTM_PARTS = 6
"""The blocks of an ``lstm_recurrence`` node's last axis, each ``hidden`` wide: the gates
i, f, g, o, then c, then h."""


def lstm_recurrence_on_arrays(x_parts: np.ndarray, w_hh: np.ndarray, h0: np.ndarray,
                              c0: np.ndarray, reverse: bool) -> np.ndarray:
    """An LSTM layer's steps over a sequence, from the input's part of each step's gates
    ``x_parts`` (T, N, 4H: x_t W_ih^T + b_ih + b_hh), the weight W_hh (4H, H) and the
    states h0 and c0 (N, H): (T + 1, N, 6H) (``LSTM_PARTS``), row 0 the state the steps
    start from and row t + 1 step t's gates i, f, g, o, c and h; with ``reverse`` (the
    backward direction of a bidirectional layer) the steps run from the last to the first,
    step t's results are in row t and the starting state in row T.

    The gates of step t are h W_hh^T + x_parts[t] (torch adds the same terms in another
    order: equal within rounding); i, f and o are their sigmoids and g its tanh (the
    sigmoid is taken of all four blocks at once, as the composed step takes it), then
    c = f * c + i * g and h = o * tanh(c).
    """
    steps, batch, n = x_parts.shape[0], x_parts.shape[1], h0.shape[-1]
    out = np.empty((steps + 1, batch, LSTM_PARTS * n), dtype=x_parts.dtype)
    first = out[steps if reverse else 0]
    first[:, :4 * n] = 0
    first[:, 4 * n:5 * n], first[:, 5 * n:] = c0, h0
    w_hh_t = np.ascontiguousarray(w_hh.T)  # row-major: a step's product is half as long
    h, c = h0, c0
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        gates = h @ w_hh_t
        gates += x_parts[t]
        step = out[t if reverse else t + 1]  # a view: each block written is the output
        i, f, g, o, c_new, h_new = (step[:, k * n:(k + 1) * n] for k in range(LSTM_PARTS))
        step[:, :4 * n] = sigmoid_on_arrays(gates)
        np.tanh(gates[:, 2 * n:3 * n], out=g)
        np.multiply(f, c, out=c_new)  # c' = f * c + i * g
        c_new += i * g
        np.tanh(c_new, out=h_new)  # h' = o * tanh(c')
        h_new *= o
        h, c = h_new, c_new
    return out


GRU_PARTS = 5
"""The blocks of a ``gru_recurrence`` node's last axis, each ``hidden`` wide: the gates r,
z, n, then h's part of n before the reset, h W_hn^T + b_hn, then h."""


def gru_recurrence_on_arrays(x_parts: np.ndarray, w_hh: np.ndarray, h0: np.ndarray,
                             *rest: object) -> np.ndarray:
    """A GRU layer's steps over a sequence, from the input's part of each step's gates
    ``x_parts`` (T, N, 3H: x_t W_ih^T + b_ih), the weight W_hh (3H, H), the state h0
    (N, H) and, if the layer has it, b_hh (3H,) (``rest``: b_hh, then the parameters
    ``reverse`` and ``bias``, whether b_hh is given): (T + 1, N, 5H) (``GRU_PARTS``), row 0
    the starting state (its other blocks zeros) and row t + 1 step t's r, z, n,
    h W_hn^T + b_hn and h; with ``reverse``, as ``lstm_recurrence_on_arrays``.

    The steps of ``nn/modules/rnn.py``'s ``gru_step``, in its order of operations: with
    h's parts h_r, h_z, h_n of h W_hh^T + b_hh, r = sigmoid(h_r + x_r),
    z = sigmoid(h_z + x_z), n = tanh(x_n + h_n * r) and h' = (h - n) * z + n.
    """
    *biases, reverse, _ = rest
    steps, batch, n = x_parts.shape[0], x_parts.shape[1], h0.shape[-1]
    out = np.empty((steps + 1, batch, GRU_PARTS * n), dtype=x_parts.dtype)
    first = out[steps if reverse else 0]
    first[:, :4 * n] = 0
    first[:, 4 * n:] = h0
    w_hh_t = np.ascontiguousarray(w_hh.T)  # row-major: a step's product is half as long
    h = h0
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        h_part = h @ w_hh_t
        if biases:
            h_part += biases[0]
        x_part = x_parts[t]
        step = out[t if reverse else t + 1]  # a view: each block written is the output
        r, z, new, h_n, h_new = (step[:, k * n:(k + 1) * n] for k in range(GRU_PARTS))
        step[:, :2 * n] = sigmoid_on_arrays(h_part[:, :2 * n] + x_part[:, :2 * n])
        h_n[...] = h_part[:, 2 * n:]
        np.tanh(x_part[:, 2 * n:] + h_n * r, out=new)
        np.subtract(h, new, out=h_new)  # h' = (h - n) * z + n
        h_new *= z
        h_new += new
        h = h_new
    return out


def rnn_recurrence_on_arrays(x_parts: np.ndarray, w_hh: np.ndarray, h0: np.ndarray,
                             relu: bool, reverse: bool) -> np.ndarray:
    """An Elman RNN layer's steps over a sequence, from the input's part of each step
    ``x_parts`` (T, N, H: x_t W_ih^T + b_ih + b_hh), the weight W_hh (H, H) and the state
    h0 (N, H): (T + 1, N, H), row 0 the starting state and row t + 1 step t's
    h' = tanh(h W_hh^T + x_parts[t]) (relu with ``relu``); with ``reverse``, as
    ``lstm_recurrence_on_arrays``. (h' is all its rule needs: each nonlinearity's slope is
    read off its output.)
    """
    steps = x_parts.shape[0]
    out = np.empty((steps + 1, *h0.shape), dtype=x_parts.dtype)
    out[steps if reverse else 0] = h0
    w_hh_t = np.ascontiguousarray(w_hh.T)  # row-major: a step's product is half as long
    h = h0
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        h_new = out[t if reverse else t + 1]  # a view: what is written is the output
        np.matmul(h, w_hh_t, out=h_new)
        h_new += x_parts[t]
        if relu:
            np.maximum(h_new, 0, out=h_new)
        else:
            np.tanh(h_new, out=h_new)
        h = h_new
    return out
