"""The recurrent layers, as torch.nn.modules.rnn: ``RNN``, ``LSTM`` and ``GRU`` over whole
sequences, and ``RNNCell``, ``LSTMCell`` and ``GRUCell`` for one step.

Each step is written with the ops a learner already knows (``@``, ``+``, slices,
``chunk``, ``sigmoid``, ``tanh``, ``*``), in torch's order of operations, so its backward
comes from their rules, and ``explain`` shows it and ``compile`` writes it like any graph.
The three steps, with x the input and h (and c) the state, x_part = x W_ih^T + b_ih and
h_part = h W_hh^T + b_hh:

    RNN:  h' = tanh(h_part + x_part)                                (or relu)
    LSTM: i, f, g, o = the four blocks of h_part + x_part
          c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
          h' = sigmoid(o) * tanh(c')                                (then h' W_hr^T)
    GRU:  r = sigmoid(x_r + h_r),  z = sigmoid(x_z + h_z)      (the blocks of the parts)
          n = tanh(x_n + r * h_n)
          h' = (h - n) * z + n                                  (= (1 - z) * n + z * h)

A sequence runs step by step, layer by layer: the input is taken apart into its steps once,
each layer hands its outputs to the next as a list of steps, and the output is stacked once
at the end. (Slicing each step out of a tensor of the whole sequence, to multiply the input
by W_ih in one product, would cost more: each slice's gradient is scattered into zeros of
the whole sequence.)

A ``PackedSequence`` (``chaingrad.nn.utils.rnn``) runs the same way, its steps being its
rows ``batch_sizes[t]`` at a time, the longest sequences first: a step has fewer rows than
the one before where sequences have ended, so each runs to its own last step, and its state
there is its row of h_n (and c_n). The output is a PackedSequence of the same layout.

Each layer and direction of a Tensor's sequence runs otherwise (but an LSTM's with
``proj_size``; a PackedSequence's runs the steps above): the input's
part of the gates for all the steps in one product, then the steps as one node,
``lstm_recurrence``, ``gru_recurrence`` or ``rnn_recurrence``: the same steps on arrays
(``tensor_engine/recurrent.py``), with backpropagation through time as its rule
(``tensor_engine/rules.py``); the layers hand the whole sequence on as one Tensor. An
LSTM's twenty nodes a step become one a layer (a language model's training step:
benchmarks/RESULTS.md, "A fused LSTM layer"). The composed steps are the readable
reference, tested to give the same numbers: ``chaingrad.use_reference()`` runs them.

Parameters have torch's names, shapes and order (``weight_ih_l0``, ``weight_hh_l0``,
``bias_ih_l0``, ``bias_hh_l0``, then ``weight_hr_l0`` for an LSTM with ``proj_size``, the
reverse direction's with ``_reverse``), and are drawn as torch draws them: each uniform in
+-1/sqrt(hidden_size), in that order, so that after ``manual_seed(n)`` a layer starts from
torch's very weights. Dropout between layers draws torch's masks for the seed.

Example:
    >>> import chaingrad
    >>> _ = chaingrad.manual_seed(0)
    >>> lstm = LSTM(10, 20, num_layers=2)
    >>> output, (h_n, c_n) = lstm(chaingrad.randn(5, 3, 10))
    >>> output.shape, h_n.shape, c_n.shape
    (chaingrad.Size([5, 3, 20]), chaingrad.Size([2, 3, 20]), chaingrad.Size([2, 3, 20]))
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast, overload

from ... import reference
from ...tensor_engine.factories import ones, tensor_argument, zeros
from ...tensor_engine.functions import cat, stack
from ...tensor_engine.rules import GRU_RECURRENCE, LSTM_RECURRENCE, RNN_RECURRENCE
from ...tensor_engine.tensor import Tensor
from .. import functional as F
from .. import init
from ..utils.rnn import PackedSequence
from .module import Module
from .utils import new_parameter

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
"""How many blocks of ``hidden_size`` rows each mode's ``weight_ih`` and ``weight_hh`` hold:
the gates, in torch's order (LSTM: i, f, g, o; GRU: r, z, n)."""

State = tuple[Tensor, Tensor | None]
"""A layer's state between steps: h, and c for an LSTM (None otherwise)."""


# ---- one step of each kind ----
# Each takes the input's and the state's parts of the gates, x W_ih^T + b_ih and
# h W_hh^T + b_hh, which the caller computes (a sequence layer with each weight transposed
# once for all its steps).


def rnn_step(x_part: Tensor, h_part: Tensor, nonlinearity: str = "tanh") -> Tensor:
    """An Elman RNN's step: h' = tanh (or relu) of (h W_hh^T + b_hh) + (x W_ih^T + b_ih).

    Example:
        >>> rnn_step(Tensor([[0.5]]), Tensor([[2.0]]), "relu").tolist()
        [[2.5]]
    """
    gates = h_part + x_part
    return gates.tanh() if nonlinearity == "tanh" else gates.relu()


def lstm_step(x_part: Tensor, h_part: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """An LSTM's step: the gates i, f, g, o (torch's order) of the sum of the parts, then
    c' = f * c + i * g and h' = o * tanh(c'); returns (h', c'). The sigmoid is taken of all
    the gates at once (one op over one array instead of three over strided slices: the
    same numbers) and g's block is read off before it.

    Example:
        >>> import numpy as np
        >>> h, c = lstm_step(Tensor(np.zeros((1, 4))), Tensor(np.zeros((1, 4))), Tensor([[1.0]]))
        >>> round(c.item(), 4), round(h.item(), 4)
        (0.5, 0.2311)
    """
    gates = h_part + x_part
    n = gates.shape[1] // 4
    opened = gates.sigmoid()
    i, f, o = opened[:, :n], opened[:, n:2 * n], opened[:, 3 * n:]
    c = f * c + i * gates[:, 2 * n:3 * n].tanh()
    return o * c.tanh(), c


def gru_step(x_part: Tensor, h_part: Tensor, h: Tensor) -> Tensor:
    """A GRU's step: the reset and update gates r = sigmoid(x_r + h_r) and
    z = sigmoid(x_z + h_z), the new gate n = tanh(x_n + r * h_n) (torch's: the reset applied
    to h W_hn^T + b_hn), and h' = (h - n) * z + n.

    Example:
        >>> import numpy as np
        >>> gru_step(Tensor(np.zeros((1, 3))), Tensor(np.zeros((1, 3))), Tensor([[1.0]])).tolist()
        [[0.5]]
    """
    x_r, x_z, x_n = x_part.chunk(3, 1)
    h_r, h_z, h_n = h_part.chunk(3, 1)
    r = (h_r + x_r).sigmoid()
    z = (h_z + x_z).sigmoid()
    n = (x_n + h_n * r).tanh()
    return (h - n) * z + n


# ---- the sequence layers ----


def lstm_recurrence(x_parts: Tensor, w_hh: Tensor, h0: Tensor, c0: Tensor,
                    reverse: bool = False) -> Tensor:
    """An LSTM layer's steps over a whole sequence as one node of the ``lstm_recurrence``
    primitive (``tensor_engine/rules.py``): ``lstm_step`` at each step, from the input's
    part of its gates ``x_parts`` (T, N, 4H), the weight W_hh (4H, H) and the states h0 and
    c0 (N, H); its rule is backpropagation through time. Returns each step's gates i, f,
    g, o, c and h side by side, after the starting state: (T + 1, N, 6H), step t's h at
    ``out[t + 1, :, 5 * H:]``. With ``reverse``, the steps run from the last to the first,
    step t's results in row t and the starting state in row T.

    Example:
        >>> import numpy as np
        >>> x_parts, h0, c0 = Tensor(np.zeros((3, 1, 4))), Tensor(np.zeros((1, 1))), Tensor([[1.0]])
        >>> out = lstm_recurrence(x_parts, Tensor(np.zeros((4, 1))), h0, c0)
        >>> out[:, 0, 4].tolist()  # c: halved at each step (f = i = sigmoid(0), g = 0)
        [1.0, 0.5, 0.25, 0.125]
    """
    return x_parts._apply(LSTM_RECURRENCE.bind(reverse), w_hh, h0, c0)


def gru_recurrence(x_parts: Tensor, w_hh: Tensor, h0: Tensor, b_hh: Tensor | None = None,
                   reverse: bool = False) -> Tensor:
    """A GRU layer's steps over a whole sequence as one node of the ``gru_recurrence``
    primitive (``tensor_engine/rules.py``): ``gru_step`` at each step, from the input's part
    of its gates ``x_parts`` (T, N, 3H), the weight W_hh (3H, H), the state h0 (N, H) and
    b_hh (3H,) if the layer has it; its rule is backpropagation through time. Returns each
    step's r, z, n, h W_hn^T + b_hn and h side by side, after the starting state:
    (T + 1, N, 5H), step t's h at ``out[t + 1, :, 4 * H:]``; ``reverse`` as for
    ``lstm_recurrence``.

    Example:
        >>> import numpy as np
        >>> x_parts, h0 = Tensor(np.zeros((2, 1, 3))), Tensor([[1.0]])
        >>> gru_recurrence(x_parts, Tensor(np.zeros((3, 1))), h0)[:, 0, 4].tolist()
        [1.0, 0.5, 0.25]
    """
    biases = () if b_hh is None else (b_hh,)
    return x_parts._apply(GRU_RECURRENCE.bind(reverse, b_hh is not None), w_hh, h0, *biases)


def rnn_recurrence(x_parts: Tensor, w_hh: Tensor, h0: Tensor, relu: bool = False,
                   reverse: bool = False) -> Tensor:
    """An Elman RNN layer's steps over a whole sequence as one node of the
    ``rnn_recurrence`` primitive (``tensor_engine/rules.py``): ``rnn_step`` at each step,
    from the input's part of each step ``x_parts`` (T, N, H), the weight W_hh (H, H) and
    the state h0 (N, H), tanh (or, ``relu``, relu); its rule is backpropagation through
    time. Returns the starting state, then each step's h: (T + 1, N, H); ``reverse`` as
    for ``lstm_recurrence``.

    Example:
        >>> import numpy as np
        >>> x_parts, h0 = Tensor(np.ones((2, 1, 1))), Tensor([[1.0]])
        >>> rnn_recurrence(x_parts, Tensor([[0.5]]), h0, relu=True)[:, 0, 0].tolist()
        [1.0, 1.5, 1.75]
    """
    return x_parts._apply(RNN_RECURRENCE.bind(relu, reverse), w_hh, h0)


# ---- the sequence layers ----


class RNNBase(Module):
    """What RNN, LSTM and GRU share, as torch.nn.RNNBase: the parameters of each layer and
    direction, their checks, and running a sequence through them.

    Args:
        mode: ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.
        input_size: The size of each step of the input.
        hidden_size: The size of the state h (and c).
        num_layers: How many layers are stacked, each reading the one below's outputs.
        bias: Whether the steps add ``b_ih`` and ``b_hh``.
        batch_first: Inputs and outputs (not states) as (N, L, H) instead of (L, N, H).
        dropout: Dropout's p on each layer's outputs but the last one's, in training.
        bidirectional: A second direction in each layer, running the sequence backwards;
            its outputs are joined to the first's along the last dimension.
        proj_size: LSTM only: the size h is projected to (by ``weight_hr``), or 0.
        device: The CPU only (None, 'cpu').
        dtype: The parameters' dtype (float32 by default, as in torch).
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bias, batch_first, bidirectional
        self.proj_size = proj_size
        _check_options(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                       proj_size)
        self.dropout = float(dropout)
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                layer_input_size = input_size if layer == 0 else real_hidden_size * (
                    2 if bidirectional else 1)
                shapes = {"weight_ih": (gate_size, layer_input_size),
                          "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes |= {"bias_ih": (gate_size,), "bias_hh": (gate_size,)}
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = [f"{kind}_l{layer}{suffix}" for kind in shapes]
                for name, shape in zip(names, shapes.values()):
                    setattr(self, name, new_parameter(type(self).__name__, shape, device,
                                                      dtype))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter afresh, uniform in +-1/sqrt(hidden_size), in their order
        (torch's numbers for the seed)."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """Nothing to do: torch packs the weights into one block for cuDNN, which a CPU does
        not use (as on torch's CPU build)."""

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Tensor]]:
        """The parameters of each layer and direction, in order, as torch's."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- running a sequence ----

    def _run(self, input: Any, hx: Any,  # noqa: A002
             ) -> tuple[Tensor | PackedSequence, Tensor, Tensor | None]:
        """(output, h_n, c_n) for the input (a PackedSequence gives one back) and the
        initial states, each checked as torch checks them; c_n is None but for an LSTM."""
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx)
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        x = tensor_argument(input, name)
        if x.ndim not in (2, 3):
            tensor = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {x.ndim}D{tensor} "
                             f"instead")
        batched = x.ndim == 3
        h0, c0 = _initial_states(self.mode, hx, batched)
        if not batched:
            x = x.unsqueeze(0 if self.batch_first else 1)
            if h0 is not None:
                h0 = h0.unsqueeze(1)
                c0 = None if c0 is None else c0.unsqueeze(1)
        if self.batch_first:
            x = x.transpose(0, 1)
        self._check_input(x)
        h0, c0 = self._states(h0, c0, x.shape[1], x.dtype)
        fused = self._fused()  # each layer's steps one node, the sequence one Tensor
        steps, h_last, c_last = self._run_layers(x if fused else x.unbind(0), h0, c0)
        if isinstance(steps, Tensor):
            output = steps.transpose(0, 1) if self.batch_first else steps
        else:
            output = stack(steps, 1 if self.batch_first else 0)
        if not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            h_last = h_last.squeeze(1)
            c_last = None if c_last is None else c_last.squeeze(1)
        return output, h_last, c_last

    def _run_packed(self, packed: PackedSequence, hx: Any,
                    ) -> tuple[PackedSequence, Tensor, Tensor | None]:
        """``_run`` of a PackedSequence, as torch's: its steps are its rows, batch_sizes[t]
        at step t (``batch_first`` does not apply); the initial states are given in the
        batch's order and taken in the packed one (``sorted_indices``), and the last
        states, each sequence's at its own last step, are given back in the batch's."""
        h0, c0 = _initial_states(self.mode, hx, batched=True)
        order, inverse = packed.sorted_indices, packed.unsorted_indices
        if h0 is not None and order is not None:
            h0, c0 = h0[:, order], None if c0 is None else c0[:, order]
        x, batch_sizes = packed.data, packed.batch_sizes.tolist()
        if x.ndim != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {x.ndim}")
        self._check_input(x)
        h0, c0 = self._states(h0, c0, batch_sizes[0], x.dtype)
        steps, h_last, c_last = self._run_layers(x.split(batch_sizes), h0, c0)
        if inverse is not None:
            h_last, c_last = h_last[:, inverse], None if c_last is None else c_last[:, inverse]
        output = PackedSequence(cat(steps), packed.batch_sizes, order, inverse)
        return output, h_last, c_last

    def _states(self, h0: Tensor | None, c0: Tensor | None, batch: int, dtype: Any,
                ) -> tuple[Tensor, Tensor | None]:
        """The initial states (D * num_layers, N, H): zeros if not given, else checked."""
        directions = 2 if self.bidirectional else 1
        h_size = (self.num_layers * directions, batch,
                  self.proj_size if self.proj_size > 0 else self.hidden_size)
        c_size = (self.num_layers * directions, batch, self.hidden_size)
        if h0 is None:
            return zeros(h_size, dtype=dtype), zeros(c_size, dtype=dtype) if (
                self.mode == "LSTM") else None
        lstm = self.mode == "LSTM"
        _check_state(h0, h_size, "Expected hidden[0] size" if lstm else "Expected hidden size")
        if c0 is not None:
            _check_state(c0, c_size, "Expected hidden[1] size")
        return h0, c0

    def _run_layers(self, steps: Sequence[Tensor] | Tensor, h0: Tensor, c0: Tensor | None,
                    ) -> tuple[Sequence[Tensor] | Tensor, Tensor, Tensor | None]:
        """Every layer and direction over the steps, from the initial states: the last
        layer's outputs, step by step (or, fused, the whole sequence as one Tensor), and
        each layer's last states, stacked."""
        fused = isinstance(steps, Tensor)
        directions = 2 if self.bidirectional else 1
        h_n: list[Tensor] = []
        c_n: list[Tensor] = []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                state = (h0[k], None if c0 is None else c0[k])
                run = self._run_fused_layer if fused else self._run_layer
                out, (h, c) = run(steps, state, self._all_weights[k], reverse=direction == 1)
                outputs.append(out)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            steps = outputs[0] if directions == 1 else cat(outputs, 2) if fused else [
                cat(pair, 1) for pair in zip(*outputs)]
            if self.dropout and self.training and layer < self.num_layers - 1:
                steps = _dropped(steps, self.dropout)
        return steps, stack(h_n), stack(c_n) if c_n else None

    def _run_layer(self, steps: Sequence[Tensor], state: State, names: list[str],
                   reverse: bool) -> tuple[list[Tensor], State]:
        """One layer in one direction over the steps: its outputs (in the steps' order)
        and its last state.

        Packed, a step has fewer rows than the one before it where sequences have ended
        (they are longest first): going forward, the state of those that ended is put
        aside and the step runs the rest; going backward, a sequence joins at its last
        step, from its initial state. The last state holds each sequence's own."""
        w = [getattr(self, name) for name in names]
        w_ih, w_hh = w[0].T, w[1].T  # transposed once for all the steps
        b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
        w_hr = w[-1].T if self.proj_size > 0 else None
        h0, c0 = state
        h, c = state
        if reverse and steps[-1].shape[0] < h0.shape[0]:  # packed: the shortest start it
            h, c = h0[:steps[-1].shape[0]], None if c0 is None else c0[:steps[-1].shape[0]]
        outputs: list[Tensor] = []
        ended_h: list[Tensor] = []  # the states put aside, packed and going forward
        ended_c: list[Tensor] = []
        for x in (reversed(steps) if reverse else steps):
            n, running = x.shape[0], h.shape[0]
            if n < running:  # packed, forward: the sequences past the n-th have ended
                ended_h.append(h[n:])
                h = h[:n]
                if c is not None:
                    ended_c.append(c[n:])
                    c = c[:n]
            elif n > running:  # packed, backward: the next sequences start at their end
                h = cat([h, h0[running:n]])
                c = None if c is None or c0 is None else cat([c, c0[running:n]])
            x_part, h_part = x @ w_ih, h @ w_hh
            if b_ih is not None and b_hh is not None:
                x_part, h_part = x_part + b_ih, h_part + b_hh
            if self.mode == "LSTM":
                h, c = lstm_step(x_part, h_part, c)
                h = h if w_hr is None else h @ w_hr
            elif self.mode == "GRU":
                h = gru_step(x_part, h_part, h)
            else:
                h = rnn_step(x_part, h_part, "tanh" if self.mode == "RNN_TANH" else "relu")
            outputs.append(h)
        if ended_h:  # the states put aside, back below the longer sequences' states
            h = cat([h, *reversed(ended_h)])
            c = None if c is None else cat([c, *reversed(ended_c)])
        return (outputs[::-1] if reverse else outputs), (h, c)

    def _fused(self) -> bool:
        """Whether each layer's steps run as one node (``lstm_recurrence``,
        ``gru_recurrence``, ``rnn_recurrence``): any layer but an LSTM with ``proj_size``,
        unless ``chaingrad.use_reference()`` asks for the composed steps, the readable
        reference they are tested against."""
        return not (self.mode == "LSTM" and self.proj_size > 0) and not reference.only

    def _run_fused_layer(self, x: Tensor, state: State, names: list[str],
                         reverse: bool) -> tuple[Tensor, State]:
        """One layer in one direction over the sequence x (T, N, I): the input's part of
        every step's gates in one product, then the steps as one node; its outputs
        (T, N, H) and its last state, read off the node."""
        w_ih, w_hh, *biases = (getattr(self, name) for name in names)
        n, steps = self.hidden_size, (slice(0, -1) if reverse else slice(1, None))
        last = 0 if reverse else -1
        h0, c0 = state
        if self.mode == "GRU":
            x_parts = x @ w_ih.T + biases[0] if biases else x @ w_ih.T
            out = gru_recurrence(x_parts, w_hh, h0, biases[1] if biases else None, reverse)
            return out[steps, :, 4 * n:], (out[last, :, 4 * n:], None)
        x_parts = x @ w_ih.T
        if biases:
            x_parts = x_parts + (biases[0] + biases[1])
        if self.mode != "LSTM":
            out = rnn_recurrence(x_parts, w_hh, h0, self.mode == "RNN_RELU", reverse)
            return out[steps], (out[last], None)
        out = lstm_recurrence(x_parts, w_hh, h0, cast(Tensor, c0), reverse)
        return out[steps, :, 5 * n:], (out[last, :, 5 * n:], out[last, :, 4 * n:5 * n])

    def _check_input(self, x: Tensor) -> None:
        weight = self._flat_weights[0]
        if weight is not None and x.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({x.dtype})")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")


class _StateOnlyRNN(RNNBase):
    """What ``RNN`` and ``GRU`` share: a state h alone (an LSTM's is the pair (h, c)), so a
    call gives ``(output, h_n)``."""

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None,  # noqa: A002
                ) -> tuple[Tensor | PackedSequence, Tensor]:
        output, h_n, _ = self._run(input, hx)
        return output, h_n

    if TYPE_CHECKING:  # what a call gives for each input (Module's __call__ reads one)
        @overload
        def __call__(self, input: Tensor, hx: Tensor | None = None,  # noqa: A002
                     ) -> tuple[Tensor, Tensor]: ...

        @overload
        def __call__(self, input: PackedSequence, hx: Tensor | None = None,  # noqa: A002
                     ) -> tuple[PackedSequence, Tensor]: ...

        def __call__(self, input: Any, hx: Any = None) -> Any: ...  # noqa: A002


def _refuse_options(name: str, kwargs: dict[str, Any]) -> None:
    """torch's errors for what ``RNN`` and ``GRU`` do not take: ``proj_size`` (an LSTM's)
    or any other keyword."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{name}.__init__() got an unexpected keyword argument "
                        f"{next(iter(kwargs))!r}")


class RNN(_StateOnlyRNN):
    """An Elman RNN, as torch.nn.RNN: for each step t and each layer,
    h_t = tanh(x_t W_ih^T + b_ih + h_(t-1) W_hh^T + b_hh) (relu with
    ``nonlinearity='relu'``).

    Args:
        input_size: As for ``RNNBase``, as are ``hidden_size``, ``num_layers``, ``bias``,
            ``batch_first``, ``dropout``, ``bidirectional``, ``device`` and ``dtype``.
        nonlinearity: ``'tanh'`` or ``'relu'`` (fourth, as in torch).

    Calling it takes ``input`` of shape (L, N, H_in) ((N, L, H_in) with ``batch_first``,
    (L, H_in) unbatched) and ``hx`` of shape (D * num_layers, N, H_out) (zeros if None),
    and returns ``(output, h_n)``: every step's last-layer state (L, N, D * H_out) and every
    layer's last state. A ``PackedSequence`` input gives a PackedSequence output, and h_n
    holds each sequence's state at its own last step.

    Example:
        >>> import chaingrad
        >>> rnn = RNN(4, 3, 2, nonlinearity="relu", batch_first=True)
        >>> output, h_n = rnn(chaingrad.randn(2, 5, 4))
        >>> output.shape, h_n.shape
        (chaingrad.Size([2, 5, 3]), chaingrad.Size([2, 2, 3]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, **kwargs: Any) -> None:
        _refuse_options("RNN", kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class LSTM(RNNBase):
    """A long short-term memory network, as torch.nn.LSTM: for each step and layer, the
    input, forget, cell and output gates (i, f, g, o) of x_t W_ih^T + b_ih +
    h_(t-1) W_hh^T + b_hh, then c_t = sigmoid(f) * c_(t-1) + sigmoid(i) * tanh(g) and
    h_t = sigmoid(o) * tanh(c_t) (times W_hr^T with ``proj_size``).

    Args:
        input_size: As for ``RNNBase``, as are ``hidden_size``, ``num_layers``, ``bias``,
            ``batch_first``, ``dropout``, ``bidirectional``, ``proj_size``, ``device`` and
            ``dtype``.

    Calling it takes ``input`` as ``RNN`` does and ``hx``, the pair (h_0, c_0) (zeros if
    None), and returns ``(output, (h_n, c_n))``: h_n of shape (D * num_layers, N, H_out)
    (H_out is ``proj_size`` when set) and c_n of shape (D * num_layers, N, hidden_size).

    Example:
        >>> import chaingrad
        >>> lstm = LSTM(4, 6, proj_size=3, bidirectional=True)
        >>> output, (h_n, c_n) = lstm(chaingrad.randn(5, 4))
        >>> output.shape, h_n.shape, c_n.shape
        (chaingrad.Size([5, 6]), chaingrad.Size([2, 3]), chaingrad.Size([2, 6]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def forward(self, input: Tensor | PackedSequence,  # noqa: A002
                hx: tuple[Tensor, Tensor] | None = None,
                ) -> tuple[Tensor | PackedSequence, tuple[Tensor, Tensor]]:
        output, h_n, c_n = self._run(input, hx)
        return output, (h_n, cast(Tensor, c_n))  # an LSTM's run always gives c_n

    if TYPE_CHECKING:  # what a call gives for each input (Module's __call__ reads one)
        @overload
        def __call__(self, input: Tensor,  # noqa: A002
                     hx: tuple[Tensor, Tensor] | None = None,
                     ) -> tuple[Tensor, tuple[Tensor, Tensor]]: ...

        @overload
        def __call__(self, input: PackedSequence,  # noqa: A002
                     hx: tuple[Tensor, Tensor] | None = None,
                     ) -> tuple[PackedSequence, tuple[Tensor, Tensor]]: ...

        def __call__(self, input: Any, hx: Any = None) -> Any: ...  # noqa: A002


class GRU(_StateOnlyRNN):
    """A gated recurrent unit network, as torch.nn.GRU: for each step and layer, the reset
    and update gates r = sigmoid(x_r + h_r) and z = sigmoid(x_z + h_z), the new gate
    n = tanh(x_n + r * h_n) (torch's: the reset applied to h W_hn^T + b_hn) and
    h_t = (1 - z) * n + z * h_(t-1), where x_. = x_t W_i.^T + b_i. and
    h_. = h_(t-1) W_h.^T + b_h..

    Args:
        input_size: As for ``RNNBase``, as are ``hidden_size``, ``num_layers``, ``bias``,
            ``batch_first``, ``dropout``, ``bidirectional``, ``device`` and ``dtype``.

    Calling it takes and returns what ``RNN`` does.

    Example:
        >>> import chaingrad
        >>> gru = GRU(4, 3, num_layers=2)
        >>> output, h_n = gru(chaingrad.randn(5, 2, 4), chaingrad.zeros(2, 2, 3))
        >>> output.shape, h_n.shape
        (chaingrad.Size([5, 2, 3]), chaingrad.Size([2, 2, 3]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        _refuse_options("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)


# ---- the cells: one step ----


class RNNCellBase(Module):
    """What the cells share, as torch.nn.RNNCellBase: ``weight_ih`` (chunks * hidden_size,
    input_size), ``weight_hh`` (chunks * hidden_size, hidden_size), ``bias_ih`` and
    ``bias_hh`` (or None), each uniform in +-1/sqrt(hidden_size), in that order."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows, where = num_chunks * hidden_size, type(self).__name__
        self.weight_ih = new_parameter(where, (rows, input_size), device, dtype)
        self.weight_hh = new_parameter(where, (rows, hidden_size), device, dtype)
        for name in ("bias_ih", "bias_hh"):
            self.register_parameter(name, new_parameter(where, (rows,), device, dtype)
                                    if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter afresh, uniform in +-1/sqrt(hidden_size), in their order."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        return s + (f", nonlinearity={nonlinearity}" if nonlinearity != "tanh" else "")

    def _step_input(self, input: Any, states: Sequence[Tensor | None],  # noqa: A002
                    ) -> tuple[Tensor, list[Tensor], bool]:
        """The input (N, H_in) multiplied by W_ih, the states as (N, hidden_size) (zeros
        where None), and whether the input came batched; checked as torch checks them."""
        where = type(self).__name__
        x = tensor_argument(input, where)
        if x.ndim not in (1, 2):
            raise ValueError(f"{where}: Expected input to be 1D or 2D, got {x.ndim}D instead")
        for k, state in enumerate(states):
            if state is not None and state.ndim not in (1, 2):
                which = f"hx[{k}]" if len(states) > 1 else "hidden"
                raise ValueError(f"{where}: Expected {which} to be 1D or 2D, got "
                                 f"{state.ndim}D instead")
        batched = x.ndim == 2
        if not batched:
            x = x.unsqueeze(0)
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected "
                               f"{self.input_size}")
        full = []
        for k, state in enumerate(states):
            h = zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if state is None else (
                tensor_argument(state, where, "hx") if batched else state.unsqueeze(0))
            if h.shape[0] != x.shape[0]:
                raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{k} "
                                   f"batch size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")
            full.append(h)
        return F.linear(x, self.weight_ih, self.bias_ih), full, batched


class RNNCell(RNNCellBase):
    """One step of an Elman RNN, as torch.nn.RNNCell:
    h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (relu with ``nonlinearity='relu'``).

    Example:
        >>> import chaingrad
        >>> cell = RNNCell(4, 3)
        >>> cell(chaingrad.randn(2, 4)).shape, cell(chaingrad.randn(4)).shape
        (chaingrad.Size([2, 3]), chaingrad.Size([3]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), batched = self._step_input(input, (hx,))
        h = rnn_step(x, F.linear(h, self.weight_hh, self.bias_hh), self.nonlinearity)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM, as torch.nn.LSTMCell: from the gates i, f, g, o of
    x W_ih^T + b_ih + h W_hh^T + b_hh, c' = sigmoid(f) * c + sigmoid(i) * tanh(g) and
    h' = sigmoid(o) * tanh(c'); returns (h', c').

    Example:
        >>> import chaingrad
        >>> cell = LSTMCell(4, 3)
        >>> h, c = cell(chaingrad.randn(2, 4))
        >>> h.shape, c.shape
        (chaingrad.Size([2, 3]), chaingrad.Size([2, 3]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor,  # noqa: A002
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        x, (h, c), batched = self._step_input(input, (None, None) if hx is None else hx)
        h, c = lstm_step(x, F.linear(h, self.weight_hh, self.bias_hh), c)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU, as torch.nn.GRUCell: r = sigmoid(x_r + h_r),
    z = sigmoid(x_z + h_z), n = tanh(x_n + r * h_n), h' = (1 - z) * n + z * h.

    Example:
        >>> import chaingrad
        >>> cell = GRUCell(4, 3)
        >>> cell(chaingrad.randn(2, 4), chaingrad.zeros(2, 3)).shape
        chaingrad.Size([2, 3])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), batched = self._step_input(input, (hx,))
        h = gru_step(x, F.linear(h, self.weight_hh, self.bias_hh), h)
        return h if batched else h.squeeze(0)


# ---- checks and helpers ----


def _check_options(input_size: Any, hidden_size: Any, num_layers: Any, bias: Any,
                   batch_first: Any, dropout: Any, proj_size: Any) -> None:
    """torch's checks of RNNBase's arguments, in torch's order and words."""
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):  # type: ignore[operator]
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:  # type: ignore[operator]
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      f"non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=4)
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: "
                        f"{type(batch_first).__name__}")
    for name, size in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(size, int):
            raise TypeError(f"{name} should be of type int, got: {type(size).__name__}")
        if size <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


def _initial_states(mode: str, hx: Any, batched: bool) -> tuple[Tensor | None, Tensor | None]:
    """(h0, c0) as given (None, None when hx is None), their dimensions checked as torch
    checks them: 3-D for a batched input, 2-D for an unbatched one."""
    if hx is None:
        return None, None
    want, kind = (3, "batched 3-D") if batched else (2, "unbatched 2-D")
    if mode == "LSTM":
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise TypeError(f"LSTM: hx must be a pair (h_0, c_0) of Tensors, got "
                            f"{type(hx).__name__}")
        h0, c0 = (tensor_argument(s, "LSTM", "hx") for s in hx)
        if h0.ndim != want or c0.ndim != want:
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                               f"({h0.ndim}-D, {c0.ndim}-D) tensors")
        return h0, c0
    h0 = tensor_argument(hx, "RNN" if mode.startswith("RNN") else mode, "hx")
    if h0.ndim != want:
        raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                           f"{h0.ndim}-D tensor")
    return h0, None


def _check_state(state: Tensor, expected: tuple[int, int, int], what: str) -> None:
    if tuple(state.shape) != expected:
        raise RuntimeError(f"{what} {expected}, got {list(state.shape)}")


def _dropped(steps: Sequence[Tensor] | Tensor, p: float) -> Sequence[Tensor] | Tensor:
    """Each step times its rows of the mask that ``F.dropout`` would apply to the steps
    joined (torch's draws for the seed, in that order, the steps packed or not): the same
    numbers as dropout on the joined outputs, while each step's gradient stays its own. A
    whole sequence (a fused layer's output) is multiplied by the mask at once."""
    if isinstance(steps, Tensor):
        return steps * F.dropout(ones(steps.shape, dtype=steps.dtype), p, True)
    rows = [step.shape[0] for step in steps]
    first = steps[0]
    mask = F.dropout(ones((sum(rows), *first.shape[1:]), dtype=first.dtype), p, True)
    return [step * keep for step, keep in zip(steps, mask.split(rows))]

