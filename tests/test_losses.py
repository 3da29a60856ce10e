"""Losses: values and gradients against torch, stability at extreme logits, bad input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingrad import Value
from chaingrad.losses import bce_with_logits, cross_entropy, hinge_loss, mse_loss

torch = pytest.importorskip("torch")
F = torch.nn.functional

floats = st.floats(-20, 20, allow_nan=False)


def values(xs):
    return [Value(x) for x in xs]


def torch_leaf(xs):
    return torch.tensor(xs, dtype=torch.float64, requires_grad=True)


def check_against_torch(loss, inputs, torch_loss, torch_input, atol=1e-12):
    """The loss value and d(loss)/d(each input) agree with torch's."""
    loss.backward()
    torch_loss.backward()
    assert loss.data == pytest.approx(torch_loss.item(), abs=atol, rel=1e-12)
    expected = torch_input.grad.flatten().tolist()
    assert [v.grad for v in inputs] == pytest.approx(expected, abs=atol, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(floats, floats), min_size=1, max_size=8))
def test_mse_loss_matches_torch(pairs):
    pred, target = [p for p, _ in pairs], [t for _, t in pairs]
    vs, tp = values(pred), torch_leaf(pred)
    check_against_torch(mse_loss(vs, target), vs,
                        F.mse_loss(tp, torch.tensor(target, dtype=torch.float64)), tp, 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(floats, st.sampled_from([-1, 1])), min_size=1, max_size=8))
def test_hinge_loss_matches_torch(pairs):
    scores, labels = [s for s, _ in pairs], [y for _, y in pairs]
    vs, tp = values(scores), torch_leaf(scores)
    y = torch.tensor(labels, dtype=torch.float64)
    check_against_torch(hinge_loss(vs, labels), vs, torch.relu(1 - y * tp).mean(), tp)


def test_hinge_loss_is_micrograds():
    scores, labels = [0.3, -2.0, 1.5, -0.2], [1, 1, -1, -1]
    expected = sum((1 + -y * s) if 1 - y * s > 0 else 0.0 for s, y in zip(scores, labels,
                                                                           strict=True))
    assert hinge_loss(values(scores), labels).data == expected * (1.0 / 4)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(floats, st.floats(0, 1)), min_size=1, max_size=8))
def test_bce_with_logits_matches_torch(pairs):
    logits, targets = [x for x, _ in pairs], [t for _, t in pairs]
    vs, tp = values(logits), torch_leaf(logits)
    expected = F.binary_cross_entropy_with_logits(tp, torch.tensor(targets, dtype=torch.float64))
    check_against_torch(bce_with_logits(vs, targets), vs, expected, tp, 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(1, 4), st.data())
def test_cross_entropy_matches_torch(batch, classes, data):
    rows = [data.draw(st.lists(floats, min_size=classes, max_size=classes)) for _ in range(batch)]
    labels = data.draw(st.lists(st.integers(0, classes - 1), min_size=batch, max_size=batch))
    vs = [values(row) for row in rows]
    tp = torch_leaf(rows)
    expected = F.cross_entropy(tp, torch.tensor(labels))
    check_against_torch(cross_entropy(vs, labels), [v for row in vs for v in row], expected,
                        tp, 1e-12)


def test_bce_with_logits_at_zero_and_at_extremes():
    logits, targets = [0.0, 1000.0, -1000.0, 1000.0, -1000.0], [0.3, 1.0, 0.0, 0.0, 1.0]
    vs, tp = values(logits), torch_leaf(logits)
    expected = F.binary_cross_entropy_with_logits(tp, torch.tensor(targets, dtype=torch.float64))
    loss = bce_with_logits(vs, targets)
    assert math.isfinite(loss.data)
    check_against_torch(loss, vs, expected, tp)


def test_cross_entropy_at_extreme_logits():
    rows = [[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -999.0], [1000.0, 1000.0, 1000.0]]
    labels = [1, 2, 0]
    vs = [values(row) for row in rows]
    tp = torch_leaf(rows)
    loss = cross_entropy(vs, labels)
    assert loss.data == pytest.approx((2000.0 + math.log1p(2 * math.exp(-1)) + math.log(3)) / 3)
    check_against_torch(loss, [v for row in vs for v in row],
                        F.cross_entropy(tp, torch.tensor(labels)), tp)


def test_losses_accept_numbers_and_values_as_targets_and_numpy_labels():
    np = pytest.importorskip("numpy")
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
