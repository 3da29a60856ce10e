"""chaingrad/nn/modules/normalization.py and batchnorm.py (their tests are parametrized over
both): LayerNorm, BatchNorm1d and BatchNorm2d, and F.layer_norm and F.batch_norm that they call,
against torch: outputs and gradients in float64, the running statistics and num_batches_tracked
over several training steps (momentum or the cumulative average), evaluation mode, the options
(affine, bias, track_running_stats), the initial state, the printed form, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as cnn
import chaingrad.nn.functional as F
from chaingrad import Tensor


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize(("shape", "normalized", "affine"), [
    ((4, 5), (5,), "both"), ((2, 3, 4), (3, 4), "both"), ((2, 3, 4), (4,), "weight"),
    ((6,), (6,), "none"), ((3, 1, 2), (1, 2), "both"),
])
def test_layer_norm_agrees_with_torch(agrees_with_torch, torch, shape, normalized,
                                      affine) -> None:
    rng = _rng(1)
    x = rng.normal(size=shape) * 3 + 2
    w, b = rng.normal(size=normalized), rng.normal(size=normalized)
    theirs = torch.nn.functional.layer_norm
    if affine == "both":
        agrees_with_torch(lambda x, w, b: F.layer_norm(x, normalized, w, b),
                          lambda x, w, b: theirs(x, normalized, w, b), x, w, b)
    elif affine == "weight":
        agrees_with_torch(lambda x, w: F.layer_norm(x, normalized, w, eps=1e-3),
                          lambda x, w: theirs(x, normalized, w, eps=1e-3), x, w)
    else:
        agrees_with_torch(lambda x: F.layer_norm(x, normalized),
                          lambda x: theirs(x, normalized), x)


def test_layer_norm_is_one_node_named_as_torchs_that_compiles_and_explains(torch) -> None:
    """One ``layer_norm`` node (torch's NativeLayerNormBackward0); compiled, the same
    forward bits and the gradients within rounding (the compiled backward writes the
    readable formulas, eager runs their twin); ``explain`` shows the rule's formulas."""
    rng = _rng(3)
    x_array = rng.normal(size=(4, 6)) * 2 + 1
    norm = cnn.LayerNorm(6, dtype=chaingrad.float64)
    with chaingrad.no_grad():
        norm.weight.copy_(Tensor(rng.normal(size=6)))
        norm.bias.copy_(Tensor(rng.normal(size=6)))
    x = Tensor(x_array, requires_grad=True)
    y = norm(x)
    assert y._op == "layer_norm" and y._prev == (x, norm.weight, norm.bias)
    theirs = torch.nn.functional.layer_norm(torch.tensor(x_array, requires_grad=True), (6,))
    assert y.grad_fn.name() == theirs.grad_fn.name() == "NativeLayerNormBackward0"

    def loss() -> Tensor:
        return (norm(x).tanh() * Tensor(np.arange(6.0))).sum()

    eager = loss()
    eager.backward()
    expected = [eager.item()] + [t.grad.numpy().copy() for t in (x, norm.weight, norm.bias)]
    x.grad = norm.weight.grad = norm.bias.grad = None
    compiled = chaingrad.compile(loss)
    out = compiled()
    out.backward()
    assert "kernels.layer_norm_on_arrays(" in compiled.source
    assert out.item() == expected[0]
    for t, grad in zip((x, norm.weight, norm.bias), expected[1:]):
        np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-12, atol=1e-14)
    text = chaingrad.explain(loss(), params=norm)
    for formula in ("layer_norm_input_grad(leaf1.data, weight.data, out.grad, axes, eps)",
                    "over_rows(out.grad * normalized(leaf1.data, axes, eps), axes)",
                    "over_rows(out.grad, axes)"):
        assert formula in text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_gives_nan_for_a_row_with_nan_or_inf_as_torch(torch, dtype) -> None:
    """A row holding nan, inf or -inf is nan, forward and backward, the other rows
    untouched, as torch's (tests/tensor_engine/test_nan_and_inf.py leaves layer_norm out
    for 1e300, whose variance overflows differently)."""
    x = _rng(4).normal(size=(4, 5)).astype(dtype)
    x[1, 2], x[2, 0], x[3, 4] = np.nan, np.inf, -np.inf
    theirs = torch.tensor(x, requires_grad=True)
    out = torch.nn.functional.layer_norm(theirs, (5,))
    out.sum().backward()
    ours = chaingrad.tensor(x, requires_grad=True)
    with chaingrad.autograd.set_detect_anomaly(False):  # torch's: nan flows
        mine = F.layer_norm(ours, (5,))
        mine.sum().backward()
    np.testing.assert_array_equal(np.isnan(mine.detach().numpy()), np.isnan(out.detach().numpy()))
    np.testing.assert_array_equal(np.isnan(ours.grad.numpy()), np.isnan(theirs.grad.numpy()))
    assert np.isnan(mine.detach().numpy()[1:]).all() and np.isfinite(ours.grad.numpy()[0]).all()
    np.testing.assert_allclose(mine.detach().numpy()[0], out.detach().numpy()[0],
                               rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_layer_norm_checks_its_parameters_dtype_as_torch(torch) -> None:
    """float32 and float64 are not mixed (torch's error); a bfloat16 or float16 input, with
    parameters of its dtype, float32 ones or none, is normalized in float32 and rounded
    once, torch's numbers bit for bit."""
    x = chaingrad.randn(3, 4)
    with pytest.raises(RuntimeError, match="layer_norm: mixed dtype \\(CPU\\): expect parameter "
                       "to have scalar type of Float, got weight of Double"):
        F.layer_norm(x, (4,), chaingrad.ones(4, dtype=chaingrad.float64))
    weight = chaingrad.randn(4, requires_grad=True)
    for low, theirs_low in ((chaingrad.bfloat16, torch.bfloat16),
                            (chaingrad.float16, torch.float16)):
        for param_dtype in (None, low, chaingrad.float32):
            params = () if param_dtype is None else (weight.to(param_dtype),)
            y = F.layer_norm(x.to(low), (4,), *params)
            assert y.dtype == low
            theirs = torch.nn.functional.layer_norm(
                torch.tensor(x.numpy()).to(theirs_low), (4,),
                *(torch.tensor(p.float().detach().numpy()).to(
                    theirs_low if p.dtype == low else torch.float32) for p in params))
            np.testing.assert_array_equal(y.float().detach().numpy(),
                                          theirs.float().detach().numpy())
    F.layer_norm(x.to(chaingrad.bfloat16), (4,), weight).float().sum().backward()
    assert weight.grad.dtype == chaingrad.float32


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_agrees_with_torch(agrees_with_torch, torch, shape, training) -> None:
    rng = _rng(2)
    x = rng.normal(size=shape) * 2 - 1
    w, b = rng.normal(size=3), rng.normal(size=3)
    mean, var = rng.normal(size=3), rng.uniform(0.5, 2, size=3)
    ours = (Tensor(mean.copy()), Tensor(var.copy()))
    theirs = (torch.tensor(mean), torch.tensor(var))
    agrees_with_torch(
        lambda x, w, b: F.batch_norm(x, *ours, w, b, training, 0.3),
        lambda x, w, b: torch.nn.functional.batch_norm(x, *theirs, w, b, training, 0.3),
        x, w, b)
    for mine, its in zip(ours, theirs, strict=True):  # the running statistics, updated alike
        np.testing.assert_allclose(mine.numpy(), its.numpy(), rtol=1e-12)
    assert np.array_equal(ours[0].numpy(), mean) != training


def _pair(torch, name: str, *args, **kwargs):
    """chaingrad's layer and torch's of the same name and arguments, in float64, starting
    from the same (random) weights."""
    ours = getattr(cnn, name)(*args, dtype=np.float64, **kwargs)
    theirs = getattr(torch.nn, name)(*args, dtype=torch.float64, **kwargs)
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _close(ours, theirs, what: str) -> None:
    np.testing.assert_allclose(np.asarray(ours), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12, err_msg=what)


@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), [
    ("BatchNorm1d", (3,), {}, (8, 3)),
    ("BatchNorm1d", (3,), {"momentum": None}, (4, 3, 5)),
    ("BatchNorm1d", (3,), {"affine": False}, (8, 3)),
    ("BatchNorm1d", (3,), {"bias": False, "momentum": 0.5}, (4, 3, 2)),
    ("BatchNorm1d", (3,), {"track_running_stats": False}, (8, 3)),
    ("BatchNorm2d", (3,), {}, (2, 3, 4, 5)),
    ("BatchNorm2d", (3,), {"eps": 1e-2, "momentum": None, "affine": False}, (3, 3, 2, 2)),
    ("LayerNorm", ((4, 5),), {}, (2, 3, 4, 5)),
    ("LayerNorm", (5,), {"elementwise_affine": False}, (3, 5)),
    ("LayerNorm", (5,), {"bias": False, "eps": 1e-3}, (3, 5)),
])
def test_a_norm_layer_trains_and_evaluates_as_torchs(torch, name, args, kwargs, shape) -> None:
    ours, theirs = _pair(torch, name, *args, **kwargs)
    rng = _rng(3)
    for step in range(4):  # three training steps, then one in evaluation mode
        if step == 3:
            ours.eval(), theirs.eval()
        x = rng.normal(size=shape) * 2 + step
        g = rng.normal(size=shape)
        mine, its = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, expected = ours(mine), theirs(its)
        _close(out._value, expected, f"step {step}: the outputs")
        (out * Tensor(g)).sum().backward()
        (expected * torch.tensor(g)).sum().backward()
        _close(mine.grad._value, its.grad, f"step {step}: the input's gradient")
        for (key, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
            _close(p.grad._value, q.grad, f"step {step}: {key}'s gradient")
        ours.zero_grad(), theirs.zero_grad()
        state, expected_state = ours.state_dict(), theirs.state_dict()
        assert list(state) == list(expected_state)
        for key, value in state.items():  # the running statistics, num_batches_tracked
            _close(value, expected_state[key], f"step {step}: {key}")
            assert value.dtype == expected_state[key].numpy().dtype, key


def test_the_float32_running_statistics_stay_with_torchs(torch) -> None:
    ours, theirs = cnn.BatchNorm1d(4), torch.nn.BatchNorm1d(4)
    rng = _rng(4)
    for _ in range(10):
        x = (rng.normal(size=(16, 4)) * 3).astype(np.float32)
        ours(Tensor(x))
        theirs(torch.from_numpy(x))
    for key, value in ours.state_dict().items():
        np.testing.assert_allclose(value, theirs.state_dict()[key].numpy(), rtol=2e-6,
                                   err_msg=key)


@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("LayerNorm", (8,), {}), ("LayerNorm", ([2, 3],), {"bias": False}),
    ("LayerNorm", (4,), {"elementwise_affine": False}), ("BatchNorm1d", (5,), {}),
    ("BatchNorm2d", (3,), {"affine": False, "momentum": None}),
    ("BatchNorm1d", (2,), {"track_running_stats": False, "eps": 1e-3}),
])
def test_a_norm_layer_starts_and_prints_as_torchs(torch, name, args, kwargs) -> None:
    ours, theirs = getattr(cnn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    for key, value in ours.state_dict().items():
        expected = theirs.state_dict()[key].numpy()
        assert value.dtype == expected.dtype and np.array_equal(value, expected), key


def test_train_and_eval_switch_a_batch_norm_inside_a_model(torch) -> None:
    model = cnn.Sequential(cnn.Linear(3, 4), cnn.BatchNorm1d(4), cnn.ReLU())
    x = Tensor(_rng(5).normal(size=(6, 3)).astype(np.float32))
    model(x)
    assert int(model[1].num_batches_tracked) == 1
    model.eval()
    before = model[1].running_mean.numpy().copy()
    one = model(x[:1])  # one example: fine in evaluation mode
    assert tuple(one.shape) == (1, 4) and int(model[1].num_batches_tracked) == 1
    assert np.array_equal(model[1].running_mean.numpy(), before)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: cnn.BatchNorm1d(3)(Tensor(np.ones((2, 3, 4, 5)))), ValueError,
     r"expected 2D or 3D input \(got 4D input\)"),
    (lambda: cnn.BatchNorm2d(3)(Tensor(np.ones((2, 3, 4)))), ValueError,
     r"expected 4D input \(got 3D input\)"),
    (lambda: cnn.BatchNorm1d(3)(Tensor(np.ones((1, 3)))), ValueError,
     r"Expected more than 1 value per channel when training, got input size "
     r"torch.Size\(\[1, 3\]\)"),
    (lambda: cnn.BatchNorm1d(4)(Tensor(np.ones((2, 3)))), ValueError,
     r"batch_norm: running_mean should contain 3 elements \(one per channel\), not shape "
     r"\(4,\)"),
    (lambda: F.batch_norm(Tensor(np.ones((2, 3))), None, None), ValueError,
     "running_mean and running_var must be given in evaluation mode"),
    (lambda: F.batch_norm(Tensor(np.ones((2, 3))), Tensor(np.ones(3)), None), ValueError,
     "must either both be None or neither be None"),
    (lambda: F.batch_norm(Tensor(np.ones((2, 3))), None, None, training=True, eps=0),
     ValueError, "batch_norm eps must be positive during training, but got 0"),
    (lambda: F.batch_norm(Tensor(np.ones(3)), None, None, training=True), ValueError,
     r"batch_norm: expected an input \(N, C, ...\) with a channel axis, got shape \(3,\)"),
    (lambda: cnn.LayerNorm(4)(Tensor(np.ones((2, 5)))), ValueError,
     r"layer_norm: given normalized_shape=\[4\], expected input with shape \[\*, 4\], but "
     r"got input of size \[2, 5\]"),
    (lambda: F.layer_norm(Tensor(np.ones((2, 5))), 5), TypeError,
     r"'normalized_shape' must be a tuple of ints, not int \(write \(5,\)\)"),
    (lambda: F.layer_norm(Tensor(np.ones((2, 5))), (5,), Tensor(np.ones(4))), ValueError,
     r"expected weight to be of same shape as normalized_shape, but got weight of shape \[4\]"),
    (lambda: cnn.LayerNorm(0), ValueError, r"LayerNorm: normalized_shape\[0\] must be a "
                                           "positive int, got 0"),
    (lambda: cnn.BatchNorm2d(0), ValueError, "BatchNorm2d: num_features must be a positive"),
])
def test_norm_errors_name_the_op_what_it_needs_and_what_it_got(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


def test_the_layers_call_the_one_function_of_each(monkeypatch) -> None:
    """nn.LayerNorm, nn.BatchNorm1d/2d and nn.Embedding compute nothing of their own: they
    call F.layer_norm, F.batch_norm and F.embedding."""
    calls = []
    for name in ("layer_norm", "batch_norm", "embedding"):
        monkeypatch.setattr(F, name, lambda *args, name=name, **kw: calls.append(name))
    cnn.LayerNorm(3)(Tensor(np.ones((2, 3))))
    cnn.BatchNorm1d(3)(Tensor(np.ones((2, 3))))
    cnn.BatchNorm2d(3).eval()(Tensor(np.ones((2, 3, 2, 2))))
    cnn.Embedding(4, 3)(np.array([1, 2]))
    assert calls == ["layer_norm", "batch_norm", "batch_norm", "embedding"]
