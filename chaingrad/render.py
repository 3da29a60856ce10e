"""Rendering DOT text to SVG or PNG: the ``Drawing`` that ``chaingrad.draw_dot`` returns.

It renders with a system Graphviz ``dot`` when there is one, else with the ``graphviz-pure``
program that ``pip install 'chaingrad[viz]'`` installs (a self-contained Graphviz, no
system packages), in a subprocess with a time limit.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import sysconfig
from typing import Any

from .files import write_atomic

FORMATS = ("svg", "png", "dot")
DEFAULT_TIMEOUT = 60.0  # seconds; graphviz-pure takes minutes on a node used by ~150 ops
INSTALL_HINT = "pip install 'chaingrad[viz]'"


class RendererNotFoundError(RuntimeError):
    """No Graphviz renderer (a system ``dot`` or ``graphviz-pure``) could be found."""


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
        timeout: Seconds a layout may take before it is stopped (None: no limit).

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
        self.timeout = timeout

    def pipe(self, format: str | None = None) -> bytes:
        """The drawing rendered to bytes (the DOT text itself for format 'dot').

        Raises:
            RendererNotFoundError: When neither ``dot`` nor ``graphviz-pure`` is found.
            RuntimeError: When the renderer fails (its message is included) or does not
                finish within ``timeout`` seconds.
        """
        import subprocess

        fmt = check_format(format or self.format, "pipe")
        if fmt == "dot":
            return self.source.encode("utf-8")
        program = self.renderer or find_renderer()
        if program is None or shutil.which(program) is None:
            raise RendererNotFoundError(
                f"draw_dot: cannot render {fmt}: no Graphviz renderer found "
                f"(looked for {program or 'a system dot or graphviz-pure'}); "
                f"install one with: {INSTALL_HINT}"
            )
        limit = self.timeout if self.timeout is not None and self.timeout < math.inf else None
        try:
            result = subprocess.run([program, f"-T{fmt}"], input=self.source.encode("utf-8"),
                                    capture_output=True, timeout=limit)
        except subprocess.TimeoutExpired:
            raise RuntimeError(
                f"draw_dot: {program} -T{fmt} did not finish within {self.timeout:g} s "
                "(a node used by many ops is slow to lay out); draw a smaller graph, "
                "use to_html(), or pass a larger timeout"
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
            import pathlib
            import webbrowser

            webbrowser.open(pathlib.Path(path).resolve().as_uri())
        return path

    def _repr_svg_(self) -> str:
        """The SVG for Jupyter; on any failure, a small SVG that says what went wrong."""
        try:
            return self.pipe("svg").decode("utf-8")
        except Exception as exc:  # a notebook's display must never raise
            from xml.sax.saxutils import escape

            text = escape(f"{type(exc).__name__}: {exc}")
            return (
                '<svg xmlns="http://www.w3.org/2000/svg" width="760" height="40">'
                f'<text x="4" y="24" font-family="monospace" font-size="12">{text}</text></svg>'
            )

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"Drawing(format={self.format!r}, {self.source.count(chr(10))} lines of DOT)"


def check_format(fmt: Any, where: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"{where}: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt
