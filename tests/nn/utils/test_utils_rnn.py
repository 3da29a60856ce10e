"""chaingrad/nn/utils/rnn.py: packing and padding sequences against torch 2.13's
torch.nn.utils.rnn: the same data, batch sizes, indices and padding, the gradients that
flow back through them in float32 and float64, the PackedSequence's fields and methods, and
torch's errors. (The recurrent layers' runs of a PackedSequence are in
tests/nn/modules/test_rnn.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
from chaingrad.nn.utils import rnn
from chaingrad.nn.utils.rnn import PackedSequence

DTYPES = [np.float32, np.float64]


def leaves(torch, arrays: list[np.ndarray]) -> tuple[list, list]:
    """The same arrays as chaingrad and torch leaves that require gradients."""
    return ([chaingrad.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def same(ours, theirs, what: str = "") -> None:
    """Equal numbers (packing and padding only move entries: exactly), dtype and shape."""
    mine, its = ours.detach().numpy(), theirs.detach().numpy()
    assert mine.dtype == its.dtype and mine.shape == its.shape, what
    assert np.array_equal(mine, its), what


def backward_both(torch, ours, theirs) -> None:
    """Backward of sum(result * w) on both sides, w fixed, float entries of the result."""
    w = np.random.default_rng(3).uniform(0.5, 1.5, tuple(theirs.shape))
    (ours * chaingrad.tensor(w.astype(ours.detach().numpy().dtype))).sum().backward()
    (theirs * torch.tensor(w, dtype=theirs.dtype)).sum().backward()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [3, 5, 1, 3]])
def test_pack_padded_sequence_agrees_with_torch(torch, dtype, batch_first, lengths):
    x = np.random.default_rng(0).standard_normal((4, 5, 2) if batch_first else (5, 4, 2))
    (mine,), (its,) = leaves(torch, [x.astype(dtype)])
    enforce_sorted = lengths == sorted(lengths, reverse=True)
    ours = rnn.pack_padded_sequence(mine, lengths, batch_first, enforce_sorted)
    theirs = torch.nn.utils.rnn.pack_padded_sequence(its, torch.tensor(lengths), batch_first,
                                                     enforce_sorted)
    same(ours.data, theirs.data, "data")
    same(ours.batch_sizes, theirs.batch_sizes, "batch_sizes")
    for field in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(ours, field), getattr(theirs, field)
        assert (a is None) == (b is None) == enforce_sorted
        if a is not None:
            same(a, b, field)
    backward_both(torch, ours.data, theirs.data)
    same(mine.grad, its.grad, "the padded input's gradient")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(("padding_value", "total_length"), [(0.0, None), (-2.5, 7)])
def test_pad_packed_sequence_agrees_with_torch(torch, dtype, batch_first, padding_value,
                                               total_length):
    sequences = [np.random.default_rng(k).standard_normal((n, 3)).astype(dtype)
                 for k, n in enumerate([2, 4, 1, 4])]
    mine, its = leaves(torch, sequences)
    ours = rnn.pad_packed_sequence(rnn.pack_sequence(mine, enforce_sorted=False), batch_first,
                                   padding_value, total_length)
    theirs = torch.nn.utils.rnn.pad_packed_sequence(
        torch.nn.utils.rnn.pack_sequence(its, enforce_sorted=False), batch_first,
        padding_value, total_length)
    same(ours[0], theirs[0], "padded")
    same(ours[1], theirs[1], "lengths")
    backward_both(torch, ours[0], theirs[0])
    for k, (a, b) in enumerate(zip(mine, its)):
        same(a.grad, b.grad, f"the gradient of sequence {k}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_agrees_with_torch(torch, dtype, batch_first, padding_side):
    sequences = [np.random.default_rng(k).standard_normal((n, 2, 3)).astype(dtype)
                 for k, n in enumerate([3, 0, 5, 2])]
    mine, its = leaves(torch, sequences)
    ours = rnn.pad_sequence(mine, batch_first, 0.5, padding_side)
    theirs = torch.nn.utils.rnn.pad_sequence(its, batch_first, 0.5, padding_side)
    same(ours, theirs)
    backward_both(torch, ours, theirs)
    for k, (a, b) in enumerate(zip(mine, its)):
        same(a.grad, b.grad, f"the gradient of sequence {k}")


def test_pad_sequence_takes_torchs_other_inputs(torch):
    ints = [np.array([1, 2, 3]), np.array([4])]
    same(rnn.pad_sequence([chaingrad.tensor(a) for a in ints], padding_value=1.5),
         torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in ints], padding_value=1.5))
    mixed = [chaingrad.ones(2), chaingrad.ones(3, dtype=chaingrad.float64)]
    same(rnn.pad_sequence(mixed), torch.nn.utils.rnn.pad_sequence(
        [torch.ones(2), torch.ones(3, dtype=torch.float64)]))
    rows = np.arange(6.0).reshape(2, 3)  # a tensor is its rows
    same(rnn.pad_sequence(chaingrad.tensor(rows)),
         torch.nn.utils.rnn.pad_sequence(torch.tensor(rows)))
    same(rnn.pad_sequence(iter([chaingrad.ones(1), chaingrad.ones(2)])),
         torch.nn.utils.rnn.pad_sequence([torch.ones(1), torch.ones(2)]))


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_unpack_sequence_and_unpad_sequence_agree_with_torch(torch,
                                                                           enforce_sorted):
    sequences = [np.arange(n * 2.0).reshape(n, 2) + 10 * n for n in [4, 2, 2, 1]]
    if not enforce_sorted:
        sequences = sequences[::-1]
    mine, its = leaves(torch, sequences)
    ours = rnn.pack_sequence(mine, enforce_sorted)
    theirs = torch.nn.utils.rnn.pack_sequence(its, enforce_sorted)
    same(ours.data, theirs.data)
    same(ours.batch_sizes, theirs.batch_sizes)
    unpacked = rnn.unpack_sequence(ours)
    for a, b, given in zip(unpacked, torch.nn.utils.rnn.unpack_sequence(theirs), mine):
        same(a, b)
        assert np.array_equal(a.detach().numpy(), given.detach().numpy())
    for batch_first in (False, True):
        padded = rnn.pad_sequence(mine, batch_first)
        lengths = chaingrad.tensor([len(s) for s in sequences])
        unpadded = rnn.unpad_sequence(padded, lengths, batch_first)
        expected = torch.nn.utils.rnn.unpad_sequence(
            torch.nn.utils.rnn.pad_sequence(its, batch_first), torch.tensor(lengths.numpy()),
            batch_first)
        for a, b in zip(unpadded, expected):
            same(a, b)
    sum(s.sum() for s in unpacked).backward()
    assert all(np.array_equal(s.grad.numpy(), np.ones_like(s.detach().numpy())) for s in mine)


def test_a_packed_sequence_is_torchs_namedtuple(torch):
    packed = rnn.pack_sequence([chaingrad.ones(1, 2), chaingrad.ones(3, 2)], enforce_sorted=False)
    theirs = torch.nn.utils.rnn.pack_sequence([torch.ones(1, 2), torch.ones(3, 2)],
                                              enforce_sorted=False)
    assert isinstance(packed, tuple) and isinstance(packed, rnn.PackedSequence_)
    assert packed._fields == theirs._fields
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert data is packed.data and batch_sizes.tolist() == [2, 1, 1]
    assert sorted_indices.tolist() == theirs.sorted_indices.tolist() == [1, 0]
    assert unsorted_indices.tolist() == theirs.unsorted_indices.tolist()
    assert str(batch_sizes.dtype) == "chaingrad.int64"
    assert repr(packed).startswith("PackedSequence(data=tensor(")
    assert packed.to(chaingrad.float32) is packed and packed.float() is packed
    assert packed.cpu() is packed and packed.is_cuda is False and packed.is_pinned() is False
    double = packed.double()
    assert isinstance(double, PackedSequence) and double.data.dtype == chaingrad.float64
    assert double.batch_sizes is packed.batch_sizes
    assert double.sorted_indices is packed.sorted_indices
    assert packed.long().data.dtype == chaingrad.int64
    assert packed.half().data.dtype == chaingrad.float16
    with pytest.raises(AssertionError, match="chaingrad computes on the CPU only"):
        packed.cuda()  # as Tensor.cuda
    with pytest.raises(AttributeError, match="chaingrad.Tensor has no 'pin_memory' yet"):
        packed.pin_memory()
    again = PackedSequence(data, batch_sizes, sorted_indices)  # the inverse made again
    assert again.unsorted_indices.tolist() == unsorted_indices.tolist()
    assert PackedSequence((data, batch_sizes)).batch_sizes is batch_sizes
    assert rnn.invert_permutation(None) is None
    assert rnn.invert_permutation(chaingrad.tensor([2, 0, 3, 1])).tolist() == \
        torch.nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 3, 1])).tolist()


def test_the_module_is_where_torch_keeps_it():
    import chaingrad.nn.utils.rnn as by_path

    assert chaingrad.nn.utils.rnn is by_path is rnn
    assert chaingrad.nn.utils.rnn.PackedSequence is PackedSequence


ERRORS = [
    (lambda: rnn.pack_padded_sequence(chaingrad.ones(4, 3), [2, 3, 1]), RuntimeError,
     r"`lengths` array must be sorted in decreasing order when `enforce_sorted` is True"),
    (lambda: rnn.pack_padded_sequence(chaingrad.ones(4, 3), [4, 3, 0]), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda: rnn.pack_padded_sequence(chaingrad.ones(4, 3), [4, 3]), RuntimeError,
     r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
    (lambda: rnn.pack_padded_sequence(chaingrad.ones(4, 3), [5, 3, 1]), ValueError,
     "a sequence of length 5 in an input of 4 steps"),
    (lambda: rnn.pack_padded_sequence(chaingrad.ones(4), [4]), IndexError,
     "needs a time and a batch dimension"),
    (lambda: rnn.pack_padded_sequence(chaingrad.ones(4, 1), [[4]]), ValueError,
     "lengths must be one whole number per sequence"),
    (lambda: rnn.pad_packed_sequence(rnn.pack_sequence([chaingrad.ones(4)]), total_length=3),
     ValueError, "Expected total_length to be at least the length of the longest sequence in "
     "input, but got total_length=3 and max sequence length being 4"),
    (lambda: rnn.pad_packed_sequence(chaingrad.ones(4)), TypeError,
     "expected a PackedSequence, got Tensor"),
    (lambda: rnn.pad_sequence([]), RuntimeError, "received an empty list of sequences"),
    (lambda: rnn.pad_sequence(5), RuntimeError,
     "pad_sequence: Expected iterable for input sequences, but got arg of type: <class 'int'>"),
    (lambda: rnn.pad_sequence([chaingrad.ones(2)], padding_side="middle"), RuntimeError,
     "Expected padding_side to be one of left or right, but got middle."),
    (lambda: rnn.pad_sequence([chaingrad.ones(2, 3), chaingrad.ones(3, 2)]), RuntimeError,
     r"sequences\[0\] has shape \(2, 3\), sequences\[1\] \(3, 2\)"),
    (lambda: rnn.pad_sequence([chaingrad.tensor(1.0)]), RuntimeError,
     r"sequences\[0\] has shape \(\), sequences\[0\] \(\)"),
    (lambda: rnn.pad_sequence(["ab"]), TypeError, "pad_sequence"),
    (lambda: PackedSequence(chaingrad.ones(3)), TypeError,
     "expected data and batch_sizes, or data as a list or tuple of length 2"),
]


@pytest.mark.parametrize(("call", "error", "message"), ERRORS,
                         ids=[f"error{k}" for k in range(len(ERRORS))])
def test_bad_arguments_raise_torchs_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
