"""torch's module-level functions (``chaingrad.exp(x)``, ``chaingrad.sum(x, dim)``, ...): each
called as torch's is, on the same data, gives torch's values, shape and dtype; a number or a
list where a tensor is expected becomes one; gradients flow as through the methods."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad

V = [0.5, 1.0, 2.0]
M = [[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]

CALLS = {
    "exp": lambda t: t.exp(t.tensor(V)), "log": lambda t: t.log(t.tensor(V)),
    "sin": lambda t: t.sin(t.tensor(V)), "cos": lambda t: t.cos(t.tensor(V)),
    "tanh": lambda t: t.tanh(t.tensor(V)), "sigmoid": lambda t: t.sigmoid(t.tensor(M)),
    "relu": lambda t: t.relu(t.tensor(M)), "sqrt": lambda t: t.sqrt(t.tensor(V)),
    "abs": lambda t: t.abs(t.tensor(M)), "abs_int": lambda t: t.abs(t.tensor([-1, 2])),
    "exp_int": lambda t: t.exp(t.tensor([0, 1])), "pow": lambda t: t.pow(t.tensor(V), 2),
    "pow_number_base": lambda t: t.pow(2, t.tensor(V)),
    "pow_tensors": lambda t: t.pow(t.tensor(V), t.tensor(V)),
    "matmul": lambda t: t.matmul(t.tensor(M), t.tensor(M).T),
    "matmul_vec": lambda t: t.matmul(t.tensor(V), t.tensor(V)),
    "mm": lambda t: t.mm(t.tensor(M), t.tensor(M).T), "dot": lambda t: t.dot(t.tensor(V),
                                                                            t.tensor(V)),
    "sum": lambda t: t.sum(t.tensor(M)), "sum_dim": lambda t: t.sum(t.tensor(M), dim=0),
    "sum_keepdim": lambda t: t.sum(t.tensor(M), 1, keepdim=True),
    "sum_int": lambda t: t.sum(t.tensor([[1, 2], [3, 4]]), 0),
    "sum_bool": lambda t: t.sum(t.tensor(M) > 0),
    "mean": lambda t: t.mean(t.tensor(M)), "mean_dim": lambda t: t.mean(t.tensor(M), dim=1),
    "max": lambda t: t.max(t.tensor(M)), "max_dim": lambda t: t.max(t.tensor(M), dim=1)[0],
    "max_indices": lambda t: t.max(t.tensor(M), 0).indices,
    "max_other": lambda t: t.max(t.tensor(V), t.tensor(1.5)),
    "maximum": lambda t: t.maximum(t.tensor(M), t.tensor([0.0, 0.0, 2.0])),
    "minimum": lambda t: t.minimum(t.tensor(M), t.tensor(0.0)),
    "min": lambda t: t.min(t.tensor(M)), "min_dim": lambda t: t.min(t.tensor(M), dim=0)[0],
    "argmax": lambda t: t.argmax(t.tensor(M)), "argmax_dim": lambda t: t.argmax(t.tensor(M), 1),
    "argmin": lambda t: t.argmin(t.tensor(M), dim=0, keepdim=True),
    "cat": lambda t: t.cat([t.tensor(M), t.tensor(M)]),
    "cat_dim": lambda t: t.cat((t.tensor(M), t.tensor(M)), dim=1),
    "cat_promotes": lambda t: t.cat([t.tensor([1, 2]), t.tensor([0.5])]),
    "stack": lambda t: t.stack([t.tensor(V), t.tensor(V)], dim=1),
    "where": lambda t: t.where(t.tensor(M) > 0, t.tensor(M), t.zeros(2, 3)),
    "where_number": lambda t: t.where(t.tensor(M) > 0, t.tensor(M), 0.0),
    "where_int_number": lambda t: t.where(t.tensor([True, False]), t.tensor([1, 2]), 0.5),
    "flatten": lambda t: t.flatten(t.zeros(2, 3, 4), 1),
    "flatten_range": lambda t: t.flatten(t.zeros(2, 3, 4, 5), 1, 2),
    "clamp": lambda t: t.clamp(t.tensor(M), -2.0, 2.0),
    "clamp_min": lambda t: t.clamp(t.tensor(M), min=0.0),
    "clip": lambda t: t.clip(t.tensor(M), max=1.0),
    "softmax": lambda t: t.softmax(t.tensor(M), dim=1),
    "log_softmax": lambda t: t.log_softmax(t.tensor(M), dim=0),
    "norm": lambda t: t.norm(t.tensor(M)), "square": lambda t: t.square(t.tensor(M)),
    "reshape": lambda t: t.reshape(t.tensor(M), (3, 2)),
    "transpose": lambda t: t.transpose(t.tensor(M), 0, 1),
    "permute": lambda t: t.permute(t.zeros(2, 3, 4), (2, 0, 1)),
    "squeeze": lambda t: t.squeeze(t.zeros(1, 3, 1)), "unsqueeze": lambda t: t.unsqueeze(
        t.tensor(V), 0),
    "add": lambda t: t.add(t.tensor(V), t.tensor(V), alpha=2), "sub": lambda t: t.sub(
        t.tensor(V), 1), "mul": lambda t: t.mul(t.tensor(V), 3), "div": lambda t: t.div(
        t.tensor([1, 2]), 4), "neg": lambda t: t.neg(t.tensor(V)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_function_gives_torch_values_shape_and_dtype(torch, name: str) -> None:
    mine, theirs = CALLS[name](chaingrad), CALLS[name](torch)
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert mine.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert np.allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)


def test_predicates_and_comparisons() -> None:
    v = chaingrad.tensor(V)
    assert chaingrad.allclose(v, v + 1e-9) and not chaingrad.allclose(v, v + 1.0)
    assert chaingrad.equal(v, v.clone()) and not chaingrad.equal(v, v[:2])
    assert chaingrad.is_tensor(v) and not chaingrad.is_tensor(V) and chaingrad.numel(v) == 3
    assert chaingrad.is_floating_point(v)


def test_numbers_and_lists_become_tensors() -> None:
    assert chaingrad.exp(0.0).item() == 1.0 and chaingrad.sum([1, 2]).item() == 3
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' must be Tensor, not str"):
        chaingrad.exp("x")


def test_gradients_flow_through_the_functions() -> None:
    x = chaingrad.tensor(V, requires_grad=True)
    chaingrad.sum(chaingrad.exp(x) * chaingrad.pow(x, 2)).backward()
    expected = [np.exp(v) * (v * v + 2 * v) for v in V]
    assert np.allclose(x.grad.numpy(), expected)


def test_grad_modes(torch) -> None:
    assert chaingrad.is_grad_enabled()
    with chaingrad.no_grad():
        assert not chaingrad.is_grad_enabled()
        with chaingrad.enable_grad():
            assert chaingrad.is_grad_enabled()
    with chaingrad.set_grad_enabled(False):
        assert not chaingrad.is_grad_enabled()
    assert chaingrad.is_grad_enabled()
    chaingrad.set_grad_enabled(False)
    assert not chaingrad.is_grad_enabled()
    chaingrad.set_grad_enabled(True)
    assert chaingrad.is_grad_enabled()


# ---- div's rounding_mode ----


@pytest.mark.parametrize("rounding_mode", ["trunc", "floor"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_div_rounds_as_torchs_in_its_dtype(torch, rounding_mode, dtype) -> None:
    """``torch.div(x, y, rounding_mode=)``, ``Tensor.div``, ``div_`` and ``//`` give torch's
    quotients bit for bit: a float one floored as Python's ``//`` floors it (1.0 // 0.1 is
    9), by zero inf or nan; integers stay integers."""
    rng = np.random.default_rng(0)
    if dtype in (np.float32, np.float64):
        x = (rng.standard_normal(400) * 10).astype(dtype)
        y = rng.standard_normal(400).astype(dtype)
        x[:3], y[:6], x[6], y[6], y[7] = 0, 0, 1.0, 0.1, -0.0
    else:
        x = rng.integers(-30, 30, 400).astype(dtype)
        y = (rng.integers(1, 7, 400) * rng.choice([-1, 1], 400)).astype(dtype)
    calls = [lambda t, a, b: t.div(a, b, rounding_mode=rounding_mode),
             lambda t, a, b: a.div(b, rounding_mode=rounding_mode),
             lambda t, a, b: a.clone().div_(b, rounding_mode=rounding_mode),
             lambda t, a, b: t.div(a, 3, rounding_mode=rounding_mode),
             lambda t, a, b: t.div(a, 2.5, rounding_mode=rounding_mode)]
    if rounding_mode == "floor":
        calls += [lambda t, a, b: a // b, lambda t, a, b: 7 // b]
    for call in calls:
        mine = call(chaingrad, chaingrad.tensor(x), chaingrad.tensor(y))
        theirs = call(torch, torch.tensor(x), torch.tensor(y))
        assert mine.dtype.name == str(theirs.dtype).removeprefix("torch.")
        assert np.array_equal(mine.numpy(), theirs.numpy(), equal_nan=True)
        assert np.array_equal(np.signbit(mine.numpy()), np.signbit(theirs.numpy()))


@pytest.mark.parametrize("rounding_mode", ["trunc", "floor"])
def test_a_rounded_quotient_passes_back_a_zero_gradient_as_torchs(torch, rounding_mode):
    grads = []
    for t in (chaingrad, torch):
        x = t.tensor([7.0, -7.0, 2.5], requires_grad=True)
        y = t.tensor([[2.0], [-0.3]], requires_grad=True)
        q = t.div(x, y, rounding_mode=rounding_mode)
        assert q.requires_grad
        (q * x).sum().backward()
        grads.append((q.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for mine, theirs in zip(*grads):
        assert np.array_equal(mine, theirs)
    assert chaingrad.tensor([7.0]).div(2, rounding_mode="floor").grad_fn is None


def test_div_refuses_what_torch_refuses() -> None:
    with pytest.raises(RuntimeError, match="div expected rounding_mode to be one of None, "
                                           "'trunc', or 'floor' but found 'round'"):
        chaingrad.div(chaingrad.ones(2), 2, rounding_mode="round")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        chaingrad.tensor([1, 2]).div(chaingrad.tensor([1, 0]), rounding_mode="trunc")
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        chaingrad.tensor([1, 2]).div_(2)  # a true quotient does not fit in an integer tensor
