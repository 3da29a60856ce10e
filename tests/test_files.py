"""chaingrad.files against hostile targets: FIFOs, devices, sockets, symlinks to them,
read-only files and folders (checked as a user without root's powers), files owned by
others, killed writes, long names and empty paths. Every writer of the package goes
through ``write_atomic``: ``save``, ``to_html``, ``Drawing.render``, ``chaingrad graph -o``."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest

import chaingrad.files as files
from chaingrad import Value, draw_dot, save, to_html
from chaingrad.cli import main
from chaingrad.errors import NotARegularFileError
from chaingrad.files import TEMPORARY_SUFFIX, open_regular, write_atomic
from chaingrad.nn import MLP

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, owners, signals: POSIX")

NOBODY = 65534  # a user and group id without root's powers (no passwd entry needed)


def small_model() -> MLP:
    random.seed(0)
    return MLP(2, [3, 1])


def graph_root() -> Value:
    x = Value(2.0, label="x")
    return (x * x).tanh()


# ---- what is not a regular file is never replaced ----

WRITERS = {
    "write_atomic": lambda path: write_atomic(path, b"data"),
    "save": lambda path: save(small_model(), path),
    "to_html": lambda path: to_html(graph_root(), path),
    "Drawing.render": lambda path: draw_dot(graph_root(), format="svg").render(
        str(path)[:-len(".svg")]),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("through_a_symlink", [False, True], ids=["fifo", "symlink-to-fifo"])
def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path, writer, through_a_symlink) -> None:
    fifo = tmp_path / "target.svg"
    os.mkfifo(fifo)
    path = fifo
    if through_a_symlink:
        path = tmp_path / "link.svg"
        path.symlink_to(fifo)
    with pytest.raises(NotARegularFileError, match=r"is a FIFO, not a regular file") as error:
        WRITERS[writer](path)
    assert error.value.filename == str(path)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == sorted({"target.svg", path.name})  # no temporary


def test_the_command_line_refuses_a_fifo_in_one_line(tmp_path, capsys) -> None:
    fifo = tmp_path / "graph.dot"
    os.mkfifo(fifo)
    assert main(["graph", "x * 2", "--set", "x=1", "-o", str(fifo)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("chaingrad graph: error: ") and "is a FIFO, not a regular" in err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and os.listdir(tmp_path) == ["graph.dot"]


def test_a_socket_and_a_folder_are_refused(tmp_path) -> None:
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(NotARegularFileError, match="is a socket"):
            write_atomic(path, b"data")
        assert stat.S_ISSOCK(os.stat(path).st_mode)
    with pytest.raises(IsADirectoryError, match="got a folder"):
        write_atomic(tmp_path, b"data")
    with pytest.raises(IsADirectoryError, match="got a folder's") as error:
        write_atomic(f"{tmp_path}/missing/", b"data")  # open() would refuse it too
    assert error.value.filename == f"{tmp_path}/missing/"
    assert os.listdir(tmp_path) == ["sock"]


def _character_device(tmp_path) -> str:
    """A character device in the temporary folder (a copy of /dev/null's node, as root), or
    /dev/null itself where making device nodes is not allowed."""
    node = tmp_path / "device.svg"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.stat(os.devnull).st_rdev)
    except PermissionError:
        return os.devnull
    return str(node)


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("through_a_symlink", [False, True], ids=["device", "symlink-to-device"])
def test_a_character_device_is_refused_and_stays_a_device(tmp_path, writer,
                                                          through_a_symlink) -> None:
    device = _character_device(tmp_path)
    path = device
    if through_a_symlink:
        path = str(tmp_path / "link.svg")
        os.symlink(device, path)
    with pytest.raises(NotARegularFileError, match="is a character device, not a regular file"):
        WRITERS[writer](path)
    assert stat.S_ISCHR(os.stat(device).st_mode)
    assert not any(name.endswith(TEMPORARY_SUFFIX) for name in os.listdir(tmp_path))


def test_the_command_line_refuses_a_device_behind_a_symlink(tmp_path, capsys) -> None:
    link = tmp_path / "graph.dot"
    link.symlink_to(_character_device(tmp_path))
    assert main(["graph", "x * 2", "--set", "x=1", "-o", str(link)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("chaingrad graph: error: ") and "is a character device" in err
    assert stat.S_ISCHR(os.stat(link).st_mode)


@pytest.mark.parametrize("writer", ["write_atomic", "save"])
def test_dev_null_is_refused_before_anything_is_written(monkeypatch, writer) -> None:
    """A dry check: no file is opened, created, renamed or removed on the way to the
    refusal (as root, a rename over /dev/null would replace it)."""

    def forbidden(*args, **kwargs):
        raise AssertionError(f"write_atomic touched the file system: {args}")

    for name in ("open", "replace", "rename", "unlink", "scandir", "mkfifo", "chmod"):
        monkeypatch.setattr(files.os, name, forbidden)
    with pytest.raises(NotARegularFileError, match="is a character device") as error:
        WRITERS[writer](os.devnull)
    assert error.value.filename == os.devnull
    monkeypatch.undo()
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_reading_refuses_a_fifo_and_a_device_without_waiting(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (os.devnull, "a character device")):
        with pytest.raises(NotARegularFileError, match=f"load: .* is {kind}"), \
                open_regular(path, "load"):
            pass


# ---- permissions, owners, modes ----


@pytest.fixture
def shared_folder():
    """A folder that a user other than root can reach and write in (pytest's tmp_path
    sits under a folder only its owner may enter)."""
    folder = tempfile.mkdtemp(prefix="chaingrad-files-")
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_another_user(fn) -> str:
    """``fn()``'s outcome as ``'ok'`` or ``'ExcType: message (filename)'``, run by a user
    without root's powers: in a forked child with uid and gid 65534 when the tests run as
    root (open() itself ignores permissions for root), else in this process."""

    def outcome() -> str:
        try:
            fn()
        except OSError as exc:
            return f"{type(exc).__name__}: {exc} ({exc.filename})"
        return "ok"

    if os.geteuid() != 0:
        return outcome()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, report, and leave without running pytest's exit
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.write(write_end, outcome().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        result = reader.read().decode()
    os.waitpid(pid, 0)
    return result


def test_a_read_only_file_is_refused_as_open_would_refuse_it(shared_folder) -> None:
    path = os.path.join(shared_folder, "model.bin")
    with open(path, "wb") as f:
        f.write(b"old")
    os.chmod(path, 0o444)
    expected = as_another_user(lambda: open(path, "ab").close())  # open's own verdict
    assert expected.startswith("PermissionError: [Errno 13] Permission denied")
    got = as_another_user(lambda: write_atomic(path, b"new"))
    assert got == f"PermissionError: [Errno 13] Permission denied: {path!r} ({path})"
    with open(path, "rb") as f:
        assert f.read() == b"old"
    assert os.listdir(shared_folder) == ["model.bin"]


def test_a_read_only_file_is_written_where_open_would_write_it(tmp_path) -> None:
    """For whoever runs the tests (root in CI, for whom open() ignores the mode bits):
    write_atomic does what ``open(path, "wb")`` does, and keeps the mode."""
    path = tmp_path / "model.bin"
    path.write_bytes(b"old")
    path.chmod(0o444)
    try:
        open(path, "ab").close()
    except PermissionError:
        with pytest.raises(PermissionError):
            write_atomic(path, b"new")
        assert path.read_bytes() == b"old"
    else:
        write_atomic(path, b"new")
        assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_saving_over_a_file_keeps_its_owner_group_and_mode(tmp_path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root (CI runs as root)")
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"old")
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o640)
    save(small_model(), path)
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert path.read_bytes() != b"old"


def test_a_folder_that_is_not_writable_is_named(shared_folder) -> None:
    folder = os.path.join(shared_folder, "locked")
    os.mkdir(folder, 0o555)
    os.chmod(folder, 0o555)
    path = os.path.join(folder, "model.bin")
    got = as_another_user(lambda: write_atomic(path, b"new"))
    assert got.startswith("PermissionError: [Errno 13] Permission denied: cannot create a file "
                          f"in the folder of {path!r}: {folder!r} ({folder})"), got
    assert os.listdir(folder) == []


# ---- temporary files: names, leftovers of killed writes ----

STALLED_SAVE = textwrap.dedent("""
    import os, sys, time
    import chaingrad
    from chaingrad.nn import MLP

    def stall(fd):  # the data is written; the rename has not happened yet
        print("writing", flush=True)
        time.sleep(600)

    os.fsync = stall
    chaingrad.save(MLP(2, [16, 16, 1]), sys.argv[1])
""")


@contextlib.contextmanager
def stalled_save(path):
    """A process that has written the temporary file of a save to ``path`` and stops there,
    holding it (killed on leaving, if it still runs)."""
    child = subprocess.Popen([sys.executable, "-c", STALLED_SAVE, str(path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "writing\n"
        yield child
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def temporaries(folder, name="model.safetensors") -> list[str]:
    return sorted(e for e in os.listdir(folder) if e.startswith(f".{name}.")
                  and e.endswith(TEMPORARY_SUFFIX))


def test_the_next_save_removes_what_a_killed_save_left(tmp_path) -> None:
    path = tmp_path / "model.safetensors"
    save(small_model(), path)
    old = path.read_bytes()
    with stalled_save(path) as child:
        child.send_signal(signal.SIGKILL)
        child.wait()
    (left,) = temporaries(tmp_path)  # what SIGKILL left: recognisably a temporary of path
    assert path.read_bytes() == old  # the old file whole
    other = tmp_path / "other.safetensors"
    with stalled_save(other) as child:  # another target's temporary, its save still running
        child.send_signal(signal.SIGKILL)
        child.wait()
    (left_other,) = temporaries(tmp_path, "other.safetensors")
    stranger = tmp_path / ".model.safetensors.1234abcd.tmp"  # not chaingrad's
    stranger.write_bytes(b"keep me")
    save(small_model(), path)
    assert temporaries(tmp_path) == []
    assert sorted(os.listdir(tmp_path)) == sorted([path.name, stranger.name, left_other])


def test_a_save_in_progress_keeps_its_temporary_file(tmp_path) -> None:
    """Two saves to one path at once: the second must not remove the first one's file."""
    path = tmp_path / "model.safetensors"
    with stalled_save(path):
        (running,) = temporaries(tmp_path)
        save(small_model(), path)  # while the other save holds its temporary file
        assert temporaries(tmp_path) == [running]
    save(small_model(), path)  # the other save was killed on leaving: now it is abandoned
    assert temporaries(tmp_path) == [] and os.listdir(tmp_path) == [path.name]


@pytest.mark.parametrize("name", ["m" * 237 + ".safetensors", "é" * 120 + ".st"],
                         ids=["249 characters", "250 bytes"])
def test_a_long_legal_name_saves(tmp_path, name) -> None:
    path = tmp_path / name
    assert len(os.fsencode(name)) <= 255
    save(small_model(), path)
    assert os.listdir(tmp_path) == [name]
    prefix = files._temporary_prefix(name)
    assert len(os.fsencode(prefix + "0" * 8 + TEMPORARY_SUFFIX)) <= 255


def test_errors_name_the_path_never_the_temporary_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="expected a file path, got an empty one") as error:
        save(small_model(), "")
    assert error.value.filename == "" and TEMPORARY_SUFFIX not in str(error.value)
    too_long = tmp_path / ("m" * 300)
    with pytest.raises(OSError, match="File name too long") as error:
        save(small_model(), too_long)
    assert error.value.filename == str(too_long) and TEMPORARY_SUFFIX not in str(error.value)
    assert os.listdir(tmp_path) == []


def test_a_symlink_loop_fails_as_open_fails(tmp_path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OSError) as expected:
        open(loop, "wb").close()
    with pytest.raises(type(expected.value)) as error:
        write_atomic(loop, b"data")
    assert error.value.filename == str(loop) and loop.is_symlink()
    assert os.listdir(tmp_path) == ["loop"]
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "made")  # open() creates the target: so does write_atomic
    write_atomic(dangling, b"data")
    assert dangling.is_symlink() and (tmp_path / "made").read_bytes() == b"data"
