"""chaingrad/optim/optimizer.py and every optimizer built on it (sgd.py, adam.py, adamw.py,
rmsprop.py, adagrad.py, adadelta.py): trajectories against torch.optim from one table,
argument checks, bad gradients, parameter groups, the update rules as pure functions, and
state dicts in torch's layout that carry training across to torch and back."""

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
    Adadelta,
    Adagrad,
    Adam,
    AdamW,
    CosineSchedule,
    LinearSchedule,
    NonFiniteGradError,
    RMSprop,
)
from chaingrad.optim.adadelta import adadelta
from chaingrad.optim.adagrad import adagrad
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
    (Adagrad, "Adagrad", {}),
    (Adagrad, "Adagrad", {"lr": 0.3, "lr_decay": 0.05, "weight_decay": 0.1}),
    (Adagrad, "Adagrad", {"lr": 0.2, "initial_accumulator_value": 0.5, "eps": 1e-3}),
    (Adagrad, "Adagrad", {"lr": 0.01, "maximize": True}),
    (Adadelta, "Adadelta", {}),
    (Adadelta, "Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-3, "weight_decay": 0.2}),
    (Adadelta, "Adadelta", {"rho": 0.0}),
    (Adadelta, "Adadelta", {"lr": 0.01, "rho": 1.0}),
    (Adadelta, "Adadelta", {"maximize": True}),
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
        (lambda ps: Adagrad(ps, lr_decay=-1), "Invalid lr_decay value: -1.0"),
        (lambda ps: Adagrad(ps, initial_accumulator_value=-1),
         "Invalid initial_accumulator_value value: -1.0"),
        (lambda ps: Adagrad(ps, eps=-1), "Invalid epsilon value: -1.0"),
        (lambda ps: Adagrad(ps, weight_decay=-1), "Invalid weight_decay value: -1.0"),
        (lambda ps: Adadelta(ps, rho=1.5), "Invalid rho value: 1.5"),
        (lambda ps: Adadelta(ps, lr=-1), "Invalid learning rate: -1.0"),
        (lambda ps: Adadelta(ps, eps=-1), "Invalid epsilon value: -1.0"),
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
    for cls in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta"):
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
                   "centered": True, "maximize": False}),
        (adagrad, {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1,
                   "initial_accumulator_value": 0.1, "eps": 1e-10, "maximize": False}),
        (adadelta, {"lr": 1.0, "rho": 0.9, "eps": 1e-6, "weight_decay": 0.1,
                    "maximize": True})]:
        new_x, new_state = rule(x, g, state, **kwargs)
        again = rule(x, g, state, **kwargs)
        np.testing.assert_array_equal(new_x, again[0])
        assert state == {} and new_state
        np.testing.assert_array_equal(x, before[0])
        np.testing.assert_array_equal(g, before[1])


# ---- state_dict() and load_state_dict(): torch's layout, both ways ----

# (torch.optim name, keyword arguments): each optimizer with every kind of state it keeps
STATEFUL = [
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1}),
    ("Adadelta", {"lr": 1.0, "weight_decay": 0.01}),
]
STATEFUL_IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in STATEFUL]


def _train(model, opt, inputs, tensor, steps):
    """``steps`` optimizer steps on a small regression; the losses as floats."""
    x = tensor(inputs)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - 0.5) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _groups(model):
    """Two parameter groups, the second at its own rate, as a learner writes them."""
    return [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.02}]


@pytest.mark.parametrize(("name", "kwargs"), STATEFUL, ids=STATEFUL_IDS)
def test_state_dict_is_torchs_layout_keys_and_dtypes(name, kwargs, torch):
    theirs, ours = _torch_and_ours(torch)
    theirs, ours = theirs.float(), ours.float()
    inputs = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    t_opt = getattr(torch.optim, name)(_groups(theirs), **kwargs)
    c_opt = getattr(chaingrad.optim, name)(_groups(ours), **kwargs)
    for t_state, c_state in ((t_opt.state_dict(), c_opt.state_dict()), (None, None)):
        if t_state is None:  # then after three steps
            _train(theirs, t_opt, inputs, torch.tensor, 3)
            _train(ours, c_opt, inputs, chaingrad.tensor, 3)
            t_state, c_state = t_opt.state_dict(), c_opt.state_dict()
        assert list(c_state) == ["state", "param_groups"]
        assert c_state["param_groups"] == t_state["param_groups"]
        assert [list(g) for g in c_state["param_groups"]] == \
               [list(g) for g in t_state["param_groups"]]  # 'params' last, as torch's
        assert list(c_state["state"]) == list(t_state["state"])
        for i, t_entries in t_state["state"].items():
            c_entries = c_state["state"][i]
            assert list(c_entries) == list(t_entries), (name, i)
            for key, t_value in t_entries.items():
                c_value = c_entries[key]
                if t_value is None:
                    assert c_value is None
                    continue
                assert isinstance(c_value, chaingrad.Tensor), (name, i, key)
                assert str(c_value.dtype).split(".")[-1] == str(t_value.dtype).split(".")[-1]
                assert c_value.shape == tuple(t_value.shape)
                np.testing.assert_allclose(c_value.numpy(), t_value.numpy(), rtol=1e-5,
                                           atol=1e-6, err_msg=f"{name} {i} {key}")


def _resumed(name, kwargs, torch, first, converter):
    """Train 3 steps with ``first`` (``"torch"`` or ``"chaingrad"``), move the model and
    the optimizer state to the other library through state dicts converted tensor by
    tensor, then train 3 more steps in both: the two later runs' losses and weights."""
    theirs, ours = _torch_and_ours(torch)
    inputs = np.linspace(-1, 1, 15).reshape(5, 3)
    t_opt = getattr(torch.optim, name)(_groups(theirs), **kwargs)
    c_opt = getattr(chaingrad.optim, name)(_groups(ours), **kwargs)
    if first == "torch":
        _train(theirs, t_opt, inputs, torch.tensor, 3)
        ours.load_state_dict(converter.to_chaingrad(theirs.state_dict()))
        c_opt.load_state_dict(converter.to_chaingrad(t_opt.state_dict()))
    else:
        _train(ours, c_opt, inputs, chaingrad.tensor, 3)
        theirs.load_state_dict(converter.to_torch(ours.state_dict()))
        t_opt.load_state_dict(converter.to_torch(c_opt.state_dict()))
    t_losses = _train(theirs, t_opt, inputs, torch.tensor, 3)
    c_losses = _train(ours, c_opt, inputs, chaingrad.tensor, 3)
    return (t_losses, [p.detach().numpy() for p in theirs.parameters()],
            c_losses, [p.detach().numpy() for p in ours.parameters()])


@pytest.mark.parametrize("first", ["torch", "chaingrad"])
@pytest.mark.parametrize(("name", "kwargs"), STATEFUL, ids=STATEFUL_IDS)
def test_training_resumed_across_the_import_line_continues_with_torchs_numbers(
        name, kwargs, first, torch, state_converter):
    t_losses, t_params, c_losses, c_params = _resumed(name, kwargs, torch, first,
                                                      state_converter)
    np.testing.assert_allclose(c_losses, t_losses, rtol=1e-12, atol=1e-14)
    for c, t in zip(c_params, t_params, strict=True):
        np.testing.assert_allclose(c, t, rtol=1e-10, atol=1e-12)


def test_resuming_without_the_optimizer_state_would_differ(torch, state_converter):
    """The test above tells a resumed state from a fresh one: Adam's step count matters."""
    theirs, ours = _torch_and_ours(torch)
    inputs = np.linspace(-1, 1, 15).reshape(5, 3)
    t_opt = torch.optim.Adam(theirs.parameters(), lr=0.05)
    _train(theirs, t_opt, inputs, torch.tensor, 3)
    ours.load_state_dict(state_converter.to_chaingrad(theirs.state_dict()))
    fresh = Adam(ours.parameters(), lr=0.05)
    assert _train(ours, fresh, inputs, chaingrad.tensor, 3) != pytest.approx(
        _train(theirs, t_opt, inputs, torch.tensor, 3), rel=1e-6)


def test_torchs_own_tensors_load_too_and_are_copied(torch):
    theirs, ours = _torch_and_ours(torch)
    inputs = np.linspace(-1, 1, 15).reshape(5, 3)
    t_opt = torch.optim.Adam(theirs.parameters(), lr=0.05)
    _train(theirs, t_opt, inputs, torch.tensor, 2)
    saved = t_opt.state_dict()
    opt = Adam(ours.parameters(), lr=0.5)
    opt.load_state_dict(saved)  # torch's tensors as they are: numpy reads them
    first = ours[0].weight
    assert opt.state[first]["step"] == 2 and opt.param_groups[0]["lr"] == 0.05
    assert opt.state[first]["exp_avg"].dtype == np.float64
    saved["state"][0]["exp_avg"].zero_()  # the optimizer holds its own copy
    saved["param_groups"][0]["lr"] = 1.0
    assert np.abs(opt.state[first]["exp_avg"]).sum() > 0 and opt.lr == 0.05
    assert opt.param_groups[0]["params"][0] is first


def test_a_state_of_float64_loads_into_float32_parameters_as_float32(torch, state_converter):
    theirs, ours = _torch_and_ours(torch)
    ours = ours.float()
    t_opt = torch.optim.RMSprop(theirs.parameters(), momentum=0.5)
    _train(theirs, t_opt, np.ones((2, 3)), torch.tensor, 1)
    opt = RMSprop(ours.parameters(), momentum=0.5)
    opt.load_state_dict(state_converter.to_chaingrad(t_opt.state_dict()))
    assert {s["momentum_buffer"].dtype for s in opt.state.values()} == {np.dtype(np.float32)}
    assert opt.state_dict()["state"][0]["step"].dtype == chaingrad.float32


def test_a_state_dict_that_does_not_fit_is_refused_in_torchs_words(torch):
    theirs, ours = _torch_and_ours(torch)
    one_group = Adam(ours.parameters())
    two_groups = Adam(_groups(ours))
    for opt, other in ((one_group, two_groups), (two_groups, one_group)):
        with pytest.raises(ValueError, match="^loaded state dict has a different number of "
                                             "parameter groups$"):
            opt.load_state_dict(other.state_dict())
    t_opt = torch.optim.Adam(theirs[0].parameters())  # 2 parameters, where ours has 4
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group$"):
        one_group.load_state_dict(t_opt.state_dict())
    _train(theirs, t_opt, np.ones((2, 3)), torch.tensor, 1)
    first_layer = Adam(ours[2].parameters())  # 2 parameters of other shapes
    with pytest.raises(ValueError, match=r"the state 'exp_avg' of parameter 0 of 2 has shape "
                                         r"\(4, 3\), expected \(1, 4\)"):
        first_layer.load_state_dict(t_opt.state_dict())
    assert first_layer.state == {}
    with pytest.raises(TypeError, match="expected a dict with 'state' and 'param_groups'"):
        first_layer.load_state_dict(ours.state_dict())


def test_values_state_dict_round_trip():
    ps = [Value(x) for x in START]
    opt = Adam(ps, lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        objective(ps, COEFS, Value.tanh, Value.sin).backward()
        opt.step()
    saved = opt.state_dict()
    assert saved["state"][0]["step"] == 3 and isinstance(saved["state"][0]["exp_avg"], float)
    qs = [Value(p.data) for p in ps]
    again = Adam(qs, lr=0.5)
    again.load_state_dict(saved)
    for mine, theirs in ((opt, ps), (again, qs)):
        mine.zero_grad()
        objective(theirs, COEFS, Value.tanh, Value.sin).backward()
        mine.step()
    assert [q.data for q in qs] == [p.data for p in ps]


def test_param_names_are_kept_as_torch_keeps_them(torch):
    theirs, ours = _torch_and_ours(torch)
    named = SGD(ours.named_parameters(), lr=0.1)
    t_named = torch.optim.SGD(theirs.named_parameters(), lr=0.1)
    assert named.state_dict()["param_groups"] == t_named.state_dict()["param_groups"]
    plain = SGD(ours.parameters(), lr=0.1)
    plain.load_state_dict(named.state_dict())  # the saved names come along
    assert plain.param_groups[0]["param_names"] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_adagrads_state_starts_when_it_is_made_as_torchs(torch):
    theirs, ours = _torch_and_ours(torch)
    t_opt = torch.optim.Adagrad(theirs[0].parameters(), initial_accumulator_value=0.25)
    opt = Adagrad(ours[0].parameters(), initial_accumulator_value=0.25)
    opt.add_param_group({"params": ours[2].parameters()})
    state = opt.state_dict()["state"]
    assert list(state) == [0, 1, 2, 3] and list(t_opt.state_dict()["state"]) == [0, 1]
    assert state[0]["step"].dtype == chaingrad.float32 and state[0]["step"].item() == 0
    np.testing.assert_array_equal(state[0]["sum"].numpy(), np.full((4, 3), 0.25))


def test_a_state_dict_of_an_older_torch_and_keys_that_are_no_parameter(torch):
    """A group saved before an option existed takes the option's default, as torch's
    ``__setstate__`` gives it; a state key that names no parameter is kept as it is."""
    theirs, ours = _torch_and_ours(torch)
    t_opt = torch.optim.Adam(theirs.parameters(), lr=0.05)
    _train(theirs, t_opt, np.ones((2, 3)), torch.tensor, 1)
    saved = t_opt.state_dict()
    for key in ("decoupled_weight_decay", "fused", "capturable"):
        del saved["param_groups"][0][key]
    saved["state"]["note"] = {"epoch": 3}
    opt = Adam(ours.parameters(), lr=0.5)
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["decoupled_weight_decay"] is False
    assert opt.state["note"] == {"epoch": 3}
    assert opt.state_dict()["state"]["note"] == {"epoch": 3}
    _train(ours, opt, np.ones((2, 3)), chaingrad.tensor, 1)
