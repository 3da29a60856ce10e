"""The Tensor ops of issue 24 beyond what tests/tensor_table.py checks entry by entry: the ops
without a gradient (argsort, nonzero, histc, histogram, multinomial) against torch, sorting
at ties, attention's masked softmax, the in-place masked_fill_, compiling the new
primitives, and the errors that name the op."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn.functional as F
from chaingrad import Tensor


def _both(torch, array: np.ndarray):
    """The same array as a chaingrad and a torch tensor (its dtype kept)."""
    return chaingrad.tensor(array), torch.tensor(array)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_ops_without_a_gradient_give_torchs_numbers(torch, dtype) -> None:
    rng = np.random.default_rng(0)
    array = np.round(rng.normal(size=(4, 6)), 1).astype(dtype)  # rounded: ties to sort
    array[1, 2] = array[0, 0] = 0
    ours, theirs = _both(torch, array)
    for dim in (0, 1, -1):
        for descending in (False, True):
            mine = chaingrad.argsort(ours, dim, descending, stable=True)
            assert mine.tolist() == torch.argsort(theirs, stable=True, dim=dim,
                                                  descending=descending).tolist()
            values, indices = ours.sort(dim, descending)
            expected = theirs.sort(stable=True, dim=dim, descending=descending)
            assert values.tolist() == expected.values.tolist()
            assert indices.tolist() == expected.indices.tolist()
    assert ours.nonzero().tolist() == theirs.nonzero().tolist()
    assert [t.tolist() for t in chaingrad.nonzero(ours, as_tuple=True)] == [
        t.tolist() for t in theirs.nonzero(as_tuple=True)]
    for args in ((), (7,), (5, -1.0, 1.0), (4, 0.5, 0.5)):
        assert np.array_equal(ours.histc(*args).numpy(), theirs.histc(*args).numpy()), args
    weight = rng.uniform(0, 2, size=array.shape).astype(dtype)
    for bins, kwargs in ((5, {}), (3, {"range": (-1.0, 2.0)}), (4, {"density": True}),
                         (6, {"weight": weight}), (np.array([-1.0, 0.0, 0.5, 3.0]), {})):
        edges = (chaingrad.tensor(bins.astype(dtype)), torch.tensor(bins.astype(dtype))) \
            if isinstance(bins, np.ndarray) else (bins, bins)
        mine = chaingrad.histogram(ours, edges[0], **kwargs)
        theirs_kwargs = kwargs | ({"weight": torch.tensor(weight)} if "weight" in kwargs else {})
        expected = torch.histogram(theirs, edges[1], **theirs_kwargs)
        assert np.array_equal(mine.bin_edges.numpy(), expected.bin_edges.numpy()), kwargs
        np.testing.assert_allclose(mine.hist.numpy(), expected.hist.numpy(), rtol=1e-6)
    one = chaingrad.tensor(np.array([2.0], dtype=dtype)).histogram(2)
    assert one.hist.tolist() == [0.0, 1.0] and one.bin_edges.tolist() == [1.5, 2.0, 2.5]


def test_multinomial_is_a_method_too_with_torchs_numbers(torch) -> None:
    weights = np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]], dtype=np.float32)
    for replacement, n in ((True, 5), (False, 2), (True, 1)):
        ours = chaingrad.tensor(weights).multinomial(
            n, replacement, generator=chaingrad.Generator().manual_seed(7))
        theirs = torch.tensor(weights).multinomial(
            n, replacement, generator=torch.Generator().manual_seed(7))
        assert ours.tolist() == theirs.tolist() and ours.dtype == chaingrad.int64


def test_attention_masks_with_minus_infinity_before_its_softmax(torch) -> None:
    """The lecture's ``wei.masked_fill(tril == 0, float('-inf'))`` then softmax: values and
    gradients as torch's (an entry of -inf, masked out, takes no gradient)."""
    rng = np.random.default_rng(1)
    q_array, k_array = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))

    def attention(lib, q, k):
        tril = lib.tril(lib.ones(4, 4))
        scores = (q @ k.transpose(-2, -1)) * 3**-0.5
        return scores.masked_fill(tril == 0, float("-inf")).softmax(-1)

    q, k = (Tensor(a, requires_grad=True) for a in (q_array, k_array))
    tq, tk = (torch.tensor(a, requires_grad=True) for a in (q_array, k_array))
    ours, theirs = attention(chaingrad, q, k), attention(torch, tq, tk)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    weights = rng.normal(size=(2, 4, 4))
    (ours * Tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(k.grad.numpy(), tk.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_masked_fill_sends_a_value_tensor_the_gradient_of_the_entries_it_fills() -> None:
    x = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    value = Tensor(np.array(-1.0), requires_grad=True)
    out = x.masked_fill(Tensor._constant(np.array([True, False, True])), value)
    (out * Tensor(np.arange(1.0, 7.0).reshape(2, 3))).sum().backward()
    assert out.tolist() == [[-1.0, 1.0, -1.0], [-1.0, 4.0, -1.0]]
    assert value.grad.item() == 1 + 3 + 4 + 6
    assert x.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 5.0, 0.0]]


def test_masked_fill_in_place_follows_torchs_rule_for_writes() -> None:
    x = chaingrad.zeros(2, 2)
    assert x.masked_fill_(x == 0, 3.0) is x and x.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    w = chaingrad.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="masked_fill_: a leaf Variable that requires grad"):
        w.masked_fill_(w > 0, 0.0)
    with chaingrad.no_grad():
        w.masked_fill_(chaingrad.tensor([True, False, False]), 0.0)
    assert w.tolist() == [0.0, 1.0, 1.0] and w.requires_grad and w.is_leaf


def test_a_stable_topk_and_the_gradient_of_what_it_picks() -> None:
    x = Tensor([2.0, 5.0, 5.0, 1.0], requires_grad=True)
    top = chaingrad.topk(x, 2)
    assert top.indices.tolist() == [1, 2] and top.values.tolist() == [5.0, 5.0]
    low = x.topk(1, largest=False)
    (top.values.sum() + low.values.sum() * 10).backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 10.0]


def test_logsumexp_is_stable_where_exp_would_overflow(torch) -> None:
    big = np.array([[1000.0, 1000.0], [-1000.0, 0.0]])
    np.testing.assert_allclose(Tensor(big).logsumexp(1).numpy(),
                               torch.logsumexp(torch.tensor(big), 1).numpy(), rtol=1e-15)
    assert chaingrad.logsumexp(Tensor(big), (0, 1), keepdim=True).shape == (1, 1)


def test_cumsum_of_integers_is_int64_as_torchs(torch) -> None:
    for dtype in (np.int32, np.bool_, np.uint8):
        array = np.array([[1, 0, 1], [1, 1, 0]]).astype(dtype)
        ours, theirs = _both(torch, array)
        assert ours.cumsum(1).tolist() == theirs.cumsum(1).tolist()
        assert str(ours.cumsum(1).dtype)[-5:] == str(theirs.cumsum(1).dtype)[-5:] == "int64"
    assert chaingrad.cumsum(chaingrad.tensor([1, 2]), 0, dtype=chaingrad.float64).dtype == \
        chaingrad.float64


@pytest.mark.parametrize("make", [
    lambda x, y: (x.cumsum(1) * y).sum(),
    lambda x, y: chaingrad.einsum("ij,kj->ik", x, y).tanh().sum(),
    lambda x, y: chaingrad.einsum("ij->", x * y),
    lambda x, y: (x.masked_fill(x > 0, 0.0) * y).logsumexp(1).sum(),
    lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.sigmoid()),
    lambda x, y: (x.gelu() * y.leaky_relu(0.2) + x.softplus(beta=2) * y.erf()).sum(),
], ids=["cumsum", "einsum", "einsum_one_operand", "masked_fill_logsumexp",
        "binary_cross_entropy", "elementwise_with_parameters"])
def test_the_new_primitives_compile_to_the_eager_bits(make) -> None:
    rng = np.random.default_rng(2)
    arrays = rng.normal(size=(2, 3, 4))

    def run(compiled: bool):
        x, y = (Tensor(a, requires_grad=True) for a in arrays)
        fn = chaingrad.compile(lambda: make(x, y)) if compiled else (lambda: make(x, y))
        out = fn()
        out.backward()
        return out.item(), x.grad.numpy(), y.grad.numpy()

    eager, compiled = run(False), run(True)
    assert eager[0] == compiled[0]
    for a, b in zip(eager[1:], compiled[1:]):
        assert np.array_equal(a, b)


def test_grad_fn_names_the_new_ops_as_torch_does() -> None:
    x = Tensor([0.5, 0.25], requires_grad=True)
    names = {"Log1PBackward0": x.log1p(), "Expm1Backward0": x.expm1(),
             "ErfBackward0": x.erf(), "LeakyReluBackward0": x.leaky_relu(),
             "GeluBackward0": x.gelu(), "SoftplusBackward0": x.softplus(),
             "CumsumBackward0": x.cumsum(0)}
    for name, out in names.items():
        assert out.grad_fn.name() == name


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda x: x.masked_fill(x, 0.0), RuntimeError,
     "masked_fill: only supports boolean masks, but got mask with dtype float32"),
    (lambda x: x.masked_fill(chaingrad.tensor([True, False, True]), 1.0), RuntimeError,
     r"masked_fill: the mask of shape \(3,\) does not broadcast to the tensor's shape \(2, 2\)"),
    (lambda x: x.masked_fill(x > 0, x), RuntimeError, "only supports a 0-dimensional value"),
    (lambda x: x[0].tril(), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda x: x.split([1, 2]), RuntimeError, "split: split_with_sizes expects split_sizes to "
                                              "sum exactly to 2"),
    (lambda x: x.split(0), RuntimeError, "split: split_size must be positive"),
    (lambda x: x.chunk(0), RuntimeError, "chunk: chunk expects `chunks` to be greater than 0"),
    (lambda x: x.topk(3), RuntimeError, r"topk: selected index k out of range \(k=3"),
    (lambda x: x.gather(0, np.array([[0]], dtype=np.int32)), RuntimeError,
     "gather: Expected dtype int64 for index, got int32"),
    (lambda x: x.gather(0, np.array([[2]])), RuntimeError,
     "gather: index 2 is out of bounds for dimension 0 with size 2"),
    (lambda x: x.gather(0, np.array([0])), RuntimeError, "gather: Index tensor must have the "
                                                         "same number of dimensions"),
    (lambda x: x.roll((1, 2), 0), RuntimeError, "roll: shifts and dimensions must align"),
    (lambda x: x.repeat(2), RuntimeError, "repeat: number of dimensions of repeat dims"),
    (lambda x: x.bmm(x), RuntimeError, r"bmm: batch1 must be a 3D tensor, got shape \(2, 2\)"),
    (lambda x: chaingrad.einsum("ii->i", x), NotImplementedError,
     "einsum: operand 0 repeats a letter"),
    (lambda x: chaingrad.einsum("ij,jk->ik", x, x[:1]), NotImplementedError,
     "einsum: 'j' is of size 2 in one operand and 1 in another; broadcasting"),
    (lambda x: chaingrad.einsum("ij,jk->ik", x), ValueError,
     "einsum: 'ij,jk->ik' names 2 operand"),
    (lambda x: chaingrad.einsum("ij->k", x), ValueError, "einsum: the output 'k'"),
    (lambda x: chaingrad.einsum("i->i", x), ValueError, "do not match its 2 dim"),
    (lambda x: chaingrad.einsum(x, [0, 1]), NotImplementedError, "sublist format"),
    (lambda x: x.histc(bins=0), RuntimeError, "histc: bins must be > 0"),
    (lambda x: x.logsumexp(()), RuntimeError, "logsumexp: dim must name at least one dim"),
])
def test_an_op_refuses_what_torch_refuses_naming_itself(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call(Tensor(np.array([[1.0, -1.0], [2.0, 0.5]], dtype=np.float32)))
