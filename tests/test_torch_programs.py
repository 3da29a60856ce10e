"""PyTorch programs run twice: under torch, and under chaingrad with only the import lines
changed (issue 14: "code moves across with one import").

Each program in tests/torch_programs/ is a plain PyTorch script written for this project in
the spirit of PyTorch's beginner pages (CPU only, no download, deterministic). It prints its
results one per line; ``to_chaingrad`` maps its import lines, and the two runs' outputs must
agree line by line: the same text, and numbers equal within float32 tolerance. torch is a
test dependency: without it these tests fail (they never skip; only a program that needs
names chaingrad is still gaining, ``NEEDS``, is skipped until they are there).

Each run is a process of its own, forked from a runner that has imported the library once
(``Runner``): importing torch takes longer than most of the programs, and a forked child
starts as a fresh interpreter that has just imported it would.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import pathlib
import re
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

import chaingrad

PROGRAMS_DIR = pathlib.Path(__file__).parent / "torch_programs"
PROGRAMS = sorted(path.stem for path in PROGRAMS_DIR.glob("*.py") if path.name != "conftest.py")

# torch's import lines -> chaingrad's; nothing else in a program changes
IMPORT_MAP = {
    "import torch": "import chaingrad as torch",
    "import torch.nn as nn": "import chaingrad.nn as nn",
    "import torch.nn.functional as F": "import chaingrad.nn.functional as F",
    "import torch.optim as optim": "import chaingrad.optim as optim",
    "from torch import nn": "from chaingrad import nn",
    "from torch.nn import functional as F": "from chaingrad.nn import functional as F",
    "from torch.utils.data import Dataset": "from chaingrad.utils.data import Dataset",
    "from torch.utils.data import DataLoader, Dataset":
        "from chaingrad.utils.data import DataLoader, Dataset",
    "from torch.utils.data.dataloader import DataLoader":
        "from chaingrad.utils.data.dataloader import DataLoader",
    "from torch.utils.tensorboard import SummaryWriter":
        "from chaingrad.utils.tensorboard import SummaryWriter",
    # the one-process names that nanoGPT, build-nanogpt and PyTorch's examples import at
    # their top, on one CPU too
    "from torch.nn.parallel import DistributedDataParallel as DDP":
        "from chaingrad.nn.parallel import DistributedDataParallel as DDP",
    "from torch.distributed import init_process_group, destroy_process_group":
        "from chaingrad.distributed import init_process_group, destroy_process_group",
    "from torch.distributed import destroy_process_group, init_process_group":  # sorted
        "from chaingrad.distributed import destroy_process_group, init_process_group",
    "import torch.distributed as dist": "import chaingrad.distributed as dist",
    "import torch.onnx": "import chaingrad.onnx",
    "from torch import nn, optim": "from chaingrad import nn, optim",
    "from torch.optim.lr_scheduler import StepLR":
        "from chaingrad.optim.lr_scheduler import StepLR",
}
TORCH_IMPORT = re.compile(r"\s*(import|from)\s+torch\b")

RTOL, ATOL = 1e-4, 1e-6  # float32
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)(?!\w)")
TIMEOUT = 300  # seconds per run: a hang fails instead of blocking CI
# one thread for each run's maths: the torch and chaingrad runs go side by side, one core
# each, and torch's second thread, spinning for a core that the other run holds, made a
# program of small ops (a GPT's forward) ten times slower on a busy 2-core machine
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def to_chaingrad(source: str) -> str:
    """``source`` with each of its torch import lines replaced by chaingrad's (IMPORT_MAP).

    Raises:
        ValueError: a line imports torch in a form that IMPORT_MAP does not cover (say
            ``from torch.nn import Linear``): a program must not pass by keeping torch.
    """
    lines = []
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        body = line.rstrip("\r\n")
        indent = body[:len(body) - len(body.lstrip())]
        statement = body.strip()
        if statement in IMPORT_MAP:
            line = indent + IMPORT_MAP[statement] + line[len(body):]
        elif TORCH_IMPORT.match(body):
            raise ValueError(f"to_chaingrad: line {number} imports torch in a form the mapping "
                             f"does not cover: {statement!r}; expected one of {list(IMPORT_MAP)}")
        lines.append(line)
    return "".join(lines)


def _same_line(torch_line: str, chaingrad_line: str, rtol: float = RTOL) -> bool:
    """The same text between the numbers, and each number within ``rtol``/ATOL of torch's.
    The module's own name is the one text allowed to differ: under ``import chaingrad as
    torch`` a dtype prints as ``chaingrad.float64`` where torch prints ``torch.float64``."""
    chaingrad_line = chaingrad_line.replace("chaingrad.", "torch.")
    if NUMBER.sub("#", torch_line) != NUMBER.sub("#", chaingrad_line):
        return False
    for expected, got in zip(NUMBER.findall(torch_line), NUMBER.findall(chaingrad_line)):
        expected, got = float(expected), float(got)
        if math.isnan(expected) or math.isnan(got):
            if not (math.isnan(expected) and math.isnan(got)):
                return False
        elif expected != got and not abs(got - expected) <= ATOL + rtol * abs(expected):
            return False
    return True


def compare_outputs(torch_out: str, chaingrad_out: str, rtol: float = RTOL) -> str | None:
    """None when the two outputs agree line by line (see ``_same_line``), else a message
    showing the first line where they differ, as torch and as chaingrad printed it."""
    torch_lines, chaingrad_lines = torch_out.splitlines(), chaingrad_out.splitlines()
    for index in range(max(len(torch_lines), len(chaingrad_lines))):
        expected = torch_lines[index] if index < len(torch_lines) else "<no more lines>"
        got = chaingrad_lines[index] if index < len(chaingrad_lines) else "<no more lines>"
        if index >= len(torch_lines) or index >= len(chaingrad_lines) or \
                not _same_line(expected, got, rtol):
            return (f"line {index + 1} differs (numbers compared with rtol {rtol}, atol {ATOL})"
                    f"\n  torch:     {expected}\n  chaingrad: {got}")
    return None


BY_HAND = re.compile(r"^(.+?) +exact (True|False)  close (True|False)  biggest difference (\S+)$")


def compare_by_hand(torch_out: str, chaingrad_out: str) -> str | None:
    """For a program that checks gradients written by hand (``backprop_by_hand``): the
    same loss, and each hand-written gradient at least as close to autograd's under
    chaingrad as under torch. Exact where torch's is; where torch's float32 kernels round
    otherwise (its tanh backward fuses a multiply-add), within 1e-9 of torch's difference
    or closer: chaingrad's rules compute what the hand-written lines compute."""
    torch_lines, chaingrad_lines = torch_out.splitlines(), chaingrad_out.splitlines()
    difference = compare_outputs(torch_lines[0], chaingrad_lines[0])  # the loss
    if difference is not None or len(torch_lines) != len(chaingrad_lines):
        return difference or "the two runs compare a different number of gradients"
    for torch_line, chaingrad_line in zip(torch_lines[1:], chaingrad_lines[1:]):
        (name, t_exact, _, t_diff), (other, c_exact, c_close, c_diff) = (
            BY_HAND.match(line).groups() for line in (torch_line, chaingrad_line))
        lost_exactness = t_exact == "True" and c_exact != "True"
        worse = float(c_diff) > float(t_diff) + 1e-9
        if other != name or c_close != "True" or lost_exactness or worse:
            return f"{name}:\n  torch:     {torch_line}\n  chaingrad: {chaingrad_line}"
    return None


# A program that runs its forward under torch.autocast(device_type="cpu", dtype=bfloat16):
# chaingrad gives torch's dtypes and, op by op, torch's bits (docs/pytorch.md, "Autocast"),
# but a float32 sum in another order (LayerNorm's backward) now and then rounds a bfloat16
# gradient the other way, and sixteen AdamW steps carry it on: gpt2_tiny's losses and norms
# differ by up to 8.6e-4 of torch's (its loss at step 15: torch 2.874293, chaingrad
# 2.874082), against 3.4e-7 with autocast disabled: a quarter of bfloat16's epsilon (2**-8)
# bounds them.
BFLOAT16_RTOL = 2**-8 / 4


def compare_under_bfloat16(torch_out: str, chaingrad_out: str) -> str | None:
    """``compare_outputs`` within BFLOAT16_RTOL: for a program under bfloat16 autocast."""
    return compare_outputs(torch_out, chaingrad_out, rtol=BFLOAT16_RTOL)


COMPARISONS = {"backprop_by_hand": compare_by_hand, "gpt2_tiny": compare_under_bfloat16}
"""Programs whose outputs are compared otherwise than line for line (compare_outputs)."""

NEEDS = {"example_time_sequence_prediction": ("nn.LSTMCell",),
         "example_word_language_model": ("nn.LSTM", "nn.Transformer")}
"""Programs that use names chaingrad is still gaining (issue 34's sequence models): each is
skipped, naming them, while one is missing, and runs like the others once all are there."""


def missing_names(program: str) -> list[str]:
    """The names of ``NEEDS[program]`` that chaingrad does not have yet."""
    missing = []
    for name in NEEDS.get(program, ()):
        try:
            functools.reduce(getattr, name.split("."), chaingrad)
        except AttributeError:  # chaingrad's TorchNameError for a torch name it lacks
            missing.append(name)
    return missing


# The runner's code: import a library once, then for each program path it is sent, fork a
# child that runs the program as `python PATH` would (its folder first on sys.path, its
# output to the files named, no stdin) from the working directory named, and reply its exit
# code.
RUNNER = """
import json, os, runpy, signal, sys, traceback
import {preload}

for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        signal.alarm(job["timeout"])  # a program that hangs is ended by SIGALRM
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        for fd, name in ((1, job["stdout"]), (2, job["stderr"])):
            os.dup2(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        os.chdir(job["cwd"])
        sys.path[0], sys.argv = os.path.dirname(job["path"]), [job["path"]]
        code = 0
        try:
            runpy.run_path(job["path"], run_name="__main__")
        except SystemExit as stop:  # sys.exit(n) or sys.exit("message"), as Python ends
            if stop.code is not None and not isinstance(stop.code, int):
                print(stop.code, file=sys.stderr)
            code = stop.code if isinstance(stop.code, int) else stop.code is not None
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""
# What each runner imports once, before any program. torch's first optimizer imports
# torch._dynamo (some 2 s of CPU), which would otherwise be paid again in every child.
PRELOADS = {"torch": "torch, torch._dynamo",
            "chaingrad": "chaingrad, chaingrad.nn, chaingrad.nn.functional, chaingrad.optim"}


class Runner:
    """A process that has imported one library (``PRELOADS``) and runs programs one at a
    time, each in a child forked from it: ``start(path)``, then ``finish()``. Each runs in
    PROGRAMS_DIR, the mapped copy of a program too, so that both runs of a program find
    the test data by the same relative path (``../data/names.txt``)."""

    def __init__(self, preload: str, env: dict[str, str], folder: pathlib.Path):
        self.folder, self.log = folder, folder / "runner.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", RUNNER.format(preload=preload)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, text=True, env=env)

    def start(self, path: pathlib.Path) -> None:
        job = {"path": str(path), "cwd": str(PROGRAMS_DIR), "timeout": TIMEOUT,
               "stdout": str(self.folder / "out.txt"), "stderr": str(self.folder / "err.txt")}
        with contextlib.suppress(BrokenPipeError):  # a runner that died: finish() says so
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()

    def finish(self) -> tuple[int, str, str]:
        """The program's exit code, output and error output."""
        reply = self.process.stdout.readline()
        if not reply:
            return 1, "", f"the runner stopped:\n{self.log.read_text()}"
        code = int(reply)
        out, err = ((self.folder / name).read_text() for name in ("out.txt", "err.txt"))
        if code == -signal.SIGALRM:
            err += f"\n(killed after {TIMEOUT} s)"
        return code, out, err

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError):  # a runner that died has nothing to flush
            self.process.stdin.close()
        self.process.wait(timeout=TIMEOUT)


@pytest.fixture(scope="module")
def runners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Runner]]:
    """A runner for torch and one for chaingrad, shared by the programs of this module."""
    # the chaingrad that this test imported, not whichever one the interpreter would find
    root = pathlib.Path(chaingrad.__file__).resolve().parents[1]
    # one thread each (the two runs go side by side, a core each): torch's intra-op threads
    # on a busy machine wait for each other at every small op, ten times slower or worse
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(root), os.environ.get("PYTHONPATH")])), PYTHONHASHSEED="0",
        **dict.fromkeys(THREADS, "1"))
    started = {name: Runner(preload, env, tmp_path_factory.mktemp(f"{name}-runner"))
               for name, preload in PRELOADS.items()}
    yield started
    for runner in started.values():
        runner.close()


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# ---- the import mapping and the comparison, tested on their own ----


@pytest.mark.parametrize("torch_line", list(IMPORT_MAP))
def test_to_chaingrad_maps_each_import_line(torch_line):
    source = f"{torch_line}\n\nx = torch.ones(3)  # import torch stays in a comment\n"
    mapped = to_chaingrad(source)
    assert mapped == source.replace(torch_line, IMPORT_MAP[torch_line], 1)


def test_to_chaingrad_keeps_indentation_line_endings_and_other_lines():
    source = ("import math\r\nif True:\n    import torch\nimport torchlike\n"
              "s = 'import torch'\n")
    assert to_chaingrad(source) == ("import math\r\nif True:\n    import chaingrad as torch\n"
                                    "import torchlike\ns = 'import torch'\n")


@pytest.mark.parametrize("line", ["from torch.nn import Linear", "import torch.utils.data",
                                  "import torch as T", "from torch import optim, nn"])
def test_to_chaingrad_refuses_an_import_it_does_not_map(line):
    with pytest.raises(ValueError, match=r"line 2 imports torch .*" + re.escape(repr(line))):
        to_chaingrad(f"import math\n{line}\n")


def test_every_program_imports_only_mapped_lines():
    for name in PROGRAMS:
        mapped = to_chaingrad((PROGRAMS_DIR / f"{name}.py").read_text())
        # each line, as to_chaingrad reads them: prose that says "from torch" is no import
        assert not any(TORCH_IMPORT.match(line) for line in mapped.splitlines()), name


def test_compare_under_bfloat16_takes_bfloat16_noise_but_not_more():
    torch_out = "step 15 | loss: 2.874293 | norm: 0.6684\n"
    assert compare_outputs(torch_out, "step 15 | loss: 2.874109 | norm: 0.6681\n") is not None
    assert compare_under_bfloat16(torch_out, "step 15 | loss: 2.874109 | norm: 0.6681\n") \
        is None
    assert compare_under_bfloat16(torch_out, "step 15 | loss: 2.868 | norm: 0.6684\n") \
        is not None


def test_compare_outputs_accepts_float32_noise_and_equal_text():
    torch_out = "loss 499 169.20082092285156\nshape (3, 1) True\nzero 1e-09 nan\n"
    chaingrad_out = "loss 499 169.2019\nshape (3, 1) True\nzero -5e-07 nan\n"
    assert compare_outputs(torch_out, chaingrad_out) is None


@pytest.mark.parametrize("torch_out, chaingrad_out, shown", [
    ("a 1\nb 2.0\n", "a 1\nb 2.001\n", "line 2 differs"),
    ("a 1\nb True\n", "a 1\nb False\n", "chaingrad: b False"),
    ("a [1.0, 2.0]\n", "a [1.0, 2.0, 3.0]\n", "line 1 differs"),
    ("a 1\nb 2\n", "a 1\n", "chaingrad: <no more lines>"),
    ("a 1\n", "a 1\nb 2\n", "torch:     <no more lines>"),
    ("x nan\n", "x 0.0\n", "line 1"),
    ("float32 1\n", "float64 1\n", "torch:     float32 1"),
])
def test_compare_outputs_shows_the_first_differing_line(torch_out, chaingrad_out, shown):
    message = compare_outputs(torch_out, chaingrad_out)
    assert message is not None and shown in message


@pytest.mark.parametrize("chaingrad_line, passes", [
    ("h  exact True  close True  biggest difference 0", True),
    ("h  exact False  close True  biggest difference 3e-10", False),  # torch's is exact
    ("b  exact True  close True  biggest difference 0", True),  # torch's is not: closer
    ("b  exact False  close True  biggest difference 1.2e-09", True),
    ("b  exact False  close True  biggest difference 2.1e-09", False),  # farther than torch
    ("b  exact False  close False  biggest difference 9", False),
])
def test_compare_by_hand_holds_chaingrad_at_least_as_close_as_torch(chaingrad_line, passes):
    torch_out = ("loss 3.4404\nh  exact True  close True  biggest difference 0\n"
                 "b  exact False  close True  biggest difference 1e-09\n")
    name = chaingrad_line.split()[0]
    lines = [line if line.split()[0] != name else chaingrad_line
             for line in torch_out.splitlines()]
    assert (compare_by_hand(torch_out, "\n".join(lines)) is None) == passes


def test_missing_names_finds_what_chaingrad_lacks(monkeypatch):
    monkeypatch.setitem(NEEDS, "probe", ("nn.Linear", "nn.NoSuchLayer"))
    assert missing_names("probe") == ["nn.NoSuchLayer"]
    assert missing_names("poly_nn") == []


def test_docs_list_every_program():
    listed = set(re.findall(r"^\| `(\w+)` \|", (PROGRAMS_DIR.parents[1] / "docs" / "pytorch.md")
                            .read_text(), flags=re.MULTILINE))
    assert listed >= set(PROGRAMS), f"docs/pytorch.md does not list {set(PROGRAMS) - listed}"


@pytest.mark.slow
def test_each_run_computes_on_one_thread(tmp_path, runners):
    """The torch and chaingrad runs go side by side, one core each (``THREADS``)."""
    program = tmp_path / "threads.py"
    program.write_text("import torch\nprint(torch.get_num_threads())\n")
    runners["torch"].start(program)
    code, out, err = runners["torch"].finish()
    assert (code, out) == (0, "1\n"), err


# ---- the programs ----


@pytest.mark.slow
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_gives_torch_results_under_chaingrad(name, tmp_path, runners):
    if missing_names(name):
        pytest.skip(f"{name} needs {', '.join(missing_names(name))}, not in chaingrad yet")
    source = (PROGRAMS_DIR / f"{name}.py").read_text()
    mapped = tmp_path / f"{name}.py"
    mapped.write_text(to_chaingrad(source))
    # the two runs side by side: one core each, both in the programs' folder, where a
    # program opens its data as "../data/names.txt"
    runners["torch"].start(PROGRAMS_DIR / f"{name}.py")
    runners["chaingrad"].start(mapped)
    torch_code, torch_out, torch_err = runners["torch"].finish()
    chaingrad_code, chaingrad_out, chaingrad_err = runners["chaingrad"].finish()
    assert torch_code == 0, (f"{name} fails under torch (torch is a test dependency: "
                             f"pip install torch==2.13.0):\n{_tail(torch_err)}")
    assert torch_out.strip(), f"{name} prints nothing under torch"
    difference = COMPARISONS.get(name, compare_outputs)(torch_out, chaingrad_out)
    if chaingrad_code != 0:
        difference = (f"{difference or 'the output agrees so far'}\n"
                      f"{name} fails under chaingrad:\n{_tail(chaingrad_err)}")
    if difference is not None:
        pytest.fail(f"{name}: {difference}", pytrace=False)

