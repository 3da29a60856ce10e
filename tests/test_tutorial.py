"""The tutorial notebooks as committed: complete, in order, saved with a clean run's outputs.

Executing them is nbmake's job (``pytest --nbmake docs/tutorial``); these checks read the
files only, so that a notebook saved without outputs, run out of order, missing its
checks, asserting in a lesson or left out of the index fails fast with a message that
says which.

A notebook checks the numbers its text states in *check cells*, which the reader may skip:
code cells tagged ``check`` in their metadata, whose source starts with ``CHECK_MARK``.
Executing the notebook runs them, so a number that no longer holds fails nbmake. The other
code cells teach, and assert nothing.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from nbformat.validator import isvalid

TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "tutorial"
NAMES = [
    "01_derivatives",
    "02_neuron_by_hand",
    "03_backward_closures",
    "04_operators",
    "05_accumulation",
    "06_mlp_moons",
    "07_primitive_gradcheck",
    "08_tensors",
    "09_compile",
    "10_three_ways",
    "11_after_micrograd",
]
# what a notebook may import: chaingrad, the standard library, and data/plot libraries
ALLOWED_IMPORTS = {
    "chaingrad", "numpy", "matplotlib", "sklearn", "math", "random", "time", "gc", "inspect",
    "difflib", "io",
}
# notebook 10 runs one program under chaingrad and under PyTorch, so it imports torch too
EXTRA_IMPORTS = {"10_three_ways": {"torch"}}
# how a check cell starts, for the reader; its metadata carries the tag CHECK_TAG
CHECK_MARK = "# Check (you can skip this cell):"
CHECK_TAG = "check"
# the notebooks that plot with matplotlib (saved as PNG), and those that draw a graph
# with draw_dot (saved as SVG)
PLOTS = {"01_derivatives", "05_accumulation", "06_mlp_moons", "07_primitive_gradcheck",
         "08_tensors", "10_three_ways", "11_after_micrograd"}
DRAWINGS = {"02_neuron_by_hand", "03_backward_closures", "04_operators",
            "07_primitive_gradcheck", "09_compile", "11_after_micrograd"}
# a saved image larger than this (characters of base64 or SVG) was drawn at too high a dpi
MAX_IMAGE_CHARS = 150_000


def load(name: str) -> dict:
    return json.loads((TUTORIAL / f"{name}.ipynb").read_text(encoding="utf-8"))


def code_cells(notebook: dict) -> list[dict]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def source(cell: dict) -> str:
    text = cell["source"]
    return text if isinstance(text, str) else "".join(text)


def is_check(cell: dict) -> bool:
    return CHECK_TAG in cell.get("metadata", {}).get("tags", [])


def asserts_in(code: str) -> list[str]:
    """The assert statements of ``code``, and its calls of ``assert...`` functions
    (``np.testing.assert_allclose``), as source text."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name.startswith("assert"):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Assert):
            found.append(ast.unparse(node))
    return found


def images(notebook: dict) -> list[tuple[str, str]]:
    """``(mime type, data)`` of every image a code cell saved."""
    return [
        (kind, data if isinstance(data, str) else "".join(data))
        for cell in code_cells(notebook)
        for out in cell["outputs"]
        for kind, data in out.get("data", {}).items()
        if kind.startswith("image/")
    ]


def test_the_notebooks_are_exactly_the_eleven_in_order() -> None:
    found = sorted(path.stem for path in TUTORIAL.glob("*.ipynb"))
    assert found == NAMES


def test_the_index_links_every_notebook_in_order() -> None:
    index = (TUTORIAL / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((\d\d_\w+)\.ipynb\)", index)
    assert links == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_opens_by_saying_what_the_learner_will_see(name: str) -> None:
    first = load(name)["cells"][0]
    assert first["cell_type"] == "markdown"
    assert "What you will see" in source(first), f"{name}: first cell lacks 'What you will see'"


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_is_saved_from_one_clean_run(name: str) -> None:
    cells = code_cells(load(name))
    counts = [cell["execution_count"] for cell in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{name}: execution counts {counts}; run it top to bottom in a new kernel "
        "(python docs/tutorial/run_notebooks.py) before committing"
    )
    for cell in cells:
        assert not any(out["output_type"] == "error" for out in cell["outputs"]), name
    teaching = [cell for cell in cells if not is_check(cell)]
    assert sum(len(cell["outputs"]) for cell in teaching) >= len(teaching) // 2, (
        f"{name}: most cells have no saved output"
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_is_valid_nbformat_4(name: str) -> None:
    notebook = load(name)  # as saved: nbformat.read would repair duplicate cell ids unsaid
    assert notebook["nbformat"] == 4
    assert isvalid(notebook), f"{name}: not valid nbformat 4 (nbformat.validate says why)"


@pytest.mark.parametrize("name", NAMES)
def test_teaching_cells_assert_nothing(name: str) -> None:
    for index, cell in enumerate(load(name)["cells"]):
        if cell["cell_type"] == "code" and not is_check(cell):
            found = asserts_in(source(cell))
            assert not found, (
                f"{name}, cell {index}: a teaching cell asserts {found}; move the checks into "
                f"a cell that starts with {CHECK_MARK!r} and is tagged {CHECK_TAG!r}"
            )


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_checks_its_numbers_in_check_cells_marked_for_the_reader(name: str) -> None:
    checks = 0
    for index, cell in enumerate(load(name)["cells"]):
        marked = source(cell).startswith(CHECK_MARK)
        if cell["cell_type"] != "code":
            assert not marked and not is_check(cell), f"{name}, cell {index}: not code"
            continue
        assert marked == is_check(cell), (
            f"{name}, cell {index}: a check cell starts with {CHECK_MARK!r} and is tagged "
            f"{CHECK_TAG!r}; this one has {'the mark' if marked else 'the tag'} only"
        )
        if marked:
            assert asserts_in(source(cell)), f"{name}, cell {index}: a check cell checks nothing"
            checks += 1
    assert checks, f"{name}: no check cell checks a number stated in the text"


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_imports_only_allowed_libraries(name: str) -> None:
    tree = ast.parse("\n".join(source(cell) for cell in code_cells(load(name))))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    allowed = ALLOWED_IMPORTS | EXTRA_IMPORTS.get(name, set())
    assert imported <= allowed, f"{name}: imports {imported - allowed}"


@pytest.mark.parametrize("name", NAMES)
def test_plots_and_drawings_are_saved_as_images_of_a_modest_size(name: str) -> None:
    saved = images(load(name))
    kinds = {kind for kind, _ in saved}
    if name in PLOTS:
        assert "image/png" in kinds, f"{name}: no matplotlib plot saved (image/png)"
    if name in DRAWINGS:
        assert "image/svg+xml" in kinds, f"{name}: no draw_dot drawing saved (image/svg+xml)"
    sizes = [len(data) for _, data in saved]
    assert all(size <= MAX_IMAGE_CHARS for size in sizes), (
        f"{name}: an image of {max(sizes):,} characters; save plots at a lower dpi"
    )
