"""chaingrad.nn.utils.clip_grad_norm_ and clip_grad_value_ against torch.nn.utils'."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as nn
from chaingrad import Value
from chaingrad.errors import NonFiniteNormError
from chaingrad.nn.utils import clip_grad
from chaingrad.tensor_engine.tensor import constant

SHAPES = [(3, 4), (5,), (2, 2, 2), ()]


def gradients(torch, scale: float, seed: int, dtype=np.float32):
    """The same parameters, with the same gradients, in both libraries (the last without a
    gradient: it is left out, as in torch)."""
    rng = np.random.default_rng(seed)
    arrays = [(rng.normal(size=shape) * scale).astype(dtype) for shape in SHAPES]
    ours = [chaingrad.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    for o, t, a in zip(ours[:-1], theirs[:-1], arrays[:-1]):
        o.grad, t.grad = chaingrad.tensor(a * 3), torch.tensor(a * 3)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf", 0, -math.inf])
@pytest.mark.parametrize("max_norm", [0.05, 1.0, 1e6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm, seed):
    ours, theirs = gradients(torch, 2.0, seed)
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type, foreach=True)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.shape == () and total.dtype == chaingrad.float32
    assert total.numpy() == expected.numpy()  # torch's float32 sums, in torch's order
    for o, t in zip(ours[:-1], theirs[:-1]):
        assert np.array_equal(o.grad.numpy(), t.grad.numpy())
    assert ours[-1].grad is None


def test_clipping_scales_as_torch_does_bit_for_bit_from_the_same_norm(torch):
    """Given torch's norm, the scaled gradients are torch's to the bit: 1 / (norm + 1e-6)
    times max_norm, in float32, as torch's tensor arithmetic computes it."""
    for seed in range(20):
        ours, theirs = gradients(torch, 5.0, seed)
        norm = torch.nn.utils.get_total_norm([t.grad for t in theirs[:-1]])
        nn.utils.clip_grads_with_norm_(ours, 0.7, chaingrad.tensor(norm.item()))
        torch.nn.utils.clip_grads_with_norm_(theirs, 0.7, norm)
        for o, t in zip(ours[:-1], theirs[:-1]):
            assert np.array_equal(o.grad.numpy(), t.grad.numpy())


def test_float64_gradients_give_a_float64_norm(torch):
    ours, theirs = gradients(torch, 1.0, 3, dtype=np.float64)
    total = nn.utils.clip_grad_norm_(ours, 0.5)
    expected = torch.nn.utils.clip_grad_norm_(theirs, 0.5)
    assert total.dtype == chaingrad.float64
    assert total.item() == expected.item()
    for o, t in zip(ours[:-1], theirs[:-1]):
        assert np.array_equal(o.grad.numpy(), t.grad.numpy())


def word_language_model_steps(torch, clip, steps=8, vocabulary=10_000):
    """The losses and gradient norms of ``steps`` training steps of a word-level LSTM
    language model as PyTorch's word_language_model example trains it (an embedding, an
    LSTM, a decoder to the vocabulary, log_softmax and nll_loss, the hidden state carried
    over and detached, ``clip(parameters, 0.1)`` then SGD at lr 20), all in torch: only the
    clipping is ``clip``'s. Its decoder's gradient has 320,000 float32 entries, and the
    gradients' norm (about 0.14) is clipped at every step."""
    emsize, nhid, batch, bptt = 32, 32, 8, 16
    torch.manual_seed(0)
    encoder = torch.nn.Embedding(vocabulary, emsize)
    rnn = torch.nn.LSTM(emsize, nhid)
    decoder = torch.nn.Linear(nhid, vocabulary)
    parameters = [*encoder.parameters(), *rnn.parameters(), *decoder.parameters()]
    words = torch.randint(0, vocabulary, (bptt * steps + 1, batch),
                          generator=torch.Generator().manual_seed(1))
    hidden = (torch.zeros(1, batch, nhid), torch.zeros(1, batch, nhid))
    losses, norms = [], []
    for i in range(0, bptt * steps, bptt):
        data, targets = words[i:i + bptt], words[i + 1:i + 1 + bptt].reshape(-1)
        hidden = tuple(h.detach() for h in hidden)
        for p in parameters:
            p.grad = None
        output, hidden = rnn(encoder(data), hidden)
        log_probs = torch.nn.functional.log_softmax(decoder(output).view(-1, vocabulary), 1)
        loss = torch.nn.functional.nll_loss(log_probs, targets)
        loss.backward()
        norms.append(float(clip(parameters, 0.1)))
        with torch.no_grad():
            for p in parameters:
                p.add_(p.grad, alpha=-20.0)
        losses.append(loss.item())
    return losses, norms


def clipped_by_chaingrad(torch):
    """``clip_grad_norm_`` by chaingrad on torch's parameters' gradients, written back."""
    def clip(parameters, max_norm):
        ours = [chaingrad.tensor(p.detach().numpy(), requires_grad=True) for p in parameters]
        for o, p in zip(ours, parameters):
            o.grad = chaingrad.tensor(p.grad.numpy())
        total = nn.utils.clip_grad_norm_(ours, max_norm)
        for o, p in zip(ours, parameters):
            p.grad = torch.from_numpy(o.grad.numpy().copy())
        return total.item()
    return clip


def test_a_word_language_model_clipped_by_chaingrad_trains_as_torch_s(torch, monkeypatch):
    """Clipping moves with the float32 rounding of the gradients' norm (issue 34: a word-level
    LSTM's decoder). Clipped by chaingrad, the model's losses are torch's to the bit; with
    the norm summed exactly and rounded once (chaingrad before), they were not."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        expected = word_language_model_steps(torch, torch.nn.utils.clip_grad_norm_)
        assert word_language_model_steps(torch, clipped_by_chaingrad(torch)) == expected

        def exact(array, order):  # the norm as chaingrad computed it before
            return np.asarray(np.sqrt((array.astype(np.float64) ** 2).sum()), array.dtype)

        monkeypatch.setattr(clip_grad, "norm_in_torch_order", exact)
        losses, norms = word_language_model_steps(torch, clipped_by_chaingrad(torch))
    finally:
        torch.set_num_threads(threads)
    # the first step's gradients are the same, their norm not (0.140549734 for torch's
    # 0.140548676): clipped by another factor, every later step differs from torch's
    assert losses[0] == expected[0][0] and norms[0] != expected[1][0]
    assert all(ours != theirs for ours, theirs in zip(norms, expected[1]))
    assert losses[1:] != expected[0][1:]


def test_clip_grad_value_matches_torch(torch):
    ours, theirs = gradients(torch, 2.0, 4)
    assert nn.utils.clip_grad_value_(ours, clip_value=1.5) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value=1.5)
    for o, t in zip(ours[:-1], theirs[:-1]):
        assert np.array_equal(o.grad.numpy(), t.grad.numpy())


def test_a_model_s_parameters_one_tensor_and_a_generator(torch):
    chaingrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    model(chaingrad.ones(2, 3)).sum().backward()
    before = [p.grad.numpy().copy() for p in model.parameters()]
    total = nn.utils.clip_grad_norm_((p for p in model.parameters()), 1e9)
    expected = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in before))
    assert total.item() == pytest.approx(expected, rel=1e-6)
    weight = model[0].weight
    weight.grad = chaingrad.full((4, 3), 10.0)
    assert nn.utils.clip_grad_norm_(weight, 1.0).item() == pytest.approx(math.sqrt(1200))
    assert weight.grad.numpy() == pytest.approx(np.full((4, 3), 10 / math.sqrt(1200)), rel=1e-5)


def test_no_gradients_gives_a_zero_norm_and_an_empty_generator_warns():
    w = chaingrad.ones(2, requires_grad=True)
    total = nn.utils.clip_grad_norm_([w], 1.0)
    assert total.item() == 0.0 and w.grad is None
    with pytest.warns(UserWarning, match="empty generator"):
        nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_a_nonfinite_norm_raises_when_asked_and_changes_nothing(torch):
    w = chaingrad.ones(2, requires_grad=True)
    w.grad = constant(np.array([1.0, np.inf], dtype=np.float32))  # a factory refuses inf
    with pytest.raises(NonFiniteNormError, match=r"total norm of order 2.0 .* is inf"):
        nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)
    assert w.grad.numpy()[0] == 1.0
    assert issubclass(NonFiniteNormError, RuntimeError)  # torch raises a RuntimeError
    t = torch.ones(2, requires_grad=True)
    t.grad = torch.tensor([1.0, math.inf])
    assert nn.utils.clip_grad_norm_([w], 1.0).item() == math.inf
    assert torch.nn.utils.clip_grad_norm_([t], 1.0).item() == math.inf
    assert np.isnan(t.grad.numpy()[1])  # torch writes nan into the gradient
    assert w.grad.numpy().tolist() == [1.0, math.inf]  # chaingrad leaves it: step() names it
    with pytest.raises(chaingrad.NonFiniteGradError, match="gradient of parameter 0 of 1"):
        chaingrad.optim.SGD([w], lr=0.1).step()


def test_no_graph_is_recorded_and_a_gradient_in_a_graph_is_refused():
    w = chaingrad.ones(3, requires_grad=True)
    (w * w).sum().backward(create_graph=True)
    assert w.grad.requires_grad
    with pytest.raises(NotImplementedError, match=r"clip_grad_norm_: .*create_graph=True"):
        nn.utils.clip_grad_norm_([w], 0.1)
    w.grad = w.grad.detach()
    total = nn.utils.clip_grad_norm_([w], 0.1)
    assert not total.requires_grad and total.grad_fn is None


@pytest.mark.parametrize("call, error, message", [
    (lambda: nn.utils.clip_grad_norm_([Value(1.0)], 1.0), TypeError,
     r"parameters\[0\] must be a Tensor, got Value \(a Value's gradient is a float"),
    (lambda: nn.utils.clip_grad_norm_(3, 1.0), TypeError, "must be a Tensor or an iterable"),
    (lambda: nn.utils.clip_grad_norm_([], "big"), TypeError, "max_norm must be a number"),
    (lambda: nn.utils.clip_grad_norm_([], 1.0, norm_type="two"), TypeError, "norm_type"),
    (lambda: nn.utils.clip_grad_value_([], None), TypeError, "clip_value must be a number"),
    (lambda: nn.utils.clip_grad_value_([], 1.0, foreach="yes"), TypeError, "foreach"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_reached_as_torch_reaches_it():
    assert chaingrad.nn.utils.clip_grad_norm_ is nn.utils.clip_grad_norm_
    with pytest.raises(AttributeError, match="chaingrad.nn.utils has no 'weight_norm' yet"):
        nn.utils.weight_norm  # noqa: B018
