"""The results of a run: rows, the printed table, the JSON file and the machine's description."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import secrets
import stat
import statistics
import sys
from dataclasses import dataclass, field
from typing import Any

from .engines import version_of


@dataclass
class Row:
    """One engine on one workload: its samples per metric, or why it has none."""

    workload: str
    label: str
    engine: str
    status: str = "ok"
    note: str = ""
    samples: dict[str, list[float]] = field(default_factory=dict)

    def add(self, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            self.samples.setdefault(name, []).append(value)

    def median(self, metric: str) -> float | None:
        values = self.samples.get(metric)
        return statistics.median(values) if values else None


def ratios(rows: list[Row], metric: str) -> dict[str, float]:
    """{label: median / chaingrad's median} for the rows of one workload."""
    base = next((r.median(metric) for r in rows if r.engine == "chaingrad"), None)
    if not base:
        return {}
    return {r.label: r.median(metric) / base for r in rows if r.median(metric) is not None}


def number(value: float) -> str:
    """A measurement as the tables print it: 1,212 or 64.2 or 1.00 or 0.741.

    Three significant digits below 100, trailing zeros kept: 1.00 ms is not 1 ms.

    Example:
        >>> [number(v) for v in (1212.4, 64.23, 1.0012, 0.7414, 99.97)]
        ['1,212', '64.2', '1.00', '0.741', '100']
    """
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:#.3g}".rstrip(".")  # '#' keeps 1.00's zeros, and 100.'s point


def spread(values: list[float]) -> float | None:
    """(max - min) / median of the repeats, or None with fewer than two."""
    if len(values) < 2 or not statistics.median(values):
        return None
    return (max(values) - min(values)) / statistics.median(values)


def _cell(row: Row, metric: str, ratio: float | None) -> str:
    med = row.median(metric)
    if med is None:
        return "-" if row.status == "ok" else ""
    return number(med) + (f" ({ratio:.2f}x)" if ratio is not None else "")


def _spread(row: Row, metrics: tuple[str, ...]) -> str:
    spreads = [s for m in metrics if (s := spread(row.samples.get(m, []))) is not None]
    return f"{100 * max(spreads):.0f}%" if spreads else ""


def table(title: str, rows: list[Row], metrics: tuple[str, ...]) -> str:
    """A workload's table: median per metric, its ratio to chaingrad, the spread, notes.

    A column is at least 20 wide, and two wider than its longest header or cell, so that
    no two columns run together (``compile ms`` beside ``ms/step incl. compile/100``).
    """
    all_ratios = {m: ratios(rows, m) for m in metrics}
    cells = [[_cell(row, m, all_ratios[m].get(row.label)) for m in metrics] for row in rows]
    widths = [max([20, len(m) + 2] + [len(line[k]) + 2 for line in cells])
              for k, m in enumerate(metrics)]
    width = max([len(r.label) for r in rows] + [6]) + 2
    lines = [title, "  " + "engine".ljust(width)
             + "".join(m.rjust(w) for m, w in zip(metrics, widths)) + "spread".rjust(8)]
    for row, line_cells in zip(rows, cells):
        text = "".join(cell.rjust(w) for cell, w in zip(line_cells, widths))
        if row.status != "ok":
            text = ("  " + row.status).ljust(sum(widths))
        line = "  " + row.label.ljust(width) + text + _spread(row, metrics).rjust(8)
        lines.append((line + (f"   {row.note}" if row.note else "")).rstrip())
    return "\n".join(lines)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """CPU, cores, OS, Python, library versions, thread settings and the load average."""
    info: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": _cpu_model(), "cores": os.cpu_count(), "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": {name: version_of(name) for name in
                     ("chaingrad", "numpy", "torch", "micrograd", "scikit-learn")},
        "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                               "MKL_NUM_THREADS", "OPENBLAS_CORETYPE")},
        "load_average_start": list(os.getloadavg()),
    }
    return info


def threadpools() -> list[dict[str, Any]]:
    """The BLAS/OpenMP pools loaded so far (threadpoolctl, if installed): call it late."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keys = ("internal_api", "num_threads", "version", "architecture")
    return [{k: pool.get(k) for k in keys} for pool in threadpool_info()]


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file beside it, then os.replace).

    The file gets the permissions ``open(path, "w")`` would give it: a new one those of the
    umask (0644 under the usual 022), one written over keeps its own mode.
    """
    folder = os.path.dirname(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(3):
        tmp = os.path.join(folder, f".bench-{secrets.token_hex(4)}{os.path.splitext(path)[1]}")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for open()
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"write_text: no free temporary name in {folder}")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_json(path: str, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``path`` as indented JSON, atomically."""
    write_text(path, json.dumps(payload, indent=1) + "\n")


def rows_as_json(rows: list[Row]) -> list[dict]:
    out = []
    for row in rows:
        same = [r for r in rows if r.workload == row.workload]
        metrics = {}
        for m, values in row.samples.items():
            ratio = ratios(same, m).get(row.label)
            metrics[m] = {"median": statistics.median(values), "min": min(values),
                          "max": max(values), "samples": values, "ratio_to_chaingrad": ratio}
        out.append({"workload": row.workload, "engine": row.engine, "label": row.label,
                    "status": row.status, "note": row.note, "metrics": metrics})
    return out


def write_markdown(path: str, command: str, info: dict[str, Any], tables: list[str],
                   legend: str, skipped: list[str], title: str = "Benchmark results",
                   extra: tuple[str, ...] = ()) -> None:
    """The tables as a Markdown page (machine, versions, command first), written atomically.

    ``extra`` lines go in the list under the command (``versions.py``: the two trees).
    """
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    load = (f"{info['load_average_start'][0]:.2f} at the start, "
            f"{info.get('load_average_end', [float('nan')])[0]:.2f} at the end")
    parts = [f"# {title}", "",
             f"- Command: `{command}`", *extra, f"- Date: {info['date']}",
             f"- Machine: {info['cpu']}, {info['cores']} cores, {info['platform']}",
             f"- Python {info['python']}; {versions}",
             "- Threads: OMP/OPENBLAS/MKL_NUM_THREADS=1, torch.set_num_threads(1); "
             "default gc settings",
             f"- Load average (1 min): {load}", ""]
    parts += ["```text", "\n\n".join(tables), "", legend, "```", ""]
    if skipped:
        parts += ["Skipped:", ""] + [f"- {s}" for s in skipped] + [""]
    write_text(path, "\n".join(parts))
