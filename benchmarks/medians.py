"""The medians of several full runs of ``run.py`` or ``versions.py``: what the README and
the closing notes state.

``python benchmarks/medians.py run1.json run2.json run3.json`` reads the runs' ``--json``
files and prints, for each workload, engine and metric, the median of the runs' medians,
their spread ((max - min) / median) and the median ratio to chaingrad with its lowest and
highest. Identical runs on a shared machine differ by up to 20% or more in time; the
ratios, measured while the engines take turns, move much less.

Given ``versions.py``'s files instead, it prints for each workload and metric the median
time of each tree and the median of the runs' after/before ratios, with each run's ratio.
A file that is missing, not JSON or not such a run is one line on stderr, exit status 2.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads.usage import Parser, usage_error  # noqa: E402


def medians(runs: list[dict]) -> list[str]:
    """One line per (workload, engine, metric) found ok in any of ``runs``."""
    rows: dict[tuple[str, str, str], list[tuple[float, float | None]]] = {}
    for run in runs:
        for result in run["results"]:
            if result["status"] != "ok":
                continue
            for metric, m in result["metrics"].items():
                key = (result["workload"], result["label"], metric)
                rows.setdefault(key, []).append((m["median"], m.get("ratio_to_chaingrad")))
    lines = []
    for (workload, label, metric), values in rows.items():
        times = [t for t, _ in values]
        ratios = [r for _, r in values if r is not None]
        middle = statistics.median(times)
        spread = (max(times) - min(times)) / middle if middle else 0.0
        ratio = (f"{statistics.median(ratios):7.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
                 if ratios else "")
        lines.append(f"{workload:7s} {label:48s} {metric:26s} {middle:10.4g}  spread "
                     f"{spread:4.0%}  ratio {ratio}  runs {len(times)}")
    return lines


def version_medians(runs: list[dict]) -> list[str]:
    """One line per (workload, metric) of ``versions.py`` runs: each tree's median of the
    runs' medians, and the median after/before ratio with every run's (a run in which
    either tree did not run the workload does not count)."""
    rows: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        for result in run["results"]:
            if result["before"] and result["after"]:
                rows.setdefault((result["workload"], result["metric"]), []).append(result)
    lines = [f"{'workload':8s} {'metric':26s} {'before':>10s} {'after':>10s}  after/before"]
    for (workload, metric), results in rows.items():
        before = statistics.median(r["before"]["median"] for r in results)
        after = statistics.median(r["after"]["median"] for r in results)
        ratios = [r["ratio"] for r in results if r["ratio"]]
        each = ", ".join(f"{x:.3f}" for x in ratios)
        lines.append(f"{workload:8s} {metric:26s} {before:10.4g} {after:10.4g}  "
                     f"{statistics.median(ratios):.3f} (runs: {each})" if ratios else "")
    return lines


NOT_A_RUN = "not a --json file of run.py or versions.py"
RUN_KEYS = {"workload", "label", "status", "metrics"}  # each result of run.py's files
VERSIONS_KEYS = {"workload", "metric", "before", "after", "ratio"}  # of versions.py's


def read_run(path: Path) -> dict:
    """The run that ``path`` holds; a usage error naming the file if it holds none."""
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        usage_error("medians.py", f"{path}: no such file")
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        usage_error("medians.py", f"{path}: cannot be read ({exc.__class__.__name__})")
    except json.JSONDecodeError:
        usage_error("medians.py", f"{path}: not JSON")
    if not isinstance(run, dict) or not isinstance(run.get("results"), list):
        usage_error("medians.py", f"{path}: {NOT_A_RUN}")
    keys = VERSIONS_KEYS if "trees" in run else RUN_KEYS
    if not all(isinstance(result, dict) and keys <= set(result) for result in run["results"]):
        usage_error("medians.py", f"{path}: {NOT_A_RUN}")
    return run


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="medians.py", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run.py or versions.py --json files")
    args = parser.parse_args(argv)
    runs = [read_run(path) for path in args.runs]
    versions = all("trees" in run for run in runs)
    if any("trees" in run for run in runs) and not versions:
        usage_error("medians.py", "expected the files of one script: run.py's or versions.py's, "
                                  "not both")
    print("\n".join(version_medians(runs) if versions else medians(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
