"""chaingrad.utils.tensorboard.SummaryWriter: real event files, read back with
TensorBoard's own EventAccumulator, holding the events torch's SummaryWriter writes."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator  # the test extra has it

import chaingrad
from chaingrad import Value
from chaingrad.utils.tensorboard import SummaryWriter

EVERYTHING = {"scalars": 0, "histograms": 0, "tensors": 0}  # keep every event


def events(folder: pathlib.Path) -> dict:
    """Every event under ``folder`` (each run folder of ``add_scalars`` too), by (run,
    kind, tag), without the wall time: [(step, value)]."""
    found = {}
    runs = sorted({path.parent for path in folder.rglob("events.out.tfevents.*")})
    for run in runs:
        accumulator = event_accumulator.EventAccumulator(str(run), size_guidance=EVERYTHING)
        accumulator.Reload()
        tags, name = accumulator.Tags(), str(run.relative_to(folder))
        for tag in tags["scalars"]:
            found[name, "scalar", tag] = [(e.step, e.value) for e in accumulator.Scalars(tag)]
        for tag in tags["histograms"]:
            found[name, "histogram", tag] = [(e.step, str(e.histogram_value))
                                             for e in accumulator.Histograms(tag)]
        for tag in tags["tensors"]:
            found[name, "tensor", tag] = [(e.step, str(e.tensor_proto))
                                          for e in accumulator.Tensors(tag)]
    return found


def log_a_run(writer_class, lib, folder: pathlib.Path) -> None:
    rng = np.random.default_rng(0)
    with writer_class(str(folder)) as writer:
        for step in range(6):
            writer.add_scalar("loss/train", lib.tensor(1.0 / (step + 1)), step)
            writer.add_scalar("lr", 0.1 * step, step, new_style=True)
            writer.add_scalar("lr64", 0.1 * step, step, new_style=True, double_precision=True)
            writer.add_scalars("split", {"train": step, "val": -step / 3}, step)
            writer.add_histogram("weights", lib.tensor(rng.normal(size=200).astype(np.float32)),
                                 step)
            writer.add_histogram("bias", rng.normal(size=40), step, bins=9, max_bins=4)
            writer.add_histogram("grad", rng.uniform(-1, 1, size=30), step, bins="auto")
            writer.add_histogram_raw("raw", min=0.0, max=2.0, num=3, sum=3.0, sum_squares=5.0,
                                     bucket_limits=[1.0, 2.0], bucket_counts=[1, 2],
                                     global_step=step)
            writer.add_text("notes", f"step **{step}**", step)


def test_the_events_are_those_torchs_writer_writes(torch, tmp_path):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    log_a_run(TorchWriter, torch, tmp_path / "torch")
    log_a_run(SummaryWriter, chaingrad, tmp_path / "chaingrad")
    theirs, ours = events(tmp_path / "torch"), events(tmp_path / "chaingrad")
    assert len(ours) == 10  # 8 tags in the run's folder, 1 in each of add_scalars' 2
    assert ours == theirs


def test_scalars_read_back(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step, loss in enumerate([2.5, 1.25, 0.625]):
            writer.add_scalar("loss", loss, global_step=step, walltime=1000.0 + step)
        writer.add_scalar("value", Value(3.0), 3)
        writer.add_scalar("array", np.array([[4.0]]), 4)
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    assert [(e.wall_time, e.step, e.value) for e in accumulator.Scalars("loss")] == [
        (1000.0, 0, 2.5), (1001.0, 1, 1.25), (1002.0, 2, 0.625)]
    assert accumulator.Scalars("value")[0].value == 3.0
    assert accumulator.Scalars("array")[0].value == 4.0


def test_flush_makes_the_events_readable_before_close(tmp_path):
    writer = SummaryWriter(tmp_path, flush_secs=10_000)
    writer.add_scalar("x", 1.0, 0)
    writer.flush()
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    assert [e.value for e in accumulator.Scalars("x")] == [1.0]
    writer.close()
    writer.close()  # twice is fine
    writer.add_scalar("x", 2.0, 1)  # after close: a new file, as torch's
    writer.close()
    assert len(list(tmp_path.glob("events.out.tfevents.*"))) == 2


def test_the_default_folder_is_torchs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as writer:
        folder = pathlib.Path(writer.get_logdir())
    assert folder.parent == pathlib.Path("runs")
    assert folder.name.endswith("_lr0.1") and os.uname().nodename in folder.name
    assert list((tmp_path / folder).glob("events.out.tfevents.*"))


def test_purge_step_marks_the_later_steps_as_replaced(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        for step in range(5):
            writer.add_scalar("loss", float(step), step)
    with SummaryWriter(tmp_path, purge_step=2) as writer:  # restarted from step 2
        for step in range(2, 4):
            writer.add_scalar("loss", 10.0 + step, step)
    accumulator = event_accumulator.EventAccumulator(str(tmp_path), purge_orphaned_data=True)
    accumulator.Reload()
    assert [(e.step, e.value) for e in accumulator.Scalars("loss")] == [
        (0, 0.0), (1, 1.0), (2, 12.0), (3, 13.0)]


@pytest.mark.parametrize("call, error, message", [
    (lambda w: w.add_scalar("x", [1.0, 2.0]), ValueError, r"add_scalar: expected one number, "
                                                          r"got 2 \(shape \(2,\)\)"),
    (lambda w: w.add_scalar("x", "high"), TypeError, "add_scalar: expected numbers"),
    (lambda w: w.add_scalars("x", [1.0]), TypeError, "tag_scalar_dict must be a dict"),
    (lambda w: w.add_histogram("x", []), ValueError, "no values"),
    (lambda w: w.add_histogram("x", [1e30]), ValueError, "no value falls in the bins"),
    (lambda w: w.add_histogram_raw("x", 0, 1, 1, 1, 1, [1.0], [1, 2]), ValueError,
     "as many bucket_limits as bucket_counts"),
    (lambda w: w.add_text("x", 3), TypeError, "text_string must be a str"),
    (lambda w: w.add_image("x", None), AttributeError,
     "chaingrad's SummaryWriter has no 'add_image' yet"),
    (lambda w: w.add_scaler("x", 1.0), AttributeError,
     "'SummaryWriter' object has no attribute 'add_scaler'"),
])
def test_bad_calls_are_named(tmp_path, call, error, message):
    with SummaryWriter(tmp_path) as writer, pytest.raises(error, match=message):
        call(writer)


def test_reached_as_torch_reaches_it():
    assert chaingrad.utils.tensorboard.SummaryWriter is SummaryWriter
    with pytest.raises(AttributeError,
                       match="chaingrad.utils.tensorboard has no 'FileWriter' yet"):
        chaingrad.utils.tensorboard.FileWriter  # noqa: B018


def test_without_tensorboard_the_error_says_what_to_install(run_python):
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "import chaingrad as torch\n"
            "torch.utils.tensorboard.SummaryWriter\n")
    result = run_python(code)
    assert result.returncode == 1
    assert "needs the tensorboard package: pip install 'chaingrad[tensorboard]'" in \
        result.stderr
