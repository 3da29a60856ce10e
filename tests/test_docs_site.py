"""The documentation site (mkdocs.yml): it builds offline in strict mode, so a broken link,
a missing page or an API reference that names no object fails; and what it builds holds
what the issue asks of it: every public name in the API reference with its signature and
example, the notebooks with their saved outputs, the coverage table with its filter."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "docs"))  # make_reference.py

import make_reference  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once into a temporary folder with ``mkdocs build --strict`` (not
    ``-q``: a quiet build does not count its warnings, and strict mode passes them)."""
    pytest.importorskip("mkdocs", reason="the docs site needs pip install -e '.[docs]' "
                        "(on Python 3.11 or later)")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-d", str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-5000:]}"
    assert "WARNING" not in done.stderr, re.findall(r"WARNING.*", done.stderr)
    return out


@pytest.mark.slow
def test_the_api_reference_has_every_public_name_with_its_signature(site: Path) -> None:
    """Each reference page lists every public name of its modules, linked to the entry of
    the object it names, and some page renders that entry (an anchor with the object's
    defining path): the public names are those make_reference finds, the modules the ones
    the issue names (chaingrad, nn, nn.functional, optim, utils.data, the graph tools)."""
    pages = {page: (site / page).with_suffix(".html").read_text(encoding="utf-8")
             for page, _, _ in make_reference.PAGES}
    everything = "".join(pages.values())
    covered = {m for _, modules, _ in make_reference.PAGES for m in modules}
    assert {"chaingrad", "chaingrad.nn", "chaingrad.nn.functional", "chaingrad.optim",
            "chaingrad.utils.data", "chaingrad.compiler", "chaingrad.show.explain"} <= covered
    missing = []
    for page, modules, _ in make_reference.PAGES:
        for module in modules:
            for entry in make_reference.entries(module):
                if f'#{entry.path}"' not in pages[page] or f'id="{entry.path}"' not in everything:
                    missing.append(f"{module}.{entry.name} ({entry.path})")
    assert not missing, f"not in the API reference: {missing}"
    # an entry shows its signature and its docstring's example as code
    zeros = pages["api/chaingrad.md"].split('id="chaingrad.tensor_engine.factories.zeros"')[1]
    text = re.sub(r"<[^>]+>", "", zeros[:6000]).replace("&gt;", ">")
    assert "requires_grad: bool = False" in text and ") -> Tensor" in text
    assert ">>> zeros(2, 3).shape" in text and "chaingrad.Size([2, 3])" in text


@pytest.mark.slow
def test_the_guides_notebooks_and_coverage_are_pages(site: Path) -> None:
    for page in ("index", "getting-started", "engine", "tensors", "compile", "backprop",
                 "training", "benchmarks", "benchmarks/how", "benchmarks/results", "pytorch",
                 "ops", "coverage"):
        assert (site / f"{page}.html").is_file(), page
    # a notebook's saved outputs, its plots included, are on its page
    moons = (site / "tutorial" / "06_mlp_moons.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in moons
    coverage = (site / "coverage.html").read_text(encoding="utf-8")
    assert '<div class="searchable">' in coverage and "filter_table.js" in coverage
    assert re.search(r"<td><a [^>]*href=\"api/chaingrad\.html#chaingrad\.tensor_engine\."
                     r"factories\.zeros\"[^>]*><code>torch\.zeros</code></a></td>", coverage)


def test_each_notebook_is_in_the_menu_under_its_own_title() -> None:
    """The menu names each notebook by its first heading, code spans as plain text: left to
    mkdocs-jupyter, a title loses its code (``4. Operators: how becomes a graph node``)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    menu = dict(re.findall(r'^ +- "(.+)": (tutorial/\S+\.ipynb)$', config, re.M))
    notebooks = sorted((ROOT / "docs" / "tutorial").glob("*.ipynb"))
    assert sorted(menu.values()) == [f"tutorial/{n.name}" for n in notebooks]
    for notebook in notebooks:
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        heading = next("".join(c["source"]).splitlines()[0] for c in cells
                       if c["cell_type"] == "markdown")
        title = next(t for t, page in menu.items() if page == f"tutorial/{notebook.name}")
        assert title == heading.lstrip("# ").replace("`", ""), notebook.name
