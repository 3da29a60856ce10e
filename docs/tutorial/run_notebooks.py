"""Execute the tutorial notebooks in place, saving their fresh outputs.

Run it after editing a notebook, so that what is committed is what a clean run prints:

    python docs/tutorial/run_notebooks.py                     # all of them
    python docs/tutorial/run_notebooks.py 05_accumulation     # some of them

Each notebook runs top to bottom in a new kernel, in its own folder; a cell that raises
stops that notebook and nothing is written for it. The per-cell execution timestamps that
Jupyter records are left out, so that re-running an unchanged notebook changes nothing but
the timings some notebooks print. Needs ``nbclient`` and ``ipykernel`` (``pip install
nbmake ipykernel`` brings both).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(path: Path) -> float:
    """Execute the notebook at ``path``, rewrite it with its outputs; returns the seconds."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - started
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    nbformat.validate(notebook)
    fd, temp = tempfile.mkstemp(dir=path.parent, suffix=".ipynb.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            nbformat.write(notebook, file)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise
    return seconds


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    paths = [HERE / f"{Path(n).stem}.ipynb" for n in names] or sorted(HERE.glob("[0-9]*.ipynb"))
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        print(f"run_notebooks: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    total = 0.0
    for path in paths:
        seconds = run(path)
        total += seconds
        print(f"{path.name}: {seconds:.1f} s", flush=True)
    print(f"all {len(paths)}: {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
