"""chaingrad/nn/modules/activation.py: the layers nn.GELU, nn.LeakyReLU and nn.Softplus, and
chaingrad.nn.functional's gelu, leaky_relu and softplus that they call, against torch
(values and gradients in float64)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as nn
import chaingrad.nn.functional as F

RNG = np.random.default_rng(0)
X = RNG.normal(scale=3.0, size=(4, 5))


@pytest.mark.parametrize("call", [
    lambda F, x: F.gelu(x),
    lambda F, x: F.gelu(x, approximate="tanh"),
    lambda F, x: F.leaky_relu(x),
    lambda F, x: F.leaky_relu(x * 1, 0.2, inplace=True),
    lambda F, x: F.softplus(x),
    lambda F, x: F.softplus(x, beta=2, threshold=3),
    lambda F, x: F.softplus(x, 0.5),
], ids=["gelu", "gelu_tanh", "leaky_relu", "leaky_relu_0.2", "softplus", "softplus_beta_2",
        "softplus_beta_half"])
def test_an_activation_is_torchs(agrees_with_torch, torch, call) -> None:
    """The same call on chaingrad.nn.functional and on torch.nn.functional (X reaches past
    softplus's threshold)."""
    agrees_with_torch(lambda x: call(F, x), lambda x: call(torch.nn.functional, x), X)


def test_the_layers_are_their_functions_and_print_as_torchs(torch) -> None:
    x = chaingrad.tensor(X)
    pairs = [(nn.GELU(), torch.nn.GELU()), (nn.GELU("tanh"), torch.nn.GELU("tanh")),
             (nn.LeakyReLU(), torch.nn.LeakyReLU()),
             (nn.LeakyReLU(0.2, True), torch.nn.LeakyReLU(0.2, True)),
             (nn.Softplus(), torch.nn.Softplus()), (nn.Softplus(2, 5), torch.nn.Softplus(2, 5))]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(x).numpy(), theirs(torch.tensor(X)).numpy(),
                                   rtol=1e-12, atol=1e-15)
    model = nn.Sequential(nn.Linear(5, 3), nn.GELU(), nn.Linear(3, 1), nn.LeakyReLU(0.1))
    assert "(1): GELU(approximate='none')" in repr(model) and model(x).shape == (4, 1)
    with pytest.raises(RuntimeError, match="GELU: approximate argument must be either none or "
                                           "tanh, got 'exact'"):
        nn.GELU("exact")
    with pytest.raises(RuntimeError, match="gelu: approximate argument must be"):
        F.gelu(x, approximate="erf")
    with pytest.raises(TypeError, match="leaky_relu: negative_slope must be a number"):
        F.leaky_relu(x, "0.1")


# ---- MultiheadAttention: torch's parameters for the same seed, its numbers and errors ----

MHA_RNG = np.random.default_rng(3)
PADDING = np.array([[False] * 5 + [True], [False] * 6, [False] * 3 + [True] * 3])
ATTN_MASK = MHA_RNG.uniform(size=(4, 6)) > 0.8

MHA_LAYERS = [
    ("default", {}),
    ("batch_first", {"batch_first": True}),
    ("no bias", {"bias": False}),
    ("bias_kv, zero_attn", {"add_bias_kv": True, "add_zero_attn": True}),
    ("kdim, vdim", {"kdim": 3, "vdim": 5}),
]
MHA_CALLS = [
    ("plain", {}),
    ("no weights", {"need_weights": False}),
    ("bool padding", {"key_padding_mask": PADDING}),
    ("float padding", {"key_padding_mask": np.where(PADDING, -np.inf, 0.0)}),
    ("bool attn_mask, no weights", {"attn_mask": ATTN_MASK, "need_weights": False}),
    ("3-d float mask, heads' weights, padding",
     {"attn_mask": MHA_RNG.normal(size=(6, 4, 6)), "average_attn_weights": False,
      "key_padding_mask": PADDING}),
    ("causal hint", {"attn_mask": np.triu(np.ones((4, 6), dtype=bool), 1), "is_causal": True,
                     "need_weights": False}),
]


def _mha_pair(torch, options, dtype="double"):
    """The same MultiheadAttention(8, 2, ...) made in torch and in chaingrad after seed 0."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn.MultiheadAttention(8, 2, **options), dtype)()
    chaingrad.manual_seed(0)
    ours = getattr(nn.MultiheadAttention(8, 2, **options), dtype)()
    return ours, theirs


def _mha_inputs(options, dtype=np.float64):
    """query (L=4), key and value (S=6), for a batch of 3, in the layout ``options`` says."""
    shapes = [(4, 3, 8), (6, 3, options.get("kdim", 8)), (6, 3, options.get("vdim", 8))]
    arrays = [MHA_RNG.normal(size=shape).astype(dtype) for shape in shapes]
    return [a.transpose(1, 0, 2) if options.get("batch_first") else a for a in arrays]


@pytest.mark.parametrize("options", [c[1] for c in MHA_LAYERS], ids=[c[0] for c in MHA_LAYERS])
def test_multihead_attention_starts_from_torchs_weights(torch, options):
    ours, theirs = _mha_pair(torch, options, "float")
    assert repr(ours) == repr(theirs)
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for name, tensor in theirs_state.items():
        np.testing.assert_array_equal(np.asarray(ours_state[name]), tensor.numpy(), err_msg=name)


@pytest.mark.parametrize("call", [c[1] for c in MHA_CALLS], ids=[c[0] for c in MHA_CALLS])
@pytest.mark.parametrize("options", [c[1] for c in MHA_LAYERS], ids=[c[0] for c in MHA_LAYERS])
def test_multihead_attention_is_torchs(torch, options, call):
    """Outputs, weights and the gradients of the inputs and of every parameter, in float64."""
    ours, theirs = _mha_pair(torch, options)
    arrays = _mha_inputs(options)
    results = []
    for module, layer in ((chaingrad, ours), (torch, theirs)):
        inputs = [module.tensor(a, requires_grad=True) for a in arrays]
        given = {name: module.tensor(value) if isinstance(value, np.ndarray) else value
                 for name, value in call.items()}
        out, weights = layer(*inputs, **given)
        (out * out).sum().backward()
        results.append([out, weights, *(x.grad for x in inputs),
                        *(p.grad for p in layer.parameters())])
    for i, (mine, its) in enumerate(zip(*results)):
        assert (mine is None) == (its is None), i
        if its is not None:
            np.testing.assert_allclose(mine.detach().numpy(), its.detach().numpy(), rtol=1e-9,
                                       atol=1e-12, err_msg=f"result {i}")


def test_multihead_attention_unbatched_and_in_eval_is_torchs(torch):
    """One sequence (L, E); and a layer with dropout in evaluation, without gradients."""
    ours, theirs = _mha_pair(torch, {"dropout": 0.5})
    ours.eval(), theirs.eval()
    x = MHA_RNG.normal(size=(4, 8))
    with chaingrad.no_grad(), torch.no_grad():
        for mine, its in zip(ours(*[chaingrad.tensor(x)] * 3), theirs(*[torch.tensor(x)] * 3)):
            np.testing.assert_allclose(mine.numpy(), its.numpy(), rtol=1e-9, atol=1e-12)
        batch = MHA_RNG.normal(size=(6, 3, 8))
        mine = ours(*[chaingrad.tensor(batch)] * 3, key_padding_mask=chaingrad.tensor(PADDING),
                    need_weights=False)[0]
        its = theirs(*[torch.tensor(batch)] * 3, key_padding_mask=torch.tensor(PADDING),
                     need_weights=False)[0]
        np.testing.assert_allclose(mine.numpy(), its.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_drops_torchs_weights(torch, need_weights):
    """In training with dropout, the same seed drops the same attention weights."""
    ours, theirs = _mha_pair(torch, {"dropout": 0.3}, "float")
    arrays = _mha_inputs({}, np.float32)
    chaingrad.manual_seed(7)
    mine = ours(*map(chaingrad.tensor, arrays), need_weights=need_weights)
    torch.manual_seed(7)
    its = theirs(*map(torch.tensor, arrays), need_weights=need_weights)
    np.testing.assert_allclose(mine[0].detach().numpy(), its[0].detach().numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize(("make", "call", "message"), [
    (lambda: nn.MultiheadAttention(8, 3), None, "embed_dim must be divisible by num_heads"),
    (lambda: nn.MultiheadAttention(0, 2), None, "embed_dim and num_heads must be greater than 0"),
    (lambda: nn.MultiheadAttention(8, 2), {"is_causal": True}, "Need attn_mask if specifying "
                                                               "the is_causal hint"),
    (lambda: nn.MultiheadAttention(8, 2), {"attn_mask": np.ones((5, 6), dtype=bool)},
     "The shape of the 2D attn_mask is \\(5, 6\\), but should be \\(4, 6\\)"),
], ids=["heads", "sizes", "causal without mask", "mask shape"])
def test_multihead_attention_refuses_as_torch(make, call, message):
    with pytest.raises((ValueError, RuntimeError), match=message):
        layer = make()
        given = {name: chaingrad.tensor(value) if isinstance(value, np.ndarray) else value
                 for name, value in (call or {}).items()}
        layer(*map(chaingrad.tensor, _mha_inputs({})), **given)


def test_multihead_attention_explains_and_compiles():
    import io

    chaingrad.manual_seed(0)
    layer = nn.MultiheadAttention(4, 2, batch_first=True)
    x = chaingrad.randn(2, 3, 4)

    def loss():
        return layer(x, x, x, need_weights=False)[0].sum()

    text = chaingrad.explain(loss(), file=io.StringIO(), params=layer)
    assert "in_proj_weight.grad" in text and "out_proj.weight.grad" in text
    eager = layer.in_proj_weight.grad.numpy().copy()
    layer.zero_grad()
    out = chaingrad.compile(loss)()
    out.backward()
    assert out.item() == pytest.approx(loss().item(), rel=1e-6)
    np.testing.assert_allclose(layer.in_proj_weight.grad.numpy(), eager, rtol=1e-5, atol=1e-6)
