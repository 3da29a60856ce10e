"""The work between two steps, chaingrad beside PyTorch (one thread each): an optimizer's
plain update and ``clip_grad_norm_``, which no op of ``ops.py`` times.

Run from the repository root (benchmarks/README.md, "Updates"):

    python benchmarks/updates.py [--runs 3] [--budget 0.2] [--baseline PATH]

The cases, each written once against torch's API (``import chaingrad as torch``):

- ``x += y``: a plain in-place add of two 512x192 float32 tensors outside a graph.
- ``p.data += -lr * p.grad``: the lectures' update of a 512x192 parameter.
- ``clip_grad_norm_``: torch's float32 2-norm of the gradients of PyTorch's
  word_language_model at ``lstm_lm_step.py``'s sizes (1.04 million entries in 10 tensors),
  with a max norm that clips nothing (each call sees the same gradients).

As ``ops.py``: each engine in a fresh process of its own, the order reversed every other
run, each figure the median of as many calls as fit in ``--budget`` seconds; the table gives
the median over the runs, the spread (max - min) / median, and chaingrad / torch.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (or torch) is imported anywhere in this process

import json  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

from lstm_lm_step import EMBED, HIDDEN, LAYERS, VOCAB  # noqa: E402
from ops import engine_module  # noqa: E402
from workloads.optiming import (  # noqa: E402
    CLOCKS,
    add_engine_options,
    check_baseline,
    check_baseline_import,
    median_us,
    run_worker,
    summary,
)
from workloads.usage import Parser  # noqa: E402

CASES = ("x += y", "p.data += -lr * p.grad", "clip_grad_norm_")


def word_lm_gradients(t: Any) -> list[Any]:
    """Parameters of word_language_model's shapes (an embedding, a 2-layer LSTM, the
    decoder), each with a gradient of standard normals."""
    shapes = [(VOCAB, EMBED)]
    for layer in range(LAYERS):
        shapes += [(4 * HIDDEN, EMBED if layer == 0 else HIDDEN), (4 * HIDDEN, HIDDEN),
                   (4 * HIDDEN,), (4 * HIDDEN,)]
    shapes += [(VOCAB, HIDDEN), (VOCAB,)]
    t.manual_seed(0)
    params = [t.zeros(shape, requires_grad=True) for shape in shapes]
    for p in params:
        p.grad = t.randn(tuple(p.shape))
    return params


def worker(engine: str, budget: float, clock_name: str) -> dict[str, float]:
    """Each case's median (us) on ``engine``."""
    t, clock = engine_module(engine), CLOCKS[clock_name]
    t.manual_seed(0)
    x, y = t.randn(512, 192), t.randn(512, 192)
    p = t.zeros(512, 192, requires_grad=True)
    p.grad = t.randn(512, 192)
    params = word_lm_gradients(t)

    def add(_: Any) -> None:
        nonlocal x
        x += y

    def update(_: Any) -> None:
        p.data += -0.1 * p.grad

    calls = {"x += y": add, "p.data += -lr * p.grad": update,
             "clip_grad_norm_": lambda _: t.nn.utils.clip_grad_norm_(params, 1e9)}
    return {name: median_us(calls[name], lambda: None, budget, clock) for name in CASES}


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="updates.py", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per engine (>= 1)")
    parser.add_argument("--budget", type=float, default=0.2,
                        help="seconds of calls per median (default 0.2)")
    add_engine_options(parser)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.budget <= 0:
        parser.error("--runs must be >= 1 and --budget > 0")
    check_baseline("updates.py", args)
    if args.worker:
        if args.worker == "baseline":
            check_baseline_import("updates.py", args.baseline)
        print(json.dumps(worker(args.worker, args.budget, args.clock)))
        return 0
    engines = ["chaingrad", "torch"] + ["baseline"] * (args.baseline is not None)
    runs: dict[str, list[dict]] = {engine: [] for engine in engines}
    for r in range(args.runs):
        for engine in engines if r % 2 == 0 else engines[::-1]:
            options = ["--budget", str(args.budget), "--clock", args.clock]
            try:
                runs[engine].append(run_worker(__file__, engine, args, options))
            except RuntimeError as exc:
                print(exc, file=sys.stderr)
                return 1
    print(f"{args.clock} clock, median of {args.runs} run(s) in us, (spread) = (max - min) / "
          "median; cg/torch below 1: chaingrad is faster")
    for name in CASES:
        cells = {e: summary([run[name] for run in done]) for e, done in runs.items()}
        torch_us = cells["torch"]["median"]
        row = "  ".join(f"{e} {c['median']:8.1f} ({c['spread']:4.0%})" for e, c in cells.items())
        ratios = "  ".join(f"{e}/torch {c['median'] / torch_us:.2f}"
                           for e, c in cells.items() if e != "torch")
        print(f"{name:<24} {row}  {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
