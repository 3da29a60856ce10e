"""The demos' figures: the training history, the moons' decision boundary, the digits' answers.

Each ``*_figure`` function returns a matplotlib ``Figure`` (no pyplot, no GUI) and
``save_png`` writes one atomically.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..files import write_atomic

GRID = 200  # the decision boundary is drawn from a GRID x GRID evaluation
SHOWN = (4, 10)  # rows and columns of digits in the predictions figure
ACCURACY_COLORS = ("tab:green", "tab:orange")


def history_figure(history: dict[str, list[float]], unit: str, loss_label: str,
                   accuracy_labels: dict[str, str], title: str = "") -> Any:
    """The loss (log scale) and the accuracies, one point per round.

    Args:
        history: ``"loss"`` and each key of ``accuracy_labels``, a number per round.
        unit: What a round is called on the x axes: ``"step"`` or ``"epoch"``.
        loss_label: The loss axis' label.
        accuracy_labels: History key -> its label in the legend.
        title: Added to each panel's title, e.g. ``"mlp"``.
    """
    from matplotlib.figure import Figure

    rounds = range(1, len(history["loss"]) + 1)
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    loss_ax, acc_ax = fig.subplots(1, 2)
    marker = "o" if len(rounds) <= 20 else None  # a line of one point would not show
    suffix = f" ({title})" if title else ""
    loss_ax.plot(rounds, history["loss"], color="tab:blue", marker=marker)
    loss_ax.set(xlabel=unit, ylabel=loss_label, title=f"Training loss{suffix}")
    loss_ax.set_yscale("log")
    for (key, label), color in zip(accuracy_labels.items(), ACCURACY_COLORS):
        acc_ax.plot(rounds, [100 * a for a in history[key]], color=color, marker=marker,
                    label=label)
    lowest = min(min(history[key]) for key in accuracy_labels)
    acc_ax.set(xlabel=unit, ylabel="accuracy (%)", title=f"Accuracy{suffix}",
               ylim=(max(0, 10 * math.floor((100 * lowest - 5) / 10)), 101))
    acc_ax.legend(loc="lower right")
    for ax in (loss_ax, acc_ax):
        ax.grid(alpha=0.3)
    integer_ticks(loss_ax, acc_ax)
    return fig


def decision_boundary_figure(scores: Callable[[Any], Any], x: Any, labels: Any,
                             title: str) -> Any:
    """The plane coloured by the sign of ``scores``, with the points of two classes.

    Args:
        scores: Maps an (n, 2) array of points to their n scores (class +1 where > 0).
        x: The (n, 2) points, drawn over the colours.
        labels: Their classes, -1 or +1.
        title: The figure's title.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    pad = 0.5
    xs = np.linspace(x[:, 0].min() - pad, x[:, 0].max() + pad, GRID)
    ys = np.linspace(x[:, 1].min() - pad, x[:, 1].max() + pad, GRID)
    grid_x, grid_y = np.meshgrid(xs, ys)
    grid_scores = scores(np.column_stack([grid_x.ravel(), grid_y.ravel()]))
    colors = ("#f4a582", "#92c5de")  # class -1, class +1
    fig = Figure(figsize=(6, 4.8), layout="constrained")
    ax = fig.subplots()
    ax.contourf(grid_x, grid_y, (grid_scores > 0).reshape(grid_x.shape),
                levels=[-0.5, 0.5, 1.5], cmap=ListedColormap(colors), alpha=0.6)
    ax.contour(grid_x, grid_y, grid_scores.reshape(grid_x.shape), levels=[0.0],
               colors="0.25", linewidths=1.2)
    for label, color, marker in ((-1, "#b2182b", "o"), (1, "#2166ac", "s")):
        chosen = labels == label
        ax.scatter(x[chosen, 0], x[chosen, 1], c=color, marker=marker, s=28,
                   edgecolors="white", linewidths=0.6, label=f"class {label:+d}")
    ax.set(title=title, xlabel="$x_1$", ylabel="$x_2$")
    ax.legend(loc="lower left", framealpha=0.9)
    return fig


def predictions_figure(images: Any, labels: Any, predicted: Any, title: str) -> Any:
    """A grid of digits, the mistakes first, each titled with the model's answer.

    Args:
        images: (n, 8, 8) images in [0, 1].
        labels: Their n true classes.
        predicted: The n classes the model gave.
        title: What the suptitle starts with, e.g. ``"mlp"``.
    """
    from matplotlib.figure import Figure

    wrong = np.flatnonzero(predicted != labels)
    order = np.concatenate([wrong, np.flatnonzero(predicted == labels)])
    rows, cols = SHOWN
    fig = Figure(figsize=(cols, rows * 1.2 + 0.4), layout="constrained")
    axes = fig.subplots(rows, cols)
    for ax, i in zip(axes.ravel(), order, strict=False):
        ax.imshow(images[i], cmap="gray_r", vmin=0, vmax=1)
        ok = predicted[i] == labels[i]
        ax.set_title(f"{predicted[i]}" if ok else f"{predicted[i]} (is {labels[i]})",
                     color="tab:green" if ok else "tab:red", fontsize=10)
    for ax in axes.ravel():
        ax.set_axis_off()
    fig.suptitle(f"{title}: {len(wrong)} of {len(labels)} test digits wrong "
                 f"({1 - len(wrong) / len(labels):.1%} right); mistakes first, in red")
    return fig


def integer_ticks(*axes: Any) -> None:
    """Whole numbers only on the x axes (steps, epochs), even for a run of 1 to 3."""
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def save_png(fig: Any, path: str) -> None:
    """Render with matplotlib's Agg canvas and write the PNG atomically."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    write_atomic(path, buffer.getvalue())
