"""Named parameters, state dicts, save/load/to_torch of the scalar MLP, plain safetensors
files as state dicts, every kind of bad or edited model file, and bounded loads."""

import hashlib
import json
import os
import random
import struct
import tracemalloc
import warnings

import numpy as np
import pytest

import chaingrad.serialization as cio
from chaingrad import torch_names
from chaingrad.files import write_atomic
from chaingrad.nn import MLP, Module, Neuron
from chaingrad.serialization import ModelFileError, load, save, to_torch

safetensors_numpy = pytest.importorskip("safetensors.numpy")

POINTS = [[0.5, -1.0], [2.0, 0.3], [-1.5, 1.5], [0.0, 0.0], [0.1, -0.2]]


def make_model(seed=1337, nouts=(16, 16, 1), activation="relu"):
    random.seed(seed)
    model = MLP(2, list(nouts), activation=activation)
    for p in model.parameters():  # non-zero biases, so that a swapped bias would show
        p.data += random.uniform(-0.5, 0.5)
    return model


def weights(model):
    return [p.data for p in model.parameters()]


def outputs(model):
    return [model(x).data for x in POINTS]


def refused_unchanged(path, model, message):
    """``load(path, model=model)`` raises a ModelFileError and leaves the model as it was."""
    before = weights(model)
    with pytest.raises(ModelFileError, match=message):
        load(path, model=model)
    assert weights(model) == before


@pytest.fixture
def saved(tmp_path):
    model = make_model()
    path = tmp_path / "model.safetensors"
    save(model, path)
    return model, path


# ---- names and state dicts ----


def test_named_parameters_follow_torch_sequential():
    model = make_model()
    named = model.named_parameters()
    assert [name for name, _ in named] == ["0.weight", "0.bias", "2.weight", "2.bias",
                                           "4.weight", "4.bias"]
    state = model.state_dict()
    assert {k: v.shape for k, v in state.items()} == {
        "0.weight": (16, 2), "0.bias": (16,), "2.weight": (16, 16), "2.bias": (16,),
        "4.weight": (1, 16), "4.bias": (1,)}
    neuron = model.layers[1].neurons[5]
    assert state["2.weight"][5].tolist() == [w.data for w in neuron.w]
    assert state["2.bias"][5] == neuron.b.data
    assert sum(v.size for v in state.values()) == len(model.parameters())


def test_neuron_and_plain_module_names():
    random.seed(0)
    assert {k: v.shape for k, v in Neuron(3).state_dict().items()} == {"weight": (3,),
                                                                       "bias": ()}

    class Pair(Module):
        def __init__(self):
            self.a, self.b = make_model().parameters()[:2]

        def parameters(self):
            return [self.a, self.b]

    assert [name for name, _ in Pair().named_parameters()] == ["0", "1"]


def test_load_state_dict_round_trip_and_torch_tensors(torch):
    source, target = make_model(1), make_model(2)
    target.load_state_dict({k: torch.tensor(v) for k, v in source.state_dict().items()})
    assert weights(target) == weights(source)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.pop("2.bias"), r"missing keys \['2.bias'\]"),
        (lambda s: s.update(extra=np.zeros(1)), r"unexpected keys \['extra'\]"),
        (lambda s: s.update({"0.weight": np.zeros((2, 16))}),
         r"0.weight has shape \(2, 16\), expected \(16, 2\)"),
        (lambda s: s["4.bias"].__setitem__(0, np.nan), "4.bias holds non-finite"),
        (lambda s: s.update({"0.bias": ["a"] * 16}), "0.bias expects real numbers .*got text"),
        (lambda s: s.update({"0.bias": ["0.5"] * 16}), "0.bias expects real numbers .*got text"),
        (lambda s: s.update({"0.bias": np.ones(16, bool)}), "0.bias expects real numbers "
                                                            r"\(float or int\), got bool"),
        (lambda s: s.update({"2.bias": s["2.bias"] + 1j}), "2.bias expects real numbers "
                                                           r"\(float or int\), got complex128"),
        (lambda s: s.update({"4.bias": [[object()]]}), "4.bias expects real numbers .*object"),
    ],
    ids=["missing", "unexpected", "shape", "nan", "letters", "numeric text", "bool",
         "complex", "object"],
)
def test_load_state_dict_checks_everything_before_changing_anything(change, message):
    model = make_model(1)
    before = weights(model)
    state = make_model(2).state_dict()
    change(state)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would be a silent cast
        with pytest.raises(ValueError, match=message):
            model.load_state_dict(state)
    assert weights(model) == before


def test_load_state_dict_non_strict_returns_the_keys_as_torch_does():
    model = make_model(1)
    state = make_model(2).state_dict()
    state.pop("4.bias")
    state["extra"] = np.zeros(1)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["4.bias"] and result.unexpected_keys == ["extra"]
    assert model.state_dict()["0.weight"].tolist() == state["0.weight"].tolist()
    assert repr(model.load_state_dict(make_model(3).state_dict())) == (
        "<All keys matched successfully>")


# ---- save and load ----


def test_save_load_round_trip(saved):
    model, path = saved
    loaded = load(path)
    assert loaded.architecture() == model.architecture()
    as_float32 = [float(np.float32(w)) for w in weights(model)]
    assert weights(loaded) == as_float32
    assert outputs(loaded) == pytest.approx(outputs(model), abs=1e-5)


def test_load_keeps_the_callers_random_sequence(saved):
    _, path = saved
    random.seed(7)
    expected = random.random()
    random.seed(7)
    load(path)
    assert random.random() == expected


def test_load_into_an_existing_model(saved, tmp_path):
    model, path = saved
    other = make_model(5)
    assert load(path, model=other) is other
    assert outputs(other) == pytest.approx(outputs(model), abs=1e-5)
    refused_unchanged(path, make_model(5, nouts=(8, 1)), r"holds MLP\(nin=2, nouts=\[16, 16, "
                      r"1\].*model given is MLP\(nin=2, nouts=\[8, 1\]")


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid", "linear"])
def test_to_torch_gives_the_same_outputs(activation, torch):
    model = make_model(3, nouts=(5, 4, 2), activation=activation)
    net = to_torch(model)
    got = net(torch.tensor(POINTS, dtype=torch.float32)).detach().numpy()
    expected = [[v.data for v in model(x)] for x in POINTS]
    np.testing.assert_allclose(got, expected, atol=1e-6, rtol=0)
    assert to_torch(model, dtype=torch.float64)[0].weight.dtype == torch.float64


def test_saved_file_loads_into_torch_with_strict_keys(saved, torch):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    model, path = saved
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                              torch.nn.ReLU(), torch.nn.Linear(16, 1))
    net.load_state_dict(safetensors_torch.load_file(str(path)), strict=True)
    got = net(torch.tensor(POINTS)).detach().numpy()[:, 0]
    np.testing.assert_allclose(got, outputs(model), atol=1e-6, rtol=0)


def test_non_contiguous_arrays_are_saved_correctly(tmp_path):
    state = make_model(4).state_dict()
    odd = {k: np.asfortranarray(v) for k, v in state.items()}
    assert not odd["2.weight"].flags.c_contiguous
    save(odd, tmp_path / "m.safetensors")
    loaded = safetensors_numpy.load_file(str(tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(loaded["2.weight"], state["2.weight"].astype(np.float32))


def test_save_refuses_what_it_cannot_describe(tmp_path):
    class Bare(Module):
        pass

    with pytest.raises(TypeError, match="cannot describe Bare; save and load rebuild only "
                                        "MLP, Sequential, Linear"):
        save(Bare(), tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="save: expected a model .* or a state dict, got "
                                        "object"):
        save(object(), tmp_path / "x.safetensors")
    model = make_model()
    model.parameters()[0].data = 1e300
    with pytest.raises(ValueError, match="too large for float32"):
        save(model, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match=r"save: 0.bias holds nan or inf; a model file holds "
                                         "finite weights"):
        save({"0.bias": np.array([1.0, np.nan])}, tmp_path / "x.safetensors")
    assert not os.path.exists(tmp_path / "x.safetensors")


def test_a_failed_save_leaves_the_old_file_intact(saved, monkeypatch):
    _, path = saved
    old = path.read_bytes()

    def crash(fd):
        raise OSError("disk full")

    monkeypatch.setattr(cio.os, "fsync", crash)
    with pytest.raises(OSError, match="disk full"):
        save(make_model(9), path)
    assert path.read_bytes() == old
    assert os.listdir(path.parent) == [path.name]  # no temporary file left behind


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and symlinks")
def test_saving_over_a_file_keeps_its_permissions_and_follows_a_symlink(saved, tmp_path):
    model, path = saved
    path.chmod(0o600)
    link = tmp_path / "link.safetensors"
    link.symlink_to(path)
    old = path.read_bytes()
    save(make_model(9), link)
    assert link.is_symlink() and path.read_bytes() != old  # the target got the new model
    assert path.stat().st_mode & 0o777 == 0o600  # not widened to the umask's default
    assert sorted(os.listdir(tmp_path)) == ["link.safetensors", "model.safetensors"]


def test_saving_into_a_missing_folder_names_the_path_asked_for(tmp_path):
    target = tmp_path / "no-such-folder" / "model.safetensors"
    with pytest.raises(FileNotFoundError) as error:
        save(make_model(), target)
    assert error.value.filename == str(target)


# ---- bad files ----


def split_size(path):
    return struct.unpack("<Q", path.read_bytes()[:8])[0]


ARCH = {"type": "MLP", "nin": 2, "nouts": [16, 16, 1], "activation": "relu",
        "format_version": cio.FORMAT_VERSION}


def write_state(path, files, drop=None, extra=None, change=None):
    """A signed safetensors file with chaingrad's metadata whose tensors do not fit it."""
    state = make_model(11).state_dict()
    state.pop(drop, None)
    state.update(change or {})
    if extra is not None:
        state["extra"] = extra
    state = {k: v.astype(np.float32) for k, v in state.items()}
    data = safetensors_numpy.save(state, metadata={"chaingrad": json.dumps(ARCH)})
    path.write_bytes(files.sign(data))


def write_bf16(path):
    """A valid safetensors file of bfloat16 weights (as PyTorch writes), with the metadata."""
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    state = {k: torch.tensor(v).to(torch.bfloat16) for k, v in make_model(11).state_dict().items()}
    safetensors_torch.save_file(state, str(path), metadata={"chaingrad": json.dumps(ARCH)})


def garble_header(data):
    (n,) = struct.unpack("<Q", data[:8])
    return data[:8] + b"\xff" * n + data[8 + n:]


def not_json(files):
    def edit(header):
        header["__metadata__"]["chaingrad"] = "{oops"
    return edit


BAD_FILES = {
    "empty": (lambda p, f: p.write_bytes(b""), "not a safetensors file \\(only 0 bytes\\)"),
    "png": (lambda p, f: p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64), "truncated or not"),
    "text": (lambda p, f: p.write_text("0.weight,0.bias\n" * 10), "truncated or not"),
    "truncated": (lambda p, f: p.write_bytes(p.read_bytes()[:-100]),
                  r"is truncated: its header describes \d+ bytes of tensor data"),
    "cut after its header": (lambda p, f: p.write_bytes(p.read_bytes()[:8 + split_size(p)]),
                             "is truncated"),
    "bytes after its tensors": (lambda p, f: p.write_bytes(p.read_bytes() + b"\0" * 5),
                                r"has 5 bytes after the \d+ bytes of tensor data"),
    "bfloat16": (lambda p, f: write_bf16(p), r"tensor '0.bias' has dtype BF16, which is not "
                                             r"supported \(load reads F16, F32, F64"),
    "header cut": (lambda p, f: p.write_bytes(p.read_bytes()[:50]), "truncated"),
    "garbled header": (lambda p, f: p.write_bytes(garble_header(p.read_bytes())),
                       "bad header"),
    "metadata not json": (lambda p, f: f.rewrite(p, edit_header=not_json(f)), "not JSON"),
    "architecture not a map": (lambda p, f: f.rewrite(p, edit_header=lambda h: h[
        "__metadata__"].update(chaingrad="[1, 2]")), "the architecture is not a map"),
    "unknown type": (lambda p, f: f.rewrite(p, lambda a: a.update(type="CNN")),
                     r"the architecture is \{.*'CNN'.*\}, expected a map with a type in MLP"),
    "older version": (lambda p, f: f.rewrite(p, lambda a: a.update(format_version=1)),
                      r"format_version 1 is not supported \(this chaingrad reads 2\)"),
    "future version": (lambda p, f: f.rewrite(p, lambda a: a.update(format_version=99)),
                       "format_version 99"),
    "bad sizes": (lambda p, f: f.rewrite(p, lambda a: a.update(nouts=[16, -1])),
                  r"MLP has nouts=\[16, -1\], expected a non-empty list of positive integers"),
    "bad activation": (lambda p, f: f.rewrite(p, lambda a: a.update(activation="gelu")),
                       "MLP has activation='gelu', expected one of"),
    "missing argument": (lambda p, f: f.rewrite(p, lambda a: a.pop("activation")),
                         r"MLP has arguments \['nin', 'nouts'\], expected \['activation'"),
    "missing key": (lambda p, f: write_state(p, f, drop="4.bias"), r"missing keys \['4.bias'\]"),
    "extra key": (lambda p, f: write_state(p, f, extra=np.zeros(3)),
                  r"unexpected keys \['extra'\]"),
    "wrong shape": (lambda p, f: write_state(p, f, change={"2.weight": np.zeros((8, 16))}),
                    r"2.weight has shape \(8, 16\), expected \(16, 16\)"),
    "not finite": (lambda p, f: write_state(p, f, change={"0.bias": np.full(16, np.inf)}),
                   "0.bias holds non-finite"),
    # the integrity check: every byte chaingrad wrote is covered, and cannot be switched off
    "activation edited": (lambda p, f: f.rewrite(p, lambda a: a.update(activation="tanh"),
                                                 sign=False), "is corrupt: checksum mismatch"),
    "checksum deleted": (lambda p, f: f.rewrite(p, edit_header=lambda h: h["__metadata__"].pop(
        "chaingrad.sha256"), sign=False), "has chaingrad's metadata but no checksum"),
    "checksum blanked": (lambda p, f: f.rewrite(p, edit_header=lambda h: h["__metadata__"].update(
        {"chaingrad.sha256": ""}), sign=False), r"holds 0 chaingrad.sha256 fields"),
    "checksum of the tensors only": (lambda p, f: f.rewrite(p, edit_header=lambda h: h[
        "__metadata__"].update({"chaingrad.sha256": old_checksum(p)}), sign=False),
        "is corrupt: checksum mismatch"),
    "only the architecture": (lambda p, f: write_unsigned(p), "has chaingrad's metadata but no "
                                                             "checksum"),
    "metadata added": (lambda p, f: f.rewrite(p, edit_header=lambda h: h["__metadata__"].update(
        note="hello"), sign=False), "is corrupt: checksum mismatch"),
}


def old_checksum(path):
    """What chaingrad's format 1 stored: the SHA-256 of the tensors' bytes only."""
    digest = hashlib.sha256()
    for _, array in sorted(safetensors_numpy.load_file(str(path)).items()):
        digest.update(array.tobytes())
    return digest.hexdigest()


def write_unsigned(path):
    """The architecture alone, as safetensors writes it: no checksum."""
    state = {k: v.astype(np.float32) for k, v in make_model(11).state_dict().items()}
    safetensors_numpy.save_file(state, str(path), metadata={"chaingrad": json.dumps(ARCH)})


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_raise_model_file_error_and_change_nothing(saved, model_files, case):
    model, path = saved
    spoil, message = BAD_FILES[case]
    spoil(path, model_files)
    with pytest.raises(ModelFileError, match=message):
        load(path)
    refused_unchanged(path, model, message)


def test_the_checksum_covers_every_byte_of_the_file(saved, model_files):
    """The stored value is the SHA-256 of the file with those 64 digits read as zeros."""
    _, path = saved
    data = path.read_bytes()
    size = split_size(path)
    (field,) = model_files.CHECKSUM.finditer(data[8:8 + size])
    start, end = 8 + field.start(1), 8 + field.end(1)
    unsigned = data[:start] + b"0" * 64 + data[end:]
    assert data[start:end] == hashlib.sha256(unsigned).hexdigest().encode()
    for offset in (0, 3, 8, 8 + size // 2, 8 + size - 1, 8 + size, len(data) - 1):
        spoiled = bytearray(data)
        spoiled[offset] ^= 0x20  # one bit anywhere: length, header, or a weight
        path.write_bytes(bytes(spoiled))
        with pytest.raises(ModelFileError):
            load(path)
    path.write_bytes(data)
    assert weights(load(path)) == weights(load(path))


def test_save_stores_a_checksum_and_load_checks_it(saved):
    model, path = saved
    data = bytearray(path.read_bytes())
    data[8 + split_size(path) + 37] ^= 0x01  # one bit of one weight
    path.write_bytes(bytes(data))
    before = weights(model)
    with pytest.raises(ModelFileError, match=r"is corrupt: checksum mismatch"):
        load(path, model=model)
    assert weights(model) == before
    with pytest.raises(ModelFileError, match=r"is corrupt: checksum mismatch"):
        load(path)


def test_a_plain_safetensors_file_loads_as_a_state_dict(saved, tmp_path):
    """A file with no chaingrad metadata (another tool's) is a state dict: ``load`` returns
    it, ``load(path, model=...)`` loads it into the model, names and shapes checked."""
    model, _ = saved
    plain = tmp_path / "plain.safetensors"
    source = make_model(11)
    safetensors_numpy.save_file({k: v.astype(np.float32) for k, v in
                                 source.state_dict().items()}, str(plain))
    state = load(plain)
    assert isinstance(state, dict) and sorted(state) == sorted(source.state_dict())
    model.load_state_dict(state)
    assert weights(model) == [float(np.float32(w)) for w in weights(source)]
    other = make_model(12)
    assert load(plain, model=other) is other and weights(other) == weights(model)
    refused_unchanged(plain, make_model(12, nouts=(8, 1)), r"does not match the model given: "
                      r".*0.weight has shape \(16, 2\), expected \(8, 2\)")
    safetensors_numpy.save_file({"w": np.zeros(2, np.float32)}, str(plain),
                                metadata={"format": "np"})  # metadata, but not chaingrad's
    assert load(plain)["w"].tolist() == [0.0, 0.0]


def test_a_state_dict_saves_and_loads_back_checked(tmp_path, model_files):
    model = make_model(4)
    path = tmp_path / "state.safetensors"
    save(model.state_dict(), path)
    state = load(path)
    assert {k: v.dtype for k, v in state.items()} == {k: np.float32 for k in state}
    other = make_model(5)
    other.load_state_dict(state)
    assert weights(other) == [float(np.float32(w)) for w in weights(model)]
    assert "chaingrad" not in model_files.split(path.read_bytes())[0]["__metadata__"]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load(path)
    with pytest.raises(TypeError, match=r"save: '0.bias': expected real numbers .*complex"):
        save({"0.bias": np.ones(2) * 1j}, path)


def test_pytorch_weights_load_into_a_chaingrad_model(tmp_path, torch):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                              torch.nn.ReLU(), torch.nn.Linear(16, 1))
    path = tmp_path / "torch.safetensors"
    safetensors_torch.save_file(net.state_dict(), str(path))
    model = make_model(1)
    model.load_state_dict(load(path))
    got = net(torch.tensor(POINTS)).detach().numpy()[:, 0]
    np.testing.assert_allclose(outputs(model), got, atol=1e-6, rtol=0)


def test_saving_onto_a_folder_names_the_folder(saved, tmp_path):
    model, _ = saved
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="expected a file path, got a folder") as error:
        save(model, folder)
    assert error.value.filename == str(folder)
    assert sorted(os.listdir(tmp_path)) == ["folder", "model.safetensors"]  # no temp file
    with pytest.raises(IsADirectoryError, match="write_atomic: expected a file path") as error:
        write_atomic(folder, b"data")
    assert error.value.filename == str(folder) and os.listdir(folder) == []


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.safetensors")


# ---- bounded loads ----


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, run_python):
    """Run in a child process, so that a load that waited would fail the test (after a
    minute) instead of hanging the run."""
    fifo = tmp_path / "model.safetensors"
    os.mkfifo(fifo)
    code = ("import sys, chaingrad\n"
            "try:\n"
            "    chaingrad.load(sys.argv[1])\n"
            "except OSError as exc:\n"
            "    print(type(exc).__name__, exc)\n")
    result = run_python(code, str(fifo), timeout=60)
    assert result.stdout.startswith("NotARegularFileError load: ")
    assert "is a FIFO, not a regular file" in result.stdout, result.stderr


def test_a_huge_sparse_file_with_a_model_at_its_head_is_refused_at_once(saved):
    """16 GB on paper, a few KB on disk: the header says how many bytes follow it, and a file
    longer than that is refused before anything past the header is read."""
    _, path = saved
    with open(path, "r+b") as f:
        f.truncate(16 * 2**30)
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match=r"has 1717\d+ bytes after the \d+ bytes of "
                                                 "tensor data its header describes"):
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # bytes: the header and its parse, not the file


def test_a_header_larger_than_safetensors_allows_is_refused(tmp_path):
    path = tmp_path / "m.safetensors"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", 200_000_000))
        f.truncate(8 + 200_000_000)
    with pytest.raises(ModelFileError, match="a header of 200000000 bytes; safetensors allows"):
        load(path)


# ---- what to install ----


@pytest.mark.parametrize(("hidden", "call", "missing"), [
    ("safetensors", "chaingrad.load(path)", "safetensors"),
    ("safetensors", "chaingrad.save(MLP(2, [3, 1]), path)", "safetensors"),
    ("numpy", "chaingrad.save(MLP(2, [3, 1]), path)", "numpy"),
    ("numpy", "chaingrad.load(path)", "numpy"),
])
def test_without_numpy_or_safetensors_save_and_load_say_what_to_install(
        tmp_path, run_python, hidden, call, missing):
    path = tmp_path / "model.safetensors"
    save(make_model(), path)
    code = (f"import sys\n"
            f"sys.modules[{hidden!r}] = None  # as if it were not installed\n"
            "import chaingrad\n"
            "from chaingrad.nn import MLP\n"
            f"path = {str(path)!r}\n"
            "try:\n"
            f"    {call}\n"
            "except ModuleNotFoundError as exc:\n"
            "    print(exc)\n")
    result = run_python(code)
    what = "load" if "load" in call else "save"
    assert result.stdout.strip() == (
        f"chaingrad.{what} needs numpy and safetensors ({missing} is missing): pip install "
        "'chaingrad[demo]', or pip install numpy safetensors"), result.stderr


@pytest.mark.parametrize("depth", [65, 450])
def test_a_file_nested_too_deep_is_refused_without_recursion(tmp_path, model_files,
                                                             depth) -> None:
    from chaingrad import nn

    path = tmp_path / "deep.safetensors"
    save(nn.Sequential(nn.Linear(2, 2)), path)

    def nest(arch: dict) -> None:
        inner = {"type": "Sequential", "layers": arch.pop("layers")}
        for _ in range(depth - 2):
            inner = {"type": "Sequential", "layers": [inner]}
        arch["layers"] = [inner]

    model_files.rewrite(path, edit=nest)
    with pytest.raises(ModelFileError, match="nest more than 64 deep"):
        load(path)


def too_deep():
    """A model whose layers nest 450 deep."""
    from chaingrad import nn

    model = nn.Linear(2, 2)
    for _ in range(450):
        model = nn.Sequential(model)
    return model


def test_a_model_nested_too_deep_to_save_says_so_and_writes_nothing(tmp_path) -> None:
    with pytest.raises(ValueError, match="layers nest more than 64 deep"):
        save(too_deep(), tmp_path / "deep.safetensors")
    assert os.listdir(tmp_path) == []


def test_a_model_nested_too_deep_for_to_torch_says_so(torch) -> None:
    with pytest.raises(ValueError, match="layers nest more than 64 deep"):
        to_torch(too_deep())


# ---- buffers, the containers and norms, and torch.save / torch.load's spelling ----


def tensor_model():
    """A model of the layer types that hold buffers or children by name, after a training
    step (its running statistics moved)."""
    import chaingrad.nn as cnn
    from chaingrad import Tensor

    cnn.manual_seed(3)
    model = cnn.Sequential(
        cnn.Embedding(6, 4, padding_idx=0), cnn.Flatten(), cnn.Linear(8, 5),
        cnn.BatchNorm1d(5, momentum=0.3),
        cnn.ModuleList([cnn.LayerNorm(5), cnn.Tanh()]),
        cnn.ModuleDict({"head": cnn.Linear(5, 3), "norm": cnn.BatchNorm1d(3, affine=False)}))
    batch = np.array([[1, 2], [3, 0], [5, 5]])
    hidden = model[3](model[2](model[1](model[0](batch))))
    model[5]["norm"](model[5]["head"](model[4][1](model[4][0](hidden))))
    return model, Tensor


def test_buffers_and_the_new_layer_types_save_and_load(tmp_path, model_files):
    model, _ = tensor_model()
    path = tmp_path / "model.safetensors"
    save(model, path)
    header = model_files.split(path.read_bytes())[0]
    assert header["3.num_batches_tracked"]["dtype"] == "I64"  # a count stays an integer
    assert header["3.running_var"]["dtype"] == "F32"
    loaded = load(path)
    assert loaded.architecture() == model.architecture() and repr(loaded) == repr(model)
    for key, value in model.state_dict().items():
        assert loaded.state_dict()[key].dtype == value.dtype
        np.testing.assert_array_equal(loaded.state_dict()[key], value, err_msg=key)
    assert int(loaded[5]["norm"].num_batches_tracked) == 1


def test_to_torch_carries_the_buffers(torch):
    model, Tensor = tensor_model()
    model.eval()
    net = to_torch(model)
    assert not net.training and net[3].num_batches_tracked.dtype == torch.int64
    x = np.array([[4, 1], [2, 2]])
    hidden = model[3](model[2](model[1](model[0](x))))
    theirs = net[3](net[2](net[1](net[0](torch.from_numpy(x)))))
    np.testing.assert_allclose(hidden.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_torch_save_and_torch_load_of_a_state_dict_as_the_lectures_write_them(tmp_path):
    """makemore's torch.save(model.state_dict(), path), then
    model.load_state_dict(torch.load(path)), under import chaingrad as torch."""
    import chaingrad as torch

    model, _ = tensor_model()
    path = str(tmp_path / "model.pt")
    torch.save(model.state_dict(), path)
    fresh, _ = tensor_model()
    fresh[2].weight.data.zero_()
    for state in (torch.load(path), torch.load(path, map_location="cpu", weights_only=True),
                  torch.load(path, map_location=torch.device("cpu"))):
        assert fresh.load_state_dict(state).missing_keys == []
        for key, value in model.state_dict().items():
            np.testing.assert_array_equal(fresh.state_dict()[key], value, err_msg=key)
    with pytest.raises(NotImplementedError, match=r"load\(map_location='cuda'\): chaingrad has "
                                                  "only the CPU"):
        torch.load(path, map_location="cuda")
    state = torch.load(path, "cpu")  # map_location is the second argument, as torch's
    assert fresh.load_state_dict(state).missing_keys == []
    with pytest.raises(TypeError, match="load: map_location is a Sequential; to load the weights "
                                        r"into a model, give it as model=: load\(path, model="):
        torch.load(path, fresh)
    with pytest.raises(TypeError, match="load: model must be a chaingrad.nn.Module to fill, got "
                                        "str .*map_location is load's second argument"):
        torch.load(path, model="cpu")


def test_saving_a_model_of_ones_own_class_says_to_save_its_state_dict(tmp_path):
    class Net(Module):
        pass

    with pytest.raises(TypeError, match=r"save: cannot save a Net whole \(.*\); save its "
                                        r"weights: save\(model.state_dict\(\), path\)"):
        save(Net(), tmp_path / "net.safetensors")
    with pytest.raises(TypeError, match="save: 'config': expected an array of real numbers, "
                                        "got dict .*torch.save pickles any object"):
        save({"config": {"lr": 0.1}}, tmp_path / "checkpoint.safetensors")
    assert not os.path.exists(tmp_path / "net.safetensors")


def test_a_file_of_torch_save_loads_in_either_of_its_formats(tmp_path, torch):
    path = tmp_path / "torch.pt"
    theirs = torch.nn.Linear(2, 2).state_dict()
    for zipped in (True, False):  # torch's zip archive, and its legacy format
        torch.save(theirs, path, _use_new_zipfile_serialization=zipped)
        ours = load(path)
        assert list(ours) == list(theirs)
        for key, value in theirs.items():
            np.testing.assert_array_equal(ours[key].numpy(), value.numpy(), err_msg=key)


def test_a_file_whose_header_length_starts_with_a_pickles_byte_loads(tmp_path):
    """A safetensors file starts with its header's length, little-endian: a length of 128
    mod 256 makes its first byte 0x80, a pickle's first byte. Such a file (a GPT's state
    dict, say) was refused as a file of torch.save."""
    path = tmp_path / "state.pt"  # a safetensors file under another name: known by its bytes
    for length in range(1, 300):  # a key long enough to bring the header to 128 mod 256
        cio.save_safetensors({"w" * length: np.arange(3.0)}, path)
        if path.read_bytes()[0] == 0x80:
            break
    assert path.read_bytes()[:1] == b"\x80"
    np.testing.assert_array_equal(load(path)["w" * length], np.arange(3.0))


def test_a_torch_batch_norms_safetensors_loads_with_its_int64_count(tmp_path, torch):
    import chaingrad.nn as cnn

    safetensors_torch = pytest.importorskip("safetensors.torch")
    theirs = torch.nn.BatchNorm1d(3)
    theirs(torch.randn(4, 3))
    path = tmp_path / "bn.safetensors"
    safetensors_torch.save_file(theirs.state_dict(), str(path))
    ours = load(path, model=cnn.BatchNorm1d(3))
    assert int(ours.num_batches_tracked) == 1
    np.testing.assert_array_equal(ours.running_mean.numpy(), theirs.running_mean.numpy())


def test_a_scalar_parameter_keeps_its_shape(tmp_path):
    """A 0-d weight (a Module of scalar Parameters, as PyTorch's polynomial example) comes
    back 0-d: it came back of shape (1,), which its model refused."""
    path = tmp_path / "scalars.safetensors"
    save({"a": np.float64(0.5), "b": np.array(2.0, dtype=np.float32)}, path)
    state = load(path)
    assert state["a"].shape == state["b"].shape == () and state["a"] == 0.5


def test_the_parametrised_activations_save_load_and_go_to_torch(tmp_path, torch):
    from chaingrad import nn

    model = nn.Sequential(nn.Linear(3, 4), nn.GELU(approximate="tanh"), nn.LeakyReLU(0.2),
                          nn.Softplus(beta=2.0, threshold=5.0), nn.Linear(4, 1))
    save(model, tmp_path / "act.safetensors")
    loaded = load(tmp_path / "act.safetensors")
    assert repr(loaded) == repr(model)
    x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    theirs = to_torch(model)(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(theirs, model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_torch_serializations_names_are_there_or_named_as_missing(torch):
    import chaingrad

    for name in torch.serialization.__all__:
        if name in torch_names.SERIALIZATION:
            with pytest.raises(AttributeError, match=f"chaingrad.serialization has no {name!r} "
                                                     "yet"):
                getattr(chaingrad.serialization, name)
        else:
            assert callable(getattr(chaingrad.serialization, name)), name
