"""dtypes as torch's: the constants and their names, equality with numpy's, and the dtype of
an op's result (Python numbers, 0-d and dimensioned tensors, every kind) against torch."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import chaingrad
from chaingrad.tensor_engine import dtypes


def test_constants_aliases_and_names() -> None:
    assert chaingrad.float is chaingrad.float32 and chaingrad.double is chaingrad.float64
    assert chaingrad.long is chaingrad.int64 and chaingrad.int is chaingrad.int32
    assert chaingrad.half is chaingrad.float16 and chaingrad.bool.name == "bool"
    assert repr(chaingrad.float64) == "chaingrad.float64" == str(chaingrad.float64)
    assert chaingrad.get_default_dtype() is chaingrad.float32
    assert chaingrad.float32.is_floating_point and not chaingrad.int64.is_floating_point
    assert (chaingrad.int64.itemsize, chaingrad.bool.itemsize) == (8, 1)


def test_equal_to_numpy_dtypes_and_usable_by_numpy() -> None:
    assert chaingrad.float32 == np.float32 and np.dtype("float32") == chaingrad.float32
    assert chaingrad.float32 != chaingrad.float64 and chaingrad.float32 != "float32"
    assert np.zeros(2, dtype=chaingrad.int64).dtype == np.int64
    assert len({chaingrad.float32, chaingrad.float32, chaingrad.int64}) == 2
    assert pickle.loads(pickle.dumps(chaingrad.bool)) is chaingrad.bool


def test_a_dtype_chaingrad_lacks_is_named() -> None:
    with pytest.raises(TypeError, match="chaingrad has no dtype for numpy's complex128 yet"):
        chaingrad.tensor(np.zeros(2, dtype=np.complex128))
    with pytest.raises(TypeError, match="tensor: dtype must be a chaingrad dtype"):
        chaingrad.tensor([1.0], dtype="no such dtype")


def test_set_default_dtype() -> None:
    chaingrad.set_default_dtype(chaingrad.float64)
    try:
        assert chaingrad.tensor([1.5]).dtype == chaingrad.float64
        assert (chaingrad.tensor([1, 2]) * 0.5).dtype == chaingrad.float64
    finally:
        chaingrad.set_default_dtype(chaingrad.float32)
    with pytest.raises(TypeError, match="set_default_dtype: only"):
        chaingrad.set_default_dtype(chaingrad.int64)


# ---- torch's result dtype ----

KINDS = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
NUMBERS = [True, 2, -3, 2.5]


def _make(lib, dtype: str, zero_dim: bool):
    data = True if dtype == "bool" else 1
    return lib.tensor(data if zero_dim else [data, data], dtype=getattr(lib, dtype))


@pytest.mark.parametrize("a", KINDS)
@pytest.mark.parametrize("b", KINDS)
@pytest.mark.parametrize("zero_dim", [False, True], ids=["dims", "zero_dim_b"])
def test_tensor_with_tensor_promotes_as_torch(torch, a: str, b: str, zero_dim: bool) -> None:
    mine = (_make(chaingrad, a, False) * _make(chaingrad, b, zero_dim)).dtype
    theirs = (_make(torch, a, False) * _make(torch, b, zero_dim)).dtype
    assert mine.name == str(theirs).removeprefix("torch.")


# torch refuses to subtract bools; a negative number with a uint8 tensor wraps around in
# torch, where numpy refuses it (and chaingrad negates as * -1)
NUMBER_CASES = [(a, number, op) for a in KINDS for number in NUMBERS for op in "+*/-"
                if not (op == "-" and (a in ("bool", "uint8") or number is True))
                and not (a == "uint8" and number == -3)]


@pytest.mark.parametrize(("a", "number", "op"), NUMBER_CASES, ids=str)
def test_tensor_with_python_number_promotes_as_torch(torch, a: str, number, op: str) -> None:
    apply = {"+": lambda t: t + number, "*": lambda t: t * number, "/": lambda t: t / number,
             "-": lambda t: number - t}[op]
    mine, theirs = apply(_make(chaingrad, a, False)), apply(_make(torch, a, False))
    assert mine.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert mine.tolist() == pytest.approx(theirs.tolist(), rel=1e-3)


def test_promote_rule_directly() -> None:
    f32, f16, i64 = np.dtype("float32"), np.dtype("float16"), np.dtype("int64")
    assert dtypes.promote([(i64, dtypes.DIMENSIONED), (f16, dtypes.DIMENSIONED)]) == f16
    assert dtypes.promote([(i64, dtypes.DIMENSIONED), (f32, dtypes.ZERO_DIM)]) == f32
    assert dtypes.promote([(f16, dtypes.DIMENSIONED), (np.dtype("float64"),
                                                       dtypes.ZERO_DIM)]) == f16


# ---- bfloat16, through ml_dtypes ----


def test_bfloat16_is_a_real_dtype_with_torchs_numbers(torch) -> None:
    bf16 = chaingrad.bfloat16
    assert repr(bf16) == "chaingrad.bfloat16" and bf16.is_floating_point and bf16.itemsize == 2
    assert pickle.loads(pickle.dumps(bf16)) is bf16
    values = [1.1, 2.2, -3.3e5, 1e-3, 65504.0 * 4]
    ours = chaingrad.tensor(values).bfloat16()
    theirs = torch.tensor(values).bfloat16()
    assert ours.dtype == bf16 and ours.is_floating_point()
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
    assert str(ours) == str(theirs).replace("torch.", "chaingrad.")
    for field in ("bits", "eps", "max", "min", "tiny", "resolution"):
        assert getattr(chaingrad.finfo(bf16), field) == getattr(torch.finfo(torch.bfloat16), field)


def test_a_cast_to_bfloat16_and_back_is_differentiable(torch) -> None:
    x = chaingrad.tensor([1.1, -2.7], requires_grad=True)
    y = x.to(chaingrad.bfloat16)
    assert y.requires_grad
    (y.float() * chaingrad.tensor([3.0, 5.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 5.0]


@pytest.mark.parametrize("other", ["float16", "float32", "float64", "int64"])
def test_bfloat16_promotes_as_torchs(torch, other) -> None:
    ours = chaingrad.ones(2, dtype=chaingrad.bfloat16) + chaingrad.ones(2, dtype=getattr(
        chaingrad, other))
    theirs = torch.ones(2, dtype=torch.bfloat16) + torch.ones(2, dtype=getattr(torch, other))
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")


BFLOAT16_OPS = {
    "exp": lambda L, x: x.exp(), "tanh": lambda L, x: x.tanh(),
    "sigmoid": lambda L, x: x.sigmoid(), "relu": lambda L, x: x.relu(),
    "softmax": lambda L, x: x.softmax(-1), "sum": lambda L, x: x.sum(-1),
    "mean": lambda L, x: x.mean(-1),
    "norm": lambda L, x: x.norm(), "gelu": lambda L, x: L.nn.functional.gelu(x),
    "gelu tanh": lambda L, x: L.nn.functional.gelu(x, approximate="tanh"),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "x * 0.3": lambda L, x: x * 0.3, "0.3 * x": lambda L, x: 0.3 * x,
    "x / 3": lambda L, x: x / 3, "x + 0.3": lambda L, x: x + 0.3,
    "x - 0.3": lambda L, x: x - 0.3, "x * x": lambda L, x: x * x,
}
"""Ops on bfloat16 that give torch's numbers bit for bit, forward and backward: torch's
kernels compute bfloat16 in float32 and round the result (and the gradient) once, and so
does chaingrad (``promotion.floating`` and ``rounded_back``)."""


@pytest.mark.parametrize("name", sorted(BFLOAT16_OPS))
def test_ops_on_bfloat16_are_torchs_bit_for_bit(torch, name) -> None:
    array = np.random.default_rng(0).normal(size=(6, 50)).astype(np.float32)
    results = []
    for lib in (chaingrad, torch):
        x = lib.tensor(array).bfloat16().requires_grad_()
        out = BFLOAT16_OPS[name](lib, x)
        weights = np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape))
        (out.float() * lib.tensor(weights)).sum().backward()
        results.append([out, x.grad])
    for ours, theirs in zip(*results):
        assert ours.dtype == chaingrad.bfloat16 and theirs.dtype == torch.bfloat16
        np.testing.assert_array_equal(ours.detach().float().numpy(),
                                      theirs.detach().float().numpy())


def test_a_bfloat16_input_of_a_wider_op_gets_a_bfloat16_gradient(torch) -> None:
    """torch rounds each gradient to its input's dtype: bfloat16 + float32 is float32, and
    the gradient of the bfloat16 side is rounded; cat promotes the same way."""
    a, b = np.random.default_rng(1).normal(size=(2, 5)).astype(np.float32)
    grads = []
    for lib in (chaingrad, torch):
        x = lib.tensor(a).bfloat16().requires_grad_()
        y = x + lib.tensor(b)
        assert y.dtype == lib.float32
        (y * lib.tensor(b) + lib.cat([x, lib.tensor(b)]).sum()).sum().backward()
        grads.append(x.grad.float().numpy())
    np.testing.assert_array_equal(*grads)


def test_multinomial_draws_from_bfloat16_probabilities_as_torchs(torch) -> None:
    probs = np.random.default_rng(2).random((3, 7)).astype(np.float32)
    draws = []
    for lib in (chaingrad, torch):
        gen = lib.Generator().manual_seed(5)
        draws.append(lib.multinomial(lib.tensor(probs).bfloat16(), 1, generator=gen).tolist())
    assert draws[0] == draws[1]


def test_without_ml_dtypes_bfloat16_says_which_extra_brings_it(run_python) -> None:
    result = run_python("import sys; sys.modules['ml_dtypes'] = None\n"
                        "import chaingrad\n"
                        "try:\n    chaingrad.bfloat16\n"
                        "except ModuleNotFoundError as e:\n    print(e)")
    assert result.stdout.strip() == ("chaingrad.bfloat16 needs ml_dtypes: pip install "
                                     "'chaingrad[bfloat16]'"), result.stderr
