"""chaingrad/tensor_engine/linalg.py (and chaingrad/linalg.py, torch.linalg's names): the
values and gradients of each function are the table's (tests/tensor_table.py, against
finite differences and torch, twice differentiated); here, float32 and float64 numbers
against torch's, the gradient at a zero vector, det's at a singular matrix, the outputs
named as torch's, the drivers of lstsq, what the _ex functions give at a failure, the
errors in torch's words, and the names chaingrad lacks."""

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
    lambda t: t.linalg.svd(t.ones(3)),
    lambda t: t.linalg.svdvals(t.ones(2, 2, dtype=t.int64)),
    lambda t: t.linalg.svd(t.ones(2, 2), driver="gesvd"),
    lambda t: t.linalg.matrix_norm(t.ones(2, 2), ord="nuc", dim=(0, 0)),
    lambda t: t.linalg.cholesky(t.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda t: t.linalg.cholesky(t.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])),
    lambda t: t.linalg.eigh(t.eye(2), UPLO="X"),
    lambda t: t.linalg.qr(t.eye(2), mode="x"),
    lambda t: t.linalg.matrix_power(t.ones(2, 3), 2),
    lambda t: t.linalg.matrix_power(t.ones(2, 2, dtype=t.int64), -1),
    lambda t: t.linalg.multi_dot([t.eye(2)]),
    lambda t: t.linalg.multi_dot([t.ones(2, 2, 2), t.eye(2)]),
    lambda t: t.linalg.multi_dot([t.eye(2), t.ones(3, 2)]),
    lambda t: t.linalg.cross(t.ones(2), t.ones(2)),
    lambda t: t.linalg.solve_triangular(t.eye(2), t.ones(2), upper=True),
    lambda t: t.linalg.slogdet(t.ones(2, 3)),
    lambda t: t.linalg.eigh(t.ones(2, 3)),
    lambda t: t.linalg.qr(t.ones(3)),
    lambda t: t.linalg.pinv(t.ones(3)),
    lambda t: t.linalg.pinv(t.ones(2, 2, dtype=t.int64)),
    lambda t: t.linalg.lstsq(t.ones(3, 2), t.ones(4, 1)),
    lambda t: t.linalg.lstsq(t.ones(3, 2), t.ones(3, 1, dtype=t.float64)),
    lambda t: t.linalg.lstsq(t.ones(3, 2), t.ones(3, 1), driver="foo"),
    lambda t: t.linalg.diagonal(t.ones(2, 2), dim1=0, dim2=-2),
    lambda t: t.linalg.cross(t.ones(3), t.ones(2, 3)),
    lambda t: t.linalg.solve_triangular(t.eye(2), t.ones(1, 3), upper=True, left=False),
    lambda t: t.linalg.svdvals(t.ones(2, 2), driver="gesvd"),
    lambda t: t.linalg.cond(t.ones(3, 4), "fro"),
    lambda t: t.linalg.cond(t.ones(3, 3), 3),
    lambda t: t.linalg.vander(t.tensor(1.0)),
    lambda t: t.linalg.tensorinv(t.ones(2, 3, 4), ind=1),
    lambda t: t.linalg.tensorinv(t.ones(2, 3), ind=0),
    lambda t: t.linalg.matrix_exp(t.ones(2, 3)),
    lambda t: t.linalg.matrix_exp(t.ones(2, 2, dtype=t.int64)),
    lambda t: t.linalg.lu_factor(t.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])),
    lambda t: t.linalg.lu(t.eye(2), pivot=False),
    lambda t: t.linalg.lu_factor_ex(t.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]),
                                    check_errors=True),
    lambda t: t.linalg.lu_solve(t.eye(2), t.tensor([1, 2], dtype=t.int32), t.ones(2)),
    lambda t: t.linalg.inv_ex(t.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]),
                              check_errors=True),
    lambda t: t.linalg.solve_ex(t.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]),
                                t.ones(2), check_errors=True),
    lambda t: t.linalg.cholesky_ex(t.tensor([[4.0, 9.0], [1.0, 1.0]]), upper=True,
                                   check_errors=True),
    lambda t: t.linalg.qr(t.ones(3, 2, requires_grad=True), mode="r").R.sum().backward(),
    lambda t: t.linalg.qr(t.ones(3, 2, requires_grad=True), mode="complete").R.sum().backward(),
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
    with pytest.raises(AttributeError, match="^chaingrad.linalg has no 'ldl_factor' yet$"):
        chaingrad.linalg.ldl_factor  # noqa: B018
    with pytest.raises(NotImplementedError, match="no svd\\(out=...\\) yet"):
        chaingrad.linalg.svd(chaingrad.eye(2), out=chaingrad.eye(2))


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

    compiled_agrees_with_eager(loss, a, b)
    text = chaingrad.explain(loss())
    for formula in ("inverse(leaf1.data).mT", "solved(leaf1.data.T, out.grad)"):
        assert formula in text


# ---- the singular values: svd, svdvals, the norms of them ----


def _signless_svd(lib, a, full_matrices):
    """S, and U's and Vh's first k columns and rows squared (their signs are LAPACK's)."""
    u, s, vh = lib.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    return [u[..., :k] ** 2, s, vh[..., :k, :] ** 2]


SINGULAR_VALUE_CALLS = {
    "svd": lambda lib, a: _signless_svd(lib, a, False),
    "svd_full": lambda lib, a: _signless_svd(lib, a, True),
    "svdvals": lambda lib, a: [lib.linalg.svdvals(a)],
    "nuclear": lambda lib, a: [lib.linalg.matrix_norm(a, "nuc")],
    "spectral": lambda lib, a: [lib.linalg.matrix_norm(a, 2, dim=(-1, -2), keepdim=True)],
    "smallest": lambda lib, a: [lib.linalg.norm(a, -2, dim=(0, 2))],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 4, 4), (2, 5, 3), (2, 3, 5)])
@pytest.mark.parametrize("name", sorted(SINGULAR_VALUE_CALLS))
def test_singular_values_and_their_gradients_are_torchs(torch, name, shape, dtype) -> None:
    """Tall, wide and square batches, with a weight on each output so that every entry of
    the gradient counts; float32 within its rounding."""
    a = np.random.default_rng(2).normal(size=shape).astype(dtype)
    results = [weighted_outputs_and_gradient(lib, SINGULAR_VALUE_CALLS[name], a)
               for lib in (chaingrad, torch)]
    outputs_and_gradient_agree(results, 2e-5 if dtype == "float32" else 1e-10)


def test_full_matrices_completes_u_and_vh_to_orthogonal_ones(torch) -> None:
    rng = np.random.default_rng(3)
    for shape in ((5, 2), (2, 5), (2, 4, 3)):
        a = rng.normal(size=shape)
        u, s, vh = chaingrad.linalg.svd(chaingrad.tensor(a))
        theirs = torch.linalg.svd(torch.tensor(a))
        assert [tuple(t.shape) for t in (u, s, vh)] == [tuple(t.shape) for t in theirs]
        for q in (u.numpy(), vh.numpy()):
            np.testing.assert_allclose(q @ q.swapaxes(-1, -2), np.eye(q.shape[-1]) + 0 * q,
                                       atol=1e-12)
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :] @ vh[..., :k, :]).numpy(), a,
                                   atol=1e-12)


def test_svd_names_its_outputs_and_grad_fn_as_torch(torch) -> None:
    a = np.arange(6.0).reshape(3, 2)
    ours = chaingrad.linalg.svd(chaingrad.tensor(a, requires_grad=True))
    theirs = torch.linalg.svd(torch.tensor(a, requires_grad=True))
    assert ours._fields == ("U", "S", "Vh")
    assert all(getattr(ours, f).shape == getattr(theirs, f).shape for f in ours._fields)
    assert ours.S.grad_fn.name() == theirs.S.grad_fn.name() == "LinalgSvdBackward0"
    assert chaingrad.linalg.matrix_exp(chaingrad.tensor(a[:2], requires_grad=True)).grad_fn \
        .name() == "LinalgMatrixExpBackward0"
    assert chaingrad.linalg.svdvals(chaingrad.tensor(a, requires_grad=True)).grad_fn.name() \
        == "LinalgSvdBackward0"


# ---- det at a singular matrix: torch's numbers in either pass ----

SINGULAR_MATRICES = {
    "rank 1 of 2": [[1.0, 2.0], [2.0, 4.0]],
    "rank 2 of 3": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
    "rank 1 of 3": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [-1.0, -2.0, -3.0]],
    "zero": [[0.0, 0.0], [0.0, 0.0]],
    "a batch, singular and not": [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]],
                                  [[0.0, 1.0], [0.0, 5.0]]],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(SINGULAR_MATRICES))
def test_det_gradient_at_a_singular_matrix_is_torchs(torch, name, dtype) -> None:
    """torch's plain backward solves with its LU factors and gives g det(A) A^-T, 0 where
    det(A) is 0; its create_graph=True backward gives the adjugate from an SVD there
    (nonzero for rank n - 1), and that differentiates again."""
    a = np.array(SINGULAR_MATRICES[name], dtype=dtype)
    results = []
    for lib in (chaingrad, torch):
        x = lib.tensor(a, requires_grad=True)
        lib.linalg.det(x).sum().backward()
        plain = x.grad.numpy()
        x = lib.tensor(a, requires_grad=True)
        (graph,) = lib.autograd.grad(lib.linalg.det(x).sum(), [x], create_graph=True)
        second = None
        if name != "zero":  # where S has a repeated 0, svd's backward divides 0 by 0 (nan)
            (second,) = lib.autograd.grad((graph * lib.tensor(a + 1)).sum(), [x])
            second = second.numpy()
        results.append((plain, graph.detach().numpy(), second))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for ours, theirs in zip(*results):
        if theirs is not None:
            np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
    if name == "rank 1 of 2":
        np.testing.assert_allclose(results[0][1], [[4.0, -2.0], [-2.0, 1.0]], atol=tol)


# ---- the everyday names: float32 and float64 against torch ----

def _symmetric(a):
    return a + a.mT


EVERYDAY_CALLS = {
    "slogdet": lambda lib, a: list(lib.linalg.slogdet(a)),
    "cholesky": lambda lib, a: [lib.linalg.cholesky(a @ a.mT)],
    "cholesky_upper": lambda lib, a: [lib.linalg.cholesky(a @ a.mT, upper=True)],
    "qr": lambda lib, a: list(lib.linalg.qr(a)),
    "qr_complete": lambda lib, a: list(lib.linalg.qr(a[..., :2, :], mode="complete")),
    "eigh": lambda lib, a: [lib.linalg.eigh(_symmetric(a)).eigenvalues,
                            lib.linalg.eigh(_symmetric(a)).eigenvectors ** 2],
    "eigvalsh": lambda lib, a: [lib.linalg.eigvalsh(_symmetric(a), UPLO="U")],
    "matrix_power": lambda lib, a: [lib.linalg.matrix_power(a, 5),
                                    lib.linalg.matrix_power(a, -2)],
    "multi_dot": lambda lib, a: [lib.linalg.multi_dot([a[0, 0], a[0], a[1, :, :2], a[2, :2]])],
    "pinv": lambda lib, a: [lib.linalg.pinv(a[..., :3])],
    "cross": lambda lib, a: [lib.linalg.cross(a[..., :3], a[..., 1:], dim=-1)],
    "vecdot": lambda lib, a: [lib.linalg.vecdot(a, a[0], dim=-2)],
    "diagonal": lambda lib, a: [lib.linalg.diagonal(a, offset=1, dim1=0, dim2=-1)],
    "solve_triangular": lambda lib, a: [lib.linalg.solve_triangular(a, a[0], upper=False),
                                        lib.linalg.solve_triangular(a, a[0, :2], upper=True,
                                                                    left=False,
                                                                    unitriangular=True)],
    "lstsq": lambda lib, a: [lib.linalg.lstsq(a[..., :2], a[..., 2:]).solution],
    "cond": lambda lib, a: [lib.linalg.cond(a), lib.linalg.cond(a[..., :3], -2),
                            lib.linalg.cond(a, "nuc")],
    "vander": lambda lib, a: [lib.linalg.vander(a[0, 0], N=5), lib.linalg.vander(a[1])],
    "tensorinv": lambda lib, a: [lib.linalg.tensorinv(a[0].reshape(2, 2, 4), ind=2)],
    "tensorsolve": lambda lib, a: [lib.linalg.tensorsolve(a[1].reshape(4, 2, 2),
                                                          a[2, 0].reshape(2, 2), dims=(0,))],
    "matmul": lambda lib, a: [lib.linalg.matmul(a, a[0])],
    "matrix_exp": lambda lib, a: [lib.linalg.matrix_exp(a), lib.linalg.matrix_exp(a * 5)],
    "lu": lambda lib, a: [*lib.linalg.lu(a.flip(-2)), *lib.linalg.lu(a[..., :3].mT)],
    "lu_factor": lambda lib, a: [lib.linalg.lu_factor_ex(a.flip(-2)[..., :3]).LU],
    "lu_solve": lambda lib, a: [lib.linalg.lu_solve(*lib.linalg.lu_factor(a.flip(-2)), a[0],
                                                    adjoint=True, left=False)],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(EVERYDAY_CALLS))
def test_everyday_names_give_torchs_numbers_and_gradients(torch, name, dtype) -> None:
    """A batch of well-conditioned 4 x 4 matrices with distinct eigen- and singular values;
    a weight on each output so that every entry of the gradient counts."""
    rng = np.random.default_rng(4)
    a = (rng.normal(size=(3, 4, 4)) * 0.3 + np.diag([1.0, 2.0, 3.0, 4.0])).astype(dtype)
    results = [weighted_outputs_and_gradient(lib, EVERYDAY_CALLS[name], a)
               for lib in (chaingrad, torch)]
    outputs_and_gradient_agree(results, 5e-5 if dtype == "float32" else 1e-10)


def test_the_results_are_named_as_torchs(torch) -> None:
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for call in (lambda t: t.linalg.slogdet(t.tensor(a)), lambda t: t.linalg.qr(t.tensor(a)),
                 lambda t: t.linalg.eigh(t.tensor(a)),
                 lambda t: t.linalg.lstsq(t.tensor(a), t.tensor(a))):
        ours, theirs = call(chaingrad), call(torch)
        assert type(ours).__name__ == type(theirs).__name__
        assert len(ours) == len(theirs)
        for field in ours._fields:
            mine, expected = getattr(ours, field), getattr(theirs, field)
            assert tuple(mine.shape) == tuple(expected.shape), field
            np.testing.assert_allclose(mine.numpy(), expected.numpy(), atol=1e-12)


def test_the_primitives_grad_fn_are_named_as_torchs(torch) -> None:
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    calls = [lambda t, x: t.linalg.slogdet(x).logabsdet, lambda t, x: t.linalg.cholesky(x),
             lambda t, x: t.linalg.cholesky(x, upper=True), lambda t, x: t.linalg.qr(x).Q,
             lambda t, x: t.linalg.qr(x, mode="r").R, lambda t, x: t.linalg.eigvalsh(x),
             lambda t, x: t.linalg.eigh(x).eigenvectors, lambda t, x: t.linalg.pinv(x)]
    for call in calls:
        ours = call(chaingrad, chaingrad.tensor(a, requires_grad=True))
        theirs = call(torch, torch.tensor(a, requires_grad=True))
        assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_lstsq_of_a_rank_deficient_matrix_gives_its_rank_and_minimal_solution(torch) -> None:
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.array([[1.0], [2.0], [4.0]])
    ours = chaingrad.linalg.lstsq(chaingrad.tensor(a), chaingrad.tensor(b))
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    assert ours.rank.item() == theirs.rank.item() == 1
    np.testing.assert_allclose(ours.solution.numpy(), theirs.solution.numpy(), atol=1e-12)


def test_the_decompositions_compile_to_the_eager_numbers() -> None:
    rng = np.random.default_rng(6)
    a = chaingrad.tensor(rng.normal(size=(2, 4, 3)), requires_grad=True)
    b = chaingrad.tensor(rng.normal(size=(2, 4, 2)), requires_grad=True)
    linalg = chaingrad.linalg

    def loss():
        square = a[:, :3]
        return (linalg.cholesky(a.mT @ a + chaingrad.eye(3), upper=True).sum()
                + linalg.lstsq(a, b).solution.sum() + linalg.qr(a).Q.sum()
                + linalg.eigh(a.mT @ a).eigenvalues.sum() + linalg.svdvals(a).sum()
                + linalg.slogdet(square).logabsdet.sum() + linalg.pinv(a).sum()
                + linalg.det(square).sum() + linalg.matrix_exp(square).sum()
                + linalg.lu(a).U.sum() + linalg.lu_solve(*linalg.lu_factor(square), b[:, :3])
                .sum())

    compiled_agrees_with_eager(loss, a, b)


def test_torch_norm_of_nuc_is_the_nuclear_norm_as_torchs(torch) -> None:
    x = np.random.default_rng(7).normal(size=(2, 3, 4))
    for kwargs in ({"dim": (0, 2), "keepdim": True}, {"dim": (-1, -2)}):
        ours = chaingrad.norm(chaingrad.tensor(x), "nuc", **kwargs)
        theirs = torch.norm(torch.tensor(x), "nuc", **kwargs)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    np.testing.assert_allclose(chaingrad.norm(chaingrad.tensor(x[0]), "nuc").item(),
                               torch.norm(torch.tensor(x[0]), "nuc").item(), rtol=1e-12)


def test_solve_triangular_computes_in_as_dtype_as_torch(torch) -> None:
    for a_dtype, b_dtype in (("float32", "float64"), ("float64", "float32")):
        results = [lib.linalg.solve_triangular(
            lib.tensor([[2.0, 1.0], [0.0, 4.0]], dtype=getattr(lib, a_dtype)),
            lib.ones(2, 1, dtype=getattr(lib, b_dtype)), upper=True)
            for lib in (chaingrad, torch)]
        assert str(results[0].dtype).split(".")[-1] == str(results[1].dtype).split(".")[-1]
        np.testing.assert_allclose(results[0].numpy(), results[1].numpy())


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize(("a_shape", "b_shape"), [((2, 5, 3), (2, 5, 2)), ((2, 5, 3), (2, 5)),
                                                  ((3, 5), (3, 2))])
def test_lstsq_gives_each_drivers_outputs_and_gradients_as_torch(torch, driver, a_shape,
                                                                  b_shape) -> None:
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    results = []
    for lib in (chaingrad, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.linalg.lstsq(x, y, driver=driver)
        loss = (out.solution * lib.tensor(np.cos(np.arange(out.solution.numel())).reshape(
            tuple(out.solution.shape)))).sum() + 0.5 * out.residuals.sum()
        loss.backward()
        results.append(([t.detach().numpy() for t in out], x.grad.numpy(), y.grad.numpy()))
    (outs, *grads), (expected, *expected_grads) = results
    for o, e in zip(outs, expected):
        assert o.shape == e.shape and o.dtype == e.dtype
        np.testing.assert_allclose(o, e, rtol=1e-10, atol=1e-12)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def test_matrix_rank_and_cond_at_singular_matrices_are_torchs(torch) -> None:
    batch = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 3.0]], [[0.0, 0.0],
                                                                          [0.0, 0.0]]])
    for kwargs in ({}, {"atol": 1.5}, {"rtol": 0.5}, {"atol": 0.1, "rtol": 0.0}):
        ours = chaingrad.linalg.matrix_rank(chaingrad.tensor(batch), **kwargs)
        theirs = torch.linalg.matrix_rank(torch.tensor(batch), **kwargs)
        assert ours.dtype == chaingrad.int64 and ours.tolist() == theirs.tolist()
    regular = batch + 2 * np.eye(2)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, float("inf"), -float("inf")):
        for matrices in (batch, regular):
            ours = chaingrad.linalg.cond(chaingrad.tensor(matrices), p).numpy()
            theirs = torch.linalg.cond(torch.tensor(matrices), p).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_lu_of_singular_matrices_reports_the_first_zero_pivot_as_torch(torch) -> None:
    batch = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.eye(3),
                      np.zeros((3, 3))])
    ours = chaingrad.linalg.lu_factor_ex(chaingrad.tensor(batch))
    theirs = torch.linalg.lu_factor_ex(torch.tensor(batch))
    for mine, expected in zip(ours, theirs):
        assert mine.dtype == getattr(chaingrad, str(expected.dtype).split(".")[-1])
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), atol=1e-15)
    p, lower, upper = chaingrad.linalg.lu(chaingrad.tensor(batch))
    np.testing.assert_allclose((p @ lower @ upper).numpy(), batch, atol=1e-15)


EX_MATRICES = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], 2 * np.eye(3),
                        np.zeros((3, 3)), np.ones((3, 3)), [[4.0, 2.0, 1.0], [2.0, 1.0, 3.0],
                                                            [1.0, 3.0, 5.0]]])
EX_CALLS = {
    "inv_ex": lambda t, a, b: t.linalg.inv_ex(a),
    "solve_ex": lambda t, a, b: t.linalg.solve_ex(a, b),
    "solve_ex_vector": lambda t, a, b: t.linalg.solve_ex(a, b[..., 0]),
    "solve_ex_right": lambda t, a, b: t.linalg.solve_ex(a, b.mT, left=False),
    "cholesky_ex": lambda t, a, b: t.linalg.cholesky_ex(a),
    "cholesky_ex_upper": lambda t, a, b: t.linalg.cholesky_ex(a.mT, upper=True),
}


@pytest.mark.parametrize("name", sorted(EX_CALLS))
def test_the_ex_functions_give_torchs_results_and_info_at_failures_too(torch, name) -> None:
    """Singular and not positive-definite matrices among regular ones: the info as
    torch's, the infs and nans of a singular system where torch's are (LAPACK's
    substitution), what potf2 leaves of a failed Cholesky factor; and the gradient of the
    regular ones."""
    b = np.random.default_rng(9).normal(size=(5, 3, 2))
    results = []
    for lib in (chaingrad, torch):
        a = lib.tensor(EX_MATRICES, requires_grad=True)
        result, info = EX_CALLS[name](lib, a, lib.tensor(b))
        regular = lib.tensor(info.numpy() == 0)
        result[regular].sum().backward()
        results.append((result.detach().numpy(), info.numpy(), a.grad.numpy()[info.numpy() == 0]))
    (ours, info, grad), (theirs, expected_info, expected_grad) = results
    assert info.tolist() == expected_info.tolist()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)  # nan and inf where
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12, atol=1e-12)


def test_cholesky_upper_reads_the_upper_triangle_as_torch(torch) -> None:
    a = np.array([[4.0, 2.0, 1.0], [5.0, 5.0, 3.0], [7.0, 9.0, 6.0]])
    results = []
    for lib in (chaingrad, torch):
        x = lib.tensor(a, requires_grad=True)
        u = lib.linalg.cholesky(x, upper=True)
        (u * lib.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        results.append((u.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def weighted_outputs_and_gradient(lib, call, a: np.ndarray) -> tuple:
    """``call(lib, x)``'s outputs for x = ``a`` in ``lib`` (torch or chaingrad), and x's
    gradient from a weighted sum of the outputs that take one (a fixed random weight on each
    entry, so that every entry of the gradient counts); each output in a's dtype."""
    x = lib.tensor(a, requires_grad=True)
    outs = call(lib, x)
    weights = [np.random.default_rng(i).normal(size=tuple(o.shape)).astype(a.dtype)
               for i, o in enumerate(outs)]
    sum(((o * lib.tensor(w)).sum() for o, w in zip(outs, weights)
         if o.requires_grad)).backward()
    assert all(o.dtype == getattr(lib, str(a.dtype)) for o in outs)
    return [o.detach().numpy() for o in outs], x.grad.numpy()


def outputs_and_gradient_agree(results: list, tol: float) -> None:
    """chaingrad's (outputs, input gradient) against torch's, ``results`` in that order:
    the outputs within ``tol``, the gradient within 20 times it."""
    (outs, grad), (expected, expected_grad) = results
    for o, e in zip(outs, expected):
        np.testing.assert_allclose(o, e, rtol=tol, atol=tol)
    np.testing.assert_allclose(grad, expected_grad, rtol=20 * tol, atol=20 * tol)


def compiled_agrees_with_eager(loss, a, b) -> None:
    """``loss()`` compiled gives the eager value, and a's and b's gradients within 1e-12."""
    eager = loss()
    eager.backward()
    expected = (eager.item(), a.grad.numpy().copy(), b.grad.numpy().copy())
    a.grad = b.grad = None
    compiled = chaingrad.compile(loss)()
    compiled.backward()
    assert compiled.item() == expected[0]
    np.testing.assert_allclose(a.grad.numpy(), expected[1], rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), expected[2], rtol=1e-12)
