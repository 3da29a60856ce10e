"""``chaingrad``'s ``main`` as a user's shell meets it: real processes, real signals, pipes
closed early, a full disk, bytes that are not UTF-8, typing mistakes. At most one line on
stderr, never a traceback, and the exit codes other Unix tools use."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

import chaingrad as chaingrad_package
from chaingrad.cli import build_parser, main, moons

pytestmark = pytest.mark.slow  # the command line in subprocesses, with signals and pipes

NEURON = ["(x1*w1 + x2*w2 + b).tanh()", "--set", "x1=2", "--set", "w1=-3", "--set", "x2=0",
          "--set", "w2=1", "--set", "b=6.8813735870195432"]
# --explain prints about 120 kB for this: more than a pipe holds
LONG_EXPLAIN = [" + ".join(f"x*{i}" for i in range(1, 301)), "--set", "x=1", "--explain"]
WAIT = 120  # seconds: only a bound on a hung child, never a measurement


def chaingrad(*args: str | bytes) -> list[str | bytes]:
    return [sys.executable, "-m", "chaingrad", *args]


def start(*args: str | bytes, **kwargs) -> subprocess.Popen:
    """``python -m chaingrad ARGS`` with Ctrl-C's default action, whatever ours is (a CI
    runner may start the tests with SIGINT ignored, which a child would inherit)."""
    return subprocess.Popen(chaingrad(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **kwargs)


def interrupt(process: subprocess.Popen) -> tuple[bytes, bytes]:
    process.send_signal(signal.SIGINT)
    return process.communicate(timeout=WAIT)


# ---- Ctrl-C ----


def interrupted(err: bytes, out: Path, unit: str) -> None:
    """Ctrl-C's one line: the loss plot of the rounds done, and no model."""
    assert re.fullmatch(rf"chaingrad demo(?: digits)?: interrupted \({re.escape(str(out))}"
                        rf"/loss\.png plots the \d+ {unit}s? before; no model saved\)\n",
                        err.decode()), err


@pytest.mark.parametrize("argv", [["demo", "--steps", "100000"],
                                  ["demo", "digits", "--epochs", "1000"]],
                         ids=["moons", "digits"])
def test_ctrl_c_during_training_is_one_line_exit_130_and_keeps_the_loss_plot(argv, tmp_path):
    out = tmp_path / "out"
    process = start(*argv, "--out", str(out))
    first = process.stdout.readline()  # training has started: it logged its first round
    assert first.startswith((b"step ", b"epoch ")), first + process.stderr.read()
    assert out.is_dir()
    _, err = interrupt(process)
    assert process.returncode == 130
    interrupted(err, out, first.split()[0].decode())
    assert sorted(os.listdir(out)) == ["loss.png"]  # as a divergence leaves it
    assert out.joinpath("loss.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_ctrl_c_keeps_an_output_folder_that_was_there(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    process = start("demo", "--steps", "100000", "--out", str(tmp_path))
    assert process.stdout.readline().startswith(b"step ")
    _, err = interrupt(process)
    assert process.returncode == 130
    interrupted(err, tmp_path, "step")
    assert sorted(os.listdir(tmp_path)) == ["loss.png", "notes.txt"]


def test_ctrl_c_before_training_leaves_no_folder(tmp_path, monkeypatch, capsys):
    def interrupt_loading(self, seed):
        raise KeyboardInterrupt

    monkeypatch.setattr(moons.Moons, "__init__", interrupt_loading)
    out = tmp_path / "out"
    assert main(["demo", "--out", str(out)]) == 130
    assert capsys.readouterr().err == "chaingrad demo: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_a_slow_graph_layout_is_one_line_exit_130(tmp_path):
    # a Graphviz `dot` that says it started, then never finishes
    started = tmp_path / "started"
    fake = tmp_path / "bin" / "dot"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho $$ > {started}.tmp\nmv {started}.tmp {started}\n"
                    "exec sleep 600\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    output = tmp_path / "g.svg"
    process = start("graph", *NEURON, "-o", str(output), env=env)
    deadline = time.monotonic() + WAIT
    while not started.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the fake dot never started"
        time.sleep(0.05)
    out, err = interrupt(process)
    assert (process.returncode, out, err) == (130, b"", b"chaingrad graph: interrupted\n")
    assert not output.exists()
    layout = int(started.read_text())
    while not gone(layout):  # the layout was stopped too
        assert time.monotonic() < deadline, f"the fake dot (pid {layout}) still runs"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie that nobody reaped yet counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return False


# ---- a standard output that goes away or fills up ----


def run_into_closed_pipe(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run with a standard output whose reader has already gone: every write fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(chaingrad(*args), stdout=write, stderr=subprocess.PIPE,
                              cwd=cwd, timeout=WAIT, check=False)
    finally:
        os.close(write)


def test_a_closed_pipe_ends_graph_quietly_with_141():
    result = run_into_closed_pipe("graph", *NEURON, "--explain")
    assert (result.returncode, result.stderr) == (141, b"")


def test_a_closed_pipe_ends_the_demo_quietly_and_removes_its_folder(tmp_path):
    result = run_into_closed_pipe("demo", "--steps", "3", "--out", "out", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (141, b"")
    assert list(tmp_path.iterdir()) == []


def test_graph_explain_into_head_prints_the_first_line_and_no_error():
    producer = subprocess.Popen(chaingrad("graph", *LONG_EXPLAIN), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    head = subprocess.run(["head", "-n", "1"], stdin=producer.stdout, capture_output=True,
                          timeout=WAIT, check=True)
    producer.stdout.close()
    err = producer.stderr.read()
    producer.wait(timeout=WAIT)
    assert head.stdout.startswith(b"Backward of add299, step by step: ")
    assert (producer.returncode, err) == (141, b"")


@pytest.mark.parametrize(("argv", "command"),
                         [(["graph", *NEURON], "graph"), (["--help"], ""),
                          (["demo", "--steps", "2", "--out", "out"], "demo")])
def test_a_full_standard_output_is_one_line_and_exit_1(argv, command, tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "wb") as full:
        result = subprocess.run(chaingrad(*argv), stdout=full, stderr=subprocess.PIPE,
                                cwd=tmp_path, timeout=WAIT, check=False)
    prog = f"chaingrad {command}".strip()
    assert result.returncode == 1
    assert result.stderr.decode() == (f"{prog}: error: cannot write to standard output: No "
                                      "space left on device\n")
    assert list(tmp_path.iterdir()) == []  # the demo's folder went with its run


# ---- arguments ----


def test_an_argument_that_is_not_utf8_is_one_line_and_exit_2():
    result = subprocess.run(chaingrad("graph", b"x\xff", "--set", "x=1"), capture_output=True,
                            timeout=WAIT, check=False)
    assert (result.returncode, result.stderr) == (
        2, b"chaingrad graph: error: argument 2 is not UTF-8 text: byte ff after 'x'\n")


def test_a_3600_digit_literal_is_one_short_line_and_exit_2():
    digits = "1" * 3600
    for argv in (["x*" + digits, "--set", "x=1"], ["x", "--set", "x=" + digits],
                 ["x**" + digits, "--set", "x=1"], ["x*" + "1" * 5000, "--set", "x=1"]):
        result = subprocess.run(chaingrad("graph", *argv), capture_output=True, text=True,
                                timeout=WAIT, check=False)
        assert result.returncode == 2 and result.stdout == "", result.stderr
        assert result.stderr.startswith("chaingrad graph: error: ")
        assert result.stderr.count("\n") == 1 and len(result.stderr) < 250, result.stderr


def test_main_takes_its_arguments_and_returns_the_exit_code(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("chaingrad ")
    assert main([]) == 2  # no command: the help, and a usage error's code
    assert "COMMAND" in capsys.readouterr().out
    assert main(["graph", "x", "--set", "x=1", "--bogus"]) == 2
    assert capsys.readouterr().err == "chaingrad graph: error: unrecognized arguments: --bogus\n"
    assert main(["graph", "x", "--set", "x=1", "--rankdri", "TB"]) == 2
    assert capsys.readouterr().err == ("chaingrad graph: error: unrecognized arguments: "
                                       "--rankdri TB (did you mean --rankdir?)\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dmeo"], "chaingrad: error: unknown command 'dmeo' (did you mean 'demo'?); choose "
                   "from: demo, graph, help"),
        (["GRAPH", "x"], "chaingrad: error: unknown command 'GRAPH' (did you mean 'graph'?); "
                         "choose from: demo, graph, help"),
        (["train"], "chaingrad: error: unknown command 'train'; choose from: demo, graph, help"),
        (["demo", "--optimizer", "adma"], "chaingrad demo: error: argument --optimizer: "
                                          "unknown choice 'adma' (did you mean 'adam'?); "
                                          "choose from: adam, sgd (see chaingrad demo --help)"),
        (["demo", "--optimizer", "rmsprop"], "chaingrad demo: error: argument --optimizer: "
                                             "unknown choice 'rmsprop'; choose from: adam, sgd "
                                             "(see chaingrad demo --help)"),
        (["demo", "--model", "rnn"], "chaingrad demo: error: argument --model: unknown choice "
                                     "'rnn'; choose from: mlp, cnn (see chaingrad demo --help)"),
        (["graph", "x", "--rankdir", "up"], "chaingrad graph: error: argument --rankdir: "
                                            "unknown choice 'up'; choose from: auto, LR, RL, "
                                            "TB, BT (see chaingrad graph --help)"),
        (["demo", "digts"], "chaingrad demo: error: unknown demo 'digts' (did you mean "
                            "'digits'?); choose from: moons, digits"),
        # mnist and moons: a ratio of 0.6, which difflib's default cutoff takes as close
        (["demo", "mnist"], "chaingrad demo: error: unknown demo 'mnist'; choose from: moons, "
                            "digits"),
        (["graph", "x", "--set", "x=1", "-o", "g.svgz"],
         "chaingrad graph: error: -o g.svgz: unknown file type '.svgz' (did you mean '.svg'?); "
         "choose from: .svg, .png, .dot, .gv, .html, .htm"),
        (["help", "dmeo"], "chaingrad help: error: unknown command 'dmeo' (did you mean "
                           "'demo'?); choose from: demo, graph, help"),
        (["help", "train"], "chaingrad help: error: unknown command 'train'; choose from: "
                            "demo, graph, help"),
        (["help", "graph", "demo"], "chaingrad help: error: unrecognized arguments: demo"),
    ],
)
def test_an_unknown_name_lists_the_choices_and_suggests_only_a_near_one(argv, message,
                                                                        capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err == message + "\n"


@pytest.mark.parametrize("command", [[], ["demo"], ["graph"], ["help"], ["GRAPH"]])
def test_help_command_prints_what_dash_dash_help_prints(command, capsys):
    """``chaingrad help [COMMAND]``, as git and pip have it: exit 0, ``--help``'s text."""
    assert main(["help", *command]) == 0
    shown = capsys.readouterr()
    assert main([*(c.lower() for c in command), "--help"]) == 0
    assert shown.err == "" and shown.out == capsys.readouterr().out
    assert shown.out.startswith(f"usage: chaingrad {' '.join(command).lower()}".rstrip() + " ")
    if not command:
        assert "help" in shown.out and "-V, --version" in shown.out


def test_help_of_a_command_needing_a_missing_extra_says_which_to_install():
    result = run_python(
        "import sys\n"
        "sys.modules['numpy'] = None  # as if numpy were not installed\n"
        "from chaingrad.cli import main\n"
        "sys.exit(main(['help', 'demo']))\n")
    assert result.returncode == 1
    assert result.stderr == ("chaingrad help: error: numpy is missing; install the demo extra: "
                             "pip install 'chaingrad[demo]'\n")


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flag_prints_the_installed_version(flag):
    result = subprocess.run(chaingrad(flag), capture_output=True, text=True, timeout=WAIT,
                            check=False)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == f"chaingrad {metadata.version('chaingrad')}\n" == (
        f"chaingrad {chaingrad_package.__version__}\n")


def test_choices_are_taken_in_any_case(capsys):
    args = build_parser("demo").parse_args(["demo", "--optimizer", "SGD", "--model", "Cnn"])
    assert (args.optimizer, args.model) == ("sgd", "cnn")
    assert main(["graph", "x", "--set", "x=1", "--rankdir", "tb"]) == 0
    assert "graph [rankdir=TB];" in capsys.readouterr().out
    # a dataset too: DIGITS is digits, so --epochs (the digits demo's) is checked as such
    assert main(["demo", "DIGITS", "--epochs", "0"]) == 2
    assert capsys.readouterr().err == "chaingrad demo: error: --epochs must be at least 1, got 0\n"


# ---- what each command imports ----


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=WAIT, check=False)


def test_help_and_graph_import_neither_numpy_nor_matplotlib(tmp_path):
    out = tmp_path / "g.dot"
    result = run_python(
        "import sys, io, contextlib\n"
        "from chaingrad.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--help']) == 0\n"
        f"assert main(['graph', 'x*2', '--set', 'x=1', '-o', {str(out)!r}]) == 0\n"
        "heavy = {'numpy', 'matplotlib', 'sklearn'} & set(sys.modules)\n"
        "assert not heavy, heavy\n")
    assert result.returncode == 0, result.stderr
    assert out.read_text().startswith("digraph chaingrad {")


def test_without_numpy_graph_works_and_demo_says_which_extra_to_install(tmp_path):
    result = run_python(
        "import sys\n"
        "sys.modules['numpy'] = None  # as if numpy were not installed\n"
        "from chaingrad.cli import main\n"
        f"assert main(['graph', 'x*2', '--set', 'x=1', '-o', {str(tmp_path / 'g.dot')!r}]) "
        "== 0\n"
        "sys.exit(main(['demo']))\n")
    assert result.returncode == 1
    assert result.stderr == ("chaingrad demo: error: numpy is missing; install the demo extra: "
                             "pip install 'chaingrad[demo]'\n")
