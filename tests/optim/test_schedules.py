"""chaingrad/optim/schedules.py: chaingrad's own schedules give micrograd's demo rates bit for
bit and torch's cosine annealing, share their formulas with lr_scheduler.py, check their
arguments, and no longer take the names of torch's schedulers."""

import pytest

import chaingrad.optim
from chaingrad import Value
from chaingrad.optim import SGD, CosineSchedule, LinearSchedule, cosine_anneal, linear_anneal


def test_linear_schedule_is_micrographs_demo():
    opt = SGD([Value(0.0)], lr=5.0)
    sched = LinearSchedule(opt, start=1.0, end=0.1, steps=100)
    seen = []
    for _ in range(100):
        seen.append(opt.lr)
        sched.step()
    assert seen == pytest.approx([1.0 - 0.9 * k / 100 for k in range(100)], abs=1e-15)
    assert opt.lr == pytest.approx(0.1)
    sched.step()
    assert opt.lr == pytest.approx(0.1)  # held at the end


def test_linear_schedule_is_micrographs_bit_for_bit_where_torchs_linear_lr_rounds(torch):
    """Why chaingrad keeps a schedule of its own: micrograd's ``1.0 - 0.9 * k / 100`` to the
    last bit (the demo's printed numbers depend on it), where torch's LinearLR, which
    multiplies the rate by a ratio at each step, reaches the same rates only within
    rounding."""
    opt = SGD([Value(0.0)], lr=1.0)
    sched = LinearSchedule(opt, start=1.0, end=0.1, steps=100)
    param = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    torch_opt = torch.optim.SGD([param], lr=1.0)
    torch_sched = torch.optim.lr_scheduler.LinearLR(torch_opt, start_factor=1.0,
                                                    end_factor=0.1, total_iters=100)
    ours, theirs = [], []
    for _ in range(100):
        ours.append(opt.lr)
        theirs.append(torch_opt.param_groups[0]["lr"])
        sched.step()
        torch_opt.step()
        torch_sched.step()
    micrograd = [1.0 - 0.9 * k / 100 for k in range(100)]
    assert ours == micrograd
    assert theirs == pytest.approx(micrograd, rel=1e-14, abs=0)  # a few ulps, accumulated
    assert theirs != micrograd


def test_cosine_schedule_matches_torch_cosine_annealing(torch):
    param = torch.zeros(1, requires_grad=True)
    torch_opt = torch.optim.SGD([param], lr=0.3)
    torch_sched = torch.optim.lr_scheduler.CosineAnnealingLR(torch_opt, T_max=12, eta_min=0.01)
    opt = SGD([Value(0.0)], lr=0.3)
    sched = CosineSchedule(opt, start=0.3, end=0.01, steps=12)
    for _ in range(12):
        assert opt.lr == pytest.approx(torch_opt.param_groups[0]["lr"], abs=1e-12)
        torch_opt.step()
        torch_sched.step()
        sched.step()
    assert opt.lr == pytest.approx(0.01, abs=1e-15)


def test_shared_formulas_are_chaingrads_own_schedules():
    """torch's closed forms and chaingrad's own LinearSchedule/CosineSchedule are the same
    functions."""
    opt = SGD([Value(0.0)], lr=1.0)
    own = CosineSchedule(opt, start=0.3, end=0.01, steps=12)
    assert [own.lr_at(k) for k in range(13)] == [cosine_anneal(0.3, 0.01, k, 12)
                                                 for k in range(13)]
    linear = LinearSchedule(opt, start=1.0, end=0.1, steps=100)
    assert [linear.lr_at(k) for k in (0, 37, 100, 150)] == [
        linear_anneal(1.0, 0.1, k, 100) for k in (0, 37, 100, 100)]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda ps: LinearSchedule(SGD(ps, lr=1), start=-1, end=0, steps=5), "Invalid start"),
        (lambda ps: CosineSchedule(SGD(ps, lr=1), start=1, end=0, steps=0), "steps must be"),
    ],
)
def test_invalid_arguments_raise_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make([Value(1.0), Value(2.0)])


def test_schedules_live_in_optim():
    for name in ("LinearSchedule", "CosineSchedule", "Schedule"):
        assert name in chaingrad.optim.__all__


@pytest.mark.parametrize(("old", "new"), [("LinearLR", "LinearSchedule"),
                                          ("CosineLR", "CosineSchedule"),
                                          ("LRSchedule", "Schedule")])
def test_the_old_names_say_where_the_schedules_went(old, new):
    """``LinearLR`` is torch's, in ``optim.lr_scheduler`` only (torch has no
    ``torch.optim.LinearLR``); the old name of chaingrad's own says its new one."""
    assert old not in chaingrad.optim.__all__
    with pytest.raises(AttributeError, match=rf"^chaingrad\.optim\.{old} is now "
                                             rf"chaingrad\.optim\.{new} \(.*chaingrad\.optim"
                                             r"\.lr_scheduler$"):
        getattr(chaingrad.optim, old)
