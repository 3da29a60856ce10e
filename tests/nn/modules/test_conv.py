"""chaingrad/nn/modules/conv.py: Conv1d against torch's (the same initial weights for the
same seed, outputs, gradients, printed form, padding modes) and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as cnn

CONV1D = [  # arguments and options, written once for torch.nn and chaingrad.nn
    ((3, 5, 4), {}),
    ((3, 5, 3), {"stride": 2, "padding": 2, "bias": False}),
    ((3, 5, 4), {"padding": "same"}),
    ((3, 5, (3,)), {"padding": "valid", "stride": (2,)}),
    ((3, 5, 3), {"padding": 2, "padding_mode": "reflect"}),
    ((3, 5, 4), {"padding": "same", "padding_mode": "replicate"}),
    ((3, 5, 3), {"padding": (4,), "padding_mode": "circular"}),
]


@pytest.mark.parametrize(("args", "options"), CONV1D, ids=lambda v: str(v))
def test_conv1d_is_torchs_for_the_same_seed(torch, args, options) -> None:
    torch.manual_seed(11)
    chaingrad.manual_seed(11)
    theirs, ours = torch.nn.Conv1d(*args, **options), cnn.Conv1d(*args, **options)
    assert repr(ours) == repr(theirs)
    for mine, its in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_array_equal(mine.detach().numpy(), its.detach().numpy())
    x = np.random.default_rng(3).standard_normal((2, 3, 10)).astype(np.float32)
    weights = np.random.default_rng(4).standard_normal(theirs(torch.tensor(x)).shape)
    mine_x = chaingrad.tensor(x, requires_grad=True)
    its_x = torch.tensor(x, requires_grad=True)
    out, expected = ours(mine_x), theirs(its_x)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-5)
    (out * chaingrad.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(mine_x.grad.numpy(), its_x.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               atol=1e-4)


def test_conv1d_takes_unbatched_input_and_converts_with_to() -> None:
    conv = cnn.Conv1d(2, 3, 2, dtype=np.float64)
    assert conv.weight.dtype == np.float64
    assert tuple(conv(chaingrad.ones(2, 5, dtype=chaingrad.float64)).shape) == (3, 4)
    assert conv.float().weight.dtype == np.float32


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: cnn.Conv1d(2, 3, 2, dilation=2), NotImplementedError,
     "Conv1d with dilation=2 is not in chaingrad yet"),
    (lambda: cnn.Conv1d(2, 4, 2, groups=2), NotImplementedError,
     "Conv1d with groups=2 is not in chaingrad yet"),
    (lambda: cnn.Conv1d(2, 3, 2, padding_mode="mirror"), ValueError,
     "padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular']"),
    (lambda: cnn.Conv1d(2, 3, 2, stride=2, padding="same"), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: cnn.Conv1d(2, 3, (2, 2)), TypeError,
     "Conv1d: kernel_size must be an int or a tuple of one int, got (2, 2)"),
    (lambda: cnn.Conv1d(0, 3, 2), ValueError, "Conv1d: in_channels must be a positive int"),
])
def test_conv1d_refuses_what_it_cannot_be(make, error, message) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        make()
