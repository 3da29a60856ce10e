"""chaingrad.optim.lr_scheduler against torch.optim.lr_scheduler: the same learning rates,
bit for bit, over 50 steps, for each scheduler and optimizer; state dicts; errors."""

from __future__ import annotations

import math
import pickle
import warnings

import pytest

import chaingrad
import chaingrad.optim as optim
from chaingrad import Value
from chaingrad.optim import lr_scheduler

STEPS = 50

# (scheduler name, keyword arguments for both libraries)
SCHEDULERS = [
    ("StepLR", {"step_size": 7, "gamma": 0.3}),
    ("StepLR", {"step_size": 1}),
    ("MultiStepLR", {"milestones": [3, 10, 10, 30], "gamma": 0.5}),
    ("ExponentialLR", {"gamma": 0.93}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.2, "end_factor": 0.9, "total_iters": 13}),
    ("LinearLR", {"start_factor": 1.0, "end_factor": 0.0, "total_iters": 40}),
    ("CosineAnnealingLR", {"T_max": 9, "eta_min": 0.001}),
    ("CosineAnnealingLR", {"T_max": 50}),
    ("LambdaLR", {"lr_lambda": lambda epoch: 1 / (1 + epoch)}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": STEPS + 1}),
    ("OneCycleLR", {"max_lr": [0.5, 0.05], "epochs": 3, "steps_per_epoch": 17,
                    "anneal_strategy": "linear", "three_phase": True, "pct_start": 0.25}),
    ("OneCycleLR", {"max_lr": 0.1, "total_steps": STEPS + 1, "cycle_momentum": False}),
]

OPTIMIZERS = [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01}),
              ("AdamW", {"lr": 0.02, "betas": (0.8, 0.99)})]


def both(torch, optimizer: str, options: dict, groups: int = 2):
    """The same optimizer in torch and chaingrad, with ``groups`` parameter groups, the
    second at a tenth of the rate."""
    ours, theirs = [], []
    for i in range(groups):
        lr = options["lr"] / 10**i
        ours.append({"params": [chaingrad.zeros(2, requires_grad=True)], "lr": lr})
        theirs.append({"params": [torch.zeros(2, requires_grad=True)], "lr": lr})
    return (getattr(optim, optimizer)(ours, **options),
            getattr(torch.optim, optimizer)(theirs, **options))


def momenta(optimizer) -> list:
    return [(g.get("momentum"), g.get("betas")) for g in optimizer.param_groups]


@pytest.mark.parametrize("optimizer, options", OPTIMIZERS, ids=[o for o, _ in OPTIMIZERS])
@pytest.mark.parametrize("name, kwargs", SCHEDULERS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_learning_rates_are_torchs_bit_for_bit_over_50_steps(torch, optimizer, options,
                                                             name, kwargs):
    ours, theirs = both(torch, optimizer, options)
    mine = getattr(lr_scheduler, name)(ours, **kwargs)
    its = getattr(torch.optim.lr_scheduler, name)(theirs, **kwargs)
    for step in range(STEPS):
        assert mine.get_last_lr() == its.get_last_lr(), f"step {step}"
        assert [g["lr"] for g in ours.param_groups] == [g["lr"] for g in theirs.param_groups]
        assert momenta(ours) == momenta(theirs), f"step {step}"
        ours.step()
        theirs.step()
        mine.step()
        its.step()
    assert mine.last_epoch == its.last_epoch == STEPS
    assert sorted(mine.state_dict()) == sorted(its.state_dict())


@pytest.mark.parametrize("name, kwargs", [s for s in SCHEDULERS if s[0] != "LambdaLR"],
                         ids=[n for n, _ in SCHEDULERS if n != "LambdaLR"])
def test_state_dict_resumes_where_it_left_off(torch, name, kwargs):
    ours, _ = both(torch, "SGD", {"lr": 0.1, "momentum": 0.9})
    first = getattr(lr_scheduler, name)(ours, **kwargs)
    for _ in range(20):
        ours.step()
        first.step()
    saved = pickle.loads(pickle.dumps(first.state_dict()))
    rates = []
    for _ in range(10):
        ours.step()
        first.step()
        rates.append(first.get_last_lr())
    restored, _ = both(torch, "SGD", {"lr": 0.1, "momentum": 0.9})
    second = getattr(lr_scheduler, name)(restored, **kwargs)
    second.load_state_dict(saved)
    for group, lr in zip(restored.param_groups, saved["_last_lr"]):
        group["lr"] = lr  # the optimizer's own state, which its state dict would carry
    for expected in rates:
        restored.step()
        second.step()
        assert second.get_last_lr() == expected


def test_a_torch_state_dict_loads(torch):
    ours, theirs = both(torch, "SGD", {"lr": 0.1}, groups=1)
    its = torch.optim.lr_scheduler.StepLR(theirs, step_size=3, gamma=0.5)
    for _ in range(7):
        theirs.step()
        its.step()
    mine = lr_scheduler.StepLR(ours, step_size=1)
    mine.load_state_dict(its.state_dict())
    assert (mine.step_size, mine.last_epoch, mine.get_last_lr()) == (3, 7, [0.025])


@pytest.mark.parametrize("name, kwargs", [
    ("StepLR", {"step_size": 4, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5], "gamma": 0.1}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("LinearLR", {"start_factor": 0.25, "total_iters": 6}),
    ("CosineAnnealingLR", {"T_max": 10, "eta_min": 0.01}),
])
def test_step_with_an_epoch_uses_torchs_closed_form(torch, name, kwargs):
    ours, theirs = both(torch, "SGD", {"lr": 0.1})
    mine = getattr(lr_scheduler, name)(ours, **kwargs)
    its = getattr(torch.optim.lr_scheduler, name)(theirs, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (3, 9, 1, 12):
            ours.step()
            theirs.step()
            mine.step(epoch)
            its.step(epoch)
            assert mine.get_last_lr() == its.get_last_lr()


def test_resuming_with_last_epoch_matches_torch(torch):
    ours, theirs = both(torch, "SGD", {"lr": 0.1})
    for optimizer in (ours, theirs):
        for group in optimizer.param_groups:
            group["initial_lr"] = group["lr"]
    mine = lr_scheduler.CosineAnnealingLR(ours, T_max=10, last_epoch=4)
    its = torch.optim.lr_scheduler.CosineAnnealingLR(theirs, T_max=10, last_epoch=4)
    for _ in range(8):
        assert mine.get_last_lr() == its.get_last_lr()
        ours.step()
        theirs.step()
        mine.step()
        its.step()


# ReduceLROnPlateau: a sequence of metrics, and what the rates do
PLATEAU = [1.0, 0.9, 0.95, 0.94, 0.93, 0.92, 0.91, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 0.49,
           0.48, 0.4899, 0.47, 0.47, 0.47, 0.47, 0.47, 0.47, 0.47, 0.47, 0.47, 0.47]


@pytest.mark.parametrize("kwargs", [
    {"patience": 2},
    {"patience": 1, "factor": 0.5, "cooldown": 2},
    {"patience": 0, "threshold": 0.05, "threshold_mode": "abs", "min_lr": [0.02, 0.0]},
    {"mode": "max", "patience": 1, "factor": 0.3},
    {"mode": "max", "patience": 2, "threshold_mode": "abs", "threshold": 0.01, "eps": 0.05},
])
def test_reduce_on_plateau_matches_torch(torch, kwargs):
    ours, theirs = both(torch, "SGD", {"lr": 0.1})
    mine = lr_scheduler.ReduceLROnPlateau(ours, **kwargs)
    its = torch.optim.lr_scheduler.ReduceLROnPlateau(theirs, **kwargs)
    for metric in PLATEAU:
        ours.step()
        theirs.step()
        mine.step(chaingrad.tensor(metric))
        its.step(torch.tensor(metric))
        assert mine.get_last_lr() == its.get_last_lr()
        assert (mine.best, mine.num_bad_epochs, mine.in_cooldown) == (
            its.best, its.num_bad_epochs, its.in_cooldown)
    assert sorted(mine.state_dict()) == sorted(its.state_dict())


def test_schedulers_drive_an_optimizer_of_values():
    x = Value(3.0)
    optimizer = optim.SGD([x], lr=0.1)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    seen = []
    for _ in range(5):
        optimizer.zero_grad()
        (x * x).backward()
        optimizer.step()
        seen.append(optimizer.lr)
        scheduler.step()
    assert seen == [0.1, 0.1, 0.05, 0.05, 0.025]


def test_stepping_the_scheduler_first_warns_as_torch_does():
    optimizer = optim.SGD([Value(1.0)], lr=0.1)
    scheduler = lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    with pytest.warns(UserWarning, match=r"ExponentialLR.step\(\) was called before "
                                         r"optimizer.step\(\)"):
        scheduler.step()
    optimizer = optim.SGD([Value(1.0)], lr=0.1)
    scheduler = lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    optimizer.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scheduler.step()
    with pytest.warns(UserWarning, match="use get_last_lr"):
        scheduler.get_lr()


def test_two_schedulers_on_one_optimizer_wrap_its_step_once():
    optimizer = optim.SGD([Value(1.0)], lr=0.1)
    lr_scheduler.StepLR(optimizer, step_size=1)
    wrapped = optimizer.step
    lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    assert optimizer.step is wrapped


@pytest.mark.parametrize("make, error, message", [
    (lambda opt: lr_scheduler.StepLR(opt, step_size=0), ValueError, "step_size must be an int"),
    (lambda opt: lr_scheduler.StepLR(opt, step_size=2.5), ValueError, "got 2.5"),
    (lambda opt: lr_scheduler.StepLR(opt, 2, gamma="x"), TypeError, "gamma must be a number"),
    (lambda opt: lr_scheduler.CosineAnnealingLR(opt, T_max=0), ValueError, "T_max"),
    (lambda opt: lr_scheduler.LinearLR(opt, start_factor=0), ValueError, "start_factor"),
    (lambda opt: lr_scheduler.LinearLR(opt, end_factor=1.5), ValueError, "end_factor"),
    (lambda opt: lr_scheduler.LambdaLR(opt, [lambda e: 1, lambda e: 2]), ValueError,
     "one value per parameter group"),
    (lambda opt: lr_scheduler.LambdaLR(opt, 0.5), TypeError, "lr_lambda must be a function"),
    (lambda opt: lr_scheduler.MultiStepLR(opt, milestones=3), TypeError, "milestones"),
    (lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=1.0), ValueError, "total_steps"),
    (lambda opt: lr_scheduler.OneCycleLR(opt, 1.0, 10, pct_start=1), ValueError, "pct_start"),
    (lambda opt: lr_scheduler.OneCycleLR(opt, 1.0, 10, anneal_strategy="exp"), ValueError,
     "anneal_strategy"),
    (lambda opt: lr_scheduler.ReduceLROnPlateau(opt, factor=1.0), ValueError, "factor"),
    (lambda opt: lr_scheduler.ReduceLROnPlateau(opt, mode="up"), ValueError, "mode"),
    (lambda opt: lr_scheduler.StepLR(opt, 1, last_epoch=3), KeyError, "initial_lr"),
    (lambda opt: lr_scheduler.StepLR(object(), 1), TypeError, "expected a chaingrad optimizer"),
])
def test_bad_arguments_are_named(make, error, message):
    optimizer = optim.SGD([Value(1.0)], lr=0.1)
    with pytest.raises(error, match=message):
        make(optimizer)


def test_one_cycle_refuses_a_step_past_its_end_and_an_optimizer_without_momentum():
    optimizer = optim.SGD([Value(1.0)], lr=0.1, momentum=0.9)
    scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=2)
    optimizer.step()
    scheduler.step()
    scheduler.step()
    with pytest.raises(ValueError, match="stepped 3 times, but total_steps is 2"):
        scheduler.step()

    class Plain(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

    with pytest.raises(ValueError, match="cycle_momentum=True needs an optimizer"):
        lr_scheduler.OneCycleLR(Plain([Value(1.0)]), max_lr=1.0, total_steps=5)


def test_reached_as_torch_reaches_it():
    assert optim.lr_scheduler is lr_scheduler
    assert chaingrad.optim.lr_scheduler.StepLR is lr_scheduler.StepLR
    with pytest.raises(AttributeError, match="chaingrad.optim.lr_scheduler has no 'CyclicLR' yet"):
        lr_scheduler.CyclicLR  # noqa: B018


def test_cosine_annealing_goes_back_up_after_t_max():
    optimizer = optim.SGD([Value(1.0)], lr=1.0)
    scheduler = lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)
    rates = []
    for _ in range(8):
        optimizer.step()
        scheduler.step()
        rates.append(scheduler.get_last_lr()[0])
    assert rates[3] == pytest.approx(0.0, abs=1e-15)
    assert rates[7] == pytest.approx(1.0)
    assert rates[1] == pytest.approx(0.5 * (1 + math.cos(math.pi * 2 / 4)))


@pytest.mark.parametrize("first", ["torch", "chaingrad"])
def test_a_run_resumes_across_the_import_line_with_its_schedule(torch, state_converter, first):
    """A checkpoint's resume, as nanoGPT's: the weights, the optimizer's and the
    scheduler's state dicts saved by one library go on in the other, with the same rates
    (OneCycleLR cycles Adam's beta1 too) and the same losses."""
    libraries = {"torch": torch, "chaingrad": chaingrad}
    runs = {}
    for name, lib in libraries.items():
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.05)
        runs[name] = (w, opt, lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=20))

    def train(w, opt, scheduler, steps):
        seen = []
        for _ in range(steps):
            opt.zero_grad()
            loss = ((w * w * w - 1.0) ** 2).sum()
            loss.backward()
            opt.step()
            scheduler.step()
            seen.append((loss.item(), scheduler.get_last_lr(), opt.param_groups[0]["betas"]))
        return seen

    other = "chaingrad" if first == "torch" else "torch"
    convert = state_converter.to_chaingrad if first == "torch" else state_converter.to_torch
    w, opt, scheduler = runs[first]
    train(w, opt, scheduler, 8)
    w2, opt2, scheduler2 = runs[other]
    w2.data = libraries[other].tensor(w.tolist(), dtype=libraries[other].float64)
    opt2.load_state_dict(convert(opt.state_dict()))
    scheduler2.load_state_dict(convert(scheduler.state_dict()))
    expected, resumed = train(w, opt, scheduler, 8), train(w2, opt2, scheduler2, 8)
    for (loss, lrs, betas), (loss2, lrs2, betas2) in zip(resumed, expected, strict=True):
        assert loss == pytest.approx(loss2, rel=1e-12) and lrs == lrs2 and betas == betas2
