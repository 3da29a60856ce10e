"""What every test module shares: the rule that CI runs every test, and helpers for
chaingrad's model files (``model_files``) and fresh interpreters (``run_python``).

A test skips when what it needs is missing (torch for the oracle tests, Chromium for the
page, ...), so that ``python -m pytest`` works on a machine with less installed. CI
installs all of it and sets ``CHAINGRAD_NO_SKIPS=1``: then a single skip fails the run,
so that an oracle or a browser that silently went missing cannot pass as green.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import struct
import subprocess
import sys
from typing import Any

import pytest


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("CHAINGRAD_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter.write_line(f"CHAINGRAD_NO_SKIPS=1: {len(skipped)} test(s) were skipped; "
                            "every test must run here (see the reasons above)", red=True)


class ModelFiles:
    """Read and rewrite chaingrad's safetensors files by hand, as a hostile or careless
    editor would, and sign them again as ``chaingrad.save`` does (re-implemented here from
    the format's description, not imported): the SHA-256 of the whole file with the
    checksum's 64 hex digits taken as zeros."""

    CHECKSUM = re.compile(rb'"chaingrad\.sha256"\s*:\s*"([0-9a-f]{64})"')

    @staticmethod
    def split(data: bytes) -> tuple[dict, bytes]:
        """The header (parsed) and the tensor bytes of a safetensors file's bytes."""
        (n,) = struct.unpack("<Q", data[:8])
        return json.loads(data[8:8 + n]), data[8 + n:]

    @staticmethod
    def join(header: dict, body: bytes) -> bytes:
        raw = json.dumps(header).encode()
        return struct.pack("<Q", len(raw)) + raw + body

    def sign(self, data: bytes) -> bytes:
        """``data`` with its checksum made right (a placeholder is added if it has none)."""
        header, body = self.split(data)
        metadata = header.setdefault("__metadata__", {})
        metadata["chaingrad.sha256"] = "0" * 64
        data = self.join(header, body)
        (n,) = struct.unpack("<Q", data[:8])
        start, end = self.CHECKSUM.search(data[8:8 + n]).span(1)
        digest = hashlib.sha256(data).hexdigest().encode()
        return data[:8 + start] + digest + data[8 + end:]

    def architecture(self, path: os.PathLike) -> dict:
        header, _ = self.split(pathlib.Path(path).read_bytes())
        return json.loads(header["__metadata__"]["chaingrad"])

    def rewrite(self, path: os.PathLike, edit: Any = None, edit_header: Any = None,
                sign: bool = True) -> None:
        """Change the file's architecture (``edit(arch)``) or header (``edit_header``),
        keeping its tensors; signed again unless ``sign`` is False."""
        path = pathlib.Path(path)
        header, body = self.split(path.read_bytes())
        if edit is not None:
            arch = json.loads(header["__metadata__"]["chaingrad"])
            edit(arch)
            header["__metadata__"]["chaingrad"] = json.dumps(arch)
        if edit_header is not None:
            edit_header(header)
        data = self.join(header, body)
        path.write_bytes(self.sign(data) if sign else data)


@pytest.fixture
def model_files() -> ModelFiles:
    """Helpers to read, edit and re-sign chaingrad's model files (see ``ModelFiles``)."""
    return ModelFiles()


@pytest.fixture
def run_python() -> Any:
    """``run(code, *argv, timeout=None)``: the code run by a fresh interpreter (so that it
    can hide a module, or be killed), as a ``subprocess.CompletedProcess`` with text output."""

    def run(code: str, *argv: str, timeout: float | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, timeout=timeout, check=False)

    return run
