"""chaingrad/nn/modules/loss.py: the loss modules against torch's, with their options."""

from __future__ import annotations

import numpy as np
import pytest

from chaingrad import Tensor


@pytest.mark.parametrize(("make", "args"), [
    (lambda nn, w: nn.MSELoss(reduction="none"), "pair"),
    (lambda nn, w: nn.CrossEntropyLoss(weight=w, label_smoothing=0.1), "classes"),
    (lambda nn, w: nn.NLLLoss(w, ignore_index=1, reduction="sum"), "classes"),
    (lambda nn, w: nn.BCEWithLogitsLoss(pos_weight=w), "pair"),
    (lambda nn, w: nn.L1Loss(), "pair"),
    (lambda nn, w: nn.L1Loss(reduction="sum"), "pair"),
    (lambda nn, w: nn.SmoothL1Loss(beta=0.2), "pair"),
    (lambda nn, w: nn.SmoothL1Loss(reduction="none"), "pair"),
    (lambda nn, w: nn.HuberLoss(delta=0.3), "pair"),
    (lambda nn, w: nn.HuberLoss("sum"), "pair"),
], ids=["mse", "cross_entropy", "nll", "bce", "l1", "l1_sum", "smooth_l1", "smooth_l1_none",
        "huber", "huber_sum"])
def test_loss_modules_agree_with_torch(agrees_with_torch, make, args) -> None:
    import torch

    import chaingrad.nn as cnn

    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(4, 3)), rng.uniform(0.5, 2, size=3)
    target = rng.integers(0, 3, size=4) if args == "classes" else rng.uniform(size=(4, 3))
    agrees_with_torch(lambda x, t: make(cnn, Tensor(w))(x, t),
                      lambda x, t: make(torch.nn, torch.tensor(w))(x, t), x, target)


def test_the_new_loss_modules_print_and_keep_their_options_as_torchs(torch) -> None:
    import chaingrad.nn as cnn

    for make in (lambda nn: nn.L1Loss(), lambda nn: nn.SmoothL1Loss(beta=0.5),
                 lambda nn: nn.HuberLoss(reduction="sum", delta=2.0)):
        ours, theirs = make(cnn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        assert {k: getattr(ours, k) for k in ("reduction", "beta", "delta") if
                hasattr(theirs, k)} == {k: getattr(theirs, k) for k in
                                        ("reduction", "beta", "delta") if hasattr(theirs, k)}
