"""Run a workload in another interpreter: a competitor's virtualenv, or a fresh process.

Two modes:

``python worker.py serve [--path DIR]``
    A loop over JSON lines on stdin: ``{"cmd": "setup", "engine", "raise_limit",
    "workload", "sizes", "X", "y"}`` builds a workload, ``{"cmd": "block"}`` runs one timed
    block, ``{"cmd": "quit"}`` ends. Each gets one JSON line back: ``{"ok": true, ...}`` or
    ``{"ok": false, "status": ...}``; setup's reply names the engine's module ``file``.
    Blocks read wall time, or this process's CPU time if setup says ``"clock": "cpu"``.
    ``run.py`` keeps one such worker per scalar engine and alternates its blocks with the
    other engines' blocks; ``versions.py`` keeps one per chaingrad tree and workload (the
    tensor workloads T1-T7 too: their sizes carry ``batch`` and ``steps``).

``python worker.py probe --engine NAME --width W --depth D --mode rss|tracemalloc [--path DIR]``
    S3's peak memory per node, measured in this fresh process; prints one JSON line.

``--path DIR`` puts DIR (a source tree holding a ``chaingrad/`` package) first on
``sys.path``, so that the worker imports that tree, not the installed chaingrad.

Replies go to the original stdout; anything else printed (by a library, even from C) is
sent to stderr so it cannot break the protocol.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from typing import Any

if __package__ in (None, ""):  # run as a script, maybe in another virtualenv
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from workloads import engines, scalar  # noqa: E402


def build(engine: Any, workload: str, sizes: dict[str, Any], X: Any = None, y: Any = None) -> Any:
    """The workload object for ``engine`` with ``sizes`` (see ``suite.SIZES``).

    The tensor workloads (T1-T7) need numpy, imported only then (``tensor``), and
    ``sizes["batch"]``, ``sizes["steps"]`` for the one run of ``suite.tensor_runs`` this
    worker times. ``X``
    and ``y`` are S2's points, or T2's images and labels when the caller sends them.
    """
    if workload.startswith("T"):  # every tensor workload of suite.WORKLOADS
        from workloads import tensor

        digits = (X, y) if workload == "T2" and X is not None and len(X) else None
        work, _, _ = tensor.make(engine.name, workload, batch=sizes["batch"],
                                 steps=sizes["steps"], n_ops=sizes["t3_ops"], digits=digits)
        return work
    if workload == "S1":
        return scalar.ChainS1(engine, sizes["s1_ops"])
    if workload == "S2":
        return scalar.MoonsStepS2(engine, X, y, sizes["s2_steps"])
    if workload == "S2c":  # chaingrad compiled; any other engine eager, to compare with
        work = scalar.CompiledMoonsStepS2 if engine.name == "chaingrad" else scalar.MoonsStepS2
        return work(engine, X, y, sizes["s2_steps"])
    if workload == "S3":
        return scalar.DeepMlpS3(engine, sizes["s3_width"], sizes["s3_depth"])
    raise ValueError(f"worker: unknown workload {workload!r}")


def as_arrays(X: list, y: list) -> tuple[Any, Any]:
    """The notebook's numpy arrays back from JSON lists (lists if numpy is not installed)."""
    try:
        import numpy as np
    except ImportError:
        return X, y
    return np.array(X, dtype=np.float64), np.array(y, dtype=np.int64)


def _reply(out: Any, message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def _use_tree(path: str | None) -> None:
    """Put ``path`` first on ``sys.path`` (before anything imports chaingrad)."""
    if path:
        sys.path.insert(0, os.path.abspath(path))


def serve(out: Any, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="worker.py serve")
    parser.add_argument("--path", help="import chaingrad from this source tree")
    _use_tree(parser.parse_args(argv).path)
    work = None
    for line in sys.stdin:
        request = json.loads(line)
        cmd = request.get("cmd")
        if cmd == "quit":
            return 0
        try:
            if cmd == "setup":
                engine = engines.make(request["engine"], request.get("raise_limit", False))
                X, y = as_arrays(request.get("X") or [], request.get("y") or [])
                work = build(engine, request["workload"], request["sizes"], X, y)
                work.clock = scalar.CLOCKS[request.get("clock", "wall")]
                _reply(out, {"ok": True, "label": engine.label, "version": engine.version,
                             "file": engine.file, "nodes": getattr(work, "nodes", None)})
            elif cmd == "block":
                gc.collect()  # start from a clean heap, as run.py does for its own blocks
                _reply(out, {"ok": True, "metrics": work.block()})
            else:
                _reply(out, {"ok": False, "status": f"error: unknown command {cmd!r}"})
        except engines.MissingError as exc:
            _reply(out, {"ok": False, "status": "missing", "message": str(exc)})
        except RecursionError:
            _reply(out, {"ok": False, "status": "RecursionError"})
        except Exception as exc:  # reported in the table, not fatal to the run
            _reply(out, {"ok": False, "status": f"error: {type(exc).__name__}: {exc}"})
    return 0


def probe(out: Any, argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="worker.py probe")
    parser.add_argument("--engine", required=True)
    parser.add_argument("--raise-limit", action="store_true")
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--mode", choices=("rss", "tracemalloc"), required=True)
    parser.add_argument("--path", help="import chaingrad from this source tree")
    args = parser.parse_args(argv)
    _use_tree(args.path)
    try:
        engine = engines.make(args.engine, args.raise_limit)
        result = {"ok": True, **scalar.peak_memory(engine, args.width, args.depth, args.mode),
                  "file": engine.file}
    except engines.MissingError as exc:
        result = {"ok": False, "status": "missing", "message": str(exc)}
    except RecursionError:
        result = {"ok": False, "status": "RecursionError"}
    _reply(out, result)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = os.fdopen(os.dup(1), "w")  # the protocol's channel
    os.dup2(2, 1)  # whatever else is printed to stdout goes to stderr
    sys.stdout = sys.stderr
    if argv[:1] == ["serve"]:
        return serve(out, argv[1:])
    if argv[:1] == ["probe"]:
        return probe(out, argv[1:])
    print("usage: worker.py serve [--path DIR] | worker.py probe --engine NAME ...",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
