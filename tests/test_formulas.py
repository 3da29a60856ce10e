"""Each derivative is stated once, as code: every formula is read off its rule."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import chaingrad
from chaingrad import rules
from chaingrad.declaration import GENERIC_FORMULA, Primitive
from chaingrad.formulas import Symbol, derive, reading, shown
from chaingrad.tensor_engine import linalg
from chaingrad.tensor_engine import rules as tensor_rules

PACKAGE = Path(chaingrad.__file__).parent


def every_primitive() -> dict[str, Primitive]:
    """Every primitive the package declares (its modules' names), by name; not a user's
    (those state the generic formula), nor compile's own."""
    found = {}
    for module in pkgutil.walk_packages([str(PACKAGE)], "chaingrad."):
        if ".cli" in module.name or module.name.endswith("__main__"):
            continue
        try:
            namespace = vars(importlib.import_module(module.name))
        except ImportError:  # an optional dependency this environment lacks
            continue
        for value in namespace.values():
            if isinstance(value, Primitive) and value._formulas != (GENERIC_FORMULA,):
                found[value.name] = value
    return found


EVERY_PRIMITIVE = tuple(every_primitive().values())


def declared_formulas(path: Path) -> list[str]:
    """The ``define(name, formulas, ...)`` and ``Primitive(name, vjp, formulas, ...)`` calls
    of a module that state formula text, but for a user's rule's generic one."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        position = {"define": 1, "Primitive": 2}.get(name)
        if position is None:
            continue
        given = [*node.args[position:position + 1],
                 *(k.value for k in node.keywords if k.arg == "formulas")]
        if given and isinstance(given[0], (ast.Tuple, ast.Constant)) \
                and "GENERIC_FORMULA" not in ast.unparse(given[0]):
            found.append(f"{path.relative_to(PACKAGE)}: {ast.unparse(node)[:70]}")
    return found


def test_no_primitive_of_the_package_declares_its_formula() -> None:
    declared = [d for path in sorted(PACKAGE.rglob("*.py")) for d in declared_formulas(path)]
    assert not declared


def test_the_check_finds_a_declared_formula(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('@define("neg", ("-out.grad",))\ndef NEG(xs, out, g):\n    return (-g,)\n'
                      'P = Primitive("p", rule, ("out.grad",))\n'
                      'U = Primitive("u", rule, (GENERIC_FORMULA,))\n', encoding="utf-8")
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        assert len(declared_formulas(module)) == 2
    finally:
        PACKAGE = saved


def test_every_primitive_is_found() -> None:
    assert {*rules.PRIMITIVES, *tensor_rules.PRIMITIVES, linalg.INV} <= set(EVERY_PRIMITIVE)


@pytest.mark.parametrize("prim", EVERY_PRIMITIVE, ids=lambda p: p.name)
def test_each_formula_is_read_off_its_rule(prim) -> None:
    assert prim.formulas == derive(prim.vjp, len(prim.saves), prim.param_names)
    assert GENERIC_FORMULA not in prim.formulas


@pytest.mark.parametrize(("prim", "formulas"), [
    (rules.TANH, ("(1 - out.data**2) * out.grad",)),
    (tensor_rules.MATMUL, ("out.grad @ y.data.mT", "x.data.mT @ out.grad")),
    (tensor_rules.SUM, ("expand(out.grad, axes, x.shape)",)),
    (tensor_rules.SOFTMAX,
     ("out.data * (out.grad - (out.grad * out.data).sum(axis=axis, keepdims=True))",)),
    (tensor_rules.TRANSPOSE, ("out.grad.transpose(inverse(axes))",)),
    (tensor_rules.CAST, ("out.grad.astype(x.data.dtype)",)),
    (tensor_rules.CONCATENATE, ("out.grad[pieces[k]]",)),
    (tensor_rules.CONV2D, ("conv2d_input_grad(out.grad, y.data, x.shape[2:], stride, padding)",
                           "conv2d_weight_grad(x.data, out.grad, y.shape[2:], stride, padding)",
                           "out.grad.sum(axis=0).sum(axis=(1, 2))")),
    (linalg.DET, ("(out.grad * out.data)[..., None, None] * matrix_inverse(x.data).mT",)),
])
def test_formulas_read_as_one_writes_them(prim, formulas) -> None:
    assert prim.formulas == formulas


def test_a_shown_helper_is_the_function_itself_at_run_time() -> None:
    """``@shown`` marks a helper and returns it: the rules call it with no wrapper."""
    assert tensor_rules.expand.__name__ == "expand"
    assert tensor_rules.expand.shown_as == "expand({})"
    assert tensor_rules.swap_last.shown_as == "{0}.mT"
    assert reading(tensor_rules.MATMUL.vjp) is not tensor_rules.MATMUL.vjp
    assert reading(rules.TANH.vjp) is rules.TANH.vjp  # no helper to stand in


@shown()
def twice(x):
    return x + x


def rule_of_twice(xs, out, g):
    return (twice(g),)


def test_a_helper_stands_for_itself_only_while_a_rule_is_read() -> None:
    rule = rule_of_twice
    assert derive(rule, 1, ()) == ("twice(out.grad)",)
    assert rule((1.0,), 1.0, 3.0) == (6.0,)


def test_a_symbol_answers_as_an_array_would() -> None:
    x, g = Symbol("x.data"), Symbol("out.grad")
    assert str(x.shape) == "x.shape" and str(x.shape[2:]) == "x.shape[2:]"
    assert str((g * x).sum(axis=-1, keepdims=True)) == \
        "(out.grad * x.data).sum(axis=-1, keepdims=True)"
    assert str(g[..., None, 1:3:2]) == "out.grad[..., None, 1:3:2]"
    assert [str(p) for p in Symbol("picks")] == ["picks[k]"]
    assert x.ndim == 2
    assert not hasattr(x, "_prev")  # not a node: rules.data(x) is x
