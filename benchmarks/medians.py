"""The medians of several full runs of ``run.py``: what the README states.

``python benchmarks/medians.py run1.json run2.json run3.json`` reads the runs' ``--json``
files and prints, for each workload, engine and metric, the median of the runs' medians,
their spread ((max - min) / median) and the median ratio to chaingrad with its lowest and
highest. Identical runs on a shared machine differ by up to 20% or more in time; the
ratios, measured while the engines take turns, move much less.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run.py --json files")
    args = parser.parse_args()
    print("\n".join(medians([json.loads(path.read_text()) for path in args.runs])))


if __name__ == "__main__":
    main()
