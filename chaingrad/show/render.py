"""Rendering DOT text to SVG or PNG: the ``Drawing`` that ``chaingrad.draw_dot`` returns.

It renders with a system Graphviz ``dot`` when there is one, else with the ``graphviz-pure``
program that ``pip install 'chaingrad[viz]'`` installs (a self-contained Graphviz, no
system packages), in a subprocess with a time limit.
"""

from __future__ import annotations

import html
import math
import numbers
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import webbrowser
from typing import Any

from ..errors import RendererNotFoundError
from ..files import write_atomic

FORMATS = ("svg", "png", "dot")
DEFAULT_TIMEOUT = 60.0  # seconds; a backstop: draw_dot refuses the slow graphs beforehand
REPR_TIMEOUT = 10.0  # seconds: Jupyter's inline display waits no longer than this
INSTALL_HINT = "pip install 'chaingrad[viz]'"


def find_renderer() -> str | None:
    """The path of a Graphviz renderer: a system ``dot``, else ``graphviz-pure``, else None.

    ``graphviz-pure`` is also looked for next to the running Python, for a virtualenv
    whose ``bin`` directory is not on ``PATH``.
    """
    for program in ("dot", "graphviz-pure"):
        path = shutil.which(program)
        if path:
            return path
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        path = shutil.which("graphviz-pure", path=folder)
        if path:
            return path
    return None


class Drawing:
    """A drawing of a graph: DOT source plus the calls of ``graphviz.Digraph`` people use.

    Args:
        source: The DOT text.
        format: The default output format: 'svg', 'png' or 'dot'.
        renderer: The name or path of a dot-compatible program; None finds one when
            needed (see ``find_renderer``).
        timeout: Seconds a layout may take before it is stopped: a positive finite
            number, or None for no limit.

    Raises:
        TypeError: When ``timeout`` is not a number (or None).
        ValueError: When ``format`` is unknown or ``timeout`` is not positive and finite.

    Example:
        >>> from chaingrad import Value, draw_dot
        >>> drawing = draw_dot(Value(2.0, label="x") * 3)
        >>> drawing.source.splitlines()[0]
        'digraph chaingrad {'
    """

    def __init__(self, source: str, format: str = "svg", renderer: str | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT):
        self.source = source
        self.format = check_format(format, "Drawing")
        self.renderer = renderer
        self.timeout = check_timeout(timeout, "Drawing")

    def pipe(self, format: str | None = None) -> bytes:
        """The drawing rendered to bytes (the DOT text itself for format 'dot').

        Raises:
            RendererNotFoundError: When neither ``dot`` nor ``graphviz-pure`` is found.
            RuntimeError: When the renderer fails (its message is included) or does not
                finish within ``timeout`` seconds.
        """
        return self._pipe(check_format(format or self.format, "pipe"), self.timeout,
                          "pass a larger timeout")

    def _pipe(self, fmt: str, timeout: float | None, advice: str) -> bytes:
        """``pipe``, stopping the renderer after ``timeout`` seconds (``advice``: what to do)."""
        if fmt == "dot":
            return self.source.encode("utf-8")
        program = self.renderer or find_renderer()
        if program is None or shutil.which(program) is None:
            raise RendererNotFoundError(
                f"draw_dot: cannot render {fmt}: no Graphviz renderer found "
                f"(looked for {program or 'a system dot or graphviz-pure'}); "
                f"install one with: {INSTALL_HINT}"
            )
        try:
            result = subprocess.run([program, f"-T{fmt}"], input=self.source.encode("utf-8"),
                                    capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(
                f"draw_dot: {program} -T{fmt} did not finish within {timeout:g} s "
                "(a Value used by many ops far apart is slow to lay out); draw a smaller "
                f"graph, use to_html(), or {advice}"
            ) from None
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RuntimeError(
                f"draw_dot: {program} -T{fmt} failed (exit {result.returncode}): "
                f"{message[0] if message else 'no message'}"
            )
        return result.stdout

    def render(
        self,
        filename: str = "graph",
        directory: str | None = None,
        view: bool = False,
        *,
        format: str | None = None,
    ) -> str:
        """Write the drawing to ``filename.<format>`` (atomically) and return that path.

        The first three arguments are those of ``graphviz.Digraph.render``: ``view=True``
        opens the file with the system's viewer (a web browser) once written. Unlike
        graphviz, it does not also write the DOT source beside it (use ``format='dot'``).
        """
        fmt = check_format(format or self.format, "render")
        path = os.fspath(filename)
        if directory is not None:
            path = os.path.join(os.fspath(directory), path)
        path = f"{path}.{fmt}"
        write_atomic(path, self.pipe(fmt))
        if view:
            webbrowser.open(pathlib.Path(path).resolve().as_uri())
        return path

    def _repr_svg_(self) -> str:
        """The SVG for Jupyter; on any failure, a small SVG that says what went wrong.

        The layout may take at most ``REPR_TIMEOUT`` seconds (or ``timeout`` if shorter),
        so that a notebook cell never hangs for long; ``render()`` and ``pipe()`` use
        ``timeout``.
        """
        try:
            limit = REPR_TIMEOUT if self.timeout is None else min(self.timeout, REPR_TIMEOUT)
            advice = "call .render() (it waits up to timeout seconds)"
            return self._pipe("svg", limit, advice).decode("utf-8")
        except Exception as exc:  # a notebook's display must never raise
            lines = textwrap.wrap(f"{type(exc).__name__}: {exc}", 110) or ["(no message)"]
            texts = "".join(
                f'<text x="4" y="{20 + 16 * i}" font-family="monospace" font-size="12">'
                f"{html.escape(line)}</text>"
                for i, line in enumerate(lines)
            )
            return (f'<svg xmlns="http://www.w3.org/2000/svg" width="800" '
                    f'height="{16 * len(lines) + 14}">{texts}</svg>')

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"Drawing(format={self.format!r}, {self.source.count(chr(10))} lines of DOT)"


def check_timeout(timeout: Any, where: str) -> float | None:
    """``timeout`` if it is None or a positive finite number of seconds; else raise.

    Raises:
        TypeError: When it is not a number (a bool is not one either).
        ValueError: When it is zero, negative, infinite or NaN.
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise TypeError(f"{where}: timeout must be a number of seconds or None, "
                        f"got {type(timeout).__name__}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"{where}: timeout must be a positive number of seconds or None "
                         f"(for no limit), got {timeout!r}")
    return timeout


def check_format(fmt: Any, where: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"{where}: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt
