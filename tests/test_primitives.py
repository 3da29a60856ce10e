"""The guard of the primitives' declarations (chaingrad/rules.py,
chaingrad/tensor_engine/rules.py): every declared part holds, and everything made from the
declarations has each primitive.

An elementwise primitive (``rules.FUNCTIONS``, its parameters at their defaults) must run
on both engines, differentiate (against finite differences), compile on both engines,
parse in ``chaingrad graph``'s expressions and be where PyTorch has it (``chaingrad.tanh``,
``F.tanh``); its sample domain is its row of tests/ops_table.py. A new one fails here
until it does all of that.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from ops_table import OPS, agrees_with_numeric, engine_grads, numeric_grads

import chaingrad
import chaingrad.nn.functional as F
from chaingrad import Tensor, Value, rules
from chaingrad.cli.expr import METHODS, parse_expression
from chaingrad.declaration import on_floats
from chaingrad.tensor_engine import rules as tensor_rules

ALL = rules.PRIMITIVES + tensor_rules.PRIMITIVES
ROWS = {op.name: op for op in OPS}
NAMESPACES = {"torch": "torch", "Tensor": "torch.Tensor", "F": "torch.nn.functional"}


def sample(name: str) -> float:
    """A point inside the primitive's domain: the middle of its row's first interval."""
    low, high = ROWS[name].domains[0][0]
    return (low + high) / 2 + 0.123  # off the centre: away from relu's and abs's kinks


@pytest.mark.parametrize("name", sorted(rules.FUNCTIONS))
def test_an_elementwise_primitive_runs_differentiates_compiles_and_parses(name) -> None:
    prim, x0 = rules.FUNCTIONS[name], sample(name)
    assert name in ROWS, f"{name}: add a row to tests/ops_table.py (its domain)"

    def f(x):
        return getattr(x, name)()

    # runs and differentiates, on floats (a primitive's parameters at their defaults)
    value, (dx,) = engine_grads(f, [x0])
    assert value == on_floats(prim, x0, *prim.called().params)
    assert agrees_with_numeric(dx, numeric_grads(f, [x0])[0])
    # on arrays, the same numbers and gradient, in float64
    t = Tensor(np.array([x0, x0]), requires_grad=True)
    f(t).sum().backward()
    np.testing.assert_allclose(f(Tensor(np.array([x0]))).numpy(), [value], rtol=1e-12)
    np.testing.assert_allclose(t.grad.numpy(), [dx, dx], rtol=1e-12)
    # compiles, on both engines, to the eager bits (value and gradient)
    for make in (lambda: Value(x0), lambda: Tensor(np.array([x0, x0 + 0.25]),
                                                   requires_grad=True)):
        x = make()
        eager = f(x).sum() if isinstance(x, Tensor) else f(x)
        eager.backward()
        y = make()
        compiled = chaingrad.compile(lambda y=y: f(y).sum() if isinstance(y, Tensor) else f(y))
        out = compiled()
        out.backward()
        assert np.array_equal(np.asarray(out._value), np.asarray(eager._value))
        assert np.array_equal(np.asarray(chaingrad.rules.data(y.grad)),
                              np.asarray(chaingrad.rules.data(x.grad)))
    # parses in chaingrad graph, both ways
    assert name in METHODS
    for text in (f"{name}(x)", f"x.{name}()"):
        assert parse_expression(text, {"x": x0}).data == value


@pytest.mark.parametrize("name", sorted(rules.FUNCTIONS))
def test_an_elementwise_primitive_is_where_torch_has_it(name) -> None:
    prim = rules.FUNCTIONS[name]
    x = chaingrad.tensor([0.5, 1.5])
    expected = getattr(x, name)()
    if f"torch.{name}" in prim.torch:
        assert chaingrad.equal(getattr(chaingrad, name)(x), expected)
    if f"F.{name}" in prim.torch:
        assert chaingrad.equal(getattr(F, name)(x), expected)
    assert chaingrad.generic.__dict__[name] is prim  # for a user's own rules


@pytest.mark.parametrize("module", [rules, tensor_rules], ids=lambda m: m.__name__)
def test_every_primitive_a_rules_module_declares_is_in_its_table(module) -> None:
    """``PRIMITIVES`` is what the tables, the guards above and the docs read: a declaration
    left out of it would be an op that nothing checks."""
    declared = [name for name, v in vars(module).items()
                if isinstance(v, rules.Primitive) and v not in ALL]
    assert not declared, f"add {declared} to {module.__name__}.PRIMITIVES"


@pytest.mark.parametrize("prim", ALL, ids=[p.name for p in ALL])
def test_every_declaration_is_complete(prim) -> None:
    """One formula and one ``saves`` entry per input (or one for all); saves name only what
    a rule may read; a forward on arrays that is a function (never text to run)."""
    assert prim.vjp.__doc__ and ";" in prim.vjp.__doc__ or prim in (tensor_rules.MAX,
                                                                     tensor_rules.MIN)
    assert prim.saves is not None and len(prim.saves) == len(prim.formulas)
    assert all(set(entry.split()) <= {"x", "y", "out"} for entry in prim.saves)
    assert (prim.forward is not None) == (prim in rules.PRIMITIVES)
    if prim.array is not None:
        assert callable(prim.array) and callable(prim.on_arrays)
        assert not isinstance(prim.array, str)
    elif prim in rules.PRIMITIVES:  # a Python operator serves floats and arrays alike
        assert prim.forward in (operator.add, operator.mul) and prim.on_arrays is prim.forward
    else:  # only those whose gradient depends on where the forward found its result
        assert prim in (tensor_rules.MAX, tensor_rules.MIN, tensor_rules.MAX_POOL2D)


@pytest.mark.parametrize("prim", ALL, ids=[p.name for p in ALL])
def test_what_a_rule_saves_is_what_its_formulas_read(prim) -> None:
    """``saves`` is declared, not read off the formulas; this holds the two together: an
    input's entry names exactly the nodes whose numbers (``.data``) its formula reads."""
    for formula, saved in zip(prim.formulas, prim.saves):
        read = {who for who in ("x", "y", "out") if f"{who}.data" in formula
                and f"{who}.data.dtype" not in formula}
        assert read == set(saved.split()), (prim.name, formula, saved)


@pytest.mark.parametrize("prim", ALL, ids=[p.name for p in ALL])
def test_torch_has_the_op_where_the_declaration_says(prim, torch) -> None:
    for where in prim.torch:
        space, _, name = where.rpartition(".")
        holder = torch
        for part in NAMESPACES[space].split(".")[1:]:
            holder = getattr(holder, part)
        assert hasattr(holder, name), f"{prim.name}: {NAMESPACES[space]}.{name} does not exist"


WHOLE_DOMAIN = [-800.0, -30.0, -1e-3, 0.0, 1e-3, 30.0, 800.0]


@pytest.mark.parametrize("name", sorted(rules.FUNCTIONS))
def test_each_elementwise_rule_holds_over_the_whole_domain_as_torch(torch, name) -> None:
    """Far out (±800, where exp overflows and erf is ±1), near 0 and at 0, each forward and
    derivative is torch's on a Tensor, within rounding (nan where torch's is), and on a
    Value wherever torch's numbers are finite (elsewhere a Value raises, as floats do)."""
    import math

    functional = {"gelu", "leaky_relu", "softplus", "relu"}
    theirs = getattr(torch.nn.functional if name in functional else torch, name)
    x = torch.tensor(WHOLE_DOMAIN, dtype=torch.float64, requires_grad=True)
    y = theirs(x)
    y.sum().backward()
    ours = Tensor(np.array(WHOLE_DOMAIN), requires_grad=True)
    out = getattr(ours, name)()
    with chaingrad.autograd.detect_anomaly(False):
        out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), y.detach().numpy(), rtol=1e-12,
                               equal_nan=True)
    np.testing.assert_allclose(ours.grad.numpy(), x.grad.numpy(), rtol=1e-12, equal_nan=True)
    for k, at in enumerate(WHOLE_DOMAIN):
        want, slope = y[k].item(), x.grad[k].item()
        if not (math.isfinite(want) and math.isfinite(slope)):
            continue
        v = Value(at)
        value = getattr(v, name)()
        value.backward()
        assert value.data == pytest.approx(want, rel=1e-12, abs=1e-300)
        assert v.grad == pytest.approx(slope, rel=1e-12, abs=1e-300)
