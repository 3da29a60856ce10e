"""Type checkers see chaingrad as its users call it (issue 31, point 2).

pyright (what VS Code runs) and mypy, each in its strict mode, check the programs of
tests/typing_programs/: ``torch_style.py`` and ``micrograd_style.py`` must pass, their
``assert_type`` lines stating what an editor should infer (``torch.randn(4, 3)`` is a
Tensor, ``nn.Linear(3, 2)(x)`` a Tensor, ``v.tanh()`` a Value, ...), and ``mistakes.py``
must fail on exactly the lines marked ``# error``: a wrong type, a name chaingrad lacks, a
wrong call. The checkers run on a copy of the programs in a folder of their own, so they find
chaingrad where a user's checker would: installed (by the README's ``pip install -e``, whose
plain ``.pth`` path both follow), not beside the programs.

Names that load on first use (the Tensor side, which needs numpy) are served by a module
``__getattr__`` that checkers cannot run; each such module declares them in an
``if TYPE_CHECKING:`` block, and the tests here check that the declarations and the tables
that load them say the same.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from chaingrad.declaration import signature
from chaingrad.rules import functions_in

PROGRAMS_DIR = Path(__file__).parent / "typing_programs"
PROGRAMS = sorted(path.name for path in PROGRAMS_DIR.glob("*.py") if path.name != "conftest.py")
MISTAKES = "mistakes.py"  # the one program that must fail, where its lines say
TIMEOUT = 300  # seconds for one checker's run: a hang fails instead of blocking CI


def marked_lines(name: str) -> set[int]:
    """The lines of a program marked ``# error``: where both checkers must report one."""
    lines = (PROGRAMS_DIR / name).read_text(encoding="utf-8").splitlines()
    return {number for number, line in enumerate(lines, 1) if "  # error" in line}


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The programs, copied into an empty folder (with pyright's strict configuration)."""
    folder = tmp_path_factory.mktemp("typing_programs")
    for name in PROGRAMS:
        shutil.copy(PROGRAMS_DIR / name, folder / name)
    (folder / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict"}))
    return folder


def pyright_errors(folder: Path) -> tuple[dict[str, dict[int, str]], str]:
    """pyright's errors in each program, by line, and its whole report."""
    pytest.importorskip("pyright", reason="the typing test needs pyright: "
                                          "pip install -e '.[test]'")
    # --outputjson: a report to parse, and pyright-python then asks no server for a newer
    # version; --pythonpath: the interpreter whose packages it reads (this one's)
    run = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable,
         *PROGRAMS], cwd=folder, capture_output=True, text=True, timeout=TIMEOUT)
    errors: dict[str, dict[int, str]] = {}
    for found in json.loads(run.stdout)["generalDiagnostics"]:
        if found["severity"] == "error":
            line = found["range"]["start"]["line"] + 1
            errors.setdefault(Path(found["file"]).name, {})[line] = found["message"]
    report = "\n".join(f"{name}:{line}: {message}" for name, lines in sorted(errors.items())
                       for line, message in sorted(lines.items()))
    assert run.returncode == (1 if errors else 0), run.stdout + run.stderr
    return errors, report


def mypy_errors(folder: Path) -> tuple[dict[str, dict[int, str]], str]:
    """mypy's errors in each program, by line, and its whole report."""
    pytest.importorskip("mypy", reason="the typing test needs mypy: pip install -e '.[test]'")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable", sys.executable,
         "--cache-dir", str(folder / ".mypy_cache"), "--no-error-summary", *PROGRAMS],
        cwd=folder, capture_output=True, text=True, timeout=TIMEOUT)
    errors: dict[str, dict[int, str]] = {}
    for match in re.finditer(r"^(\S+\.py):(\d+): error: (.*)$", run.stdout, re.MULTILINE):
        errors.setdefault(match[1], {})[int(match[2])] = match[3]
    assert run.returncode == (1 if errors else 0), run.stdout + run.stderr
    return errors, run.stdout


@pytest.mark.slow  # 3 to 7 s each on a 2-core machine: the checkers read numpy and chaingrad
@pytest.mark.parametrize("check", [pyright_errors, mypy_errors], ids=["pyright", "mypy"])
def test_the_checkers_pass_the_programs_and_catch_each_mistake(programs, check) -> None:
    errors, report = check(programs)
    unexpected = {name: lines for name, lines in errors.items() if name != MISTAKES}
    assert not unexpected, f"errors in programs that must pass:\n{report}"
    caught = set(errors.get(MISTAKES, {}))
    missed, extra = marked_lines(MISTAKES) - caught, caught - marked_lines(MISTAKES)
    assert not missed and not extra, (f"{MISTAKES}: marked lines not reported {sorted(missed)}, "
                                      f"errors on unmarked lines {sorted(extra)}:\n{report}")


@pytest.mark.parametrize("name", [name for name in PROGRAMS if name != MISTAKES])
def test_the_typed_programs_run(programs, name) -> None:
    """They are real programs: what they claim of the types is about code that works."""
    run = subprocess.run([sys.executable, name], cwd=programs, capture_output=True, text=True,
                         timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr


# ---- the declarations for checkers, and the lazy tables ----


def _type_checking_blocks(module: types.ModuleType) -> list[ast.If]:
    return [node for node in ast.parse(inspect.getsource(module)).body
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"]


def starred(module: types.ModuleType) -> set[str]:
    """The names that ``from X import *`` lines in ``module``'s ``if TYPE_CHECKING:`` blocks
    declare: each X's ``__all__`` (``chaingrad.nn`` declares its modules so, as each file of
    nn/modules/ lists them, and its ``__getattr__`` serves them from there)."""
    names: set[str] = set()
    for node in _type_checking_blocks(module):
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom) and statement.names[0].name == "*":
                source = importlib.import_module("." * statement.level + (statement.module or ""),
                                                 module.__package__)
                names |= set(source.__all__)
    return names


def declared(module: types.ModuleType) -> tuple[set[str], dict[str, object]]:
    """The public names that ``module``'s ``if TYPE_CHECKING:`` blocks bind, and what those
    blocks bind them to when run (imports and assignments, ``*`` as ``starred`` says; an
    annotation alone binds nothing, a ``def`` binds its stub)."""
    names: set[str] = starred(module)
    space = dict(vars(module), __annotations__={})
    for node in _type_checking_blocks(module):
        exec(compile(ast.Module(node.body, type_ignores=[]), module.__file__, "exec"), space)
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom) and statement.names[0].name == "*":
                continue
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                names |= {alias.asname or alias.name for alias in statement.names}
            elif isinstance(statement, ast.Assign):
                names |= {name.id for target in statement.targets for name in ast.walk(target)
                          if isinstance(name, ast.Name)}
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                names.add(statement.target.id)
            elif isinstance(statement, ast.FunctionDef):
                names.add(statement.name)
    public = {name for name in names if not name.startswith("_")}
    return public, {name: space[name] for name in public if name in space}


LAZY_MODULES = ["chaingrad", "chaingrad.nn", "chaingrad.utils"]


@pytest.mark.parametrize("module_name", LAZY_MODULES)
def test_the_declarations_for_checkers_are_what_getattr_serves(module_name) -> None:
    """Every name that a module's ``__getattr__`` loads is declared for checkers, from the
    very place it loads it from, and nothing else is."""
    module = importlib.import_module(module_name)
    lazy = set(getattr(module, "_TENSOR_NAMES", ())) | set(module._SUBMODULES) | starred(module)
    names, bound = declared(module)
    assert names == lazy, (f"{module_name}: served but not declared under TYPE_CHECKING "
                           f"{sorted(lazy - names)}; declared but not served "
                           f"{sorted(names - lazy)}")
    elsewhere = [name for name in sorted(names) if bound[name] is not getattr(module, name)]
    assert not elsewhere, f"{module_name}: declared as something else than it is: {elsewhere}"


def test_the_declared_torch_functions_are_those_made_from_the_primitives() -> None:
    """``chaingrad.exp``, ``chaingrad.abs``, ...: maths.py makes one for each primitive
    that torch has as a function, and declares each for checkers."""
    from chaingrad.tensor_engine import maths

    names, _ = declared(maths)
    made = {maths._defined_as(name) for name in functions_in("torch")}
    assert names == made, (f"maths.py: made but not declared {sorted(made - names)}; declared "
                           f"but not made {sorted(names - made)}")
    assert all(callable(getattr(maths, name)) for name in names)


def test_the_declared_functional_functions_are_those_made_from_the_primitives() -> None:
    """``F.tanh``, ``F.softplus``, ...: those that nn/functional.py makes from the primitives
    (and does not define itself) are declared for checkers, with their arguments."""
    from chaingrad.nn import functional

    defined = {node.name for node in ast.parse(inspect.getsource(functional)).body
               if isinstance(node, ast.FunctionDef)}
    made = set(functions_in("F")) - defined
    names, stubs = declared(functional)
    assert names == made, (f"nn/functional.py: made but not declared {sorted(made - names)}; "
                           f"declared but not made {sorted(names - made)}")
    for name in sorted(names):
        stub = inspect.signature(stubs[name])
        unannotated = stub.replace(parameters=[p.replace(annotation=p.empty)
                                               for p in stub.parameters.values()],
                                   return_annotation=stub.empty)
        assert unannotated == signature(functions_in("F")[name], "input"), name
