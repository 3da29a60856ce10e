"""chaingrad/autograd/functional.py: jacobian, hessian, vjp, jvp, vhp and hvp give torch's
results, in torch's structure (a tensor, a tuple, a tuple of tuples), with torch's
arguments and errors; with create_graph=True the results differentiate again."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import chaingrad
from chaingrad.autograd import functional

RNG = np.random.default_rng(0)
X, Y = RNG.normal(size=(2, 3)), RNG.normal(size=(3,))


def _functions(lib):
    """(name, function, point) cases, in either library."""
    x, y = lib.tensor(X), lib.tensor(Y)
    return [
        ("one in, one out", lambda a: (a * a).tanh() @ a.T, x),
        ("two in, one out", lambda a, b: (a * b).sin().sum(0), (x, y)),
        ("one in, two out", lambda a: (a.exp(), a.sum()), x),
        ("two in, two out", lambda a, b: (a @ b, (a * b).sum()), (x, y)),
        ("unused input", lambda a, b: a * 2, (x, y)),
    ]


def _scalar_functions(lib):
    x, y = lib.tensor(X), lib.tensor(Y)
    return [("one in", lambda a: (a ** 3).sum() + (a[0] * a[1]).sin().sum(), x),
            ("two in", lambda a, b: ((a * b).tanh() ** 2).sum(), (x, y))]


def _same(ours, theirs) -> None:
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    assert isinstance(ours, chaingrad.Tensor)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("i", range(5))
def test_jacobian_vjp_and_jvp_are_torchs(torch, i) -> None:
    _, ours, point = _functions(chaingrad)[i]
    _, theirs, their_point = _functions(torch)[i]
    _same(functional.jacobian(ours, point), torch.autograd.functional.jacobian(
        theirs, their_point))
    outs = theirs(*their_point) if isinstance(their_point, tuple) else theirs(their_point)
    v = tuple(torch.ones_like(o) for o in outs) if isinstance(outs, tuple) else \
        torch.ones_like(outs)
    u = tuple(torch.ones_like(p) for p in their_point) if isinstance(their_point, tuple) \
        else torch.ones_like(their_point)
    for name, vector in (("vjp", v), ("jvp", u)):
        ours_v = tuple(chaingrad.tensor(t.numpy()) for t in vector) \
            if isinstance(vector, tuple) else chaingrad.tensor(vector.numpy())
        _same(getattr(functional, name)(ours, point, ours_v),
              getattr(torch.autograd.functional, name)(theirs, their_point, vector))


@pytest.mark.parametrize("i", range(2))
def test_hessian_hvp_and_vhp_are_torchs(torch, i) -> None:
    _, ours, point = _scalar_functions(chaingrad)[i]
    _, theirs, their_point = _scalar_functions(torch)[i]
    _same(functional.hessian(ours, point), torch.autograd.functional.hessian(theirs,
                                                                              their_point))
    v = tuple(torch.ones_like(p) * 0.5 for p in their_point) \
        if isinstance(their_point, tuple) else torch.ones_like(their_point) * 0.5
    ours_v = tuple(chaingrad.tensor(t.numpy()) for t in v) if isinstance(v, tuple) \
        else chaingrad.tensor(v.numpy())
    for name in ("hvp", "vhp"):
        _same(getattr(functional, name)(ours, point, ours_v),
              getattr(torch.autograd.functional, name)(theirs, their_point, v))


def test_with_create_graph_the_results_differentiate_again(torch) -> None:
    x = chaingrad.tensor(Y, requires_grad=True)
    tx = torch.tensor(Y, requires_grad=True)
    ours = functional.jacobian(lambda a: a.sin() * a.sum(), x, create_graph=True)
    theirs = torch.autograd.functional.jacobian(lambda a: a.sin() * a.sum(), tx,
                                                create_graph=True)
    (ours ** 2).sum().backward()
    (theirs ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    assert not functional.jacobian(lambda a: a * 2, x).requires_grad


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_the_arguments_are_torchs(torch, name) -> None:
    ours = inspect.signature(getattr(functional, name)).parameters
    theirs = inspect.signature(getattr(torch.autograd.functional, name)).parameters
    assert list(ours) == list(theirs)
    assert [p.default for p in ours.values()] == [p.default for p in theirs.values()]


@pytest.mark.parametrize("call", [
    lambda t, F: F.vjp(lambda a: a ** 2, t.ones(2)),
    lambda t, F: F.jacobian(lambda a, b: a * 2, (t.ones(2), t.ones(3)), strict=True),
    lambda t, F: F.hessian(lambda a: a ** 2, t.ones(2)),
    lambda t, F: F.vjp(lambda a: a ** 2, t.ones(2), t.ones(3)),
    lambda t, F: F.jvp(lambda a: a ** 2, t.ones(2)),
    lambda t, F: F.hvp(lambda a: (a ** 2).sum(), t.ones(2)),
    lambda t, F: F.vhp(lambda a: a ** 2, t.ones(2), t.ones(2)),
])
def test_errors_are_torchs(torch, call) -> None:
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.autograd.functional)
    with pytest.raises(type(theirs.value)) as ours:
        call(chaingrad, functional)
    assert str(ours.value) == str(theirs.value).replace("torch.Size", "chaingrad.Size")


def test_forward_mode_needs_vectorize_as_in_torch(torch) -> None:
    with pytest.raises(NotImplementedError) as theirs:
        torch.autograd.functional.jacobian(lambda a: a, torch.ones(2), strategy="forward-mode")
    with pytest.raises(NotImplementedError) as ours:
        functional.jacobian(lambda a: a, chaingrad.ones(2), strategy="forward-mode")
    assert str(ours.value) == str(theirs.value)
    assert functional.jacobian(lambda a: a * 2, chaingrad.ones(2), vectorize=True,
                               strategy="forward-mode").tolist() == [[2.0, 0.0], [0.0, 2.0]]
