"""``chaingrad demo``: train a small network, then write its plots and weights.

``chaingrad demo`` (``moons``) is micrograd's demo on scalar Values (``moons.py``);
``chaingrad demo digits`` trains a Tensor MLP or CNN on 8x8 digits (``digits.py``). This
module holds their options and checks them; the two share the training loop of
``training.py`` and the figures of ``plots.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from ..errors import UsageError
from . import digits, match, moons, unknown

DATASETS = {"moons": moons, "digits": digits}  # the first positional argument
# Options that only one dataset takes (the other refuses them with a usage error).
OWN_OPTIONS = {"moons": ("steps",), "digits": ("epochs", "model", "batch_size")}
NEEDED = ("sklearn", "matplotlib", "tqdm", "safetensors")  # numpy: imported above


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # The dataset is checked in run, not by argparse's choices: a mistyped option followed
    # by its value (--stesp 5) must be reported as the unknown option, not as dataset '5'.
    parser.add_argument("dataset", nargs="?", default="moons", metavar="{moons,digits}",
                        help="what to learn: moons (default; micrograd's demo) or digits "
                             "(8x8 images, a Tensor MLP or CNN)")
    parser.add_argument("--steps", type=int, default=None,
                        help="moons: training steps, each over the whole dataset "
                             f"(default: {moons.STEPS})")
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"digits: passes over the training set (default: {digits.EPOCHS})")
    parser.add_argument("--model", choices=digits.MODELS, default=None,
                        help="digits: mlp (default) or cnn")
    parser.add_argument("--batch-size", type=int, default=None,
                        help=f"digits: examples per step (default: {digits.BATCH_SIZE})")
    parser.add_argument("--seed", type=int, default=1337,
                        help="seed for the data and the initial weights (default: 1337)")
    parser.add_argument("--optimizer", choices=sorted(moons.DEFAULT_LR), default=None,
                        help="sgd or adam (default: sgd for moons, adam for digits; SGD has "
                             "momentum 0.9 for digits)")
    parser.add_argument("--lr", type=float, default=None,
                        help="starting learning rate; moons decays it linearly toward a "
                             "tenth (default: 1.0 for sgd, 0.05 for adam), digits by a cosine "
                             "toward 0 (default: adam 0.01 mlp, 0.005 cnn; sgd 0.1 mlp, "
                             "0.05 cnn)")
    parser.add_argument("--out", default=None,
                        help="folder for the plots and weights, made if missing (default: "
                             "./chaingrad-demo, or ./chaingrad-demo/digits-mlp and digits-cnn)")


def run(args: argparse.Namespace) -> int:
    """Train, plot and save; returns the exit code."""
    _check_options(args)
    for module in NEEDED:
        if importlib.util.find_spec(module) is None:
            print(f"chaingrad demo: error: {module} is missing; install the demo extra: "
                  "pip install 'chaingrad[demo]'", file=sys.stderr)
            return 1
    return DATASETS[args.dataset].run(args)


def _check_options(args: argparse.Namespace) -> None:
    """Refuse what argparse does not: an unknown dataset, other datasets' options, sizes
    < 1, a bad seed or lr (``--out`` is checked as it is made: ``folders.py``)."""
    dataset = match(args.dataset, DATASETS)
    if dataset is None:
        raise UsageError(unknown("demo", args.dataset, list(DATASETS)))
    args.dataset = dataset
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
