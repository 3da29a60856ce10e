"""The benchmarks' command lines: a bad one is one line on stderr and exit status 2.

``run.py``, ``versions.py`` and ``conv.py`` share this. An output file that could not be
written once the run is over (``--json`` into a folder that does not exist, say) is a bad
command line too, refused before anything is timed: a run takes minutes, and its results
would otherwise be lost at the end. Only the standard library is imported here.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn


def usage_error(prog: str, message: str) -> NoReturn:
    """A bad command line: ``prog: message`` on stderr, exit status 2."""
    print(f"{prog}: {message}", file=sys.stderr)
    raise SystemExit(2)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose own errors (an unknown option, a missing value, a bad choice)
    are one line, as ``usage_error``'s, without the usage text above them."""

    def error(self, message: str) -> NoReturn:
        usage_error(self.prog, message)


def output_problem(path: str) -> str | None:
    """Why a file could not be written at ``path`` at the end of a run, or None if it can.

    Example:
        >>> output_problem("/no/out.json")
        "expected a file in an existing folder, got '/no/out.json' (no folder /no)"
        >>> output_problem("out.json") is None  # in the current folder
        True
    """
    if not path:
        return "expected a file path, got an empty one"
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        return f"expected a file path, got the folder {path!r}"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"expected a file in an existing folder, got {path!r} (no folder {folder})"
    if not os.access(folder, os.W_OK):
        return f"expected a file in a writable folder, got {path!r} (cannot write in {folder})"
    if os.path.exists(path) and not os.path.isfile(path):
        return f"expected a regular file, got {path!r} (a device, a FIFO or a socket)"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"expected a writable file, got {path!r} (it is read-only)"
    return None


def check_outputs(prog: str, args: argparse.Namespace, options: tuple[str, ...]) -> None:
    """A usage error for the first of ``options`` (``"json"``, ...) naming an unwritable file."""
    for option in options:
        path = getattr(args, option)
        if path is not None and (problem := output_problem(path)):
            usage_error(prog, f"--{option}: {problem}")
