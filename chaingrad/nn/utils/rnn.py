"""torch.nn.utils.rnn: how sequences of different lengths go through a recurrent layer as
one batch, padded or packed.

Padded, a batch is one tensor of shape (T, B, *) (or (B, T, *) with ``batch_first``), each
sequence filled up to the longest one's T steps with ``padding_value``: ``pad_sequence``
makes it, ``unpad_sequence`` takes the sequences back out.

Packed, a batch is a ``PackedSequence``: only the real steps, step by step, the sequences
sorted longest first, so that at each step the sequences still running are the first ones::

    sequences (sorted)     a1 a2 a3        data        a1 b1 c1 a2 b2 a3
                           b1 b2           batch_sizes  3        2     1
                           c1

``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` take one and give one back: at step t they run the
first ``batch_sizes[t]`` sequences only, so that each sequence's last state is its own
(not the state after its padding). ``pack_padded_sequence`` and ``pack_sequence`` make one
(with ``enforce_sorted=False`` from sequences in any order: ``sorted_indices`` says which
went where), ``pad_packed_sequence`` and ``unpack_sequence`` undo it.

Packing and padding only pick entries, so each is one indexing (or ``cat`` and ``stack``)
of the ops a learner knows: the gradient flows back through them by those ops' rules.

Example:
    >>> import chaingrad as torch
    >>> a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0])
    >>> packed = pack_sequence([a, b])
    >>> packed.data.tolist(), packed.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
    >>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]], [3, 2])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ... import torch_names
from ...tensor_engine.factories import tensor_argument
from ...tensor_engine.functions import cat, stack
from ...tensor_engine.tensor import Tensor, constant

__all__ = ["PackedSequence", "PackedSequence_", "Tensor", "invert_permutation",
           "pack_padded_sequence", "pack_sequence", "pad_packed_sequence", "pad_sequence",
           "unpack_sequence", "unpad_sequence"]


class PackedSequence_(NamedTuple):  # noqa: N801 - torch's name
    """The four fields of a ``PackedSequence``, as torch's namedtuple."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """A batch of sequences of different lengths, packed step by step, as torch's.

    Attributes:
        data: The real steps, of shape (sum of the lengths, *): step 0 of each sequence
            (longest first), then step 1 of those that have one, and so on.
        batch_sizes: How many sequences have each step (int64, non-increasing).
        sorted_indices: Which sequence of the batch as given is the k-th longest, or None
            when it came sorted (``enforce_sorted=True``).
        unsorted_indices: The inverse permutation: where each sequence as given went.

    Make one with ``pack_padded_sequence`` or ``pack_sequence``. It unpacks as the
    namedtuple it is (``data, batch_sizes, sorted_indices, unsorted_indices = packed``).

    Example:
        >>> import chaingrad as torch
        >>> packed = pack_sequence([torch.ones(1), torch.ones(2)], enforce_sorted=False)
        >>> packed.batch_sizes.tolist(), packed.sorted_indices.tolist()
        ([2, 1], [1, 0])
        >>> packed.double().data.dtype
        chaingrad.float64
    """

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if batch_sizes is None:  # torch's older form: PackedSequence((data, batch_sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise TypeError(f"PackedSequence: expected data and batch_sizes, or data as "
                                f"a list or tuple of length 2 (data, batch_sizes); got "
                                f"{type(data).__name__}")
            data, batch_sizes = data
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(*args, **kwargs)``, the rest as it is; self if ``data`` is unchanged."""
        return self._with(self.data.to(*args, **kwargs))

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Self: chaingrad's tensors are on the CPU."""
        return self._with(self.data.cpu(*args, **kwargs))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """As ``Tensor.cuda``: an error, as in torch's CPU build."""
        return self._with(self.data.cuda(*args, **kwargs))

    def pin_memory(self) -> PackedSequence:
        """Not yet, as ``Tensor.pin_memory``: pinned memory is for copies to a GPU."""
        raise torch_names.missing("chaingrad.Tensor", "pin_memory", torch_names.TENSOR)

    def double(self) -> PackedSequence:
        """``data`` as float64."""
        return self.to(dtype=np.float64)

    def float(self) -> PackedSequence:
        """``data`` as float32."""
        return self.to(dtype=np.float32)

    def half(self) -> PackedSequence:
        """``data`` as float16."""
        return self.to(dtype=np.float16)

    def long(self) -> PackedSequence:
        """``data`` as int64."""
        return self.to(dtype=np.int64)

    def int(self) -> PackedSequence:
        """``data`` as int32."""
        return self.to(dtype=np.int32)

    def short(self) -> PackedSequence:
        """``data`` as int16."""
        return self.to(dtype=np.int16)

    def char(self) -> PackedSequence:
        """``data`` as int8."""
        return self.to(dtype=np.int8)

    def byte(self) -> PackedSequence:
        """``data`` as uint8."""
        return self.to(dtype=np.uint8)

    @property
    def is_cuda(self) -> bool:
        """False: chaingrad runs on the CPU."""
        return False

    def is_pinned(self) -> bool:
        """False: chaingrad's memory is never pinned."""
        return False

    def _with(self, data: Tensor) -> PackedSequence:
        return self if data is self.data else type(self)(
            data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of 0 .. n-1 (None for None): ``out[permutation[k]] = k``.

    Example:
        >>> import chaingrad as torch
        >>> invert_permutation(torch.tensor([2, 0, 1])).tolist()
        [1, 2, 0]
    """
    if permutation is None:
        return None
    order = tensor_argument(permutation, "invert_permutation", "permutation")._value
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=order.dtype)
    return constant(inverse)


def pack_padded_sequence(input: Any, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch: keep the first ``lengths[b]`` steps of each sequence b.

    Args:
        input: The padded batch, (T, B, *) (or (B, T, *) with ``batch_first``).
        lengths: Each sequence's length (a list or a 1-D tensor), at most T.
        batch_first: Whether the batch is the first dimension of ``input``.
        enforce_sorted: Whether ``lengths`` is already longest first (else an error);
            False sorts the sequences, keeping the order in ``sorted_indices``.

    Returns:
        The ``PackedSequence``; its ``data``'s gradient goes back to ``input``'s entries.

    Raises:
        RuntimeError: ``lengths`` is not sorted (with ``enforce_sorted``), holds a length
            of 0 or less, or has not one length per sequence, as torch's.
        ValueError: a length is more than T.

    Example:
        >>> import chaingrad as torch
        >>> padded = torch.tensor([[1.0, 4.0], [2.0, 0.0]])       # (T=2, B=2)
        >>> packed = pack_padded_sequence(padded, [2, 1])
        >>> packed.data.tolist(), packed.batch_sizes.tolist()
        ([1.0, 4.0, 2.0], [2, 1])
    """
    x = tensor_argument(input, "pack_padded_sequence")
    lengths = _lengths("pack_padded_sequence", lengths)
    if x.ndim < 2:
        raise IndexError(f"pack_padded_sequence: input needs a time and a batch dimension, "
                         f"got a {x.ndim}-D tensor")
    batch_dim = 0 if batch_first else 1
    steps, batch = x.shape[1 - batch_dim], x.shape[batch_dim]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    order, sorted_indices = np.arange(batch), None
    if not enforce_sorted:  # longest first; ties in their order, as torch's sort
        order = np.argsort(-lengths, kind="stable")
        lengths, sorted_indices = lengths[order], constant(order.astype(np.int64))
    elif np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if batch == 0 or lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if lengths[0] > steps:
        raise ValueError(f"pack_padded_sequence: a sequence of length {lengths[0]} in an "
                         f"input of {steps} steps")
    running = np.arange(lengths[0])[:, None] < lengths[None, :]  # (t, k): the k-th longest
    step, k = np.nonzero(running)  # has a step t; in the order of data: t, then k
    given = order[k]  # the place in the batch as given
    data = x[(given, step) if batch_first else (step, given)]
    return PackedSequence(data, constant(running.sum(1)), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Unpack a ``PackedSequence`` into a padded batch and each sequence's length, in the
    order the sequences were given (``pack_padded_sequence``'s inverse).

    Args:
        sequence: The ``PackedSequence`` (an RNN's output, say).
        batch_first: Give (B, T, *) instead of (T, B, *).
        padding_value: What fills the steps past each sequence's end.
        total_length: Pad to this many steps (at least the longest length), so that the
            shape does not depend on the batch.

    Returns:
        The padded batch, and the lengths as an int64 tensor.

    Raises:
        ValueError: ``total_length`` is less than the longest length.

    Example:
        >>> import chaingrad as torch
        >>> packed = pack_sequence([torch.tensor([1.0]), torch.tensor([2.0, 3.0])],
        ...                        enforce_sorted=False)
        >>> padded, lengths = pad_packed_sequence(packed, padding_value=-1.0, total_length=3)
        >>> padded.tolist(), lengths.tolist()
        ([[1.0, 2.0], [-1.0, 3.0], [-1.0, -1.0]], [1, 2])
    """
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: expected a PackedSequence, got "
                        f"{type(sequence).__name__}")
    data, batch_sizes = sequence.data, sequence.batch_sizes._value
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {steps}")
        steps = total_length
    batch = int(batch_sizes[0]) if len(batch_sizes) else 0
    running = np.zeros((steps, batch), dtype=bool)  # (t, k): the k-th longest has a step t
    running[:len(batch_sizes)] = np.arange(batch)[None, :] < batch_sizes[:, None]
    source = np.full(running.shape, data.shape[0])  # each entry's row of data, or padding's
    source[running] = np.arange(data.shape[0])
    lengths = running.sum(0)
    if sequence.unsorted_indices is not None:  # back to the order given
        unsorted = sequence.unsorted_indices._value
        source, lengths = source[:, unsorted], lengths[unsorted]
    padding = constant(np.full((1, *data.shape[1:]), padding_value, dtype=data._value.dtype))
    padded = cat([data, padding])[source.T if batch_first else source]
    return padded, constant(lengths.astype(np.int64))


def pad_sequence(sequences: Tensor | Iterable[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths (each (L_i, *)) into one batch (T, B, *),
    each filled up to the longest one's T steps with ``padding_value``.

    Args:
        sequences: The sequences (a list of tensors; a tensor is its rows).
        batch_first: Give (B, T, *) instead of (T, B, *).
        padding_value: What the padding is (in the first sequence's dtype, as are all).
        padding_side: ``'right'`` (after each sequence) or ``'left'`` (before it).

    Returns:
        The padded batch.

    Raises:
        RuntimeError: ``sequences`` is empty or not iterable, ``padding_side`` is neither
            side, or the sequences' steps differ in shape.

    Example:
        >>> import chaingrad as torch
        >>> pad_sequence([torch.tensor([1.0, 2.0]), torch.tensor([3.0])],
        ...              batch_first=True, padding_side="left").tolist()
        [[1.0, 2.0], [0.0, 3.0]]
    """
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    elif not isinstance(sequences, Iterable) or isinstance(sequences, (str, bytes)):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    given = [tensor_argument(s, "pad_sequence", f"sequences[{i}]")
             for i, s in enumerate(sequences)]
    if not given:
        raise RuntimeError("received an empty list of sequences")
    first = given[0]
    for i, s in enumerate(given):
        if s.ndim == 0 or s.shape[1:] != first.shape[1:]:
            raise RuntimeError(f"pad_sequence: each sequence is (L, *) with the same *: "
                               f"sequences[0] has shape {tuple(first.shape)}, sequences[{i}] "
                               f"{tuple(s.shape)}")
    longest = max(s.shape[0] for s in given)
    padded = []
    for s in given:
        s = s if s.dtype == first.dtype else s.to(first.dtype)
        if s.shape[0] < longest:
            fill = constant(np.full((longest - s.shape[0], *first.shape[1:]), padding_value,
                                    dtype=first._value.dtype))
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (each (L_i, *)): ``pad_sequence``, then
    ``pack_padded_sequence`` with their lengths.

    Example:
        >>> import chaingrad as torch
        >>> pack_sequence([torch.tensor([1, 2, 3]), torch.tensor([4])]).data.tolist()
        [1, 4, 2, 3]
    """
    given = list(sequences)
    padded = pad_sequence(given)  # which checks each is a tensor of one or more dimensions
    return pack_padded_sequence(padded, [s.shape[0] for s in given],
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length (``pad_sequence``'s
    inverse). Unlike torch's, the batch is left as it is (torch's transposes it in place
    when ``batch_first`` is False).

    Example:
        >>> import chaingrad as torch
        >>> padded = pad_sequence([torch.tensor([1.0, 2.0]), torch.tensor([3.0])])
        >>> [s.tolist() for s in unpad_sequence(padded, torch.tensor([2, 1]))]
        [[1.0, 2.0], [3.0]]
    """
    x = tensor_argument(padded_sequences, "unpad_sequence", "padded_sequences")
    if x.ndim < 2:
        raise IndexError(f"unpad_sequence: padded_sequences needs a time and a batch "
                         f"dimension, got a {x.ndim}-D tensor")
    lengths = _lengths("unpad_sequence", lengths)
    return [x[b, :n] if batch_first else x[:n, b]
            for b, n in zip(range(x.shape[0 if batch_first else 1]), lengths.tolist())]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The sequences of a ``PackedSequence``, in the order given (``pack_sequence``'s
    inverse).

    Example:
        >>> import chaingrad as torch
        >>> packed = pack_sequence([torch.tensor([1.0]), torch.tensor([2.0, 3.0])],
        ...                        enforce_sorted=False)
        >>> [s.tolist() for s in unpack_sequence(packed)]
        [[1.0], [2.0, 3.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def _lengths(where: str, lengths: Any) -> np.ndarray:
    """Sequence lengths (a list, a tuple, an array or a Tensor) as a 1-D int64 array."""
    array = lengths._value if isinstance(lengths, Tensor) else np.asarray(lengths)
    if array.ndim != 1 or array.dtype.kind not in "iuf":
        raise ValueError(f"{where}: lengths must be one whole number per sequence (a list or "
                         f"a 1-D tensor), got {array.dtype} of shape {array.shape}")
    return array.astype(np.int64)


if not TYPE_CHECKING:  # a checker flags a name that is not here by itself
    def __getattr__(name: str) -> object:
        raise torch_names.missing("chaingrad.nn.utils.rnn", name, torch_names.NN_UTILS_RNN)
