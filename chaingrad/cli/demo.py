"""``chaingrad demo``: train micrograd's demo network and write plots and weights.

``chaingrad demo digits`` trains a Tensor MLP or CNN on 8x8 digits instead: see
``chaingrad/cli/digits.py``. The rest of this docstring is about ``moons``.

An ``MLP(2, [16, 16, 1])`` learns to separate scikit-learn's two moons (100 points,
noise 0.1) with the hinge loss plus an L2 penalty of 1e-4, by SGD whose learning rate
decays linearly from 1.0 to 0.1 over 100 steps: micrograd's demo, number for number.
It writes ``loss.png``, ``decision_boundary.png`` and ``model.safetensors`` into ``--out``.

The heavy imports (numpy, scikit-learn, matplotlib, tqdm, safetensors) happen in ``run``,
so that building the ``chaingrad`` parser stays cheap.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..cli import UsageError

DATASETS = ("moons", "digits")  # the first positional argument
DEFAULT_LR = {"sgd": 1.0, "adam": 0.05}  # for moons; digits.DEFAULT_LR for digits
# Options that only one dataset takes (the other refuses them with a usage error).
OWN_OPTIONS = {"moons": ("steps",), "digits": ("epochs", "model", "batch_size")}
ALPHA = 1e-4  # the weight of the L2 penalty, as in micrograd's demo
GRID = 200  # the decision boundary is drawn from a GRID x GRID evaluation
FLOAT32_MAX = 3.4028234663852886e38  # model.safetensors holds float32 weights
# The progress bar without tqdm's rate: an 80-column terminal keeps room for the bar itself.
BAR_FORMAT = "{desc} {percentage:3.0f}%|{bar}| {elapsed}<{remaining}{postfix}"


class DivergedError(Exception):
    """Training blew up (a float overflowed, a gradient or update was not finite, or the
    weights outgrew float32); the message says where and how, e.g.
    ``training diverged at step 3/5 (the loss overflowed)``."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", nargs="?", choices=DATASETS, default="moons",
                        help="what to learn: moons (default; micrograd's demo) or digits "
                             "(8x8 images, a Tensor MLP or CNN)")
    parser.add_argument("--steps", type=int, default=None,
                        help="moons: training steps, each over the whole dataset "
                             "(default: 100)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="digits: passes over the training set (default: 30)")
    parser.add_argument("--model", choices=("mlp", "cnn"), default=None,
                        help="digits: mlp (default) or cnn")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="digits: examples per step (default: 32)")
    parser.add_argument("--seed", type=int, default=1337,
                        help="seed for the data and the initial weights (default: 1337)")
    parser.add_argument("--optimizer", choices=sorted(DEFAULT_LR), default=None,
                        help="sgd or adam (default: sgd for moons, adam for digits; SGD has "
                             "momentum 0.9 for digits)")
    parser.add_argument("--lr", type=float, default=None,
                        help="starting learning rate; moons decays it linearly to a tenth "
                             "(default: 1.0 for sgd, 0.05 for adam), digits by a cosine to 0 "
                             "(default: adam 0.01 mlp, 0.005 cnn; sgd 0.1 mlp, 0.05 cnn)")
    parser.add_argument("--out", default=None,
                        help="folder for the plots and weights (default: ./chaingrad-demo, "
                             "or ./chaingrad-demo/digits-mlp and digits-cnn)")


def run(args: argparse.Namespace) -> int:
    """Train, plot and save; returns the exit code."""
    started = time.perf_counter()
    _check_options(args)
    for module in ("numpy", "sklearn", "matplotlib", "tqdm", "safetensors"):
        try:
            importlib.import_module(module)
        except ImportError:
            print(f"chaingrad demo: error: {module} is missing; install the demo extra: "
                  "pip install 'chaingrad[demo]'", file=sys.stderr)
            return 1
    if args.dataset == "digits":
        from .digits import run_digits

        return run_digits(args, started)
    return _run_moons(args, started)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse what argparse cannot: other datasets' options, sizes < 1, bad seed/lr/out."""
    for dataset, names in OWN_OPTIONS.items():
        for name in names:
            if dataset != args.dataset and getattr(args, name) is not None:
                raise UsageError(f"--{name.replace('_', '-')} is for the {dataset} demo, not "
                                 f"{args.dataset}")
    for name in ("steps", "epochs", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if not 0 <= args.seed < 2**32:  # what numpy's and scikit-learn's seeding accept
        raise UsageError(f"--seed must be in [0, 2**32 - 1], got {args.seed}")
    if args.lr is not None and not (args.lr > 0 and args.lr != float("inf")):
        raise UsageError(f"--lr must be a positive number, got {args.lr}")
    if args.out is not None and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out!r} exists and is not a folder")


def make_out_folder(out: str) -> None:
    """Create ``--out`` before training: a folder that cannot be made is a usage error."""
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out!r}: cannot create the folder "
                         f"({exc.strerror or exc})") from exc
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out!r}: the folder is not writable")


def _run_moons(args: argparse.Namespace, started: float) -> int:
    steps = 100 if args.steps is None else args.steps
    opt_name = args.optimizer or "sgd"
    lr = DEFAULT_LR[opt_name] if args.lr is None else args.lr
    out = args.out or "chaingrad-demo"
    make_out_folder(out)
    import numpy as np
    from sklearn.datasets import make_moons

    from .. import optim, serialization
    from ..nn import MLP

    x, y = make_moons(n_samples=100, noise=0.1, random_state=np.random.RandomState(args.seed))
    inputs = [[float(a), float(b)] for a, b in x]
    labels = [int(label) * 2 - 1 for label in y]  # classes 0/1 -> -1/+1
    saved = random.getstate()  # seed the weights without changing the caller's sequence
    random.seed(args.seed)
    model = MLP(2, [16, 16, 1])
    random.setstate(saved)

    if opt_name == "sgd":
        optimizer: optim.Optimizer = optim.SGD(model.named_parameters(), lr=lr)
    else:
        optimizer = optim.Adam(model.named_parameters(), lr=lr)
    schedule = optim.LinearLR(optimizer, start=lr, end=lr / 10, steps=steps)

    history: dict[str, list[float]] = {"loss": [], "accuracy": []}
    try:
        _train(model, inputs, labels, optimizer, schedule, steps, history)
        check_float32(model, f"after step {steps}/{steps}")
        with diverging(f"after step {steps}/{steps}", "the loss"):
            final_loss, final_accuracy = _evaluate(model, inputs, labels)
    except DivergedError as exc:
        return report_divergence("chaingrad demo", exc, out, len(history["loss"]), "step",
                                 lambda path: _plot_history(history, path))
    trained = time.perf_counter() - started

    paths = [os.path.join(out, name)
             for name in ("loss.png", "decision_boundary.png", "model.safetensors")]
    try:
        _plot_history(history, paths[0])
        _plot_boundary(model, x, np.array(labels), final_accuracy, paths[1])
        serialization.save(model, paths[2])
    except OSError as exc:
        print(f"chaingrad demo: error: cannot write into {out!r}: {exc}", file=sys.stderr)
        return 1
    print(f"chaingrad demo: {plural(steps, 'step')} ({opt_name}, lr {lr:g} -> {lr / 10:g}), "
          f"final loss {number(final_loss)}, accuracy {final_accuracy:.1%}, "
          f"{trained:.1f} s to train, {time.perf_counter() - started:.1f} s in all; "
          f"wrote {', '.join(paths)}", flush=True)
    return 0


def _objective(model: Any, inputs: list, labels: list[int]) -> tuple[Any, float]:
    """micrograd's demo loss, hinge + ALPHA * sum(p**2), and the accuracy of the scores."""
    from ..losses import hinge_loss

    scores = [model(point) for point in inputs]
    data_loss = hinge_loss(scores, labels)
    reg_loss = ALPHA * sum(p * p for p in model.parameters())
    right = sum((label > 0) == (score.data > 0) for label, score in zip(labels, scores,
                                                                          strict=True))
    return data_loss + reg_loss, right / len(labels)


def _train(model: Any, inputs: list, labels: list[int], optimizer: Any, schedule: Any,
           steps: int, history: dict[str, list[float]]) -> None:
    """Full-batch training with a progress bar on a terminal, log lines otherwise; appends
    each step's loss and accuracy (before the step) to ``history``.

    Raises:
        DivergedError: A float overflowed, or a gradient or update was not finite.
    """
    on_terminal = sys.stdout.isatty()
    width = len(str(steps))
    bar = progress_bar(steps, f"step {0:>{width}}/{steps}", on_terminal)
    every = max(1, steps // 10)
    try:
        for k in range(steps):
            where = f"at step {k + 1}/{steps}"
            with diverging(where, "the loss"):
                loss, accuracy = _objective(model, inputs, labels)
            with diverging(where, "a gradient"):
                optimizer.zero_grad()
                loss.backward()
                lr = optimizer.lr
                optimizer.step()
            schedule.step()
            history["loss"].append(loss.data)
            history["accuracy"].append(accuracy)
            if on_terminal:
                bar.set_description_str(f"step {k + 1:>{width}}/{steps}", refresh=False)
                bar.set_postfix({"loss": number(loss.data), "accuracy": f"{accuracy:.0%}"},
                                refresh=False)
                bar.update()
            elif (k + 1) % every == 0 or k in (0, steps - 1):
                print(f"step {k + 1:>{width}}/{steps}  loss {number(loss.data)}  "
                      f"accuracy {accuracy:6.1%}  lr {lr:.4g}", flush=True)
    finally:
        bar.close()


# ---- shared with chaingrad/cli/digits.py ----


@contextlib.contextmanager
def diverging(where: str, what: str) -> Iterator[None]:
    """Turn a DomainError or NonFiniteGradError raised inside into ``DivergedError``.

    Args:
        where: When, e.g. ``"at step 3/5"``.
        what: What is computed inside, e.g. ``"the loss"`` (a DomainError: it overflowed).
    """
    from ..errors import DomainError
    from ..optim import NonFiniteGradError

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
    import numpy as np

    largest = max(float(np.abs(a).max(initial=0.0)) for a in model.state_dict().values())
    if not largest <= FLOAT32_MAX:
        raise DivergedError(f"training diverged {where} (the weights outgrew float32: largest "
                       f"magnitude {largest:.3g})")


def report_divergence(command: str, exc: DivergedError, out: str, done: int, unit: str,
                      write_plot: Callable[[str], None]) -> int:
    """Say in one line on stderr how training diverged, after plotting the ``done`` steps
    or epochs (``unit``) that finished into ``out/loss.png``; returns the exit code, 1."""
    note = "no files written"
    if done:
        path = os.path.join(out, "loss.png")
        try:
            write_plot(path)
            note = f"{path} plots the {plural(done, unit)} before; no model saved"
        except (OSError, ValueError):  # the message is what matters
            pass
    print(f"{command}: {exc}; try a smaller --lr ({note})", file=sys.stderr, flush=True)
    return 1


def number(x: float) -> str:
    """A loss for the log: ``0.8958``, or ``1.002e+17`` once it has blown up."""
    return f"{x:.4f}" if abs(x) < 1e5 else f"{x:.4g}"


def plural(n: int, word: str, many: str = "") -> str:
    """``1 step``, ``2 steps`` (or ``many``: ``2 batches``)."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def integer_ticks(*axes: Any) -> None:
    """Whole numbers only on the x axes (steps, epochs), even for a run of 1 to 3."""
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


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


def _evaluate(model: Any, inputs: list, labels: list[int]) -> tuple[float, float]:
    """The trained model's loss and accuracy (the history holds those before each step)."""
    from ..autodiff import no_grad

    with no_grad():
        loss, accuracy = _objective(model, inputs, labels)
    return loss.data, accuracy


def _forward_numpy(model: Any, points: Any) -> Any:
    """The MLP's scores for many points at once, from its weights with numpy.

    The decision boundary needs tens of thousands of evaluations; scalar Values would
    take a minute for what numpy does in milliseconds.
    """
    import numpy as np

    activation = {"relu": lambda h: np.maximum(h, 0.0), "tanh": np.tanh,
                  "sigmoid": lambda h: 1 / (1 + np.exp(-h)), "linear": lambda h: h}
    state = model.state_dict()
    h = points
    for i in range(len(model.layers)):
        h = h @ state[f"{2 * i}.weight"].T + state[f"{2 * i}.bias"]
        if i < len(model.layers) - 1:
            h = activation[model.activation](h)
    return h[:, 0]


def _plot_history(history: dict[str, list[float]], path: str) -> None:
    from matplotlib.figure import Figure

    steps = range(1, len(history["loss"]) + 1)
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    loss_ax, acc_ax = fig.subplots(1, 2)
    marker = "o" if len(steps) <= 20 else None  # a line of one point would not show
    loss_ax.plot(steps, history["loss"], color="tab:blue", marker=marker)
    loss_ax.set(xlabel="step", ylabel="loss (hinge + L2)", title="Training loss")
    loss_ax.set_yscale("log")
    acc_ax.plot(steps, [100 * a for a in history["accuracy"]], color="tab:green",
                marker=marker)
    acc_ax.set(xlabel="step", ylabel="accuracy (%)", title="Training accuracy",
               ylim=(min(40, 100 * min(history["accuracy"]) - 5), 102))
    for ax in (loss_ax, acc_ax):
        ax.grid(alpha=0.3)
    integer_ticks(loss_ax, acc_ax)
    save_png(fig, path)


def _plot_boundary(model: Any, x: Any, labels: Any, accuracy: float, path: str) -> None:
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    pad = 0.5
    xs = np.linspace(x[:, 0].min() - pad, x[:, 0].max() + pad, GRID)
    ys = np.linspace(x[:, 1].min() - pad, x[:, 1].max() + pad, GRID)
    grid_x, grid_y = np.meshgrid(xs, ys)
    scores = _forward_numpy(model, np.column_stack([grid_x.ravel(), grid_y.ravel()]))
    colors = ("#f4a582", "#92c5de")  # class -1, class +1
    fig = Figure(figsize=(6, 4.8), layout="constrained")
    ax = fig.subplots()
    ax.contourf(grid_x, grid_y, (scores > 0).reshape(grid_x.shape), levels=[-0.5, 0.5, 1.5],
                cmap=ListedColormap(colors), alpha=0.6)
    ax.contour(grid_x, grid_y, scores.reshape(grid_x.shape), levels=[0.0], colors="0.25",
               linewidths=1.2)
    for label, color, marker in ((-1, "#b2182b", "o"), (1, "#2166ac", "s")):
        chosen = labels == label
        ax.scatter(x[chosen, 0], x[chosen, 1], c=color, marker=marker, s=28,
                   edgecolors="white", linewidths=0.6, label=f"class {label:+d}")
    ax.set(title=f"MLP(2, [16, 16, 1]) on two moons: {accuracy:.0%} training accuracy",
           xlabel="$x_1$", ylabel="$x_2$")
    ax.legend(loc="lower left", framealpha=0.9)
    save_png(fig, path)


def save_png(fig: Any, path: str) -> None:
    """Render with matplotlib's Agg canvas (no pyplot, no GUI) and write atomically."""
    from io import BytesIO

    from ..files import write_atomic

    buffer = BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    write_atomic(path, buffer.getvalue())
