"""chaingrad/testing.py: ``assert_close`` passes and fails where torch's does, with torch's
tolerances and torch's message (printed with chaingrad's names)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad


def _cases(lib):
    """Pairs to compare, and keyword arguments, built of either library's tensors."""
    t = lib.tensor
    return [
        (t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]), {}),
        (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 4.1]]), {}),
        (t([1.0, 2.0, 3.0]), t([0.0, 2.5, 3.0]), {}),
        (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6]), {}),
        (t([1.0, 2.0]).double(), t([1.0, 2.0 + 1e-6]).double(), {}),
        (t([1.0]).half(), t([1.001]).half(), {}),
        (t([1.0]).half(), t([1.01]).half(), {}),
        (t(1.0), t(2.0), {}),
        (t([1, 2]), t([1, 3]), {}),
        (t([True]), t([False]), {}),
        (t([0.0]), t([1e-6]), {}),
        (t([0.0]), t([float("inf")]), {}),
        (t([float("nan")]), t([float("nan")]), {}),
        (t([float("nan")]), t([float("nan")]), {"equal_nan": True}),
        (t([1.0]), t([1.1]), {"rtol": 0.2, "atol": 0.0}),
        (t([1.0]), t([1.0]).double(), {"check_dtype": False}),
        (t([1.0]), t([2.0]), {"msg": "custom"}),
        (1.0, 1.1, {}), (1, 2, {}), (1.0, 1.0 + 1e-9, {}),
        ([t(1.0), t(2.0)], [t(1.0), t(3.0)], {}),
        ({"a": [t(1.0), 2]}, {"a": [t(1.0), 3]}, {}),
        (np.array([1.0, 2.0]), np.array([1.0, 3.0]), {}),
        (np.array([1, 2]), np.array([1.0, 2.0]), {}),
        (np.float64(1.0), 1.0, {}),
    ]


@pytest.mark.parametrize("i", range(len(_cases(chaingrad))))
def test_passes_and_fails_as_torch_with_its_message(torch, i) -> None:
    *pair, kwargs = _cases(torch)[i]
    try:
        torch.testing.assert_close(*pair, **kwargs)
        expected = None
    except AssertionError as error:
        expected = str(error)
    *pair, kwargs = _cases(chaingrad)[i]
    if expected is None:
        chaingrad.testing.assert_close(*pair, **kwargs)
        return
    with pytest.raises(AssertionError) as ours:
        chaingrad.testing.assert_close(*pair, **kwargs)
    assert str(ours.value) == expected.replace("torch.", "chaingrad.")  # a dtype's name


@pytest.mark.parametrize(("call", "error"), [
    (lambda t: t.testing.assert_close(t.ones(2), t.ones(3)), AssertionError),
    (lambda t: t.testing.assert_close(t.ones(1), t.ones(1).double()), AssertionError),
    (lambda t: t.testing.assert_close(t.ones(1), t.ones(1), rtol=1e-3), ValueError),
    (lambda t: t.testing.assert_close(t.ones(1), 1.0), TypeError),
    (lambda t: t.testing.assert_close([1, 2], [1, 2, 3]), AssertionError),
    (lambda t: t.testing.assert_close(t.ones(2), np.ones(2)), TypeError),
])
def test_refuses_as_torch(torch, call, error) -> None:
    with pytest.raises(error) as theirs:
        call(torch)
    with pytest.raises(error) as ours:
        call(chaingrad)
    assert str(ours.value) == str(theirs.value).replace("torch.", "chaingrad.").replace(
        "chaingrad.Tensor", "chaingrad.tensor_engine.tensor.Tensor")


def test_what_chaingrad_lacks_is_named() -> None:
    with pytest.raises(AttributeError, match="^chaingrad.testing has no 'make_tensor' yet$"):
        chaingrad.testing.make_tensor  # noqa: B018
