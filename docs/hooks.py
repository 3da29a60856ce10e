"""mkdocs hooks (mkdocs.yml's ``hooks:``): pages the site makes at build time.

- the API reference, one page per public module (``docs/make_reference.py``);
- the benchmarks' own pages, ``benchmarks/README.md`` and ``benchmarks/RESULTS.md``, shown as
  they are in the repository (one file, read in both places).
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).parent))  # make_reference.py, beside this file

import make_reference  # noqa: E402

ROOT = Path(__file__).parent.parent
# site page: (the repository's file, {link in it: what it becomes in the site})
BENCHMARK_PAGES = {
    "benchmarks/how.md": ("benchmarks/README.md", {}),
    "benchmarks/results.md": ("benchmarks/RESULTS.md", {"(README.md)": "(how.md)"}),
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for page, text in make_reference.pages().items():
        files.append(File.generated(config, page, content=text))
    for page, (source, links) in BENCHMARK_PAGES.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        for link, becomes in links.items():
            text = text.replace(link, becomes)
        files.append(File.generated(config, page, content=text))
    return files
