"""chaingrad/tensor_engine/shaping.py: narrow's arguments and errors as torch's (its values
and gradients are the table's, tests/tensor_table.py, with the other shaping ops')."""

from __future__ import annotations

import pytest

import chaingrad


@pytest.mark.parametrize(("args", "error"), [
    ((0, 2, 2), "start (2) + length (2) exceeds dimension size (3)."),
    ((0, 4, 0), "start out of range (expected to be in range of [-3, 3], but got 4)"),
    ((0, -4, 1), "start out of range (expected to be in range of [-3, 3], but got -4)"),
    ((0, 0, -1), "narrow(): length must be non-negative."),
])
def test_narrow_refuses_what_torch_refuses_in_its_words(torch, args, error) -> None:
    with pytest.raises(Exception) as theirs:
        torch.zeros(3, 2).narrow(*args)
    assert str(theirs.value) == error
    with pytest.raises(type(theirs.value)) as ours:
        chaingrad.zeros(3, 2).narrow(*args)
    assert str(ours.value) == f"narrow: {error}"


def test_narrow_takes_a_tensor_start_and_gives_a_view_as_torch(torch) -> None:
    x = chaingrad.arange(6.0).reshape(3, 2)
    assert chaingrad.narrow(x, 0, chaingrad.tensor(1), 2).tolist() == \
        torch.narrow(torch.arange(6.0).reshape(3, 2), 0, torch.tensor(1), 2).tolist()
    piece = x.narrow(1, 1, 1)
    piece[0, 0] = 7.0  # a view: it writes x, as torch's does
    assert x[0, 1].item() == 7.0
    with pytest.raises(RuntimeError, match="narrow\\(\\) cannot be applied to a 0-dim tensor"):
        chaingrad.tensor(1.0).narrow(0, 0, 1)
