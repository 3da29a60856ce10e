"""``chaingrad demo`` (moons): micrograd's demo network, on scalar Values.

An ``MLP(2, [16, 16, 1])`` learns to separate scikit-learn's two moons (100 points,
noise 0.1) with the hinge loss plus an L2 penalty of 1e-4, by SGD whose learning rate
decays linearly from 1.0 toward 0.1 over 100 steps, each over the whole dataset
(``lr = 1.0 - 0.9 * k / 100``, so 0.109 at the last step): micrograd's demo, number for
number. It writes ``loss.png``, ``decision_boundary.png`` and ``model.safetensors`` into
``--out``.

A step's log line shows the loss and accuracy its forward pass computed, before its
update, as micrograd's demo prints them; the summary shows the trained model's, after the
last update (the model that ``model.safetensors`` holds).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import numpy as np

from .. import optim
from ..agreement import tensor_copy
from ..errors import DivergedError
from ..gradmode import no_grad
from ..losses import hinge_loss
from ..nn import MLP
from ..tensor_engine import Tensor
from .folders import output_folder
from .plots import decision_boundary_figure, history_figure, save_png
from .training import (
    History,
    diverging,
    learning_rates,
    plural,
    print_summary,
    report_stop,
    shown_number,
    train,
    write_results,
)

COMMAND = "chaingrad demo"
STEPS = 100
DEFAULT_LR = {"sgd": 1.0, "adam": 0.05}
ALPHA = 1e-4  # the weight of the L2 penalty, as in micrograd's demo


class Moons:
    """The two moons and the MLP learning them: the ``Task`` that ``train`` runs."""

    unit = "step"
    batches = 1  # each step is over the whole dataset
    accuracy_name = "accuracy"

    def __init__(self, seed: int):
        from sklearn.datasets import make_moons

        self.points, y = make_moons(n_samples=100, noise=0.1,
                                    random_state=np.random.RandomState(seed))
        self.inputs = [[float(a), float(b)] for a, b in self.points]
        self.labels = [int(label) * 2 - 1 for label in y]  # classes 0/1 -> -1/+1
        saved = random.getstate()  # seed the weights without changing the caller's sequence
        random.seed(seed)
        self.model = MLP(2, [16, 16, 1])
        random.setstate(saved)

    def round_batches(self, index: int) -> list[None]:
        return [None]  # one batch: everything

    def loss(self, batch: None) -> tuple[Any, int, int]:
        """micrograd's demo loss, hinge + ALPHA * sum(p**2), and how many scores are right."""
        scores = [self.model(point) for point in self.inputs]
        data_loss = hinge_loss(scores, self.labels)
        reg_loss = ALPHA * sum(p * p for p in self.model.parameters())
        right = sum((label > 0) == (score.data > 0)
                    for label, score in zip(self.labels, scores, strict=True))
        return data_loss + reg_loss, right, len(self.labels)

    def evaluate(self) -> dict[str, float]:
        return {}

    def scores(self, points: Any) -> Any:
        """The model's scores for an (n, 2) array of points at once, through its Tensor
        twin (``chaingrad.agreement.tensor_copy``): the decision boundary needs 40,000."""
        with no_grad():
            return tensor_copy(self.model)(Tensor(points))._value[:, 0]


def run(args: argparse.Namespace) -> int:
    """Train, plot and save; returns the exit code."""
    steps = STEPS if args.steps is None else args.steps
    opt_name = args.optimizer or "sgd"
    lr = DEFAULT_LR[opt_name] if args.lr is None else args.lr
    out = args.out or "chaingrad-demo"
    with output_folder(out, f"--out {out!r}"):
        task = Moons(args.seed)
        params = task.model.named_parameters()
        optimizer: optim.Optimizer = (optim.SGD(params, lr=lr) if opt_name == "sgd"
                                      else optim.Adam(params, lr=lr))
        schedule = optim.LinearSchedule(optimizer, start=lr, end=lr / 10, steps=steps)
        history: History = {}
        try:
            begun = time.perf_counter()
            train(task, optimizer, schedule, steps, history)
            trained = time.perf_counter() - begun
            with diverging(f"after step {steps}/{steps}", "the loss"), no_grad():
                loss, right, total = task.loss(None)
        except (DivergedError, KeyboardInterrupt) as exc:
            return report_stop(COMMAND, exc, out, history, "step", plot_history)
        accuracy = right / total

        boundary = decision_boundary_figure(
            task.scores, task.points, np.array(task.labels),
            f"MLP(2, [16, 16, 1]) on two moons: {accuracy:.0%} training accuracy")
        paths = write_results(COMMAND, out, plot_history, history,
                              ("decision_boundary.png", boundary), task.model)
        if paths is None:
            return 1
    print_summary([
        f"{COMMAND}: MLP(2, [16, 16, 1]), {plural(steps, 'step')} ({opt_name}, "
        f"{learning_rates(schedule, 'linear')})",
        f"trained model: loss {shown_number(loss.data)}, accuracy {accuracy:.1%}; "
        f"{trained:.1f} s to train, {time.perf_counter() - args.started:.1f} s in all",
    ], paths)
    return 0


def plot_history(history: History, path: str) -> None:
    save_png(history_figure(history, "step", "loss (hinge + L2)",
                            {"accuracy": "training set, before each step"}), path)
