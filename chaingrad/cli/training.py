"""The demos' one training loop, and what surrounds it: the output folder, divergence, log text.

``train`` runs the rounds of a demo (a moons step, a digits epoch), each of one or more
optimizer steps on the batches its ``Task`` hands out. On a terminal it draws a progress
bar; otherwise it prints a log line every tenth round. It appends each round's loss and
accuracies to a history, and stops with ``DivergedError`` when training diverges:

- the loss, a gradient or a weight update is not a finite number (nan, or an overflow);
- the loss has been more than ``DIVERGENCE_FACTOR`` (100) times the first step's loss for
  ``DIVERGENCE_STEPS`` (5) optimizer steps in a row;
- after the last round, a weight is too large for the float32 of ``model.safetensors``.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

import numpy as np

from .. import serialization
from ..autodiff import paused_gc
from ..errors import DivergedError, DomainError
from ..optim import NonFiniteGradError, Optimizer, Schedule
from . import INTERRUPTED
from .plots import save_png

DIVERGENCE_FACTOR = 100.0
DIVERGENCE_STEPS = 5
FLOAT32_MAX = 3.4028234663852886e38  # model.safetensors holds float32 weights
# The progress bar without tqdm's rate: an 80-column terminal keeps room for the bar itself.
BAR_FORMAT = "{desc} {percentage:3.0f}%|{bar}| {elapsed}<{remaining}{postfix}"

History = dict[str, list[float]]  # "loss" and each accuracy: one entry per round


class Task(Protocol):
    """What a demo hands to ``train``: its model, its batches and its loss."""

    model: Any
    unit: str  # what a round is called: "step" (moons) or "epoch" (digits)
    batches: int  # optimizer steps in a round
    accuracy_name: str  # the accuracy on the batches trained on: "accuracy" or "train"

    def round_batches(self, index: int) -> Iterable[Any]:
        """The batches of round ``index`` (0-based), the model ready to train on them."""

    def loss(self, batch: Any) -> tuple[Any, int, int]:
        """The loss of ``batch`` (a Value or Tensor to backpropagate), how many examples
        the model got right and how many there were."""

    def evaluate(self) -> dict[str, float]:
        """Accuracies measured after each round, e.g. ``{"test": 0.97}``; may be empty."""


def train(task: Task, optimizer: Optimizer, schedule: Schedule, rounds: int,
          history: History) -> None:
    """Run ``rounds`` rounds of ``task``: each batch is one optimizer and schedule step.

    Appends each round's mean loss, its accuracy on the batches trained on (before each
    step) and ``task.evaluate()``'s accuracies to ``history``, whose keys are made as
    needed; what is there when training diverges is the rounds that finished.

    Raises:
        DivergedError: Training diverged (see this module's docstring for when).
    """
    progress = Progress(task, rounds)
    watch = DivergenceWatch("steps" if task.batches == 1 else "batches")
    try:
        for index in range(rounds):
            lr = optimizer.lr  # the round's first step's, shown in its log line
            total, right, seen = 0.0, 0, 0
            for b, batch in enumerate(task.round_batches(index)):
                where = progress.where(index, b)
                with paused_gc():  # see train_step
                    value, batch_right, count = train_step(task, batch, optimizer, watch,
                                                           where)
                schedule.step()
                total += value * count
                right += batch_right
                seen += count
                progress.batch_done(total / seen, right / seen)
            with diverging(f"after {task.unit} {index + 1}/{rounds}", "the model's outputs"):
                record = {"loss": total / seen, task.accuracy_name: right / seen,
                          **task.evaluate()}
            for key in record:
                history.setdefault(key, []).append(record[key])
            progress.round_done(index, record, lr)
    finally:
        progress.close()
    check_float32(task.model, f"after {task.unit} {rounds}/{rounds}")


def train_step(task: Task, batch: Any, optimizer: Optimizer, watch: DivergenceWatch,
               where: str) -> tuple[float, int, int]:
    """One optimizer step on ``batch``: its loss, how many it got right, how many it had.

    ``train`` calls it with Python's cyclic garbage collector paused (``paused_gc``): the
    step's graph holds no reference cycles and is freed when this returns, so there is
    nothing for the collector to find in it, and left running it would walk the whole
    graph, over and over, as it is built (on ``chaingrad demo``, a third of the time).
    """
    with diverging(where, "the loss"):
        loss, right, count = task.loss(batch)
    value = float(loss._value)
    watch.check(value, where)
    with diverging(where, "a gradient"):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return value, right, count


class DivergenceWatch:
    """Sees each step's loss; raises ``DivergedError`` when it is not finite, or when it
    has been above ``DIVERGENCE_FACTOR`` times the first one for ``DIVERGENCE_STEPS``
    steps in a row.

    Args:
        steps: What optimizer steps are called in the message: "steps" or "batches".
    """

    def __init__(self, steps: str):
        self.steps = steps
        self.first: float | None = None
        self.above = 0  # how many steps in a row the loss has been over the limit

    def check(self, loss: float, where: str) -> None:
        if not math.isfinite(loss):
            raise DivergedError(f"training diverged {where} (the loss is {loss})")
        if self.first is None:
            self.first = loss
        self.above = self.above + 1 if loss > DIVERGENCE_FACTOR * self.first else 0
        if self.above == DIVERGENCE_STEPS:
            raise DivergedError(
                f"training diverged {where} (the loss has been over {DIVERGENCE_FACTOR:g} "
                f"times its first value, {shown_number(self.first)}, for "
                f"{DIVERGENCE_STEPS} {self.steps}: now {shown_number(loss)})")


@contextlib.contextmanager
def diverging(where: str, what: str) -> Iterator[None]:
    """Turn a DomainError or NonFiniteGradError raised inside into ``DivergedError``.

    Args:
        where: When, e.g. ``"at step 3/5"``.
        what: What is computed inside, e.g. ``"the loss"`` (a DomainError: it overflowed).
    """
    try:
        yield
    except NonFiniteGradError as exc:
        why = "a weight update overflowed" if exc.what == "update" else (
            "a gradient was not finite")
        raise DivergedError(f"training diverged {where} ({why})") from exc
    except DomainError as exc:
        why = f"{what} overflowed" if "overflow" in str(exc) else str(exc)
        raise DivergedError(f"training diverged {where} ({why})") from exc


def check_float32(model: Any, where: str) -> None:
    """Raise ``DivergedError`` if a weight is too large for model.safetensors' float32."""
    largest = max(float(np.abs(a).max(initial=0.0)) for a in model.state_dict().values())
    if not largest <= FLOAT32_MAX:
        raise DivergedError(f"training diverged {where} (the weights outgrew float32: "
                            f"largest magnitude {largest:.3g})")


class Progress:
    """A run as the user sees it: a progress bar over every optimizer step on a terminal;
    otherwise a log line for the first round, every tenth of the run and the last."""

    def __init__(self, task: Task, rounds: int):
        self.unit, self.rounds, self.batches = task.unit, rounds, task.batches
        self.accuracy_name = task.accuracy_name
        self.width = len(str(rounds))
        self.on_terminal = sys.stdout.isatty()
        self.bar = progress_bar(rounds * self.batches, self._counted(0), self.on_terminal)
        self.shown: dict[str, str] = {}  # the bar's postfix: loss and accuracies so far

    def _counted(self, index: int) -> str:
        return f"{self.unit} {index + 1:>{self.width}}/{self.rounds}"

    def where(self, index: int, batch: int) -> str:
        """``"at step 3/5"``, or ``"at epoch 1/30, batch 2/45"`` for rounds of batches."""
        at = f"at {self.unit} {index + 1}/{self.rounds}"
        return at if self.batches == 1 else f"{at}, batch {batch + 1}/{self.batches}"

    def batch_done(self, loss: float, accuracy: float) -> None:
        if self.on_terminal:
            self.shown.update({"loss": shown_number(loss), self.accuracy_name: f"{accuracy:.1%}"})
            self.bar.set_postfix(self.shown, refresh=False)
            self.bar.update()

    def round_done(self, index: int, record: dict[str, float], lr: float) -> None:
        """Show the round's ``record`` (loss, accuracies) and the ``lr`` it started with."""
        loss, accuracies = record["loss"], {k: v for k, v in record.items() if k != "loss"}
        if self.on_terminal:
            self.shown.update({"loss": shown_number(loss)})
            self.shown.update({name: f"{value:.1%}" for name, value in accuracies.items()})
            if index + 1 < self.rounds:
                self.bar.set_description_str(self._counted(index + 1), refresh=False)
            self.bar.set_postfix(self.shown)
        elif (index + 1) % max(1, self.rounds // 10) == 0 or index in (0, self.rounds - 1):
            shown = "".join(f"  {name} {value:6.1%}" for name, value in accuracies.items())
            print(f"{self._counted(index)}  loss {shown_number(loss)}{shown}  lr {lr:.4g}",
                  flush=True)

    def close(self) -> None:
        self.bar.close()


def progress_bar(total: int, desc: str, on_terminal: bool) -> Any:
    """A tqdm bar on stdout, or a disabled one (for log lines) when stdout is no terminal.

    Its format leaves out tqdm's rate, so that the caller's postfix (loss, accuracy) leaves
    the bar room on an 80-column terminal. A terminal that reports its size as 0 x 0 (a
    pseudo-terminal nobody sized, as under ``script`` or some CI runners) would make tqdm
    draw nothing; it gets 80 x 24 instead.
    """
    from tqdm import tqdm

    try:
        size = os.get_terminal_size(sys.stdout.fileno())
    except (AttributeError, ValueError, OSError):  # e.g. a replaced sys.stdout in tests
        size = None
    fixed = {"ncols": 80, "nrows": 24} if size is not None and 0 in size else {
        "dynamic_ncols": True}
    return tqdm(total=total, desc=desc, file=sys.stdout, disable=not on_terminal,
                bar_format=BAR_FORMAT, **fixed)


def report_stop(command: str, exc: DivergedError | KeyboardInterrupt, out: str,
                history: History, unit: str, plot: Callable[[History, str], None]) -> int:
    """Say in one line on stderr why training stopped (it diverged, or Ctrl-C), after
    ``plot``-ting the rounds (``unit``s) of ``history`` that finished into
    ``out/loss.png``; returns the exit code, 1 or 130 (``INTERRUPTED``)."""
    note = "no files written"
    done = len(history.get("loss", []))
    if done:
        path = os.path.join(out, "loss.png")
        try:
            plot(history, path)
            note = f"{path} plots the {plural(done, unit)} before; no model saved"
        except (OSError, ValueError):  # the message is what matters
            pass
    if isinstance(exc, KeyboardInterrupt):
        print(f"{command}: interrupted ({note})", file=sys.stderr, flush=True)
        return INTERRUPTED
    print(f"{command}: {exc}; try a smaller --lr ({note})", file=sys.stderr, flush=True)
    return 1


def learning_rates(schedule: Schedule, shape: str) -> str:
    """The learning rates of a run's first and last steps, as the log lines show them, and
    the schedule's shape: ``lr 1 -> 0.109, linear`` (micrograd's, which heads for 0.1).

    Args:
        schedule: The run's schedule (its ``lr_at(k)`` for steps k = 0 .. steps - 1).
        shape: What the schedule is called: ``"linear"``, ``"cosine"``.

    Example:
        >>> from chaingrad import Value
        >>> from chaingrad.optim import SGD, LinearSchedule
        >>> schedule = LinearSchedule(SGD([Value(0.0)], lr=1.0), 1.0, 0.1, steps=100)
        >>> learning_rates(schedule, "linear")
        'lr 1 -> 0.109, linear'
    """
    first, last = f"{schedule.lr_at(0):.4g}", f"{schedule.lr_at(schedule.steps - 1):.4g}"
    return f"lr {first}, {shape}" if first == last else f"lr {first} -> {last}, {shape}"


def print_summary(lines: list[str], paths: list[str]) -> None:
    """Print a finished run's summary: ``lines`` (what was trained, the trained model), then
    a ``wrote PATH`` line for each file written.

    Example:
        >>> print_summary(["chaingrad demo: ...", "trained model: ..."], ["out/loss.png"])
        chaingrad demo: ...
        trained model: ...
        wrote out/loss.png
    """
    print("\n".join([*lines, *(f"wrote {path}" for path in paths)]), flush=True)


def write_results(command: str, out: str, plot: Callable[[History, str], None],
                  history: History, picture: tuple[str, Any], model: Any) -> list[str] | None:
    """Write a demo's results into ``out``: ``loss.png`` (``plot`` of ``history``), its
    picture (a file name and a figure) and ``model.safetensors``.

    Returns:
        The paths written, or None after saying on stderr what could not be written.
    """
    name, figure = picture
    paths = [os.path.join(out, file) for file in ("loss.png", name, "model.safetensors")]
    try:
        plot(history, paths[0])
        save_png(figure, paths[1])
        serialization.save(model, paths[2])
    except OSError as exc:
        print(f"{command}: error: cannot write into {out!r}: {exc}", file=sys.stderr)
        return None
    return paths


def shown_number(x: float) -> str:
    """A loss for the log: ``0.8958``, or ``1.002e+17`` once it has blown up."""
    return f"{x:.4f}" if abs(x) < 1e5 else f"{x:.4g}"


def plural(n: int, word: str, many: str = "") -> str:
    """``1 step``, ``2 steps`` (or ``many``: ``2 batches``)."""
    return f"{n} {word if n == 1 else many or word + 's'}"
