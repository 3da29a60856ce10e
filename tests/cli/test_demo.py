"""``chaingrad demo``: a run writes real PNGs and a loadable model and says what it trained;
bad options exit 2; a diverging learning rate exits 1.

Both datasets: ``moons`` (micrograd's demo, scalar Values, chaingrad/cli/moons.py) and
``digits`` (Tensor MLP/CNN, chaingrad/cli/digits.py), both trained by chaingrad/cli/training.py.
"""

import contextlib
import functools
import inspect
import io
import math
import os
import re
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from chaingrad import cli
from chaingrad.cli import main, moons
from chaingrad.cli.moons import Moons
from chaingrad.serialization import load

pytestmark = pytest.mark.slow  # end-to-end runs of the demos

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")


@pytest.fixture(scope="module", autouse=True)
def default_run(request, tmp_path_factory):
    """``python -m chaingrad demo`` with the defaults, in a folder of its own; calling
    ``default_run()`` waits for it and gives ``(folder, completed process)``. It starts with
    this module's first test and trains on the other core while the module's tests run;
    the tests at the end of the module read it (if none of them is selected, it does not
    start)."""
    if not any(getattr(item, "module", None) is request.module  # notebooks have none
               and "default_run" in inspect.signature(item.function).parameters
               for item in request.session.items):
        yield None
        return
    cwd = tmp_path_factory.mktemp("default")
    process = subprocess.Popen([sys.executable, "-m", "chaingrad", "demo"], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finished() -> tuple[Path, subprocess.CompletedProcess]:
        out, err = process.communicate(timeout=600)
        return cwd, subprocess.CompletedProcess(process.args, process.returncode, out, err)

    yield functools.cache(finished)
    if process.poll() is None:  # no test read it (-k): stop it
        process.kill()
        process.communicate()


def png_size(path):
    """(width, height) from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    assert data[-8:-4] == b"IEND"  # the whole image was written
    return struct.unpack(">II", data[16:24])


TIMES = r"\d+\.\d s to train, \d+\.\d s in all"  # one run's: a pattern


def summary(out: str) -> list[str]:
    """The lines a finished demo prints after its log: from ``chaingrad demo...:`` on."""
    lines = out.strip().splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("chaingrad demo")):]


def test_log_lines_and_summary_when_not_a_terminal(tmp_path, capsys):
    assert main(["demo", "moons", "--steps", "2", "--seed", "3", "--optimizer", "adam",
                 "--lr", "0.02", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert lines[0].startswith("step 1/2  loss ") and lines[0].endswith("lr 0.02")
    assert lines[1].startswith("step 2/2  loss ") and lines[1].endswith("lr 0.011")
    # the first and last steps' learning rates, then where the schedule heads
    assert summary(out)[0] == ("chaingrad demo: MLP(2, [16, 16, 1]), 2 steps (adam, "
                               "lr 0.02 -> 0.011, linear)")
    trained = re.fullmatch(r"trained model: loss (\d\.\d{4}), accuracy (\d+\.\d)%; "
                           r"\d+\.\d s to train, \d+\.\d s in all", summary(out)[1])
    assert trained, summary(out)[1]
    assert summary(out)[2:] == [f"wrote {tmp_path / name}" for name in (
        "loss.png", "decision_boundary.png", "model.safetensors")]
    assert all(len(line) <= 100 for line in lines), lines
    # "trained model" is the model after the last update, the one the file holds (float32)
    task = Moons(3)
    task.model = load(tmp_path / "model.safetensors")
    loss, right, total = task.loss(None)
    assert float(trained[1]) == pytest.approx(loss.data, abs=1e-4)
    assert float(trained[2]) == pytest.approx(100 * right / total, abs=0.05)
    assert trained[1] != lines[1].split()[3]  # not the last step's loss, before its update


def test_to_train_times_the_training_loop_only(tmp_path, capsys, monkeypatch):
    """On a clock that only the training loop (5 s) and making the data and model before it
    (1100 s: imports count there) move."""
    clock = [0.0]
    fake_time = SimpleNamespace(perf_counter=lambda: clock[0])
    monkeypatch.setattr(cli, "time", fake_time)  # main starts the run's clock
    monkeypatch.setattr(moons, "time", fake_time)
    build = moons.Moons.__init__
    train = moons.train

    def slow_build(self, seed):
        build(self, seed)
        clock[0] += 1100.0

    def timed_train(*args):
        train(*args)
        clock[0] += 5.0

    monkeypatch.setattr(moons.Moons, "__init__", slow_build)
    monkeypatch.setattr(moons, "train", timed_train)
    assert main(["demo", "--steps", "1", "--out", str(tmp_path)]) == 0
    lines = summary(capsys.readouterr().out)
    assert lines[0] == "chaingrad demo: MLP(2, [16, 16, 1]), 1 step (sgd, lr 1, linear)"
    assert lines[1].endswith("; 5.0 s to train, 1105.0 s in all"), lines[1]


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
    assert main(["demo", "--steps", "10", "--out", str(tmp_path)]) == 0  # as wide as 99
    out = capsys.readouterr().out
    assert "step 10/10 100%" in out and "accuracy=90.0%" in out
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


def test_a_result_that_cannot_be_written_is_one_line_and_exit_1(tmp_path, capsys):
    (tmp_path / "loss.png").mkdir()  # in the way of the first file written
    assert main(["demo", "--steps", "1", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"chaingrad demo: error: cannot write into {str(tmp_path)!r}: ")
    assert err.count("\n") == 1 and "loss.png" in err


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
         "first value, 2.3327, for 5 batches: now ", []),
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
    assert summary(capsys.readouterr().out)[0].startswith(
        "chaingrad demo: MLP(2, [16, 16, 1]), 12 steps (sgd, lr 3 -> ")


def test_the_readme_states_the_divergence_criterion_the_code_uses():
    from chaingrad.cli.training import DIVERGENCE_FACTOR, DIVERGENCE_STEPS

    readme = " ".join((Path(__file__).parents[2] / "docs" / "training.md").read_text().split())
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
        (["demo", "digits-that-do-not-exist"], "chaingrad demo: error: unknown demo "
                                               "'digits-that-do-not-exist'; choose from: "
                                               "moons, digits"),
    ],
)
def test_command_line_errors_are_one_line_naming_what_is_wrong(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


# ---- digits: Tensor models ----


class Terminal(io.StringIO):
    """A standard output that says it is a terminal: the demos draw their progress bar."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def default_digits_runs(tmp_path_factory):
    """``chaingrad demo digits`` with the defaults (30 epochs, seed 1337), each model in a
    folder of its own, into the default --out: ``model -> (folder, exit code, output)``.
    The MLP logs lines; the CNN runs as on a terminal, with a progress bar."""
    runs = {}
    for model in ("mlp", "cnn"):
        cwd = tmp_path_factory.mktemp(model)
        printed = io.StringIO() if model == "mlp" else Terminal()
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
            patch.chdir(cwd)
            code = main(["demo", "digits"] + (["--model", "cnn"] if model == "cnn" else []))
        runs[model] = cwd / "chaingrad-demo" / f"digits-{model}", code, printed.getvalue()
    return runs


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_digits_runs_write_images_and_a_loadable_model(default_digits_runs, model):
    out, code, _ = default_digits_runs[model]
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


@pytest.mark.parametrize(("model", "target"), [("mlp", 0.97), ("cnn", 0.98)])
def test_default_digits_models_reach_their_targets_on_held_out_digits(default_digits_runs,
                                                                      model, target):
    from chaingrad.cli.digits import load_data, predict

    out, code, printed = default_digits_runs[model]
    assert code == 0
    trained = summary(printed)[1]
    right, total = map(int, re.fullmatch(r"trained model: test accuracy [\d.]+% \((\d+)/(\d+)"
                                         r"\), train [\d.]+%; " + TIMES, trained).groups())
    assert total == 360 and right / total >= target, trained
    # the trained model is the saved one (float32, rebuilt from the file): as good on the
    # same held-out set
    data = load_data(1337)
    saved = load(out / "model.safetensors")
    assert (predict(saved, model, data["x_test"]) == data["y_test"]).sum() == right
    assert all(len(line) <= 100 for line in summary(printed)), printed


# A trained model's accuracies depend on the order in which its sums were added, which is
# the BLAS kernel's for this CPU (OpenBLAS's SkylakeX kernels: the MLP 355/360, its Haswell
# ones: 354/360): docs/training.md shows one machine's figures; a run is checked to be
# near them.
ACCURACIES = r"test accuracy [\d.]+% \((\d+)/(\d+)\), train ([\d.]+)%"
NEAR = 4  # test digits (of 360) either side of the README's count: about a point


def without_accuracies(line: str) -> tuple[str, tuple[int, int, float] | None]:
    """A summary line with its times and accuracies taken out, and the accuracies:
    ``(right, total, train %)``, or None on a line that has none."""
    found = re.search(ACCURACIES, line)
    figures = (int(found[1]), int(found[2]), float(found[3])) if found else None
    return re.sub(ACCURACIES, "(accuracies)", re.sub(TIMES, "(times)", line)), figures


def test_the_readme_shows_what_the_digits_demo_prints(default_digits_runs):
    """The training page's block is the demo's summary, line for line: the same text (the
    models, epochs, batches and learning-rate schedule), the same files, and accuracies within
    NEAR test digits of the page's (train accuracy within a point)."""
    readme = (Path(__file__).parents[2] / "docs" / "training.md").read_text(encoding="utf-8")
    after = readme.split("A Tensor model trains for real: `chaingrad demo digits`", 1)[1]
    shown = re.search(r"^```\n(.*?)^```$", after, re.M | re.S)[1].splitlines()
    printed = [line for model in ("mlp", "cnn")
               for line in summary(default_digits_runs[model][2])]
    assert len(shown) == len(printed), (shown, printed)
    for readme_line, line in zip(shown, printed):
        (readme_text, readme_figures), (text, figures) = map(without_accuracies,
                                                             (readme_line, line))
        assert readme_text == text
        if readme_figures or figures:
            (readme_right, readme_total, readme_train), (right, total, train) = (
                readme_figures, figures)
            assert total == readme_total and abs(right - readme_right) <= NEAR, (readme_line,
                                                                                 line)
            assert abs(train - readme_train) <= 1.0, (readme_line, line)


def digits_run(out, *argv):
    return main(["demo", "digits", *argv, "--out", str(out)])


def test_digits_log_lines_and_summary_when_not_a_terminal(tmp_path, capsys):
    assert digits_run(tmp_path, "--epochs", "2", "--lr", "0.02", "--optimizer", "sgd",
                      "--batch-size", "64") == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert re.fullmatch(r"epoch 1/2  loss \d\.\d{4}  train +\d+\.\d%  test +\d+\.\d%  "
                        r"lr 0\.02", lines[0]), lines[0]  # the lr each epoch starts with
    assert lines[1].startswith("epoch 2/2  loss ") and lines[1].endswith("lr 0.01")
    last = 0.02 * (1 + math.cos(math.pi * 45 / 46)) / 2  # the lr of step 46 of 46
    assert summary(out)[0] == ("chaingrad demo digits: mlp, 2 epochs of 23 batches (sgd, "
                               f"lr 0.02 -> {last:.4g}, cosine)")
    assert re.fullmatch(r"trained model: test accuracy \d+\.\d% \(\d+/360\), train "
                        r"\d+\.\d%; " + TIMES, summary(out)[1]), summary(out)[1]
    assert summary(out)[2:] == [f"wrote {tmp_path / name}" for name in (
        "loss.png", "predictions.png", "model.safetensors")]


def test_digits_progress_bar_on_a_terminal(default_digits_runs):
    out = default_digits_runs["cnn"][2]
    assert "epoch 30/30 100%" in out
    assert re.search(r"epoch 30/30 100%\|.*loss=\d\.\d{4}, train=\d+\.\d%, test=\d+\.\d%", out)
    assert not re.search(r"^epoch +\d+/30  loss", out, re.M)  # the bar replaces the log lines


# ---- the defaults, run once by the default_run fixture (above) ----


def test_a_run_writes_images_and_weights(default_run):
    out = default_run()[0] / "chaingrad-demo"
    for name in ("loss.png", "decision_boundary.png"):
        width, height = png_size(out / name)
        assert 400 <= width <= 2000 and 300 <= height <= 2000, (name, width, height)
    image = pytest.importorskip("matplotlib.image").imread(out / "decision_boundary.png")
    assert image.shape[:2] == png_size(out / "decision_boundary.png")[::-1]
    assert image[..., :3].std() > 0.05  # a picture, not a blank canvas
    model = load(out / "model.safetensors")
    assert model.architecture()["nouts"] == [16, 16, 1]


def test_python_dash_m_chaingrad_demo_with_the_defaults_reaches_full_accuracy(default_run):
    cwd, result = default_run()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    last_step = next(line for line in lines if line.startswith("step 100/100  loss "))
    assert last_step.endswith("accuracy 100.0%  lr 0.109")  # micrograd's lr at its last step
    assert summary(result.stdout)[0] == ("chaingrad demo: MLP(2, [16, 16, 1]), 100 steps "
                                         "(sgd, lr 1 -> 0.109, linear)")
    assert re.fullmatch(r"trained model: loss \d\.\d{4}, accuracy 100\.0%; " + TIMES,
                        summary(result.stdout)[1])
    assert sorted(os.listdir(cwd / "chaingrad-demo")) == [
        "decision_boundary.png", "loss.png", "model.safetensors"]
    assert all(len(line) <= 100 for line in lines), lines


def test_the_readme_shows_what_the_demo_prints(default_run):
    readme = (Path(__file__).parents[2] / "docs" / "training.md").read_text(encoding="utf-8")
    after = readme.split("## Train something: `chaingrad demo`", 1)[1]
    shown = re.search(r"^```\n(.*?)^```$", after, re.M | re.S)[1].splitlines()

    def untimed(lines):  # the times are one run's
        return [re.sub(TIMES, "(times)", line) for line in lines]

    printed = untimed(default_run()[1].stdout.splitlines())
    in_order = iter(printed)
    for line in untimed(shown):  # the log lines it leaves out are "..."
        assert line == "..." or line in in_order, (
            f"docs/training.md's demo block shows {line!r}, which chaingrad demo does not print")
    assert untimed(shown)[-5:] == printed[-5:]  # the whole summary
