"""How much of a GPT step's (or the LSTM language model's) numpy floor is matrix products,
and how long do torch's take for the same products? (issue 32 point 5, issue 34 point 7:
whether numpy's BLAS alone puts torch's time out of reach.)

Run from the repository root:

    python benchmarks/floor_matmuls.py [--workload T6] [--rounds 3] [--repeats 20]
    python benchmarks/floor_matmuls.py --workload LSTM   # lstm_lm_step.py's step by hand

It records every product the workload's step by hand (``workloads/by_hand.py``) makes
in one step (the same arrays, views and ``out=``), then times, each engine in a process of
its own, one thread, the engines alternating round after round: numpy replaying those
calls, and torch's ``a @ b`` on the same operands (``torch.from_numpy`` of the same views,
so the same shapes and memory layouts), each result dropped at once.
The numpy process also times the whole step, the step and its products taking turns: what
is left of it, the step less its products, is the floor's elementwise, reduction and
indexing work, of which it times GELU's forward and backward and AdamW's update apart
(the LSTM: its clip_grad_norm_ and SGD's update).
Each figure: the median over ``--repeats`` in a process, then the median of those over the
rounds, with the spread (max - min) / median.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (or torch) is imported anywhere in this process

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import by_hand  # noqa: E402
from workloads.usage import Parser  # noqa: E402

FLOORS = ("T5", "T6", "T7", "LSTM")
"""The steps by hand it splits: the GPT workloads' (``by_hand.GPT_FLOORS``) and the LSTM
language model's of ``lstm_lm_step.py`` (``by_hand.LstmLmByHand``)."""


def floor_of(workload: str) -> tuple[Any, Any]:
    """The step by hand of ``workload`` (``FLOORS``), and a function taking one step of it
    (the LSTM's on one block of its benchmark's tokens, over and over)."""
    import chaingrad

    if workload != "LSTM":
        floor = by_hand.GPT_FLOORS[workload](chaingrad)
        return floor, floor.step
    import lstm_lm_step as lm

    model, _, batches, _ = lm.build(chaingrad, 1)
    floor = by_hand.LstmLmByHand(model, lm.BATCH, lm.BPTT, lm.LR, lm.CLIP)
    block = batches[0].numpy()
    return floor, lambda: floor.step(block)


def recorded_products(workload: str) -> tuple[Any, list[tuple[Any, Any, Any]]]:
    """The step by hand of ``workload``, warmed up, and the (a, b, out) of each product its
    next step makes."""
    floor, _, calls = recorded(workload)
    return floor, calls


def recorded(workload: str) -> tuple[Any, Any, list[tuple[Any, Any, Any]]]:
    """``recorded_products``, with the function that takes the floor's step between them."""
    floor, step = floor_of(workload)
    step()
    calls: list[tuple[Any, Any, Any]] = []

    def record(a: Any, b: Any, out: Any = None) -> Any:
        calls.append((a, b, out))
        return np.matmul(a, b, out=out)

    floor.matmul = record
    step()
    floor.matmul = np.matmul
    return floor, step, calls


def kind(a: Any, b: Any) -> str:
    """The product's shapes, a transposed operand marked ``T``: ``(768,512)T @ (768,128)``."""
    def one(x: Any) -> str:
        shape = "(" + ",".join(map(str, x.shape)) + ")"
        return shape + ("" if x.strides[-1] == x.itemsize else "T")
    return f"{one(a)} @ {one(b)}"


def gelu_of(floor: Any) -> Any:
    """The step's GELUs, forward and backward, on its own arrays (the backward's gradient
    first copied afresh from the output, a copy included in the time); nothing for ReLU
    (and the LSTM)."""
    def run() -> None:
        if not getattr(floor, "gelu", False):
            return
        for layer in range(floor.layers):
            hpre, phi = floor.hpre[layer].reshape(-1), floor.phi[layer].reshape(-1)
            by_hand.gelu_forward(hpre, phi, floor.u[layer].reshape(-1), *floor.scratch[:2])
            np.copyto(floor.gu, floor.u[layer])
            by_hand.gelu_backward(floor.gu.reshape(-1), hpre, phi, floor.scratch[0])
    return run


def median_ms(*runs: Any, repeats: int) -> list[float]:
    """The median time of each of ``runs`` (functions), in ms, the runs taking turns."""
    times: list[list[float]] = [[] for _ in runs]
    for run in runs:
        run()
    for _ in range(repeats):
        for run, taken in zip(runs, times):
            start = time.perf_counter()
            run()
            taken.append(time.perf_counter() - start)
    return [statistics.median(taken) * 1e3 for taken in times]


def measure(engine: str, workload: str, repeats: int) -> dict[str, Any]:
    """This process's figures for ``engine``: ms per step of all the products, of each kind
    of product, and (numpy) of the whole step."""
    floor, step, calls = recorded(workload)
    update = floor.update if workload == "LSTM" else floor.adamw
    groups: dict[str, list[tuple[Any, Any, Any]]] = {}
    for call in calls:
        groups.setdefault(kind(*call[:2]), []).append(call)
    if engine == "numpy":
        def replay(some: list) -> Any:
            def run() -> None:
                for a, b, out in some:
                    np.matmul(a, b, out=out)
            return run
    else:
        import torch

        torch.set_num_threads(1)
        groups = {key: [(torch.from_numpy(a), torch.from_numpy(b), None) for a, b, _ in some]
                  for key, some in groups.items()}

        def replay(some: list) -> Any:
            def run() -> None:
                for a, b, _ in some:
                    a @ b  # the result dropped at once: torch's allocator hands its memory back
            return run
    every = [call for some in groups.values() for call in some]
    result: dict[str, Any] = {"count": len(every)}
    if engine == "numpy":  # the step, its products and two parts of the rest taking turns
        result["step"], result["products"], result["gelu"], result["adamw"] = median_ms(
            step, replay(every), gelu_of(floor), update, repeats=repeats)
        if not getattr(floor, "gelu", False):
            result["gelu"] = None
    else:
        result["products"], = median_ms(replay(every), repeats=repeats)
    result["kinds"] = {key: [len(some), median_ms(replay(some), repeats=repeats)[0]]
                       for key, some in groups.items()}
    return result


def spread(values: list[float]) -> str:
    middle = statistics.median(values)
    return f"{middle:.2f} ms ({(max(values) - min(values)) / middle:.0%})"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="floor_matmuls.py", description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="T6", choices=FLOORS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--engine", choices=("numpy", "torch"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine:  # a child: one engine's figures, as JSON on stdout
        print(json.dumps(measure(args.engine, args.workload, args.repeats)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"numpy": [], "torch": []}
    for turn in range(args.rounds):
        for engine in ("numpy", "torch")[::1 if turn % 2 == 0 else -1]:
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--engine", engine,
                                   "--workload", args.workload, "--repeats", str(args.repeats)],
                                  capture_output=True, text=True, check=True)
            runs[engine].append(json.loads(done.stdout))
    numpy_runs, torch_runs = runs["numpy"], runs["torch"]
    print(f"{args.workload} by hand: {numpy_runs[0]['count']} products a step; medians of "
          f"{args.rounds} processes per engine (spread), one thread")
    steps = [r["step"] for r in numpy_runs]
    products = [r["products"] for r in numpy_runs]
    print(f"  numpy step by hand            {spread(steps)}")
    print(f"  its products, numpy           {spread(products)}")
    print(f"  the rest (step - products)    {spread([s - p for s, p in zip(steps, products)])}")
    if numpy_runs[0]["gelu"] is not None:
        print(f"    of which GELU, fwd + bwd    {spread([r['gelu'] for r in numpy_runs])}")
    update = "clip + SGD" if args.workload == "LSTM" else "AdamW's update"
    print(f"    of which {update:<19}{spread([r['adamw'] for r in numpy_runs])}")
    print(f"  the same products, torch      {spread([r['products'] for r in torch_runs])}")
    print("  per kind of product (count a step): numpy ms, torch ms, per step")
    for key, (count, _) in numpy_runs[0]["kinds"].items():
        mine = statistics.median(r["kinds"][key][1] for r in numpy_runs)
        theirs = statistics.median(r["kinds"][key][1] for r in torch_runs)
        print(f"    {key:<42} x{count:<3} {mine:7.2f} {theirs:7.2f}  {mine / theirs:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
