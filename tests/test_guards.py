"""chaingrad/guards.py: ``all_finite``, the one finiteness check of both engines' arrays,
answers as ``np.isfinite(a).all()`` does, for every layout a gradient comes in."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingrad.guards import all_finite

LAYOUTS = {
    "row-major": lambda a: a,
    "transposed": lambda a: a.T,
    "strided": lambda a: a[::2, ::-1],
    "broadcast over rows": lambda a: np.broadcast_to(a[:1], a.shape),
    "broadcast over columns": lambda a: np.broadcast_to(a[:, :1], a.shape),
    "one number broadcast": lambda a: np.broadcast_to(a[0, 0], (3,) + a.shape),
    "a broadcast added as an axis": lambda a: np.broadcast_to(a, (2,) + a.shape),
}


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6),
       dtype=st.sampled_from([np.float32, np.float64]),
       bad=st.sampled_from([None, np.nan, np.inf, -np.inf, 1e38]), where=st.integers(0, 35),
       layout=st.sampled_from(sorted(LAYOUTS)))
def test_all_finite_answers_as_isfinite_in_every_layout(rows, cols, dtype, bad, where, layout):
    a = np.random.default_rng(where).standard_normal((rows, cols)).astype(dtype)
    if bad is not None:
        a.flat[where % a.size] = bad  # 1e38: finite, but its square overflows float32
    seen = LAYOUTS[layout](a)
    assert all_finite(seen) == bool(np.isfinite(seen).all())
