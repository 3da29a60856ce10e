"""Losses: values and gradients against torch, stability at extreme logits, bad input."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples

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


@examples(40)
@given(st.lists(st.tuples(floats, floats), min_size=1, max_size=8))
def test_mse_loss_matches_torch(pairs):
    pred, target = [p for p, _ in pairs], [t for _, t in pairs]
    vs, tp = values(pred), torch_leaf(pred)
    check_against_torch(mse_loss(vs, target), vs,
                        F.mse_loss(tp, torch.tensor(target, dtype=torch.float64)), tp, 1e-9)


@examples(40)
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


@examples(40)
@given(st.lists(st.tuples(floats, st.floats(0, 1)), min_size=1, max_size=8))
def test_bce_with_logits_matches_torch(pairs):
    logits, targets = [x for x, _ in pairs], [t for _, t in pairs]
    vs, tp = values(logits), torch_leaf(logits)
    expected = F.binary_cross_entropy_with_logits(tp, torch.tensor(targets, dtype=torch.float64))
    check_against_torch(bce_with_logits(vs, targets), vs, expected, tp, 1e-12)


@examples(40)
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


# ---- the same losses on Tensors ----

np = pytest.importorskip("numpy")
from chaingrad import Tensor  # noqa: E402

shapes = st.integers(1, 6)


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
def test_tensor_mse_loss_matches_torch(n, rest, data):
    pred, target = arrays(data, (n, *rest)), arrays(data, (n, *rest))
    x, tx = Tensor(pred, requires_grad=True), torch_leaf(pred)
    check_tensor_against_torch(mse_loss(x, target), x,
                               F.mse_loss(tx, torch.tensor(target)), tx, 1e-9)


@examples(30)
@given(shapes, st.data())
def test_tensor_hinge_loss_matches_torch(n, data):
    scores = arrays(data, (n, 1))
    labels = data.draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n))
    x, tx = Tensor(scores, requires_grad=True), torch_leaf(scores)
    y = torch.tensor(labels, dtype=torch.float64)[:, None]
    check_tensor_against_torch(hinge_loss(x, labels), x, torch.relu(1 - y * tx).mean(), tx)


@examples(30)
@given(shapes, st.sampled_from([(), (2,)]), st.data())
def test_tensor_bce_with_logits_matches_torch(n, rest, data):
    logits, targets = arrays(data, (n, *rest)), arrays(data, (n, *rest), 0.0, 1.0)
    x, tx = Tensor(logits, requires_grad=True), torch_leaf(logits)
    expected = F.binary_cross_entropy_with_logits(tx, torch.tensor(targets))
    check_tensor_against_torch(bce_with_logits(x, targets), x, expected, tx)


@examples(30)
@given(shapes, st.integers(1, 5), st.data())
def test_tensor_cross_entropy_matches_torch(n, classes, data):
    logits = arrays(data, (n, classes))
    labels = data.draw(st.lists(st.integers(0, classes - 1), min_size=n, max_size=n))
    x, tx = Tensor(logits, requires_grad=True), torch_leaf(logits)
    expected = F.cross_entropy(tx, torch.tensor(labels))
    check_tensor_against_torch(cross_entropy(x, np.array(labels)), x, expected, tx)


def test_tensor_losses_at_extreme_logits_and_at_zero():
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -999.0],
                       [1000.0, 1000.0, 1000.0]])
    x, tx = Tensor(logits, requires_grad=True), torch_leaf(logits)
    check_tensor_against_torch(cross_entropy(x, [1, 2, 0]), x,
                               F.cross_entropy(tx, torch.tensor([1, 2, 0])), tx)
    flat = np.array([0.0, 1000.0, -1000.0, 1000.0, -1000.0, 0.0])
    targets = np.array([0.3, 1.0, 0.0, 0.0, 1.0, 1.0])
    x, tx = Tensor(flat, requires_grad=True), torch_leaf(flat)
    check_tensor_against_torch(bce_with_logits(x, targets), x,
                               F.binary_cross_entropy_with_logits(tx, torch.tensor(targets)), tx)
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


def test_tensor_losses_take_float32_column_outputs_and_column_targets():
    scores = Tensor(np.array([[0.5], [-0.5]], dtype=np.float32), requires_grad=True)
    loss = mse_loss(scores, [1.0, 0.0])  # (N,) targets for (N, 1) scores: one per row
    assert loss.dtype == np.float32 and loss.item() == pytest.approx((0.25 + 0.25) / 2)
    assert hinge_loss(scores, np.array([1, -1])).item() == pytest.approx(0.5)
    target = Tensor([[1.0], [0.0]], requires_grad=True)
    mse_loss(scores, target).backward()
    assert target.grad.ravel().tolist() == [0.5, 0.5]  # -2 (s - t) / N
    assert cross_entropy(np.zeros((2, 4)), Tensor([1.0, 3.0])).item() == pytest.approx(
        math.log(4))


LOGITS = Tensor(np.zeros((3, 4)))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: cross_entropy(LOGITS, [0, 1, 4]), ValueError,
         r"cross_entropy: labels must be in range\(0, 4\), got 4 at index 2"),
        (lambda: cross_entropy(LOGITS, [0, -1, 1]), ValueError, "got -1 at index 1"),
        (lambda: cross_entropy(LOGITS, [0, 1]), ValueError,
         r"cross_entropy: labels must have shape \(3,\) \(one class index per row of "
         r"logits\), got shape \(2,\)"),
        (lambda: cross_entropy(LOGITS, [0, 1.5, 2]), TypeError,
         "cross_entropy: labels must be integers, got 1.5 at index 1"),
        (lambda: cross_entropy(LOGITS, ["a", "b", "c"]), TypeError, "labels must be numbers"),
        (lambda: cross_entropy(LOGITS, [True, False, True]), TypeError, "got dtype bool"),
        (lambda: cross_entropy(LOGITS, 2), TypeError, "labels must be an array, a list"),
        (lambda: cross_entropy(Tensor(np.zeros(3)), [0, 1, 2]), ValueError,
         r"logits must have shape \(N, C\) .* got shape \(3,\)"),
        (lambda: cross_entropy(Tensor(np.zeros((0, 2))), []), ValueError,
         "at least one example, got shape \\(0, 2\\)"),
        (lambda: mse_loss(Tensor(np.zeros((3, 2))), np.zeros((2, 3))), ValueError,
         r"mse_loss: target must have shape \(3, 2\) .* got shape \(2, 3\)"),
        (lambda: mse_loss(Tensor(np.zeros(2)), [1.0, math.inf]), TypeError,
         "mse_loss: target must be finite numbers, got inf at index 1"),
        (lambda: mse_loss(Tensor(np.zeros(2)), [[1.0], [2.0, 3.0]]), ValueError, "ragged"),
        (lambda: hinge_loss(Tensor(np.zeros(2)), [1, 0]), ValueError,
         r"hinge_loss: labels must be -1 or \+1, got 0 at index 1"),
        (lambda: bce_with_logits(Tensor(np.zeros((1, 2))), [[0.5, 1.5]]), ValueError,
         r"bce_with_logits: targets must be in \[0, 1\], got 1.5 at index \(0, 1\)"),
        (lambda: bce_with_logits(Tensor(np.zeros(2)), "ab"), TypeError,
         "targets must be an array"),
    ],
)
def test_bad_tensor_input_is_explained(call, error, message):
    with pytest.raises(error, match=message):
        call()
