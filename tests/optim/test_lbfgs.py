"""chaingrad/optim/lbfgs.py: LBFGS's steps against torch.optim.LBFGS (with and without the
strong-Wolfe line search, on Tensors and on Values), its state dict both ways, its
refusals, and its pieces as pure functions."""

import math

import numpy as np
import pytest

import chaingrad
from chaingrad import Value
from chaingrad.errors import NonFiniteGradError
from chaingrad.optim import LBFGS
from chaingrad.optim.lbfgs import cubic_interpolate, lbfgs_direction, strong_wolfe

START = [-1.2, 1.0, 0.5, -0.3]

CONFIGS = [
    {},
    {"line_search_fn": "strong_wolfe"},
    {"history_size": 2},
    {"history_size": 2, "line_search_fn": "strong_wolfe"},
    {"lr": 0.3, "max_iter": 4},
    {"max_iter": 3, "max_eval": 5, "line_search_fn": "strong_wolfe"},
    {"tolerance_change": 1e-3, "line_search_fn": "strong_wolfe"},
    {"tolerance_grad": 1.0},
]
IDS = ["-".join(f"{k}={v}" for k, v in kw.items()) or "defaults" for kw in CONFIGS]


def rosenbrock(x):
    """Rosenbrock's valley in 2 pairs, written once for torch's tensors, ours and Values."""
    return (sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in (0, 2))
            + (x[1] * x[3]) ** 2)


def _run(lib, kwargs, steps, x=None, opt=None):
    """``steps`` calls of ``opt.step(closure)`` on ``rosenbrock``; each call's returned
    loss, the point after it and the state's counters."""
    if x is None:
        x = lib.tensor(START, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x], **kwargs)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    path = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[x]
        path.append((loss.item(), x.tolist(), state["func_evals"], state["n_iter"]))
    return path, x, opt


def _agree(ours, theirs, rtol=1e-6):
    """The same counters, and the same losses and points within float64 rounding as the
    valley's many iterations amplify it: torch's ``add_(d, alpha=t)`` rounds once (a fused
    multiply-add), numpy's ``x + t * d`` twice, a difference of one bit at the first step
    (the first steps agree to 1e-15) that twenty iterations later is near 1e-12, and
    after 40 (2 steps) near 1e-8."""
    for (loss, x, evals, n_iter), (t_loss, t_x, t_evals, t_n_iter) in zip(ours, theirs,
                                                                         strict=True):
        assert (evals, n_iter) == (t_evals, t_n_iter)
        assert loss == pytest.approx(t_loss, rel=rtol, abs=1e-300)
        np.testing.assert_allclose(x, t_x, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_steps_match_torchs(kwargs, torch):
    _agree(_run(chaingrad, kwargs, 2)[0], _run(torch, kwargs, 2)[0])


def test_the_first_iterations_match_torchs_to_the_last_bits(torch):
    for kwargs in ({"max_iter": 5}, {"max_iter": 5, "line_search_fn": "strong_wolfe"}):
        _agree(_run(chaingrad, kwargs, 1)[0], _run(torch, kwargs, 1)[0], rtol=1e-14)


@pytest.mark.parametrize("kwargs", CONFIGS[:4], ids=IDS[:4])
def test_steps_on_values_match_torchs(kwargs, torch):
    ps = [Value(v) for v in START]
    opt = LBFGS(ps, **kwargs)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(ps)
        loss.backward()
        return loss

    expected = _run(torch, kwargs, 2)[0]
    for loss, x, _, _ in expected:
        assert opt.step(closure).data == pytest.approx(loss, rel=1e-6)
        np.testing.assert_allclose([p.data for p in ps], x, rtol=1e-6, atol=1e-12)


def test_a_float32_model_trains_as_torchs(torch):
    """Several parameters of float32 (one flat vector, as torch's), a model's loss."""
    import chaingrad.nn as cnn

    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
    ours = cnn.Sequential(cnn.Linear(3, 5), cnn.Tanh(), cnn.Linear(5, 1))
    ours.load_state_dict(theirs.state_dict())
    inputs = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
    targets = np.sin(inputs.sum(1, keepdims=True))
    losses = {}
    for lib, model in ((torch, theirs), (chaingrad, ours)):
        opt = lib.optim.LBFGS(model.parameters(), history_size=5, max_iter=5,
                              line_search_fn="strong_wolfe")
        x, y = lib.tensor(inputs), lib.tensor(targets)

        def closure(opt=opt, model=model, x=x, y=y):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss

        losses[lib] = [opt.step(closure).item() for _ in range(3)]
        assert opt.state[next(iter(model.parameters()))]["d"].dtype == lib.float32 \
            if lib is torch else True
    np.testing.assert_allclose(losses[chaingrad], losses[torch], rtol=1e-4)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):  # float32 rounding,
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-3)  # x15
    assert losses[chaingrad][-1] < losses[chaingrad][0]


@pytest.mark.parametrize("first", ["torch", "chaingrad"])
@pytest.mark.parametrize("kwargs", [CONFIGS[0], CONFIGS[3]], ids=[IDS[0], IDS[3]])
def test_state_dict_carries_the_history_across_the_import_line(kwargs, first, torch,
                                                               state_converter):
    """Two steps in one library, the point and the state moved to the other, two more in
    both: the same numbers (the history, step length and counters came along)."""
    libraries = {"torch": torch, "chaingrad": chaingrad}
    other = "chaingrad" if first == "torch" else "torch"
    convert = state_converter.to_chaingrad if first == "torch" else state_converter.to_torch
    _, x, opt = _run(libraries[first], kwargs, 2)
    saved = opt.state_dict()
    assert list(saved["state"]) == [0] and saved["param_groups"][0]["params"] == [0]
    assert {"d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss",
            "func_evals", "n_iter"} <= set(saved["state"][0])
    lib = libraries[other]
    y = lib.tensor(x.tolist(), dtype=lib.float64, requires_grad=True)
    resumed = lib.optim.LBFGS([y], **kwargs)
    resumed.load_state_dict(convert(saved))
    _agree(_run(lib, kwargs, 2, y, resumed)[0],
           _run(libraries[first], kwargs, 2, x, opt)[0])


def test_state_dict_has_torchs_layout(torch):
    _, _, ours = _run(chaingrad, CONFIGS[1], 2)
    _, _, theirs = _run(torch, CONFIGS[1], 2)
    mine, its = ours.state_dict(), theirs.state_dict()
    assert mine["param_groups"] == its["param_groups"]
    assert list(mine["state"][0]) == list(its["state"][0])
    for key in ("d", "prev_flat_grad", "H_diag"):
        assert isinstance(mine["state"][0][key], chaingrad.Tensor)
        assert mine["state"][0][key].shape == tuple(its["state"][0][key].shape)
    for key in ("old_dirs", "old_stps", "ro"):
        assert len(mine["state"][0][key]) == len(its["state"][0][key])
    assert mine["state"][0]["func_evals"] == its["state"][0]["func_evals"]


def test_one_group_only_and_torchs_line_searches_only():
    x = chaingrad.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options "
                                         r"\(parameter groups\)$"):
        LBFGS([{"params": [x]}, {"params": [chaingrad.tensor([2.0], requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="^only 'strong_wolfe' is supported$"):
        LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="Invalid learning rate: -1.0"):
        LBFGS([x], lr=-1)
    with pytest.raises(TypeError, match="closure"):
        LBFGS([x]).step()  # type: ignore[call-arg]


def test_defaults_are_torchs(torch):
    x = chaingrad.tensor([1.0], requires_grad=True)
    t = torch.tensor([1.0], requires_grad=True)
    assert LBFGS([x], max_iter=8).defaults == torch.optim.LBFGS([t], max_iter=8).defaults
    assert repr(LBFGS([x])) == repr(torch.optim.LBFGS([t]))


def test_a_nan_gradient_puts_the_parameters_and_the_state_back():
    x = chaingrad.tensor(START, dtype=chaingrad.float64, requires_grad=True)
    opt = LBFGS([("x", x)], line_search_fn="strong_wolfe", max_iter=2)
    calls, poisoned = [], [None]

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        calls.append(loss.item())
        if len(calls) == poisoned[0]:
            loss = loss * math.nan
        loss.backward()
        return loss

    opt.step(closure)
    start, state = x.tolist(), dict(opt.state[x])
    poisoned[0] = len(calls) + 2  # in the second step's line search: the parameters moved
    assert state["n_iter"] > 0 and state["old_dirs"] is not None

    with chaingrad.autograd.set_detect_anomaly(False), pytest.raises(
            NonFiniteGradError, match=r"LBFGS\.step: the gradient of parameter x is not "
                                      r"finite; the parameters were put back"):
        opt.step(closure)
    assert x.tolist() == start and len(calls) == poisoned[0]
    assert opt.state[x] == state  # the counters and the history too


def test_an_optimal_point_returns_at_once():
    x = chaingrad.tensor([1.0, 1.0], dtype=chaingrad.float64, requires_grad=True)
    opt = LBFGS([x])

    def closure():
        opt.zero_grad()
        loss = ((x - 1) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0 and x.tolist() == [1.0, 1.0]
    assert opt.state[x] == {"func_evals": 1, "n_iter": 0}


def test_cubic_interpolate():
    # the cubic through f = x**3 - 3x at -2 and 2 (slopes 9 and 9): its minimum at 1
    assert cubic_interpolate(-2.0, -2.0, 9.0, 2.0, 2.0, 9.0) == pytest.approx(1.0)
    assert cubic_interpolate(2.0, 2.0, 9.0, -2.0, -2.0, 9.0) == pytest.approx(1.0)
    assert cubic_interpolate(-2.0, -2.0, 9.0, 2.0, 2.0, 9.0, bounds=(1.5, 3.0)) == 1.5
    # no real minimum (d1**2 < g1 g2): the middle of the bounds
    assert cubic_interpolate(0.0, 0.0, 1.0, 1.0, 5 / 3, 4.0) == 0.5


def test_strong_wolfe_meets_both_conditions():
    a = np.array([1.0, 10.0])

    def evaluate(t):  # a quadratic valley from x = (1, 1) along d = (-1, -1)
        x = np.array([1.0, 1.0]) - t
        return float((a * x * x).sum() / 2), a * x

    d = np.array([-1.0, -1.0])
    f0, g0 = evaluate(0.0)
    for t0 in (0.01, 1.0, 10.0):
        f, g, t, evals = strong_wolfe(evaluate, t0, d, f0, g0, g0.dot(d))
        assert f <= f0 + 1e-4 * t * g0.dot(d) and abs(g.dot(d)) <= -0.9 * g0.dot(d)
        assert (f, g.tolist()) == (evaluate(t)[0], evaluate(t)[1].tolist()) and evals <= 25


def test_lbfgs_direction_is_the_inverse_hessian_on_a_quadratic():
    """With a history of conjugate steps spanning a quadratic's space (as exact line
    searches make them), the two-loop recursion gives the Newton step."""
    h = np.array([[3.0, 1.0], [1.0, 2.0]])
    steps = [np.array([1.0, 0.0]), np.array([1.0, -3.0])]  # s_0 . h s_1 = 0
    changes = [h @ s for s in steps]
    ro = [1.0 / y.dot(s) for y, s in zip(changes, steps, strict=True)]
    g = np.array([0.5, -1.0])
    d, al = lbfgs_direction(g, changes, steps, ro, changes[-1].dot(steps[-1]) /
                            changes[-1].dot(changes[-1]), [None] * 3)
    np.testing.assert_allclose(d, -np.linalg.solve(h, g), rtol=1e-12)
    assert al[2] is None and al[0] is not None
