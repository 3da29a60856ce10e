"""Where a GPT training step's time goes, op by op, on chaingrad and on torch (T6, T7).

T6 and T7 (benchmarks/README.md) are nanoGPT's training iteration: forward, backward,
(T7: ``clip_grad_norm_``), AdamW's step. This script runs one of them for ``--steps``
steps after two untimed ones, each engine in a fresh process of its own (this script with
``--engine``), one thread, and prints the CPU time per step by op type, side by side:

- chaingrad: each node's forward is the CPU time from the previous node's creation to its
  own (``make_node`` wrapped: the op's kernel and its Python around it, what a module call
  adds between ops included), each rule's the time of its call in ``backward()`` (the
  primitives' ``vjp`` wrapped); what else the backward pass does (the topological order,
  the gradients added up, the checks) and the optimizer are phases of their own.
- torch: ``torch.profiler``'s self CPU time of each aten op, the autograd engine's own
  work as "backward (other)".

The profilers add their own cost (a few microseconds an op), so the totals are above a
plain step's (``benchmarks/run.py``); the shares are what to read. Run from the
repository root:

    python benchmarks/profile_gpt.py [--workload T6] [--steps 5] [--json FILE]
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
from collections import defaultdict  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import lectures  # noqa: E402

CATEGORIES = {
    # chaingrad's primitives, by name
    "matmul": "matmul (Linear, attention)", "einsum": "matmul (Linear, attention)",
    "layer_norm": "layer_norm", "gelu": "gelu", "softmax": "softmax",
    "log_softmax": "cross_entropy", "nll_loss": "cross_entropy",
    "getitem": "embedding (getitem, scatter)", "scatter": "embedding (getitem, scatter)",
    "+": "add, mul, scale", "*": "add, mul, scale", "scale": "add, mul, scale",
    "/": "add, mul, scale",
    "reshape": "view, transpose, split", "transpose": "view, transpose, split",
    "broadcast_to": "view, transpose, split",
    "where": "masked_fill", "sum": "sum",
    # torch's aten ops, by name
    "aten::mm": "matmul (Linear, attention)", "aten::addmm": "matmul (Linear, attention)",
    "aten::bmm": "matmul (Linear, attention)", "aten::matmul": "matmul (Linear, attention)",
    "aten::linear": "matmul (Linear, attention)",
    "aten::native_layer_norm": "layer_norm", "aten::native_layer_norm_backward": "layer_norm",
    "aten::gelu": "gelu", "aten::gelu_backward": "gelu",
    "aten::_softmax": "softmax", "aten::_softmax_backward_data": "softmax",
    "aten::_log_softmax": "cross_entropy", "aten::_log_softmax_backward_data": "cross_entropy",
    "aten::nll_loss_forward": "cross_entropy", "aten::nll_loss_backward": "cross_entropy",
    "aten::embedding": "embedding (getitem, scatter)",
    "aten::embedding_dense_backward": "embedding (getitem, scatter)",
    "aten::index_select": "embedding (getitem, scatter)",
    "aten::embedding_backward": "embedding (getitem, scatter)",
    "aten::index_add_": "embedding (getitem, scatter)",
    "aten::add": "add, mul, scale", "aten::mul": "add, mul, scale", "aten::div": "add, mul, scale",
    "aten::view": "view, transpose, split", "aten::transpose": "view, transpose, split",
    "aten::split": "view, transpose, split", "aten::reshape": "view, transpose, split",
    "aten::_unsafe_view": "view, transpose, split", "aten::t": "view, transpose, split",
    "aten::clone": "view, transpose, split", "aten::copy_": "view, transpose, split",
    "aten::contiguous": "view, transpose, split", "aten::expand": "view, transpose, split",
    "aten::masked_fill": "masked_fill", "aten::masked_fill_": "masked_fill",
    "aten::sum": "sum",
    "aten::_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward":
        "scaled_dot_product_attention",
}
"""The op type each primitive (chaingrad) or aten op (torch) counts under; others count
as "other ops"."""

PHASES = ("optimizer step", "zero_grad", "clip_grad_norm_", "backward (other)", "batch")
"""The parts of a step that are not one op's."""


def category(name: str) -> str:
    return CATEGORIES.get(name, "other ops")


# ---- chaingrad: make_node and the rules wrapped ----


def profile_chaingrad(workload: str, steps: int) -> dict[str, dict[str, float]]:
    """CPU seconds per step on chaingrad, by op type: {"fwd": {...}, "bwd": {...}, "phase":
    {...}}."""
    import chaingrad
    from chaingrad import rules
    from chaingrad.tensor_engine import rules as tensor_rules
    from chaingrad.tensor_engine import tensor

    clock = time.thread_time
    work = lectures.STEPS[workload](chaingrad)
    plain = plain_steps(work, steps, clock)
    spent: dict[str, dict[str, float]] = {"fwd": defaultdict(float), "bwd": defaultdict(float),
                                          "phase": defaultdict(float)}
    last, forward = [clock()], [False]  # forward: whether the model's forward is running
    original = tensor.make_node

    def make_node(data: Any, children: tuple, rule: Any) -> Any:
        if forward[0]:
            spent["fwd"][rule.primitive.name] += clock() - last[0]
        out = original(data, children, rule)
        last[0] = clock()
        return out

    for module in list(sys.modules.values()):
        if getattr(module, "make_node", None) is original and module.__name__.startswith(
                "chaingrad"):
            module.make_node = make_node
    tensor.Tensor._node = staticmethod(make_node)
    for prim in rules.PRIMITIVES + tensor_rules.PRIMITIVES:
        prim.vjp = timed_rule(prim.vjp, prim.name, spent["bwd"], clock)

    phases = spent["phase"]
    model, optimizer = work.model, work.optimizer
    for k in range(steps + 2):
        if k == 2:
            for part in spent.values():
                part.clear()
        start = clock()
        batch = work.next_batch()
        phases["batch"] += clock() - start
        forward[0], last[0] = True, clock()
        _, loss = model(*batch)
        forward[0] = False
        spent["fwd"]["(after the last node)"] += clock() - last[0]
        start = clock()
        ruled = sum(spent["bwd"].values())
        loss.backward()
        phases["backward (other)"] += clock() - start - (sum(spent["bwd"].values()) - ruled)
        if workload == "T7":
            start = clock()
            chaingrad.nn.utils.clip_grad_norm_(model.parameters(), work.c["grad_clip"])
            phases["clip_grad_norm_"] += clock() - start
        start = clock()
        optimizer.step()
        phases["optimizer step"] += clock() - start
        start = clock()
        optimizer.zero_grad(set_to_none=True)
        phases["zero_grad"] += clock() - start
    result = {part: {name: t / steps for name, t in times.items()}
              for part, times in spent.items()}
    return result | {"plain": {"step": plain}}


def plain_steps(work: Any, steps: int, clock: Any) -> float:
    """The median CPU time of ``steps`` steps as the workload runs them (nothing wrapped),
    after two untimed ones."""
    times = []
    for k in range(steps + 2):
        start = clock()
        work.step()
        if k >= 2:
            times.append(clock() - start)
    return statistics.median(times)


def timed_rule(vjp: Any, name: str, spent: dict[str, float], clock: Any) -> Any:
    """``vjp`` adding the CPU time of each call to ``spent[name]``."""

    def rule(*args: Any) -> Any:
        start = clock()
        try:
            return vjp(*args)
        finally:
            spent[name] += clock() - start

    rule.__doc__ = vjp.__doc__
    return rule


# ---- torch: its profiler ----


def profile_torch(workload: str, steps: int) -> dict[str, dict[str, float]]:
    """CPU seconds per step on torch, by aten op (self time), in the same layout."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.set_num_threads(1)
    work = lectures.STEPS[workload](torch)
    plain = plain_steps(work, steps, time.thread_time)
    spent: dict[str, dict[str, float]] = {"fwd": {}, "bwd": {}, "phase": {},
                                          "plain": {"step": plain}}
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            work.step()
    for event in prof.key_averages():
        name, seconds = event.key, event.self_cpu_time_total / 1e6 / steps
        if seconds <= 0:
            continue
        if "Backward" in name or name.startswith("autograd::engine"):
            spent["phase"]["backward (other)"] = spent["phase"].get("backward (other)",
                                                                  0.0) + seconds
        elif name.startswith(("Optimizer.step", "aten::_foreach", "aten::lerp", "aten::addcdiv",
                              "aten::addcmul", "aten::sqrt", "aten::_fused_adamw")):
            spent["phase"]["optimizer step"] = spent["phase"].get("optimizer step",
                                                                0.0) + seconds
        else:
            spent["fwd"][name] = spent["fwd"].get(name, 0.0) + seconds
    return spent


# ---- the driver ----


def by_category(spent: dict[str, dict[str, float]]) -> dict[str, float]:
    """Microseconds per step by op type (forward and backward together) and phase."""
    out: dict[str, float] = defaultdict(float)
    for part in ("fwd", "bwd"):
        for name, seconds in spent[part].items():
            out[category(name)] += seconds * 1e6
    for name, seconds in spent["phase"].items():
        out[name] += seconds * 1e6
    return dict(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="profile_gpt.py", description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="T6", choices=["T6", "T7"])
    parser.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    parser.add_argument("--json", metavar="FILE", help="write both engines' figures as JSON")
    parser.add_argument("--engine", choices=["chaingrad", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    if args.engine:
        run = profile_chaingrad if args.engine == "chaingrad" else profile_torch
        print(json.dumps(run(args.workload, args.steps)))
        return 0
    results = {}
    for engine in ("chaingrad", "torch"):
        done = subprocess.run([sys.executable, __file__, "--workload", args.workload,
                               "--steps", str(args.steps), "--engine", engine],
                              capture_output=True, text=True)
        if done.returncode:
            print(done.stderr.strip().splitlines()[-1], file=sys.stderr)
            return 1
        results[engine] = json.loads(done.stdout)
    ours, theirs = by_category(results["chaingrad"]), by_category(results["torch"])
    plain = [results[e]["plain"]["step"] * 1e3 for e in ("chaingrad", "torch")]
    print(f"{args.workload}: a plain step (nothing wrapped), the median of {args.steps}: "
          f"chaingrad {plain[0]:.1f} ms, torch {plain[1]:.1f} ms (CPU time; chaingrad / torch "
          f"{plain[0] / plain[1]:.2f})")
    print(f"profiled, CPU us per step (the mean of {args.steps} steps after 2), one thread, "
          "each engine in its own process")
    print(f"{'op type or phase':<32} {'chaingrad':>10} {'torch':>10} {'cg - torch':>11}")
    for name in sorted(set(ours) | set(theirs), key=lambda n: -ours.get(n, 0.0)):
        a, b = ours.get(name, 0.0), theirs.get(name, 0.0)
        print(f"{name:<32} {a:>10.0f} {b:>10.0f} {a - b:>11.0f}")
    a, b = sum(ours.values()), sum(theirs.values())
    print(f"{'total':<32} {a:>10.0f} {b:>10.0f} {a - b:>11.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"workload": args.workload, "steps": args.steps, "results": results}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
