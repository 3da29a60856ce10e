"""Every op, forward and forward + backward, chaingrad beside PyTorch (one thread each).

Run from the repository root (benchmarks/README.md, "Op by op"):

    python benchmarks/ops.py [--runs 3] [--only NAME,...] [--sizes 32x200,512x192]
                             [--json out.json] [--quick] [--baseline PATH]

The cases are each primitive of ``chaingrad/rules.py`` and ``chaingrad/tensor_engine/
rules.py`` (``PRIMITIVES``) and the torch functions that the lectures and nanoGPT-style
models call (``F.linear``, ``F.gelu``, ``F.layer_norm``, ``F.cross_entropy``, ...), each
written once against torch's API and run on ``torch`` and on ``chaingrad`` (``import
chaingrad as torch``), on float32 inputs of two sizes: a lecture's activation (32x200) and
a GPT's (512x192). Convolution and pooling have their own script, ``conv.py``.

Each engine runs in a fresh process of its own (this script with ``--worker``), one after
the other, the order reversed every other run, one BLAS/OpenMP thread each
(``torch.set_num_threads(1)``). A worker times every case: ``fwd`` is the op called on
inputs that require a gradient (the graph is recorded, as in training), ``fwd+bwd`` that
and ``y.backward(g)`` (every input's ``.grad`` reset to None first, untimed), each the
median of as many calls as fit in ``--budget`` seconds. The table gives per case and size
the median over the runs, the spread (max - min) / median over the runs and the ratio
chaingrad / torch (below 1, chaingrad is faster).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (or torch) is imported anywhere in this process

import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
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

SIZES = ((32, 200), (512, 192))
QUICK_SIZES = ((4, 6),)
VOCAB = 65  # the embedding table's rows (the GPT lecture's characters)


@dataclass(frozen=True)
class Case:
    """One timed op: its name in the table, the primitives it runs (their ``name``), the
    inputs it takes (``INPUTS``' kinds, space-separated) and the op itself, ``op(torch,
    F, *inputs)`` written against torch's API (``torch``: torch or chaingrad). ``chaingrad``
    is the op for chaingrad, where its API differs from torch's (None: the same); ``random``:
    whether the op draws random numbers (then the engines' results differ)."""

    name: str
    primitives: tuple[str, ...]
    inputs: str
    op: Callable[..., Any]
    chaingrad: Callable[..., Any] | None = None
    random: bool = False


def _pad(t: Any, F: Any, x: Any) -> Any:
    return F.pad(x, (1, 1, 1, 1))


def _setitem(t: Any, F: Any, x: Any, y: Any) -> Any:
    z = x * 1.0  # a copy that the graph records, written in place
    z[:, :8] = y[:, :8]
    return z


def _batched(x: Any) -> Any:
    """x (n, d) as a batch of blocks (n / T, T, d): T = 64 positions (16 for small n)."""
    n, d = x.shape
    block = 64 if n % 64 == 0 else 16 if n % 16 == 0 else n
    return x.view(n // block, block, d)


def _attention_scores(t: Any, F: Any, x: Any, y: Any) -> Any:
    q, k = _batched(x), _batched(y)
    return q @ k.transpose(-2, -1)


CASES: tuple[Case, ...] = (
    # chaingrad/rules.py's primitives
    Case("x + y", ("+",), "x y", lambda t, F, x, y: x + y),
    Case("x * y", ("*",), "x y", lambda t, F, x, y: x * y),
    Case("x - y", ("+", "scale"), "x y", lambda t, F, x, y: x - y),
    Case("x + b (broadcast)", ("+",), "x b", lambda t, F, x, b: x + b),
    Case("x ** 2", ("**n",), "x", lambda t, F, x: x**2),
    Case("x ** 3", ("**n",), "x", lambda t, F, x: x**3),
    Case("x ** 0.5", ("**n",), "pos", lambda t, F, x: x**0.5),
    Case("x ** -1", ("**n",), "pos", lambda t, F, x: x**-1),
    Case("x ** y", ("**",), "pos y", lambda t, F, x, y: x**y),
    Case("relu", ("ReLU",), "x", lambda t, F, x: F.relu(x)),
    Case("tanh", ("tanh",), "x", lambda t, F, x: t.tanh(x)),
    Case("sigmoid", ("sigmoid",), "x", lambda t, F, x: t.sigmoid(x)),
    Case("exp", ("exp",), "x", lambda t, F, x: t.exp(x)),
    Case("log", ("log",), "pos", lambda t, F, x: t.log(x)),
    Case("sqrt", ("sqrt",), "pos", lambda t, F, x: t.sqrt(x)),
    Case("abs", ("abs",), "x", lambda t, F, x: t.abs(x)),
    Case("sin", ("sin",), "x", lambda t, F, x: t.sin(x)),
    Case("cos", ("cos",), "x", lambda t, F, x: t.cos(x)),
    Case("log1p", ("log1p",), "pos", lambda t, F, x: t.log1p(x)),
    Case("expm1", ("expm1",), "x", lambda t, F, x: t.expm1(x)),
    Case("log10", ("log10",), "pos", lambda t, F, x: t.log10(x)),
    Case("log2", ("log2",), "pos", lambda t, F, x: t.log2(x)),
    Case("erf", ("erf",), "x", lambda t, F, x: t.erf(x)),
    Case("F.gelu", ("gelu",), "x", lambda t, F, x: F.gelu(x)),
    Case("F.gelu tanh", ("*", "+", "**n", "tanh"), "x",
         lambda t, F, x: F.gelu(x, approximate="tanh")),
    Case("F.leaky_relu", ("leaky_relu",), "x", lambda t, F, x: F.leaky_relu(x, 0.01)),
    Case("F.softplus", ("softplus",), "x", lambda t, F, x: F.softplus(x)),
    # chaingrad/tensor_engine/rules.py's primitives
    Case("x @ W", ("matmul",), "x w", lambda t, F, x, w: x @ w),
    Case("F.linear", ("matmul", "+"), "x w b", lambda t, F, x, w, b: F.linear(x, w, b)),
    Case("q @ k^T (batched)", ("matmul", "transpose", "reshape"), "x y", _attention_scores),
    Case("x / y", ("/",), "x pos", lambda t, F, x, y: x / y),
    Case("-x", ("scale",), "x", lambda t, F, x: -x),
    Case("x * 0.5", ("*",), "x", lambda t, F, x: x * 0.5),
    Case("sum", ("sum",), "x", lambda t, F, x: x.sum()),
    Case("sum(-1)", ("sum",), "x", lambda t, F, x: x.sum(-1)),
    Case("sum(0)", ("sum",), "x", lambda t, F, x: x.sum(0)),
    Case("mean", ("sum", "scale"), "x", lambda t, F, x: x.mean()),
    Case("mean(-1)", ("sum", "scale"), "x", lambda t, F, x: x.mean(-1)),
    Case("var(-1)", ("sum", "scale", "+", "*"), "x", lambda t, F, x: x.var(-1)),
    Case("max", ("max",), "x", lambda t, F, x: x.max()),
    Case("amax(-1)", ("max",), "x", lambda t, F, x: x.amax(-1)),
    Case("amin(-1)", ("min",), "x", lambda t, F, x: x.amin(-1)),
    Case("max(-1).values", ("max",), "x", lambda t, F, x: x.max(-1).values),
    Case("F.softmax", ("softmax",), "x", lambda t, F, x: F.softmax(x, dim=-1)),
    Case("F.log_softmax", ("log_softmax",), "x", lambda t, F, x: F.log_softmax(x, dim=-1)),
    Case("F.cross_entropy", ("log_softmax", "nll_loss"), "x target",
         lambda t, F, x, target: F.cross_entropy(x, target)),
    Case("F.nll_loss", ("nll_loss",), "x target", lambda t, F, x, target: F.nll_loss(x, target)),
    Case("cumsum(-1)", ("cumsum",), "x", lambda t, F, x: x.cumsum(-1)),
    Case("F.binary_cross_entropy", ("binary_cross_entropy",), "prob prob_target",
         lambda t, F, x, target: F.binary_cross_entropy(x, target)),
    Case("clamp", ("clip",), "x", lambda t, F, x: x.clamp(-0.5, 0.5)),
    Case("view(-1)", ("reshape",), "x", lambda t, F, x: x.view(-1)),
    Case("t()", ("transpose",), "x", lambda t, F, x: x.t()),
    Case("double()", ("to",), "x", lambda t, F, x: x.double()),
    Case("b.expand(n, d)", ("broadcast_to",), "x b", lambda t, F, x, b: b.expand(*x.shape)),
    Case("x[rows]", ("getitem", "scatter"), "x rows", lambda t, F, x, rows: x[rows]),
    Case("x[:, :d/2]", ("getitem", "scatter"), "x", lambda t, F, x: x[:, : x.shape[1] // 2]),
    Case("x[range(n), target]", ("getitem", "scatter"), "x target",
         lambda t, F, x, target: x[t.arange(x.shape[0]), target]),
    Case("F.embedding", ("getitem", "scatter"), "tokens table",
         lambda t, F, tokens, table: F.embedding(tokens, table)),
    Case("z[:, :8] = y[:, :8]", ("setitem", "*"), "x y", _setitem),
    Case("torch.cat", ("concatenate",), "x y", lambda t, F, x, y: t.cat([x, y], dim=1)),
    Case("torch.stack", ("stack",), "x y", lambda t, F, x, y: t.stack([x, y])),
    Case("torch.where", ("where",), "mask x y", lambda t, F, m, x, y: t.where(m, x, y)),
    Case("masked_fill(-inf)", ("where",), "x mask",
         lambda t, F, x, m: x.masked_fill(m, float("-inf"))),
    Case("torch.einsum ij,kj->ik", ("einsum",), "x w",
         lambda t, F, x, w: t.einsum("ij,kj->ik", x, w)),
    Case("F.pad", ("pad",), "x", _pad),
    # the functions that models call, made of primitives
    Case("F.layer_norm", ("layer_norm",), "x b b2",
         lambda t, F, x, w, b: F.layer_norm(x, (x.shape[1],), w, b)),
    Case("F.mse_loss", ("+", "*", "sum", "scale"), "x y", lambda t, F, x, y: F.mse_loss(x, y)),
    Case("F.dropout(p=0)", (), "x", lambda t, F, x: F.dropout(x, 0.0, training=True)),
    Case("F.dropout(eval)", (), "x", lambda t, F, x: F.dropout(x, 0.2, training=False)),
    Case("F.dropout(p=0.2)", ("*",), "x", lambda t, F, x: F.dropout(x, 0.2, training=True),
         random=True),
)
"""The cases, in the table's order."""

ELSEWHERE = {"conv2d": "conv.py", "conv2d_input_grad": "conv.py",
             "conv2d_weight_grad": "conv.py", "max_pool2d": "conv.py", "unpool": "conv.py",
             "lstm_recurrence": "lstm_lm_step.py", "gru_recurrence": "lstm_lm_step.py --model GRU",
             "rnn_recurrence": "lstm_lm_step.py --model RNN_TANH"}
"""Primitives timed by another script, by name."""


def make_inputs(kinds: str, n: int, d: int, seed: int = 0) -> list[Any]:
    """The numpy arrays of a case's inputs (``Case.inputs``) for an (n, d) activation."""
    import numpy as np

    rng = np.random.default_rng(seed)
    made = {
        "x": lambda: rng.standard_normal((n, d)),
        "y": lambda: rng.standard_normal((n, d)),
        "pos": lambda: rng.uniform(0.5, 2.0, (n, d)),  # inside log's and sqrt's domains
        "prob": lambda: rng.uniform(0.05, 0.95, (n, d)),
        "prob_target": lambda: rng.uniform(0.0, 1.0, (n, d)),
        "w": lambda: rng.standard_normal((d, d)) / np.sqrt(d),
        "b": lambda: rng.standard_normal(d),
        "b2": lambda: rng.standard_normal(d),
        "table": lambda: rng.standard_normal((VOCAB, d)),
        "target": lambda: rng.integers(0, d, n),  # a class per row
        "rows": lambda: rng.integers(0, n, n),  # rows picked, some twice
        "tokens": lambda: rng.integers(0, VOCAB, n),
        "mask": lambda: rng.random((n, d)) < 0.3,
    }
    arrays = []
    for kind in kinds.split():
        a = made[kind]()
        arrays.append(a.astype(np.float32) if a.dtype == np.float64 else a)
    return arrays


# ---- the worker: one engine, every case ----


def engine_module(name: str) -> Any:
    """The module that speaks torch's API: torch (one thread) or chaingrad."""
    if name == "torch":
        import torch

        torch.set_num_threads(1)
        return torch
    import chaingrad

    return chaingrad


def prepared(t: Any, case: Case, n: int, d: int) -> tuple[Callable[[], Any], list[Any]]:
    """The case's op on the engine ``t`` as a call without arguments, on its inputs made
    tensors (those of floats require a gradient), and those inputs."""
    F = t.nn.functional
    op = case.chaingrad if case.chaingrad is not None and t.__name__ == "chaingrad" else case.op
    inputs = []
    for a in make_inputs(case.inputs, n, d):
        tensor = t.from_numpy(a)
        inputs.append(tensor.requires_grad_() if a.dtype.kind == "f" else tensor)
    return lambda: op(t, F, *inputs), inputs


def time_case(t: Any, case: Case, n: int, d: int, budget: float,
              clock: Callable[[], float]) -> dict[str, float]:
    """One case's forward and forward + backward medians (us) on the engine ``t``."""
    import numpy as np

    call, inputs = prepared(t, case, n, d)
    leaves = [x for x in inputs if x.requires_grad]
    out = call()
    seed = t.from_numpy(np.random.default_rng(1).standard_normal(tuple(out.shape))
                        .astype(np.float32))

    def fresh() -> None:
        for leaf in leaves:
            leaf.grad = None

    def forward_backward(_: Any) -> None:
        call().backward(seed)

    for _ in range(3):  # warm up
        fresh()
        forward_backward(None)
    return {"fwd": median_us(lambda _: call(), lambda: None, budget, clock),
            "fwd+bwd": median_us(forward_backward, fresh, budget, clock)}


def worker(engine: str, sizes: tuple[tuple[int, int], ...], only: list[str] | None,
           budget: float, clock_name: str) -> dict[str, Any]:
    """Every case's medians (us) for ``engine``, by case name and size ("512x192")."""
    t, clock = engine_module(engine), CLOCKS[clock_name]
    results: dict[str, Any] = {}
    for case in selected(only):
        for n, d in sizes:
            results.setdefault(case.name, {})[f"{n}x{d}"] = time_case(t, case, n, d, budget,
                                                                      clock)
    return results


def selected(only: list[str] | None) -> list[Case]:
    """The cases named in ``only`` (all for None), in the table's order."""
    return [case for case in CASES if only is None or case.name in only]


# ---- the driver: alternating processes, medians over runs ----


def parse_sizes(text: str) -> tuple[tuple[int, int], ...]:
    """``"32x200,512x192"`` as ((32, 200), (512, 192)); a ValueError if it is not that."""
    sizes = []
    for part in text.split(","):
        n, _, d = part.partition("x")
        if not (n.isdigit() and d.isdigit() and int(n) >= 2 and int(d) >= 2):
            raise ValueError(f"expected sizes as NxD,NxD (each at least 2), got {text!r}")
        sizes.append((int(n), int(d)))
    return tuple(sizes)


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ops.py", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per engine (>= 1)")
    parser.add_argument("--only", help="comma-separated case names (as in the table)")
    parser.add_argument("--sizes", default=",".join(f"{n}x{d}" for n, d in SIZES),
                        help="activation sizes NxD, comma-separated (default 32x200,512x192)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--quick", action="store_true",
                        help="tiny inputs (4x6), a smoke test of every case")
    parser.add_argument("--budget", type=float, default=0.1,
                        help="seconds of calls per median (default 0.1)")
    add_engine_options(parser)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.budget <= 0:
        parser.error("--runs must be >= 1 and --budget > 0")
    try:
        sizes = QUICK_SIZES if args.quick else parse_sizes(args.sizes)
    except ValueError as exc:
        parser.error(f"--sizes: {exc}")
    only = None if args.only is None else args.only.split(",")
    unknown = [name for name in only or () if name not in {case.name for case in CASES}]
    if unknown:
        parser.error(f"--only: unknown case {unknown[0]!r}")
    check_outputs("ops.py", args, ("json",))  # before the runs, not after them
    check_baseline("ops.py", args)
    if args.worker:
        if args.worker == "baseline":
            check_baseline_import("ops.py", args.baseline)
        print(json.dumps(worker(args.worker, sizes, only, args.budget, args.clock)))
        return 0

    engines = ["chaingrad", "torch"] + ["baseline"] * (args.baseline is not None)
    runs: dict[str, list[dict]] = {engine: [] for engine in engines}
    for r in range(args.runs):
        for engine in engines if r % 2 == 0 else engines[::-1]:
            options = ["--budget", str(args.budget), "--clock", args.clock, "--sizes",
                       args.sizes] + ["--quick"] * args.quick
            options += ["--only", args.only] * (args.only is not None)
            try:
                runs[engine].append(run_worker(__file__, engine, args, options))
            except RuntimeError as exc:  # the worker's own error is the message's last line
                print(exc, file=sys.stderr)
                return 1
            print(f"run {r + 1}/{args.runs}: {engine} done", file=sys.stderr)
    table = {engine: {case: {size: {phase: summary([run[case][size][phase] for run in done])
                                    for phase in phases}
                             for size, phases in by_size.items()}
                      for case, by_size in done[0].items()}
             for engine, done in runs.items()}
    print(format_table(table, args.runs, args.clock))
    if args.json:
        payload = {"command": " ".join(["python", "benchmarks/ops.py"] + sys.argv[1:]),
                   "runs": args.runs, "clock": args.clock, "results": table}
        write_json(args.json, payload)
    return 0


PHASES = ("fwd", "fwd+bwd")


def format_table(table: dict, runs: int, clock: str) -> str:
    """Per case and size, for each phase: each engine's median in us (spread) and
    chaingrad / torch (and baseline / torch, with a baseline)."""
    extra = "baseline" in table
    head = f"{'case':<24} {'size':>7}"
    for phase in PHASES:
        head += f" | {phase + ' cg us':>15} {'torch us':>15} {'cg/torch':>8}"
        head += f" {'base us':>15} {'base/torch':>10}" * extra
    lines = [f"{clock} clock, median of {runs} run(s), (spread) = (max - min) / median; "
             "cg/torch below 1: chaingrad is faster", head]
    for case, by_size in table["chaingrad"].items():
        for k, size in enumerate(by_size):
            row = f"{case if k == 0 else '':<24} {size:>7}"
            for phase in PHASES:
                cg, th = (table[e][case][size][phase] for e in ("chaingrad", "torch"))
                row += f" | {_cell(cg)} {_cell(th)} {cg['median'] / th['median']:>8.2f}"
                if extra:
                    base = table["baseline"][case][size][phase]
                    row += f" {_cell(base)} {base['median'] / th['median']:>10.2f}"
            lines.append(row)
    return "\n".join(lines)


def _cell(summary: dict[str, Any]) -> str:
    return f"{summary['median']:>8.1f} ({summary['spread']:>4.0%})"


if __name__ == "__main__":
    sys.exit(main())
