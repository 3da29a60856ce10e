"""chaingrad/tensor_engine/printing.py: a tensor prints as torch 2.13 prints the same numbers,
dtype and shape, under the same print options; the one difference allowed is the module's
name in a dtype (``dtype=chaingrad.float64`` where torch prints ``dtype=torch.float64``)."""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numerics import examples

import chaingrad
from chaingrad.tensor_engine import printing

DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
            "sci_mode": None}


@contextlib.contextmanager
def printing_as(torch: Any, default_dtype: str = "float32", **options: Any) -> Any:
    """The same print options and default dtype on both sides; torch's and chaingrad's
    defaults again afterwards, whatever happens."""
    try:
        chaingrad.set_printoptions(**options)
        torch.set_printoptions(**options)
        chaingrad.set_default_dtype(getattr(chaingrad, default_dtype))
        torch.set_default_dtype(getattr(torch, default_dtype))
        yield
    finally:
        chaingrad.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
        chaingrad.set_default_dtype(chaingrad.float32)
        torch.set_default_dtype(torch.float32)


def holding(array: np.ndarray, requires_grad: bool = False) -> chaingrad.Tensor:
    """A chaingrad tensor holding ``array`` as it is, nan and inf included: the factories
    refuse them, so they are written into the memory that ``from_numpy`` shares, as a
    user's own array can be changed under a tensor."""
    t = chaingrad.from_numpy(np.zeros_like(array))
    t.numpy()[...] = array
    return t.requires_grad_() if requires_grad else t


def as_torch(text: str) -> str:
    """chaingrad's text with a dtype named as torch names it."""
    return text.replace("dtype=chaingrad.", "dtype=torch.")


def same_text(torch: Any, array: np.ndarray, requires_grad: bool = False) -> tuple[str, str]:
    """(chaingrad's repr as torch would name its dtype, torch's repr) of ``array``."""
    ours = holding(array, requires_grad)
    theirs = torch.from_numpy(array.copy()).requires_grad_(requires_grad)
    return as_torch(repr(ours)), repr(theirs)


# ---- random tensors, random options: the text is torch's ----

FLOATS = ("float16", "float32", "float64")
DTYPES = (*FLOATS, "int64", "int32", "int16", "int8", "uint8", "bool")

# numbers across the magnitudes that switch torch's notation, whole ones, and the specials
entries = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-10, 10),
    st.integers(-10**6, 10**6).map(float),
    st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-45, 45)),
    st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1e8, 1e-4, 1000.0]),
)
shapes = st.one_of(
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=7),
    st.tuples(st.integers(900, 2100)),                        # a long row: summarised
    st.tuples(st.integers(1, 12), st.integers(80, 200)),       # wide rows
    st.tuples(st.integers(1, 4), st.integers(1, 9), st.integers(30, 60)),
)
options = st.one_of(
    st.just({}),
    st.fixed_dictionaries({}, optional={
        "precision": st.integers(0, 10),
        "threshold": st.one_of(st.integers(0, 2000), st.just(math.inf)),
        "edgeitems": st.integers(0, 5),
        "linewidth": st.integers(0, 160),
        "profile": st.sampled_from(["default", "short", "full"]),
        "sci_mode": st.sampled_from([None, True, False]),
    }),
)


@st.composite
def arrays(draw: Any) -> np.ndarray:
    dtype, shape = np.dtype(draw(st.sampled_from(DTYPES))), draw(shapes)
    if dtype.kind != "f":
        return draw(hnp.arrays(dtype, shape))
    array = draw(hnp.arrays(np.float64, shape, elements=entries))
    with np.errstate(over="ignore"):
        return array.astype(dtype)  # what float16 cannot hold becomes inf, or 0


@examples(200)
@given(array=arrays(), options=options, default_dtype=st.sampled_from(["float32", "float64"]),
       grad=st.sampled_from(["none", "requires_grad", "grad_fn"]))
def test_any_tensor_prints_as_torch_under_any_options(torch, array, options, default_dtype,
                                                      grad) -> None:
    floating = array.dtype.kind == "f"
    with printing_as(torch, default_dtype, **options):
        if grad == "grad_fn" and floating and np.isfinite(array).all():
            ours = holding(array, requires_grad=True) * 1   # the same numbers, <MulBackward0>
            theirs = torch.from_numpy(array.copy()).requires_grad_() * 1
            assert as_torch(repr(ours)) == repr(theirs)
        else:
            ours, theirs = same_text(torch, array, requires_grad=grad != "none" and floating)
            assert ours == theirs


# ---- the cases a learner meets, one by one ----

THIRDS = [n / 3 for n in range(-12, 12)]  # Python's floats: both sides round them alike

CASES = {
    "whole floats": [1.0, 2.0, -3.0],
    "decimals": [1.5, 2.25, -3.125],
    "negative zero": [-0.0, 1.0],
    "negative zero, decimals": [-0.0, 1.5],
    "zeros": [0.0, 0.0],
    "spans over 1000x": [1e-3, 2.0],
    "past 1e8": [1e9, 1.0],
    "below 1e-4": [1e-5, 0.5],
    "nan and a small number": [math.nan, 1e-5],
    "inf with whole numbers": [1.0, -math.inf],
    "only specials": [math.nan, math.inf, -math.inf],
    "rounds up to a wider number": [9.99996, 1.0],
    "0-d": 2.5,
    "0-d whole": -3.0,
    "0-d nan": math.nan,
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_floats_choose_notation_and_digits_as_torch(torch, values, dtype) -> None:
    with np.errstate(over="ignore"):
        ours, theirs = same_text(torch, np.array(values, dtype=dtype))
    assert ours == theirs


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0), (1, 0, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_an_empty_tensor_names_its_size_and_any_dtype_but_the_default(torch, shape,
                                                                      dtype) -> None:
    ours, theirs = same_text(torch, np.zeros(shape, dtype=dtype))
    assert ours == theirs


def test_empty_tensors_read_as_torchs() -> None:
    assert repr(chaingrad.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(chaingrad.tensor([], dtype=chaingrad.int64)) \
        == "tensor([], dtype=chaingrad.int64)"


@pytest.mark.parametrize("make", [
    lambda t: t.tensor(THIRDS).reshape(2, 3, 4),
    lambda t: t.ones(2, 2, 2, 2),
    lambda t: t.arange(3 * 4 * 5 * 6).reshape(3, 4, 5, 6),
    lambda t: t.arange(1000.0).reshape(10, 10, 10),
    lambda t: t.arange(1001.0).reshape(7, 11, 13)[:1].reshape(-1),
    lambda t: t.arange(4000.0).reshape(10, 20, 20),
    lambda t: t.arange(2.0 * 3 * 400).reshape(2, 3, 400),
    lambda t: t.arange(1.0, 91.0).reshape(3, 30) ** 3 / 8,
    lambda t: t.arange(100) - 50,
    lambda t: t.arange(30) > 10,
], ids=["3-d", "4-d", "4-d ints", "1000 entries", "1001", "3-d summarised",
        "summarised rows", "wrapped sci", "wrapped ints", "wrapped bools"])
def test_blocks_rows_and_summaries_are_laid_out_as_torch(torch, make) -> None:
    assert as_torch(repr(make(chaingrad))) == repr(make(torch))


def test_a_million_entries_print_their_corners_as_torch(torch) -> None:
    make = lambda t: t.arange(1_000_000.0).reshape(1000, 1000)  # noqa: E731
    assert repr(make(chaingrad)) == repr(make(torch))


# ---- suffixes: dtype, grad_fn, requires_grad, and where they break the line ----


@pytest.mark.parametrize("make", [
    lambda t: t.tensor([1.0, 2.0], requires_grad=True),
    lambda t: t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True) + 1,
    lambda t: t.tensor([1.0, 2.0], requires_grad=True) * 3,
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).sum(),
    lambda t: t.tensor([[1.0, 2.0]], requires_grad=True) @ t.ones(2, 2),
    lambda t: t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True).tanh(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).double(),
    lambda t: t.tensor([1, 2], dtype=t.int32),
    lambda t: t.tensor([1, 2], dtype=t.uint8),
    lambda t: t.tensor([1.0, 2.0], dtype=t.float16),
], ids=["leaf", "float64 leaf", "add", "mul", "sum", "mm", "tanh", "to", "int32", "uint8",
        "float16"])
def test_suffixes_are_torchs(torch, make) -> None:
    assert as_torch(repr(make(chaingrad))) == repr(make(torch))


@pytest.mark.parametrize("n", range(1, 14))
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_suffixes_break_the_line_where_torchs_do(torch, n, dtype) -> None:
    """Rows of 1 to 13 entries end at every column near 80: a suffix stays on the line or
    goes to the next as in torch, measured as torch spells it (``torch.float64``, four
    characters shorter than ``chaingrad.float64``) so that the lines are torch's."""
    array = (np.arange(n) + 0.5).astype(dtype)
    ours, theirs = same_text(torch, array, requires_grad=True)
    assert ours == theirs
    grown = holding(array, requires_grad=True) * 1
    assert as_torch(repr(grown)) == repr(torch.from_numpy(array).requires_grad_() * 1)


def test_a_parameter_prints_as_torchs(torch) -> None:
    ours = chaingrad.nn.Parameter(chaingrad.tensor([[0.5, -1.0]]))
    theirs = torch.nn.Parameter(torch.tensor([[0.5, -1.0]]))
    assert repr(ours) == repr(theirs)


def test_print_and_str_give_the_same_text(torch, capsys) -> None:
    def make(t: Any) -> Any:
        return t.tensor([[1.0, 2.5], [-3.0, 1e-5]], dtype=t.float64, requires_grad=True)

    print(make(chaingrad))
    ours = capsys.readouterr().out
    print(make(torch))
    assert as_torch(ours) == capsys.readouterr().out
    assert str(make(chaingrad)) == repr(make(chaingrad)) == ours[:-1]


@pytest.mark.parametrize("shape", [(2, 3), (), (0,), (4,)])
@pytest.mark.parametrize("use", [
    lambda s: s, lambda s: s[1:], lambda s: s[::-1], lambda s: (1,) + s, lambda s: s + (5,),
    lambda s: s + s, lambda s: s * 2, lambda s: 2 * s, lambda s: s[-1:][0] if s else 0,
], ids=["itself", "slice", "reversed", "tuple + size", "size + tuple", "size + size",
        "size * 2", "2 * size", "an entry"])
def test_a_size_and_what_is_made_of_it_print_as_torchs(torch, shape, use) -> None:
    ours, theirs = use(chaingrad.zeros(shape).shape), use(torch.zeros(shape).shape)
    assert repr(ours).replace("chaingrad.", "torch.") == repr(theirs)
    assert str(ours) == repr(ours) and ours == theirs


# ---- set_printoptions ----


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"precision": 0}, {"precision": 8}, {"threshold": 5},
    {"threshold": 5, "edgeitems": 1}, {"edgeitems": 0, "threshold": 3}, {"linewidth": 30},
    {"linewidth": 0}, {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"},
    {"profile": "full"}, {"profile": "short", "precision": 6},
], ids=str)
@pytest.mark.parametrize("make", [
    lambda t: t.tensor(THIRDS[:10]), lambda t: t.arange(2000.0) * 1e5,
    lambda t: t.arange(60).reshape(3, 4, 5), lambda t: t.tensor(1e-6),
    lambda t: t.tensor([[1e-6, 2.0], [0.0, 4.0]], dtype=t.float64, requires_grad=True),
], ids=["row", "long sci", "3-d ints", "0-d small", "2-d float64 leaf"])
def test_print_options_act_as_torchs(torch, options, make) -> None:
    with printing_as(torch, **options):
        ours, theirs = as_torch(repr(make(chaingrad))), repr(make(torch))
    assert ours == theirs


def test_set_printoptions_is_torchs_call(torch) -> None:
    """The documented example of torch.set_printoptions, and sci_mode, which every call sets
    (to None unless given), as torch's does."""
    with printing_as(torch, precision=2):
        assert repr(chaingrad.tensor([1.12345])) == "tensor([1.12])"
        chaingrad.set_printoptions(threshold=5)
        assert repr(chaingrad.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
        chaingrad.set_printoptions(profile="default")
        assert repr(chaingrad.tensor([1.12345])) == "tensor([1.1235])"
        chaingrad.set_printoptions(sci_mode=True)
        chaingrad.set_printoptions(precision=3)
        assert printing.get_printoptions() == dict(DEFAULTS, precision=3)
    assert printing.get_printoptions() == DEFAULTS


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"precision": -1}, ValueError, r"precision must be an int >= 0, got -1"),
    ({"precision": 2.5}, TypeError, r"precision must be an int >= 0, got float 2.5"),
    ({"edgeitems": True}, TypeError, r"edgeitems must be an int >= 0, got bool True"),
    ({"linewidth": "80"}, TypeError, r"linewidth must be an int >= 0, got str '80'"),
    ({"threshold": "big"}, TypeError, r"threshold must be a number, got str 'big'"),
    ({"threshold": math.nan}, ValueError, r"threshold must be a number, got nan"),
    ({"sci_mode": 1}, TypeError, r"sci_mode must be True, False or None, got int 1"),
    ({"profile": "long"}, ValueError,
     r"profile must be 'default', 'short' or 'full', got 'long'"),
])
def test_bad_options_are_refused_and_change_nothing(options, error, message) -> None:
    with pytest.raises(error, match=r"set_printoptions: " + message):
        chaingrad.set_printoptions(**{"precision": 7, "threshold": 7, **options})
    assert printing.get_printoptions() == DEFAULTS
