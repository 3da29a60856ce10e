"""The scalar workloads S1-S3, written once against ``engines``' interface.

Each workload is a class built from an engine and sizes; ``block()`` runs one timed block
and returns ``{metric: number}``. Nothing is timed while a graph is freed, but whatever
the interpreter does during a timed block (the cyclic garbage collector running with its
default settings included) is counted, as it is in a user's script.

A block reads the workload's ``clock``: wall time (``time.perf_counter``) unless a worker
is told to set it to this process's CPU time (``CLOCKS``), which leaves out the time the
process waited for a core while other programs ran.
"""

from __future__ import annotations

import gc
import math
import random
import time
from typing import Any

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""The clocks a block can read, by name: elapsed time, or this process's CPU time."""

# S1's op cycle: y = relu(y * w + b), three ops per turn (micrograd 0.1.0 has no tanh).
S1_OPS_PER_TURN = 3


class ChainS1:
    """S1: a chain of ``n_ops`` scalar ops, forward and backward timed separately (ns/op)."""

    metrics = ("fwd ns/op", "bwd ns/op")
    clock = staticmethod(CLOCKS["wall"])

    def __init__(self, engine: Any, n_ops: int = 100_002):
        self.engine = engine
        self.turns = max(1, n_ops // S1_OPS_PER_TURN)
        self.n_ops = self.turns * S1_OPS_PER_TURN

    def block(self) -> dict[str, float]:
        eng = self.engine
        w, b, y = eng.param(0.999), eng.param(0.001), eng.param(0.5)
        start = self.clock()
        for _ in range(self.turns):
            y = (y * w + b).relu()
        built = self.clock()
        eng.backward(y)
        done = self.clock()
        return {"fwd ns/op": (built - start) * 1e9 / self.n_ops,
                "bwd ns/op": (done - built) * 1e9 / self.n_ops}


class MoonsStepS2:
    """S2: micrograd's demo training step (``demo.ipynb``), as the notebook writes it.

    MLP(2, [16, 16, 1]) on 100 make_moons points, full batch, SVM max-margin loss plus
    1e-4 L2, accuracy, ``zero_grad``, ``backward``, SGD with the notebook's decaying rate.
    A block is one untimed step and then ``steps`` timed consecutive steps (a training
    loop, so each timed step also pays for freeing the previous step's graph); the step
    counter runs on across blocks.
    """

    metrics = ("ms/step",)
    clock = staticmethod(CLOCKS["wall"])

    def __init__(self, engine: Any, X: Any, y: Any, steps: int = 3):
        self.engine, self.X, self.y, self.steps = engine, X, y, steps
        random.seed(1337)  # the notebook's seed: every engine starts from micrograd's weights
        self.model = engine.mlp(2, [16, 16, 1])
        self.k = 0
        self.last_loss = math.nan

    def loss(self) -> tuple[Any, float]:
        eng, model, Value, X, y = self.engine, self.model, self.engine.value, self.X, self.y
        inputs = [list(map(Value, xrow)) for xrow in X]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        alpha = 1e-4
        reg_loss = alpha * sum(p * p for p in model.parameters())
        total_loss = data_loss + reg_loss
        accuracy = [(yi > 0) == (eng.data(scorei) > 0) for yi, scorei in zip(y, scores)]
        return total_loss, sum(accuracy) / len(accuracy)

    def step(self) -> None:
        eng, model = self.engine, self.model
        total_loss, acc = self.loss()
        model.zero_grad()
        eng.backward(total_loss)
        learning_rate = 1.0 - 0.9 * self.k / 100
        eng.sgd(model.parameters(), learning_rate)
        self.last_loss = eng.data(total_loss)
        self.k += 1

    def block(self) -> dict[str, float]:
        # An untimed step first: the block starts after a gc.collect(), and without it the
        # first timed step would not pay for freeing a previous step's graph, as every
        # step of a training loop does (for micrograd, whose graphs are reference cycles,
        # that is a third of its step time).
        self.step()
        start = self.clock()
        for _ in range(self.steps):
            self.step()
        return {"ms/step": (self.clock() - start) * 1e3 / self.steps}


class CompiledMoonsStepS2(MoonsStepS2):
    """S2 compiled: the same step, with the loss (and the scores, for the accuracy) made by
    ``chaingrad.compile`` of the notebook's own lines. Compiling happens at the first step
    (the untimed one of the first block) and is reported apart, and amortised over 100
    steps."""

    metrics = ("ms/step", "compile ms", "ms/step incl. compile/100")

    def __init__(self, engine: Any, X: Any, y: Any, steps: int = 3):
        super().__init__(engine, X, y, steps)
        import chaingrad

        model, Value = self.model, engine.value

        def loss(X, y):
            inputs = [list(map(Value, xrow)) for xrow in X]
            scores = list(map(model, inputs))
            losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(y, scores)]
            data_loss = sum(losses) * (1.0 / len(losses))
            alpha = 1e-4
            reg_loss = alpha * sum(p * p for p in model.parameters())
            return [data_loss + reg_loss, *scores]

        self.compiled = chaingrad.compile(loss)
        self.X, self.y = [list(map(float, row)) for row in X], [int(v) for v in y]
        start = time.perf_counter()
        self.compiled(self.X, self.y)  # the trace and the compile
        self.compile_ms = (time.perf_counter() - start) * 1e3

    def loss(self) -> tuple[Any, float]:
        total_loss, *scores = self.compiled(self.X, self.y)
        accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(self.y, scores)]
        return total_loss, sum(accuracy) / len(accuracy)

    def block(self) -> dict[str, float]:
        times = super().block()
        return {**times, "compile ms": self.compile_ms,
                "ms/step incl. compile/100": times["ms/step"] + self.compile_ms / 100}


def deep_mlp_sizes(width: int, depth: int) -> tuple[int, list[int], list[float]]:
    """S3's network: ``width`` inputs, ``depth`` ReLU layers of ``width``, one linear output.

    Weights are micrograd's ``uniform(-1, 1)`` scaled by sqrt(6 / fan_in) (He init), so
    that hundreds of layers neither overflow nor vanish.
    """
    nouts = [width] * depth + [1]
    sizes = [width] + nouts
    return width, nouts, [math.sqrt(6.0 / sizes[i]) for i in range(len(nouts))]


def deep_mlp_nodes(width: int, depth: int) -> int:
    """Nodes of S3's graph: inputs, parameters, and per neuron n '*', n '+' and a ReLU."""
    nin, nouts, _ = deep_mlp_sizes(width, depth)
    sizes = [nin] + nouts
    total = nin
    for i, nout in enumerate(nouts):
        fan_in, relu = sizes[i], i != len(nouts) - 1
        total += nout * ((fan_in + 1) + 2 * fan_in + relu)
    return total


class DeepMlpS3:
    """S3: one forward and backward pass through a deep scalar MLP of ~1,000,000 nodes.

    The model is built once (not timed); a block times the forward pass (building the
    graph) and the backward pass. Peak memory is measured apart, in a fresh process
    (``worker.py probe``), since tracemalloc and RSS need a process of their own.
    """

    metrics = ("ns/node", "fwd ms", "bwd ms")
    clock = staticmethod(CLOCKS["wall"])

    def __init__(self, engine: Any, width: int = 32, depth: int = 319, seed: int = 0):
        self.engine = engine
        nin, nouts, scales = deep_mlp_sizes(width, depth)
        random.seed(seed)
        self.model = engine.mlp(nin, nouts, scales)
        self.x = [random.uniform(-1, 1) for _ in range(nin)]
        self.nodes = deep_mlp_nodes(width, depth)

    def run(self) -> tuple[float, float]:
        eng = self.engine
        eng.zero_grad(self.model)
        start = self.clock()
        out = self.model([eng.value(v) for v in self.x])
        built = self.clock()
        eng.backward(out)
        return built - start, self.clock() - built

    def block(self) -> dict[str, float]:
        fwd, bwd = self.run()
        gc.collect()  # free the graph before the next engine's block; not timed
        return {"ns/node": (fwd + bwd) * 1e9 / self.nodes, "fwd ms": fwd * 1e3,
                "bwd ms": bwd * 1e3}


def peak_memory(engine: Any, width: int, depth: int, mode: str) -> dict[str, float]:
    """S3's peak memory per node, in this (fresh) process: build the model, run a pass.

    ``mode='tracemalloc'``: the peak of Python's allocator during model + forward + backward
    (blind to memory that C++ engines allocate themselves). ``mode='rss'``: the growth of
    the process's peak resident set over the same span (sees everything, page-granular).
    """
    gc.collect()
    if mode == "tracemalloc":
        import tracemalloc

        tracemalloc.start()
        work = DeepMlpS3(engine, width, depth)
        work.run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    else:
        before = _peak_rss()
        work = DeepMlpS3(engine, width, depth)
        work.run()
        peak = _peak_rss() - before
    return {f"{mode} B/node": peak / work.nodes}


def _peak_rss() -> int:
    """This process's peak resident set in bytes.

    Linux's VmHWM belongs to the process image, so it starts afresh at exec; ru_maxrss
    (the fallback elsewhere) would carry over the peak of the parent that spawned us.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
