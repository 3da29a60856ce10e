"""Every Python snippet of README.md and docs/, run as a reader runs it: pasted alone into a
fresh interpreter, in an empty folder, and what it prints compared with what the document
shows right after it.

The conventions the documents follow (``test_every_snippet_is_a_program_or_a_marked_excerpt``
holds the documents to them):

- A ```` ```python ```` block is a whole program: it carries its own imports and data.
- A block that is an excerpt, not meant to run alone, says so visibly with a line of
  ``...`` (in the code or as its own line); it is left out.
- A plain ```` ``` ```` or ```` ```text ```` block right after a program, with nothing
  between them or just "prints", is what the program prints. In it, a line ``...`` stands
  for lines left out and ``...`` inside a line for text left out (doctest's ELLIPSIS), and
  durations (``8.78 ms``, ``1.7 s``) may differ from run to run.
- ``import torch  # or: import chaingrad as torch`` is run both ways.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: its backport, in the test group
    import tomli as tomllib

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)[ \t]*$")
BETWEEN = re.compile(r"(it )?prints:?", re.I)  # prose allowed between a program and its output
DURATION = re.compile(r" *\d[\d,]*(\.\d+)? ?(ms|µs|us|s)\b")  # with its padding
TORCH_OR_CHAINGRAD = "import torch  # or: import chaingrad as torch"


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, counting from 1
    lang: str
    text: str
    before: str  # the prose between the previous block and this one

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def is_excerpt(self) -> bool:
        return any(line.strip() == "..." or line.strip().startswith(("... ", "...#"))
                   for line in self.text.splitlines())


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, each dedented by its fence's indent."""
    found, lines, prose_from = [], path.read_text(encoding="utf-8").splitlines(), 0
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent = opening["indent"]
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"
                   and lines[j].startswith(indent))
        body = "".join(line[len(indent):] + "\n" for line in lines[i + 1:end])
        found.append(Block(path, i + 1, opening["lang"], body,
                           "\n".join(lines[prose_from:i]).strip()))
        prose_from = i = end + 1
    return found


def programs() -> list[tuple[Block, Block | None]]:
    """Each runnable Python block, with the block that shows its output (or None)."""
    pairs = []
    for path in DOCUMENTS:
        found = blocks(path)
        for block, after in zip(found, [*found[1:], None]):
            if block.lang != "python" or block.is_excerpt:
                continue
            shows_output = (after is not None and after.lang in ("", "text")
                            and (not after.before or BETWEEN.fullmatch(after.before)))
            pairs.append((block, after if shows_output else None))
    return pairs


def variants(code: str) -> list[tuple[str, str]]:
    """``(library, code)`` to run: both ways for a block that offers torch or chaingrad."""
    if TORCH_OR_CHAINGRAD not in code:
        return [("", code)]
    return [("torch", code), ("chaingrad", code.replace(TORCH_OR_CHAINGRAD,
                                                         "import chaingrad as torch"))]


def normalise(text: str) -> str:
    return "\n".join(DURATION.sub(" <duration>", line.rstrip()) for line in text.splitlines())


PROGRAMS = programs()


@pytest.mark.slow
@pytest.mark.parametrize(("block", "output"), PROGRAMS, ids=[b.name for b, _ in PROGRAMS])
def test_snippet_pasted_alone_prints_what_the_document_shows(block: Block, output: Block | None,
                                                             tmp_path: Path) -> None:
    for library, code in variants(block.text):
        if re.search(r"^import torch\b", code, re.M) and importlib.util.find_spec("torch") is None:
            pytest.skip(f"{block.name} runs PyTorch: pip install torch==2.13.0")
        script = tmp_path / "snippet.py"
        script.write_text(code, encoding="utf-8")
        env = {**os.environ, "MPLBACKEND": "Agg"}
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        where = f"{block.name}{' with ' + library if library else ''}"
        assert done.returncode == 0, f"{where} fails pasted alone:\n{done.stderr}"
        if output is None:
            continue
        checker, flags = doctest.OutputChecker(), doctest.ELLIPSIS
        want, got = normalise(output.text) + "\n", normalise(done.stdout) + "\n"
        assert checker.check_output(want, got, flags), (
            f"{where} prints other text than {output.name} shows:\n"
            + checker.output_difference(doctest.Example("", want), got, flags))


def test_every_snippet_is_a_program_or_a_marked_excerpt() -> None:
    """The parsing above sees what a reader sees: the README's first example pairs with its
    output, its engine excerpt is marked and left out, and no document has a Python block
    that is neither run nor marked (a block is run unless it has a ``...`` line)."""
    names = {b.name: o for b, o in PROGRAMS}
    first = next(b for b in blocks(ROOT / "README.md") if b.lang == "python")
    assert names[first.name] is not None and "o = 0.7071" in names[first.name].text
    excerpts = [b for p in DOCUMENTS for b in blocks(p) if b.lang == "python" and b.is_excerpt]
    assert any("def __mul__" in b.text for b in excerpts)
    assert len(PROGRAMS) >= 8
    for path in DOCUMENTS:
        for block in blocks(path):
            if block.lang in ("py", "python3", "pycon"):
                pytest.fail(f"{block.name}: mark Python blocks ```python, so they are run")


def test_the_checker_catches_a_wrong_output(tmp_path: Path) -> None:
    """The comparison is not vacuous: a changed number fails, a duration does not."""
    checker = doctest.OutputChecker()
    shown = "loss 0.5000 after 3.1 ms\n...\ndone\n"
    assert checker.check_output(normalise(shown) + "\n",
                                normalise("loss 0.5000 after   12.0 ms\nx\ny\ndone") + "\n",
                                doctest.ELLIPSIS)
    assert not checker.check_output(normalise(shown) + "\n",
                                    normalise("loss 0.5001 after 3.1 ms\nx\ndone") + "\n",
                                    doctest.ELLIPSIS)


# ---- docs/pytorch.md's tables against what chaingrad has ----

# where a name in the tables is looked up, torch's first: the first of these that has it
NAMESPACES = ["", ".nn", ".nn.functional", ".optim", ".nn.init", ".Tensor", ".nn.Module"]


def section_names(markdown: str, heading: str) -> set[str]:
    """The names in backticks in the tables under ``heading``, but for a first column that
    names an area (a name is an identifier path such as ``cuda.is_available`` or
    ``lr_scheduler``; a call's arguments are dropped: ``device("cpu")`` is ``device``)."""
    part = markdown.split(heading + "\n", 1)[1].split("\n#", 1)[0]
    found = set()
    for row in (line for line in part.splitlines() if line.startswith("| ")):
        cells = row.split(" | ")
        for code in re.findall(r"`([^`]+)`", " ".join(cells[1:] if "| Area |" in part else cells)):
            name = re.match(r"[A-Za-z_][\w.]*", code)
            if name:
                found.add(name.group().rstrip("."))
    return found


def lookup(root: object, path: str) -> object:
    for part in path.split("."):
        root = getattr(root, part)
    return root


def where_torch_has(torch: object, name: str) -> list[str]:
    """The namespace suffixes (see NAMESPACES) under which torch has ``name``."""
    import importlib

    found = []
    for suffix in NAMESPACES:
        holder, _, attr = ("torch" + suffix).rpartition(".")
        if suffix in (".Tensor", ".nn.Module"):
            space = getattr(importlib.import_module(holder), attr)
        else:
            space = importlib.import_module("torch" + suffix)
        try:
            lookup(space, name)
        except AttributeError:
            continue
        found.append(suffix)
    return found


def chaingrad_has(suffix: str, name: str) -> bool:
    import importlib

    import chaingrad

    path = "chaingrad" + suffix
    if suffix in (".Tensor", ".nn.Module"):
        holder, _, attr = path.rpartition(".")
        space = getattr(importlib.import_module(holder), attr)
    else:
        space = importlib.import_module(path) if suffix else chaingrad
    try:
        lookup(space, name)
    except AttributeError:
        return False
    return True


def test_pytorch_md_lists_as_matching_only_what_chaingrad_has_and_as_missing_what_it_lacks(torch):
    """docs/pytorch.md's tables, against chaingrad itself: a torch name in "What matches" is
    there (in one of the namespaces where torch has it), one in "Not in chaingrad yet" is in
    none of them (names that are not torch attributes, such as argument names, are left to
    the tests of each function)."""
    markdown = (ROOT / "docs" / "pytorch.md").read_text(encoding="utf-8")
    wrong, matching = [], section_names(markdown, "## What matches")
    for heading, present in (("## What matches", True), ("### Not in chaingrad yet", False)):
        # a row of what is missing names what it belongs to too (`Conv2d`'s `dilation`):
        # a name the document also lists as matching is that context
        for name in sorted(section_names(markdown, heading) - (set() if present else matching)):
            spaces = where_torch_has(torch, name)
            ours = [suffix for suffix in spaces if chaingrad_has(suffix, name)]
            if spaces and present and not ours:
                wrong.append(f"{heading}: chaingrad has no {name} (torch{spaces[0]} has)")
            if not present and ours:
                wrong.append(f"{heading}: chaingrad{ours[0]}.{name} exists")
    assert not wrong, wrong
    assert "float16" not in section_names(markdown, "### Not in chaingrad yet")


def test_ops_md_holds_the_table_of_every_primitive() -> None:
    """docs/ops.md's table is made from the declarations (docs/make_ops_table.py)."""
    sys.path.insert(0, str(ROOT / "docs"))
    from make_ops_table import END, START, op_table

    text = (ROOT / "docs" / "ops.md").read_text(encoding="utf-8")
    shown = text.split(START + "\n", 1)[1].split(END, 1)[0]
    assert shown == op_table(), "docs/ops.md is stale: run python docs/make_ops_table.py"
    assert "| `tanh` |" in shown
    assert "| `softsign`" not in shown, ("softsign is the op that docs/ops.md's 'Adding an op' "
                                         "adds: now that chaingrad has it, pick another there")


def test_coverage_md_holds_the_table_of_torchs_names(torch) -> None:
    """docs/coverage.md's table is made from torch and chaingrad
    (docs/make_coverage_table.py): a name chaingrad gains or loses makes it stale."""
    sys.path.insert(0, str(ROOT / "docs"))
    from make_coverage_table import END, START, coverage_table

    text = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    shown = text.split(START + "\n", 1)[1].split(END, 1)[0]
    assert shown == coverage_table(), ("docs/coverage.md is stale: run "
                                       "python docs/make_coverage_table.py")
    assert "| [`torch.zeros`][chaingrad.tensor_engine.factories.zeros] | yes |  |" in shown
    assert "| `torch.rsqrt` | not yet | for `torch.rsqrt(x)` write `x ** -0.5` |" in shown


def test_the_readme_says_what_the_test_command_costs_and_how_to_loop_quickly() -> None:
    """The test command's length, and the quick loop beside it (issue 22, item 2); the
    suite spreads over the cores by pyproject.toml's own options, not a flag to remember."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Two commands\n")[1].split("\n## ")[0]
    assert "python -m pytest\n```" in section
    assert re.search(r"in about [\d ½¼¾]+\s+minutes on a quiet 2-core machine", section)
    assert re.search(r'`python -m pytest -m "not slow"`.*\s+.*under a minute', section)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "-n auto" in project["tool"]["pytest"]["ini_options"]["addopts"]
    test_group = project["dependency-groups"]["test"]
    assert any(dep.startswith("pytest-xdist") for dep in test_group)
