"""chaingrad/optim/optimizer.py and every optimizer built on it (sgd.py, adam.py, adamw.py,
rmsprop.py): trajectories against torch.optim from one table, argument checks, bad
gradients, parameter groups, and the update rules as pure functions."""

import math
import random
import re

import numpy as np
import pytest

import chaingrad.optim
from chaingrad import Value
from chaingrad.nn import MLP
from chaingrad.optim import (
    SGD,
    Adam,
    AdamW,
    CosineSchedule,
    LinearSchedule,
    NonFiniteGradError,
    RMSprop,
)
from chaingrad.optim.adam import adam
from chaingrad.optim.rmsprop import rmsprop
from chaingrad.optim.sgd import sgd

START = [0.5, -1.5, 2.0, 0.25, -0.75]
COEFS = [1.0, 2.0, -0.5, 3.0, 0.7]

# (chaingrad class, torch.optim name, keyword arguments shared by both)
CONFIGS = [
    (SGD, "SGD", {"lr": 0.05}),
    (SGD, "SGD", {"lr": 0.05, "momentum": 0.9}),
    (SGD, "SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3}),
    (SGD, "SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    (SGD, "SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1}),
    (SGD, "SGD", {"lr": 0.05, "weight_decay": 0.3}),
    (Adam, "Adam", {"lr": 0.1}),
    (Adam, "Adam", {"lr": 0.1, "betas": (0.5, 0.9), "eps": 1e-6}),
    (Adam, "Adam", {"lr": 0.1, "weight_decay": 0.2}),
    (Adam, "Adam", {"lr": 0.1, "betas": (0.0, 0.0)}),
    (AdamW, "AdamW", {"lr": 0.1}),
    (AdamW, "AdamW", {"lr": 0.1, "weight_decay": 0.5, "betas": (0.8, 0.99)}),
    (SGD, "SGD", {"lr": 0.002, "momentum": 0.5, "maximize": True}),
    (Adam, "Adam", {"lr": 0.1, "amsgrad": True}),
    (Adam, "Adam", {"lr": 0.1, "weight_decay": 0.2, "decoupled_weight_decay": True}),
    (AdamW, "AdamW", {"lr": 0.1, "amsgrad": True, "maximize": True}),
    (RMSprop, "RMSprop", {}),
    (RMSprop, "RMSprop", {"lr": 0.02, "alpha": 0.9, "weight_decay": 0.1}),
    (RMSprop, "RMSprop", {"lr": 0.02, "momentum": 0.8}),
    (RMSprop, "RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
    (RMSprop, "RMSprop", {"lr": 0.01, "centered": True, "maximize": True}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for _, name, kw in CONFIGS]


def objective(ps, c, tanh, sin):
    """A small non-convex problem written once for Values and for torch tensors."""
    total = 0.0
    for p, k in zip(ps, c, strict=True):
        total = total + (k * p - 1) ** 2
    return total + tanh(ps[0] * ps[1]) + sin(ps[2]) * ps[3] + ps[4] ** 4 / 4


def torch_trajectory(name, kwargs, steps, schedule=None):
    torch = pytest.importorskip("torch")
    ps = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in START]
    opt = getattr(torch.optim, name)(ps, **kwargs)
    path = []
    for k in range(steps):
        if schedule is not None:
            for group in opt.param_groups:
                group["lr"] = schedule(k)
        opt.zero_grad()
        objective(ps, COEFS, torch.tanh, torch.sin).backward()
        opt.step()
        path.append([p.item() for p in ps])
    return path


@pytest.mark.parametrize(("cls", "name", "kwargs"), CONFIGS, ids=IDS)
def test_value_trajectory_matches_torch(cls, name, kwargs):
    expected = torch_trajectory(name, kwargs, steps=20)
    ps = [Value(x) for x in START]
    opt = cls(ps, **kwargs)
    for k in range(20):
        opt.zero_grad()
        objective(ps, COEFS, Value.tanh, Value.sin).backward()
        opt.step()
        assert [p.data for p in ps] == pytest.approx(expected[k], abs=1e-10, rel=0)


class ArrayParam:
    """What a Tensor parameter looks like to an optimizer (the node protocol of
    ``chaingrad.autodiff``): an ndarray ``_value`` and ``grad``."""

    def __init__(self, data):
        self._value = np.array(data, dtype=np.float64)
        self.grad = np.zeros_like(self._value)


@pytest.mark.parametrize(("cls", "name", "kwargs"), CONFIGS, ids=IDS)
def test_array_trajectory_matches_torch_and_updates_in_place(cls, name, kwargs, torch):
    expected = torch_trajectory(name, kwargs, steps=20)
    param = ArrayParam(START)
    storage = param._value
    opt = cls([param], **kwargs)
    for k in range(20):
        opt.zero_grad()
        x = torch.tensor(param._value, requires_grad=True)
        objective(list(x), COEFS, torch.tanh, torch.sin).backward()
        param.grad = x.grad.numpy().copy()
        opt.step()
        param.grad[...] = 1e6  # the optimizer must not have kept a reference to it
        assert param._value is storage
        np.testing.assert_allclose(param._value, expected[k], atol=1e-10, rtol=0)


@pytest.mark.parametrize("schedule", ["linear", "cosine"])
def test_scheduled_trajectory_matches_torch(schedule):
    """A rate a schedule changes between steps is the one the next step uses, as torch's."""
    cls = LinearSchedule if schedule == "linear" else CosineSchedule
    ps = [Value(x) for x in START]
    opt = SGD(ps, lr=0.2, momentum=0.9)
    sched = cls(opt, start=0.2, end=0.02, steps=15)
    expected = torch_trajectory("SGD", {"lr": 0.2, "momentum": 0.9}, 20, schedule=sched.lr_at)
    for k in range(20):
        opt.zero_grad()
        objective(ps, COEFS, Value.tanh, Value.sin).backward()
        opt.step()
        sched.step()
        assert [p.data for p in ps] == pytest.approx(expected[k], abs=1e-10, rel=0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda ps: SGD(ps, lr=-1.0), "Invalid learning rate: -1.0"),
        (lambda ps: SGD(ps, lr=float("nan")), "Invalid learning rate: nan"),
        (lambda ps: SGD(ps, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
        (lambda ps: SGD(ps, lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1.0"),
        (lambda ps: SGD(ps, lr=0.1, dampening=-1), "Invalid dampening value: -1.0"),
        (lambda ps: SGD(ps, lr=0.1, nesterov=True), "nesterov=True needs momentum > 0"),
        (lambda ps: Adam(ps, lr=-0.1), "Invalid learning rate: -0.1"),
        (lambda ps: Adam(ps, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (lambda ps: Adam(ps, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        (lambda ps: Adam(ps, eps=-1e-8), "Invalid epsilon value: -1e-08"),
        (lambda ps: AdamW(ps, weight_decay=-0.01), "Invalid weight_decay value: -0.01"),
        (lambda ps: SGD([], lr=0.1), "empty parameter list"),
        (lambda ps: SGD(ps + ps[:1], lr=0.1), "parameter 2 appears more than once"),
    ],
)
def test_invalid_arguments_raise_value_error(make, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        make([Value(1.0), Value(2.0)])


def test_wrong_argument_types_raise_type_error():
    with pytest.raises(TypeError, match="lr must be a number"):
        SGD([Value(1.0)], lr="0.1")
    with pytest.raises(TypeError, match="params must be an iterable"):
        SGD(Value(1.0), lr=0.1)
    with pytest.raises(TypeError, match=r"must be a node with \._value and \.grad \(a Value or "
                                        r"a Tensor\), got float"):
        SGD([1.0], lr=0.1)
    with pytest.raises(TypeError, match="betas must be a pair"):
        Adam([Value(1.0)], betas=0.9)


def test_setting_a_bad_lr_later_is_refused():
    opt = SGD([Value(1.0)], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -2.0"):
        opt.lr = -2.0
    assert opt.lr == 0.1


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_gradient_changes_nothing(cls, bad):
    ps = [Value(x) for x in START]
    opt = cls(ps, lr=0.1, **({"momentum": 0.9} if cls is SGD else {}))
    objective(ps, COEFS, Value.tanh, Value.sin).backward()
    opt.step()  # so that there is optimizer state to keep too
    before = [p.data for p in ps]
    state = {p: dict(s) for p, s in opt.state.items()}
    opt.zero_grad()
    objective(ps, COEFS, Value.tanh, Value.sin).backward()
    ps[3].grad = bad
    with pytest.raises(NonFiniteGradError, match=rf"parameter 3 of 5 is {bad}; no parameter "
                                                 r"was changed \(pass model\.named_parameters"):
        opt.step()
    assert [p.data for p in ps] == before
    assert opt.state == state


def test_non_finite_gradient_is_named_with_named_parameters():
    random.seed(0)
    model = MLP(2, [3, 1])
    opt = SGD(model.named_parameters(), lr=0.1)
    assert len(opt.params) == len(model.parameters())
    before = [p.data for p in model.parameters()]
    model.layers[0].neurons[2].w[1].grad = math.nan
    with pytest.raises(NonFiniteGradError, match=r"parameter 0\.weight\[2, 1\] is nan") as error:
        opt.step()
    assert "named_parameters" not in str(error.value)  # no hint when the names are there
    assert [p.data for p in model.parameters()] == before


def test_non_finite_array_gradient_is_reported_with_a_count():
    good, bad = ArrayParam([1.0, 2.0]), ArrayParam([3.0, 4.0, 5.0])
    bad.grad[:] = [np.nan, 1.0, np.inf]
    opt = Adam([("layer.weight", good), ("layer.bias", bad)], lr=0.1)
    good.grad[:] = 1.0
    with pytest.raises(NonFiniteGradError, match=r"layer\.bias is not finite \(2 of 3"):
        opt.step()
    np.testing.assert_array_equal(good._value, [1.0, 2.0])


def test_an_update_that_overflows_changes_nothing():
    ps = [Value(1.0), Value(1e300)]
    opt = SGD(ps, lr=1e10)
    ps[0].grad, ps[1].grad = 1.0, 1e300
    with pytest.raises(NonFiniteGradError, match=r"update of parameter 1 of 2 is not finite "
                                                 r"\(is lr=1e\+10 too large\?\)"):
        opt.step()
    assert [p.data for p in ps] == [1.0, 1e300]


def test_zero_grad_and_missing_gradients():
    value, array = Value(1.0), ArrayParam([1.0, 2.0])
    value.grad, array.grad = 3.0, np.array([1.0, 1.0])
    opt = SGD([value, array], lr=0.5)
    opt.zero_grad()
    assert value.grad == 0.0
    assert array.grad is None  # as a Tensor's gradient starts, and torch's set_to_none
    value.grad = 2.0  # the array, with no gradient, is skipped, as in torch
    opt.step()
    assert value.data == 0.0
    np.testing.assert_array_equal(array._value, [1.0, 2.0])


def test_an_array_update_that_overflows_raises_without_numpy_warnings():
    import warnings

    param = ArrayParam([1.0, 2.0])
    param._value = param._value.astype(np.float32)
    param.grad = np.ones(2, np.float32)
    opt = Adam([("w", param)], lr=1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the test
        with pytest.raises(NonFiniteGradError, match=r"update of parameter w is not finite"):
            opt.step()
    np.testing.assert_array_equal(param._value, [1.0, 2.0])


@pytest.mark.parametrize(("grad", "error", "message"), [
    (np.ones(1), ValueError, r"parameter w has shape \(1,\), expected \(3,\) \(the parameter's; "
                             "a gradient is never broadcast\\); no parameter was changed"),
    (np.ones((2, 3)), ValueError, r"has shape \(2, 3\), expected \(3,\)"),
    (np.ones(()), ValueError, r"has shape \(\), expected \(3,\)"),
    (np.ones(3) * 1j, TypeError, "parameter w must be an array of real numbers, got complex128"),
    (np.ones(3, bool), TypeError, "must be an array of real numbers, got bool"),
    (np.array(["1", "2", "3"]), TypeError, "must be an array of real numbers, got <U1"),
    ([1.0, 2.0, 3.0], TypeError, "must be an array of real numbers, got list"),
], ids=["broadcast 1", "broadcast rows", "scalar", "complex", "bool", "text", "list"])
@pytest.mark.parametrize("cls", [SGD, Adam])
def test_a_gradient_that_does_not_fit_its_parameter_changes_nothing(cls, grad, error, message):
    good, param = ArrayParam([1.0, 2.0]), ArrayParam([1.0, 2.0, 3.0])
    good.grad, param.grad = np.ones(2), grad
    opt = cls([("v", good), ("w", param)], lr=0.1)
    with pytest.raises(error, match=message):
        opt.step()
    assert good._value.tolist() == [1.0, 2.0] and param._value.tolist() == [1.0, 2.0, 3.0]
    assert opt.state == {}


@pytest.mark.parametrize(("grad", "got"), [(1j, "complex 1j"), (True, "bool True"),
                                           ("0.5", "str '0.5'"), (np.ones(2), "ndarray")])
def test_a_values_gradient_must_be_a_real_number(grad, got):
    x = Value(1.0)
    x.grad = grad
    with pytest.raises(TypeError, match=f"the gradient of parameter 0 of 1 must be a real number "
                                        f"like its data, got {re.escape(got)}"):
        SGD([x], lr=0.1).step()
    assert x.data == 1.0


def _torch_and_ours(torch):
    """A torch model and the same in chaingrad, with the same weights, in float64: Adam's
    first steps divide by the square root of tiny second moments, which in float32 can
    amplify rounding past any fixed tolerance (1 run in ~20 did, from torch's random init)."""
    import chaingrad.nn as cnn

    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                 torch.nn.Linear(4, 1)).double()
    ours = cnn.Sequential(cnn.Linear(3, 4), cnn.Tanh(), cnn.Linear(4, 1)).double()
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours


def test_param_groups_state_and_printed_form_are_torchs(torch):
    from chaingrad.tensor_engine import Tensor

    theirs, ours = _torch_and_ours(torch)
    x = np.linspace(-1, 1, 15).reshape(5, 3)
    for cls in ("SGD", "Adam", "AdamW", "RMSprop"):
        t_opt = getattr(torch.optim, cls)([{"params": theirs[0].parameters()},
                                           {"params": theirs[2].parameters(), "lr": 0.05}],
                                          lr=0.01)
        c_opt = getattr(chaingrad.optim, cls)([{"params": ours[0].parameters()},
                                               {"params": ours[2].parameters(), "lr": 0.05}],
                                              lr=0.01)
        assert repr(c_opt) == repr(t_opt)
        assert c_opt.defaults == t_opt.defaults
        for step in range(6):
            if step == 3:  # a group's lr changed between steps, as a learner does
                t_opt.param_groups[1]["lr"] = c_opt.param_groups[1]["lr"] = 0.2
            for opt, model, inp in ((t_opt, theirs, torch.tensor(x)), (c_opt, ours, Tensor(x))):
                def closure(opt=opt, model=model, inp=inp):
                    opt.zero_grad()
                    loss = (model(inp) ** 2).sum()
                    loss.backward()
                    return loss
                assert opt.step(closure) is not None
        for (name, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10,
                                       atol=1e-12, err_msg=f"{cls} {name}")
            assert set(c_opt.state[p]) == set(t_opt.state[q]), cls


def test_add_param_group_and_named_parameters(torch):
    theirs, ours = _torch_and_ours(torch)
    opt = SGD(ours[0].named_parameters(), lr=0.1, momentum=0.9)
    t_opt = torch.optim.SGD(theirs[0].named_parameters(), lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["param_names"] == t_opt.param_groups[0]["param_names"]
    opt.add_param_group({"params": ours[2].parameters(), "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9  # the defaults fill in
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": ours[2].parameters()})
    opt.lr = 0.3  # chaingrad's schedules set every group's rate
    assert [g["lr"] for g in opt.param_groups] == [0.3, 0.3]
    with pytest.raises(NotImplementedError, match=r"Adam\(fused=True\) is not in chaingrad yet"):
        Adam(ours.parameters(), fused=True)


def test_zero_grad_of_tensors_sets_none_or_zeroes_in_place(torch):
    from chaingrad.tensor_engine import Tensor

    _, ours = _torch_and_ours(torch)
    opt = SGD(ours.parameters())
    assert opt.defaults["lr"] == 1e-3  # torch's default
    ours(Tensor(np.ones((2, 3), dtype=np.float32))).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(not np.asarray(p.grad).any() for p in ours.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in ours.parameters())


def test_update_rules_are_pure_functions():
    x, g = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    before = (x.copy(), g.copy())
    state = {}
    for rule, kwargs in [
        (sgd, {"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0.1,
               "nesterov": True, "maximize": False}),
        (adam, {"lr": 0.1, "betas": (0.9, 0.99), "eps": 1e-8, "weight_decay": 0,
                "amsgrad": True, "maximize": False, "decoupled_weight_decay": False}),
        (rmsprop, {"lr": 0.1, "alpha": 0.9, "eps": 1e-8, "weight_decay": 0, "momentum": 0.5,
                   "centered": True, "maximize": False})]:
        new_x, new_state = rule(x, g, state, **kwargs)
        again = rule(x, g, state, **kwargs)
        np.testing.assert_array_equal(new_x, again[0])
        assert state == {} and new_state
        np.testing.assert_array_equal(x, before[0])
        np.testing.assert_array_equal(g, before[1])
