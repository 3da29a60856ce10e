"""chaingrad/tensor_engine/linalg.py (and chaingrad/linalg.py, torch.linalg's names): the
values and gradients of each function are the table's (tests/tensor_table.py, against
finite differences and torch, twice differentiated); here, float32 numbers, the gradient at
a zero vector, the errors in torch's words, and the names chaingrad lacks."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.parametrize("name", ["inv", "det", "solve", "norm", "vector_norm", "matrix_norm"])
def test_float32_results_and_gradients_are_torchs(torch, name) -> None:
    rng = np.random.default_rng(0)
    a = (rng.normal(size=(3, 4, 4)) + 4 * np.eye(4)).astype(np.float32)
    b = rng.normal(size=(3, 4)).astype(np.float32)
    results = []
    for lib in (chaingrad, torch):
        x = lib.tensor(a, requires_grad=True)
        fn = getattr(lib.linalg, name)
        out = fn(x, lib.tensor(b)) if name == "solve" else fn(x)
        out.sum().backward()
        assert out.dtype == lib.float32
        results.append((out.detach().numpy(), x.grad.numpy()))
    (out, grad), (expected, expected_grad) = results
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(grad, expected_grad, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("ord_", [2, 3, 0.5])
def test_a_zero_vector_has_a_zero_gradient_as_in_torch(ord_) -> None:
    x = chaingrad.zeros(2, 3, requires_grad=True)
    chaingrad.linalg.vector_norm(x, ord_, dim=1).sum().backward()
    assert x.grad.tolist() == [[0.0] * 3] * 2


def test_the_counting_norm_and_keepdim(torch) -> None:
    array = np.array([[0.0, 2.0], [0.0, -3.0]])
    for kwargs in ({"ord": 0}, {"ord": 0, "dim": 1, "keepdim": True}):
        assert chaingrad.linalg.vector_norm(chaingrad.tensor(array), **kwargs).tolist() == \
            torch.linalg.vector_norm(torch.tensor(array), **kwargs).tolist()
    assert chaingrad.linalg.norm(chaingrad.ones(2, 2), keepdim=True).shape == (1, 1)


@pytest.mark.parametrize("call", [
    lambda t: t.linalg.inv(t.tensor(SINGULAR)),
    lambda t: t.linalg.inv(t.zeros(2, 2, 2)),
    lambda t: t.linalg.solve(t.tensor(SINGULAR), t.ones(2)),
    lambda t: t.linalg.inv(t.ones(2, 3)),
    lambda t: t.linalg.inv(t.ones(3)),
    lambda t: t.linalg.det(t.tensor([[1, 2], [3, 4]])),
    lambda t: t.linalg.vector_norm(t.tensor([1, 2])),
    lambda t: t.linalg.norm(t.ones(2, 2, 2), ord=2),
    lambda t: t.linalg.solve(t.eye(2), t.ones(3)),
    lambda t: t.linalg.matrix_norm(t.ones(2, 2), ord=3),
])
def test_errors_are_torchs(torch, call) -> None:
    with pytest.raises(RuntimeError) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:
        call(chaingrad)
    assert str(ours.value) == str(theirs.value)
    singular = isinstance(theirs.value, torch.linalg.LinAlgError)
    assert isinstance(ours.value, chaingrad.linalg.LinAlgError) == singular


def test_what_chaingrad_lacks_is_named() -> None:
    with pytest.raises(NotImplementedError, match="no matrix_norm\\(ord='nuc'\\) yet"):
        chaingrad.linalg.matrix_norm(chaingrad.eye(2), "nuc")
    with pytest.raises(AttributeError, match="^chaingrad.linalg has no 'svd' yet$"):
        chaingrad.linalg.svd  # noqa: B018


def test_grad_fn_names_compile_and_explain_as_any_op(torch) -> None:
    """The primitives are named as torch's backward functions, compile to the eager
    numbers, and explain shows each rule's formula."""
    rng = np.random.default_rng(1)
    a_array, b_array = rng.normal(size=(3, 3)) + 3 * np.eye(3), rng.normal(size=3)
    a = chaingrad.tensor(a_array, requires_grad=True)
    b = chaingrad.tensor(b_array, requires_grad=True)
    ta, tb = torch.tensor(a_array, requires_grad=True), torch.tensor(b_array)
    for ours, theirs in ((chaingrad.linalg.inv(a), torch.linalg.inv(ta)),
                         (chaingrad.linalg.det(a), torch.linalg.det(ta)),
                         (chaingrad.linalg.solve(a, b.reshape(3, 1)),
                          torch.linalg.solve(ta, tb.reshape(3, 1)))):
        assert ours.grad_fn.name() == theirs.grad_fn.name()

    def loss():
        return (chaingrad.linalg.solve(a, b).sum() + chaingrad.linalg.det(a)
                + (chaingrad.linalg.inv(a) ** 2).sum())

    eager = loss()
    eager.backward()
    expected = (eager.item(), a.grad.numpy().copy(), b.grad.numpy().copy())
    a.grad = b.grad = None
    compiled = chaingrad.compile(loss)()
    compiled.backward()
    assert compiled.item() == expected[0]
    np.testing.assert_allclose(a.grad.numpy(), expected[1], rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), expected[2], rtol=1e-12)
    text = chaingrad.explain(loss())
    for formula in ("inverse(leaf1.data).mT", "solved(leaf1.data.T, out.grad)"):
        assert formula in text
