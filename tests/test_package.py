"""The package's shape: no import cycles (lazy imports included), few function-level imports
of its own modules, no private name used across modules, no module named after a
standard-library one, every exception in errors.py, `import chaingrad` without numpy, and
what the README shows: its files exist, its "One network, three ways" runs."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "chaingrad"
OPTIONAL = {"numpy", "matplotlib", "graphviz_pure", "safetensors", "tqdm", "sklearn", "torch",
            "playwright"}
# The Tensor engine needs numpy, which the scalar engine must not: these three modules reach
# it only when a Tensor is in play (each says so where it imports).
LAZY_OWN = {"chaingrad.autograd", "chaingrad.compiler.engines", "chaingrad.losses"}


def _modules() -> dict[str, ast.Module]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = ast.parse(path.read_text(encoding="utf-8"))
    return found


MODULES = _modules()


def _resolve(module: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The package's modules an import statement in ``module`` names."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        package = module if module in MODULES and _is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = node.module or ""
        if node.level:
            base = f"{package}.{base}" if base else package
        names = [f"{base}.{alias.name}" for alias in node.names] + [base]
    own = []
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name.startswith("chaingrad"):
            own.append(name)
    return own


def _is_package(module: str) -> bool:
    return (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists()


def _imports(module: str, tree: ast.Module) -> tuple[set[str], set[str]]:
    """The package's modules imported at the top of ``module``, and inside functions."""
    top, inner = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            inside = any(isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))
                         for parent in _parents(tree, node))
            (inner if inside else top).update(m for m in _resolve(module, node) if m != module)
    return top, inner


def _parents(tree: ast.AST, target: ast.AST) -> list[ast.AST]:
    def walk(node: ast.AST, path: list[ast.AST]) -> list[ast.AST] | None:
        if node is target:
            return path
        for child in ast.iter_child_nodes(node):
            found = walk(child, path + [node])
            if found is not None:
                return found
        return None
    return walk(tree, []) or []


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module, tree in MODULES.items():
        top, inner = _imports(module, tree)
        graph[module] = top | inner
    return graph


def test_no_import_cycle_not_even_through_lazy_imports() -> None:
    graph = _graph()
    # a package imports its own submodules to re-export them: that is an edge down, and a
    # submodule importing a sibling through the package is the same edge; leave the
    # package -> its own submodule edges out, as Python does when it runs them in order
    edges = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(edges.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep):] + [dep] if dep in path else [node, dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert not cycles, f"import cycles: {cycles}"


def test_function_level_imports_of_the_package_only_where_documented() -> None:
    lazy = {module for module, tree in MODULES.items() if _imports(module, tree)[1]}
    assert lazy <= LAZY_OWN, f"function-level imports of chaingrad's own modules: {lazy - LAZY_OWN}"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_name_is_imported_across_modules() -> None:
    """What one module uses of another is a public name of the module that owns it: no
    ``from .x import _y``, no ``x._y`` on an imported module. (A node's protocol, its
    ``_value``, ``_backward`` and the like, are attributes of objects, as in micrograd.)"""
    found = []
    for module, tree in MODULES.items():
        modules_here = set()  # local names bound to one of the package's modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _resolve(module, node):
                found += [f"{module}: from {node.module or '.'} import {a.name}"
                          for a in node.names if _private(a.name)]
                package = _resolve(module, node)[-1]
                modules_here |= {a.asname or a.name for a in node.names
                                 if f"{package}.{a.name}" in MODULES}
            elif isinstance(node, ast.Import):
                modules_here |= {a.asname or a.name.partition(".")[0] for a in node.names
                                 if a.name.startswith("chaingrad")}
        found += [f"{module}: {node.value.id}.{node.attr}" for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id in modules_here and _private(node.attr)]
    assert not found, found


def test_no_module_is_named_after_a_standard_library_module() -> None:
    clashes = {m for m in MODULES if m.rpartition(".")[2] in sys.stdlib_module_names}
    assert not clashes, clashes


def test_every_exception_class_is_defined_in_errors_py() -> None:
    outside = []
    for module, tree in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(b, ast.Name) and (b.id.endswith(("Error", "Exception", "Warning")))
                    for b in node.bases) and module != "chaingrad.errors":
                outside.append(f"{module}.{node.name}")
    assert not outside, outside


def test_import_chaingrad_needs_only_the_standard_library() -> None:
    code = ("import sys; import chaingrad; from chaingrad import Value, nn, optim; "
            "nn.MLP(2, [3, 1]); print(sorted(m for m in " + repr(sorted(OPTIONAL))
            + " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


RAW_FILES = "https://raw.githubusercontent.com/chaingrad/chaingrad/main/"  # the project's files


def test_every_file_the_readme_shows_or_links_exists() -> None:
    """The README's links to the repository's files lead somewhere; its images are absolute
    addresses of files in the repository (a relative one breaks on PyPI's page)."""
    root = PACKAGE.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if not t.startswith(("http://", "https://", "mailto:"))]
    missing = [t for t in local if not (root / t).exists()]
    assert not missing, f"README.md shows or links files that are not there: {missing}"
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert any(i.endswith("page_mlp_1280.png") for i in images)  # the page's screenshot
    relative = [i for i in images if not i.startswith(RAW_FILES)]
    assert not relative, f"README.md's images must be {RAW_FILES}<path>: {relative}"
    absent = [i for i in images if not (root / i.removeprefix(RAW_FILES)).exists()]
    assert not absent, f"README.md shows images that are not in the repository: {absent}"


def test_the_readme_shows_one_network_three_ways_that_run(torch) -> None:
    """The README's 'One network, three ways': its micrograd-style and chaingrad blocks run,
    and so does the chaingrad block with its diff applied (the import lines swapped for
    torch's), giving a torch model: the two differ in their import lines only."""
    readme = (PACKAGE.parent / "docs" / "tensors.md").read_text(encoding="utf-8")
    section = readme.split("## One network, three ways\n")[1].split("\n## ")[0]
    values_code, tensor_code = re.findall(r"```python\n(.*?)```", section, re.S)
    (diff,) = re.findall(r"```diff\n(.*?)```", section, re.S)
    removed = "".join(line[1:] + "\n" for line in diff.splitlines() if line.startswith("-"))
    added = "".join(line[1:] + "\n" for line in diff.splitlines() if line.startswith("+"))
    assert tensor_code.startswith(removed) and "chaingrad" not in tensor_code[len(removed):]
    torch_code = added + tensor_code[len(removed):]

    names: dict = {}
    exec(values_code, names)
    assert type(names["loss"]).__name__ == "Value" and names["loss"].grad == 1.0
    last = {}
    for code, library in ((tensor_code, "chaingrad"), (torch_code, "torch")):
        exec(code, names)
        assert names["torch"].__name__ == library
        assert type(names["model"]).__module__.startswith(library + ".nn")
        assert all(p.grad is not None for p in names["model"].parameters())
        last[library] = names["loss"].item()
    assert isinstance(names["loss"], torch.Tensor)
    # the same seed, the same weights: the same losses, as the README says after the blocks
    assert abs(last["chaingrad"] - last["torch"]) < 1e-5
    assert f"{last['torch']:.6f} at the last" in " ".join(section.split())
