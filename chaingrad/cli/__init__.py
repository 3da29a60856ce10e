"""The ``chaingrad`` command line: ``chaingrad demo``, ``chaingrad graph`` and ``chaingrad help``.

Each subcommand lives in ``chaingrad/cli/<name>.py`` and provides
``add_arguments(parser)`` and ``run(args) -> int``; ``args.started`` is when ``main``
started (``time.perf_counter()``), for a run's time in all. ``main`` imports only the
subcommand it runs, so that ``chaingrad graph`` needs neither numpy nor matplotlib
(``demo`` imports both engines).

However a run ends, it prints at most one line on stderr, never a traceback: a bad command
line exits 2, Ctrl-C 130, a failure 1; a standard output closed early (``| head``) ends
the run quietly with 141, the status of a program stopped by SIGPIPE.

As with git and pip, ``chaingrad help [COMMAND]`` prints what ``chaingrad [COMMAND]
--help`` prints, and ``chaingrad -V`` (``--version``) the version.

A mistyped command, option or choice is answered with the list of what there is, and, as
git and pip do, with the nearest name when one is near (``difflib``'s ratio of at least
``NEAR``; argparse's own suggestions need Python 3.14): ``chaingrad dmeo`` says "unknown
command 'dmeo' (did you mean 'demo'?); choose from: demo, graph, help", ``chaingrad demo
mnist`` only lists the demos. A choice is taken in any case: ``--optimizer SGD`` is
``sgd``, ``--rankdir tb`` is ``TB``.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import NoReturn, TextIO

from .. import __version__
from ..errors import UsageError

COMMANDS = {
    "demo": "train a small network and write plots and weights",
    "graph": "draw the graph of an expression (svg, png, dot or html)",
    "help": "show the help of chaingrad or of a command (as COMMAND --help does)",
}
EXTRAS = {"demo": "demo", "graph": "viz"}  # the extra that installs what each one needs
OPTIONAL = ("numpy", "matplotlib", "sklearn", "tqdm", "safetensors")  # what extras bring
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
CLOSED_PIPE = 141  # 128 + SIGPIPE
# how alike a mistyped name and a real one must be for "did you mean" (difflib's ratio):
# at 0.75 a swap of two letters in four is near (dmeo: demo), mnist is not moons (0.6)
NEAR = 0.75


class Choice:
    """An argparse ``type`` that takes one of ``names`` in any case and gives it as written
    in ``names``; anything else is an error that lists the names (see ``unknown``).

    Example:
        >>> Choice(["LR", "TB"])("tb")
        'TB'
    """

    def __init__(self, names: Iterable[str]):
        self.names = tuple(names)

    def __call__(self, text: str) -> str:
        name = match(text, self.names)
        if name is None:
            raise argparse.ArgumentTypeError(unknown("choice", text, self.names))
        return name


def match(text: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``text`` is, case aside, or None.

    Example:
        >>> match("SGD", ["adam", "sgd"]), match("rmsprop", ["adam", "sgd"])
        ('sgd', None)
    """
    return next((name for name in names if name.casefold() == text.casefold()), None)


def unknown(what: str, text: str, names: Sequence[str]) -> str:
    """The message for a ``text`` that is none of ``names``: every name, and before them
    the nearest one, case aside, if one is near (a ratio of ``NEAR`` or more).

    Example:
        >>> unknown("demo", "mnist", ["moons", "digits"])
        "unknown demo 'mnist'; choose from: moons, digits"
        >>> unknown("command", "dmeo", ["demo", "graph"])
        "unknown command 'dmeo' (did you mean 'demo'?); choose from: demo, graph"
    """
    close = _closest(text, names)
    near = f" (did you mean {close!r}?)" if close is not None else ""
    return f"unknown {what} {text!r}{near}; choose from: {', '.join(names)}"


def _closest(text: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` nearest to ``text`` (compared case-folded), if any is near."""
    folded = {name.casefold(): name for name in names}
    close = difflib.get_close_matches(text.casefold(), folded, n=1, cutoff=NEAR)
    return folded[close[0]] if close else None


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line on stderr (exit 2), not the usage too;
    ``choices`` are taken in any case (``Choice``); ``options`` lists the option strings
    added, for "did you mean" advice."""

    def __init__(self, **kwargs: object):
        self.options: list[str] = []
        super().__init__(**kwargs)

    def add_argument(self, *args: object, **kwargs: object) -> argparse.Action:
        choices = kwargs.pop("choices", None)
        if choices is not None:
            kwargs.setdefault("metavar", "{" + ",".join(choices) + "}")
            kwargs["type"] = Choice(choices)
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
    parser.add_argument("-V", "--version", action="version", version=f"chaingrad {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        subparser = sub.add_parser(name, help=help_text, description=help_text)
        if name == "help":
            # checked in _run, as demo's dataset is: the message lists the commands
            subparser.add_argument("topic", nargs="?", metavar="COMMAND",
                                   help=f"the command to show: {', '.join(COMMANDS)}")
        elif name == command:
            importlib.import_module(f"chaingrad.cli.{name}").add_arguments(subparser)
        parser.options += subparser.options
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 usage error, 130
    interrupted, 141 standard output closed)."""
    started = time.perf_counter()
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    prog = f"chaingrad {command}" if command in COMMANDS else "chaingrad"
    try:
        try:
            code = _run(argv, command, prog, started)
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


def _run(argv: list[str], command: str | None, prog: str, started: float) -> int:
    for position, arg in enumerate(argv, 1):
        _check_utf8(position, arg)
    if command is not None and command not in COMMANDS:
        raise UsageError(unknown("command", command, list(COMMANDS)))
    topic = None  # chaingrad help COMMAND: the command whose help to print
    if command == "help":
        after = argv[argv.index("help") + 1:]
        given = next((arg for arg in after if not arg.startswith("-")), None)
        topic = None if given is None else match(given, COMMANDS)
        if given is not None and topic is None:
            raise UsageError(unknown("command", given, list(COMMANDS)))
    loaded = topic or command
    try:
        parser = build_parser(loaded)
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in OPTIONAL:
            raise
        print(f"{prog}: error: {exc.name} is missing; install the {EXTRAS[loaded]} extra: "
              f"pip install 'chaingrad[{EXTRAS[loaded]}]'", file=sys.stderr)
        return 1
    args, extra = parser.parse_known_args(argv)
    if extra:
        raise UsageError(_unrecognized(extra, parser.options))
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "help":  # what --help prints; argparse exits 0 (SystemExit)
        parser.parse_args([topic, "--help"] if topic else ["--help"])
        return 0
    args.started = started
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


def _unrecognized(unrecognized: list[str], options: list[str]) -> str:
    """``unrecognized arguments: --stesp (did you mean --steps?)``."""
    text = f"unrecognized arguments: {' '.join(unrecognized)}"
    for arg in unrecognized:
        close = _closest(arg.partition("=")[0], options)
        if arg.startswith("--") and close:
            return f"{text} (did you mean {close}?)"
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
