"""chaingrad/tensor_engine/indexing.py: masked_fill as attention uses it (values and
gradients against torch's), the gradient it sends a value tensor, and masked_fill_ under
torch's rule for writes."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
from chaingrad import Tensor


def test_attention_masks_with_minus_infinity_before_its_softmax(torch) -> None:
    """The lecture's ``wei.masked_fill(tril == 0, float('-inf'))`` then softmax: values and
    gradients as torch's (an entry of -inf, masked out, takes no gradient)."""
    rng = np.random.default_rng(1)
    q_array, k_array = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))

    def attention(lib, q, k):
        tril = lib.tril(lib.ones(4, 4))
        scores = (q @ k.transpose(-2, -1)) * 3**-0.5
        return scores.masked_fill(tril == 0, float("-inf")).softmax(-1)

    q, k = (Tensor(a, requires_grad=True) for a in (q_array, k_array))
    tq, tk = (torch.tensor(a, requires_grad=True) for a in (q_array, k_array))
    ours, theirs = attention(chaingrad, q, k), attention(torch, tq, tk)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    weights = rng.normal(size=(2, 4, 4))
    (ours * Tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(k.grad.numpy(), tk.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_masked_fill_sends_a_value_tensor_the_gradient_of_the_entries_it_fills() -> None:
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    value = Tensor(np.array(-1.0), requires_grad=True)
    out = x.masked_fill(Tensor._constant(np.array([True, False, True])), value)
    (out * Tensor(np.arange(1.0, 7.0).reshape(2, 3))).sum().backward()
    assert out.tolist() == [[-1.0, 1.0, -1.0], [-1.0, 4.0, -1.0]]
    assert value.grad.item() == 1 + 3 + 4 + 6
    assert x.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 5.0, 0.0]]


def test_masked_fill_in_place_follows_torchs_rule_for_writes() -> None:
    x = chaingrad.zeros(2, 2)
    assert x.masked_fill_(x == 0, 3.0) is x and x.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    w = chaingrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="masked_fill_: a leaf Variable that requires grad"):
        w.masked_fill_(w > 0, 0.0)
    with chaingrad.no_grad():
        w.masked_fill_(chaingrad.tensor([True, False, False]), 0.0)
    assert w.tolist() == [0.0, 1.0, 1.0] and w.requires_grad and w.is_leaf


def test_flip_copies_and_refuses_what_torch_refuses(torch) -> None:
    """flip's values and gradients are the table's (tests/tensor_table.py); here: a copy,
    not a view (writing it leaves x alone, as in torch), a 0-dim tensor, and the errors."""
    x = chaingrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    flipped = x.flip(0)
    flipped[0, 0] = 9.0
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert chaingrad.tensor(1.5).flip(0).item() == torch.tensor(1.5).flip(0).item()
    assert x.flip(0, 1).tolist() == torch.tensor(x.tolist()).flip(0, 1).tolist()
    y = chaingrad.tensor([[1.0, 2.0]], requires_grad=True)
    assert y.flip(1).grad_fn.name() == torch.ones(1, requires_grad=True).flip(0).grad_fn.name()
    with pytest.raises(RuntimeError, match="^flip: dim 0 appears multiple times in the list"):
        x.flip([0, -2])
    with pytest.raises(IndexError, match="out of range"):
        chaingrad.flip(x, (2,))
