"""Where chaingrad's S2 step goes: micrograd's demo step, split into its phases.

S2 (see README.md) is one training step of micrograd's demo: MLP(2, [16, 16, 1]) on 100
moons points, hinge loss + 1e-4 L2, backward, SGD. This script runs it as a training loop
in a process of its own and prints the CPU time per step of each phase, with the cyclic
garbage collector's share measured apart (through ``gc.callbacks``), and the node count:
what bounds the step, in numbers. Nothing changes the collector's settings.

Run:
    pip install -e '.[demo]'
    python benchmarks/profile_s2.py [--steps 15]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import time
from collections import defaultdict

MOONS = """
import json, numpy as np
from sklearn.datasets import make_moons
np.random.seed(1337)
X, y = make_moons(n_samples=100, noise=0.1)
print(json.dumps([X.tolist(), (y * 2 - 1).tolist()]))
"""


def moons() -> tuple[list, list]:
    """The notebook's 100 points, made in a child process, as benchmarks/run.py makes them:
    numpy and scikit-learn are not imported here, so the collector walks only what the
    training loop makes (as in a benchmark worker)."""
    out = subprocess.run([sys.executable, "-c", MOONS], capture_output=True, text=True,
                         check=True).stdout
    X, y = json.loads(out)
    return X, y


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=15, help="timed steps (default 15)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")

    from chaingrad import Value, autodiff
    from chaingrad.nn import MLP

    X, y = moons()
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    params = model.parameters()
    spent: dict[str, float] = defaultdict(float)
    clock = time.process_time

    real_order = autodiff.topological_order

    def timed_order(root):  # backward's first part, timed on its own
        start = clock()
        order = real_order(root)
        spent["backward: topological order"] += clock() - start
        return order

    autodiff.topological_order = timed_order  # backward looks it up at each call
    gc_started = [0.0]

    def gc_clock(phase: str, info: dict) -> None:
        if phase == "start":
            gc_started[0] = clock()
        else:
            spent["cyclic garbage collector"] += clock() - gc_started[0]

    def step(k: int) -> int:
        t0 = clock()
        inputs = [list(map(Value, row)) for row in X]
        scores = list(map(model, inputs))
        t1 = clock()
        losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
        total = sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in params)
        t2 = clock()
        model.zero_grad()
        total.backward()
        t3 = clock()
        for p in params:
            p.data -= (1.0 - 0.9 * k / 100) * p.grad
        t4 = clock()
        spent["forward: the model"] += t1 - t0
        spent["forward: loss and L2"] += t2 - t1
        spent["backward: all of it"] += t3 - t2
        spent["SGD update"] += t4 - t3
        return len(real_order(total)) if k == 0 else 0

    nodes = step(0)  # untimed, as in the benchmark: each timed step frees the one before
    spent.clear()
    gc.callbacks.append(gc_clock)
    start = clock()
    for k in range(1, args.steps + 1):
        step(k)
    total = (clock() - start) / args.steps
    gc.callbacks.remove(gc_clock)
    autodiff.topological_order = real_order

    gc_ms = spent.pop("cyclic garbage collector") / args.steps * 1e3
    print(f"chaingrad S2 step: {total * 1e3:.1f} ms of CPU per step, {nodes:,} graph nodes "
          f"({total * 1e9 / nodes:.0f} ns per node), {args.steps} steps, python "
          f"{sys.version.split()[0]}, default gc settings")
    for name in ("forward: the model", "forward: loss and L2", "backward: all of it",
                 "backward: topological order", "SGD update"):
        indent = "    " if name == "backward: topological order" else "  "
        print(f"{indent}{name:<{32 - len(indent)}}{spent[name] / args.steps * 1e3:>8.1f} ms")
    print(f"  {'of which the collector':<30}{gc_ms:>8.1f} ms (it runs inside the phases "
          "above, mostly as a model call ends)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
