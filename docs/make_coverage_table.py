"""docs/coverage.md's table: every public name of PyTorch's modules that ``import chaingrad as
torch`` stands in for, one name a row, and whether chaingrad has it. Made from the two
libraries, never written by hand: torch (2.13, the version chaingrad follows) says which
names there are, chaingrad says which it has (it looks each one up), and
``chaingrad/torch_names.py`` says which it names as missing and what to write instead.

Run ``python docs/make_coverage_table.py`` (with torch installed) to write it into
docs/coverage.md, between its ``<!-- coverage table -->`` markers; tests/test_docs.py checks
that the document holds what this makes.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # make_reference.py, beside this file

import make_reference  # noqa: E402
from make_ops_table import write_between  # noqa: E402

from chaingrad import torch_names  # noqa: E402

START = "<!-- coverage table: made by python docs/make_coverage_table.py -->"
END = "<!-- end of coverage table -->"

# how code spells the space, torch's module (or class), chaingrad's, and the torch_names list
# of what chaingrad lacks there
SPACES: list[tuple[str, str, str]] = [
    ("torch", "torch", "chaingrad"),
    ("Tensor", "torch.Tensor", "chaingrad.Tensor"),
    ("nn", "torch.nn", "chaingrad.nn"),
    ("F", "torch.nn.functional", "chaingrad.nn.functional"),
    ("nn.init", "torch.nn.init", "chaingrad.nn.init"),
    ("nn.utils", "torch.nn.utils", "chaingrad.nn.utils"),
    ("nn.utils.rnn", "torch.nn.utils.rnn", "chaingrad.nn.utils.rnn"),
    ("optim", "torch.optim", "chaingrad.optim"),
    ("optim.lr_scheduler", "torch.optim.lr_scheduler", "chaingrad.optim.lr_scheduler"),
    ("utils", "torch.utils", "chaingrad.utils"),
    ("utils.data", "torch.utils.data", "chaingrad.utils.data"),
    ("utils.tensorboard", "torch.utils.tensorboard", "chaingrad.utils.tensorboard"),
    ("SummaryWriter", "torch.utils.tensorboard.SummaryWriter",
     "chaingrad.utils.tensorboard.SummaryWriter"),
]


def resolve(path: str) -> object:
    """A module, or a class in one, by its dotted path."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        holder, _, name = path.rpartition(".")
        return getattr(importlib.import_module(holder), name)


def torch_public_names(space: object) -> list[str]:
    """torch's public names in a module (its functions, classes and own submodules, these
    imported or not: which of them a process has imported depends on what ran before, and
    the table must not) or a class (its public attributes)."""
    if not isinstance(space, types.ModuleType):
        return sorted(name for name in dir(space) if not name.startswith("_"))
    names = set()
    if hasattr(space, "__path__"):  # a package
        names |= {m.name for m in pkgutil.iter_modules(space.__path__)
                  if not m.name.startswith("_")}
    for name in dir(space):
        if name.startswith("_"):
            continue
        thing = getattr(space, name)
        if isinstance(thing, types.ModuleType):
            if thing.__name__.startswith(space.__name__ + "."):
                names.add(name)
        elif callable(thing) and (getattr(thing, "__module__", None) or "").startswith("torch"):
            names.add(name)
    return sorted(names)


def status(spelling: str, ours: object, name: str) -> tuple[str, str]:
    """``(in chaingrad, what to write instead)`` for one torch name."""
    try:
        getattr(ours, name)
    except AttributeError:
        instead = torch_names.INSTEAD.get(f"{spelling}.{name}")
        return "not yet", f"for `{instead[0]}` write `{instead[1]}`" if instead else ""
    return "yes", ""


def rows() -> list[str]:
    """One Markdown row per torch name, space by space, names sorted within a space."""
    found = []
    for spelling, theirs_path, ours_path in SPACES:
        ours = resolve(ours_path)
        documented = (set(make_reference.public_names(ours_path))
                      if isinstance(ours, types.ModuleType) else set())
        for name in torch_public_names(resolve(theirs_path)):
            has, instead = status(spelling, ours, name)
            shown = f"`{spelling}.{name}`"
            if name in documented and not isinstance(getattr(ours, name), types.ModuleType):
                shown = f"[{shown}][{make_reference.defining_path(ours_path, name)}]"
            found.append(f"| {shown} | {has} | {instead.replace('|', '&#124;')} |")
    return found


def coverage_table() -> str:
    """The table, in a ``searchable`` block (the site adds a filter box over it): a row
    such as ``| [`torch.zeros`][chaingrad.tensor_engine.factories.zeros] | yes |  |``, the
    name linked to its entry in the API reference where chaingrad has it."""
    lines = ['<div class="searchable" markdown>', "",
             "| name | in chaingrad | instead, with chaingrad's ops |", "|---|---|---|",
             *rows(), "", "</div>"]
    return "\n".join(lines) + "\n"


def write_into(path: Path) -> None:
    """Put ``coverage_table()`` between the markers of the document at ``path``."""
    write_between(path, START, END, coverage_table())


if __name__ == "__main__":
    write_into(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "coverage.md")
