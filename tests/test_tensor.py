"""The Tensor engine's mechanics: the dtype rule, which nodes record a graph, backward
(seeds, repeated calls, the by-hand walk), gradients owned by each parameter, errors that
name the op and the value (``grad``, ``primitive``, ``gradcheck``: test_tensor_autograd.py)."""

from __future__ import annotations

import numpy as np
import pytest

import chaingrad
from chaingrad import DomainError, Tensor, no_grad
from chaingrad.autodiff import topological_order
from chaingrad.tensor_engine.functions import concatenate, stack, where

# ---- construction and the dtype rule ----


@pytest.mark.parametrize(
    ("data", "dtype"),
    [(1.5, np.float32), ([1, 2], np.float32), ([[1.0], [2.0]], np.float32),
     (np.arange(3), np.float32), (np.array([True, False]), np.float32),
     (np.zeros(2, np.float64), np.float64), (np.zeros(2, np.float16), np.float16),
     (np.float64(2.0), np.float64)],
    ids=["float", "list", "nested", "int_array", "bool_array", "float64", "float16", "np64"],
)
def test_dtype_rule(data, dtype) -> None:
    assert Tensor(data).dtype == dtype


def test_float_arrays_are_shared_not_copied() -> None:
    a = np.ones(3)
    t = Tensor(a)
    a[0] = 5.0
    assert t.data[0] == 5.0 and t.numpy() is t.data


def test_explicit_dtype_wins() -> None:
    assert Tensor([1, 2], dtype=np.float64).dtype == np.float64
    assert Tensor(np.ones(2), dtype="float32").dtype == np.float32
    with pytest.raises(TypeError, match="floating dtype"):
        Tensor([1, 2], dtype=np.int32)


@pytest.mark.parametrize("bad", ["abc", None, [1, "a"], {"a": 1}, np.array(["x"]), 1j],
                         ids=["str", "none", "mixed_list", "dict", "str_array", "complex"])
def test_non_numeric_data_is_a_type_error(bad) -> None:
    with pytest.raises(TypeError, match="Tensor"):
        Tensor(bad)


def test_integer_and_boolean_arrays_become_float32_that_can_take_a_gradient() -> None:
    x = Tensor(np.array([True, False]), requires_grad=True)
    (x * Tensor(np.arange(2))).sum().backward()
    assert x.data.tolist() == [1.0, 0.0] and x.grad.tolist() == [0.0, 1.0]


def test_truth_value_needs_one_element_comparisons_are_elementwise_hash_is_identity() -> None:
    assert bool(Tensor([2.0])) and not Tensor(0.0)
    for shape in [(2,), (0,)]:  # ambiguous, as in torch
        with pytest.raises(RuntimeError, match=rf"bool: .* ambiguous \(shape \({shape[0]},\)\)"):
            bool(Tensor(np.ones(shape)))
    a, b = Tensor([1.0]), Tensor([1.0])
    assert (a == b).tolist() == [True] and (a != b).tolist() == [False]
    assert (a == b).dtype == chaingrad.bool and not (a == b).requires_grad
    assert len({a, b, a}) == 2 and {a: 1, b: 2}[b] == 2 and (a == None) is False  # noqa: E711


def test_non_finite_data_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Tensor: got nan at index \(1,\)"):
        Tensor([1.0, float("nan")])


def test_numbers_take_the_tensor_dtype_arrays_promote() -> None:
    x = Tensor(np.ones(2, np.float32))
    assert (x * 2.0).dtype == np.float32
    assert (x + np.float64(1.0)).dtype == np.float32
    assert (x * np.ones(2, np.float64)).dtype == np.float64


def test_properties() -> None:
    x = Tensor(np.arange(6.0).reshape(2, 3), label="x")
    assert (x.shape, x.ndim, x.dim(), x.size(), x.size(1), x.numel(), len(x)) == (
        (2, 3), 2, 2, (2, 3), 3, 6, 2)
    assert x.T.shape == (3, 2)
    assert Tensor(3.0).item() == 3.0
    with pytest.raises(RuntimeError, match=r"item: a Tensor with 6 elements cannot be converted"):
        x.item()
    with pytest.raises(TypeError, match="0-d"):
        len(Tensor(1.0))
    assert "requires_grad=True" in repr(Tensor([1.0], requires_grad=True))
    assert np.asarray(x).shape == (2, 3)


# ---- which nodes record a graph ----


def test_only_tensors_that_need_a_gradient_record_a_graph() -> None:
    x, w = Tensor([1.0, 2.0]), Tensor([3.0, 4.0], requires_grad=True)
    assert (x * 2)._prev == () and not (x * 2).requires_grad
    y = x * w
    assert y.requires_grad and y._prev == (x, w) and y._op == "*"
    with no_grad():
        z = x * w
    assert z._prev == () and not z.requires_grad and z._rule is None
    d = w.detach()
    assert d.data is w.data and not d.requires_grad


def test_inputs_that_need_no_gradient_get_none() -> None:
    x, w = Tensor(np.ones((4, 3))), Tensor(np.ones((3, 2)), requires_grad=True)
    (x @ w).sum().backward()
    assert x.grad is None and w.grad.tolist() == [[4.0, 4.0]] * 3


# ---- backward ----


def test_backward_of_a_non_scalar_needs_grad() -> None:
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"backward: grad can be implicitly created only for "
                       r"scalar outputs \(the output has shape \(2, 3\)"):
        (x * 2).backward()
    with pytest.raises(ValueError, match=r"grad has shape \(3,\), the output has shape"):
        (x * 2).backward(grad=np.ones(3))
    with pytest.raises(ValueError, match="backward: grad holds nan or inf"):
        (x * 2).backward(grad=np.full((2, 3), np.inf))
    (x * 2).backward(grad=np.full((2, 3), 0.5))
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_backward_without_a_graph_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        Tensor([1.0]).sum().backward()


def test_repeated_backward_adds_exactly_once_more() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * x
    y = (h + x).sum()  # dy/dx = 2x + 1
    y.backward()
    assert x.grad.tolist() == [3.0, 5.0]
    y.backward()
    assert x.grad.tolist() == [6.0, 10.0]
    assert h.grad.tolist() == [2.0, 2.0]  # interior nodes too


def test_a_tensor_used_twice_gets_both_gradients() -> None:
    a = Tensor(np.array([3.0]), requires_grad=True)
    (a + a).sum().backward()
    assert a.grad.tolist() == [2.0]


def test_leaf_gradients_are_their_own_writable_arrays() -> None:
    a = Tensor(np.ones(3), requires_grad=True)
    b = Tensor(np.ones(3), requires_grad=True)
    c = Tensor(np.ones((2, 3)), requires_grad=True)
    ((a + b).sum() + c.sum() + c.T.sum()).backward()
    assert a.grad is not b.grad
    for t in (a, b, c):
        assert t.grad.data.flags.writeable and t.grad.data.base is None
    a.grad *= 0
    assert b.grad.tolist() == [1.0, 1.0, 1.0]
    assert c.grad.tolist() == [[2.0] * 3] * 2


def test_gradients_keep_the_parameter_dtype() -> None:
    w = Tensor(np.ones(3, np.float32), requires_grad=True)
    (w * np.arange(3.0)).sum().backward()  # a float64 array promotes the graph
    assert w.grad.dtype == np.float32


def test_zeroed_gradients_of_either_kind_are_refilled() -> None:
    w = Tensor(np.ones(2), requires_grad=True)
    for zero in (None, 0.0, np.zeros(2)):
        w.grad = zero
        (w * 3).sum().backward()
        assert w.grad.tolist() == [3.0, 3.0]


def test_by_hand_walk_with_backward_closures_matches_backward() -> None:
    x = Tensor(np.array([0.5, -1.0]), requires_grad=True)
    w = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    y = (w @ x).tanh().sum()
    y.backward()
    expected = (x.grad.clone(), w.grad.clone())
    order = topological_order(y)
    for node in order:
        node.grad = None
    y.grad = np.ones(())
    for node in reversed(order):
        node._backward()
    assert np.allclose(x.grad, expected[0]) and np.allclose(w.grad, expected[1])


def test_a_backward_closure_called_before_its_grad_is_set_names_the_op() -> None:
    y = Tensor([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"\*: _backward\(\) needs .* its \.grad is None"):
        y._backward()


def test_a_hand_written_backward_closure_is_used() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    out = Tensor(x.data * 10)
    out.requires_grad = True
    out._a = x  # make x its input, as an op would

    def _backward() -> None:
        x.grad += 10 * out.grad

    out._backward = _backward
    out.sum().backward()
    assert x.grad.tolist() == [10.0, 10.0]
    with pytest.raises(TypeError, match="hand-written"):
        out.sum().backward(create_graph=True)


def test_create_graph_gives_differentiable_gradients() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    first = x.grad
    assert isinstance(first, Tensor) and first.data.tolist() == [3.0, 12.0]
    x.grad = None
    first.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_graphs_hold_no_reference_cycles() -> None:
    """Freed by reference counting the moment they are dropped (no cyclic GC needed)."""
    import gc

    from chaingrad.nn.layers import Conv2d, Flatten, Linear, MaxPool2d, ReLU, Sequential

    model = Sequential(Conv2d(1, 2, 3, padding=1), ReLU(), MaxPool2d(2), Flatten(),
                       Linear(8, 3))
    gc.collect()
    gc.disable()
    try:
        y = model(Tensor(np.ones((2, 1, 4, 4)))).log_softmax()
        loss = (concatenate([y, y.softmax()], 1)[:, [0, 0, 1]].sum()
                + where(np.ones(1, bool), y.clip(-1, 1), 0.0).mean() + y.max(axis=1).sum()
                + y.T.reshape(-1).exp().sum()) ** 2 / 3
        loss.backward()
        del y, loss
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_deep_chains_need_no_recursion() -> None:
    x = Tensor(np.array([1.0]), requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_a_failed_backward_leaves_gradients_as_they_were() -> None:
    x = Tensor(np.array([0.0, 4.0]), requires_grad=True)
    x.grad = np.array([7.0, 7.0])
    with pytest.raises(DomainError, match=r"sqrt: the gradient is inf at index \(0,\)"):
        x.sqrt().sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]


# ---- errors name the op and the value ----


@pytest.mark.parametrize(
    ("fn", "message"),
    [(lambda: Tensor([1.0, 0.0]).log(), r"log: got 0.0 at index \(1,\), needs x > 0"),
     (lambda: Tensor([4.0, -1.0]).sqrt(), r"sqrt: got -1.0 at index \(1,\), needs x >= 0"),
     (lambda: Tensor([1.0, 100.0]).exp(), r"exp: got 100.0 at index \(1,\), needs x <= 88"),
     (lambda: Tensor([-8.0]) ** 0.5, r"\*\*0.5: got base -8.0 and exponent 0.5"),
     (lambda: Tensor([0.0]) ** -1, r"\*\*-1: got base 0.0 and exponent -1"),
     (lambda: Tensor([1.0, 2.0]) / Tensor([1.0, 0.0]), r"/: division by zero .*index \(1,\)"),
     (lambda: Tensor([1.0]) / 0, r"/: division by zero"),
     (lambda: 1.0 / Tensor([0.0]), r"/: division by zero"),
     (lambda: Tensor([1e30]) * Tensor([1e30]), r"\*: the result is inf.*overflows float32"),
     (lambda: Tensor([[1e30, 1e30]]) @ Tensor([[1e30], [1e30]]), "matmul: the result is inf"),
     (lambda: Tensor(np.full(3, 3e38, np.float32)).sum(), "sum: the result is inf")],
    ids=["log", "sqrt", "exp", "pow_fraction", "pow_zero", "div", "div_number", "rdiv",
         "mul_overflow", "matmul_overflow", "sum_overflow"],
)
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's own
def test_domain_errors(fn, message) -> None:
    with pytest.raises(DomainError, match=message):
        fn()


def test_exponent_gradient_of_a_negative_base_is_a_domain_error() -> None:
    x = Tensor(np.array([-2.0]), requires_grad=True)
    y = Tensor(np.array([2.0]), requires_grad=True)
    with pytest.raises(DomainError, match=r"\*\*: d/dy of x \*\* y needs x >= 0"):
        (x**y).sum().backward()


@pytest.mark.parametrize(
    ("fn", "error", "message"),
    [(lambda: Tensor(np.ones((2, 3))) @ Tensor(np.ones((4, 5))), ValueError,
      r"matmul: shapes \(2, 3\) and \(4, 5\) do not align \(3 != 4\)"),
     (lambda: Tensor(np.ones((2, 2, 3))) @ Tensor(np.ones((3, 3, 1))), ValueError,
      "matmul: the batch dimensions"),
     (lambda: Tensor(1.0) @ Tensor([1.0]), ValueError, "matmul: .*at least one dimension"),
     (lambda: Tensor(np.ones((2, 3))) + Tensor(np.ones(4)), ValueError,
      r"\+: shapes \(2, 3\) and \(4,\) do not broadcast"),
     (lambda: Tensor(np.ones(3)).reshape(2, 2), ValueError, "reshape: cannot reshape"),
     (lambda: Tensor(np.ones(3)).reshape(1.5), TypeError, "reshape: the shape must be ints"),
     (lambda: Tensor(np.ones((2, 3))).transpose(0, 2), ValueError, "transpose: axis 2 is out"),
     (lambda: Tensor(np.ones((2, 3))).permute(0, 0), ValueError, "permute: dims"),
     (lambda: Tensor(np.ones(3)).sum(axis=1), ValueError, "sum: axis 1 is out of range"),
     (lambda: Tensor(np.ones(3)).max(axis="a"), TypeError, "max: axis must be an int"),
     (lambda: Tensor(np.ones((2, 2))).sum(axis=(0, 0)), ValueError, "repeats an axis"),
     (lambda: Tensor(np.ones(0)).max(), ValueError, "max: got an empty dim"),
     (lambda: Tensor(np.ones(3))[3], IndexError, "getitem: index 3 is out of bounds"),
     (lambda: Tensor(np.ones(3))[Tensor([0.0])], IndexError, "getitem: tensors used as indices"),
     (lambda: Tensor(np.ones(3))[1.0], IndexError, "getitem: tensors used as indices must"),
     (lambda: Tensor(np.ones((2, 3))) - Tensor(np.ones(4)), ValueError,
      r"-: shapes \(2, 3\) and \(4,\) do not broadcast"),
     (lambda: Tensor(np.ones((2, 3))) / np.ones((4, 5)), ValueError,
      r"/: shapes \(2, 3\) and \(4, 5\) do not broadcast"),
     (lambda: Tensor(np.ones(3)) + "a", TypeError, r"\+: needs a number, an array or a Tensor"),
     (lambda: Tensor(np.ones(2)) * [1, 2], TypeError, r"\*: needs .* got list \[1, 2\]"),
     (lambda: (1, 2) - Tensor(np.ones(2)), TypeError, "-: needs .* got tuple"),
     (lambda: Tensor(np.ones(3)) + None, TypeError, "unsupported operand"),
     (lambda: Tensor(np.ones(3)) @ 2.0, TypeError, "unsupported operand"),
     (lambda: Tensor(np.ones(3)).clip(2, 1), ValueError, "clamp: min 2 is greater than max 1"),
     (lambda: Tensor(np.ones(3)).clip(), ValueError, "clamp: needs min, max or both"),
     (lambda: Tensor(np.ones(3)).softmax(axis=(0,)), TypeError, "softmax: axis must be"),
     (lambda: Tensor(np.ones(3)).broadcast_to((2,)), ValueError, "broadcast_to: cannot"),
     (lambda: concatenate([Tensor(np.ones((2, 3))), Tensor(np.ones((3, 2)))]), ValueError,
      r"cat: shapes \(2, 3\) and \(3, 2\) differ outside dim 0"),
     (lambda: concatenate([]), ValueError, "cat: needs at least one tensor"),
     (lambda: concatenate(Tensor(np.ones(2))), TypeError, "cat: expected a list"),
     (lambda: stack([Tensor(np.ones(2)), Tensor(np.ones(3))]), ValueError,
      r"stack: shapes \(2,\) and \(3,\) differ"),
     (lambda: where(np.ones(3, bool), Tensor(np.ones(2)), 0.0), ValueError,
      "where: shapes"),
     (lambda: where(np.array(["a"]), 1.0, 0.0), TypeError, "where: condition")],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_shapes_and_types(fn, error, message) -> None:
    with pytest.raises(error, match=message):
        fn()


def test_overflow_of_a_gradient_names_the_op() -> None:
    x = Tensor(np.array([1e-200]), requires_grad=True)
    with pytest.raises(DomainError, match="log: the gradient is inf"):
        (x.log() * 1e200).sum().backward()
