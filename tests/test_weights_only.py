"""chaingrad.weights_only: a file whose pickle names a global outside torch's allow list is
refused by chaingrad.load (weights_only=True, the default) before any of it runs, as by
torch.load; add_safe_globals / safe_globals allow a class of one's own."""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from fractions import Fraction

import pytest

import chaingrad
from chaingrad import serialization, torch_checkpoints, weights_only
from chaingrad.errors import ModelFileError, UnsafeGlobalError


class Point:
    """A class of the test's own, to allow."""

    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y


class Payload:
    """Unpickled, it calls ``call(*args)``: what a malicious file does."""

    def __init__(self, call, *args) -> None:
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def archive_holding(path, pickled: bytes) -> None:
    """A file of torch.save whose data.pkl is ``pickled``."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/byteorder", b"little")
        archive.writestr("archive/version", b"3\n")


@pytest.fixture
def allowed_nothing():
    """The safe globals cleared before and after the test."""
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


@pytest.mark.parametrize(("call", "blocked"), [(os.system, True), (exec, False)])
def test_a_malicious_file_is_refused_and_runs_nothing(tmp_path, torch, call, blocked):
    marker = tmp_path / "ran"
    command = (f"touch {marker}" if call is os.system
               else f"open({str(marker)!r}, 'w').close()")
    path = tmp_path / "evil.pt"
    archive_holding(path, pickle.dumps({"w": Payload(call, command)}, protocol=2))
    with pytest.raises(pickle.UnpicklingError) as refused:
        chaingrad.load(path)
    assert isinstance(refused.value, UnsafeGlobalError)
    name = f"{call.__module__}.{call.__qualname__}"
    assert f"the file names the global {name}, which is not allowed by default" in str(
        refused.value)
    if blocked:
        assert f"Its module {call.__module__} is blocked" in str(refused.value)
    else:
        assert (f"torch.serialization.add_safe_globals([{name}]) or the "
                f"torch.serialization.safe_globals([{name}]) context manager") in str(
            refused.value)
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError):  # torch refuses it too
        torch.load(path)
    assert not marker.exists()


def test_a_malicious_file_of_the_legacy_format_is_refused_and_runs_nothing(tmp_path):
    """Not a zip archive: torch's legacy format, a pickle (or several), checked the same."""
    marker = tmp_path / "ran"
    evil = Payload(exec, f"open({str(marker)!r}, 'w').close()")
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(evil, protocol=2))
    with pytest.raises(UnsafeGlobalError, match="names the global builtins.exec"):
        chaingrad.load(path)
    path.write_bytes(b"".join(pickle.dumps(part, protocol=2) for part in (
        torch_checkpoints.MAGIC_NUMBER, 1001, {"little_endian": True}, {"w": evil}, [])))
    with pytest.raises(UnsafeGlobalError, match="names the global builtins.exec"):
        chaingrad.load(path)
    assert not marker.exists()
    path.write_bytes(pickle.dumps(torch_checkpoints.MAGIC_NUMBER, protocol=2)[:5])
    with pytest.raises(ModelFileError, match="evil.pkl' is truncated or corrupt"):
        chaingrad.load(path)


def test_a_class_of_ones_own_loads_once_allowed(tmp_path, allowed_nothing):
    path = tmp_path / "point.pt"
    chaingrad.save({"p": Point(1.0, 2.0), "f": Fraction(1, 3)}, path)
    name = weights_only.full_name(Point)
    with pytest.raises(UnsafeGlobalError, match=f"names the global {name}, "):
        chaingrad.load(path)
    with serialization.safe_globals([Point, Fraction]):
        loaded = chaingrad.load(path)
        assert Point in serialization.get_safe_globals()
    assert (loaded["p"].x, loaded["p"].y, loaded["f"]) == (1.0, 2.0, Fraction(1, 3))
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([Point, (Fraction, "fractions.Fraction")])
    assert chaingrad.load(path)["f"] == Fraction(1, 3)
    serialization.clear_safe_globals()
    with pytest.raises(UnsafeGlobalError):
        chaingrad.load(path)
    assert chaingrad.load(path, weights_only=False)["p"].y == 2.0


def test_a_blocked_module_stays_blocked_when_allowed(tmp_path, allowed_nothing):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    archive_holding(path, pickle.dumps(Payload(os.system, f"touch {marker}"), protocol=2))
    serialization.add_safe_globals([os.system])
    with pytest.raises(UnsafeGlobalError, match="is blocked"):
        chaingrad.load(path)
    assert not marker.exists()


def test_the_torch_serialization_api_is_chaingrads_under_the_import_swap(allowed_nothing):
    import chaingrad as torch

    assert torch.serialization.add_safe_globals is weights_only.add_safe_globals
    with torch.serialization.safe_globals([Point]):
        assert torch.serialization.get_safe_globals() == [Point]
    with pytest.raises(TypeError, match=r"expected \(global, 'module.name'\)"):
        torch.serialization.add_safe_globals([(Point, 1)])
    with pytest.raises(TypeError, match="expected a class or a function"):
        torch.serialization.add_safe_globals([3])


def test_only_storages_are_persistent_ids():
    class NamesAModule(pickle.Pickler):  # (a subclass: Python 3.13's attribute is read-only)
        def persistent_id(self, obj):
            return ("module", "os") if obj == "x" else None

    pickled = io.BytesIO()
    NamesAModule(pickled, protocol=2).dump(["x"])
    unpickler = weights_only.Unpickler(io.BytesIO(pickled.getvalue()), {}, {}, print)
    with pytest.raises(UnsafeGlobalError, match="only the persistent ids of storages"):
        unpickler.load()


def test_weights_only_with_a_pickle_module_is_torchs_error(tmp_path):
    chaingrad.save([1], tmp_path / "a.pt")
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        chaingrad.load(tmp_path / "a.pt", pickle_module=pickle)
    assert chaingrad.load(tmp_path / "a.pt", pickle_module=pickle, weights_only=False) == [1]


def test_the_globals_a_file_would_be_refused_for_are_listed_unread(tmp_path, torch,
                                                                    allowed_nothing):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    archive_holding(path, pickle.dumps({"w": Payload(exec, f"open({str(marker)!r}, 'w')"),
                                        "p": Point(1.0, 2.0), "s": {1, 2}}, protocol=2))
    point = weights_only.full_name(Point)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == ["builtins.exec", point]
    with serialization.safe_globals([Point]):
        assert serialization.get_unsafe_globals_in_checkpoint(path) == ["builtins.exec"]
    assert set(torch.serialization.get_unsafe_globals_in_checkpoint(path)) == {
        "builtins.exec", point}  # torch's own, the same
    assert not marker.exists()
