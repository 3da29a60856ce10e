"""chaingrad/reference.py: one switch runs the readable reference kernels everywhere, no fast
twin, and gives the same gradients; the backward loop, which has no twin, is the same with
the switch on or off."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import chaingrad
from chaingrad import Tensor, Value, autodiff, reference
from chaingrad.nn import MLP, Conv2d, manual_seed
from chaingrad.tensor_engine import kernels


@pytest.fixture
def reference_only():
    """The switch on for one test, the twins made to fail if anything calls them."""
    chaingrad.use_reference()
    yield
    chaingrad.use_reference(False)


def _refuse(*args, **kwargs):
    raise AssertionError("a fast twin ran under use_reference()")


@pytest.mark.parametrize("switch", [True, False], ids=["on", "off"])
def test_value_backward_runs_the_one_loop_either_way(switch: bool, monkeypatch) -> None:
    chaingrad.use_reference(switch)
    passes = []
    real = autodiff.backward_pass
    monkeypatch.setattr(autodiff, "backward_pass",
                        lambda *args, **kw: passes.append(1) or real(*args, **kw))
    try:
        x = Value(2.0)
        (x * x + x.tanh()).backward()
    finally:
        chaingrad.use_reference(False)
    assert passes and x.grad == pytest.approx(4.0 + (1 - math.tanh(2.0) ** 2), rel=1e-15)


def test_the_switch_leaves_a_value_graphs_gradients_as_they_are() -> None:
    def grads() -> list[float]:
        import random

        random.seed(1)
        model = MLP(3, [4, 4, 1])
        loss = sum((model([0.3, -1.2, 0.7]) - 1) ** 2 for _ in range(2))
        loss.backward()
        return [p.grad for p in model.parameters()]

    usual = grads()
    chaingrad.use_reference()
    try:
        readable = grads()
    finally:
        chaingrad.use_reference(False)
    assert readable == usual  # bit for bit: the same loop


def test_conv_and_pooling_run_their_references(reference_only, monkeypatch) -> None:
    for name in ("conv2d", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d"):
        monkeypatch.setattr(kernels, f"{name}_fast", _refuse)
    manual_seed(0)
    layer = Conv2d(2, 3, 3, padding=1)
    x = Tensor(np.random.default_rng(0).standard_normal((2, 2, 6, 6)), requires_grad=True)
    chaingrad.nn.functional.max_pool2d(layer(x), 2).sum().backward()
    assert x.grad.shape == x.shape and layer.weight.grad.shape == layer.weight.shape


def test_the_switch_reads_the_environment() -> None:
    code = "import chaingrad.reference as r; print(r.only)"
    for value, expected in (("", "False"), ("1", "True")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env={**os.environ, "CHAINGRAD_REFERENCE": value})
        assert out.stdout.strip() == expected
    assert reference.only is False
