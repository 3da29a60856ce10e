"""chaingrad/tensor_engine/reductions.py: logsumexp where exp would overflow, against
torch (``nansum`` and ``nanmean`` are in test_nan_and_inf.py, with the other functions of
nan and inf)."""

from __future__ import annotations

import numpy as np

import chaingrad
from chaingrad import Tensor


def test_logsumexp_is_stable_where_exp_would_overflow(torch) -> None:
    big = np.array([[1000.0, 1000.0], [-1000.0, 0.0]])
    np.testing.assert_allclose(Tensor(big).logsumexp(1).numpy(),
                               torch.logsumexp(torch.tensor(big), 1).numpy(), rtol=1e-15)
    assert chaingrad.logsumexp(Tensor(big), (0, 1), keepdim=True).shape == (1, 1)
