"""conv2d and max_pool2d, forward and backward, chaingrad beside PyTorch (one thread).

Run from the repository root (benchmarks/README.md, "Convolution and pooling"):

    python benchmarks/conv.py [--runs 3] [--only t2] [--json FILE] [--quick]
                              [--baseline PATH]

Each engine runs in a fresh process of its own (this script with ``--worker``), one after
the other, the order reversed every other run, so that both see the same machine load
and neither pays for the other's imports. A worker times every case: the forward (the op
called on inputs that require a gradient, so that the graph is recorded) and the backward
(``y.backward(g)`` on a graph made untimed just before, every input's ``.grad`` reset to
None first), each the median of many calls. The table gives, per case, the median over
the runs, the ratio chaingrad / torch (below 1, chaingrad is faster) and the spread,
(max - min) / median over the runs. ``--baseline PATH`` adds a third engine: chaingrad
imported from another source tree (e.g. ``git archive main`` unpacked), to show a change;
a PATH that holds no ``chaingrad/__init__.py`` is refused before anything is timed (one
line, exit status 2), and the baseline worker stops if chaingrad came from elsewhere.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (or torch) is imported anywhere in this process

import functools  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

from workloads.optiming import (  # noqa: E402
    CLOCKS,
    add_engine_options,
    check_baseline,
    check_baseline_import,
    median_us,
    run_worker,
    summary,
)
from workloads.report import write_json  # noqa: E402
from workloads.usage import Parser, check_outputs  # noqa: E402

# (name, input shape, weight shape, stride, padding)
CONV_CASES = [
    ("T2 conv1 64x1x8x8 k3 p1", (64, 1, 8, 8), (8, 1, 3, 3), 1, 1),
    ("T2 conv2 64x8x4x4 k3 p1", (64, 8, 4, 4), (16, 8, 3, 3), 1, 1),
    ("32x1x28x28 ->16 k3 p1", (32, 1, 28, 28), (16, 1, 3, 3), 1, 1),
    ("32x1x28x28 ->16 k5 p0", (32, 1, 28, 28), (16, 1, 5, 5), 1, 0),
    ("32x1x28x28 ->16 k3 s2 p1", (32, 1, 28, 28), (16, 1, 3, 3), 2, 1),
    ("32x16x16x16 ->32 k3 p1", (32, 16, 16, 16), (32, 16, 3, 3), 1, 1),
]
# (name, input shape, kernel, stride)
POOL_CASES = [
    ("T2 pool1 64x8x8x8 k2", (64, 8, 8, 8), 2, None),
    ("T2 pool2 64x16x4x4 k2", (64, 16, 4, 4), 2, None),
    ("32x16x28x28 k2", (32, 16, 28, 28), 2, None),
    ("32x16x28x28 k3 s2", (32, 16, 28, 28), 3, 2),
    ("32x32x16x16 k2", (32, 32, 16, 16), 2, None),
]
QUICK_CONV = [("quick conv 2x2x5x5 k3 s2 p1", (2, 2, 5, 5), (3, 2, 3, 3), 2, 1)]
QUICK_POOL = [("quick pool 2x2x5x5 k2", (2, 2, 5, 5), 2, None)]


# ---- the worker: one engine, every case ----


def _engine(name: str) -> tuple[Any, Any, Any, Any]:
    """(a leaf that requires a gradient, from an array; a constant, from an array;
    conv2d; max_pool2d)."""
    if name == "torch":
        import torch

        torch.set_num_threads(1)
        F = torch.nn.functional
        return (lambda a: torch.from_numpy(a).requires_grad_(), torch.from_numpy,
                F.conv2d, F.max_pool2d)
    from chaingrad import Tensor
    from chaingrad.nn.functional import conv2d, max_pool2d

    return lambda a: Tensor(a, requires_grad=True), Tensor, conv2d, max_pool2d


def _time_op(op: Any, leaves: list, constant: Any, budget: float, clock: Any
             ) -> dict[str, float]:
    import numpy as np

    shape = tuple(op(*leaves).shape)
    seed = constant(np.random.default_rng(1).standard_normal(shape).astype(np.float32))

    def fresh_graph() -> Any:
        for leaf in leaves:
            leaf.grad = None
        return op(*leaves)

    for _ in range(3):  # warm up
        fresh_graph().backward(seed)
    fwd = median_us(lambda _: op(*leaves), lambda: None, budget, clock)
    bwd = median_us(lambda out: out.backward(seed), fresh_graph, budget, clock)
    return {"fwd": fwd, "bwd": bwd}


def worker(engine: str, quick: bool, only_t2: bool, budget: float, clock_name: str
           ) -> dict[str, Any]:
    """Every case's forward and backward median (microseconds) for ``engine``."""
    clock = CLOCKS[clock_name]
    import numpy as np

    leaf, constant, conv2d, max_pool2d = _engine(engine)
    rng = np.random.default_rng(0)
    results: dict[str, Any] = {}
    for name, x_shape, w_shape, stride, padding in _cases(CONV_CASES, QUICK_CONV, quick,
                                                           only_t2):
        arrays = [rng.standard_normal(shape).astype(np.float32)
                  for shape in (x_shape, w_shape, w_shape[:1])]
        leaves = [leaf(a) for a in arrays]
        op = functools.partial(_conv, conv2d, stride=stride, padding=padding)
        results[name] = _time_op(op, leaves, constant, budget, clock)
    for name, x_shape, kernel, stride in _cases(POOL_CASES, QUICK_POOL, quick, only_t2):
        x = np.maximum(rng.standard_normal(x_shape), 0).astype(np.float32)  # as after a ReLU
        op = functools.partial(max_pool2d, kernel_size=kernel, stride=stride)
        results[name] = _time_op(op, [leaf(x)], constant, budget, clock)
    if not quick:  # the whole digits CNN step (T2) that these ops are part of
        step = _t2_step("torch" if engine == "torch" else "chaingrad")
        for _ in range(3):
            step()
        results[T2_STEP] = {"step": median_us(lambda _: step(), lambda: None, budget * 3,
                                               clock)}
    return results


T2_STEP = "T2 step (run.py's T2)"


def _t2_step(engine: str) -> Any:
    """One training step of benchmarks/run.py's workload T2, as a function."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from workloads import tensor

    work, _, _ = tensor.make(engine, "T2", batch=tensor.DIGITS_BATCH, steps=1)
    return work.step


def _conv(conv2d: Any, x: Any, w: Any, b: Any, stride: int, padding: int) -> Any:
    return conv2d(x, w, b, stride, padding)


def _cases(full: list, quick_cases: list, quick: bool, only_t2: bool) -> list:
    if quick:
        return quick_cases
    return [case for case in full if case[0].startswith("T2")] if only_t2 else full


# ---- the driver: alternating processes, medians over runs ----


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="conv.py", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="full runs per engine (>= 1)")
    parser.add_argument("--only", choices=["t2"], help="only the digits CNN's shapes")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--quick", action="store_true", help="one tiny case (a smoke test)")
    parser.add_argument("--budget", type=float, default=0.3,
                        help="seconds of calls per median (default 0.3)")
    add_engine_options(parser)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.budget <= 0:
        parser.error("--runs must be >= 1 and --budget > 0")
    check_outputs("conv.py", args, ("json",))  # before the runs, not after them
    check_baseline("conv.py", args)
    if args.worker:
        if args.worker == "baseline":
            check_baseline_import("conv.py", args.baseline)
        print(json.dumps(worker(args.worker, args.quick, args.only == "t2", args.budget,
                                args.clock)))
        return 0

    engines = ["chaingrad", "torch"] + ["baseline"] * (args.baseline is not None)
    runs: dict[str, list[dict]] = {engine: [] for engine in engines}
    for r in range(args.runs):
        for engine in engines if r % 2 == 0 else engines[::-1]:
            try:
                options = ["--budget", str(args.budget), "--clock", args.clock]
                options += ["--quick"] * args.quick + ["--only", args.only] * bool(args.only)
                runs[engine].append(run_worker(__file__, engine, args, options))
            except RuntimeError as exc:  # the worker's own error is the message's last line
                print(exc, file=sys.stderr)
                return 1
            print(f"run {r + 1}/{args.runs}: {engine} done", file=sys.stderr)
    table = {engine: {case: {phase: summary([run[case][phase] for run in done])
                             for phase in phases}
                      for case, phases in done[0].items()}
             for engine, done in runs.items()}
    print(_format(table, args.runs, args.clock))
    if args.json:
        payload = {"command": " ".join(["python", "benchmarks/conv.py"] + sys.argv[1:]),
                   "runs": args.runs, "clock": args.clock, "results": table}
        write_json(args.json, payload)
    return 0


def _format(table: dict, runs: int, clock: str) -> str:
    """The table: per case and phase, each engine's median (spread) and chaingrad / torch."""
    extra = "baseline" in table
    head = f"{'case':<28} {'':>4} {'chaingrad us':>16} {'torch us':>16} {'cg/torch':>8}"
    head += f" {'baseline us':>16} {'base/torch':>10}" * extra
    lines = [f"{clock} clock, median of {runs} run(s), (spread) = (max - min) / median; "
             "cg/torch below 1: chaingrad is faster", head]
    for case, phases in table["chaingrad"].items():
        for k, phase in enumerate(phases):
            cells = [table[e][case][phase] for e in ("chaingrad", "torch")]
            row = f"{case if k == 0 else '':<28} {phase:>4}"
            row += "".join(f" {c['median']:>9.1f} ({c['spread']:>3.0%})" for c in cells)
            row += f" {cells[0]['median'] / cells[1]['median']:>8.2f}"
            if extra:
                base = table["baseline"][case][phase]
                row += f" {base['median']:>9.1f} ({base['spread']:>3.0%})"
                row += f" {base['median'] / cells[1]['median']:>10.2f}"
            lines.append(row)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
