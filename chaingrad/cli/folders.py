"""The folder a command writes into: made when missing, removed again if left empty.

``chaingrad demo --out DIR`` and ``chaingrad graph -o DIR/FILE`` treat a folder that does
not exist alike: they make it, with its missing parents (as ``mkdir -p`` does), and a run
that ends without writing anything into them (an error, Ctrl-C, a closed pipe) removes
the folders it made again. Messages name paths as the user gave them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from ..errors import UsageError


@contextlib.contextmanager
def output_folder(folder: str, option: str) -> Iterator[str]:
    """Make ``folder`` and its missing parents; when the block ends, however it ends,
    remove the ones this made that are still empty.

    Args:
        folder: The folder as the user gave it; ``""`` is the current folder.
        option: How the user gave it, to start a message: ``"--out 'out'"``, ``"-o g.svg"``.

    Yields:
        ``folder`` (``"."`` for ``""``).

    Raises:
        UsageError: The folder is a file, or cannot be made, or not written in.

    Example:
        >>> import os, tempfile
        >>> out = os.path.join(tempfile.mkdtemp(), "a", "b")
        >>> with output_folder(out, "--out") as folder:
        ...     os.path.isdir(folder)
        True
        >>> os.path.exists(os.path.dirname(out))  # nothing was written: both went again
        False
    """
    folder = folder or os.curdir
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(f"{option}: {folder} is not a folder")
    created = []  # the folders makedirs makes, innermost first
    missing = os.path.abspath(folder)
    while not os.path.exists(missing):
        created.append(missing)
        missing = os.path.dirname(missing)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option}: cannot create the folder ({exc.strerror or exc})") from exc
    try:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UsageError(f"{option}: the folder is not writable")
        yield folder
    finally:
        for made in created:
            try:
                os.rmdir(made)  # only empty folders go
            except OSError:
                break
