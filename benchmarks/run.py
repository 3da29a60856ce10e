"""chaingrad side by side with the engines users would pick instead, in one run.

Run from the repository root (see benchmarks/README.md for what each workload is):

    python benchmarks/run.py [--only S1,S2,S3,T1,...,T7] [--repeats N] [--json FILE]
                             [--markdown FILE] [--quick]
                             [--worker micrograd-cpp-engine=/tmp/venv-mgcpp/bin/python]

It installs nothing: a competitor that is not importable is skipped, and the exact
command to install it is printed. Each workload runs every engine in turn, block after
block (the order reversed every other repeat), so that all of them see the same machine
load; the table gives each engine's median and its ratio to chaingrad's median. Scalar
engines each run in a worker process of their own (``workloads/worker.py``), so that no
engine's garbage collection walks another's objects; tensor workloads run in this process.

Exit status: 0 when every workload ran; 1 when chaingrad did not run one, or an engine
failed on one (its table says why, and one line on stderr names it); a competitor that is
not installed is skipped, with its install command, and does not count; 2 for a bad
command line.

Tensor workloads get one thread each: OMP/OPENBLAS/MKL_NUM_THREADS are set to 1 below,
before numpy is imported, and torch.set_num_threads(1). The garbage collector's settings
are left alone (gc.collect() runs between blocks, untimed).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (or torch) is imported anywhere in this process

import argparse  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import engines, report  # noqa: E402
from workloads.contest import BlockError, Local, Remote, probe, run_entries  # noqa: E402
from workloads.suite import METRICS, SIZES, WORKLOADS, moons, tensor_runs, titles  # noqa: E402
from workloads.usage import Parser, check_outputs, usage_error  # noqa: E402

# (engine, recursion limit raised) per scalar workload, each in a worker run by this Python
LOCAL_SCALAR = {"S1": [("chaingrad", False), ("micrograd", False), ("micrograd", True),
                       ("torch", False)],
                "S2": [("chaingrad", False), ("micrograd", False), ("torch", False)],
                "S2c": [("chaingrad", False), ("micrograd", False)],
                "S3": [("chaingrad", False), ("micrograd", False), ("micrograd", True),
                       ("torch", False)]}
LOCAL_TENSOR = {"T1": ("chaingrad", "chaingrad-compiled", "torch", "numpy"),
                "T2": ("chaingrad", "torch"), "T3": ("chaingrad", "torch"),
                "T4": ("chaingrad", "torch", "numpy"), "T5": ("chaingrad", "torch", "numpy"),
                "T6": ("chaingrad", "torch", "numpy"), "T7": ("chaingrad", "torch", "numpy")}


def scalar_entries(wid: str, sizes: dict, externals: dict[str, str], skipped: list[str]) -> list:
    """(Row, contestant or None) for every engine of scalar workload ``wid``.

    Each engine runs in a fresh worker process of its own (this interpreter, or the one
    given with --worker): the cyclic garbage collector's passes cost in proportion to
    every object alive in the process, so an engine must not pay for another's imports
    (torch's add ~135,000 objects) or leftovers.
    """
    X = y = None
    if wid in ("S2", "S2c"):
        try:
            X, y = moons(sizes["s2_points"])
        except engines.MissingError as exc:
            return [(report.Row(wid, "chaingrad", "chaingrad", f"skipped: {exc}"), None)]
    wanted = [(name, raise_limit, None) for name, raise_limit in LOCAL_SCALAR[wid]]
    for name, python in externals.items():
        forked = name in engines.MICROGRAD_LIKE
        if wid == "S3" and forked:
            continue  # a copy of micrograd's engine: its S3 row would repeat micrograd's
        wanted += [(name, False, python)] + ([(name, True, python)] if forked and wid[:2] != "S2"
                                             else [])
    entries = []
    for name, raise_limit, python in wanted:
        try:
            contestant = Remote(python or sys.executable, name, raise_limit, wid, sizes, X, y)
            entries.append((report.Row(wid, contestant.label, name), contestant))
        except engines.MissingError as exc:
            if str(exc) not in skipped:
                skipped.append(str(exc))
                print(f"skipping {exc}", flush=True)
            if not raise_limit:
                entries.append((report.Row(wid, name, name, "not installed"), None))
        except BlockError as exc:
            entries.append((report.Row(wid, name, name, str(exc)), None))
    return entries


def tensor_entries(wid: str, sizes: dict, skipped: list[str]) -> list:
    from workloads import tensor

    entries = []
    for key, batch, steps in tensor_runs(wid, sizes):
        for name in LOCAL_TENSOR[wid]:
            try:
                work, label, note = tensor.make(name, wid, batch=batch, steps=steps,
                                                n_ops=sizes["t3_ops"])
                entries.append((report.Row(key, label, name, note=note), Local(work)))
            except engines.MissingError as exc:
                if str(exc) not in skipped:
                    skipped.append(str(exc))
                    print(f"skipping {exc}", flush=True)
                entries.append((report.Row(key, name, name, "not available"), None))
    return entries


def probe_memory(rows: list, sizes: dict, externals: dict[str, str]) -> None:
    """S3's peak memory per node, each engine in a fresh process (tracemalloc, then RSS)."""
    for row in rows:
        if row.status != "ok":
            continue
        python = externals.get(row.engine, sys.executable)
        for mode in ("tracemalloc", "rss"):
            reply = probe(python, row.engine, mode, sizes,
                          raise_limit="recursion limit" in row.label)
            if reply["ok"]:
                row.add({k: v for k, v in reply.items() if k not in ("ok", "file")})
            else:
                row.note += f" {mode}: {reply['status']}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help="comma-separated workloads (default: all of S1,S2,S3,T1-T7)")
    parser.add_argument("--repeats", type=int, default=5, help="timed blocks per engine")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    parser.add_argument("--worker", action="append", default=[], metavar="ENGINE=PYTHON",
                        help="run ENGINE in that interpreter (its own virtualenv): "
                             f"one of {', '.join(engines.EXTERNAL)}")
    parser.add_argument("--mgcpp-python", metavar="PYTHON",
                        help="same as --worker micrograd-cpp-engine=PYTHON")
    args = parser.parse_args(argv)
    by_name = {w.upper(): w for w in WORKLOADS}  # s2c, S2C and S2c alike
    args.only = [by_name.get(w.strip().upper(), w.strip()) for w in args.only.split(",")
                 if w.strip()]
    bad = [w for w in args.only if w not in WORKLOADS]
    if bad or not args.only:
        usage_error("run.py", f"--only: unknown workload(s) {bad} (choose from "
                              f"{','.join(WORKLOADS)})")
    if args.repeats < 1:
        usage_error("run.py", f"--repeats: must be >= 1, got {args.repeats}")
    args.externals = workers_of(args)
    check_outputs("run.py", args, ("json", "markdown"))  # before the run, not after it
    return args


def workers_of(args: argparse.Namespace) -> dict[str, str]:
    """{engine: python} from --worker ENGINE=PYTHON and --mgcpp-python; a usage error for a
    pair that names no known engine or no interpreter."""
    pairs = list(args.worker) + ([f"micrograd-cpp-engine={args.mgcpp_python}"]
                                 if args.mgcpp_python else [])
    externals = {}
    for pair in pairs:
        name, _, python = pair.partition("=")
        if name not in engines.EXTERNAL:
            usage_error("run.py", f"--worker: unknown engine {name!r} (known: "
                                  f"{', '.join(engines.EXTERNAL)})")
        if not python:
            usage_error("run.py", f"--worker: expected ENGINE=PYTHON, got {pair!r}")
        externals[name] = python
    return externals


def announce_missing_workers(externals: dict[str, str], skipped: list[str]) -> None:
    """Say, for each engine that needs its own virtualenv and was not given one, how to
    install it."""
    for name, install in engines.EXTERNAL.items():
        if name not in externals:
            message = f"{name}: needs its own virtualenv, not given; install: {install}"
            skipped.append(message)
            print(f"skipping {message}", flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = SIZES["quick" if args.quick else "full"]
    info = report.machine()
    print(f"{info['cpu']}, {info['cores']} cores, python {info['python']}, "
          f"load average {info['load_average_start'][0]:.2f}; one BLAS/torch thread; "
          f"{args.repeats} repeats; default gc settings", flush=True)
    skipped: list[str] = []
    externals = args.externals
    announce_missing_workers(externals, skipped)
    heads, rows, texts = titles(sizes), [], []
    for wid in args.only:
        repeats = min(args.repeats, sizes["s3_max_repeats"]) if wid == "S3" else args.repeats
        if wid.startswith("S"):
            entries = scalar_entries(wid, sizes, externals, skipped)
        else:
            entries = tensor_entries(wid, sizes, skipped)
        run_entries(entries, repeats, warmup=wid != "S3")
        if wid == "S3":
            probe_memory([row for row, _ in entries], sizes, externals)
        for key in dict.fromkeys(row.workload for row, _ in entries):
            group = [row for row, _ in entries if row.workload == key]
            texts.append(report.table(heads[key], group, METRICS[wid]))
            print("\n" + texts[-1], flush=True)
            rows += group
    legend = ("ratio (in brackets) = engine's median / chaingrad's median: above 1, chaingrad "
              "is faster (or smaller); spread = (max - min) / median over the repeats")
    print("\n" + legend)
    info["load_average_end"] = list(os.getloadavg())
    info["threadpools"] = report.threadpools()
    command = "python benchmarks/run.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.json:
        report.write_json(args.json, {"command": command, "machine": info, "sizes": sizes,
                                      "repeats": args.repeats, "skipped": skipped,
                                      "results": report.rows_as_json(rows)})
    if args.markdown:
        report.write_markdown(args.markdown, command, info, texts, legend, skipped)
    missed = did_not_run(rows)
    if missed:  # the files above keep what did run; the exit status says the run fell short
        print(f"run.py: did not run: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


def did_not_run(rows: list[report.Row]) -> list[str]:
    """``"S2 (chaingrad)"`` for each workload that chaingrad did not run, or that an engine
    failed on (an error, a crash). A competitor that is not installed is skipped, with its
    install command, and a RecursionError is a result (micrograd's on deep graphs): neither
    counts."""
    failed: dict[str, list[str]] = {}
    for row in rows:
        if row.status == "ok":
            continue
        if row.engine.startswith("chaingrad") or row.status.startswith(("error", "crashed")):
            failed.setdefault(row.workload, []).append(row.engine)
    return [f"{key} ({', '.join(names)})" for key, names in failed.items()]


if __name__ == "__main__":
    sys.exit(main())
