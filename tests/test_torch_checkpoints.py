"""chaingrad.torch_checkpoints: torch's checkpoint format, checked against PyTorch 2.13 both
ways (chaingrad writes, torch.load reads with weights_only=True; torch.save writes,
chaingrad.load reads), through chaingrad.save / chaingrad.load."""

from __future__ import annotations

import io
import os
import pickle
import struct
import threading
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import chaingrad
from chaingrad import nn, torch_checkpoints
from chaingrad.errors import ModelFileError
from chaingrad.tensor_engine import dtypes

DTYPES = [d.name for d in dtypes.DTYPES]


def values_of(name: str) -> np.ndarray:
    """A 2x3 array of a dtype, with values that tell its entries apart."""
    if name == "bool":
        return np.array([[True, False, True], [False, False, True]])
    return (np.arange(6).reshape(2, 3) * (3 if name.startswith("int") else 1)).astype(name)


def torch_dtype(torch, name: str):
    return getattr(torch, name)


def nanogpt_checkpoint(tensor, state: dict) -> dict:
    """A checkpoint as nanoGPT's train.py writes it, its optimizer state in AdamW's layout
    (built by hand: chaingrad.optim's state_dict is another helper's)."""
    names = list(state)
    return {
        "model": state,
        "optimizer": {
            "state": {i: {"step": tensor(5.0), "exp_avg": state[k] * 0.5,
                          "exp_avg_sq": state[k] * state[k]} for i, k in enumerate(names)},
            "param_groups": [{"lr": 6e-4, "betas": (0.9, 0.95), "eps": 1e-8,
                              "weight_decay": 0.1, "amsgrad": False, "foreach": None,
                              "maximize": False, "capturable": False, "differentiable": False,
                              "fused": None, "params": list(range(len(names)))}],
        },
        "model_args": {"n_layer": 2, "n_head": 2, "n_embd": 8, "block_size": 16,
                       "bias": False, "vocab_size": 65, "dropout": 0.0},
        "iter_num": 5,
        "best_val_loss": tensor(1.2),
        "config": {"out_dir": "out-shakespeare-char", "eval_interval": 250, "compile": False,
                   "device": "cpu", "dtype": "float32", "betas": [0.9, 0.95], "seed": None},
    }


# ---- chaingrad writes, torch reads ----


@pytest.mark.parametrize("name", DTYPES)
def test_a_tensor_of_each_dtype_loads_in_torch_as_its_own(tmp_path, torch, name):
    path = tmp_path / "t.pt"
    chaingrad.save(chaingrad.from_numpy(values_of(name)), path)
    theirs = torch.load(path)  # weights_only=True, torch's default
    assert theirs.dtype == torch_dtype(torch, name) and tuple(theirs.shape) == (2, 3)
    if name == "bfloat16":  # (torch gives no numpy array of bfloat16: compared as floats)
        theirs, want = theirs.float(), values_of(name).astype(np.float32)
    else:
        want = values_of(name)
    np.testing.assert_array_equal(theirs.numpy(), want)


def test_views_and_shared_storages_load_in_torch_as_views_and_shared(tmp_path, torch):
    w = chaingrad.arange(6.0).reshape(2, 3)
    tied = nn.Parameter(np.ones((2, 2), np.float32))
    path = tmp_path / "views.pt"
    chaingrad.save({"w": w, "again": w, "t": w.t(), "row": w[1], "wte.weight": tied,
                    "lm_head.weight": tied}, path)
    got = torch.load(path)
    assert got["again"] is got["w"] and got["lm_head.weight"] is got["wte.weight"]
    assert isinstance(got["wte.weight"], torch.nn.Parameter)
    assert got["t"].untyped_storage().data_ptr() == got["w"].untyped_storage().data_ptr()
    assert got["row"].storage_offset() == 3 and got["t"].stride() == (1, 3)
    got["w"][1, 0] = 100.0  # one storage: the views see it, as saved views in torch do
    assert got["t"][0, 1].item() == got["row"][0].item() == 100.0
    assert len([n for n in zipfile.ZipFile(path).namelist() if "/data/" in n]) == 2


def test_a_state_dict_of_arrays_loads_into_the_same_torch_model(tmp_path, torch):
    chaingrad.manual_seed(0)
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    ours(chaingrad.randn(5, 3))
    path = str(tmp_path / "model.pt")
    chaingrad.save(ours.state_dict(), path)  # {name: numpy array}: written as tensors
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.Linear(4, 2))
    theirs.load_state_dict(torch.load(path))
    assert theirs[1].num_batches_tracked.dtype == torch.int64
    for key, value in ours.state_dict().items():
        np.testing.assert_array_equal(theirs.state_dict()[key].numpy(), value, err_msg=key)


def test_nanogpts_checkpoint_written_by_chaingrad_loads_in_torch(tmp_path, torch):
    state = {"wte.weight": np.ones((4, 3), np.float32), "ln_f.weight": np.arange(3.0)}
    path = tmp_path / "ckpt.pt"
    chaingrad.save(nanogpt_checkpoint(chaingrad.tensor, state), path)
    got = torch.load(path, map_location="cpu")
    assert got["iter_num"] == 5 and got["model_args"]["vocab_size"] == 65
    assert got["config"]["betas"] == [0.9, 0.95] and got["config"]["seed"] is None
    assert got["best_val_loss"].dtype == torch.float32 and got["best_val_loss"].ndim == 0
    assert got["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.95)
    assert got["optimizer"]["state"][1]["exp_avg_sq"].dtype == torch.float64
    np.testing.assert_array_equal(got["model"]["ln_f.weight"].numpy(), np.arange(3.0))


def test_a_tensor_saved_to_an_open_file_loads_in_torch(tmp_path, torch):
    path = tmp_path / "x.pt"
    with open(path, "wb") as f:
        chaingrad.save(chaingrad.tensor([[1, 2], [3, 4]]), f)
    assert torch.load(path).tolist() == [[1, 2], [3, 4]]
    with open(path, "rb") as f:
        assert chaingrad.load(f).tolist() == [[1, 2], [3, 4]]
    with open(path, "wb") as f:  # and the other way
        torch.save(torch.tensor([0.5, 1.5], dtype=torch.float64), f)
    with open(path, "rb") as f:
        assert chaingrad.load(f).tolist() == [0.5, 1.5]


def test_the_archive_is_laid_out_as_torchs(tmp_path):
    path = tmp_path / "x.pt"
    chaingrad.save({"a": chaingrad.ones(3), "b": chaingrad.zeros(2, dtype=chaingrad.int64)}, path)
    raw = path.read_bytes()
    archive = zipfile.ZipFile(path)
    assert {i.filename for i in archive.infolist()} == {
        "archive/data.pkl", "archive/.format_version", "archive/.storage_alignment",
        "archive/byteorder", "archive/data/0", "archive/data/1", "archive/version",
        "archive/.data/serialization_id"}
    assert archive.read("archive/byteorder") == b"little"
    assert archive.read("archive/data.pkl")[:2] == b"\x80\x02"  # protocol 2
    for info in archive.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        names, extra = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + names + extra) % torch_checkpoints.ALIGNMENT == 0
    assert archive.read("archive/data/0") == np.ones(3, "<f4").tobytes()


def test_torch_maps_the_file_and_finds_each_record_where_its_writer_would(tmp_path, torch,
                                                                         monkeypatch):
    """torch.load(mmap=True) maps the records; with calculate_storage_offsets it computes
    where each storage starts from the sizes before it (as torch's writer lays them out),
    and TORCH_SERIALIZATION_DEBUG checks the computation against the file."""
    from torch.utils.serialization import config

    path = tmp_path / "mapped.pt"
    chaingrad.save({"w": chaingrad.arange(10.0), "b": chaingrad.tensor([True]),
                    "h": chaingrad.ones(3, dtype=chaingrad.float16), "e": chaingrad.zeros(0),
                    "x": chaingrad.ones(1000)}, path)
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")
    with config.patch({"load.calculate_storage_offsets": True}):
        got = torch.load(path, mmap=True)
    assert got["w"].tolist() == list(range(10)) and got["x"].sum().item() == 1000.0
    assert got["h"].dtype == torch.float16 and got["e"].shape == (0,)


# ---- torch writes, chaingrad reads ----


@pytest.mark.parametrize("name", DTYPES)
def test_a_torch_tensor_of_each_dtype_loads_as_chaingrads(tmp_path, torch, name):
    path = tmp_path / "t.pt"
    if name == "bfloat16":  # (torch takes no numpy array of bfloat16: made from floats)
        theirs = torch.from_numpy(values_of(name).astype(np.float32)).to(torch.bfloat16)
    else:
        theirs = torch.from_numpy(values_of(name))
    torch.save(theirs, path)
    ours = chaingrad.load(path)
    assert isinstance(ours, chaingrad.Tensor) and ours.dtype == getattr(chaingrad, name)
    np.testing.assert_array_equal(ours.numpy(), values_of(name))


def test_torchs_views_and_tied_weights_load_sharing_memory(tmp_path, torch):
    w = torch.arange(12.0).reshape(3, 4)
    model = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False))
    model[1].weight = model[0].weight  # weight tying, as a GPT's lm_head and wte
    path = tmp_path / "views.pt"
    torch.save({"w": w, "t": w.t(), "col": w[:, 1], "sd": model.state_dict(),
                "p": torch.nn.Parameter(torch.ones(2))}, path)
    got = chaingrad.load(path)
    np.testing.assert_array_equal(got["t"].numpy(), w.t().numpy())
    np.testing.assert_array_equal(got["col"].numpy(), w[:, 1].numpy())
    assert np.shares_memory(got["w"].numpy(), got["col"].numpy())
    tied = got["sd"]["0.weight"].numpy(), got["sd"]["1.weight"].numpy()
    assert np.shares_memory(*tied)
    assert isinstance(got["sd"], OrderedDict)
    assert isinstance(got["p"], nn.Parameter) and got["p"].requires_grad


def test_nanogpts_checkpoint_written_by_torch_resumes_in_chaingrad(tmp_path, torch):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
    path = tmp_path / "ckpt.pt"
    torch.save(nanogpt_checkpoint(torch.tensor, theirs.state_dict()), path)
    checkpoint = chaingrad.load(path, map_location="cpu")
    ours = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    ours.load_state_dict(checkpoint["model"])
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key], value.numpy(), err_msg=key)
    np.testing.assert_allclose(ours(chaingrad.from_numpy(x)).detach().numpy(),
                               theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert checkpoint["iter_num"] == 5 and checkpoint["best_val_loss"].item() == \
        pytest.approx(1.2)
    assert checkpoint["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.95)
    assert checkpoint["optimizer"]["state"][0]["step"].item() == 5.0


def test_a_round_trip_through_both_keeps_everything(tmp_path, torch):
    """chaingrad -> torch -> chaingrad: the same values, dtypes, sharing and Python data."""
    w = chaingrad.arange(6.0).reshape(2, 3)
    obj = {"w": w, "t": w.t(), "n": [1, 2.5, "x", None, True, (1, 2), b"ab", {1, 2}, 3 + 4j,
                                     2**70], "dt": chaingrad.float16, "s": chaingrad.Size([2, 3]),
           "dev": chaingrad.device("cpu"), "empty": chaingrad.zeros(0, 3),
           "scalar": chaingrad.tensor(7)}
    chaingrad.save(obj, tmp_path / "a.pt")
    torch.save(torch.load(tmp_path / "a.pt"), tmp_path / "b.pt")
    back = chaingrad.load(tmp_path / "b.pt")
    assert back["n"] == obj["n"] and back["dt"] is chaingrad.float16
    assert back["s"] == (2, 3) and isinstance(back["s"], chaingrad.Size)
    assert back["dev"] == chaingrad.device("cpu") and back["empty"].shape == (0, 3)
    assert back["scalar"].dtype == chaingrad.int64 and back["scalar"].item() == 7
    np.testing.assert_array_equal(back["t"].numpy(), w.t().numpy())
    assert np.shares_memory(back["w"].numpy(), back["t"].numpy())


def test_a_whole_model_loads_back_only_with_weights_only_false(tmp_path):
    chaingrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    path = tmp_path / "model.pt"
    chaingrad.save(model, path)
    with pytest.raises(chaingrad.serialization.UnsafeGlobalError, match="chaingrad.nn"):
        chaingrad.load(path)
    loaded = chaingrad.load(path, weights_only=False)
    x = chaingrad.randn(4, 2)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    assert isinstance(loaded[0].weight, nn.Parameter)


# ---- map_location, mmap ----


def with_location(path, location: str) -> None:
    """Rewrite a checkpoint's storages as saved on ``location`` (as on a GPU)."""
    with zipfile.ZipFile(path) as archive:
        records = {name: archive.read(name) for name in archive.namelist()}
    records["archive/data.pkl"] = records["archive/data.pkl"].replace(
        b"X\x03\x00\x00\x00cpu", b"X" + struct.pack("<I", len(location)) + location.encode())
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in records.items():
            archive.writestr(name, data)


def test_map_location_takes_what_torch_takes_on_a_cpu_build(tmp_path):
    path = tmp_path / "gpu.pt"
    chaingrad.save({"w": chaingrad.ones(2)}, path)
    with_location(path, "cuda:0")
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device "
                                           r"but torch.cuda.is_available\(\) is False"):
        chaingrad.load(path)
    for where in ("cpu", chaingrad.device("cpu"), {"cuda:0": "cpu"},
                  lambda storage, location: storage):
        assert chaingrad.load(path, map_location=where)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Attempting to deserialize"):  # None: left where it is
        chaingrad.load(path, map_location=lambda storage, location: None)
    with pytest.raises(RuntimeError, match="chaingrad has only the CPU.*Attempting to "
                                           "deserialize object on a CUDA device"):
        chaingrad.load(path, map_location="cuda")


def test_mmap_maps_a_path_and_refuses_a_file_object(tmp_path):
    path = tmp_path / "m.pt"
    chaingrad.save({"w": chaingrad.arange(5.0), "v": chaingrad.ones(2, dtype=chaingrad.int32)},
                   path)
    got = chaingrad.load(path, mmap=True)
    assert got["w"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and got["v"].tolist() == [1, 1]
    got["w"][0] = 9.0  # copy on write: the file keeps its bytes
    assert chaingrad.load(path)["w"].tolist()[0] == 0.0
    chaingrad.save(got, tmp_path / "again.pt")  # each storage saved alone, not the whole file
    sizes = {i.filename: i.file_size for i in zipfile.ZipFile(tmp_path / "again.pt").infolist()}
    assert (sizes["archive/data/0"], sizes["archive/data/1"]) == (20, 8)
    with open(path, "rb") as f, pytest.raises(ValueError, match="must be a file path"):
        chaingrad.load(f, mmap=True)


# ---- files that are not right ----


def test_a_truncated_or_corrupt_file_names_itself_and_what_is_wrong(tmp_path):
    path = tmp_path / "c.pt"
    chaingrad.save({"w": chaingrad.ones(100)}, path)
    whole = path.read_bytes()
    path.write_bytes(whole[:len(whole) // 2])
    with pytest.raises(ModelFileError, match=r"load: '.*c\.pt' is not a zip archive of "
                                             "torch.save, or is truncated"):
        chaingrad.load(path)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", zipfile.ZipFile(io.BytesIO(whole)).read(
            "archive/data.pkl"))
    with pytest.raises(ModelFileError, match="c.pt' is truncated or corrupt: it has no record "
                                             "archive/data/0"):
        chaingrad.load(path)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00(X\x01")
    with pytest.raises(ModelFileError, match="c.pt' is corrupt: its data.pkl does not "
                                             "unpickle"):
        chaingrad.load(path)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("other/thing.txt", b"hello")
    with pytest.raises(ModelFileError, match="without other/data.pkl: not a file of torch.save"):
        chaingrad.load(path)


def test_a_storage_shorter_than_its_tensors_is_refused(tmp_path):
    path = tmp_path / "short.pt"
    chaingrad.save({"w": chaingrad.ones(4)}, path)
    with zipfile.ZipFile(path) as archive:
        records = {name: archive.read(name) for name in archive.namelist()}
    records["archive/data/0"] = records["archive/data/0"][:8]
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in records.items():
            archive.writestr(name, data)
    with pytest.raises(ModelFileError, match="archive/data/0 holds 8 bytes, its tensors need 16"):
        chaingrad.load(path)


def test_a_view_reaching_past_its_storage_is_refused(tmp_path):
    storage = torch_checkpoints.Storage(np.zeros(4, np.float32))
    with pytest.raises(ModelFileError, match=r"size \(2, 3\), stride \(3, 1\) at offset 0 "
                                             "reaches past its storage of 4 elements"):
        torch_checkpoints.rebuild_tensor_v2(storage, 0, (2, 3), (3, 1))
    with pytest.raises(ModelFileError, match="expected non-negative integers"):
        torch_checkpoints.rebuild_tensor_v2(storage, 0, (2,), (-1,))


def test_a_failed_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "keep.pt"
    chaingrad.save({"w": chaingrad.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="cannot pickle '_thread.lock' object"):
        chaingrad.save({"lock": threading.Lock()}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["keep.pt"]


def test_savings_arguments_are_torchs(tmp_path):
    with pytest.raises(NotImplementedError, match="protocol 2, torch's default"):
        chaingrad.save({}, tmp_path / "a.pt", pickle_protocol=4)
    with pytest.raises(NotImplementedError, match="torch's zip format only"):
        chaingrad.save({}, tmp_path / "a.pt", _use_new_zipfile_serialization=False)
    chaingrad.save({}, tmp_path / "a.pt", _disable_byteorder_record=True)
    assert "archive/byteorder" not in zipfile.ZipFile(tmp_path / "a.pt").namelist()
    assert chaingrad.load(tmp_path / "a.pt") == {}


def test_loading_needs_no_torch(tmp_path, torch, run_python):
    path = tmp_path / "theirs.pt"
    torch.save({"w": torch.arange(3.0), "step": 2}, path)
    code = ("import sys\n"
            "sys.modules['torch'] = None  # as if it were not installed\n"
            "import chaingrad\n"
            "got = chaingrad.load(sys.argv[1])\n"
            "print(got['w'].tolist(), got['step'], 'torch' in sys.modules and "
            "sys.modules['torch'] is not None)\n")
    result = run_python(code, str(path))
    assert result.stdout.strip() == "[0.0, 1.0, 2.0] 2 False", result.stderr


def test_the_allow_list_is_torchs(torch):
    """Every name torch 2.13's weights_only loader allows is loaded or refused by name, and
    no other name is allowed."""
    from torch._weights_only_unpickler import _get_allowed_globals

    ours = set(torch_checkpoints.TORCH_GLOBALS) | set(torch_checkpoints.LACKING)
    assert ours == set(_get_allowed_globals())
    assert not set(torch_checkpoints.TORCH_GLOBALS) & set(torch_checkpoints.LACKING)


def test_a_dtype_chaingrad_lacks_is_refused_by_name(tmp_path, torch):
    path = tmp_path / "c.pt"
    torch.save(torch.zeros(2, dtype=torch.complex64), path)
    with pytest.raises(NotImplementedError, match="torch.ComplexFloatStorage, a ComplexFloat "
                                                  "storage, which chaingrad does not have yet"):
        chaingrad.load(path)


class ClaimsStorage(pickle.Pickler):
    """Pickles the string "S" as a persistent id naming a storage of 10**12 floats."""

    def persistent_id(self, obj):
        if obj == "S":
            return ("storage", torch_checkpoints.FloatStorage, "0", "cpu", 10**12)
        return None


def test_a_storage_larger_than_its_file_is_refused_before_it_is_allocated(tmp_path):
    pickled = io.BytesIO()
    ClaimsStorage(pickled, protocol=2).dump(["S"])
    path = tmp_path / "huge.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickled.getvalue())
        archive.writestr("archive/data/0", b"\x00" * 16)
    with pytest.raises(ModelFileError, match="archive/data/0 holds 16 bytes, its tensors need "
                                             "4000000000000"):
        chaingrad.load(path, weights_only=False)  # (the stand-in's name is not torch's)
