"""``chaingrad demo``: a short run writes real PNGs and a loadable model; bad options exit 2;
a diverging learning rate exits 1.

Both datasets: ``moons`` (micrograd's demo, scalar Values, chaingrad/cli/moons.py) and
``digits`` (Tensor MLP/CNN, chaingrad/cli/digits.py), both trained by chaingrad/cli/training.py.
"""

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from chaingrad.cli import main
from chaingrad.serialization import load

pytestmark = pytest.mark.slow  # end-to-end runs of the demos

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")


def png_size(path):
    """(width, height) from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    assert data[-8:-4] == b"IEND"  # the whole image was written
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "nested" / "out"
    return out, main(["demo", "--steps", "3", "--out", str(out)])


def test_short_run_writes_images_and_weights(short_run, capsys):
    out, code = short_run
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["decision_boundary.png", "loss.png",
                                                     "model.safetensors"]
    for name in ("loss.png", "decision_boundary.png"):
        width, height = png_size(out / name)
        assert 400 <= width <= 2000 and 300 <= height <= 2000, (name, width, height)
    image = pytest.importorskip("matplotlib.image").imread(out / "decision_boundary.png")
    assert image.shape[:2] == png_size(out / "decision_boundary.png")[::-1]
    assert image[..., :3].std() > 0.05  # a picture, not a blank canvas
    model = load(out / "model.safetensors")
    assert model.architecture()["nouts"] == [16, 16, 1]


def test_log_lines_and_summary_when_not_a_terminal(tmp_path, capsys):
    assert main(["demo", "moons", "--steps", "2", "--seed", "3", "--optimizer", "adam",
                 "--lr", "0.02", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("step 1/2  loss ")
    assert lines[1].startswith("step 2/2  loss ")
    summary = lines[-1]
    assert summary.startswith("chaingrad demo: 2 steps (adam, lr 0.02 -> 0.002), final loss ")
    assert "accuracy" in summary and str(tmp_path / "model.safetensors") in summary


def test_progress_bar_on_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["demo", "--steps", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "step 2/2 100%" in out
    assert "loss=1.7236, accuracy=81.0%" in out
    assert "step 1/2  loss" not in out  # the bar replaces the log lines


def test_progress_bar_on_a_terminal_that_reports_no_size(tmp_path, capsys, monkeypatch):
    # a pseudo-terminal nobody sized (under `script`, in some CI) says 0 x 0; tqdm then
    # draws nothing unless it is given a size
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "fileno", lambda: 1, raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=None: os.terminal_size((0, 0)))
    assert main(["demo", "--steps", "20", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "step 20/20 100%" in out and "accuracy=94.0%" in out
    # 80 columns, and the bar (between the |s) gets a readable share of them
    frames = [frame for frame in re.split(r"[\r\n]", out) if frame.startswith("step")]
    assert frames and all(len(frame) <= 80 for frame in frames), frames
    assert all(len(frame.split("|")[1]) >= 15 for frame in frames), frames


def test_first_steps_are_micrograds(tmp_path, capsys):
    main(["demo", "--steps", "2", "--out", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    # micrograd's demo prints: step 0 loss 0.8958441028683222, accuracy 50.0%
    #                          step 1 loss 1.7235905336972022, accuracy 81.0%
    assert lines[0] == "step 1/2  loss 0.8958  accuracy  50.0%  lr 1"
    assert lines[1] == "step 2/2  loss 1.7236  accuracy  81.0%  lr 0.55"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "--steps must be at least 1, got 0"),
        (["digits", "--epochs", "0"], "--epochs must be at least 1, got 0"),
        (["digits", "--batch-size", "0"], "--batch-size must be at least 1, got 0"),
        (["digits", "--steps", "5"], "--steps is for the moons demo, not digits"),
        (["--model", "cnn"], "--model is for the digits demo, not moons"),
        (["moons", "--epochs", "2"], "--epochs is for the digits demo, not moons"),
        (["--lr", "-1"], "--lr must be a positive number, got -1.0"),
        (["--lr", "nan"], "--lr must be a positive number"),
        (["--seed", "-1"], "--seed must be in [0, 2**32 - 1], got -1"),
        (["--seed", str(2**32)], f"--seed must be in [0, 2**32 - 1], got {2**32}"),
    ],
)
def test_bad_options_are_usage_errors(argv, message, tmp_path, capsys):
    assert main(["demo", *argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_out_must_be_a_folder(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["demo", "--steps", "1", "--out", str(target)]) == 2
    assert "is not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("dataset", ["moons", "digits"])
def test_an_out_folder_that_cannot_be_made_is_refused_before_training(dataset, tmp_path,
                                                                      capsys):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "sub"
    assert main(["demo", dataset, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no training happened
    assert captured.err == (f"chaingrad demo: error: --out {str(out)!r}: cannot create the "
                            "folder (Not a directory)\n")


def test_the_defaults_reach_full_training_accuracy(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default --out, ./chaingrad-demo
    assert main(["demo"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("step 100/100  loss ") and "accuracy 100.0%" in lines[-2]
    assert lines[-1].startswith("chaingrad demo: 100 steps (sgd, lr 1 -> 0.1), final loss ")
    assert "accuracy 100.0%" in lines[-1]
    assert sorted(os.listdir(tmp_path / "chaingrad-demo")) == [
        "decision_boundary.png", "loss.png", "model.safetensors"]


def test_python_dash_m_chaingrad_demo(tmp_path):
    result = subprocess.run([sys.executable, "-m", "chaingrad", "demo", "--steps", "2",
                             "--out", "tmp"], cwd=tmp_path, capture_output=True, text=True,
                            check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("chaingrad demo: 2 steps (sgd, ")
    assert sorted(os.listdir(tmp_path / "tmp")) == ["decision_boundary.png", "loss.png",
                                                    "model.safetensors"]


def test_a_result_that_cannot_be_written_is_one_line_and_exit_1(tmp_path, capsys):
    (tmp_path / "loss.png").mkdir()  # in the way of the first file written
    assert main(["demo", "--steps", "1", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"chaingrad demo: error: cannot write into {str(tmp_path)!r}: ")
    assert err.count("\n") == 1 and "loss.png" in err


def test_one_step_is_one_step(tmp_path, capsys):
    assert main(["demo", "--steps", "1", "--out", str(tmp_path)]) == 0
    assert "chaingrad demo: 1 step (sgd, lr 1 -> 0.1)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message", "files"),
    [
        # the loss of step 2 overflows a float in the scalar engine (a DomainError)
        (["--steps", "5", "--lr", "1e300"],
         "training diverged at step 2/5 (the loss overflowed); try a smaller --lr "
         "({out}/loss.png plots the 1 step before; no model saved)", ["loss.png"]),
        # trains without an overflow, but the weights do not fit model.safetensors' float32
        (["--steps", "5", "--lr", "1e6"],
         "training diverged after step 5/5 (the weights outgrew float32: largest magnitude",
         ["loss.png"]),
        # Adam's first update overflows the float32 weights (a NonFiniteGradError)
        (["digits", "--epochs", "1", "--lr", "1e300"],
         "training diverged at epoch 1/1, batch 1/45 (a weight update overflowed); try a "
         "smaller --lr (no files written)", []),
        # no overflow: the loss grows to 1e30 and stays there (issue 13, point 4)
        (["--lr", "100"],
         "training diverged at step 6/100 (the loss has been over 100 times its first "
         "value, 0.8958, for 5 steps: now 2.972e+30); try a smaller --lr ({out}/loss.png "
         "plots the 5 steps before; no model saved)", ["loss.png"]),
        (["--lr", "10"],
         "training diverged at step 6/100 (the loss has been over 100 times its first "
         "value, 0.8958, for 5 steps: now 1.972e+07)", ["loss.png"]),
        (["digits", "--lr", "10"],
         "training diverged at epoch 1/30, batch 6/45 (the loss has been over 100 times its "
         "first value, 2.3256, for 5 batches: now ", []),
    ],
)
def test_a_diverging_learning_rate_is_one_line_and_exit_1(argv, message, files, tmp_path,
                                                          capsys):
    out = tmp_path / "out"
    assert main(["demo", *argv, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    command = "chaingrad demo digits" if argv[0] == "digits" else "chaingrad demo"
    assert err.startswith(f"{command}: " + message.format(out=out)), err
    assert err.count("\n") == 1 and "Traceback" not in err
    if files:
        assert sorted(os.listdir(out)) == files
        assert png_size(out / "loss.png")[0] >= 400
    else:  # the folder the run made is gone again
        assert list(tmp_path.iterdir()) == []


def test_a_learning_rate_whose_loss_spikes_and_recovers_is_not_divergence(tmp_path, capsys):
    # at lr 3 the loss rises to 48 times its first value at step 3, then comes back down
    assert main(["demo", "--steps", "12", "--lr", "3", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("chaingrad demo: 12 steps (sgd, lr 3 -> 0.3)")


def test_the_readme_states_the_divergence_criterion_the_code_uses():
    from chaingrad.cli.training import DIVERGENCE_FACTOR, DIVERGENCE_STEPS

    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    assert (f"the loss has been more than {DIVERGENCE_FACTOR:g} times the first step's loss "
            f"for {DIVERGENCE_STEPS} optimizer steps in a row") in readme


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--steps", "abc"], "chaingrad demo: error: argument --steps: invalid int"),
        (["demo", "--optimizer", "rmsprop"], "chaingrad demo: error: argument --optimizer"),
        (["demo", "--bogus"], "chaingrad demo: error: unrecognized arguments: --bogus"),
        (["demo", "--stesp", "5"], "chaingrad demo: error: unrecognized arguments: --stesp "
                                   "(did you mean --steps?)"),
        (["demo", "digits", "--modle", "cnn"], "chaingrad demo: error: unrecognized "
                                               "arguments: --modle cnn (did you mean "
                                               "--model?)"),
        (["demo", "digits-that-do-not-exist"], "chaingrad demo: error: unknown dataset "
                                               "'digits-that-do-not-exist': choose moons or "
                                               "digits"),
    ],
)
def test_command_line_errors_are_one_line_naming_what_is_wrong(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


# ---- digits: Tensor models ----


def digits_run(out, *argv):
    return main(["demo", "digits", *argv, "--out", str(out)])


@pytest.fixture(scope="module")
def short_digits_runs(tmp_path_factory):
    """One epoch of each model (the MLP with SGD and bigger batches), and their output."""
    runs = {}
    for model, extra in (("mlp", ["--optimizer", "sgd", "--batch-size", "64"]), ("cnn", [])):
        out = tmp_path_factory.mktemp(model) / "out"
        runs[model] = out, digits_run(out, "--model", model, "--epochs", "1", *extra)
    return runs


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_short_digits_run_writes_images_and_a_loadable_model(short_digits_runs, model):
    out, code = short_digits_runs[model]
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["loss.png", "model.safetensors",
                                                     "predictions.png"]
    imread = pytest.importorskip("matplotlib.image").imread
    for name in ("loss.png", "predictions.png"):
        width, height = png_size(out / name)
        assert 400 <= width <= 2000 and 300 <= height <= 2000, (name, width, height)
        assert imread(out / name)[..., :3].std() > 0.05  # a picture, not a blank canvas
    loaded = load(out / "model.safetensors")
    kinds = [layer["type"] for layer in loaded.architecture()["layers"]]
    assert kinds == (["Linear", "ReLU", "Dropout", "Linear"] if model == "mlp" else
                     ["Conv2d", "ReLU", "MaxPool2d", "Conv2d", "ReLU", "MaxPool2d", "Flatten",
                      "Linear"])


def test_digits_log_lines_and_summary_when_not_a_terminal(tmp_path, capsys):
    assert digits_run(tmp_path, "--epochs", "2", "--lr", "0.02") == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert re.fullmatch(r"epoch 1/2  loss \d\.\d{4}  train +\d+\.\d%  test +\d+\.\d%  "
                        r"lr 0\.02", lines[0]), lines[0]  # the lr each epoch starts with
    assert lines[1].startswith("epoch 2/2  loss ") and lines[1].endswith("lr 0.01")
    assert lines[2].startswith("chaingrad demo digits: mlp, 2 epochs of 45 batches (adam, "
                               "lr 0.02 -> 0 cosine), test accuracy ")
    assert str(tmp_path / "predictions.png") in lines[2]


def test_digits_progress_bar_on_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert digits_run(tmp_path, "--epochs", "1", "--batch-size", "256") == 0
    out = capsys.readouterr().out
    assert "epoch 1/1 100%" in out
    assert re.search(r"epoch 1/1 100%\|.*loss=\d\.\d{4}, train=\d+\.\d%, test=\d+\.\d%", out)
    assert "epoch 1/1  loss" not in out  # the bar replaces the log lines


@pytest.mark.parametrize(("model", "target"), [("mlp", 0.97), ("cnn", 0.98)])
def test_default_digits_models_reach_their_targets_on_held_out_digits(model, target, tmp_path,
                                                                      capsys):
    from chaingrad.cli.digits import load_data, predict

    assert digits_run(tmp_path, "--model", model) == 0  # the defaults: 30 epochs, seed 1337
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    right, total = map(int, re.search(r"test accuracy [\d.]+% \((\d+)/(\d+)\)",
                                      summary).groups())
    assert total == 360 and right / total >= target, summary
    # the saved model (float32, rebuilt from the file) does as well on the same held-out set
    data = load_data(1337)
    saved = load(tmp_path / "model.safetensors")
    assert (predict(saved, model, data["x_test"]) == data["y_test"]).sum() == right
