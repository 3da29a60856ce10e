"""chaingrad/optim/sgd.py: plain SGD is ``x - lr * g`` bit for bit, and it trains micrograd's
model (its trajectories against torch's are in test_optimizer.py's table)."""

import random

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples

from chaingrad.nn import MLP
from chaingrad.optim import SGD
from chaingrad.optim.sgd import sgd


def test_sgd_trains_micrograds_model():
    random.seed(1337)
    model = MLP(2, [8, 1])
    points = [[0.0, 1.0], [1.0, 0.0], [-1.0, 0.5], [0.5, -1.0]]
    targets = [1.0, -1.0, 1.0, -1.0]
    opt = SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(30):
        loss = sum((model(x) - t) ** 2 for x, t in zip(points, targets, strict=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.data)
    assert losses[-1] < 0.05 * losses[0]


@examples(100)
@given(st.sampled_from([np.float32, np.float64]), st.floats(0, 10), st.integers(0, 2**32 - 1))
def test_plain_sgd_is_x_minus_lr_times_g_bit_for_bit(dtype, lr, seed) -> None:
    """The rule computes x - lr * g with one temporary array: the same numbers exactly."""
    rng = np.random.default_rng(seed)
    x, g = ((rng.standard_normal((3, 5)) * 10.0 ** int(rng.integers(-6, 6))).astype(dtype)
            for _ in range(2))
    new_x, _ = sgd(x, g, {}, lr=lr, momentum=0, dampening=0, weight_decay=0,
                   nesterov=False, maximize=False)
    assert new_x.dtype == dtype and np.array_equal(new_x, x - lr * g)
    assert sgd(1.5, 0.25, {}, lr=lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
               maximize=False)[0] == 1.5 - lr * 0.25
