"""The ``chaingrad`` command line: ``chaingrad demo`` and ``chaingrad graph``.

Each subcommand lives in ``chaingrad/cli/<name>.py`` and provides
``add_arguments(parser)`` and ``run(args) -> int``. ``main`` imports only the subcommand
it runs, so that ``chaingrad graph`` needs neither numpy nor matplotlib (``demo`` imports
both engines).

However a run ends, it prints at most one line on stderr, never a traceback: a bad command
line exits 2, Ctrl-C 130, a failure 1; a standard output closed early (``| head``) ends
the run quietly with 141, the status of a program stopped by SIGPIPE.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from .. import __version__
from ..errors import UsageError

COMMANDS = {
    "demo": "train a small network and write plots and weights",
    "graph": "draw the graph of an expression (svg, png, dot or html)",
}
EXTRAS = {"demo": "demo", "graph": "viz"}  # the extra that installs what each one needs
OPTIONAL = ("numpy", "matplotlib", "sklearn", "tqdm", "safetensors")  # what extras bring
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
CLOSED_PIPE = 141  # 128 + SIGPIPE


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr (exit 2), not the usage too;
    ``options`` lists the option strings added, for "did you mean" advice."""

    def __init__(self, **kwargs: object):
        self.options: list[str] = []
        super().__init__(**kwargs)

    def add_argument(self, *args: object, **kwargs: object) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.options += action.option_strings
        return action

    def print_help(self, file: TextIO | None = None) -> None:
        # argparse's own print_help ignores write errors; a full disk must show
        (file or sys.stdout).write(self.format_help())

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``chaingrad`` parser; only ``command`` gets its options (and its module imported).

    Raises:
        ModuleNotFoundError: ``command`` needs an optional dependency that is missing.
    """
    parser = _Parser(prog="chaingrad", description="chaingrad command line")
    parser.add_argument("--version", action="version", version=f"chaingrad {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        subparser = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            importlib.import_module(f"chaingrad.cli.{name}").add_arguments(subparser)
            parser.options += subparser.options
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 usage error, 130
    interrupted, 141 standard output closed)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    prog = f"chaingrad {command}" if command in COMMANDS else "chaingrad"
    try:
        try:
            code = _run(argv, command, prog)
        except SystemExit as exc:  # argparse: --help, --version, a bad option (one line)
            code = exc.code if isinstance(exc.code, int) else 0
        sys.stdout.flush()  # a full disk shows here, not as a traceback at exit
        return code
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        _discard_stdout()
        return CLOSED_PIPE
    except OSError as exc:
        # The subcommands report the files they name; an error without a file name is a
        # write to the open standard output (a full disk, /dev/full, an I/O error).
        if exc.filename is None:
            _discard_stdout()
            print(f"{prog}: error: cannot write to standard output: {exc.strerror or exc}",
                  file=sys.stderr)
        else:
            print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1


def _run(argv: list[str], command: str | None, prog: str) -> int:
    for position, arg in enumerate(argv, 1):
        _check_utf8(position, arg)
    try:
        parser = build_parser(command)
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in OPTIONAL:
            raise
        print(f"{prog}: error: {exc.name} is missing; install the {EXTRAS[command]} extra: "
              f"pip install 'chaingrad[{EXTRAS[command]}]'", file=sys.stderr)
        return 1
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        raise UsageError(_unrecognized(unknown, parser.options))
    if args.command is None:
        parser.print_help()
        return 2
    return importlib.import_module(f"chaingrad.cli.{args.command}").run(args)


def _check_utf8(position: int, arg: str) -> None:
    """Refuse an argument that is not UTF-8 text (Python keeps its bytes as surrogates)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError as exc:
        before = arg[max(0, exc.start - 20):exc.start].encode("utf-8", "surrogateescape")
        byte = arg[exc.start].encode("utf-8", "surrogateescape")
        raise UsageError(f"argument {position} is not UTF-8 text: byte {byte.hex()} after "
                         f"{before.decode('utf-8', 'replace')!r}") from None


def _unrecognized(unknown: list[str], options: list[str]) -> str:
    """``unrecognized arguments: --stesp (did you mean --steps?)``."""
    text = f"unrecognized arguments: {' '.join(unknown)}"
    for arg in unknown:
        close = difflib.get_close_matches(arg.partition("=")[0], options, n=1)
        if arg.startswith("--") and close:
            return f"{text} (did you mean {close[0]}?)"
    return text


def _discard_stdout() -> None:
    """Point standard output at the null device, so that Python's own flush at exit does
    not fail again on what could not be written."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor behind sys.stdout (a test's stream)
        pass
