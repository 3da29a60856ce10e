"""chaingrad/tensor_engine/legacy.py: torch's legacy tensor types make the tensors torch's
make, and ``isinstance`` answers as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
         "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_each_makes_torchs_tensor_and_answers_isinstance_as_torch(torch, name) -> None:
    ours, theirs = getattr(chaingrad, name), getattr(torch, name)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    for args in [(), (2, 3), ([1, 0],), ((1, 2, 0),), (np.array([1, 0]),)]:
        mine, expected = ours(*args), theirs(*args)
        assert mine.shape == tuple(expected.shape), args
        assert str(mine.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
        if args and not isinstance(args[0], int):
            assert mine.tolist() == expected.tolist()
    for other in NAMES:
        x, t = getattr(chaingrad, other)([1]), getattr(torch, other)([1])
        assert isinstance(x, ours) == isinstance(t, theirs), other
    assert not issubclass(ours, chaingrad.Tensor)
    assert not isinstance(np.zeros(2), ours)


def test_float_data_becomes_integers_as_in_torch_and_a_tensor_is_kept(torch) -> None:
    assert chaingrad.LongTensor([1.5, -2.7]).tolist() == torch.LongTensor([1.5, -2.7]).tolist()
    x = chaingrad.zeros(2)
    assert chaingrad.FloatTensor(x) is x
    with pytest.raises(TypeError, match="expected a tensor of dtype chaingrad.float32, got "
                                        "chaingrad.float64"):
        chaingrad.FloatTensor(x.double())
    with pytest.raises(TypeError, match="data must be a sequence \\(got float\\)"):
        chaingrad.FloatTensor(2.5)
    with pytest.raises(RuntimeError, match="cuda"):
        chaingrad.FloatTensor(2, device="cuda")


def test_tensor_type_takes_a_legacy_type_or_its_name_as_torch(torch) -> None:
    x, t = chaingrad.tensor([1.5, -2.5]), torch.tensor([1.5, -2.5])
    for ours, theirs in ((chaingrad.DoubleTensor, torch.DoubleTensor),
                         ("torch.LongTensor", "torch.LongTensor"),
                         ("chaingrad.HalfTensor", "torch.HalfTensor")):
        mine, expected = x.type(ours), t.type(theirs)
        assert mine.type() == expected.type().replace("torch.", "chaingrad.")
        assert mine.tolist() == expected.tolist()
    with pytest.raises(ValueError, match="invalid type: 'torch.Nope'"):
        x.type("torch.Nope")
