"""micrograd's demo training step, micrograd 0.1.0 and chaingrad side by side in one process.

The step: MLP(2, [16, 16, 1]) on 100 make_moons points, full batch, SVM max-margin loss
plus 1e-4 L2, forward + backward + SGD update. Each engine runs blocks of consecutive
steps (a training loop, so each pays for freeing its own graphs, cyclic garbage included),
the engines alternate block by block, and the script prints the median time per step and
the ratio. Nothing here touches the garbage collector's settings: both engines run with the
interpreter's defaults, as a user's script would.

Run:
    pip install -e '.[demo]' micrograd==0.1.0
    python benchmarks/bench_micrograd_step.py [--blocks 5] [--steps 3]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
import tracemalloc


def make_step(Value, MLP, X, y):
    """A training step written exactly as micrograd's demo notebook does it."""
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    params = model.parameters()

    def step(k: int) -> float:
        inputs = [list(map(Value, xrow)) for xrow in X]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = 1e-4 * sum(p * p for p in params)
        total_loss = data_loss + reg_loss
        model.zero_grad()
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / 100
        for p in params:
            p.data -= learning_rate * p.grad
        return float(total_loss.data)

    return step


def bytes_per_node(Value, MLP, X) -> tuple[float, int]:
    """Peak traced memory of one forward graph, divided by its number of nodes."""
    random.seed(1337)
    model = MLP(2, [16, 16, 1])
    gc.collect()
    tracemalloc.start()
    scores = [model(list(map(Value, xrow))) for xrow in X]
    total = sum(scores)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    seen, stack = set(), [total]
    while stack:  # count the nodes (micrograd's _prev is a set, chaingrad's a tuple)
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            stack.extend(node._prev)
    return current / len(seen), len(seen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=5, help="blocks per engine")
    parser.add_argument("--steps", type=int, default=3, help="consecutive steps per block")
    args = parser.parse_args(argv)

    import numpy as np
    from sklearn.datasets import make_moons

    import chaingrad
    from chaingrad.nn import MLP as CgMLP

    engines = {"chaingrad": (chaingrad.Value, CgMLP)}
    try:
        import micrograd.engine
        import micrograd.nn

        engines["micrograd"] = (micrograd.engine.Value, micrograd.nn.MLP)
    except ImportError:
        print("micrograd not installed: pip install micrograd==0.1.0", file=sys.stderr)

    np.random.seed(1337)
    X, y = make_moons(n_samples=100, noise=0.1)
    y = y * 2 - 1
    steps = {name: make_step(V, M, X, y) for name, (V, M) in engines.items()}
    times: dict[str, list[float]] = {name: [] for name in engines}
    k = {name: 0 for name in engines}
    for _ in range(args.blocks):
        for name, step in steps.items():
            gc.collect()  # start each block from the same clean heap; not timed
            step(k[name])  # untimed: so that each timed step frees a previous step's graph
            k[name] += 1
            start = time.perf_counter()
            for _ in range(args.steps):
                step(k[name])
                k[name] += 1
            times[name].append((time.perf_counter() - start) / args.steps)

    print(f"python {sys.version.split()[0]}, chaingrad {chaingrad.__version__}, "
          f"{args.blocks} blocks x {args.steps} steps per engine, default gc settings")
    print(f"{'engine':<12}{'ms/step':>10}{'bytes/node':>12}{'nodes':>8}{'speed-up':>10}")
    base = statistics.median(times["chaingrad"])
    for name, (V, M) in engines.items():
        med = statistics.median(times[name])
        per_node, nodes = bytes_per_node(V, M, X)
        print(f"{name:<12}{med * 1e3:>10.1f}{per_node:>12.0f}{nodes:>8}{med / base:>9.1f}x")
    if "micrograd" in times:
        ratio = statistics.median(times["micrograd"]) / base
        print(f"chaingrad is {ratio:.1f}x faster per step than micrograd 0.1.0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
