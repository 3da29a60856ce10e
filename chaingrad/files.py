"""Files written atomically, and read only when they are regular files.

``write_atomic`` writes through a temporary file renamed over the target, so that a reader
sees the old file or the new one, never half of one; ``open_regular`` opens a file for
reading without ever blocking on a FIFO. Neither touches a device, a FIFO or a socket.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from typing import BinaryIO

from .errors import NotARegularFileError

try:
    import fcntl  # POSIX: a save in progress holds a lock on its temporary file
except ImportError:  # Windows, where an open file cannot be removed anyway
    fcntl = None  # type: ignore[assignment]

TEMPORARY_SUFFIX = ".chaingrad-tmp"
"""How every temporary file of ``write_atomic`` ends: ``.{name}.{hash}.{random}.chaingrad-tmp``."""

_SHOWN = 100  # bytes of the target's name kept in a temporary's name (NAME_MAX is 255)

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder.

    The temporary file is flushed to disk and then renamed over ``path`` (``os.replace``,
    atomic on POSIX and Windows); on any error it is removed and ``path`` is untouched.
    A symlink is written through (its target is replaced). A file that is already there
    keeps its mode, and its owner and group where the system allows it (always for root),
    and is replaced only if ``open(path, "wb")`` could write it: the same permission check
    (so as root only a read-only file system or an immutable file refuses). A temporary
    file that an earlier, killed write to the same path left behind is removed.

    Raises:
        FileNotFoundError: ``path`` is empty, or its folder does not exist.
        IsADirectoryError: ``path`` is a folder.
        NotARegularFileError: ``path`` is a FIFO, a device or a socket (``os.devnull``):
            refused before anything is written.
        PermissionError: ``path`` is not writable (naming it), or its folder is not (naming
            the folder).
        OSError: Anything else; the error names ``path`` as given, never the temporary file.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "note.txt")
        >>> write_atomic(path, b"hello")
        >>> with open(path, "rb") as f:
        ...     f.read()
        b'hello'
    """
    asked = os.fspath(path)
    if isinstance(asked, bytes):
        asked = os.fsdecode(asked)
    if not asked:
        raise FileNotFoundError(errno.ENOENT, "write_atomic: expected a file path, got an "
                                "empty one", asked)
    if asked.endswith(("/", os.sep)) and not os.path.isdir(asked):
        raise IsADirectoryError(errno.EISDIR, "write_atomic: expected a file path, got a "
                                "folder's", asked)
    target = os.path.realpath(asked)
    folder, name = os.path.split(target)
    old = _regular_or_missing(target, asked)
    if old is not None and not _writable(target):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), asked)
    prefix = _temporary_prefix(name)
    _remove_abandoned(folder, prefix)
    fd, tmp = _create(folder, prefix, asked)
    try:
        with os.fdopen(fd, "wb") as f:
            if old is not None:
                _keep_owner_and_mode(f.fileno(), tmp, old)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            _regular_or_missing(target, asked)  # once more: nothing else appeared there
            os.replace(tmp, target)  # with the lock still held (see _remove_abandoned)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None and exc.filename != asked:
            raise type(exc)(exc.errno, exc.strerror, asked) from exc  # never the temporary
        raise
    _fsync_folder(folder)


@contextlib.contextmanager
def open_regular(path: str | os.PathLike[str], where: str = "open_regular",
                 ) -> Iterator[tuple[BinaryIO, int]]:
    """Open ``path`` for reading in binary if it is a regular file; yield it and its size.

    A FIFO is refused at once (it is opened without waiting for a writer), a device or a
    socket too, before anything is read. ``where`` names the caller in the errors.

    Raises:
        IsADirectoryError: ``path`` is a folder.
        NotARegularFileError: ``path`` is a FIFO, a device or a socket.
        OSError: It cannot be opened (e.g. FileNotFoundError).

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "note.txt")
        >>> write_atomic(path, b"hello")
        >>> with open_regular(path) as (f, size):
        ...     f.read(2), size
        (b'he', 5)
    """
    asked = os.fspath(path)
    _refuse_special(os.stat(asked).st_mode, asked, where)  # a device is never opened
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(asked, flags | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        _refuse_special(info.st_mode, asked, where)  # it may have changed since the stat
        yield f, info.st_size


def _refuse_special(mode: int, asked: str, where: str) -> None:
    """Refuse a folder, a FIFO, a device or a socket, naming the path as given."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"{where}: expected a file path, got a folder",
                                asked)
    for test, kind in _KINDS:
        if test(mode):
            raise NotARegularFileError(f"{where}: {asked!r} is {kind}, not a regular file; "
                                       "chaingrad reads and replaces only regular files", asked)


def _regular_or_missing(target: str, asked: str) -> os.stat_result | None:
    """The target's status if it is a regular file, None if there is none; else refuse."""
    try:
        info = os.stat(target)
    except FileNotFoundError:  # a new file (or a dangling symlink's target, as open() makes)
        return None
    except OSError as exc:  # e.g. a symlink loop: open() would fail as well
        raise type(exc)(exc.errno, exc.strerror, asked) from exc
    _refuse_special(info.st_mode, asked, "write_atomic")
    return info


def _writable(target: str) -> bool:
    """Whether ``open(target, "wb")`` would be allowed: the kernel's own check for the
    effective user (root passes it, except on a read-only file system or an immutable
    file), without opening the file."""
    if os.access in os.supports_effective_ids:
        return os.access(target, os.W_OK, effective_ids=True)
    return os.access(target, os.W_OK)


def _temporary_prefix(name: str) -> str:
    """``.{name, cut}.{hash of name}.``: recognisably the temporaries of this target only,
    and short enough for any legal name (255 bytes)."""
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:12]
    shown = name
    while len(os.fsencode(shown)) > _SHOWN:
        shown = shown[:-1]
    return f".{shown}.{digest}."


def _is_temporary(entry: str, prefix: str) -> bool:
    random_part = entry[len(prefix):-len(TEMPORARY_SUFFIX)]
    return (entry.startswith(prefix) and entry.endswith(TEMPORARY_SUFFIX)
            and len(random_part) == 8)


def _remove_abandoned(folder: str, prefix: str) -> None:
    """Remove the temporary files that killed writes to this target left behind. A write
    in progress holds a lock on its own, which keeps it (POSIX); elsewhere, an open file
    cannot be removed."""
    with contextlib.suppress(OSError):
        entries = [e.path for e in os.scandir(folder) if _is_temporary(e.name, prefix)]
        for entry in entries:
            with contextlib.suppress(OSError):
                _remove_if_unlocked(entry)


def _remove_if_unlocked(path: str) -> None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a write holds it
        os.unlink(path)
    finally:
        os.close(fd)


def _create(folder: str, prefix: str, asked: str) -> tuple[int, str]:
    """Create and lock a new temporary file; its descriptor and path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(3):
        tmp = os.path.join(folder, f"{prefix}{secrets.token_hex(4)}{TEMPORARY_SUFFIX}")
        try:
            fd = os.open(tmp, flags | getattr(os, "O_CLOEXEC", 0), 0o666)  # never reuse
        except PermissionError as exc:
            raise PermissionError(exc.errno, f"{exc.strerror}: cannot create a file in the "
                                  f"folder of {asked!r}", folder) from exc
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, asked) from exc
        if fcntl is None:
            return fd, tmp
        fcntl.flock(fd, fcntl.LOCK_EX)
        with contextlib.suppress(OSError):
            if os.stat(tmp).st_ino == os.fstat(fd).st_ino:
                return fd, tmp  # still ours: no other write removed it before the lock
        os.close(fd)
    raise FileExistsError(errno.EEXIST, "write_atomic: could not create a temporary file",
                          asked)


def _keep_owner_and_mode(fd: int, tmp: str, old: os.stat_result) -> None:
    """Give the new file the old one's owner and group (where allowed), then its mode
    (chown first: it may clear the set-id bits)."""
    new = os.fstat(fd)
    if hasattr(os, "fchown") and (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:  # not root: keep at least the group, if it is one of ours
            with contextlib.suppress(OSError):
                os.fchown(fd, -1, old.st_gid)
    os.chmod(fd if os.chmod in os.supports_fd else tmp, stat.S_IMODE(old.st_mode))


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
