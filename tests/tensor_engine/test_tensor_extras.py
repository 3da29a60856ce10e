"""The Tensor ops of issue 24 beyond what tests/tensor_table.py checks entry by entry: cumsum
of integers, compiling the new primitives, and the errors that name the op (the others'
tests are beside their modules': test_sorting.py, test_indexing.py, test_reductions.py,
test_grad_fn.py, and test_generator.py for multinomial)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
import chaingrad.nn.functional as F
from chaingrad import Tensor


def _both(torch, array: np.ndarray):
    """The same array as a chaingrad and a torch tensor (its dtype kept)."""
    return chaingrad.tensor(array), torch.tensor(array)


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
