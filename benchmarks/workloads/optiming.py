"""What ``conv.py`` and ``ops.py`` share: an op timed by its median call, a process per
engine (chaingrad, torch, or chaingrad from a baseline source tree), and the options that
choose the clock and the baseline. Only the standard library is imported here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from .usage import usage_error

CLOCKS = {"thread": time.thread_time, "wall": time.perf_counter}


def median_us(call: Callable[[Any], Any], setup: Callable[[], Any], budget: float,
              clock: Callable[[], float]) -> float:
    """The median time of ``call(setup())`` in microseconds on ``clock``, over as many
    calls as fit in ``budget`` seconds (at least 5, at most 2000); ``setup`` is not timed."""
    times: list[float] = []
    deadline = time.perf_counter() + budget
    while len(times) < 5 or (len(times) < 2000 and time.perf_counter() < deadline):
        arg = setup()
        start = clock()
        call(arg)
        times.append(clock() - start)
    return statistics.median(times) * 1e6


def summary(samples: list[float]) -> dict[str, Any]:
    """The median of one measurement over the runs, its spread ((max - min) / median) and
    the samples."""
    median = statistics.median(samples)
    return {"median": median, "spread": (max(samples) - min(samples)) / median,
            "samples": samples}


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--clock``, ``--baseline`` and the hidden ``--worker`` (what a process times)."""
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="thread",
                        help="thread: the CPU time of the timing thread (default; other "
                             "processes' load does not count), wall: elapsed time")
    parser.add_argument("--baseline", metavar="PATH",
                        help="also time chaingrad imported from this source tree")
    parser.add_argument("--worker", choices=["chaingrad", "torch", "baseline"],
                        help=argparse.SUPPRESS)


def check_baseline(prog: str, args: argparse.Namespace) -> None:
    """Refuse, before any timing, a ``--baseline`` that holds no chaingrad source tree (an
    installed chaingrad would be timed as the baseline); make it an absolute path."""
    if args.baseline is None:
        return
    tree = os.path.abspath(args.baseline)
    if not os.path.isfile(os.path.join(tree, "chaingrad", "__init__.py")):
        usage_error(prog, "--baseline: expected a source tree holding chaingrad/__init__.py, "
                          f"got {args.baseline!r}")
    args.baseline = tree


def check_baseline_import(prog: str, tree: str) -> None:
    """In the baseline worker: stop unless chaingrad is imported from ``tree`` (an installed
    chaingrad that came first on the path would be timed as the baseline)."""
    import chaingrad

    package = os.path.join(os.path.realpath(tree), "chaingrad") + os.sep
    if not os.path.realpath(chaingrad.__file__).startswith(package):
        raise SystemExit(f"{prog}: the baseline worker imported chaingrad from "
                         f"{chaingrad.__file__}, not from {tree}")


def run_worker(script: str, engine: str, args: argparse.Namespace,
               options: list[str]) -> dict[str, Any]:
    """Run ``script --worker engine`` with ``options`` in a fresh process (the baseline's
    source tree first on its path) and return what it prints, as JSON; a RuntimeError whose
    message ends with the worker's own error if it fails."""
    prog = os.path.basename(script)
    command = [sys.executable, os.path.abspath(script), "--worker", engine, *options]
    env = dict(os.environ)
    if engine == "baseline":
        command += ["--baseline", args.baseline]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.baseline,
                                                          env.get("PYTHONPATH")]))
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{prog}: the {engine} worker failed:\n{done.stderr}")
    return json.loads(done.stdout)
