"""chaingrad/utils/data/fetch.py: how a Fetcher turns indices into a batch, for a map-style
dataset (through its ``__getitems__`` when it has one) and for a stream (which it ends)."""

from __future__ import annotations

import pytest

from chaingrad.utils.data.fetch import Fetcher


class Letters:
    """A map-style dataset that records how it was asked."""

    def __init__(self, getitems):
        self.asked = []
        if getitems:
            self.__getitems__ = self.getitems

    def __getitem__(self, i):
        self.asked.append(i)
        return "abcde"[i]

    def getitems(self, indices):
        self.asked.append(tuple(indices))
        return ["abcde"[i] for i in indices]


@pytest.mark.parametrize("getitems, asked", [(False, [3, 1]), (True, [(3, 1)])])
def test_a_batch_of_a_map_dataset_is_asked_for_at_once_where_it_can_be(getitems, asked):
    letters = Letters(getitems)
    fetcher = Fetcher(letters, iterable=False, batched=True, collate_fn="".join,
                      drop_last=False)
    assert fetcher.fetch([3, 1]) == "db"
    assert letters.asked == asked


def test_without_batches_each_index_is_one_sample():
    fetcher = Fetcher(Letters(False), iterable=False, batched=False, collate_fn=str.upper,
                      drop_last=False)
    assert [fetcher.fetch(i) for i in (0, 4)] == ["A", "E"]


@pytest.mark.parametrize("drop_last, batches", [(False, [[0, 1, 2], [3, 4]]),
                                                (True, [[0, 1, 2]])])
def test_a_stream_gives_batches_of_the_indices_length_until_it_ends(drop_last, batches):
    fetcher = Fetcher(iter(range(5)), iterable=True, batched=True, collate_fn=list,
                      drop_last=drop_last)
    got = []
    with pytest.raises(StopIteration):
        while True:
            got.append(fetcher.fetch([None] * 3))
    assert got == batches
    with pytest.raises(StopIteration):  # and stays ended
        fetcher.fetch([None] * 3)
