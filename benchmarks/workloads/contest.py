"""Contestants: a workload in this process (Local) or in a worker process (Remote), and
the loop that runs them block by block, alternating."""

from __future__ import annotations

import gc
import json
import os
import subprocess
from typing import Any

from . import engines

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


class BlockError(Exception):
    """A contestant could not run a block; the message is its status in the table."""


class Local:
    """A workload object living in this process."""

    def __init__(self, work: Any):
        self.work = work

    def block(self) -> dict[str, float]:
        return self.work.block()

    def close(self) -> None:
        self.work = None


class Remote:
    """A workload run by ``worker.py serve`` in another interpreter (its own virtualenv)."""

    def __init__(self, python: str, engine: str, raise_limit: bool, workload: str,
                 sizes: dict[str, Any], X: Any, y: Any, path: str | None = None,
                 clock: str = "wall", env: dict[str, str] | None = None):
        """Start the worker and set the workload up in it.

        ``path`` (a source tree holding a ``chaingrad/`` package) goes first on the
        worker's ``sys.path``, so that it imports that tree rather than the installed one;
        ``self.file`` is the engine's module file as the worker imported it. ``clock``
        ('wall' or 'cpu', ``scalar.CLOCKS``) is what the worker's blocks time; ``env``, any
        environment variables to set in the worker, over this process's.
        """
        try:
            self.proc = subprocess.Popen([python, WORKER, "serve", *_path_option(path)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, env={**os.environ, **(env or {})})
        except OSError as exc:
            raise engines.MissingError(f"{engine}: cannot start {python} ({exc}); install: "
                                  f"{engines.EXTERNAL.get(engine, '')}") from None
        reply = self.ask({"cmd": "setup", "engine": engine, "raise_limit": raise_limit,
                          "workload": workload, "sizes": sizes, "clock": clock,
                          "X": None if X is None else X.tolist(),
                          "y": None if y is None else y.tolist()})
        if not reply["ok"]:
            self.close()
            if reply["status"] == "missing":
                raise engines.MissingError(reply["message"])
            raise BlockError(reply["status"])
        self.label, self.file = reply["label"], reply.get("file")

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise BlockError(f"crashed (signal {-code})" if code < 0 else f"crashed (exit {code})")
        return json.loads(line)

    def block(self) -> dict[str, float]:
        reply = self.ask({"cmd": "block"})
        if reply["ok"]:
            return reply["metrics"]
        if reply["status"] == "RecursionError":
            raise RecursionError
        raise BlockError(reply["status"])

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"cmd": "quit"}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def _path_option(path: str | None) -> list[str]:
    return ["--path", path] if path else []


def probe(python: str, engine: str, mode: str, sizes: dict[str, Any], raise_limit: bool = False,
          path: str | None = None) -> dict[str, Any]:
    """S3's peak memory per node (``mode``: 'tracemalloc' or 'rss'), in a fresh worker process.

    Returns the worker's reply: ``{"ok": True, "<mode> B/node": ..., "file": ...}`` or
    ``{"ok": False, "status": ...}``; ``path`` as for ``Remote``.
    """
    cmd = [python, WORKER, "probe", "--engine", engine, "--mode", mode,
           "--width", str(sizes["s3_width"]), "--depth", str(sizes["s3_depth"]),
           *(["--raise-limit"] if raise_limit else []), *_path_option(path)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"ok": False, "status": "crashed"}


def run_entries(entries: list, repeats: int, warmup: bool) -> None:
    """Run every contestant block by block, alternating, and fill the rows' samples."""
    active = [(row, c) for row, c in entries if c is not None]
    for r in range(-1 if warmup else 0, repeats):
        for row, contestant in (active if r % 2 == 0 else active[::-1]):
            if row.status != "ok":
                continue
            gc.collect()  # every block starts from a clean heap; not timed
            try:
                metrics = contestant.block()
                if r >= 0:
                    row.add(metrics)
            except RecursionError:
                row.status = "RecursionError"
            except BlockError as exc:
                row.status = str(exc)
            except Exception as exc:  # a broken engine is a row of the table, not a crash
                row.status = f"error: {type(exc).__name__}: {exc}"
    for _, contestant in active:
        contestant.close()
    gc.collect()
