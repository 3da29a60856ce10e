"""Writing files atomically: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory.

    The temporary file is flushed to disk and then renamed over ``path`` (``os.replace``,
    atomic on POSIX and Windows); on any error it is removed and ``path`` is untouched.
    A symlink is written through (its target is replaced), and a file that already
    exists keeps its permissions, as a plain ``open(path, "wb")`` would.

    Raises:
        OSError: The file cannot be written; the error names ``path`` as given (never the
            temporary file), e.g. IsADirectoryError for a folder.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "note.txt")
        >>> write_atomic(path, b"hello")
        >>> with open(path, "rb") as f:
        ...     f.read()
        b'hello'
    """
    asked = os.fspath(path)
    if os.path.isdir(asked):
        raise IsADirectoryError(errno.EISDIR, "write_atomic: expected a file path, got a folder",
                                asked)
    path = os.path.realpath(asked)
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:  # a new file: mode 0o666 below lets the umask decide, as open() does
        mode = None
    try:
        # O_EXCL: never reuse a stranger's file
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666)
    except OSError as exc:  # name the file asked for, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, asked) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.chmod(f.fileno() if os.chmod in os.supports_fd else tmp, mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
