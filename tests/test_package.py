"""The package's shape: no import cycles (lazy imports included), few function-level imports
of its own modules, no private name used across modules, no module named after a
standard-library one, every exception in errors.py, `import chaingrad` without numpy, and
what the README shows: its files exist, its "One network, three ways" runs."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: its backport, in the test group
    import tomli as tomllib

PACKAGE = Path(__file__).parent.parent / "chaingrad"
ROOT = PACKAGE.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# where the README's images are served from for PyPI, which cannot follow a relative link
RAW = "https://raw.githubusercontent.com/chaingrad/chaingrad/main/"
IMAGE = re.compile(r"!\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)|<img\b[^>]*\bsrc=[\"']([^\"']+)")
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
    """The package's modules imported at the top of ``module``, and inside functions (an
    import statement there, or ``importlib.import_module`` of a name that starts with
    "chaingrad": a lazy edge is an edge)."""
    top, inner = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            inside = any(isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))
                         for parent in _parents(tree, node))
            (inner if inside else top).update(m for m in _resolve(module, node) if m != module)
        elif (named := _imported_by_name(node)) is not None:
            inner.update(m for m in _resolve(module, ast.Import([ast.alias(named)]))
                         if m != module)
    return top, inner


def _imported_by_name(node: ast.AST) -> str | None:
    """The module an ``importlib.import_module(...)`` call names, as far as it is written
    out (``f"chaingrad.cli.{name}"`` names the package ``chaingrad.cli``), or None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module" and node.args):
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value).rstrip(".")
    return ""  # a name made at run time: the lazy loaders of torch_names and __init__


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


def test_at_most_three_function_level_imports_of_the_package() -> None:
    """Issue 33: the Tensor engine needs numpy, which the scalar engine must not; three
    modules reach it only when a Tensor is in play, each saying so where it imports."""
    found = []
    for module, tree in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for parent in _parents(tree, node)) and _resolve(module, node):
                found.append(f"{module}:{node.lineno}")
    assert {f.split(":")[0] for f in found} <= LAZY_OWN and len(found) <= 3, found


def test_no_arrow_from_the_shared_core_into_the_tensor_engine() -> None:
    """What a Value graph runs (``chaingrad.engine`` and every module it reaches, lazily
    or not) never reaches ``chaingrad.tensor_engine``: the Tensor engine builds on the
    core, never the other way round."""
    graph, seen, todo = _graph(), set(), ["chaingrad.engine", "chaingrad.rules"]
    while todo:
        module = todo.pop()
        if module not in seen:  # (``from . import x`` names the package too: not an edge)
            seen.add(module)
            todo.extend(d for d in graph.get(module, ()) if not module.startswith(d + "."))
    assert not {m for m in seen if m.startswith("chaingrad.tensor_engine")}, sorted(seen)


def test_nothing_runs_text_as_code_but_the_compiler() -> None:
    """Forwards are code: ``exec``, ``eval`` and ``compile`` of text appear only where
    ``chaingrad.compile`` builds the code it wrote (its source registered with linecache)."""
    calls = sorted({f"{module}:{node.lineno}" for module, tree in MODULES.items()
                   for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and (isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval")
                        or isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
                        and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "builtins")})
    assert [c.split(":")[0] for c in calls] == ["chaingrad.compiler.writer"] * len(calls) \
        and len(calls) == 1, calls


# Names defined in more than one module, each for a reason of its own; a new one fails the
# test below (issue 33's "one name, one thing"), and so does one that no longer needs its entry.
SHARED_NAMES = {
    # each command module of the CLI answers the same protocol (chaingrad/cli/__init__.py)
    "COMMAND": "the CLI's protocol", "DEFAULT_LR": "the CLI's protocol",
    "add_arguments": "the CLI's protocol", "run": "the CLI's protocol",
    # torch has both, with different signatures: torch.softmax(input, dim) and
    # F.softmax(input, dim=None, _stacklevel, dtype); torch.norm and torch.linalg.norm
    "softmax": "torch's two", "log_softmax": "torch's two", "norm": "torch's two",
    # micrograd's losses on lists of Values (chaingrad.losses), which hand a Tensor to
    # torch's (F.cross_entropy, F.mse_loss): one Tensor form
    "cross_entropy": "micrograd's and torch's", "mse_loss": "micrograd's and torch's",
    # a primitive's constant is named for its op (rules.GELU); torch's module nn.GELU
    "GELU": "the primitive and torch's module",
    # each engine's own, one role on floats and on arrays: ``tanh = elementwise(rules.TANH)``
    # in Value and in Tensor (docs/ops.md), and the node an op makes
    "elementwise": "each engine's", "make_node": "each engine's",
}


DEVICE_NAMESPACES = ("chaingrad.cuda", "chaingrad.accelerator", "chaingrad.backends",
                     "chaingrad.distributed", "chaingrad.amp")
"""Modules that answer torch's per-device namespaces (``torch.cuda``, ``torch.accelerator``,
``torch.backends.*``, ``torch.distributed``, ``torch.amp``) as its CPU build does: torch
itself defines the same names in each (``is_available``, ``manual_seed``, ``synchronize``,
``GradScaler``), and so do they."""


def _defined_names() -> dict[str, set[str]]:
    """Each public name defined at the top of a module (a def, a class, an assignment that
    is not an alias of another name; not the declarations for type checkers), by the
    modules that define it."""
    found: dict[str, set[str]] = {}

    def visit(module: str, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                if ast.unparse(node.test) != "TYPE_CHECKING":
                    visit(module, node.body)
                visit(module, node.orelse)
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                if all(isinstance(v, (ast.Name, ast.Attribute)) for v in values):
                    continue  # an alias: ``exp = EXP``, ``sum = _maths.sum_``
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            else:
                continue
            for name in names:
                if not name.startswith("_"):
                    found.setdefault(name, set()).add(module)

    for module, tree in MODULES.items():
        if not module.startswith(DEVICE_NAMESPACES):
            visit(module, tree.body)
    return found


def test_each_public_name_is_defined_in_one_module() -> None:
    twice = {name: sorted(modules) for name, modules in _defined_names().items()
             if len(modules) > 1}
    assert set(twice) <= set(SHARED_NAMES), {n: m for n, m in twice.items()
                                              if n not in SHARED_NAMES}
    assert set(SHARED_NAMES) <= set(twice), set(SHARED_NAMES) - set(twice)  # stale entries


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


def test_submodules_are_attributes_after_a_plain_import(run_python):
    names = ["losses", "optim", "nn", "generic", "agreement"]
    code = ("import sys, chaingrad\n"
            "assert 'numpy' not in sys.modules, 'import chaingrad imported numpy'\n"
            f"for name in {names!r}:\n"
            "    assert getattr(chaingrad, name).__name__ == 'chaingrad.' + name, name\n"
            "assert set(" + repr(names) + ") <= set(dir(chaingrad))\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr


def test_without_numpy_the_tensor_names_say_which_extra_to_install(run_python):
    code = ("import sys\n"
            "sys.modules['numpy'] = None  # as if numpy were not installed\n"
            "import chaingrad, chaingrad.nn\n"
            "assert (chaingrad.Value(2.0) * 3).data == 6.0  # the scalar engine needs none\n"
            "for get in (lambda: chaingrad.Tensor, lambda: chaingrad.nn.Linear,\n"
            "            lambda: chaingrad.agreement):\n"
            "    try:\n"
            "        get()\n"
            "    except ModuleNotFoundError as exc:\n"
            "        assert \"needs numpy: pip install 'chaingrad[tensor]'\" in str(exc), exc\n"
            "    else:\n"
            "        raise AssertionError('no error')\n")
    result = run_python(code)
    assert result.returncode == 0, result.stderr


RAW_FILES = "https://raw.githubusercontent.com/chaingrad/chaingrad/main/"  # the project's files


def test_every_file_the_readme_shows_or_links_exists() -> None:
    """The README's links to the repository's files lead somewhere; its images are absolute
    addresses of files in the repository (a relative one breaks on PyPI's page)."""
    root = PACKAGE.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    targets = [t.removeprefix(RAW) for t in targets]  # the images, served from the repository
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


# ---- the package as it is published (issue 31, item 4) ----


def test_the_long_description_shows_images_that_pypi_can_load() -> None:
    """The README is the package's long description: PyPI cannot resolve a relative image,
    so each is an absolute URL of a file in this repository (PNG: raw SVG is served as text)."""
    assert PROJECT["project"]["readme"] == "README.md"
    images = [a or b for a, b in IMAGE.findall((ROOT / "README.md").read_text(encoding="utf-8"))]
    assert images  # the README shows pictures: a change of the pattern must not hide them
    for image in images:
        assert image.startswith(RAW) and image.endswith(".png"), image
        assert (ROOT / image.removeprefix(RAW)).is_file(), image


def _python_versions() -> list[str]:
    prefix = "Programming Language :: Python :: 3."
    return [c.split(" :: ")[-1] for c in PROJECT["project"]["classifiers"]
            if c.startswith(prefix) and c.removeprefix(prefix).isdigit()]


def test_the_python_versions_claimed_are_those_ci_tests_and_the_readme_states() -> None:
    """requires-python, the classifiers, the README and .ci/python-versions' default (the
    lowest and the highest claimed) name the same versions, with none left out between."""
    versions = _python_versions()
    minors = [int(v.split(".")[1]) for v in versions]
    assert minors == list(range(minors[0], minors[-1] + 1)), versions
    assert PROJECT["project"]["requires-python"] == f">={versions[0]}"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"runs on Python {versions[0]} to {versions[-1]}" in readme
    script = (ROOT / ".ci" / "python-versions").read_text(encoding="utf-8")
    assert f"versions=({versions[0]} {versions[-1]})" in script
    assert "\nCHAINGRAD_REQUIRE_PYTHONS=1 .ci/python-versions\n" in (
        ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_metadata_names_authors_urls_and_keywords_and_no_test_tools() -> None:
    project = PROJECT["project"]
    assert project["authors"] == [{"name": "The chaingrad developers"}]
    assert set(project["urls"]) == {"Homepage", "Documentation", "Repository", "Changelog",
                                    "Issues"}
    assert "autograd" in project["keywords"]
    assert {"Intended Audience :: Education", "Intended Audience :: Science/Research",
            "Topic :: Scientific/Engineering :: Artificial Intelligence"} <= set(
        project["classifiers"])
    # the test and dev tools are dependency groups, which a wheel's metadata does not carry
    assert not {"test", "dev"} & set(project["optional-dependencies"])
    assert {"test", "dev"} <= set(PROJECT["dependency-groups"])


def test_ci_sets_up_exactly_as_the_readme_says() -> None:
    """.ci/run installs with the README's own set-up line (pip's --quiet aside)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Two commands\n")[1].split("\n## ")[0]
    setup = [line for line in section.splitlines() if "--group test" in line]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace(" --quiet", "")
    assert len(setup) == 1
    for command in setup[0].split(" && "):
        assert f"\n{command}\n" in ci, command


def test_the_changelog_keeps_a_changelog() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)
    assert releases[0] == ("Unreleased", "")
    version, date = releases[1]  # the latest release: the version pyproject.toml gives
    assert version == PROJECT["project"]["version"] and date
    for version, _ in releases:
        assert re.search(rf"^\[{re.escape(version)}\]: https://", text, re.M), version


@pytest.mark.slow
def test_the_wheel_and_sdist_hold_the_package_and_install_with_no_extras(tmp_path) -> None:
    """`python -m build` makes both; the wheel holds every file of the package (the page's
    assets, any marker), its metadata no test tools; installed alone in a fresh virtualenv,
    it runs the README's first example."""
    pytest.importorskip("build", reason="tests/test_package.py builds with the build package: "
                                        "pip install build (the test group has it)")
    # from the files git tracks, as in a fresh clone: a build's leftovers in the checkout
    # (chaingrad.egg-info) would bring in files that the configuration leaves out
    source, dist = tmp_path / "source", tmp_path / "dist"
    for name in subprocess.run(["git", "-C", str(ROOT), "ls-files"], check=True,
                               capture_output=True, text=True).stdout.splitlines():
        if (ROOT / name).is_file():  # not a file deleted and not yet committed
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        fields = HeaderParser().parsestr(archive.read(metadata).decode("utf-8"))
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "chaingrad"], check=True,
                             capture_output=True, text=True).stdout.split()
    missing = set(tracked) - names
    assert tracked and not missing, f"the wheel lacks {sorted(missing)}: see package-data"
    assert "chaingrad/show/page_assets/page.js" in names
    assert fields["Requires-Python"] == PROJECT["project"]["requires-python"]
    assert fields["License-Expression"] == "MIT"
    assert not {"test", "dev"} & set(fields.get_all("Provides-Extra"))
    assert len(fields.get_all("Project-URL")) == 5
    assert "Programming Language :: Python :: 3.10" in fields.get_all("Classifier")
    with tarfile.open(sdist) as archive:
        top = f"chaingrad-{PROJECT['project']['version']}/"
        files = {name.removeprefix(top) for name in archive.getnames()}
    assert {"pyproject.toml", "README.md", "LICENSE", "chaingrad/__init__.py"} <= files
    missing = set(tracked) - files
    assert not missing, f"the sdist lacks {sorted(missing)}"

    env = tmp_path / "env"
    venv.create(env, with_pip=False)  # nothing but the standard library and the wheel
    python = env / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-index", "--no-deps", str(wheel)], check=True, timeout=300)
    example = next(block for block in re.findall(r"```python\n(.*?)```",
                                                 (ROOT / "README.md").read_text("utf-8"), re.S))
    done = subprocess.run([str(python), "-c", example], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "o = 0.7071\nx1.grad = -1.5000, w1.grad = 1.0000, b.grad = 0.5000\n"
    import_check = "import importlib.util, chaingrad; print(importlib.util.find_spec('numpy'))"
    done = subprocess.run([str(python), "-c", import_check + "; print(chaingrad.__file__)"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    no_numpy, installed = done.stdout.splitlines()
    assert no_numpy == "None" and installed.startswith(str(env))


def test_the_readmes_reading_path_names_five_files_and_each_answer_is_where_it_says() -> None:
    """Issue 33: "Reading the code" names at most five files for the scalar engine, and each
    "`name` in `file`" it gives is defined in that file (a function, a class, a constant or
    a method), so the answers a reader follows stay true as the code moves."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Reading the code", 1)[1].split("\n## ", 1)[0]
    scalar = section.split("The Tensor side", 1)[0]
    files = re.findall(r"^\d+\. \[`(chaingrad/[\w/]+\.py)`\]", scalar, flags=re.M)
    assert 1 <= len(files) <= 5 and len(set(files)) == len(files), files
    items = re.split(r"^\d+\. ", scalar, flags=re.M)[1:]
    pairs = [(name, path) for item, path in zip(items, files)
             for name in re.findall(r"`(\w+)`", item)]  # each bare name, in its item's file
    flat = " ".join(section.split())
    claims = re.findall(r"`(\w+)` (?:of `\w+` )?in \[?`(chaingrad/[\w/]+\.py)`", flat)
    claims += [(name, path) for names, path in re.findall(
        r"\(((?:`\w+`, )+`\w+`) in \[?`(chaingrad/[\w/]+\.py)`", flat)
        for name in re.findall(r"`(\w+)`", names)]
    assert len(claims) >= 10, claims
    for name, path in pairs + claims:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree)
                   if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))}
        defined |= {t.id for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
                    for t in ast.walk(n.targets[0] if isinstance(n, ast.Assign) else n.target)
                    if isinstance(t, ast.Name)}
        assert name in defined, f"README: `{name}` is not defined in {path}"
