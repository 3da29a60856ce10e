"""chaingrad.nn.functional against torch.nn.functional: values and gradients in float64,
finite differences for the functions made here, and torch's errors and warnings."""

import functools
import warnings

import numpy as np
import pytest

import chaingrad
import chaingrad.nn.functional as F
from chaingrad import gradcheck, no_grad
from chaingrad.nn import manual_seed
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
