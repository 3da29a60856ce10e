"""Losses: values and gradients against torch, stability at extreme logits, bad input; on
Tensors, that each loss is chaingrad.nn.functional's (torch's semantics, broadcasting
included) and hinge_loss's one Tensor form."""

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples

import chaingrad.nn.functional as CF
from chaingrad import Tensor, Value
from chaingrad.losses import bce_with_logits, cross_entropy, hinge_loss, mse_loss

floats = st.floats(-20, 20, allow_nan=False)


def values(xs):
    return [Value(x) for x in xs]


def torch_leaf(torch, xs):
    return torch.tensor(xs, dtype=torch.float64, requires_grad=True)


def check_against_torch(loss, inputs, torch_loss, torch_input, atol=1e-12):
    """The loss value and d(loss)/d(each input) agree with torch's."""
    loss.backward()
    torch_loss.backward()
    assert loss.data == pytest.approx(torch_loss.item(), abs=atol, rel=1e-12)
    expected = torch_input.grad.flatten().tolist()
    assert [v.grad for v in inputs] == pytest.approx(expected, abs=atol, rel=1e-12)


@examples(40)
@given(st.lists(st.tuples(floats, floats), min_size=1, max_size=8))
def test_mse_loss_matches_torch(torch, pairs):
    pred, target = [p for p, _ in pairs], [t for _, t in pairs]
    vs, tp = values(pred), torch_leaf(torch, pred)
    expected = torch.nn.functional.mse_loss(tp, torch.tensor(target, dtype=torch.float64))
    check_against_torch(mse_loss(vs, target), vs, expected, tp, 1e-9)


@examples(40)
@given(st.lists(st.tuples(floats, st.sampled_from([-1, 1])), min_size=1, max_size=8))
def test_hinge_loss_matches_torch(torch, pairs):
    scores, labels = [s for s, _ in pairs], [y for _, y in pairs]
    vs, tp = values(scores), torch_leaf(torch, scores)
    y = torch.tensor(labels, dtype=torch.float64)
    check_against_torch(hinge_loss(vs, labels), vs, torch.relu(1 - y * tp).mean(), tp)


def test_hinge_loss_is_micrograds():
    scores, labels = [0.3, -2.0, 1.5, -0.2], [1, 1, -1, -1]
    expected = sum((1 + -y * s) if 1 - y * s > 0 else 0.0 for s, y in zip(scores, labels,
                                                                           strict=True))
    assert hinge_loss(values(scores), labels).data == expected * (1.0 / 4)


@examples(40)
@given(st.lists(st.tuples(floats, st.floats(0, 1)), min_size=1, max_size=8))
def test_bce_with_logits_matches_torch(torch, pairs):
    logits, targets = [x for x, _ in pairs], [t for _, t in pairs]
    vs, tp = values(logits), torch_leaf(torch, logits)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        tp, torch.tensor(targets, dtype=torch.float64))
    check_against_torch(bce_with_logits(vs, targets), vs, expected, tp, 1e-12)


@examples(40)
@given(st.integers(1, 5), st.integers(1, 4), st.data())
def test_cross_entropy_matches_torch(torch, batch, classes, data):
    rows = [data.draw(st.lists(floats, min_size=classes, max_size=classes)) for _ in range(batch)]
    labels = data.draw(st.lists(st.integers(0, classes - 1), min_size=batch, max_size=batch))
    vs = [values(row) for row in rows]
    tp = torch_leaf(torch, rows)
    expected = torch.nn.functional.cross_entropy(tp, torch.tensor(labels))
    check_against_torch(cross_entropy(vs, labels), [v for row in vs for v in row], expected,
                        tp, 1e-12)


def test_bce_with_logits_at_zero_and_at_extremes(torch):
    logits, targets = [0.0, 1000.0, -1000.0, 1000.0, -1000.0], [0.3, 1.0, 0.0, 0.0, 1.0]
    vs, tp = values(logits), torch_leaf(torch, logits)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        tp, torch.tensor(targets, dtype=torch.float64))
    loss = bce_with_logits(vs, targets)
    assert math.isfinite(loss.data)
    check_against_torch(loss, vs, expected, tp)


def test_cross_entropy_at_extreme_logits(torch):
    rows = [[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -999.0], [1000.0, 1000.0, 1000.0]]
    labels = [1, 2, 0]
    vs = [values(row) for row in rows]
    tp = torch_leaf(torch, rows)
    loss = cross_entropy(vs, labels)
    assert loss.data == pytest.approx((2000.0 + math.log1p(2 * math.exp(-1)) + math.log(3)) / 3)
    check_against_torch(loss, [v for row in vs for v in row],
                        torch.nn.functional.cross_entropy(tp, torch.tensor(labels)), tp)


def test_losses_accept_numbers_and_values_as_targets_and_numpy_labels():
    target = Value(2.0)
    loss = mse_loss([Value(1.0)], [target])
    loss.backward()
    assert (loss.data, target.grad) == (1.0, 2.0)
    assert hinge_loss([0.5, -0.5], np.array([1, -1])).data == 0.5
    assert cross_entropy([[Value(0.0), Value(0.0)]], np.array([1])).data == pytest.approx(
        math.log(2))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: mse_loss([Value(1.0)], [1.0, 2.0]), ValueError, "got 1 predictions but 2"),
        (lambda: mse_loss([], []), ValueError, "pred is empty"),
        (lambda: mse_loss(Value(1.0), [1.0]), TypeError, "pred must be a non-empty list"),
        (lambda: mse_loss([[Value(1.0)]], [1.0]), TypeError, "got list at index 0"),
        (lambda: mse_loss([Value(1.0)], [math.nan]), TypeError, "finite numbers"),
        (lambda: hinge_loss([Value(1.0)], [0]), ValueError, "-1 or \\+1, got 0 at index 0"),
        (lambda: hinge_loss([Value(1.0)], [0.5]), TypeError, "labels must be integers"),
        (lambda: hinge_loss([Value(1.0)], 1), TypeError, "labels must be a list"),
        (lambda: bce_with_logits([Value(1.0)], [1.5]), ValueError, "in \\[0, 1\\], got 1.5"),
        (lambda: cross_entropy([[Value(1.0), Value(2.0)]], [2]), ValueError,
         "range\\(0, 2\\), got 2"),
        (lambda: cross_entropy([[Value(1.0)], [Value(1.0), Value(2.0)]], [0, 0]), ValueError,
         "needs 1 classes .* got 2 in row 1"),
        (lambda: cross_entropy([Value(1.0), Value(2.0)], [0, 0]), TypeError,
         "list of rows"),
        (lambda: cross_entropy([[Value(1.0)]], [True]), TypeError, "integers, got True"),
        (lambda: cross_entropy([], []), ValueError, "logits is empty"),
        (lambda: cross_entropy([[]], [0]), ValueError, "logits\\[0\\] is empty"),
    ],
)
def test_bad_input_is_explained(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- on Tensors: chaingrad.nn.functional's losses, and hinge_loss's one Tensor form ----

shapes = st.integers(1, 6)
TARGET_SIZE = "Using a target size"  # the start of torch's warning for a broadcast target


def arrays(data, shape, low=-20.0, high=20.0):
    flat = data.draw(st.lists(st.floats(low, high, allow_nan=False), min_size=int(np.prod(shape)),
                              max_size=int(np.prod(shape))))
    return np.array(flat, dtype=np.float64).reshape(shape)


def check_tensor_against_torch(loss, x, torch_loss, torch_x, atol=1e-12):
    """A Tensor loss: value and gradient agree with torch's (float64), and it is 0-d."""
    assert loss.shape == () and loss.dtype == np.float64
    loss.backward()
    torch_loss.backward()
    assert loss.item() == pytest.approx(torch_loss.item(), abs=atol, rel=1e-12)
    np.testing.assert_allclose(x.grad, torch_x.grad.numpy(), atol=atol, rtol=1e-12)


@examples(30)
@given(shapes, st.sampled_from([(), (1,), (3,)]), st.data())
def test_tensor_mse_loss_matches_torch(torch, n, rest, data):
    pred, target = arrays(data, (n, *rest)), arrays(data, (n, *rest))
    x, tx = Tensor(pred, requires_grad=True), torch_leaf(torch, pred)
    check_tensor_against_torch(mse_loss(x, target), x,
                               torch.nn.functional.mse_loss(tx, torch.tensor(target)), tx, 1e-9)


@examples(30)
@given(shapes, st.sampled_from([(), (1,), (3,)]), st.data())
def test_tensor_hinge_loss_matches_torch(torch, n, rest, data):
    scores = arrays(data, (n, *rest))
    labels = np.array(data.draw(st.lists(st.sampled_from([-1, 1]), min_size=scores.size,
                                         max_size=scores.size))).reshape(scores.shape)
    x, tx = Tensor(scores, requires_grad=True), torch_leaf(torch, scores)
    y = torch.tensor(labels, dtype=torch.float64)
    check_tensor_against_torch(hinge_loss(x, labels.tolist()), x, torch.relu(1 - y * tx).mean(),
                               tx)


@examples(30)
@given(shapes, st.sampled_from([(), (2,)]), st.data())
def test_tensor_bce_with_logits_matches_torch(torch, n, rest, data):
    logits, targets = arrays(data, (n, *rest)), arrays(data, (n, *rest), 0.0, 1.0)
    x, tx = Tensor(logits, requires_grad=True), torch_leaf(torch, logits)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(tx, torch.tensor(targets))
    check_tensor_against_torch(bce_with_logits(x, targets), x, expected, tx)


@examples(30)
@given(shapes, st.integers(1, 5), st.data())
def test_tensor_cross_entropy_matches_torch(torch, n, classes, data):
    logits = arrays(data, (n, classes))
    labels = data.draw(st.lists(st.integers(0, classes - 1), min_size=n, max_size=n))
    x, tx = Tensor(logits, requires_grad=True), torch_leaf(torch, logits)
    expected = torch.nn.functional.cross_entropy(tx, torch.tensor(labels))
    check_tensor_against_torch(cross_entropy(x, np.array(labels)), x, expected, tx)


def test_tensor_losses_at_extreme_logits_and_at_zero(torch):
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -999.0],
                       [1000.0, 1000.0, 1000.0]])
    x, tx = Tensor(logits, requires_grad=True), torch_leaf(torch, logits)
    check_tensor_against_torch(cross_entropy(x, [1, 2, 0]), x,
                               torch.nn.functional.cross_entropy(tx, torch.tensor([1, 2, 0])), tx)
    flat = np.array([0.0, 1000.0, -1000.0, 1000.0, -1000.0, 0.0])
    targets = np.array([0.3, 1.0, 0.0, 0.0, 1.0, 1.0])
    x, tx = Tensor(flat, requires_grad=True), torch_leaf(torch, flat)
    check_tensor_against_torch(
        bce_with_logits(x, targets), x,
        torch.nn.functional.binary_cross_entropy_with_logits(tx, torch.tensor(targets)), tx)
    assert x.grad[0] == pytest.approx((0.5 - 0.3) / 6)  # sigmoid(0) - t, exactly at zero


def test_tensor_losses_agree_with_the_value_losses():
    rows = [[0.5, -1.0, 2.0], [0.0, 3.0, -2.5]]
    x = Tensor(np.array(rows), requires_grad=True)
    vs = [values(row) for row in rows]
    cross_entropy(x, [2, 0]).backward()
    cross_entropy(vs, [2, 0]).backward()
    np.testing.assert_allclose(x.grad, [[v.grad for v in row] for row in vs], atol=1e-15)
    scores = Tensor(np.array([0.3, -2.0, 1.5]), requires_grad=True)
    assert hinge_loss(scores, [1, 1, -1]).item() == hinge_loss([0.3, -2.0, 1.5],
                                                               [1, 1, -1]).data


def test_tensor_losses_keep_float32_and_take_lists_of_targets_in_the_predictions_dtype():
    scores = Tensor(np.array([[0.5], [-0.5]], dtype=np.float32), requires_grad=True)
    loss = mse_loss(scores, [[1.0], [0.0]])  # a list of floats: float32, as the scores
    assert loss.dtype == np.float32 and loss.item() == pytest.approx((0.25 + 0.25) / 2)
    assert hinge_loss(scores, np.array([[1], [-1]])).item() == pytest.approx(0.5)
    assert hinge_loss(scores, [[1.0], [-1.0]]).dtype == np.float32
    target = Tensor([[1.0], [0.0]], requires_grad=True)
    mse_loss(scores, target).backward()
    assert target.grad.ravel().tolist() == [0.5, 0.5]  # -2 (s - t) / N
    # an array of logits is a constant Tensor
    assert cross_entropy(np.zeros((2, 4)), np.array([1, 3])).item() == pytest.approx(
        math.log(4))


def test_mse_loss_of_a_column_and_a_row_broadcasts_as_torchs_with_its_warning(torch):
    """Scores (3, 1) and targets (3,) make 3 x 3 terms in torch, with a warning: so in
    chaingrad.losses too, whose mse_loss on Tensors is F.mse_loss (2.3333, where one target
    per row would give 1.0)."""
    pred, target = np.array([[1.0], [2.0], [3.0]]), np.array([0.0, 1.0, 2.0])
    message = re.escape("Using a target size (torch.Size([3])) that is different to the input "
                        "size (torch.Size([3, 1])). This will likely lead to incorrect results "
                        "due to broadcasting. Please ensure they have the same size.")
    with pytest.warns(UserWarning, match=message):
        theirs = torch.nn.functional.mse_loss(torch.tensor(pred), torch.tensor(target)).item()
    for given_target in (Tensor(target), target, target.tolist()):
        with pytest.warns(UserWarning, match=message):
            ours = mse_loss(Tensor(pred), given_target)
        assert ours.item() == pytest.approx(theirs, rel=1e-15)
    assert theirs == pytest.approx(21 / 9)


def test_hinge_loss_on_tensors_broadcasts_as_torch_code_does_with_the_same_warning(torch):
    scores, labels = np.array([[0.5], [-2.0], [0.3]]), np.array([1, -1, -1])
    with pytest.warns(UserWarning, match=re.escape(
            "Using a target size (torch.Size([3])) that is different to the input size "
            "(torch.Size([3, 1]))")):
        ours = hinge_loss(Tensor(scores), labels)
    y = torch.tensor(labels, dtype=torch.float64)
    assert ours.item() == pytest.approx(torch.relu(1 - y * torch.tensor(scores)).mean().item(),
                                        rel=1e-15)


def test_bce_with_logits_on_tensors_is_torchs_on_shapes_and_on_targets(torch):
    """Another shape is refused, as torch refuses it; a target outside [0, 1] is not checked
    on Tensors, as torch does not check it (the Values' form checks it)."""
    message = re.escape("Target size (torch.Size([3])) must be the same as input size "
                        "(torch.Size([3, 1]))")
    with pytest.raises(ValueError, match=message):
        torch.nn.functional.binary_cross_entropy_with_logits(torch.zeros(3, 1), torch.zeros(3))
    with pytest.raises(ValueError, match=message):
        bce_with_logits(Tensor(np.zeros((3, 1))), np.zeros(3))
    x, t = np.array([[0.3, -2.0]]), np.array([[0.5, 1.5]])
    expected = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(x),
                                                                    torch.tensor(t))
    assert bce_with_logits(Tensor(x), t).item() == pytest.approx(expected.item(), rel=1e-12)


LOSSES_AND_F = [(mse_loss, "mse_loss"), (bce_with_logits, "binary_cross_entropy_with_logits"),
                (cross_entropy, "cross_entropy")]


@pytest.mark.parametrize(("loss", "name"), LOSSES_AND_F, ids=[n for _, n in LOSSES_AND_F])
def test_each_tensor_loss_is_nn_functionals(monkeypatch, loss, name):
    """No second Tensor implementation: on a Tensor, the loss calls F's with the same
    arguments and returns what it returns."""
    calls = []

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return "F's result"

    monkeypatch.setattr(CF, name, spy)
    x, target = Tensor(np.zeros((2, 3))), np.array([0, 2])
    assert loss(x, target) == "F's result"
    ((args, kwargs),) = calls
    assert args[0] is x and args[1] is target and len(args) == 2 and not kwargs


@examples(30)
@given(shapes, st.sampled_from([(), (1,), (3,)]), st.data())
def test_the_tensor_losses_give_exactly_what_nn_functional_gives(n, rest, data):
    """The same Tensors, the same bits: each loss's value and gradient (for mse_loss, a
    target that broadcasts too)."""
    pred = arrays(data, (n, *rest))
    target_shape = data.draw(st.sampled_from([pred.shape, pred.shape[1:]]
                                             + [(n,)] * (rest == (1,))))
    cases = [(mse_loss, CF.mse_loss, arrays(data, target_shape)),
             (bce_with_logits, CF.binary_cross_entropy_with_logits,
              arrays(data, pred.shape, 0.0, 1.0)),
             (cross_entropy, CF.cross_entropy,
              np.array(data.draw(st.lists(st.integers(0, pred.shape[-1] - 1), min_size=n,
                                          max_size=n))) if pred.ndim == 2 else None)]
    for ours, functional, target in cases:
        if target is None:
            continue
        results = []
        for loss in (ours, functional):
            x = Tensor(pred, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a broadcast target's warning
                out = loss(x, target)
            out.backward()
            results.append((out.item(), x.grad.numpy()))
        assert results[0][0] == results[1][0]
        np.testing.assert_array_equal(results[0][1], results[1][1])


def test_mse_loss_of_shapes_that_cannot_broadcast_warns_then_names_itself():
    with pytest.warns(UserWarning, match=TARGET_SIZE), pytest.raises(
            ValueError, match=re.escape("mse_loss: the target's shape (2, 3) and the input's "
                                        "(3, 2) do not broadcast")):
        mse_loss(Tensor(np.zeros((3, 2))), np.zeros((2, 3)))


LOGITS = Tensor(np.zeros((3, 4)))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: cross_entropy(LOGITS, [0, 1, 4]), IndexError, "Target 4 is out of bounds."),
        (lambda: cross_entropy(LOGITS, [0, -1, 1]), IndexError, "Target -1 is out of bounds."),
        (lambda: cross_entropy(LOGITS, [0, 1]), ValueError,
         "Expected input batch_size (3) to match target batch_size (2)."),
        (lambda: cross_entropy(LOGITS, [0, 1.5, 2]), ValueError,
         "cross_entropy: a target of class probabilities must have the input's shape (3, 4), "
         "got (3,)"),
        (lambda: cross_entropy(LOGITS, ["a", "b", "c"]), TypeError,
         "cross_entropy: expected target dtype to be Long or Byte, but got str32"),
        (lambda: cross_entropy(LOGITS, [True, False, True]), TypeError,
         "cross_entropy: expected target dtype to be Long or Byte, but got Bool"),
        (lambda: cross_entropy(LOGITS, 2), TypeError,
         "cross_entropy(): argument 'target' must be Tensor, not int"),
        (lambda: cross_entropy(Tensor(np.zeros(3)), [0, 1, 2]), ValueError,
         "cross_entropy: expected a target of shape () for an input of shape (3,), got (3,)"),
        (lambda: cross_entropy(Tensor(np.zeros((0, 2))), np.zeros(0, dtype=int)), ValueError,
         "the mean is 0 / 0"),
        (lambda: mse_loss(Tensor(np.zeros(2)), [[1.0], [2.0, 3.0]]), ValueError,
         "mse_loss: target must be a regular array, got a ragged list"),
        (lambda: hinge_loss(Tensor(np.zeros(2)), [1, 0]), ValueError,
         "hinge_loss: labels must be -1 or +1, got 0 at index 1"),
        (lambda: hinge_loss(Tensor(np.zeros((1, 2))), [[1, 0.5]]), ValueError,
         "hinge_loss: labels must be -1 or +1, got 0.5 at index (0, 1)"),
        (lambda: hinge_loss(Tensor(np.zeros(2)), ["a", "b"]), TypeError,
         "hinge_loss: labels must be numbers, got dtype <U1"),
        (lambda: hinge_loss(Tensor(np.zeros(2)), 1), TypeError,
         "hinge_loss: labels must be a list, an array or a Tensor, got int"),
        (lambda: bce_with_logits(Tensor(np.zeros(2)), "ab"), TypeError,
         "binary_cross_entropy_with_logits(): argument 'target' must be Tensor, not str"),
    ],
)
def test_bad_tensor_input_is_explained(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()
