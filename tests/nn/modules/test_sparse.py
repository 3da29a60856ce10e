"""chaingrad/nn/modules/sparse.py: nn.Embedding and F.embedding against torch: the rows looked
up and their gradients in float64 (indices repeated, of any shape, int64 or int32), padding_idx
(its row takes no gradient, as torch's), from_pretrained, the initial weights and the printed
form, and the errors (out-of-range indices are refused, never wrapped around)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad.nn as cnn
import chaingrad.nn.functional as F
from chaingrad import Tensor, from_numpy


@pytest.mark.parametrize("indices", [
    np.array([3, 0, 3, 1]), np.array([[0, 2], [2, 2], [4, 1]]), np.array(2),
    np.array([[1, 4, 0]], dtype=np.int32), np.zeros((2, 0), dtype=np.int64),
])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_agrees_with_torch(agrees_with_torch, indices, padding_idx) -> None:
    weight = np.random.default_rng(0).normal(size=(5, 3))  # the padding row is not zero
    agrees_with_torch(lambda i, w: F.embedding(i, w, padding_idx),
                      lambda i, w: agrees_with_torch.torch.nn.functional.embedding(
                          i, w, padding_idx), indices, weight)


def test_the_padding_row_takes_no_gradient_and_the_others_add_up(torch) -> None:
    layer = cnn.Embedding(4, 2, padding_idx=0)
    theirs = torch.nn.Embedding(4, 2, padding_idx=0)
    theirs.load_state_dict({"weight": torch.ones(4, 2)})
    layer.load_state_dict(theirs.state_dict())
    indices = np.array([[0, 3, 3], [1, 0, 3]])
    layer(indices).sum().backward()
    theirs(torch.from_numpy(indices)).sum().backward()
    assert layer.weight.grad.tolist() == theirs.weight.grad.tolist() == [
        [0, 0], [1, 1], [0, 0], [3, 3]]


@pytest.mark.parametrize(("args", "kwargs"), [
    ((10, 3), {}), ((27, 4), {"padding_idx": -1}), ((5, 2), {"padding_idx": 0, "norm_type": 1.0}),
])
def test_embedding_starts_and_prints_as_torchs(torch, args, kwargs) -> None:
    cnn.manual_seed(7)
    torch.manual_seed(7)
    ours, theirs = cnn.Embedding(*args, **kwargs), torch.nn.Embedding(*args, **kwargs)
    assert repr(ours) == repr(theirs) and ours.padding_idx == theirs.padding_idx
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())


def test_from_pretrained_shares_the_weights_frozen_unless_asked(torch) -> None:
    table = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    for freeze in (True, False):
        weights = Tensor(table.copy())
        ours = cnn.Embedding.from_pretrained(weights, freeze=freeze, padding_idx=1)
        theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze,
                                                    padding_idx=1)
        assert repr(ours) == repr(theirs)
        assert ours.weight.requires_grad == theirs.weight.requires_grad == (not freeze)
        assert ours.weight.tolist() == theirs.weight.tolist()  # the padding row as given
        weights[0, 0] = 9.0  # the data is shared, as torch's
        assert ours.weight[0, 0].item() == 9.0
    with pytest.raises(ValueError, match=r"embeddings must be a 2-D Tensor \(rows, length\), "
                                         r"got shape \(3,\)"):
        cnn.Embedding.from_pretrained(Tensor(np.ones(3)))


def test_embedding_is_saved_loaded_and_called_in_a_model(torch) -> None:
    cnn.manual_seed(0)
    model = cnn.Sequential(cnn.Embedding(6, 3, padding_idx=5), cnn.Flatten(), cnn.Linear(6, 2))
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "2.weight", "2.bias"]
    out = model(np.array([[1, 5], [5, 0]]))
    assert tuple(out.shape) == (2, 2)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: cnn.Embedding(5, 2, max_norm=1.0), NotImplementedError,
     r"Embedding with max_norm=1.0 is not in chaingrad yet"),
    (lambda: cnn.Embedding(5, 2, sparse=True), NotImplementedError,
     r"Embedding with sparse=True is not in chaingrad yet"),
    (lambda: F.embedding(np.array([1]), Tensor(np.ones((3, 2))), scale_grad_by_freq=True),
     NotImplementedError, r"embedding with scale_grad_by_freq=True is not in chaingrad yet"),
    (lambda: cnn.Embedding(5, 2, padding_idx=5), ValueError,
     "Padding_idx must be within num_embeddings"),
    (lambda: cnn.Embedding(5, 2)(np.array([1.0])), TypeError,
     r"embedding: expected indices of dtype int64 or int32 \(Long, Int\), got Double"),
    (lambda: cnn.Embedding(5, 2)(from_numpy(np.array([0, 1], dtype=np.uint8))), TypeError,
     "got uint8"),
    (lambda: cnn.Embedding(5, 2)(np.array([0, 5])), IndexError,
     r"embedding: index 5 is out of range for 5 rows \(index out of range in self\)"),
    (lambda: cnn.Embedding(5, 2)(np.array([[0], [-1]])), IndexError,
     "index -1 is out of range for 5 rows"),
    (lambda: cnn.Embedding(5, 2)([0, 1]), TypeError,
     r"embedding\(\): argument 'input' must be Tensor, not list"),
    (lambda: F.embedding(np.array([1]), Tensor(np.ones(3))), ValueError,
     r"embedding: weight must be 2-D \(rows, length\), got shape \(3,\)"),
    (lambda: cnn.Embedding(3, 2, _weight=Tensor(np.ones((2, 2)))), ValueError,
     r"the weight given has shape \(2, 2\), which does not match num_embeddings and "
     r"embedding_dim \(3, 2\)"),
])
def test_embedding_errors_name_what_is_wrong(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()
