"""``chaingrad demo digits``: a Tensor MLP or CNN learns scikit-learn's 8x8 digits.

The data is scikit-learn's bundled ``load_digits`` (1,797 images, no download), scaled to
[0, 1] by dividing by 16 and split 80/20, stratified by class, with ``--seed`` (which also
seeds the initial weights, the dropout masks and the shuffling). The models:

- ``mlp`` (default): ``Sequential(Linear(64, 256), ReLU(), Dropout(0.2), Linear(256, 10))``,
  Adam at lr 0.01;
- ``cnn``: ``Conv2d(1, 32, 3, padding=1) -> ReLU -> MaxPool2d(2) -> Conv2d(32, 64, 3,
  padding=1) -> ReLU -> MaxPool2d(2) -> Flatten -> Linear(256, 10)``, Adam at lr 0.005;

each trained for 30 epochs of mini-batches of 32 with ``cross_entropy``, the learning
rate following a cosine from its start toward 0 (which the step after the last would
reach). It writes ``loss.png`` (the loss and the train/test accuracy per epoch),
``predictions.png`` (test digits with the model's answers, mistakes first) and
``model.safetensors`` into ``--out``.

An epoch's log line shows the mean loss and the accuracy of its batches, each computed
before that batch's update (in training mode: with dropout), and the test accuracy after
the epoch; the summary shows the trained model's accuracies, after the last update, in
evaluation mode (the model that ``model.safetensors`` holds).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import optim
from ..errors import DivergedError
from ..gradmode import no_grad
from ..losses import cross_entropy
from ..nn.modules.activation import ReLU
from ..nn.modules.container import Sequential
from ..nn.modules.conv import Conv2d
from ..nn.modules.dropout import Dropout
from ..nn.modules.flatten import Flatten
from ..nn.modules.linear import Linear
from ..nn.modules.pooling import MaxPool2d
from ..tensor_engine import Tensor
from ..tensor_engine.generator import manual_seed
from .folders import output_folder
from .plots import history_figure, predictions_figure, save_png
from .training import (
    History,
    learning_rates,
    plural,
    print_summary,
    report_stop,
    train,
    write_results,
)

COMMAND = "chaingrad demo digits"
MODELS = ("mlp", "cnn")
DEFAULT_LR = {"mlp": {"adam": 0.01, "sgd": 0.1}, "cnn": {"adam": 0.005, "sgd": 0.05}}
EPOCHS = 30
BATCH_SIZE = 32
TEST_FRACTION = 0.2
EVAL_BATCH = 512  # inputs per forward pass when only predicting


def build_model(kind: str) -> Sequential:
    """A fresh ``mlp`` or ``cnn`` (weights from the default generator, ``manual_seed``'s).

    Example:
        >>> build_model("cnn")(Tensor(np.zeros((5, 1, 8, 8)))).shape
        chaingrad.Size([5, 10])
    """
    if kind == "mlp":
        return Sequential(Linear(64, 256), ReLU(), Dropout(0.2), Linear(256, 10))
    return Sequential(
        Conv2d(1, 32, 3, padding=1), ReLU(), MaxPool2d(2),  # 32 x 4 x 4
        Conv2d(32, 64, 3, padding=1), ReLU(), MaxPool2d(2),  # 64 x 2 x 2
        Flatten(), Linear(256, 10),
    )


def load_data(seed: int) -> dict[str, Any]:
    """The digits as float32 images in [0, 1], split into train and test sets."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        images, digits.target, test_size=TEST_FRACTION, stratify=digits.target,
        random_state=seed)
    return {"x_train": x_train, "x_test": x_test, "y_train": y_train, "y_test": y_test}


def model_input(kind: str, images: Any) -> Any:
    """Images (N, 8, 8) as the model takes them: rows of 64 (mlp) or (N, 1, 8, 8) (cnn)."""
    return images.reshape(len(images), 64) if kind == "mlp" else images[:, None]


def predict(model: Any, kind: str, images: Any) -> Any:
    """The predicted class of each image (evaluation mode, no graph)."""
    model.eval()
    with no_grad():
        return np.concatenate([
            model(Tensor(model_input(kind, images[i:i + EVAL_BATCH])))._value.argmax(axis=1)
            for i in range(0, len(images), EVAL_BATCH)])


class Digits:
    """The digits and the model learning them: the ``Task`` that ``train`` runs. Each
    epoch goes over the training set in a new random order, ``batch_size`` at a time."""

    unit = "epoch"
    accuracy_name = "train"

    def __init__(self, kind: str, seed: int, batch_size: int):
        self.kind, self.batch_size = kind, batch_size
        self.data = load_data(seed)
        self.x = model_input(kind, self.data["x_train"])
        self.y = self.data["y_train"]
        self.batches = math.ceil(len(self.x) / batch_size)
        self.model = build_model(kind)
        self.rng = np.random.default_rng(seed)

    def round_batches(self, index: int) -> list[Any]:
        self.model.train()
        order = self.rng.permutation(len(self.x))
        return [order[b * self.batch_size:(b + 1) * self.batch_size]
                for b in range(self.batches)]

    def loss(self, batch: Any) -> tuple[Any, int, int]:
        logits = self.model(Tensor(self.x[batch]))
        right = int((logits._value.argmax(axis=1) == self.y[batch]).sum())
        return cross_entropy(logits, self.y[batch]), right, len(batch)

    def evaluate(self) -> dict[str, float]:
        predicted = predict(self.model, self.kind, self.data["x_test"])
        return {"test": float((predicted == self.data["y_test"]).mean())}


def run(args: argparse.Namespace) -> int:
    """Train, plot and save for ``chaingrad demo digits``; returns the exit code."""
    kind = args.model or "mlp"
    epochs = EPOCHS if args.epochs is None else args.epochs
    batch_size = BATCH_SIZE if args.batch_size is None else args.batch_size
    opt_name = args.optimizer or "adam"
    lr = DEFAULT_LR[kind][opt_name] if args.lr is None else args.lr
    out = args.out or os.path.join("chaingrad-demo", f"digits-{kind}")

    def plot_history(history: History, path: str) -> None:
        save_png(history_figure(history, "epoch", "cross-entropy",
                                {"train": "train (during the epoch)",
                                 "test": "test (after the epoch)"}, kind), path)

    with output_folder(out, f"--out {out!r}"), _one_blas_thread():
        manual_seed(args.seed)
        task = Digits(kind, args.seed, batch_size)
        params = task.model.named_parameters()
        optimizer: optim.Optimizer = (optim.Adam(params, lr=lr) if opt_name == "adam"
                                      else optim.SGD(params, lr=lr, momentum=0.9))
        schedule = optim.CosineSchedule(optimizer, start=lr, end=0.0,
                                        steps=epochs * task.batches)
        history: History = {}
        try:
            begun = time.perf_counter()
            train(task, optimizer, schedule, epochs, history)
            trained = time.perf_counter() - begun
        except (DivergedError, KeyboardInterrupt) as exc:
            return report_stop(COMMAND, exc, out, history, "epoch", plot_history)
        data = task.data
        predicted = predict(task.model, kind, data["x_test"])
        train_accuracy = float((predict(task.model, kind, data["x_train"])
                                == data["y_train"]).mean())
        right = int((predicted == data["y_test"]).sum())
        test_accuracy = right / len(predicted)

        answers = predictions_figure(data["x_test"], data["y_test"], predicted, kind)
        paths = write_results(COMMAND, out, plot_history, history,
                              ("predictions.png", answers), task.model)
        if paths is None:
            return 1
    print_summary([
        f"{COMMAND}: {kind}, {plural(epochs, 'epoch')} of "
        f"{plural(task.batches, 'batch', 'batches')} ({opt_name}, "
        f"{learning_rates(schedule, 'cosine')})",
        f"trained model: test accuracy {test_accuracy:.1%} ({right}/{len(predicted)}), "
        f"train {train_accuracy:.1%}; {trained:.1f} s to train, "
        f"{time.perf_counter() - args.started:.1f} s in all",
    ], paths)
    return 0


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run BLAS on one thread: these matrices are small (at most 1,437 x 288), and two
    BLAS threads on two cores make the CNN slower than one."""
    try:
        from threadpoolctl import threadpool_limits  # installed with scikit-learn
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield
