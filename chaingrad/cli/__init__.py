"""The ``chaingrad`` command line: ``chaingrad demo`` and ``chaingrad graph``.

Each subcommand lives in ``chaingrad/cli/<name>.py`` and provides
``add_arguments(parser)`` and ``run(args) -> int``; it is imported only when used, so that
``chaingrad graph`` does not pay for matplotlib and ``chaingrad demo`` not for graphviz.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

COMMANDS = {
    "demo": "train a small network and write plots and weights",
    "graph": "draw the graph of an expression (svg, png, dot or html)",
}


class UsageError(Exception):
    """A bad command line: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr (exit 2), not the usage too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="chaingrad", description="chaingrad command line")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"chaingrad.cli.{name}")
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)  # argparse itself exits 2 on a bad option
    if args.command is None:
        parser.print_help()
        return 2
    module = importlib.import_module(f"chaingrad.cli.{args.command}")
    try:
        return module.run(args)
    except UsageError as exc:
        print(f"chaingrad {args.command}: error: {exc}", file=sys.stderr)
        return 2


def _version() -> str:
    from .. import __version__

    return f"chaingrad {__version__}"
