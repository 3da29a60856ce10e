"""chaingrad/nn/modules/rnn.py: RNN, LSTM, GRU and their cells against torch 2.13 (the
parameters' names, shapes and seeded draws, the outputs and every gradient in float32 and
float64, dropout's masks), finite differences, explain and compile, save and load, and
torch's errors."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import chaingrad
from chaingrad import nn
from chaingrad.autograd import gradcheck

SEQUENCE_CASES = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bias": False, "batch_first": True, "bidirectional": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "batch_first": True}),
    ("LSTM", {"bias": False, "bidirectional": True, "proj_size": 2}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "batch_first": True}),
    ("GRU", {"bias": False, "bidirectional": True, "num_layers": 2}),
]
CELL_CASES = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
              ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}),
              ("GRUCell", {"bias": False})]
TOLERANCE = {np.float32: {"rtol": 2e-5, "atol": 2e-6}, np.float64: {"rtol": 1e-10, "atol": 1e-12}}


def both(torch, name: str, kwargs: dict, *sizes: int, dtype=np.float32, seed: int = 0):
    """The layer ``name`` made in torch and in chaingrad after the same seed."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, name)(*sizes, **kwargs)
    chaingrad.manual_seed(seed)
    ours = getattr(nn, name)(*sizes, **kwargs)
    if dtype == np.float64:
        theirs, ours = theirs.double(), ours.double()
    return ours, theirs


def flat(result) -> list:
    """The tensors of a layer's result: output (a PackedSequence's data), h_n (and c_n)."""
    out = []
    for item in result if isinstance(result, tuple) else (result,):
        if type(item).__name__ == "PackedSequence":
            out.append(item.data)
        else:
            out.extend(flat(item) if isinstance(item, tuple) else [item])
    return out


def assert_close(ours, theirs, dtype, what: str) -> None:
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                               **TOLERANCE[dtype], err_msg=what)


def agree(torch, ours, theirs, inputs: list[np.ndarray], dtype, pack=lambda xs: xs) -> None:
    """Run both layers on the same inputs (``pack`` arranges them as the layer takes
    them), then compare every result and the gradients of the inputs and parameters of
    sum(result_k * w_k), w fixed."""
    mine = [chaingrad.tensor(x, requires_grad=True) for x in inputs]
    its = [torch.tensor(x, requires_grad=True) for x in inputs]
    ours_out, theirs_out = flat(ours(*pack(mine))), flat(theirs(*pack(its)))
    assert [tuple(o.shape) for o in ours_out] == [tuple(t.shape) for t in theirs_out]
    rng = np.random.default_rng(3)
    weights = [rng.uniform(0.5, 1.5, tuple(t.shape)).astype(dtype) for t in theirs_out]
    sum((o * chaingrad.tensor(w)).sum() for o, w in zip(ours_out, weights)).backward()
    sum((t * torch.tensor(w)).sum() for t, w in zip(theirs_out, weights)).backward()
    for k, (o, t) in enumerate(zip(ours_out, theirs_out)):
        assert_close(o, t, dtype, f"result {k}")
    for k, (x, y) in enumerate(zip(mine, its)):
        assert_close(x.grad, y.grad, dtype, f"the gradient of input {k}")
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p.grad, q.grad, dtype, f"the gradient of {name}")


# ---- parameters ----


@pytest.mark.parametrize(("name", "kwargs"), SEQUENCE_CASES + CELL_CASES)
def test_the_parameters_are_torchs_names_shapes_and_numbers_for_the_seed(torch, name, kwargs):
    sizes = (5, 6) if "Cell" in name else (4, 6)
    ours, theirs = both(torch, name, kwargs, *sizes, seed=3)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy()), n
    assert repr(ours) == repr(theirs)
    if "Cell" not in name:
        assert ours._flat_weights_names == theirs._flat_weights_names
        assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == [
            [tuple(w.shape) for w in ws] for ws in theirs.all_weights]


def test_the_modules_are_where_torch_keeps_them() -> None:
    from chaingrad.nn.modules import rnn

    lstm = chaingrad.nn.LSTM(2, 3)
    assert isinstance(lstm, chaingrad.nn.modules.rnn.LSTM)
    assert isinstance(lstm, nn.RNNBase) and isinstance(nn.GRUCell(2, 3), nn.RNNCellBase)
    assert nn.modules.GRU is rnn.GRU and nn.RNNCell is rnn.RNNCell
    assert lstm.flatten_parameters() is None  # nothing to pack on a CPU
    assert (lstm.mode, nn.RNN(2, 3, nonlinearity="relu").mode, nn.GRU(2, 3).mode) == (
        "LSTM", "RNN_RELU", "GRU")


# ---- numbers, forward and backward ----


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kwargs"), SEQUENCE_CASES)
def test_a_sequence_layer_agrees_with_torch(torch, name, kwargs, dtype):
    ours, theirs = both(torch, name, kwargs, 4, 6, dtype=dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 4)).astype(dtype)  # (L, N) or, batch_first, (N, L)
    agree(torch, ours, theirs, [x], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kwargs"), SEQUENCE_CASES)
def test_initial_states_and_an_unbatched_input_agree_with_torch(torch, name, kwargs, dtype):
    ours, theirs = both(torch, name, kwargs, 4, 6, dtype=dtype)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    out = kwargs.get("proj_size") or 6
    rng = np.random.default_rng(1)
    for batch in ((2,), ()):  # batched (hx of 3 dimensions), then unbatched (of 2)
        steps = (*batch, 5) if kwargs.get("batch_first") else (5, *batch)
        x = rng.standard_normal((*steps, 4)).astype(dtype)
        h0 = rng.standard_normal((layers, *batch, out)).astype(dtype)
        if name == "LSTM":
            c0 = rng.standard_normal((layers, *batch, 6)).astype(dtype)
            agree(torch, ours, theirs, [x, h0, c0], dtype, lambda xs: (xs[0], (xs[1], xs[2])))
        else:
            agree(torch, ours, theirs, [x, h0], dtype)
        for p in (*ours.parameters(), *theirs.parameters()):
            p.grad = None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kwargs"), CELL_CASES)
def test_a_cell_agrees_with_torch(torch, name, kwargs, dtype):
    ours, theirs = both(torch, name, kwargs, 5, 6, dtype=dtype)
    rng = np.random.default_rng(2)
    agree(torch, ours, theirs, [rng.standard_normal((3, 5)).astype(dtype)], dtype)
    for batch in ((3,), ()):
        x = rng.standard_normal((*batch, 5)).astype(dtype)
        h = rng.standard_normal((*batch, 6)).astype(dtype)
        if name == "LSTMCell":
            c = rng.standard_normal((*batch, 6)).astype(dtype)
            agree(torch, ours, theirs, [x, h, c], dtype, lambda xs: (xs[0], (xs[1], xs[2])))
        else:
            agree(torch, ours, theirs, [x, h], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kwargs"), [
    ("LSTM", {"num_layers": 3, "dropout": 0.4}),
    ("GRU", {"num_layers": 2, "dropout": 0.5, "bidirectional": True}),
    ("RNN", {"num_layers": 2, "dropout": 0.3, "batch_first": True}),
])
def test_dropout_between_layers_draws_torchs_masks_in_training_only(torch, name, kwargs, dtype):
    ours, theirs = both(torch, name, kwargs, 4, 6, dtype=dtype)
    x = np.random.default_rng(4).standard_normal((7, 3, 4)).astype(dtype)
    torch.manual_seed(11)
    chaingrad.manual_seed(11)
    agree(torch, ours, theirs, [x], dtype)  # training: masks drawn from the same seed
    ours.eval()
    theirs.eval()
    eval_out = ours(chaingrad.tensor(x))[0]
    assert_close(eval_out, theirs(torch.tensor(x))[0], dtype, "in evaluation")
    assert np.array_equal(eval_out.detach().numpy(), ours(chaingrad.tensor(x))[0].detach().numpy())


FUSED_CASES = [{}, {"num_layers": 2, "bidirectional": True}, {"bias": False, "batch_first": True},
               {"num_layers": 3, "dropout": 0.4}]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kwargs", FUSED_CASES)
@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN", "RNN_RELU"])
def test_a_fused_layer_gives_the_composed_steps_numbers(name, kwargs, dtype):
    """Each layer's steps one ``lstm_recurrence`` (``gru_recurrence``, ``rnn_recurrence``)
    node, against the composed steps that ``use_reference()`` runs: outputs and every
    gradient within rounding, with and without initial states, batched and not."""
    rng = np.random.default_rng(7)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    for batch in ((3,), ()):
        steps = (*batch, 5) if kwargs.get("batch_first") else (5, *batch)
        x = rng.standard_normal((*steps, 4)).astype(dtype)
        states = [rng.standard_normal((layers, *batch, 6)).astype(dtype)
                  for _ in range(2 if name == "LSTM" else 1)]
        weights = None
        results = []
        for composed in (False, True):
            chaingrad.use_reference(composed)
            try:
                chaingrad.manual_seed(2)
                make = (lambda *a, **k: nn.RNN(*a, nonlinearity="relu", **k)) if \
                    name == "RNN_RELU" else getattr(nn, name)
                layer = make(4, 6, **kwargs).to(
                    dtype=chaingrad.float64 if dtype == np.float64 else chaingrad.float32)
                inputs = [chaingrad.tensor(a, requires_grad=True) for a in (x, *states)]
                out = flat(layer(inputs[0], tuple(inputs[1:]) if name == "LSTM" else inputs[1]))
                weights = weights or [rng.uniform(0.5, 1.5, tuple(o.shape)).astype(dtype)
                                      for o in out]
                sum((o * chaingrad.tensor(w)).sum() for o, w in zip(out, weights)).backward()
                results.append([o.detach().numpy() for o in out] + [
                    t.grad.numpy() for t in (*inputs, *layer.parameters())])
            finally:
                chaingrad.use_reference(False)
        tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {
            "rtol": 1e-12, "atol": 1e-13}
        for k, (fused, composed) in enumerate(zip(*results)):
            np.testing.assert_allclose(fused, composed, **tolerance, err_msg=f"result {k}")


def test_a_fused_layer_is_one_node_per_layer_and_direction():
    chaingrad.manual_seed(0)
    output, (h_n, c_n) = nn.LSTM(3, 4, num_layers=2, bidirectional=True)(
        chaingrad.randn(5, 2, 3))
    gru_output, gru_h_n = nn.GRU(3, 4, num_layers=2, bidirectional=True)(
        chaingrad.randn(5, 2, 3))
    rnn_output, rnn_h_n = nn.RNN(3, 4, num_layers=2, bidirectional=True)(
        chaingrad.randn(5, 2, 3))
    ops, stack = [], [output, h_n, c_n, gru_output, gru_h_n, rnn_output, rnn_h_n]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            ops.append(node._op)
            stack.extend(node._prev)
    assert ops.count("lstm_recurrence") == ops.count("gru_recurrence") == 4
    assert ops.count("rnn_recurrence") == 4 and "sigmoid" not in ops and "tanh" not in ops


@pytest.mark.parametrize(("name", "kwargs"), [
    ("RNN", {"num_layers": 2, "bidirectional": True}), ("RNN", {"nonlinearity": "relu"}),
    ("LSTM", {"num_layers": 2, "proj_size": 2}), ("LSTM", {"bidirectional": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("RNNCell", {}), ("LSTMCell", {}), ("GRUCell", {}),
])
def test_the_gradients_match_finite_differences_in_float64(name, kwargs):
    chaingrad.manual_seed(5)
    layer = getattr(nn, name)(3, 4, **kwargs).double()
    rng = np.random.default_rng(6)
    shape = (3, 2, 3) if "Cell" not in name else (2, 3)
    x = chaingrad.tensor(rng.standard_normal(shape), requires_grad=True)
    weights = list(layer.parameters())

    def run(x, *params):  # every result, in one Tensor
        return chaingrad.cat([t.reshape(-1) for t in flat(layer(x))])

    assert gradcheck(run, (x, *weights))


# ---- a graph like any other ----


@pytest.mark.parametrize(("name", "composed"), [
    ("RNN", False), ("RNN", True), ("LSTM", False), ("LSTM", True), ("GRU", False),
    ("GRU", True), ("RNNCell", True), ("LSTMCell", True), ("GRUCell", True)])
def test_each_opens_in_explain_and_the_page_and_compiles(name, composed, tmp_path):
    """Composed of steps (a layer's under ``use_reference()``), the graph shows tanh and
    ``@``; a fused layer's steps are one ``rnn_recurrence`` (``lstm_recurrence``,
    ``gru_recurrence``) node."""
    chaingrad.use_reference(composed and "Cell" not in name)
    chaingrad.manual_seed(0)
    layer = getattr(nn, name)(2, 3, **({} if "Cell" in name else {"num_layers": 2}))
    shape = (2, 1, 2) if "Cell" not in name else (1, 2)
    x = chaingrad.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))

    def loss():
        return flat(layer(x))[0].sum()

    try:
        text = chaingrad.explain(loss(), file=_Quiet())
        page = Path(chaingrad.to_html(loss(), tmp_path / "page.html")).read_text(
            encoding="utf-8")
        ops = ("tanh", "@") if composed else (f"{name.lower()}_recurrence", "@")
        assert all(op in text for op in ops) and ops[0] in page
        eager = [p.grad.numpy().copy() for p in layer.parameters()]
        layer.zero_grad()
        compiled = chaingrad.compile(loss)
        value = compiled()
        value.backward()
        assert np.isclose(value.item(), loss().item(), rtol=1e-6)
        for p, g in zip(layer.parameters(), eager):
            np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-5, atol=1e-7)
    finally:
        chaingrad.use_reference(False)


class _Quiet:
    def write(self, text: str) -> int:
        return len(text)


# ---- files ----


def test_a_model_with_an_lstm_saves_and_loads(tmp_path):
    chaingrad.manual_seed(0)
    model = nn.Sequential(nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2))
    chaingrad.save(model, tmp_path / "m.safetensors")
    again = chaingrad.load(tmp_path / "m.safetensors")
    x = chaingrad.randn(5, 2, 3)
    assert type(again[0]) is nn.LSTM and again[0].proj_size == 2
    assert np.array_equal(model[0](x)[0].detach().numpy(), again[0](x)[0].detach().numpy())


def test_torchs_state_dict_loads_and_gives_torchs_numbers(torch):
    torch.manual_seed(9)
    theirs = torch.nn.GRU(3, 4, 2, bidirectional=True)
    ours = nn.GRU(3, 4, 2, bidirectional=True)
    ours.load_state_dict({k: chaingrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2, 3)).astype(np.float32)
    assert_close(ours(chaingrad.tensor(x))[0], theirs(torch.tensor(x))[0], np.float32, "output")


# ---- errors, in torch's words ----


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller than hidden"),
    (lambda: nn.LSTM(3, 4, proj_size=-1), ValueError, "proj_size should be a positive integer"),
    (lambda: nn.GRU(3, 4, proj_size=2), ValueError, "proj_size argument is only supported"),
    (lambda: nn.RNN(3, 4, proj_size=2), ValueError, "proj_size argument is only supported"),
    (lambda: nn.RNN(3, 4, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
    (lambda: nn.RNNCell(3, 4, nonlinearity="gelu"), RuntimeError, "Unknown nonlinearity: gelu"),
    (lambda: nn.LSTM(3, 4, 2, dropout=1.5), ValueError, r"dropout should be a number in range"),
    (lambda: nn.GRU(3, 0), ValueError, "hidden_size must be greater than zero"),
    (lambda: nn.GRU(3, 2.0), TypeError, "hidden_size should be of type int, got: float"),
    (lambda: nn.LSTM(3, 4, 0), ValueError, "num_layers must be greater than zero"),
    (lambda: nn.RNN(3, 4, bias=1), TypeError, "bias should be of type bool, got: int"),
])
def test_bad_arguments_are_refused_as_torch_refuses_them(torch, make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_dropout_on_one_layer_warns_as_torch_does():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)


@pytest.mark.parametrize(("name", "call", "message"), [
    ("LSTM", lambda m, t: m(t(np.zeros((2, 3, 4, 3)))), "LSTM: Expected input to be 2D or 3D, "
                                                         "got 4D instead"),
    ("RNN", lambda m, t: m(t(np.zeros(3))), "RNN: Expected input to be 2D or 3D, got 1D tensor "
                                            "instead"),
    ("GRU", lambda m, t: m(t(np.zeros((2, 3, 5)))), "input.size(-1) must be equal to input_size. "
                                                    "Expected 3, got 5"),
    ("GRU", lambda m, t: m(t(np.zeros((2, 3, 3))), t(np.zeros((1, 2, 4)))),
     "Expected hidden size (1, 3, 4), got [1, 2, 4]"),
    ("GRU", lambda m, t: m(t(np.zeros((2, 3, 3))), t(np.zeros((3, 4)))),
     "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    ("LSTM", lambda m, t: m(t(np.zeros((2, 3))), (t(np.zeros((1, 4))), t(np.zeros((1, 1, 4))))),
     "For unbatched 2-D input, hx and cx should also be 2-D but got (2-D, 3-D) tensors"),
    ("LSTM", lambda m, t: m(t(np.zeros((2, 3, 3))), (t(np.zeros((1, 3, 4))),
                                                      t(np.zeros((1, 3, 5))))),
     "Expected hidden[1] size (1, 3, 4), got [1, 3, 5]"),
    ("LSTMCell", lambda m, t: m(t(np.zeros((2, 3, 3)))), "LSTMCell: Expected input to be 1D or "
                                                         "2D, got 3D instead"),
    ("GRUCell", lambda m, t: m(t(np.zeros((2, 3))), t(np.zeros((1, 1, 4)))),
     "GRUCell: Expected hidden to be 1D or 2D, got 3D instead"),
    ("RNNCell", lambda m, t: m(t(np.zeros((2, 5)))), "input has inconsistent input_size: got 5 "
                                                      "expected 3"),
    ("GRUCell", lambda m, t: m(t(np.zeros((2, 3))), t(np.zeros((3, 4)))),
     "Input batch size 2 doesn't match hidden0 batch size 3"),
])
def test_bad_inputs_raise_torchs_errors(torch, name, call, message):
    """The same call on torch's layer raises the same words."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module, make in ((getattr(nn, name)(3, 4), chaingrad.tensor),
                             (getattr(torch.nn, name)(3, 4),
                              lambda a: torch.tensor(a, dtype=torch.float32))):
            with pytest.raises((ValueError, RuntimeError)) as caught:
                call(module, lambda a, make=make: make(a.astype(np.float32)))
            assert message in str(caught.value)


def test_a_float64_input_to_float32_weights_is_refused_as_torch_refuses_it():
    with pytest.raises(ValueError, match=r"RNN input dtype \(chaingrad.float64\) does not match "
                                         r"weight dtype \(chaingrad.float32\)"):
        nn.LSTM(3, 4)(chaingrad.tensor(np.zeros((2, 1, 3))))


def test_a_state_dict_saved_as_torchs_checkpoint_loads_into_torchs_lstm(torch, tmp_path):
    chaingrad.manual_seed(2)
    ours = nn.LSTM(3, 4, 2, bidirectional=True)
    chaingrad.save(ours.state_dict(), tmp_path / "lstm.pt")
    theirs = torch.nn.LSTM(3, 4, 2, bidirectional=True)
    theirs.load_state_dict(torch.load(tmp_path / "lstm.pt"))
    x = np.random.default_rng(1).standard_normal((4, 2, 3)).astype(np.float32)
    assert_close(ours(chaingrad.tensor(x))[0], theirs(torch.tensor(x))[0], np.float32, "output")


# ---- packed sequences ----


def packer(torch, lengths: list[int], batch_first: bool, enforce_sorted: bool):
    """``agree``'s ``pack``: the padded input packed (by chaingrad's or torch's own
    ``pack_padded_sequence``, whichever its tensors are), then the initial states."""
    def pack(xs):
        utils = chaingrad.nn.utils if isinstance(xs[0], chaingrad.Tensor) else torch.nn.utils
        packed = utils.rnn.pack_padded_sequence(xs[0], lengths, batch_first=batch_first,
                                                enforce_sorted=enforce_sorted)
        states = xs[1:]
        return (packed,) if not states else (packed, states[0] if len(states) == 1
                                             else tuple(states))
    return pack


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("given", ["sorted", "unsorted, with initial states"])
@pytest.mark.parametrize(("name", "kwargs"), SEQUENCE_CASES)
def test_a_packed_batch_runs_each_sequence_to_its_own_end_as_torchs(torch, name, kwargs,
                                                                     dtype, given):
    """A PackedSequence in, one out, with torch's data, each sequence's own last state
    (h_n, c_n), and the gradients of the padded input, the initial states and every
    parameter."""
    ours, theirs = both(torch, name, kwargs, 4, 6, dtype=dtype)
    rng = np.random.default_rng(8)
    batch_first = kwargs.get("batch_first", False)
    lengths = [5, 5, 3, 1] if given == "sorted" else [3, 5, 1, 5]
    x = rng.standard_normal((4, 5, 4) if batch_first else (5, 4, 4)).astype(dtype)
    inputs = [x]
    if given != "sorted":
        layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
        inputs.append(rng.standard_normal((layers, 4, kwargs.get("proj_size") or 6)))
        if name == "LSTM":
            inputs.append(rng.standard_normal((layers, 4, 6)))
        inputs[1:] = [a.astype(dtype) for a in inputs[1:]]
    pack = packer(torch, lengths, batch_first, enforce_sorted=given == "sorted")
    agree(torch, ours, theirs, inputs, dtype, pack)
    mine, its = ours(*pack([chaingrad.tensor(a) for a in inputs]))[0], theirs(
        *pack([torch.tensor(a) for a in inputs]))[0]
    assert type(mine).__name__ == "PackedSequence"
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        a, b = getattr(mine, field), getattr(its, field)
        assert (a is None and b is None) or a.tolist() == b.tolist(), field


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_on_a_packed_batch_draws_torchs_masks(torch, dtype):
    ours, theirs = both(torch, "LSTM", {"num_layers": 3, "dropout": 0.4}, 4, 6, dtype=dtype)
    x = np.random.default_rng(9).standard_normal((6, 3, 4)).astype(dtype)
    torch.manual_seed(12)
    chaingrad.manual_seed(12)
    agree(torch, ours, theirs, [x], dtype, packer(torch, [4, 6, 2], False, False))


def test_the_gradients_of_a_packed_batch_match_finite_differences_in_float64():
    chaingrad.manual_seed(7)
    layer = nn.GRU(3, 4, num_layers=2, bidirectional=True).double()
    x = chaingrad.tensor(np.random.default_rng(10).standard_normal((4, 3, 3)),
                         requires_grad=True)

    def run(x, *params):
        packed = chaingrad.nn.utils.rnn.pack_padded_sequence(x, [2, 4, 1],
                                                             enforce_sorted=False)
        return chaingrad.cat([t.reshape(-1) for t in flat(layer(packed))])

    assert gradcheck(run, (x, *layer.parameters()))


def test_a_packed_batch_is_checked_as_torch_checks_it(torch):
    packed = chaingrad.nn.utils.rnn.pack_sequence([chaingrad.ones(3, 4), chaingrad.ones(2, 4)])
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size"):
        nn.GRU(5, 3)(packed)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]"):
        nn.GRU(4, 3)(packed, chaingrad.zeros(1, 3, 3))
    flat_data = chaingrad.nn.utils.rnn.PackedSequence(chaingrad.ones(5), packed.batch_sizes)
    with pytest.raises(RuntimeError, match="input must have 2 dimensions, got 1"):
        nn.RNN(4, 3)(flat_data)
