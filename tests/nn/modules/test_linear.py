"""chaingrad/nn/modules/linear.py: Linear's shapes, initial weights (and Conv2d's, which
draws them as Linear does) and their seed, its dtypes, its weight gradient's layout."""

from __future__ import annotations

import numpy as np

from chaingrad import Tensor
from chaingrad.nn import Conv2d, Linear, Module, manual_seed


def test_a_linear_layers_weight_gradient_is_row_major_eager_and_compiled() -> None:
    import chaingrad

    manual_seed(0)
    layer = Linear(5, 3)
    x = Tensor(np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32))
    for fn in (lambda: layer(x).sum(), chaingrad.compile(lambda: layer(x).sum())):
        layer.weight.grad = None
        fn().backward()
        assert layer.weight.grad.numpy().flags.c_contiguous


def test_a_float64_input_to_float32_layers_is_promoted_not_refused() -> None:
    """torch raises a dtype mismatch; chaingrad follows numpy (see Linear's docstring)."""
    layer = Linear(3, 2)
    out = layer(Tensor(np.ones((4, 3))))
    out.sum().backward()
    assert out.dtype == np.float64 and layer.weight.grad.dtype == np.float32
    assert layer(Tensor(np.ones((4, 3), np.float32))).dtype == np.float32


def test_linear_and_conv_have_torch_shapes_and_init() -> None:
    manual_seed(1)
    lin, conv = Linear(400, 30), Conv2d(3, 8, (3, 5))
    assert isinstance(lin, Module)
    assert lin.weight.shape == (30, 400) and lin.bias.shape == (30,)
    assert conv.weight.shape == (8, 3, 3, 5) and conv.bias.shape == (8,)
    assert lin.weight.dtype == np.float32 and lin.weight.requires_grad
    for p, fan_in in ((lin.weight, 400), (lin.bias, 400), (conv.weight, 45), (conv.bias, 45)):
        bound = 1 / np.sqrt(fan_in)
        assert np.abs(p.detach().numpy()).max() <= bound
        if p.numel() > 100:  # uniform on the whole interval, not a corner of it
            assert np.abs(p.detach().numpy()).max() > 0.9 * bound
            assert abs(p.detach().numpy().mean()) < 0.1 * bound
    assert [n for n, _ in lin.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in Linear(3, 2, bias=False).named_parameters()] == ["weight"]


def test_manual_seed_makes_init_reproducible() -> None:
    manual_seed(7)
    a = Linear(5, 3).weight.detach().numpy().copy()
    manual_seed(7)
    assert np.array_equal(a, Linear(5, 3).weight.detach().numpy())
