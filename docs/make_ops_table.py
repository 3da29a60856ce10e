"""The table of every primitive, as docs/ops.md shows it: made from the declarations in
``chaingrad/rules.py`` and ``chaingrad/tensor_engine/rules.py``, never written by hand.

Run ``python docs/make_ops_table.py`` to write it into docs/ops.md (between its
``<!-- op table -->`` markers); tests/test_docs.py checks that the document holds what this
makes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from chaingrad import rules
from chaingrad.tensor_engine import rules as tensor_rules

START = "<!-- op table: made by python docs/make_ops_table.py -->"
END = "<!-- end of op table -->"


def op_table() -> str:
    """Every primitive as a Markdown table row: its name, what it computes and its
    derivative (its rule's docstring), the formula of each input's gradient, what the rule
    keeps of the forward pass, and where PyTorch has it.

    Example:
        >>> op_table().splitlines()[2].split(" | ")[:2]
        ['| `+`', 'x + y; d/dx = 1, d/dy = 1.']
    """
    rows = ["| op | computes; derivative | gradient of each input (`explain`'s formula) "
            "| keeps | in torch |", "|---|---|---|---|---|"]
    for prim in rules.PRIMITIVES + tensor_rules.PRIMITIVES:
        doc = " ".join(prim.doc.split("\n\n")[0].split())
        formulas = "<br>".join(f"`{f}`" for f in prim.formulas)
        keeps = ", ".join(f"`{s}`" if s else "-" for s in prim.saves)
        torch = ", ".join(f"`{t}`" for t in prim.torch) or "-"
        rows.append(f"| `{prim.name}` | {doc.replace('|', '&#124;')} | {formulas} | {keeps} "
                    f"| {torch} |")
    return "\n".join(rows) + "\n"


def write_between(path: Path, start: str, end: str, table: str) -> None:
    """Put ``table`` between the markers ``start`` and ``end`` of the document at ``path``
    (docs/make_coverage_table.py writes its table with it too)."""
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{start}\n{table}{end}{tail}", encoding="utf-8")


def write_into(path: Path) -> None:
    """Put ``op_table()`` between the markers of the document at ``path``."""
    write_between(path, START, END, op_table())


if __name__ == "__main__":
    write_into(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "ops.md")
