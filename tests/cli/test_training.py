"""The demos' shared pieces: chaingrad/cli/training.py (divergence, the loop, the summary's
learning rates) and chaingrad/cli/plots.py (the figures)."""

from __future__ import annotations

import gc
import io
import math
import sys
import weakref

import pytest

from chaingrad import DomainError, NonFiniteGradError, Value, optim
from chaingrad.cli import plots, training
from chaingrad.cli.training import (
    DIVERGENCE_FACTOR,
    DIVERGENCE_STEPS,
    DivergenceWatch,
    diverging,
    learning_rates,
)
from chaingrad.errors import DivergedError

pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")


def test_a_loss_that_is_not_finite_is_divergence():
    for bad in (math.inf, -math.inf, math.nan):
        watch = DivergenceWatch("steps")
        watch.check(1.0, "at step 1/9")
        with pytest.raises(DivergedError, match=rf"^training diverged at step 2/9 \(the loss "
                                                 rf"is {bad}\)$"):
            watch.check(bad, "at step 2/9")


def test_a_loss_far_above_its_first_value_for_several_steps_in_a_row_is_divergence():
    high = DIVERGENCE_FACTOR * 2.0 * 1.01  # just over the limit for a first loss of 2
    watch = DivergenceWatch("batches")
    watch.check(2.0, "at batch 1")
    for k in range(DIVERGENCE_STEPS - 1):  # a spike, however long, that comes back down
        watch.check(high, f"at batch {k + 2}")
    watch.check(DIVERGENCE_FACTOR * 2.0, "at the limit, not over it")
    for k in range(DIVERGENCE_STEPS - 1):
        watch.check(high, f"at batch {k}")
    with pytest.raises(DivergedError, match=(
            r"^training diverged at batch 12 \(the loss has been over 100 times its first "
            r"value, 2\.0000, for 5 batches: now 202\.0000\)$")):
        watch.check(high, "at batch 12")


def test_diverging_names_what_overflowed():
    x = Value(1.0)
    x.grad = float("nan")
    cases = [(lambda: optim.SGD([x], lr=0.1).step(), "a gradient was not finite"),
             (lambda: Value(1e300) * 1e300, "the loss overflowed"),
             (lambda: Value(-1.0).log(), "log: ")]
    for fail, why in cases:
        with (pytest.raises(DivergedError, match=rf"^training diverged at step 2/3 \({why}"),
              diverging("at step 2/3", "the loss")):
            fail()
    with pytest.raises(KeyError), diverging("at step 2/3", "the loss"):
        raise KeyError("x")  # anything else passes through
    assert issubclass(NonFiniteGradError, ValueError) and issubclass(DomainError, ValueError)


class Line:
    """A Task for ``train``: fit ``w * x`` to ``2 * x`` on three points, one step a round."""

    unit = "step"
    batches = 1
    accuracy_name = "accuracy"

    def __init__(self):
        self.model = Model()

    def round_batches(self, index):
        return [[1.0, 2.0, 3.0]]

    def loss(self, batch):
        errors = [(self.model.w * x - 2 * x) ** 2 for x in batch]
        right = sum(abs(self.model.w.data * x - 2 * x) < 0.5 for x in batch)
        return sum(errors) * (1 / len(batch)), right, len(batch)

    def evaluate(self):
        return {}


class Model:
    def __init__(self):
        self.w = Value(0.0)

    def state_dict(self):
        import numpy as np

        return {"w": np.array([self.w.data])}


def test_train_logs_each_round_and_keeps_the_history(capsys):
    task = Line()
    optimizer = optim.SGD([task.model.w], lr=0.1)
    history = {}
    training.train(task, optimizer, optim.LinearSchedule(optimizer, 0.1, 0.01, steps=3), 3, history)
    # the loss is (w - 2)**2 * 14/3 and its gradient 2 * (w - 2) * 14/3: w goes 0, 28/15, ...
    w = [0.0, 28 / 15, 28 / 15 + 0.07 * 2 * (2 - 28 / 15) * 14 / 3]
    assert history["loss"] == pytest.approx([(v - 2) ** 2 * 14 / 3 for v in w], rel=1e-12)
    assert history["accuracy"] == [0.0, 1.0, 1.0]
    assert capsys.readouterr().out.splitlines() == [
        "step 1/3  loss 18.6667  accuracy   0.0%  lr 0.1",  # the lr each step starts with
        "step 2/3  loss 0.0830  accuracy 100.0%  lr 0.07",
        "step 3/3  loss 0.0100  accuracy 100.0%  lr 0.04"]


def test_each_step_runs_with_the_cyclic_collector_paused_and_drops_its_graph(capsys):
    """A step's graph has no cycles: the collector, paused for the step, has nothing to
    find in it, and the graph is gone before it runs again (it would walk the graph)."""
    seen, graphs = [], []

    class Tag:
        pass

    class Watched(Line):
        def loss(self, batch):
            seen.append(gc.isenabled())
            loss, right, count = super().loss(batch)
            loss.kept_by = Tag()  # a Value takes no weak reference: its attribute does
            graphs.append(weakref.ref(loss.kept_by))
            return loss, right, count

    task = Watched()
    optimizer = optim.SGD([task.model.w], lr=0.1)
    assert gc.isenabled()
    training.train(task, optimizer, optim.LinearSchedule(optimizer, 0.1, 0.01, steps=3), 3, {})
    assert seen == [False, False, False] and gc.isenabled()
    assert [graph() for graph in graphs] == [None, None, None]  # freed with each step
    capsys.readouterr()


def test_the_learning_rates_named_are_the_first_and_last_steps():
    optimizer = optim.SGD([Value(0.0)], lr=1.0)
    # micrograd's demo: 1.0 - 0.9 * k / 100 for k = 0 .. 99, so 0.109 at the last step
    assert learning_rates(optim.LinearSchedule(optimizer, 1.0, 0.1, steps=100), "linear") == (
        "lr 1 -> 0.109, linear")
    assert learning_rates(optim.LinearSchedule(optimizer, 1.0, 0.1, steps=1), "linear") == (
        "lr 1, linear")  # one step: one learning rate
    last = 0.01 * (1 + math.cos(math.pi * 9 / 10)) / 2
    assert learning_rates(optim.CosineSchedule(optimizer, 0.01, 0.0, steps=10), "cosine") == (
        f"lr 0.01 -> {last:.4g}, cosine")


def test_train_stops_when_the_loss_overflows():
    task = Line()
    optimizer = optim.SGD([task.model.w], lr=1e160)
    history = {}
    with pytest.raises(DivergedError, match=r"^training diverged at step 2/9 \(the loss "
                                            r"overflowed\)"):
        training.train(task, optimizer, optim.LinearSchedule(optimizer, 1e160, 1e159, steps=9), 9,
                       history)
    assert len(history["loss"]) == 1  # the round that finished


def test_short_runs_have_whole_numbers_of_rounds_on_the_x_axis():
    figures = [
        plots.history_figure({"loss": [1.0, 0.5], "accuracy": [0.5, 0.6]}, "step", "loss",
                             {"accuracy": "training set"}),
        plots.history_figure({"loss": [1.0], "train": [0.5], "test": [0.4]}, "epoch",
                             "cross-entropy", {"train": "train", "test": "test"}, "mlp"),
    ]
    for fig in figures:
        for ax in fig.axes:
            ticks = ax.get_xticks()
            assert len(ticks) and all(t == int(t) for t in ticks), ticks
    assert [ax.get_title() for ax in figures[1].axes] == ["Training loss (mlp)",
                                                          "Accuracy (mlp)"]


def test_save_png_writes_a_png(tmp_path):
    path = tmp_path / "f.png"
    plots.save_png(plots.history_figure({"loss": [1.0], "accuracy": [0.5]}, "step", "loss",
                                        {"accuracy": "a"}), str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_progress_bar_is_off_when_stdout_is_no_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    bar = training.progress_bar(10, "step 1/10", on_terminal=False)
    bar.update()
    bar.close()
    assert sys.stdout.getvalue() == ""
