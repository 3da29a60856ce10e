"""The API reference pages of the documentation site, made from the package itself: for
each public module, every public name, a one-line summary, and the name's object rendered
from its docstring (signature, arguments, example) by mkdocstrings, at the module that
defines it.

``docs/hooks.py`` adds these pages to the site at build time (``mkdocs build``); nothing
here is written to disk. A public name is one that the module lists in ``__all__`` (or,
without ``__all__``, one it defines itself, in the module or the package below it), or one
that its ``__getattr__`` serves on first use (``chaingrad.zeros``, ``chaingrad.nn.Linear``):
the names ``dir()`` shows and ``import`` reaches.
"""

from __future__ import annotations

import importlib
import inspect
import json
import types
from dataclasses import dataclass

# page, the modules whose public names it lists, and its title
PAGES: list[tuple[str, list[str], str]] = [
    ("api/chaingrad.md", ["chaingrad"], "chaingrad"),
    ("api/nn.md", ["chaingrad.nn"], "chaingrad.nn"),
    ("api/nn.functional.md", ["chaingrad.nn.functional"], "chaingrad.nn.functional"),
    ("api/nn.init.md", ["chaingrad.nn.init"], "chaingrad.nn.init"),
    ("api/nn.utils.md", ["chaingrad.nn.utils", "chaingrad.nn.utils.rnn"], "chaingrad.nn.utils"),
    ("api/optim.md", ["chaingrad.optim", "chaingrad.optim.optimizer", "chaingrad.optim.sgd",
                      "chaingrad.optim.adam", "chaingrad.optim.rmsprop",
                      "chaingrad.optim.adagrad", "chaingrad.optim.adadelta",
                      "chaingrad.optim.lbfgs"], "chaingrad.optim"),
    ("api/optim.lr_scheduler.md", ["chaingrad.optim.lr_scheduler"], "chaingrad.optim.lr_scheduler"),
    ("api/utils.data.md", ["chaingrad.utils.data"], "chaingrad.utils.data"),
    ("api/utils.tensorboard.md", ["chaingrad.utils.tensorboard"], "chaingrad.utils.tensorboard"),
    ("api/serialization.md", ["chaingrad.serialization"], "chaingrad.serialization"),
    ("api/losses.md", ["chaingrad.losses"], "chaingrad.losses"),
    ("api/show.md", ["chaingrad.show.steps", "chaingrad.show.explain", "chaingrad.show.naive",
                     "chaingrad.show.dot", "chaingrad.show.render", "chaingrad.show.page"],
     "Seeing backprop: chaingrad.show"),
    ("api/compile.md", ["chaingrad.compiler"], "Compile: chaingrad.compiler"),
    ("api/one_process.md", ["chaingrad.cuda", "chaingrad.cuda.amp", "chaingrad.accelerator",
                            "chaingrad.backends", "chaingrad.backends.cuda",
                            "chaingrad.backends.cudnn", "chaingrad.backends.mps",
                            "chaingrad.backends.cpu", "chaingrad.amp", "chaingrad.distributed",
                            "chaingrad.nn.parallel", "chaingrad.onnx", "chaingrad.torch_compile"],
     "One process on one CPU: cuda, accelerator, backends, amp, distributed, onnx"),
    ("api/autograd.md", ["chaingrad.autograd", "chaingrad.autograd.functional"],
     "chaingrad.autograd"),
    ("api/linalg.md", ["chaingrad.linalg"], "chaingrad.linalg"),
    ("api/testing.md", ["chaingrad.testing"], "chaingrad.testing"),
]


@dataclass(frozen=True)
class Entry:
    """One public name of a module, and where the object it names is defined."""

    module: str  # the public module: chaingrad.nn
    name: str  # the name there: Linear
    path: str  # the object's defining path: chaingrad.nn.modules.linear.Linear
    summary: str  # the first line of its docstring

    @property
    def is_alias(self) -> bool:
        return self.path.rpartition(".")[2] != self.name


def _served_lazily(module: types.ModuleType, name: str) -> bool:
    """Whether ``module.__getattr__`` serves ``name`` (a name loaded on first use)."""
    getattr_ = vars(module).get("__getattr__")
    if getattr_ is None:
        return False
    try:
        getattr_(name)
    except AttributeError:
        return False
    return True


def _defined_in(thing: object) -> str | None:
    """The module that defines ``thing``: a class's or function's own, an instance's type's."""
    owner = thing if inspect.isclass(thing) or inspect.isroutine(thing) else type(thing)
    return getattr(owner, "__module__", None)


def public_names(module_name: str) -> list[str]:
    """The public names of a module (see the module docstring), sorted, modules left out.

    Example:
        >>> names = public_names("chaingrad")
        >>> "Value" in names and "zeros" in names and "nn" not in names
        True
        >>> "functions_in" in names  # imported for its own use, not in __all__
        False
    """
    module = importlib.import_module(module_name)
    listed = vars(module).get("__all__")
    found = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        thing = getattr(module, name)
        if isinstance(thing, types.ModuleType):
            continue
        if listed is not None:
            public = name in listed
        else:
            home = _defined_in(thing) or ""
            public = home == module_name or home.startswith(module_name + ".")
        if public or _served_lazily(module, name):
            found.append(name)
    return sorted(found)


def defining_path(module_name: str, name: str) -> str:
    """Where ``module.name`` is defined, as mkdocstrings names it: the defining module and
    the name the object is bound to there (``chaingrad.bool`` is
    ``chaingrad.tensor_engine.dtypes.bool_``).

    Example:
        >>> defining_path("chaingrad.nn", "Linear")
        'chaingrad.nn.modules.linear.Linear'
    """
    thing = getattr(importlib.import_module(module_name), name)
    home = _defined_in(thing) or module_name
    where = importlib.import_module(home)
    qualname = getattr(thing, "__qualname__", None)
    if isinstance(qualname, str) and "<" not in qualname and (inspect.isclass(thing)
                                                              or inspect.isroutine(thing)):
        return f"{home}.{qualname}"
    bound = vars(where).get(name)
    if bound is thing:
        return f"{home}.{name}"
    for other, value in vars(where).items():
        if value is thing and not other.startswith("_"):
            return f"{home}.{other}"
    return f"{module_name}.{name}"  # defined where it is served


def _summary(thing: object) -> str:
    if inspect.isclass(thing) or inspect.isroutine(thing):
        doc = inspect.getdoc(thing) or ""
        line = " ".join(doc.split("\n\n")[0].split())
    else:
        line = f"a `{type(thing).__name__}`: `{thing!r}`"
    return line.replace("|", "&#124;")


def entries(module_name: str) -> list[Entry]:
    """Every public name of the module with its defining path and summary."""
    module = importlib.import_module(module_name)
    return [Entry(module_name, name, defining_path(module_name, name),
                  _summary(getattr(module, name))) for name in public_names(module_name)]


def from_parts(thing: object) -> list[str]:
    """The public methods a class takes from its parts, which its entry shows as its own:
    the parts are its bases in its own package that hold no state of their own (``__slots__
    = ()``), as ``Tensor``'s ``Sorting``, ``Shaping``, ... (their methods are ``Tensor``'s,
    split by what they answer; an inherited base class, as ``nn.Module``, is not a part).

    Example:
        >>> from chaingrad import Tensor
        >>> "sort" in from_parts(Tensor) and "T" in from_parts(Tensor)
        True
        >>> from_parts(Tensor.sort)
        []
    """
    if not inspect.isclass(thing):
        return []
    package = thing.__module__.rpartition(".")[0]
    names: list[str] = []
    for base in thing.__bases__:
        if base.__module__.rpartition(".")[0] == package and vars(base).get("__slots__") == ():
            names += [name for name, member in vars(base).items() if not name.startswith("_")
                      and (callable(member) or isinstance(member, property))]
    return names


def pages() -> dict[str, str]:
    """Each reference page's Markdown, by its path in the site. An object is rendered once,
    on the first page that lists it (``Tensor`` on chaingrad's); later pages link to it."""
    rendered: set[str] = set()
    made = {}
    for page, modules, title in PAGES:
        lines = [f"# {title}", ""]
        for module_name in modules:
            found = entries(module_name)
            if len(modules) > 1:
                lines += [f"## `{module_name}`", ""]
            lines += [f"::: {module_name}", "    options:", "      members: false",
                      "      show_root_heading: false", ""]
            lines += ["| name | what it is |", "|---|---|"]
            for entry in found:
                alias = f" (defined as `{entry.path.rpartition('.')[2]}`)" if entry.is_alias else ""
                lines.append(f"| [`{entry.name}`][{entry.path}]{alias} | {entry.summary} |")
            lines.append("")
            by_home: dict[str, list[Entry]] = {}
            for entry in found:
                if entry.path not in rendered:
                    rendered.add(entry.path)
                    by_home.setdefault(entry.path.rpartition(".")[0], []).append(entry)
            level = "###" if len(modules) > 1 else "##"
            for home, group in sorted(by_home.items()):
                lines += [f"{level} Defined in `{home}`", ""]
                for entry in group:
                    lines += [f"::: {entry.path}", "    options:",
                              f"      heading_level: {len(level) + 1}"]
                    parts = from_parts(getattr(importlib.import_module(module_name),
                                               entry.name))
                    if parts:
                        lines.append(f"      inherited_members: {json.dumps(parts)}")
                    lines.append("")
        made[page] = "\n".join(lines)
    return made


if __name__ == "__main__":  # print the pages, to read them before a build
    for page, text in pages().items():
        print(f"==> {page}\n{text}")
