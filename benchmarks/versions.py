"""Two chaingrad source trees timed against each other: is "after" slower than "before"?

Run from the repository root (see benchmarks/README.md):

    python benchmarks/versions.py --before DIR --after DIR [--only S1,S2,S3,T1,...,T7]
                                  [--repeats N] [--quick] [--json FILE] [--markdown FILE]

DIR is a source tree holding a ``chaingrad/`` package (a git worktree of another commit,
say). Both trees run ``run.py``'s workloads (``workloads/suite.py``), through chaingrad's
public API only, each tree in fresh worker processes of its own (``worker.py serve --path
DIR``) that import chaingrad from that tree: the file each worker imported is checked to
lie in its tree and is printed. The two versions take turns block by block, the order
reversed every other round, as in run.py; gc.collect() runs between blocks (untimed), and
the workers get one BLAS/OpenMP thread. The table gives, per workload and metric, each
version's median, its spread, and after / before (below 1: after is faster).

Exit status: 0 when every workload ran in both trees; 1 when one did not (its table says
why, and one line on stderr names it: a tree that lacks what it needs, a worker that
failed), or when a worker imported chaingrad from outside its tree; 2 for a bad command line.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # inherited by the workers, before they import numpy

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import engines, report, tensor  # noqa: E402
from workloads.contest import BlockError, Remote, probe, run_entries  # noqa: E402
from workloads.scalar import CLOCKS  # noqa: E402
from workloads.suite import METRICS, SIZES, WORKLOADS, moons, tensor_runs, titles  # noqa: E402
from workloads.usage import Parser, check_outputs, usage_error  # noqa: E402

SIDES = ("before", "after")
DEFAULT_REPEATS = 25
DEFAULT_PROCESSES = 5
S3_MAX_REPEATS = 6  # its blocks take seconds
# glibc's malloc, with fixed thresholds: it keeps the memory a step frees for the next step
# rather than return it to the system and fault it back in, page by page (--steady-heap)
STEADY_HEAP = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(2**30)}
LEGEND = ("after/before = after's median / before's median: below 1, after is faster "
          "(or smaller); spread = (max - min) / median over one version's repeats: a ratio "
          "that differs from 1 by less than the spreads is within the machine's noise")


class TreeError(Exception):
    """A worker imported chaingrad from somewhere other than the tree it was given."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="versions.py", description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, metavar="DIR",
                        help="the reference source tree (holds a chaingrad/ package)")
    parser.add_argument("--after", required=True, metavar="DIR",
                        help="the changed source tree (holds a chaingrad/ package)")
    parser.add_argument("--only", default=",".join(w for w in WORKLOADS if w != "S2c"),
                        help="comma-separated workloads (default: all of S1,S2,S3,T1-T7)")
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS,
                        help=f"timed blocks per version (default {DEFAULT_REPEATS}; "
                             f"S3 runs at most {S3_MAX_REPEATS})")
    parser.add_argument("--processes", type=int, default=DEFAULT_PROCESSES,
                        help="fresh worker processes per version and workload, the repeats "
                             f"spread over them (default {DEFAULT_PROCESSES})")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="cpu",
                        help="what a block times: the worker's CPU time (default), which "
                             "leaves out waiting for a core on a busy machine, or elapsed "
                             "time, as run.py does")
    parser.add_argument("--steady-heap", action="store_true",
                        help="run the timing workers with glibc malloc's thresholds fixed "
                             "(MALLOC_MMAP_THRESHOLD_=32 MiB, MALLOC_TRIM_THRESHOLD_=1 GiB): "
                             "by default, whether a step's freed arrays go back to the system "
                             "and are faulted back in at the next step follows from the heap's "
                             "layout, which an unrelated change can flip either way")
    args = parser.parse_args(argv)
    by_name = {w.upper(): w for w in WORKLOADS}  # s2c, S2C and S2c alike
    args.only = [by_name.get(w.strip().upper(), w.strip()) for w in args.only.split(",")
                 if w.strip()]
    bad = [w for w in args.only if w not in WORKLOADS]
    if bad or not args.only:
        usage_error("versions.py", f"--only: unknown workload(s) {bad} (choose from "
                                   f"{','.join(WORKLOADS)})")
    for option in ("repeats", "processes"):
        if getattr(args, option) < 1:
            usage_error("versions.py", f"--{option}: must be >= 1, got {getattr(args, option)}")
    args.processes = min(args.processes, args.repeats)  # at least one round per process
    for side in SIDES:
        tree = os.path.abspath(getattr(args, side))
        if not os.path.isfile(os.path.join(tree, "chaingrad", "__init__.py")):
            usage_error("versions.py", f"--{side}: expected a source tree holding "
                                       f"chaingrad/__init__.py, got {getattr(args, side)!r}")
        setattr(args, side, tree)
    check_outputs("versions.py", args, ("json", "markdown"))  # before the run, not after it
    return args


def describe_tree(tree: str) -> str:
    """The tree's git commit, '+changes' if its chaingrad/ differs from it ('?' outside git)."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", tree, *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    try:
        commit = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain", "--", "chaingrad")
    except OSError:  # no git on this machine
        return "?"
    return (commit or "?") + ("+changes" if changed else "")


class Trees:
    """The two trees: where each is, its commit, and the chaingrad files its workers imported."""

    def __init__(self, before: str, after: str):
        self.dirs = {"before": before, "after": after}
        self.commits = {side: describe_tree(tree) for side, tree in self.dirs.items()}
        self.files: dict[str, list[str]] = {side: [] for side in SIDES}

    def check(self, side: str, file: str | None) -> None:
        """Record the module file a ``side`` worker imported; TreeError if outside its tree."""
        package = os.path.join(os.path.realpath(self.dirs[side]), "chaingrad") + os.sep
        if not file or not os.path.realpath(file).startswith(package):
            raise TreeError(f"the {side} worker imported chaingrad from {file}, not from "
                            f"{self.dirs[side]}")
        if file not in self.files[side]:
            self.files[side].append(file)
            print(f"{side}: chaingrad imported from {file}", flush=True)

    def lines(self) -> list[str]:
        return [f"{side}: {self.dirs[side]} ({self.commits[side]})" for side in SIDES]


def start(trees: Trees, rows: dict[str, report.Row], workload: str, sizes: dict[str, Any],
          X: Any, y: Any, clock: str, env: dict[str, str] | None = None) -> list:
    """(row, worker or None) of both versions, each in a fresh worker of its own."""
    entries = []
    for side in SIDES:
        row, worker = rows[side], None
        if row.status == "ok":
            try:
                worker = Remote(sys.executable, "chaingrad", False, workload, sizes, X, y,
                                path=trees.dirs[side], clock=clock, env=env)
            except (engines.MissingError, BlockError) as exc:
                row.status = f"not run: {exc}"
        entries.append((row, worker))
        if worker is None:
            continue
        try:
            trees.check(side, worker.file)
        except TreeError:
            for _, started in entries:
                if started is not None:
                    started.close()
            raise
    return entries


def rounds_per_process(repeats: int, processes: int) -> list[int]:
    """``repeats`` rounds split as evenly as possible over at most ``processes`` worker pairs."""
    pairs = min(repeats, processes)
    return [repeats // pairs + (k < repeats % pairs) for k in range(pairs)]


def probe_memory(trees: Trees, rows: list[report.Row], sizes: dict[str, Any]) -> None:
    """S3's peak memory per node of each version, each probe in a fresh worker process."""
    for mode in ("tracemalloc", "rss"):
        for row in rows:
            if row.status != "ok":
                continue
            reply = probe(sys.executable, "chaingrad", mode, sizes, path=trees.dirs[row.label])
            if reply["ok"]:
                trees.check(row.label, reply["file"])
                row.add({k: v for k, v in reply.items() if k not in ("ok", "file")})
            else:
                row.note += f" {mode}: {reply['status']}"


def compare(rows: list[report.Row], metrics: tuple[str, ...]) -> list[dict[str, Any]]:
    """Per metric: each version's median, min, max, spread and samples; after / before."""
    by_side = {row.label: row for row in rows}
    out = []
    for metric in metrics:
        result: dict[str, Any] = {"workload": rows[0].workload, "metric": metric}
        for side in SIDES:
            values = by_side[side].samples.get(metric, [])
            result[side] = ({"median": statistics.median(values), "min": min(values),
                             "max": max(values), "spread": report.spread(values),
                             "samples": values} if values else None)
        both = result["before"] and result["after"] and result["before"]["median"]
        result["ratio"] = (result["after"]["median"] / result["before"]["median"]
                           if both else None)
        out.append(result)
    return out


def table(title: str, rows: list[report.Row], results: list[dict[str, Any]]) -> str:
    """A workload's table: a line per metric, the versions' medians, after/before, spreads."""
    lines = [title, "  " + "metric".ljust(20) + "before".rjust(12) + "after".rjust(12)
             + "after/before".rjust(14) + "spread before".rjust(15) + "spread after".rjust(14)]
    for result in results:
        cells = "  " + result["metric"].ljust(20)
        for side in SIDES:
            cells += (report.number(result[side]["median"]) if result[side] else "-").rjust(12)
        cells += (f"{result['ratio']:.3f}" if result["ratio"] is not None else "-").rjust(14)
        for side, width in zip(SIDES, (15, 14)):
            spread = result[side] and result[side]["spread"]
            cells += (f"{100 * spread:.0f}%" if spread is not None else "").rjust(width)
        lines.append(cells.rstrip())
    lines += [f"  {row.label}: {row.status}{row.note}".rstrip()
              for row in rows if row.status != "ok" or row.note]
    return "\n".join(lines)


def run(args: argparse.Namespace, trees: Trees, sizes: dict[str, Any]
        ) -> tuple[list, list, list[str]]:
    """Every chosen workload, both versions alternating: (tables' texts, results, what did
    not run: ``"T4 (before, after)"``, say, each table's status line saying why).

    The rounds of a workload are spread over ``args.processes`` pairs of fresh workers (one
    per version), so that neither version keeps the luck of one process's memory layout.
    """
    heads, texts, results, missed = titles(sizes), [], [], []
    for wid in args.only:
        X = y = None
        if wid in ("S2", "S2c"):
            X, y = moons(sizes["s2_points"])
        elif wid == "T2":  # loaded once here: each worker would import scikit-learn again
            X, y = tensor.digits_data(sizes["t2_batch"])
        if wid.startswith("S"):
            runs = [(wid, sizes)]
        else:
            runs = [(key, dict(sizes, batch=batch, steps=steps))
                    for key, batch, steps in tensor_runs(wid, sizes)]
        rows = {key: {side: report.Row(key, side, "chaingrad") for side in SIDES}
                for key, _ in runs}
        repeats = min(args.repeats, S3_MAX_REPEATS) if wid == "S3" else args.repeats
        for pair, rounds in enumerate(rounds_per_process(repeats, args.processes)):
            entries = []
            for key, run_sizes in runs:
                entries += start(trees, rows[key], wid, run_sizes, X, y, args.clock,
                                 STEADY_HEAP if args.steady_heap else None)
            # every other pair of workers starts its rounds in the other order
            run_entries(entries[::-1] if pair % 2 else entries, rounds, warmup=wid != "S3")
        if wid == "S3":
            probe_memory(trees, list(rows[wid].values()), sizes)
        for key, _ in runs:
            found = compare(list(rows[key].values()), METRICS[wid])
            results += found
            texts.append(table(heads[key], list(rows[key].values()), found))
            print("\n" + texts[-1], flush=True)
            sides = [side for side, row in rows[key].items() if row.status != "ok"]
            if sides:
                missed.append(f"{key} ({', '.join(sides)})")
    return texts, results, missed


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = SIZES["quick" if args.quick else "full"]
    trees = Trees(args.before, args.after)
    info = report.machine()
    info["versions"].pop("chaingrad")  # the installed one is neither tree: see "trees"
    s3 = f" (S3: {min(args.repeats, S3_MAX_REPEATS)})" if "S3" in args.only else ""
    heap = ("glibc malloc thresholds fixed (--steady-heap)" if args.steady_heap else
            "default malloc settings")
    print(f"{info['cpu']}, {info['cores']} cores, python {info['python']}, "
          f"load average {info['load_average_start'][0]:.2f}; one BLAS thread; "
          f"{args.repeats} repeats{s3} over {args.processes} worker processes per version; "
          f"default gc settings; {heap}; "
          f"timing {'elapsed' if args.clock == 'wall' else 'CPU'} time",
          flush=True)
    print("\n".join(trees.lines()), flush=True)
    try:
        texts, results, missed = run(args, trees, sizes)
    except (TreeError, engines.MissingError) as exc:
        print(f"versions.py: {exc}", file=sys.stderr)
        return 1
    print("\n" + LEGEND)
    info["load_average_end"] = list(os.getloadavg())
    command = "python benchmarks/versions.py " + " ".join(sys.argv[1:] if argv is None else argv)
    tree_info = {side: {"dir": trees.dirs[side], "commit": trees.commits[side],
                        "chaingrad_files": trees.files[side]} for side in SIDES}
    if args.json:
        report.write_json(args.json, {"command": command, "machine": info, "sizes": sizes,
                                      "repeats": args.repeats, "processes": args.processes,
                                      "clock": args.clock, "steady_heap": args.steady_heap,
                                      "trees": tree_info,
                                      "results": results})
    if args.markdown:
        extra = tuple(f"- {side}: `{trees.dirs[side]}` ({trees.commits[side]}), chaingrad "
                      f"imported from `{', '.join(trees.files[side])}`" for side in SIDES)
        extra += (f"- Timing: {'CPU' if args.clock == 'cpu' else 'elapsed'} time; "
                  f"{args.repeats} blocks per version over {args.processes} fresh worker "
                  "processes each, taking turns" + (
                      "; glibc malloc's thresholds fixed (--steady-heap)" if args.steady_heap
                      else ""),)
        report.write_markdown(args.markdown, command, info, texts, LEGEND, [],
                              title="chaingrad before and after", extra=extra)
    if missed:  # the files above keep what did run; the exit status says the run fell short
        print(f"versions.py: did not run: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
