"""chaingrad/nn/modules/transformer.py: nn.Transformer, its encoder and decoder and their
layers against torch 2.13: the weights after the same seed, outputs and gradients in
float64 (dropout 0), in evaluation, and with dropout's masks for the same seed."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as nn

RNG = np.random.default_rng(11)
SRC, TGT = RNG.normal(size=(5, 3, 8)), RNG.normal(size=(4, 3, 8))
PADDING = np.array([[False] * 3 + [True] * 2, [False] * 5, [False] * 4 + [True]])


def encoder(module, **options):
    layer = module.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, **options)
    return module.nn.TransformerEncoder(layer, 2, module.nn.LayerNorm(8))


def decoder(module, **options):
    layer = module.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, **options)
    return module.nn.TransformerDecoder(layer, 2, module.nn.LayerNorm(8))


def transformer(module, **options):
    return module.nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=1,
                                 dim_feedforward=16, **options)


def inputs(module, which, batch_first, dtype=np.float64):
    """The model's inputs (and its masks) as ``module``'s tensors."""
    def t(a):
        a = a.astype(dtype)
        return module.tensor(a.transpose(1, 0, 2) if batch_first else a)

    float_dtype = module.float64 if dtype == np.float64 else module.float32
    causal = module.nn.Transformer.generate_square_subsequent_mask(4, dtype=float_dtype)
    padding = module.tensor(PADDING)
    if which is encoder:
        return (t(SRC),), {"mask": module.nn.Transformer.generate_square_subsequent_mask(
            5, dtype=float_dtype), "src_key_padding_mask": padding}
    if which is decoder:
        return (t(TGT), t(SRC)), {"tgt_mask": causal, "memory_key_padding_mask": padding}
    return (t(SRC), t(TGT)), {"tgt_mask": causal, "src_key_padding_mask": padding,
                              "memory_key_padding_mask": padding}


def pair(torch, which, dtype="double", **options):
    """The same model made by torch and by chaingrad after seed 0 (torch's warning that its
    nested-tensor fast path is off silenced)."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(which(torch, **options), dtype)()
    chaingrad.manual_seed(0)
    ours = getattr(which(chaingrad, **options), dtype)()
    return ours, theirs


MODELS = [encoder, decoder, transformer]
OPTIONS = [
    ("relu", {}),
    ("gelu, norm_first", {"activation": "gelu", "norm_first": True}),
    ("batch_first", {"batch_first": True}),
    ("no bias, a GELU module", {"bias": False, "activation": "module"}),
]


def _options(module, which, options):
    """``options`` with dropout 0, and ``activation="module"`` as an ``nn.GELU()``; but for
    torch's decoder, ``"gelu"``: torch 2.13's TransformerDecoderLayer loses a module
    activation when TransformerDecoder deep-copies it (its ``__setstate__`` puts F.relu in
    its place), which chaingrad does not copy."""
    given = dict(options, dropout=0.0)
    if given.get("activation") == "module":
        lost = module is not chaingrad and which is not encoder
        given["activation"] = "gelu" if lost else module.nn.GELU()
    return given


@pytest.mark.parametrize("which", MODELS, ids=[m.__name__ for m in MODELS])
def test_the_weights_are_torchs_for_the_same_seed(torch, which):
    ours, theirs = pair(torch, which, "float")
    assert repr(ours) == repr(theirs)
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for name, tensor in theirs_state.items():
        np.testing.assert_array_equal(np.asarray(ours_state[name]), tensor.numpy(), err_msg=name)


@pytest.mark.parametrize("options", [c[1] for c in OPTIONS], ids=[c[0] for c in OPTIONS])
@pytest.mark.parametrize("which", MODELS, ids=[m.__name__ for m in MODELS])
def test_outputs_and_gradients_are_torchs(torch, which, options):
    """In training with dropout 0, float64: the output and every parameter's gradient."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = which(torch, **_options(torch, which, options)).double()
    chaingrad.manual_seed(0)
    ours = which(chaingrad, **_options(chaingrad, which, options)).double()
    results = []
    for module, model in ((chaingrad, ours), (torch, theirs)):
        args, masks = inputs(module, which, options.get("batch_first", False))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's: mismatched mask types are deprecated
            out = model(*args, **masks)
        (out * out).sum().backward()
        results.append([out, *(p.grad for p in model.parameters())])
    for i, (mine, its) in enumerate(zip(*results)):
        np.testing.assert_allclose(mine.detach().numpy(), its.detach().numpy(), rtol=1e-9,
                                   atol=1e-11, err_msg=f"result {i}")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("which", MODELS, ids=[m.__name__ for m in MODELS])
def test_in_evaluation_the_outputs_are_torchs(torch, which, batch_first):
    """``eval()`` and no gradients: dropout off, and torch's fast paths' numbers (its
    nested tensors leave an encoder's padded positions at 0 before the last norm)."""
    ours, theirs = pair(torch, which, batch_first=batch_first)
    ours.eval(), theirs.eval()
    outs = []
    for module, model in ((chaingrad, ours), (torch, theirs)):
        args, masks = inputs(module, which, batch_first)
        if which is encoder:
            masks.pop("mask")  # torch's fast path: a padding mask alone
        with module.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(model(*args, **masks).numpy())
    np.testing.assert_allclose(*outs, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("which", MODELS, ids=[m.__name__ for m in MODELS])
def test_dropout_drops_as_torchs_for_the_same_seed(torch, which):
    """float32, dropout 0.3 in training: the same seed gives torch's masks, in torch's
    order (attention weights, then each block's dropouts)."""
    ours, theirs = pair(torch, which, "float", dropout=0.3)
    outs = []
    for module, model in ((chaingrad, ours), (torch, theirs)):
        args, masks = inputs(module, which, False, np.float32)
        module.manual_seed(9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(model(*args, **masks).detach().numpy())
    np.testing.assert_allclose(*outs, rtol=1e-4, atol=1e-5)


def test_the_causal_mask_is_torchs(torch):
    ours = nn.Transformer.generate_square_subsequent_mask(4)
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert ours.dtype == chaingrad.float32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_the_modules_are_where_torch_keeps_them():
    from chaingrad.nn.modules import transformer as home

    assert nn.TransformerEncoderLayer is home.TransformerEncoderLayer
    assert chaingrad.nn.modules.Transformer is home.Transformer


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: nn.TransformerEncoderLayer(8, 2, activation="tanh"), RuntimeError,
     "activation should be relu/gelu, not tanh"),
    (lambda: nn.TransformerEncoderLayer(8, 3), ValueError,
     "embed_dim must be divisible by num_heads"),
    (lambda: nn.Transformer(8, 2, 1, 1, 16)(chaingrad.randn(5, 3, 8), chaingrad.randn(4, 2, 8)),
     RuntimeError, "the batch number of src and tgt must be equal"),
    (lambda: nn.Transformer(8, 2, 1, 1, 16)(chaingrad.randn(5, 3, 6), chaingrad.randn(4, 3, 6)),
     RuntimeError, "the feature number of src and tgt must be equal to d_model"),
], ids=["activation", "heads", "batch", "features"])
def test_a_bad_argument_is_refused_as_torch(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_a_transformer_explains_opens_in_the_page_and_compiles(tmp_path):
    chaingrad.manual_seed(0)
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 1)
    x = chaingrad.randn(3, 2, 4)
    mask = nn.Transformer.generate_square_subsequent_mask(3)

    def loss():
        return model(x, mask=mask).sum()

    chaingrad.to_html(loss(), tmp_path / "page.html", params=model)
    assert "layers.0.self_attn.in_proj_weight" in (tmp_path / "page.html").read_text()
    text = chaingrad.explain(loss(), file=io.StringIO(), params=model)
    assert "layers.0.linear1.weight.grad" in text
    eager = model.layers[0].linear1.weight.grad.numpy().copy()
    model.zero_grad()
    out = chaingrad.compile(loss)()
    out.backward()
    assert out.item() == pytest.approx(loss().item(), rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(model.layers[0].linear1.weight.grad.numpy(), eager, rtol=1e-4,
                               atol=1e-6)


def test_a_checkpoint_crosses_the_import_line_both_ways(torch, tmp_path):
    """torch.save of torch's model loads into chaingrad's, and chaingrad's into torch's,
    giving the same outputs (eval, float32)."""
    torch.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = transformer(torch).eval()
    chaingrad.manual_seed(2)  # other weights, replaced by torch's
    ours = transformer(chaingrad).eval()
    torch.save(theirs.state_dict(), tmp_path / "theirs.pt")
    ours.load_state_dict(chaingrad.load(tmp_path / "theirs.pt"))
    chaingrad.save(ours.state_dict(), tmp_path / "ours.pt")
    theirs.load_state_dict(torch.load(tmp_path / "ours.pt"))
    src, tgt = SRC.astype(np.float32), TGT.astype(np.float32)
    with chaingrad.no_grad(), torch.no_grad():
        mine = ours(chaingrad.tensor(src), chaingrad.tensor(tgt)).numpy()
        its = theirs(torch.tensor(src), torch.tensor(tgt)).numpy()
    np.testing.assert_allclose(mine, its, rtol=1e-5, atol=1e-5)
