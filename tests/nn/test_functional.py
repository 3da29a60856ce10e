"""chaingrad.nn.functional against torch.nn.functional: values and gradients in float64,
finite differences for the functions made here, and torch's errors and warnings."""

import functools
import warnings

import numpy as np
import pytest

import chaingrad
import chaingrad.nn.functional as F
from chaingrad import grad, gradcheck, no_grad
from chaingrad.nn import Conv2d, Linear, MaxPool2d, Parameter, manual_seed
from chaingrad.nn.functional import conv2d, max_pool2d
from chaingrad.tensor_engine import Tensor

rng = np.random.default_rng(0)
X = rng.normal(size=(4, 5))
X3 = rng.normal(size=(2, 3, 4))
TARGETS = np.array([1, 0, 4, 2])
IGNORED = np.array([1, -100, 4, 2])
T3 = rng.integers(0, 3, size=(2, 4))
WEIGHT = rng.uniform(0.5, 2.0, size=5)
PROBS = rng.uniform(size=(4, 5))
PROBS /= PROBS.sum(axis=1, keepdims=True)
UNIT = rng.uniform(size=(4, 5))
IMAGE = rng.normal(size=(2, 3, 6, 5))
KERNEL = rng.normal(size=(4, 3, 3, 3))
EVEN_KERNEL = rng.normal(size=(4, 3, 2, 4))
BIAS = rng.normal(size=4)
SIGNAL = rng.normal(size=(2, 3, 9))
KERNEL_1D = rng.normal(size=(4, 3, 3))

# (id, the call written once for either module as F, its arguments)
CASES = [
    ("relu", lambda F, x: F.relu(x), (X,)),
    ("tanh", lambda F, x: F.tanh(x), (X,)),
    ("sigmoid", lambda F, x: F.sigmoid(x), (X,)),
    ("softmax dim 1", lambda F, x: F.softmax(x, dim=1), (X,)),
    ("softmax dim 0", lambda F, x: F.softmax(x, 0), (X,)),
    ("log_softmax dim -1", lambda F, x: F.log_softmax(x, dim=-1), (X3,)),
    ("linear", lambda F, x, w, b: F.linear(x, w, b), (X, rng.normal(size=(3, 5)),
                                                      rng.normal(size=3))),
    ("linear no bias", lambda F, x, w: F.linear(x, w), (X3, rng.normal(size=(2, 4)))),
    ("dropout eval", lambda F, x: F.dropout(x, 0.3, training=False), (X,)),
    ("conv2d", lambda F, x, w, b: F.conv2d(x, w, b), (IMAGE, KERNEL, BIAS)),
    ("conv2d stride padding", lambda F, x, w: F.conv2d(x, w, None, 2, (1, 2)),
     (IMAGE, KERNEL)),
    ("conv2d same", lambda F, x, w, b: F.conv2d(x, w, b, padding="same"),
     (IMAGE, KERNEL, BIAS)),
    ("conv2d same even", lambda F, x, w: F.conv2d(x, w, padding="same"), (IMAGE, EVEN_KERNEL)),
    ("conv2d valid", lambda F, x, w: F.conv2d(x, w, padding="valid"), (IMAGE, KERNEL)),
    ("conv2d same even on a smaller input",
     lambda F, x, w: F.conv2d(x, w, padding="same"), (IMAGE[:, :, :1, :3], EVEN_KERNEL)),
    ("conv2d unbatched", lambda F, x, w: F.conv2d(x, w, stride=(1, 2)), (IMAGE[0], KERNEL)),
    ("max_pool2d", lambda F, x: F.max_pool2d(x, 2), (IMAGE,)),
    ("max_pool2d stride", lambda F, x: F.max_pool2d(x, (3, 2), stride=1), (IMAGE,)),
    ("max_pool2d unbatched", lambda F, x: F.max_pool2d(x, kernel_size=2, stride=(1, 2)),
     (IMAGE[1],)),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b), (SIGNAL, KERNEL_1D, BIAS)),
    ("conv1d stride padding", lambda F, x, w: F.conv1d(x, w, None, 2, 2), (SIGNAL, KERNEL_1D)),
    ("conv1d same even", lambda F, x, w: F.conv1d(x, w, padding="same"),
     (SIGNAL, KERNEL_1D[..., :2])),
    ("conv1d unbatched", lambda F, x, w: F.conv1d(x, w, stride=(3,)), (SIGNAL[0], KERNEL_1D)),
    ("avg_pool2d", lambda F, x: F.avg_pool2d(x, 2), (IMAGE,)),
    ("avg_pool2d padding", lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1), (IMAGE,)),
    ("avg_pool2d no pad counted ceil",
     lambda F, x: F.avg_pool2d(x, (3, 2), 2, (1, 1), ceil_mode=True, count_include_pad=False),
     (IMAGE,)),
    ("avg_pool2d ceil divisor", lambda F, x: F.avg_pool2d(x, 2, ceil_mode=True,
                                                          divisor_override=3), (IMAGE[0],)),
    ("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (4, 3)), (IMAGE,)),
    ("adaptive_avg_pool2d larger", lambda F, x: F.adaptive_avg_pool2d(x, (8, None)), (IMAGE,)),
    ("adaptive_avg_pool2d 1", lambda F, x: F.adaptive_avg_pool2d(x, 1), (IMAGE[1],)),
    ("pad constant", lambda F, x: F.pad(x, (1, 2, 0, 1)), (X3,)),
    ("pad constant value crop", lambda F, x: F.pad(x, (-1, 2, 1, -1), value=0.5), (X3,)),
    ("pad reflect", lambda F, x: F.pad(x, (2, 3, 1, 2), mode="reflect"), (IMAGE,)),
    ("pad replicate", lambda F, x: F.pad(x, (3, 1), mode="replicate"), (X3,)),
    ("pad circular", lambda F, x: F.pad(x, (2, 5, 3, -1), mode="circular"), (IMAGE,)),
    ("pad circular crop", lambda F, x: F.pad(x, (-1, 3), mode="circular"), (X3,)),
    ("pad reflect 3d", lambda F, x: F.pad(x, (1, 1, 2, 0, 1, 1), mode="reflect"),
     (IMAGE[None],)),
    ("interpolate nearest", lambda F, x: F.interpolate(x, scale_factor=2), (X3,)),
    ("interpolate nearest size", lambda F, x: F.interpolate(x, size=(7, 3)), (IMAGE,)),
    ("interpolate nearest scales", lambda F, x: F.interpolate(x, scale_factor=(1.7, 0.6)),
     (IMAGE,)),
    ("interpolate nearest-exact", lambda F, x: F.interpolate(x, size=(9, 7),
                                                             mode="nearest-exact"), (IMAGE,)),
    ("interpolate linear", lambda F, x: F.interpolate(x, size=9, mode="linear"), (X3,)),
    ("interpolate linear corners", lambda F, x: F.interpolate(x, size=7, mode="linear",
                                                              align_corners=True), (X3,)),
    ("interpolate linear smaller", lambda F, x: F.interpolate(x, scale_factor=0.6,
                                                              mode="linear"), (X3,)),
    ("interpolate bilinear", lambda F, x: F.interpolate(x, size=(9, 4), mode="bilinear"),
     (IMAGE,)),
    ("interpolate bilinear corners", lambda F, x: F.interpolate(
        x, scale_factor=1.5, mode="bilinear", align_corners=True), (IMAGE,)),
    ("interpolate bilinear recompute", lambda F, x: F.interpolate(
        x, scale_factor=(2.5, 1.3), mode="bilinear", recompute_scale_factor=True), (IMAGE,)),
    ("interpolate trilinear", lambda F, x: F.interpolate(x, size=(3, 5, 4), mode="trilinear"),
     (IMAGE[None],)),
    ("interpolate area", lambda F, x: F.interpolate(x, size=(4, 3), mode="area"), (IMAGE,)),
    ("l1_loss", lambda F, x, t: F.l1_loss(x, t), (X, UNIT)),
    ("l1_loss sum", lambda F, x, t: F.l1_loss(x, t, reduction="sum"), (X, UNIT)),
    ("l1_loss weight", lambda F, x, t, w: F.l1_loss(x, t, weight=w), (X, UNIT, UNIT + 0.5)),
    ("smooth_l1_loss", lambda F, x, t: F.smooth_l1_loss(x, t), (X * 2, UNIT)),
    ("smooth_l1_loss beta none", lambda F, x, t: F.smooth_l1_loss(x, t, reduction="none",
                                                                  beta=0.3), (X, UNIT)),
    ("smooth_l1_loss beta 0", lambda F, x, t: F.smooth_l1_loss(x, t, beta=0.0), (X, UNIT)),
    ("huber_loss", lambda F, x, t: F.huber_loss(x, t), (X * 2, UNIT)),
    ("huber_loss delta sum", lambda F, x, t: F.huber_loss(x, t, "sum", 0.4), (X, UNIT)),
    ("huber_loss weight", lambda F, x, t, w: F.huber_loss(x, t, delta=1.5, weight=w),
     (X * 2, UNIT, UNIT + 0.5)),
    ("mse_loss", lambda F, x, t: F.mse_loss(x, t), (X, UNIT)),
    ("mse_loss sum", lambda F, x, t: F.mse_loss(x, t, reduction="sum"), (X, UNIT)),
    ("mse_loss none", lambda F, x, t: F.mse_loss(x, t, reduction="none"), (X, UNIT)),
    ("mse_loss weight", lambda F, x, t, w: F.mse_loss(x, t, weight=w), (X, UNIT, UNIT + 0.5)),
    ("nll_loss", lambda F, x, t: F.nll_loss(x, t), (X, TARGETS)),
    ("nll_loss weight ignore", lambda F, x, t, w: F.nll_loss(x, t, w), (X, IGNORED, WEIGHT)),
    ("nll_loss none", lambda F, x, t: F.nll_loss(x, t, reduction="none"), (X, IGNORED)),
    ("nll_loss sum ignore 4", lambda F, x, t: F.nll_loss(x, t, ignore_index=4,
                                                           reduction="sum"), (X, TARGETS)),
    ("nll_loss spatial", lambda F, x, t: F.nll_loss(x, t), (X3, T3)),
    ("cross_entropy", lambda F, x, t: F.cross_entropy(x, t), (X, TARGETS)),
    ("cross_entropy weight ignore", lambda F, x, t, w: F.cross_entropy(x, t, w),
     (X, IGNORED, WEIGHT)),
    ("cross_entropy smoothing", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.2),
     (X, IGNORED)),
    ("cross_entropy smoothing weight",
     lambda F, x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.3), (X, IGNORED,
                                                                                 WEIGHT)),
    ("cross_entropy smoothing none",
     lambda F, x, t, w: F.cross_entropy(x, t, w, reduction="none", label_smoothing=0.1),
     (X, IGNORED, WEIGHT)),
    ("cross_entropy smoothing sum",
     lambda F, x, t: F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
     (X, TARGETS)),
    ("cross_entropy spatial", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
     (X3, T3)),
    ("cross_entropy unbatched", lambda F, x, t: F.cross_entropy(x, t), (X[0], np.array(3))),
    ("cross_entropy probabilities", lambda F, x, p: F.cross_entropy(x, p), (X, PROBS)),
    ("cross_entropy probabilities weight smoothing",
     lambda F, x, p, w: F.cross_entropy(x, p, w, label_smoothing=0.25), (X, PROBS, WEIGHT)),
    ("cross_entropy probabilities none",
     lambda F, x, p: F.cross_entropy(x, p, reduction="none"), (X, PROBS)),
    ("bce_with_logits", lambda F, x, t: F.binary_cross_entropy_with_logits(x, t), (X, UNIT)),
    ("bce_with_logits weights",
     lambda F, x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw,
                                                               reduction="sum"),
     (X, UNIT, UNIT + 0.1, WEIGHT)),
    ("bce_with_logits none", lambda F, x, t: F.binary_cross_entropy_with_logits(
        x * 300, t, reduction="none"), (X, UNIT)),
]


@pytest.mark.parametrize(("call", "args"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_agrees_with_torch(agrees_with_torch, call, args):
    import torch.nn.functional as TF

    # torch takes no gradient for a loss's weights (WEIGHT, or UNIT + 0.1 in bce)
    if not {"cross_entropy", "nll_loss", "binary_cross_entropy_with_logits"}.isdisjoint(
            call.__code__.co_names):
        args = tuple(agrees_with_torch.constant(a) if i >= 2 else a
                     for i, a in enumerate(args))
    agrees_with_torch(functools.partial(call, F), functools.partial(call, TF), *args)


# The functions made here of several ops, checked against central finite differences.
GRADCHECKS = [
    ("cross_entropy smoothing weight", lambda x: F.cross_entropy(  # weight: no gradient
        x, IGNORED, Tensor(WEIGHT), label_smoothing=0.3), (X,)),
    ("cross_entropy probabilities", lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1),
     (X, PROBS)),
    ("nll_loss weight", lambda x: F.nll_loss(x, IGNORED, Tensor(WEIGHT)), (X,)),
    ("bce_with_logits pos_weight", lambda x, t, pw: F.binary_cross_entropy_with_logits(
        x, t, pos_weight=pw), (X, UNIT, WEIGHT)),
    ("mse_loss weight", lambda x, t, w: F.mse_loss(x, t, weight=w), (X, UNIT, UNIT + 0.5)),
    ("conv2d same even", lambda x, w: F.conv2d(x, w, padding="same"),
     (IMAGE[:1, :2, :4, :4], EVEN_KERNEL[:2, :2])),
    ("linear", lambda x, w, b: F.linear(x, w, b), (X, X[:3], BIAS[:3])),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, 2, 1), (SIGNAL[:1], KERNEL_1D[:2], BIAS[:2])),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                          count_include_pad=False), (IMAGE[:1, :2],)),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (4, 3)), (IMAGE[:1, :2],)),
    ("pad reflect", lambda x: F.pad(x, (2, 1), mode="reflect"), (X3,)),
    ("pad circular", lambda x: F.pad(x, (1, 2, 2, 1), mode="circular"), (X3,)),
    ("pad constant", lambda x: F.pad(x, (1, -1, 1, 0), value=2.0), (X3,)),
    ("interpolate bilinear", lambda x: F.interpolate(x, size=(7, 3), mode="bilinear"),
     (IMAGE[:1, :2],)),
    ("interpolate nearest", lambda x: F.interpolate(x, scale_factor=1.5), (X3,)),
    ("smooth_l1_loss", lambda x, t: F.smooth_l1_loss(x, t, beta=0.5), (X, UNIT)),
    ("huber_loss", lambda x, t: F.huber_loss(x, t, delta=0.5), (X, UNIT)),
    ("l1_loss weight", lambda x, t, w: F.l1_loss(x, t, weight=w), (X, UNIT, UNIT + 0.5)),
]


@pytest.mark.parametrize(("fn", "args"), [c[1:] for c in GRADCHECKS],
                         ids=[c[0] for c in GRADCHECKS])
def test_gradients_match_finite_differences(fn, args):
    assert gradcheck(fn, list(args), eps=1e-6, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_a_class_weight_that_requires_grad_is_refused_as_torch_refuses_it(torch, loss):
    x, t, w = np.log(UNIT), np.array([0, 1, 3, 4]), WEIGHT
    with pytest.raises(RuntimeError, match="^The function 'nll_loss_forward' is not "
                       "differentiable with respect to argument 'weight'") as ours:
        getattr(F, loss)(Tensor(x), t, Tensor(w, requires_grad=True))
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.nn.functional, loss)(torch.tensor(x), torch.tensor(t),
                                           torch.tensor(w, requires_grad=True))
    assert str(ours.value).startswith(str(theirs.value))
    with no_grad():  # nothing is recorded: accepted, as torch accepts it
        getattr(F, loss)(Tensor(x), t, Tensor(w, requires_grad=True))


def test_softmax_without_dim_takes_torchs_implicit_choice_and_warns(torch):
    for shape in [(5,), (2, 5), (2, 3, 4), (2, 3, 4, 5)]:
        x = rng.normal(size=shape)
        for name in ("softmax", "log_softmax"):
            with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has "
                                                 "been deprecated") as seen:
                ours = getattr(F, name)(Tensor(x))
            assert seen[0].filename == __file__  # the warning points at the caller
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = getattr(torch.nn.functional, name)(torch.tensor(x))
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_dropout_zeroes_and_scales_with_nns_generator():
    x = Tensor(np.ones((200, 50)), requires_grad=True)
    manual_seed(3)
    first = F.dropout(x, 0.25)
    manual_seed(3)
    again = F.dropout(x, 0.25)
    dropped = first.detach().numpy()
    np.testing.assert_array_equal(dropped, again.detach().numpy())
    assert set(np.unique(dropped)) == {0.0, 1 / 0.75}
    assert abs((dropped == 0).mean() - 0.25) < 0.02  # 10,000 draws: 6 standard errors
    first.sum().backward()
    np.testing.assert_array_equal(x.grad, dropped)  # d/dx = the mask, scaled
    assert F.dropout(x, 0.0) is x and F.dropout(x, 0.5, training=False) is x
    assert not F.dropout(x, 1.0).detach().numpy().any()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.relu([1.0]), TypeError, "relu(): argument 'input' (position 1) must be Tensor"
                                       .replace(" (position 1)", "")),
    (lambda: F.dropout(Tensor(X), 1.5), ValueError,
     "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda: F.mse_loss(Tensor(X), Tensor(UNIT), reduction="avg"), ValueError,
     "avg is not a valid value for reduction"),
    (lambda: F.nll_loss(Tensor(X), TARGETS.astype(float)), TypeError,
     "expected target dtype to be Long or Byte, but got Double"),
    (lambda: F.nll_loss(Tensor(X), TARGETS > 1), TypeError,
     "expected target dtype to be Long or Byte, but got Bool"),
    (lambda: F.cross_entropy(Tensor(X), np.array(list("abcd"))), TypeError,
     "cross_entropy: expected target dtype to be Long or Byte, but got str32"),
    (lambda: F.nll_loss(Tensor(X), np.array([1, 5, 0, 0])), IndexError,
     "Target 5 is out of bounds."),
    (lambda: F.nll_loss(Tensor(X), np.array([1, 0, 1])), ValueError,
     "Expected input batch_size (4) to match target batch_size (3)."),
    (lambda: F.nll_loss(Tensor(X), np.array([-100] * 4)), ValueError, "mean is 0 / 0"),
    (lambda: F.nll_loss(Tensor(X), TARGETS, Tensor(WEIGHT[:3])), ValueError,
     "weight has shape (3,), expected one weight per class (5,)"),
    (lambda: F.cross_entropy(Tensor(X), Tensor(PROBS), ignore_index=1), ValueError,
     "ignore_index is not supported for floating point target"),
    (lambda: F.cross_entropy(Tensor(X), Tensor(PROBS[:2])), ValueError,
     "must have the input's shape (4, 5), got (2, 5)"),
    (lambda: F.cross_entropy(Tensor(X), TARGETS, label_smoothing=1.5), ValueError,
     "label_smoothing must be between 0.0 and 1.0"),
    (lambda: F.binary_cross_entropy_with_logits(Tensor(X), Tensor(UNIT[0])), ValueError,
     "Target size (torch.Size([5])) must be the same as input size (torch.Size([4, 5]))"),
    (lambda: F.mse_loss(Tensor(X), Tensor(UNIT), weight=Tensor(WEIGHT[:2])), ValueError,
     "Weights and input must have the same size."),
    (lambda: F.linear(Tensor(X), Tensor(X3[0])), ValueError, "cannot be multiplied"),
    (lambda: F.conv2d(Tensor(IMAGE), Tensor(KERNEL), padding="same", stride=2), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(Tensor(IMAGE), Tensor(KERNEL), padding="full"), ValueError,
     "invalid padding string 'full'"),
    (lambda: F.conv2d(Tensor(IMAGE[0, 0]), Tensor(KERNEL)), ValueError,
     "needs an input (N, C, H, W) or (C, H, W)"),
    (lambda: F.conv2d(Tensor(IMAGE), Tensor(KERNEL), list(BIAS)), TypeError,
     "conv2d(): argument 'bias' must be Tensor, not list"),
    (lambda: F.conv2d(Tensor(IMAGE), Tensor(KERNEL), Tensor(BIAS[:2])), ValueError,
     "conv2d: bias has shape (2,), expected (4,)"),
    (lambda: F.max_pool2d(Tensor(IMAGE[0, 0]), 2), ValueError,
     "max_pool2d: needs an input (N, C, H, W) or (C, H, W), got shape (6, 5)"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_input_raises_torchs_error(call, error, message):
    with pytest.raises(error, match=_literal(message)):
        call()


@pytest.mark.parametrize(("call", "what"), [
    (lambda: F.conv2d(Tensor(IMAGE), Tensor(KERNEL), dilation=2), "conv2d with dilation=2"),
    (lambda: F.conv2d(Tensor(IMAGE), Tensor(KERNEL), groups=3), "conv2d with groups=3"),
    (lambda: F.max_pool2d(Tensor(IMAGE), 2, padding=1), "max_pool2d with padding=1"),
    (lambda: F.max_pool2d(Tensor(IMAGE), 2, dilation=2), "max_pool2d with dilation=2"),
    (lambda: F.max_pool2d(Tensor(IMAGE), 2, ceil_mode=True), "max_pool2d with ceil_mode=True"),
    (lambda: F.max_pool2d(Tensor(IMAGE), 2, return_indices=True),
     "max_pool2d with return_indices=True"),
])
def test_what_chaingrad_lacks_is_named(call, what):
    with pytest.raises(NotImplementedError, match=_literal(f"{what} is not in chaingrad yet")):
        call()


def test_the_old_size_average_and_reduce_warn_and_reduce_as_torch():
    x, t = Tensor(X), Tensor(UNIT)
    cases = [({"size_average": False}, "sum"), ({"reduce": False}, "none"),
             ({"size_average": True, "reduce": True}, "mean")]
    for legacy, reduction in cases:
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
            old = F.mse_loss(x, t, **legacy)
        np.testing.assert_array_equal(old.numpy(), F.mse_loss(x, t, reduction=reduction).numpy())


def test_mse_loss_warns_when_the_target_broadcasts():
    with pytest.warns(UserWarning, match=_literal("Using a target size (torch.Size([5])) "
                                                  "that is different to the input size")) as seen:
        F.mse_loss(Tensor(X), Tensor(UNIT[0]))
    assert seen[0].filename == __file__  # the warning points at the caller


def test_mse_loss_of_shapes_that_do_not_broadcast_warns_then_names_itself():
    with pytest.warns(UserWarning, match="Using a target size"), pytest.raises(
            ValueError, match=_literal("mse_loss: the target's shape (5, 4) and the input's "
                                       "(4, 5) do not broadcast")):
        F.mse_loss(Tensor(X), Tensor(UNIT.T))


def test_compile_reads_cross_entropys_targets_from_each_call():
    """F.cross_entropy indexes with the caller's int64 targets themselves (not a copy), so
    that a compiled step reads each call's targets instead of baking in the first ones."""
    step = chaingrad.compile(lambda x, t: F.cross_entropy(x, t))
    x = Tensor(X, requires_grad=True)
    for targets in (TARGETS, TARGETS[::-1].copy()):
        assert step(x, targets).item() == F.cross_entropy(x, targets).item()
    assert len(step.traces) == 1 and "args[1]" in step.source


def test_is_importable_as_torch_code_imports_it():
    import chaingrad.nn
    import chaingrad.nn.functional

    assert chaingrad.nn.functional is F
    for name in F.__all__:
        assert callable(getattr(F, name))


def _literal(text):
    import re

    return re.escape(text)


def test_a_torch_function_chaingrad_lacks_is_named():
    with pytest.raises(AttributeError, match="chaingrad.nn.functional has no 'silu' yet"):
        F.silu  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'no_such_thing'"):
        F.no_such_thing  # noqa: B018


def test_cross_entropy_is_torchs_two_nodes(torch):
    """nll_loss of log_softmax, as torch records it: a learner walking grad_fn sees the same
    two steps (and the page and explain show the gradient -1/n at each target)."""
    def walk(loss):  # the names of the nodes down the first inputs, to the leaf
        fn, names = loss.grad_fn, []
        while fn is not None:
            names.append(repr(fn).split()[0].lstrip("<"))
            fn = fn.next_functions[0][0] if fn.next_functions else None
        return names

    t = np.array([0, 2, 1, 4])
    ours = walk(F.cross_entropy(Tensor(X, requires_grad=True), t))
    theirs = walk(torch.nn.functional.cross_entropy(torch.tensor(X, requires_grad=True),
                                                    torch.tensor(t)))
    assert ours == theirs == ["NllLossBackward0", "LogSoftmaxBackward0", "AccumulateGrad"]


# ---- one_hot, binary_cross_entropy; linear, conv2d and max_pool2d (what the layers run)
# against torch and finite differences ----


def test_one_hot_is_torchs(torch) -> None:
    classes = np.array([[0, 2], [1, 4]])
    for num_classes in (-1, 5, 7):
        ours = F.one_hot(chaingrad.tensor(classes), num_classes)
        theirs = torch.nn.functional.one_hot(torch.tensor(classes), num_classes)
        assert ours.tolist() == theirs.tolist() and ours.dtype == chaingrad.int64
    assert F.one_hot(chaingrad.tensor(3), 4).tolist() == [0, 0, 0, 1]
    # the lecture's: one_hot(xs, num_classes=27).float() @ W
    xenc = F.one_hot(chaingrad.tensor([0, 5, 13]), num_classes=27).float()
    assert xenc.dtype == chaingrad.float32 and xenc.sum().item() == 3


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: F.one_hot(chaingrad.tensor([0.0, 1.0])), RuntimeError,
     "one_hot is only applicable to index tensor of type LongTensor"),
    (lambda: F.one_hot(chaingrad.tensor([0, -1])), RuntimeError,
     "Class values must be non-negative"),
    (lambda: F.one_hot(chaingrad.tensor([0, 3]), 3), RuntimeError,
     r"Class values must be smaller than num_classes \(3\), got 3"),
    (lambda: F.one_hot(chaingrad.tensor(np.zeros(0, dtype=np.int64))), RuntimeError,
     "Can not infer total number of classes from empty tensor"),
    (lambda: F.one_hot([0, 1]), TypeError, "argument 'tensor' must be Tensor, not list"),
])
def test_one_hot_refuses_what_torch_refuses(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_is_torchs(agrees_with_torch, torch, reduction) -> None:
    rng = np.random.default_rng(0)
    probabilities = rng.uniform(0.02, 0.98, size=(3, 4))
    targets = rng.uniform(0, 1, size=(3, 4))
    weight = agrees_with_torch.constant(rng.uniform(0.5, 2, size=(4,)))
    agrees_with_torch(
        lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction),
        lambda x, t, w: torch.nn.functional.binary_cross_entropy(x, t, w, reduction=reduction),
        probabilities, targets, weight)
    agrees_with_torch(lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction),
                      lambda x, t: torch.nn.functional.binary_cross_entropy(
                          x, t, reduction=reduction), probabilities, targets)


def test_binary_cross_entropy_at_zero_and_one_is_torchs_too(torch) -> None:
    """A sigmoid that saturates gives exactly 0 or 1: torch's loss floors each log at -100,
    and its gradient divides by at least 1e-12."""
    values, targets = [0.0, 1.0, 0.0, 1.0, 1e-13], [0.0, 1.0, 1.0, 0.0, 1.0]
    x = chaingrad.tensor(values, dtype=chaingrad.float64, requires_grad=True)
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    loss = F.binary_cross_entropy(x, chaingrad.tensor(targets, dtype=chaingrad.float64),
                                  reduction="none")
    expected = torch.nn.functional.binary_cross_entropy(
        tx, torch.tensor(targets, dtype=torch.float64), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    loss.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert loss.grad_fn.name() == "BinaryCrossEntropyBackward0"


def test_binary_cross_entropy_refuses_what_torch_refuses() -> None:
    x = chaingrad.tensor([0.5, 0.5])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(chaingrad.tensor([0.5, 1.5]), x)
    with pytest.raises(ValueError, match=r"Using a target size \(torch.Size\(\[1\]\)\) that is "
                                         r"different to the input size"):
        F.binary_cross_entropy(x, chaingrad.tensor([1.0]))


def _both_grads(fn_ours, fn_torch, arrays, torch):
    """Outputs and gradients of sum(w * fn(...)) from chaingrad and from torch (float64).
    The leaves are Parameters, which a layer takes as its weight and bias."""
    ours = [Parameter(a) for a in arrays]
    out = fn_ours(*ours)
    w = np.random.default_rng(9).standard_normal(out.shape)
    (out * Tensor(w)).sum().backward()
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    expected = fn_torch(*theirs)
    (expected * torch.as_tensor(w)).sum().backward()
    return (out.detach().numpy(), [t.grad for t in ours],
            expected.detach().numpy(), [t.grad.numpy() for t in theirs])


def _assert_all_close(ours, theirs) -> None:
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        assert np.allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batch_shape", [(5,), (2, 3), ()], ids=["batch", "leading", "one"])
def test_linear_matches_torch(torch, batch_shape) -> None:
    layer = Linear(4, 3, dtype=np.float64)
    x = np.random.default_rng(0).standard_normal(batch_shape + (4,))

    def ours(x, w, b):
        layer.weight, layer.bias = w, b
        return layer(x)

    out, grads, expected, expected_grads = _both_grads(
        ours, torch.nn.functional.linear,
        [x, layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy()], torch)
    _assert_all_close([out] + grads, [expected] + expected_grads)


CONV_CASES = [
    # (N, C, H, W), (O, kh, kw), stride, padding, bias
    ((2, 3, 6, 6), (4, 3, 3), 1, 0, True),
    ((1, 2, 7, 5), (3, 3, 3), 2, 1, True),
    ((2, 1, 5, 6), (2, 2, 3), (1, 2), (1, 0), False),
    ((1, 3, 4, 4), (2, 1, 1), 1, 0, True),
    ((1, 2, 5, 5), (2, 5, 5), 1, 2, True),
    ((2, 2, 8, 7), (3, 3, 2), 3, (2, 1), True),
    # outputs at least kernels.SHORT_ROW wide: the batch-first layout of the fast twins
    ((2, 3, 6, 12), (4, 3, 3), 1, 1, True),
    ((1, 2, 7, 19), (3, 3, 2), (1, 2), (0, 1), False),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "stride", "padding", "bias"), CONV_CASES)
def test_conv2d_matches_torch(torch, x_shape, w_shape, stride, padding, bias) -> None:
    rng = np.random.default_rng(0)
    o, kh, kw = w_shape
    arrays = [rng.standard_normal(x_shape), rng.standard_normal((o, x_shape[1], kh, kw))]
    if bias:
        arrays.append(rng.standard_normal(o))

    def ours(x, w, b=None):
        return conv2d(x, w, b, stride, padding)

    def theirs(x, w, b=None):
        return torch.nn.functional.conv2d(x, w, b, stride, padding)

    out, grads, expected, expected_grads = _both_grads(ours, theirs, arrays, torch)
    _assert_all_close([out] + grads, [expected] + expected_grads)


POOL_CASES = [((2, 3, 6, 6), 2, None), ((1, 2, 7, 5), 3, 1), ((1, 1, 8, 8), 2, 3),
              ((2, 2, 6, 7), (2, 3), (1, 2)), ((1, 1, 5, 5), 5, None)]


@pytest.mark.parametrize(("x_shape", "kernel", "stride"), POOL_CASES)
def test_max_pool2d_matches_torch(torch, x_shape, kernel, stride) -> None:
    x = np.random.default_rng(0).permutation(int(np.prod(x_shape))).reshape(x_shape)
    x = x * 0.1  # no ties

    def theirs(x):
        return torch.nn.functional.max_pool2d(x, kernel, stride)

    out, grads, expected, expected_grads = _both_grads(
        lambda x: max_pool2d(x, kernel, stride), theirs, [x], torch)
    _assert_all_close([out] + grads, [expected] + expected_grads)


_TIED = np.array([[0, 0, 1, 1], [1, 0, 1, 0], [0, 0, 0, 0], [0, 2, 2, 0]], float)


TIE_CASES = [  # input (H, W), kernel, stride, d(sum of outputs)/dx as torch 2.13 gives it
    (np.zeros((2, 2)), 2, None, [[1, 0], [0, 0]]),  # a window of zeros: the first entry
    (np.zeros((3, 3)), 2, 1, [[1, 1, 0], [1, 1, 0], [0, 0, 0]]),  # overlapping zeros
    (np.array([[1, 3, 3], [3, 0, 3], [1, 3, 3]], float), 2, 1,  # 3 at (0, 1) wins twice
     [[0, 2, 0], [1, 0, 1], [0, 0, 0]]),
    (_TIED, 2, None, [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]]),
    (_TIED, (2, 3), 1, [[0, 0, 2, 0], [1, 0, 1, 0], [0, 0, 0, 0], [0, 2, 0, 0]]),
]


@pytest.mark.parametrize(("x", "kernel", "stride", "expected"), TIE_CASES,
                         ids=["zeros", "overlapping_zeros", "overlapping_tie", "partly_tied",
                              "wide_overlapping"])
def test_max_pool2d_ties_go_to_the_first_largest_entry_as_in_torch(
        torch, x, kernel, stride, expected) -> None:
    """Not split among the tied entries: each window's gradient goes to its first largest
    entry (row-major), and an entry picked by several windows gets all of theirs."""
    x = x.reshape((1, 1) + x.shape)
    leaf = Tensor(x, requires_grad=True)
    max_pool2d(leaf, kernel, stride).sum().backward()
    assert leaf.grad[0, 0].tolist() == expected
    out, grads, expected_out, expected_grads = _both_grads(
        lambda x: max_pool2d(x, kernel, stride),
        lambda x: torch.nn.functional.max_pool2d(x, kernel, stride), [x], torch)
    _assert_all_close([out] + grads, [expected_out] + expected_grads)


def test_max_pool2d_ties_in_float32_and_twice_differentiated(torch) -> None:
    x = Tensor(np.zeros((1, 1, 3, 3), np.float32), requires_grad=True)
    w = Tensor(np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32), requires_grad=True)
    (g,) = grad((max_pool2d(x, 2, 1) * w).sum(), [x], create_graph=True)
    assert g[0, 0].tolist() == [[1, 2, 0], [3, 4, 0], [0, 0, 0]]
    (g * Tensor(np.arange(9.0).reshape(1, 1, 3, 3))).sum().backward()
    tx = torch.zeros(1, 1, 3, 3, requires_grad=True)
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    (tg,) = torch.autograd.grad((torch.nn.functional.max_pool2d(tx, 2, 1) * tw).sum(), [tx],
                                create_graph=True)
    (tg * torch.arange(9.0).reshape(1, 1, 3, 3)).sum().backward()
    assert w.grad.tolist() == tw.grad.tolist() == [[[[0.0, 1.0], [3.0, 4.0]]]]


@pytest.mark.parametrize("x_shape", [(1, 2, 5, 5), (2, 2, 5, 17)], ids=["small", "wide"])
def test_conv2d_second_derivative_matches_torch(torch, x_shape) -> None:
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(x_shape), rng.standard_normal((2, 2, 3, 3))
    xs = [Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)]
    gx, gw = grad((conv2d(*xs, stride=2, padding=1) ** 2).sum(), xs, create_graph=True)
    ours = grad((gx * gx).sum() + (gw * gw).sum(), xs)
    ts = [torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)]
    tx, tw = torch.autograd.grad(
        (torch.nn.functional.conv2d(*ts, stride=2, padding=1) ** 2).sum(), ts,
        create_graph=True)
    theirs = torch.autograd.grad((tx * tx).sum() + (tw * tw).sum(), ts)
    _assert_all_close(ours, [t.numpy() for t in theirs])


def test_conv2d_third_derivative_matches_torch(torch) -> None:
    """The three conv primitives' rules are made of each other: any order works."""
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((2, 2, 4, 9)), rng.standard_normal((3, 2, 2, 3))
    xs = [Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)]
    ts = [torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)]
    found = []
    for leaves, conv, diff in ((xs, conv2d, grad), (ts, torch.nn.functional.conv2d,
                                                      torch.autograd.grad)):
        gx, gw = diff((conv(*leaves, stride=(1, 2), padding=1) ** 2).sum(), leaves,
                      create_graph=True)
        hx, hw = diff((gx ** 2).sum() + (gw * gx.sum()).sum(), leaves, create_graph=True)
        found.append(diff((hx ** 3).sum() + (hw ** 3).sum(), leaves))
    _assert_all_close(found[0], [t.numpy() for t in found[1]])


def _numeric(fn, arrays, i, eps=1e-6):
    g = np.zeros_like(arrays[i])
    for idx in np.ndindex(g.shape):
        up = [a.copy() for a in arrays]
        down = [a.copy() for a in arrays]
        up[i][idx] += eps
        down[i][idx] -= eps
        g[idx] = (fn(*map(Tensor, up)).numpy().sum() - fn(*map(Tensor, down)).numpy().sum()) / (
            2 * eps)
    return g


@pytest.mark.parametrize(("stride", "padding"), [(1, 0), (2, 1)])
def test_conv2d_gradient_matches_finite_differences(stride, padding) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((1, 2, 5, 4)), rng.standard_normal((2, 2, 3, 2)),
              rng.standard_normal(2)]
    w = rng.standard_normal(conv2d(*map(Tensor, arrays), stride=stride,
                                   padding=padding).shape)

    def fn(x, k, b):
        return conv2d(x, k, b, stride, padding) * Tensor(w)

    leaves = [Tensor(a, requires_grad=True) for a in arrays]
    fn(*leaves).sum().backward()
    for i, leaf in enumerate(leaves):
        assert np.allclose(leaf.grad, _numeric(fn, arrays, i), atol=1e-5, rtol=1e-3)


def test_max_pool2d_gradient_matches_finite_differences() -> None:
    x = np.random.default_rng(2).permutation(36).reshape(1, 1, 6, 6) * 0.1
    w = np.random.default_rng(4).standard_normal((1, 1, 4, 4))

    def fn(t):
        return max_pool2d(t, 3, 1) * Tensor(w)

    leaf = Tensor(x, requires_grad=True)
    fn(leaf).sum().backward()
    assert np.allclose(leaf.grad, _numeric(fn, [x], 0), atol=1e-5, rtol=1e-3)


def test_conv2d_and_max_pool2d_have_one_entry_which_the_layers_call(monkeypatch) -> None:
    """F.conv2d and F.max_pool2d take torch's arguments and check them; the layers call
    them, and the Tensor engine offers no other conv2d or max_pool2d (its functions of
    those names are the primitives' nodes, which check nothing)."""
    import chaingrad.nn.functional as F
    from chaingrad import tensor_engine

    assert not {"conv2d", "max_pool2d"} & set(tensor_engine.__all__)
    calls = []
    for name in ("conv2d", "max_pool2d"):
        monkeypatch.setattr(F, name, lambda *args, name=name, **kw: calls.append(name))
    x = Tensor(np.ones((1, 1, 4, 4)))
    Conv2d(1, 2, 3)(x)
    MaxPool2d(2)(x)
    assert calls == ["conv2d", "max_pool2d"]


# (the call written once for either module as F and its tensor maker, the error, its words):
# torch's own error and chaingrad's, each checked
REFUSALS = [
    (lambda F, T: F.pad(T(X3), (1,)), RuntimeError, "Padding length must be divisible by 2"),
    (lambda F, T: F.pad(T(X3), (1,) * 8), RuntimeError,
     "Padding length should be less than or equal to two times the input dimension but got "
     "padding length 8 and input of dimension 3"),
    (lambda F, T: F.pad(T(X3), (4, 4), mode="reflect"), RuntimeError,
     "Padding size should be less than the corresponding input dimension, but got: padding "
     "(4, 4) at dimension 2 of input [2, 3, 4]"),
    (lambda F, T: F.pad(T(X3), (5, 0), mode="circular"), RuntimeError,
     "Padding value causes wrapping around more than once."),
    (lambda F, T: F.pad(T(X3), (1, 1), mode="reflect", value=2.0), RuntimeError,
     'Padding mode "reflect" doesn\'t take in value argument'),
    (lambda F, T: F.pad(T(X3), (1, 1), mode="bogus"), NotImplementedError,
     "Unrecognised padding mode bogus"),
    (lambda F, T: F.pad(T(X3[0, 0]), (1, 1), mode="reflect"), NotImplementedError,
     "Padding size 2 is not supported for 1D input tensor."),
    (lambda F, T: F.pad(T(X3), [1.5, 1]), TypeError,
     "must be tuple of ints, but found element of type float"),
    (lambda F, T: F.avg_pool2d(T(IMAGE), 3, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3"),
    (lambda F, T: F.avg_pool2d(T(IMAGE), 7), RuntimeError, "Output size is too small"),
    (lambda F, T: F.avg_pool2d(T(IMAGE), 2, stride=(1, 0)), RuntimeError,
     "stride should not be zero"),
    (lambda F, T: F.avg_pool2d(T(IMAGE), 0), RuntimeError, "stride should not be zero"),
    (lambda F, T: F.avg_pool2d(T(IMAGE), (0, 2), stride=1), RuntimeError,
     "kernel size should be greater than zero, but got kH: 0 kW: 2"),
    (lambda F, T: F.avg_pool2d(T(IMAGE), 2, divisor_override=0), RuntimeError,
     "divisor must be not zero"),
    (lambda F, T: F.adaptive_avg_pool2d(T(IMAGE), (2, 2, 2)), RuntimeError,
     "adaptive_avg_pool2d: output_size must be 2"),
    (lambda F, T: F.adaptive_avg_pool2d(T(X[0]), (2, 2)), ValueError,
     "Input dimension should be at least 3"),
    (lambda F, T: F.interpolate(T(IMAGE), scale_factor=2, mode="linear"), NotImplementedError,
     "Got 4D input, but linear mode needs 3D input"),
    (lambda F, T: F.interpolate(T(IMAGE), scale_factor=2, align_corners=True), ValueError,
     "align_corners option can only be set with the interpolating modes"),
    (lambda F, T: F.interpolate(T(IMAGE), size=3, scale_factor=2), ValueError,
     "only one of size or scale_factor should be defined"),
    (lambda F, T: F.interpolate(T(IMAGE)), ValueError,
     "either size or scale_factor should be defined"),
    (lambda F, T: F.interpolate(T(IMAGE), size=3, recompute_scale_factor=True), ValueError,
     "recompute_scale_factor is not meaningful with an explicit size."),
    (lambda F, T: F.interpolate(T(IMAGE), size=(3,)), ValueError,
     "Input and output must have the same number of spatial dimensions, but got input with "
     "spatial dimensions of [6, 5] and output size of (3,)"),
    (lambda F, T: F.interpolate(T(IMAGE), scale_factor=0.1), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (H: 6, W: 5) output "
     "(H: 0, W: 0)"),
    (lambda F, T: F.interpolate(T(IMAGE), size=3, mode="foo"), NotImplementedError,
     "(got foo)"),
    (lambda F, T: F.conv1d(T(IMAGE), T(KERNEL_1D)), RuntimeError,
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
     "[2, 3, 6, 5]"),
    (lambda F, T: F.conv1d(T(SIGNAL), T(KERNEL_1D[:, :2])), RuntimeError,
     "Given groups=1, weight of size [4, 2, 3], expected input[2, 3, 9] to have 2 channels, "
     "but got 3 channels instead"),
    (lambda F, T: F.smooth_l1_loss(T(X), T(UNIT), beta=-1.0), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda F, T: F.huber_loss(T(X), T(UNIT), delta=0.0), RuntimeError,
     "huber_loss does not support non-positive values for delta."),
    (lambda F, T: F.l1_loss(T(X), T(UNIT), reduction="avg"), ValueError,
     "avg is not a valid value for reduction"),
    (lambda F, T: F.l1_loss(T(X), T(UNIT), weight=T(WEIGHT)), ValueError,
     "Weights and input must have the same size."),
]


@pytest.mark.parametrize(("call", "error", "message"), REFUSALS,
                         ids=lambda v: v if isinstance(v, str) else "")
def test_the_new_functions_refuse_what_torch_refuses_in_its_words(torch, call, error,
                                                                  message) -> None:
    import torch.nn.functional as TF

    for module, make in ((TF, torch.tensor), (F, Tensor)):
        with pytest.raises(error, match=_literal(message)):
            call(module, make)


@pytest.mark.parametrize(("call", "what"), [
    (lambda: F.conv1d(Tensor(SIGNAL), Tensor(KERNEL_1D), dilation=2), "conv1d with dilation=2"),
    (lambda: F.conv1d(Tensor(SIGNAL), Tensor(KERNEL_1D), groups=3), "conv1d with groups=3"),
    (lambda: F.interpolate(Tensor(IMAGE), size=3, mode="bicubic"),
     "interpolate with mode='bicubic'"),
    (lambda: F.interpolate(Tensor(IMAGE), size=3, mode="bilinear", antialias=True),
     "interpolate with antialias=True"),
])
def test_what_the_new_functions_lack_is_named(call, what) -> None:
    with pytest.raises(NotImplementedError, match=_literal(f"{what} is not in chaingrad yet")):
        call()


@pytest.mark.parametrize(("call", "shape"), [
    (lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 11, 10)),
    (lambda F, x: F.avg_pool2d(x, (2, 3), count_include_pad=False, padding=1), (2, 3, 11, 10)),
    (lambda F, x: F.adaptive_avg_pool2d(x, (4, 3)), (2, 3, 11, 10)),
    (lambda F, x: F.adaptive_avg_pool2d(x, (15, 7)), (2, 3, 11, 10)),
    (lambda F, x: F.interpolate(x, scale_factor=(1.3, 2.7)), (2, 3, 11, 10)),
    (lambda F, x: F.interpolate(x, size=(17, 4), mode="nearest-exact"), (2, 3, 11, 10)),
    (lambda F, x: F.pad(x, (3, 2, 1, 4), mode="reflect"), (2, 3, 11, 10)),
    (lambda F, x: F.smooth_l1_loss(x, x * 0.5, reduction="none"), (4, 5)),
])
def test_float32_numbers_are_torchs_to_the_bit(torch, call, shape) -> None:
    """Pooling adds each window's entries in torch's order, and nearest takes torch's
    float32 source indices: the float32 outputs are torch's exactly (linear interpolation
    differs in the last bit where torch's kernel fuses a multiply and an add)."""
    import torch.nn.functional as TF

    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    ours = call(F, Tensor(x)).numpy()
    theirs = call(TF, torch.tensor(x)).numpy()
    assert ours.dtype == theirs.dtype == np.float32
    np.testing.assert_array_equal(ours, theirs)


def test_compiled_code_of_the_new_functions_follows_new_parameters() -> None:
    """No branch on the numbers: compile's code, traced once, gives the eager values and
    gradients after the parameters change (smooth_l1_loss and huber_loss move entries
    across beta and delta)."""
    x = Tensor(np.random.default_rng(8).standard_normal((2, 3, 6, 5)).astype(np.float32))
    t = Tensor(np.random.default_rng(9).standard_normal((2, 3, 5, 4)).astype(np.float32))
    w = Parameter(Tensor(np.ones(1, dtype=np.float32)))

    def loss():
        y = F.avg_pool2d(F.pad(w * x, (1, 1, 0, 1), mode="reflect"), 2, ceil_mode=True)
        y = F.interpolate(F.adaptive_avg_pool2d(y, (3, 2)), size=(5, 4), mode="bilinear")
        return (F.smooth_l1_loss(y, t, beta=0.7) + F.huber_loss(y, t, delta=0.5)
                + F.l1_loss(y, t))

    compiled = chaingrad.compile(loss)
    for scale in (0.1, 2.0, 5.0):
        w._value[...] = scale
        w.grad = None
        eager = loss()
        eager.backward()
        expected = w.grad.numpy().copy()
        w.grad = None
        out = compiled()
        out.backward()
        assert out.item() == pytest.approx(eager.item(), rel=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)


# ---- scaled_dot_product_attention against torch, finite differences and torch's dropout ----

Q, K, V = (rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 6, 5)),
           rng.normal(size=(2, 3, 6, 7)))
NO_KEY = np.ones((4, 6), dtype=bool)
NO_KEY[2] = False  # query 2 may attend to no key: torch gives it weights 0, not nan

SDPA_CASES = [
    ("plain", {}),
    ("causal, more keys than queries", {"is_causal": True}),
    ("scale", {"scale": 0.3}),
    ("float mask (4, 6)", {"attn_mask": rng.normal(size=(4, 6))}),
    ("bool mask (3, 1, 6)", {"attn_mask": rng.uniform(size=(3, 1, 6)) > 0.3}),
    ("a query that sees no key", {"attn_mask": NO_KEY}),
    ("float32 mask", {"attn_mask": rng.normal(size=(4, 6)).astype(np.float32)}),
]


@pytest.mark.parametrize("options", [c[1] for c in SDPA_CASES], ids=[c[0] for c in SDPA_CASES])
def test_scaled_dot_product_attention_is_torchs(agrees_with_torch, torch, options):
    def call(module, q, k, v):
        given = {name: module.tensor(value) if isinstance(value, np.ndarray) else value
                 for name, value in options.items()}
        return module.nn.functional.scaled_dot_product_attention(q, k, v, **given)

    out = agrees_with_torch(functools.partial(call, chaingrad), functools.partial(call, torch),
                            Q, K, V)
    assert not np.isnan(out.detach().numpy()).any()


def test_scaled_dot_product_attention_groups_heads_as_torch(agrees_with_torch, torch):
    """enable_gqa: 2 heads of keys and values serve 6 heads of queries (each twice, in turn)."""
    q, kv = rng.normal(size=(2, 6, 4, 5)), rng.normal(size=(2, 2, 6, 5))
    agrees_with_torch(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
                      lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
                          q, k, v, enable_gqa=True), q, kv, kv * 2)


@pytest.mark.parametrize("options", [{}, {"is_causal": True}, {"attn_mask": NO_KEY}],
                         ids=["plain", "causal", "masked"])
def test_scaled_dot_product_attention_matches_finite_differences(options):
    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **options)

    assert gradcheck(fn, [Tensor(a[:1, :2], requires_grad=True) for a in (Q, K, V)],
                     eps=1e-6, atol=1e-7, rtol=1e-5)


def test_scaled_dot_product_attention_drops_torchs_weights(torch):
    """dropout_p: the weights' mask is torch's for the same seed (drawn as F.dropout draws
    it), in training or not, as torch's."""
    q, k, v = (a.astype(np.float32) for a in (Q, K, V))
    manual_seed(5)
    ours = F.scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), dropout_p=0.4,
                                          is_causal=True)
    torch.manual_seed(5)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q), torch.tensor(k), torch.tensor(v), dropout_p=0.4, is_causal=True)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"attn_mask": np.ones((4, 6), dtype=bool), "is_causal": True}, RuntimeError,
     "Explicit attn_mask should not be set when is_causal=True"),
    ({"dropout_p": 1.5}, RuntimeError, "dropout probability has to be between 0 and 1"),
    ({"attn_mask": np.ones((4, 6), dtype=np.int64)}, RuntimeError,
     "Expected attn_mask dtype to be bool or float or to match query dtype"),
    ({"attn_mask": np.ones((5, 6), dtype=bool)}, RuntimeError, "does not broadcast"),
    ({"enable_gqa": True, "key": rng.normal(size=(2, 2, 6, 5))}, RuntimeError,
     "must divide the number of heads in query"),
    ({"key": rng.normal(size=5)}, RuntimeError, "Expected query, key, and value to all be  at "
                                                "least 2 dimensional"),
], ids=["mask and causal", "dropout", "int mask", "mask shape", "heads", "1-d"])
def test_scaled_dot_product_attention_refuses_as_torch(options, error, message):
    given = dict(options)
    key = Tensor(given.pop("key", K))
    if isinstance(given.get("attn_mask"), np.ndarray):
        given["attn_mask"] = chaingrad.tensor(given["attn_mask"])
    with pytest.raises(error, match=message):
        F.scaled_dot_product_attention(Tensor(Q), key, Tensor(V), **given)


def test_scaled_dot_product_attention_explains_and_compiles():
    """Composed of primitives: explain shows its steps, and compile's code gives its value
    and gradients."""
    import io

    q = Tensor(Q[:1, :1].astype(np.float32), requires_grad=True, label="q")

    def loss():
        return F.scaled_dot_product_attention(q, q, q, is_causal=True).sum()

    text = chaingrad.explain(loss(), file=io.StringIO())
    assert "softmax" in text and "matmul" in text
    eager = q.grad.numpy().copy()
    q.grad = None
    out = chaingrad.compile(loss)()
    out.backward()
    assert out.item() == pytest.approx(loss().item(), rel=1e-6)
    np.testing.assert_allclose(q.grad.numpy(), eager, rtol=1e-5, atol=1e-6)
