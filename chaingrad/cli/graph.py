"""``chaingrad graph``: draw the graph of an expression over named variables.

    chaingrad graph "(x1*w1 + x2*w2 + b).tanh()" --set x1=2 --set w1=-3 --set x2=0 \\
        --set w2=1 --set b=6.8813735870195432 -o neuron.svg

The expression is parsed by ``chaingrad/cli/expr.py`` (never ``eval``-ed). The backward pass is
run first, so the drawing shows the gradients. The output format follows the suffix of
``-o``: ``.svg`` and ``.png`` (rendered by ``dot`` or ``graphviz-pure``), ``.dot`` (the DOT
text), ``.html`` (the interactive step-by-step page). Without ``-o`` the DOT text is printed.
Without ``--rankdir`` a drawing goes top to bottom if that shows it 1.25 times as large
fitted whole to a screen, else left to right (``chaingrad.show.dot.fitting_rankdir``; for
the page, ``chaingrad.to_html``'s ``rankdir="auto"``): a long chain top to bottom. A folder of
``-o`` that does not exist is made, as ``chaingrad demo --out`` makes its own
(``chaingrad/cli/folders.py``).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys

from ..errors import DomainError, ExpressionError, UsageError
from ..files import write_atomic
from ..show.dot import (
    DEFAULT_MAX_SEGMENTS,
    RendererNotFoundError,
    check_segments,
    draw_dot,
    reading_order,
    to_dot,
)
from ..show.explain import explain
from ..show.page import to_html
from . import unknown
from .expr import METHODS, parse_expression, python_name, shorten
from .folders import output_folder

SUFFIXES = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot", ".html": "html",
            ".htm": "html"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("expression",
                        help='the expression, e.g. "(x1*w1 + x2*w2 + b).tanh()": names, '
                             f"numbers, + - * / **, and {' '.join(METHODS)} "
                             "(as x.tanh() or tanh(x))")
    parser.add_argument("--set", dest="assignments", action="append", default=[],
                        metavar="NAME=VALUE", help="give a variable its value (repeatable)")
    parser.add_argument("-o", "--output", default=None,
                        help="file to write: .svg, .png, .dot or .html; its folder is made "
                             "if missing (default: print the DOT text)")
    parser.add_argument("--rankdir", default="auto", choices=["auto", "LR", "RL", "TB", "BT"],
                        help="direction of the drawing: left to right (LR), top to bottom "
                             "(TB), or mirrored (RL, BT); auto (the default) is TB if that "
                             "shows the whole drawing 1.25 times as large on a 16:10 screen "
                             "(for .html, in the page's frame), else LR: a long chain top to "
                             "bottom")
    parser.add_argument("--no-backward", action="store_true",
                        help="draw the gradients before backward (all 0); not with --explain")
    parser.add_argument("--explain", action="store_true",
                        help="also print each step of backward with its formula")
    parser.add_argument("--naive", action="store_true",
                        help="with --explain: compare with the naive recursive backward")
    parser.add_argument("--max-nodes", type=int, default=1000,
                        help="refuse to lay out a graph with more Values (default: 1000)")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="stop an .svg/.png layout that takes longer (default: 60)")
    parser.add_argument("--max-segments", type=int, default=DEFAULT_MAX_SEGMENTS,
                        metavar="N",
                        help="refuse an .svg/.png layout with more edge segments, which "
                             "Graphviz is slow to place: a value used by many operations "
                             f"far apart makes many (default: {DEFAULT_MAX_SEGMENTS})")
    # An expression may start with "-" ("-x*2"), which argparse takes for an unknown
    # option. Here a single-dash word that is none of the options above is the expression:
    # argparse's test for "a negative number, so a positional", widened. Set after the
    # options are added, as argparse also runs it on each option string it is given.
    parser._negative_number_matcher = re.compile(r"^-[^-]")


def run(args: argparse.Namespace) -> int:
    """Build the graph, run backward, write the drawing; returns the exit code."""
    variables = _parse_assignments(args.assignments)
    if args.max_nodes < 1:
        raise UsageError(f"--max-nodes must be at least 1, got {args.max_nodes}")
    if args.max_segments < 1:
        raise UsageError(f"--max-segments must be at least 1, got {args.max_segments}")
    if not (args.timeout > 0 and math.isfinite(args.timeout)):  # also rejects nan and inf
        raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    fmt = _output_format(args.output)
    if args.naive and not args.explain:
        raise UsageError("--naive needs --explain")
    if args.explain and args.no_backward:
        raise UsageError("--explain runs backward; leave out --no-backward")
    try:
        root = parse_expression(args.expression, variables)
    except ExpressionError as exc:
        raise UsageError(str(exc)) from None
    order = reading_order(root)
    if len(order) > args.max_nodes:
        raise UsageError(f"the graph has {len(order)} Values, more than --max-nodes "
                         f"{args.max_nodes}")
    if fmt in ("svg", "png"):
        try:
            check_segments(order, args.max_segments, "", f"--max-segments {args.max_segments}",
                           "; write -o FILE.html or FILE.dot instead, or raise --max-segments")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    used = {node.label for node in order if not node._prev}
    unused = sorted(set(variables) - used)
    if unused:
        print(f"chaingrad graph: note: set but not used: {', '.join(unused)}", file=sys.stderr)
    try:
        if args.explain:
            explain(root, naive=args.naive, file=sys.stdout)
        elif not args.no_backward and fmt != "html":  # the page runs its own backward
            root.backward()
    except DomainError as exc:
        raise UsageError(f"backward: {exc}") from None
    rankdir = args.rankdir
    if args.output is None:
        sys.stdout.write(to_dot(root, rankdir=rankdir))
        return 0
    try:
        data = b""  # the page (html) is written by to_html
        if fmt == "dot":
            data = to_dot(root, rankdir=rankdir).encode("utf-8")
        elif fmt != "html":
            data = draw_dot(root, format=fmt, rankdir=rankdir, max_nodes=args.max_nodes,
                            timeout=args.timeout, max_segments=args.max_segments).pipe()
        with output_folder(os.path.dirname(args.output), f"-o {args.output}"):
            if fmt == "html":
                to_html(root, args.output, max_nodes=args.max_nodes, rankdir=rankdir)
            else:
                write_atomic(args.output, data)
    except OSError as exc:  # a write the system refused: say why, not its errno
        print(f"chaingrad graph: error: cannot write {args.output}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    except (RendererNotFoundError, RuntimeError) as exc:
        print(f"chaingrad graph: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({len(order)} values)")
    return 0


def _parse_assignments(assignments: list[str]) -> dict[str, float]:
    """``{name: value}`` from ``--set NAME=VALUE``s, each name as Python reads it."""
    variables: dict[str, float] = {}
    for text in assignments:
        name, sep, value = text.partition("=")
        name, value = python_name(name.strip()), value.strip()
        if not sep or not name.isidentifier():
            raise UsageError(f"--set {shorten(text)!r}: expected NAME=VALUE, e.g. --set x1=2.0")
        if name in variables:
            raise UsageError(f"--set {shorten(name)}: given twice")
        shown = f"--set {shorten(name)}={shorten(value)}"
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"{shown}: not a number") from None
        if not math.isfinite(number):
            raise UsageError(f"{shown}: needs a finite number")
        variables[name] = number
    return variables


def _output_format(output: str | None) -> str:
    if output is None:
        return "dot"
    if os.path.isdir(output):
        raise UsageError(f"-o {output}: is a folder; give a file in it, e.g. "
                         f"-o {os.path.join(output, 'graph.svg')}")
    suffix = os.path.splitext(output)[1].lower()
    if suffix not in SUFFIXES:
        raise UsageError(f"-o {output}: {unknown('file type', suffix or '(none)', list(SUFFIXES))}")
    return SUFFIXES[suffix]
