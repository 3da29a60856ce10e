"""Anomaly detection (chaingrad/anomaly.py, the switches in chaingrad/gradmode.py): the op
that made a nan or inf named at ``backward()``, each kind of cause with its message, torch's
switches, the lines that made the op under ``set_detect_anomaly(True)``; and what stays as
it was: a Value's DomainError, an optimizer's refusal."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import chaingrad as torch
from chaingrad import AnomalyError, DomainError, Value, nn, optim
from chaingrad.autograd import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)


def raises(message: str):
    return pytest.raises(AnomalyError, match=re.escape(message))


# ---- a loss that is not finite: the op that made it ----


def test_a_masked_output_with_a_gradient_given_is_no_loss() -> None:
    """``scores.backward(g)`` from scores masked with -inf, as torch runs it: the root is no
    loss, and its gradients (finite) are what the pass checks."""
    x = torch.ones((2, 3), requires_grad=True)
    mask = torch.tensor([[False, True, True], [False, False, True]])
    scores = x.masked_fill(mask, float("-inf"))
    scores.backward(torch.ones((2, 3)))
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    with raises("the loss is -inf"):  # the same, summed to one number, is a loss
        x.masked_fill(mask, float("-inf")).sum().backward()


def test_a_zero_count_bigram_names_the_log_that_made_the_loss_inf() -> None:
    """The makemore lecture's infinite loss, before smoothing."""
    counts = torch.tensor([[0.0, 3.0], [2.0, 1.0]])
    probs = counts / counts.sum(1, keepdim=True)
    w = torch.zeros((2, 2), requires_grad=True)
    xs, ys = torch.tensor([0, 1, 0]), torch.tensor([1, 0, 0])
    loss = -(probs[xs, ys] + w[xs, ys]).log().mean()
    assert loss.item() == float("inf")  # torch's number, computed without a word
    with raises("log: input 0 is 0.0 at [2] (shape (3,)): log(0.0) = -inf; the loss is inf"):
        loss.backward()
    assert w.grad is None  # a failed pass leaves every .grad as it was


def test_an_inf_made_nan_later_names_both_ops() -> None:
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with raises("log: input 0 is 0.0 at [0] (shape (2,)): log(0.0) = -inf; then * made nan "
                "of it at [0] (-inf * 0.0 = nan); the loss is nan"):
        (x.log() * 0.0).sum().backward()


def test_two_inputs_and_an_overflow_show_both_values() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with raises("/: input 0 is 2.0 and input 1 is 0.0 at [1] (shapes (2,), (2,)): "
                "2.0 / 0.0 = inf; the loss is inf"):
        (x / torch.tensor([1.0, 0.0])).sum().backward()
    with raises("*: input 0 is 1e+30 and input 1 is 1e+30 at [0]"):
        (x * 1e30 * torch.tensor([1e30, 1.0])).sum().backward()
    with raises("matmul: its output is inf at [0, 0], though its inputs (shapes (1, 2), "
                "(2, 1)) are finite: the result overflows float32; the loss is inf"):
        ((x * 1e20).reshape(1, 2) @ torch.full((2, 1), 1e20)).sum().backward()


def test_a_parameter_that_holds_nan_is_named_as_state_dict_names_it() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    with torch.no_grad():
        model[2].bias[0] = float("nan")
    with raises("the parameter `2.bias` holds nan at [0], which + reads; the loss is nan"):
        model(torch.ones((2, 3))).pow(2).mean().backward()


def test_a_fully_masked_row_of_softmax_is_nan_and_named() -> None:
    scores = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    masked = scores.masked_fill(torch.tensor([[True, False], [True, True]]), float("-inf"))
    probs = masked.softmax(-1)
    assert np.isnan(probs[1].tolist()).all() and probs[0].tolist() == [0.0, 1.0]  # torch's
    with raises("holds -inf, which where reads; then softmax made nan of it at [1, 0] "
                "(input 0 is -inf there); the loss is nan"):
        probs.sum().backward()


# ---- a gradient that is not finite: the step that made it ----


def test_a_masked_log_names_the_step_whose_gradient_is_nan() -> None:
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    loss = torch.where(x > 0, x.log(), torch.zeros(2)).sum()
    assert loss.item() == 0.0  # finite: only the gradient is not (0 / 0)
    with raises("log (backward): the gradient it gives input 0 (shape (2,)) is nan at [0], "
                "where input 0 is 0.0; the derivative is unbounded there"):
        loss.backward()


def test_a_parameter_written_after_its_use_is_named() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    loss = model(torch.ones((2, 3))).pow(2).mean()
    model[2].weight.data[0, 1] = float("nan")  # after the forward pass, before backward()
    with raises("the parameter `2.weight` holds nan at [0, 1], which matmul's output does not "
                "show: it was written after matmul used it"):
        loss.backward()


# ---- torch's switches ----


def test_set_detect_anomaly_false_lets_nan_flow_as_torch() -> None:
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    assert is_anomaly_enabled() and is_anomaly_check_nan_enabled()  # chaingrad's default
    with set_detect_anomaly(False):
        assert not is_anomaly_enabled() and not torch.is_anomaly_enabled()
        torch.where(x > 0, x.log(), torch.zeros(2)).sum().backward()
        (x.log() * 0.0).sum().backward()
    assert is_anomaly_enabled()  # restored
    assert np.isnan(x.grad[0].item()) and x.grad[1].item() == 1.0  # 1 / x, then 0 * (1 / x)
    switch = set_detect_anomaly(False)  # as a call, it stays so
    try:
        (x.log() * 0.0).sum().backward()
        assert not is_anomaly_enabled()
    finally:
        switch.__exit__(None, None, None)  # back to chaingrad's default, for the next tests
    with detect_anomaly(check_nan=False):
        assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        (x.log() * 0.0).sum().backward()


def test_detect_anomaly_shows_the_line_that_made_the_op() -> None:
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    assert "_created_at" not in x.log().__dict__  # by default nothing is recorded
    with detect_anomaly():
        y = x.log()  # the line
        with pytest.raises(AnomalyError) as error:
            (y * 0.0).sum().backward()
    assert error.value.node is y
    assert "y = x.log()  # the line" in error.value.created_at
    assert "log was made here (set_detect_anomaly(True))" in str(error.value)
    assert "chaingrad/tensor_engine" not in error.value.created_at

    @detect_anomaly()
    def step() -> None:
        assert is_anomaly_enabled() and "_created_at" in x.exp().__dict__
    step()


def test_an_anomaly_is_a_runtime_error_as_torchs() -> None:
    assert issubclass(AnomalyError, RuntimeError)


# ---- what stays as it was ----


def test_values_keep_raising_at_the_op() -> None:
    with pytest.raises(DomainError, match="log: got 0.0, needs x > 0"):
        Value(0.0).log()
    with set_detect_anomaly(False), pytest.raises(DomainError):
        Value(0.0).log()


def test_optimizers_still_refuse_a_non_finite_update() -> None:
    w = torch.tensor([0.0, 1.0], requires_grad=True)
    with set_detect_anomaly(False):
        (w.log() * 0.0).sum().backward()
    before = w.tolist()
    with pytest.raises(optim.NonFiniteGradError, match="is not finite"):
        optim.SGD([w], lr=0.1).step()
    assert w.tolist() == before


def test_a_compiled_function_runs_eagerly_where_its_output_is_not_finite() -> None:
    """chaingrad.compile's compiled node cannot say which op made an inf: the call runs
    eagerly, quietly, and backward() names the op as for any Tensor graph."""
    compiled = torch.compile(lambda x: (x.log() * 2).sum())
    assert compiled(torch.tensor([1.0, 2.0], requires_grad=True)).grad_fn.name() != "SumBackward0"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = compiled(torch.tensor([0.0, 2.0], requires_grad=True))
    assert loss.item() == float("-inf") and loss.grad_fn.name() == "SumBackward0"  # eager
    with raises("log: input 0 is 0.0 at [0] (shape (2,)): log(0.0) = -inf; the loss is -inf"):
        loss.backward()
