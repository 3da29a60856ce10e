"""The tutorial notebooks as committed: complete, in order, saved with a clean run's outputs.

Executing them is nbmake's job (``pytest --nbmake docs/tutorial``); these checks read the
files only, so that a notebook saved without outputs, run out of order, missing its
assertions or left out of the index fails fast with a message that says which.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

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


def load(name: str) -> dict:
    return json.loads((TUTORIAL / f"{name}.ipynb").read_text(encoding="utf-8"))


def code_cells(notebook: dict) -> list[dict]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def source(cell: dict) -> str:
    text = cell["source"]
    return text if isinstance(text, str) else "".join(text)


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
    assert sum(len(cell["outputs"]) for cell in cells) >= len(cells) // 2, (
        f"{name}: most cells have no saved output"
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_asserts_what_it_claims_and_imports_only_allowed_libraries(
    name: str,
) -> None:
    code = "\n".join(source(cell) for cell in code_cells(load(name)))
    tree = ast.parse(code)
    asserts = [node for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    assert asserts, f"{name}: no assert checks a number stated in the text"
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    allowed = ALLOWED_IMPORTS | EXTRA_IMPORTS.get(name, set())
    assert imported <= allowed, f"{name}: imports {imported - allowed}"


@pytest.mark.parametrize("name", ["02_neuron_by_hand", "06_mlp_moons", "11_after_micrograd"])
def test_graphs_and_plots_are_saved_as_images(name: str) -> None:
    kinds = {
        kind
        for cell in code_cells(load(name))
        for out in cell["outputs"]
        for kind in out.get("data", {})
    }
    assert kinds & {"image/svg+xml", "image/png"}, f"{name}: no image saved"
