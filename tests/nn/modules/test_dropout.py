"""chaingrad/nn/modules/dropout.py: Dropout in training and in evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from chaingrad import Tensor
from chaingrad.nn import Dropout, Sequential, manual_seed


def test_dropout_train_and_eval() -> None:
    manual_seed(0)
    drop = Sequential(Dropout(0.25))
    x = Tensor(np.ones((200, 50)), requires_grad=True)
    y = drop(x)
    dropped = y.detach().numpy() == 0
    assert 0.2 < dropped.mean() < 0.3
    assert np.allclose(y.detach().numpy()[~dropped], 1 / 0.75)
    y.sum().backward()
    assert np.array_equal(x.grad, y.detach().numpy())  # the mask, scaled
    assert drop.eval() is drop and not drop[0].training
    assert drop(x) is x
    drop.train()
    assert drop[0].training
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                         "but got 1.5"):
        Dropout(1.5)
    assert not Dropout(1.0)(x).detach().numpy().any()  # torch allows p = 1: every entry dropped
