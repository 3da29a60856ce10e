"""The medians of several full runs of ``run.py`` or ``versions.py``: what the README and
the closing notes state.

``python benchmarks/medians.py run1.json run2.json run3.json`` reads the runs' ``--json``
files and prints, for each workload, engine and metric, the median of the runs' medians,
their spread ((max - min) / median) and the median ratio to chaingrad with its lowest and
highest. Identical runs on a shared machine differ by up to 20% or more in time; the
ratios, measured while the engines take turns, move much less.

Given ``versions.py``'s files instead, it prints for each workload and metric the median
time of each tree and the median of the runs' after/before ratios, with each run's ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


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
    runs' medians, and the median after/before ratio with every run's."""
    rows: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        for result in run["results"]:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run.py or versions.py --json files")
    args = parser.parse_args()
    runs = [json.loads(path.read_text()) for path in args.runs]
    versions = all("trees" in run for run in runs)
    print("\n".join(version_medians(runs) if versions else medians(runs)))


if __name__ == "__main__":
    main()
