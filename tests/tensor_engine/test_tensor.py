"""The Tensor engine's mechanics: the dtype rule, which nodes record a graph, backward
(seeds, repeated calls, the by-hand walk), gradients owned by each parameter, errors that
name the op and the value (``grad``, ``primitive``, ``gradcheck``: test_tensor_autograd.py)."""

from __future__ import annotations

import inspect
import math
import pydoc
import warnings

import numpy as np
import pytest

import chaingrad
from chaingrad import AnomalyError, Tensor, no_grad
from chaingrad.autodiff import topological_order
from chaingrad.tensor_engine import tensor as tensor_module
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
    assert t.numpy()[0] == 5.0 and t.numpy() is a


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
    assert x.tolist() == [1.0, 0.0] and x.grad.tolist() == [0.0, 1.0]


def test_truth_value_needs_one_element_comparisons_are_elementwise_hash_is_identity() -> None:
    assert bool(Tensor([2.0])) and not Tensor(0.0)
    for shape in [(2,), (0,)]:  # ambiguous, as in torch
        with pytest.raises(RuntimeError, match=rf"bool: .* ambiguous \(shape \({shape[0]},\)\)"):
            bool(Tensor(np.ones(shape)))
    a, b = Tensor([1.0]), Tensor([1.0])
    assert (a == b).tolist() == [True] and (a != b).tolist() == [False]
    assert (a == b).dtype == chaingrad.bool and not (a == b).requires_grad
    assert len({a, b, a}) == 2 and {a: 1, b: 2}[b] == 2 and (a == None) is False  # noqa: E711


def test_nan_and_inf_are_held_as_torch_holds_them(torch) -> None:
    data = [1.0, float("nan"), float("inf"), -float("inf")]
    for ours, theirs in [(Tensor(data), torch.Tensor(data)),
                         (chaingrad.tensor(data), torch.tensor(data)),
                         (chaingrad.full((2,), -math.inf), torch.full((2,), -math.inf)),
                         (chaingrad.tensor([1e39]), torch.tensor([1e39]))]:
        assert repr(ours).replace("chaingrad", "torch") == repr(theirs)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    x = Tensor(data)
    assert (x == x).tolist() == (torch.tensor(data) == torch.tensor(data)).tolist()
    assert x[1:].tolist()[1:] == [math.inf, -math.inf] and math.isnan(x[1].item())


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


def test_numpys_masked_arrays_take_a_tensor_as_they_take_torchs(torch) -> None:
    """matplotlib's scatter and hist make masked arrays of what they are given: numpy.ma
    reads an object's ``_mask`` and ``_fill_value``, which a Tensor must not offer."""
    arrays = []
    for lib in (chaingrad, torch):
        x = lib.tensor([[1.0, -2.0], [3.0, 4.0]])
        masked = np.ma.asanyarray(x)
        arrays.append((masked.data.tolist(), masked.mask.tolist(), masked.fill_value,
                       np.ma.masked_invalid(x).sum()))
    assert arrays[0] == arrays[1]


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
    assert d.numpy() is w.detach().numpy() and not d.requires_grad


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
    with pytest.raises(AnomalyError, match="backward: the gradient given holds nan or inf"):
        (x * 2).backward(grad=np.full((2, 3), np.inf))
    with chaingrad.autograd.set_detect_anomaly(False):  # torch's: it flows
        (x * 2).backward(grad=np.full((2, 3), np.inf))
    assert x.grad.tolist() == [[math.inf] * 3] * 2
    x.grad = None
    (x * 2).backward(grad=np.full((2, 3), 0.5))
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_backward_without_a_graph_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        Tensor([1.0]).sum().backward()


def test_repeated_backward_adds_exactly_once_more() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * x
    y = (h + x).sum()  # dy/dx = 2x + 1
    y.backward(retain_graph=True)  # as torch: without it, the second pass would raise
    assert x.grad.tolist() == [3.0, 5.0]
    y.backward()
    assert x.grad.tolist() == [6.0, 10.0]
    assert h.grad is None  # as in torch: an op's output does not keep its gradient


def test_only_leaves_and_retained_tensors_keep_their_grad_as_in_torch(torch) -> None:

    def program(torch):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        kept = h + 1
        kept.retain_grad()
        y = (kept * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return [h.grad is None, y.grad is None, kept.grad.tolist(), x.grad.tolist(),
                kept.retains_grad, h.retains_grad, x.retains_grad]

    with pytest.warns(UserWarning, match="not a leaf"):  # torch warns on a non-leaf's .grad
        expected = program(torch)
    assert program(chaingrad) == expected == [True, True, [2.0, 4.0], [8.0, 26.0], True,
                                              False, False]


def test_no_grad_is_the_callers_seed_or_another_grad_and_autograd_grad_as_torch(torch) -> None:
    """backward(g) does not copy g, yet no .grad that is kept is g or another node's .grad
    (they are changed in place), as in torch; autograd.grad returns what the pass made, g
    itself for the output, as torch does."""

    def program(t):
        g = t.tensor([1.0, 2.0])
        x = t.tensor([1.0, 2.0], requires_grad=True)
        x.backward(g)  # the root is the leaf
        w = t.tensor([3.0, 4.0], requires_grad=True)
        kept = w + 0
        kept.retain_grad()
        y = kept + 0
        y.retain_grad()
        y.backward(g)  # g passes through + twice, to two retained tensors and a leaf
        grads = [x.grad, w.grad, kept.grad, y.grad]
        shared = [np.shares_memory(a.numpy(), b.numpy()) for a in grads + [g] for b in grads
                  if a is not b]
        before = g.tolist()
        for each in grads:
            each.mul_(10)  # in place: changes nothing else
        z = x * 2
        (same,) = t.autograd.grad(z, z, g)
        return [any(shared), g.tolist() == before, type(same).__name__, same is g or
                np.shares_memory(same.numpy(), g.numpy()), [each.tolist() for each in grads]]

    assert program(chaingrad) == program(torch) == [False, True, "Tensor", True,
                                                    [[10.0, 20.0]] * 4]
    g = Tensor([1.0, 2.0])
    v = Tensor([[1.0, 2.0]], requires_grad=True)
    v.reshape(2).backward(g)  # a view of g reaches the leaf: torch keeps that view as
    assert not np.shares_memory(v.grad.numpy(), g.numpy())  # v.grad; chaingrad copies it


def test_retain_grad_on_a_leaf_does_nothing_and_on_a_constant_is_refused() -> None:
    x = Tensor([1.0], requires_grad=True)
    x.retain_grad()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0] and not x.retains_grad
    with pytest.raises(RuntimeError, match="retain_grad: can't retain_grad on Tensor that "
                       "has requires_grad=False"):
        Tensor([1.0]).retain_grad()


SECOND_PASSES = {  # each a loss of x and y: torch refuses a second backward() through
    # a node that kept tensors for its rule (MulBackward0, ReluBackward0, ...), not one that
    # kept none (AddBackward0, NegBackward0, MeanBackward0, a view, a slice, cat)
    "x * 2": lambda t, x, y: (x * 2).sum(), "mean": lambda t, x, y: x.mean(),
    "x - y": lambda t, x, y: (x - y).sum(), "x / 2": lambda t, x, y: (x / 2).sum(),
    "x / y": lambda t, x, y: (x / y).sum(), "x ** 2": lambda t, x, y: (x**2).sum(),
    "relu": lambda t, x, y: x.relu().sum(), "x[0]": lambda t, x, y: x[0],
    "x[[0, 1]]": lambda t, x, y: x[t.tensor([0, 1])].sum(), "max": lambda t, x, y: x.max(),
    "max(dim)": lambda t, x, y: x.max(0)[0], "x @ y": lambda t, x, y: x @ y,
    "where": lambda t, x, y: t.where(y > 3.5, x, y).sum(),
    "cat": lambda t, x, y: t.cat([x, y]).sum(), "softmax": lambda t, x, y: x.softmax(0)[0],
    "-x": lambda t, x, y: (-x).sum(), "clamp": lambda t, x, y: x.clamp(0, 1.5).sum(),
    "x + 1": lambda t, x, y: (x + 1).sum(), "exp": lambda t, x, y: x.exp().sum(),
    "view": lambda t, x, y: x.view(2, 1).T.sum(),
}


def second_pass(t, loss) -> str:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = t.tensor([3.0, 4.0], requires_grad=True)
    out = loss(t, x, y)
    out.backward()
    try:
        out.backward()
    except RuntimeError as exc:
        assert "Trying to backward through the graph a second time" in str(exc)
        return "refused"
    return f"added: {x.grad.tolist()}"


@pytest.mark.parametrize("name", SECOND_PASSES)
def test_a_second_backward_without_retain_graph_fails_where_torch_fails(torch, name) -> None:
    assert second_pass(chaingrad, SECOND_PASSES[name]) == second_pass(torch, SECOND_PASSES[name])


def test_retain_graph_keeps_the_graph_and_create_graph_implies_it() -> None:
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward(create_graph=True)  # retain_graph defaults to create_graph
    y.backward()
    assert x.grad.tolist() == [6.0, 12.0]
    with pytest.raises(RuntimeError, match=r"^\*: Trying to backward through the graph a "
                       "second time .* Specify retain_graph=True"):
        y.backward()
    h = x * 3  # a new graph on the same leaf is not freed
    h.sum().backward()
    assert x.grad.tolist() == [9.0, 15.0]


def test_grad_frees_a_tensor_graph_as_torch_and_never_a_value_graph() -> None:
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    assert chaingrad.grad(y, [x], retain_graph=True)[0].tolist() == [2.0, 4.0]
    chaingrad.grad(y, [x])
    with pytest.raises(RuntimeError, match="a second time"):
        chaingrad.grad(y, [x])
    v = chaingrad.Value(3.0)
    w = v * v
    assert chaingrad.grad(w, [v]) == chaingrad.grad(w, [v]) == (6.0,)
    w.backward()
    w.backward()  # micrograd's graphs are walked as often as asked
    assert v.grad == 12.0


def test_a_retained_interior_tensor_adds_up_repeated_passes() -> None:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    h = x * x
    h.retain_grad()
    y = (h + x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert h.grad.tolist() == [2.0, 2.0]


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
        assert t.grad.numpy().flags.writeable and t.grad.numpy().base is None
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
    y.backward(retain_graph=True)  # the walk by hand runs the same rules again
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
    out = Tensor(x.detach().numpy() * 10)
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
    assert isinstance(first, Tensor) and first.tolist() == [3.0, 12.0]
    x.grad = None
    first.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_graphs_hold_no_reference_cycles() -> None:
    """Freed by reference counting the moment they are dropped (no cyclic GC needed)."""
    import gc

    from chaingrad.nn import Conv2d, Flatten, Linear, MaxPool2d, ReLU, Sequential

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
    with pytest.raises(AnomalyError, match=r"sqrt \(backward\): the gradient it gives input 0 "
                       r"\(shape \(2,\)\) is inf at \[0\], where input 0 is 0.0"):
        x.sqrt().sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]


# ---- errors name the op and the value ----


@pytest.mark.parametrize(
    "fn",
    [lambda t: t.tensor([1.0, 0.0]).log(), lambda t: t.tensor([4.0, -1.0]).sqrt(),
     lambda t: t.tensor([1.0, 100.0]).exp(), lambda t: t.tensor([-8.0]) ** 0.5,
     lambda t: t.tensor([0.0]) ** -1,
     lambda t: t.tensor([1.0, 2.0, 0.0]) / t.tensor([1.0, 0.0, 0.0]),
     lambda t: t.tensor([1.0, -1.0]) / 0, lambda t: 1.0 / t.tensor([0.0, -0.0]),
     lambda t: t.tensor([1e30]) * t.tensor([1e30]),
     lambda t: t.tensor([[1e30, 1e30]]) @ t.tensor([[1e30], [1e30]]),
     lambda t: t.tensor(np.full(3, 3e38, np.float32)).sum(),
     lambda t: t.tensor([-1.0, 0.0, 2.0]).log1p()],
    ids=["log", "sqrt", "exp", "pow_fraction", "pow_zero", "div", "div_number", "rdiv",
         "mul_overflow", "matmul_overflow", "sum_overflow", "log1p"],
)
def test_outside_an_ops_domain_the_numbers_are_torchs(torch, fn) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's warnings never reach the user, as torch's
        ours = fn(chaingrad)
    np.testing.assert_allclose(ours.numpy(), fn(torch).numpy(), rtol=1e-6)  # nan == nan


def test_exponent_gradient_of_a_negative_base_is_nan_as_torchs(torch) -> None:
    base, exponent = np.array([-2.0, 0.0, 3.0]), np.array([2.0, 2.0, 2.0])
    x, y = Tensor(base, requires_grad=True), Tensor(exponent, requires_grad=True)
    with pytest.raises(AnomalyError, match=r"\*\* \(backward\): the gradient it gives input 1 "
                       r".* is nan at \[0\]"):
        (x**y).sum().backward()
    tx, ty = (torch.tensor(a, requires_grad=True) for a in (base, exponent))
    (tx**ty).sum().backward()
    with chaingrad.autograd.set_detect_anomaly(False):
        (x**y).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


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
     (lambda: Tensor(np.ones((2, 3))).transpose(0, 2), IndexError,
      "transpose: dimension 2 is out"),
     (lambda: Tensor(np.ones((2, 3))).permute(0, 0), ValueError, "permute: dims"),
     (lambda: Tensor(np.ones(3)).sum(axis=1), IndexError, "sum: dimension 1 is out of range"),
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
    with pytest.raises(AnomalyError, match=r"log \(backward\): the gradient it gives input 0 "
                       r"\(shape \(1,\)\) is inf at \[0\], where input 0 is 1e-200"):
        (x.log() * 1e200).sum().backward()


# ---- torch's methods: shapes, reductions with dim, conversions ----


SHAPE_CALLS = [
    lambda x: x.view(6, 4), lambda x: x.view(-1), lambda x: x.reshape((4, -1)),
    lambda x: x.transpose(0, 2), lambda x: x.transpose(-1, 1), lambda x: x.permute(2, 0, 1),
    lambda x: x.permute((1, 2, 0)), lambda x: x.unsqueeze(1), lambda x: x.unsqueeze(-1),
    lambda x: x[:1].squeeze(), lambda x: x[:1].squeeze(0), lambda x: x[:1].squeeze(1),
    lambda x: x.flatten(), lambda x: x.flatten(1), lambda x: x.flatten(0, 1),
    lambda x: x.flatten(start_dim=-2), lambda x: x.mT, lambda x: x[0].T, lambda x: x[0].t(),
    lambda x: x.sum(dim=1), lambda x: x.sum(1, keepdim=True), lambda x: x.sum((0, 2)),
    lambda x: x.mean(dim=-1), lambda x: x.amax(dim=(0, 1)), lambda x: x.argmax(),
    lambda x: x.argmax(dim=1), lambda x: x.argmin(2, keepdim=True), lambda x: x.max(1)[1],
    lambda x: x.min(dim=0).values, lambda x: x.norm(), lambda x: x.norm(dim=1),
    lambda x: x.expand(3, 2, 3, 4), lambda x: x[:, :1].expand(-1, 5, -1),
    lambda x: x.clamp(min=3.0), lambda x: x.float(), lambda x: x.double().sum(),
    lambda x: x.long(), lambda x: x.int(), lambda x: x.bool(), lambda x: x > 11,
    lambda x: (x > 5) & (x < 15), lambda x: ~(x > 5), lambda x: x[x > 20],
    lambda x: x.to(x.long()), lambda x: x.type_as(x.int()), lambda x: x.any(), lambda x: x.all(1),
]


@pytest.mark.parametrize("call", SHAPE_CALLS, ids=range(len(SHAPE_CALLS)))
def test_methods_give_torch_values_shapes_and_dtypes(torch, call) -> None:
    mine = call(chaingrad.arange(24.0).reshape(2, 3, 4))
    theirs = call(torch.arange(24.0).reshape(2, 3, 4))
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert mine.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert np.allclose(mine.numpy(), theirs.numpy())


def test_size_shape_and_friends() -> None:
    x = chaingrad.zeros(2, 3, 4)
    assert x.size() == (2, 3, 4) and isinstance(x.size(), tuple) and x.size(-1) == 4
    assert repr(x.shape) == "chaingrad.Size([2, 3, 4])" and x.shape.numel() == 24
    assert (x.dim(), x.ndim, x.numel(), x.element_size(), len(x)) == (3, 3, 24, 4, 2)
    assert x.is_floating_point() and not chaingrad.tensor([1]).is_floating_point()
    assert x.type() == "chaingrad.FloatTensor" and x.type(chaingrad.float64).dtype == np.float64


def test_item_and_tolist_give_python_numbers_of_the_dtype() -> None:
    assert type(chaingrad.tensor(3).item()) is int and type(chaingrad.tensor(True).item()) is bool
    assert chaingrad.tensor([[2.5]]).item() == 2.5 and chaingrad.tensor(1.5).tolist() == 1.5
    t = chaingrad.tensor(7)
    assert (int(t), float(t), [0, 1, 2, 3, 4, 5, 6, 7][t], f"{chaingrad.tensor(0.5):.2f}") == (
        7, 7.0, 7, "0.50")


def test_max_with_dim_returns_values_and_indices() -> None:
    m = chaingrad.tensor([[1.0, 7.0, 7.0], [4.0, 2.0, 4.0]], requires_grad=True)
    values, indices = m.max(dim=1)
    assert values.tolist() == [7.0, 4.0] and indices.tolist() == [1, 0]
    assert indices.dtype == chaingrad.int64 and not indices.requires_grad
    values.sum().backward()  # the gradient goes to the index returned, the first largest
    assert m.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert m.max(axis=1).tolist() == [7.0, 4.0]  # numpy's axis=: the values, as amax


def test_numpy_of_a_tensor_that_requires_grad_is_refused() -> None:
    x = chaingrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy() is x.detach().numpy() is x.data.numpy()


def test_differentiable_casts_and_clone() -> None:
    x = chaingrad.tensor([1.0, 2.0], requires_grad=True)
    y = x.double()
    assert y.dtype == chaingrad.float64 and y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype == chaingrad.float32 and x.grad.tolist() == [2.0, 4.0]
    assert x.float() is x and not x.long().requires_grad
    c = x.clone()
    assert not np.shares_memory(c.detach().numpy(), x.detach().numpy())
    assert c.requires_grad and not c.is_leaf


# ---- in place: leaves under no_grad, and torch's errors ----


def test_sgd_by_hand_updates_the_parameters_themselves() -> None:
    w = chaingrad.tensor([1.0, -2.0], requires_grad=True)
    params = [w]
    for _ in range(3):
        (w * w).sum().backward()
        with chaingrad.no_grad():
            for p in params:
                p -= 0.25 * p.grad  # Python rebinds p to what -= returns: p itself
        w.grad = None
    assert params[0] is w and w.requires_grad and w.is_leaf
    assert w.tolist() == [0.125, -0.25]  # each step halves w


def test_in_place_ops_and_methods() -> None:
    t = chaingrad.tensor([1.0, 2.0, 3.0])
    data = t.numpy()
    t += 1
    t -= chaingrad.tensor([1.0, 1.0, 1.0])
    t *= 2
    t /= 4
    assert t.tolist() == [0.5, 1.0, 1.5] and t.numpy() is data
    assert t.add_(1, alpha=2).sub_(0.5).mul_(2).div_(2).tolist() == [2.0, 2.5, 3.0]
    assert t.pow_(2).clamp_(max=6.0).tolist() == [4.0, 6.0, 6.0]
    assert t.zero_().tolist() == [0.0] * 3 and t.fill_(2).tolist() == [2.0] * 3
    assert t.copy_(np.array([1.0, 2.0, 3.0])).tolist() == [1.0, 2.0, 3.0] and t.numpy() is data
    i = chaingrad.tensor([1, 2])
    i += 1
    assert i.tolist() == [2, 3] and i.dtype == chaingrad.int64


def test_item_assignment() -> None:
    g = chaingrad.arange(12.0).reshape(3, 4)
    g[:, 1] = 0
    g[0] = chaingrad.tensor([9.0, 9.0, 9.0, 9.0])
    g[g > 8] = 100.0
    g[chaingrad.tensor([2]), 3] = -1
    assert g.tolist() == [[100.0] * 4, [4.0, 0.0, 6.0, 7.0], [8.0, 0.0, 100.0, -1.0]]


@pytest.mark.parametrize("change", [
    lambda t: t.add_(1), lambda t: t.__iadd__(1), lambda t: t.zero_(),
    lambda t: t.__setitem__(0, 5.0), lambda t: t.fill_(1)],
    ids=["add_", "+=", "zero_", "setitem", "fill_"])
def test_in_place_on_a_leaf_that_requires_grad_needs_no_grad(change, torch) -> None:
    """A leaf that requires grad: refused while the graph is recorded, a plain write under
    no_grad (it stays a leaf); a tensor an op made: recorded, with torch's gradient."""
    grads = []
    for lib in (chaingrad, torch):
        w = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation"):
            change(w)
        y = w * 2
        change(y)
        assert not y.is_leaf and y.requires_grad
        (y * y).sum().backward()
        grads.append(w.grad.tolist())
        with lib.no_grad():
            change(w)
        assert w.requires_grad and w.is_leaf
    assert grads[0] == grads[1]


def test_in_place_results_must_fit() -> None:
    i = chaingrad.tensor([1, 2])
    with pytest.raises(RuntimeError, match="div_: result type float32 can't be cast to the "
                                           "desired output type int64"):
        i.div_(2)
    t = chaingrad.ones(3)
    with pytest.raises(RuntimeError, match=r"\+=: output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        t += chaingrad.ones(2, 3)
    view = chaingrad.ones(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="read-only view"):
        view.zero_()


def test_out_arguments(torch) -> None:
    a = chaingrad.ones(2, 2)
    out = chaingrad.zeros(2, 2)
    assert chaingrad.matmul(a, a, out=out) is out and out.tolist() == [[2.0, 2.0]] * 2
    grown = chaingrad.zeros(1)
    chaingrad.add(a, 1, out=grown)  # resized to the result, as torch does
    assert grown.shape == (2, 2) and grown.tolist() == [[2.0, 2.0]] * 2
    w = chaingrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        chaingrad.mul(w, 2, out=chaingrad.zeros(2))


# ---- .grad, backward, grad_fn ----


def test_grad_is_a_tensor_that_accumulates_and_can_be_reset() -> None:
    x = chaingrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(gradient=chaingrad.tensor([1.0, 0.5, 0.25]), retain_graph=True)
    assert isinstance(x.grad, Tensor) and not x.grad.requires_grad
    assert x.grad.tolist() == [2.0, 2.0, 1.5]
    y.backward(chaingrad.ones(3))
    assert x.grad.tolist() == [4.0, 6.0, 7.5]
    x.grad.zero_()
    assert x.grad.tolist() == [0.0] * 3
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0] * 3
    with pytest.raises(TypeError, match="got both gradient= and grad="):
        y.backward(chaingrad.ones(3), grad=np.ones(3))
    with pytest.raises(NotImplementedError, match=r"chaingrad.Tensor has no backward\(inputs="):
        (x * x).sum().backward(inputs=[x])


REPRS = [
    lambda t: t.tensor([1.0, 2.5, -3.0]), lambda t: t.tensor([[1, 2], [3, 4]]),
    lambda t: t.tensor([0.5, 1.0], requires_grad=True), lambda t: t.tensor([True, False]),
    lambda t: t.tensor(2.0), lambda t: t.tensor(3), lambda t: t.zeros(2, dtype=t.float64),
    lambda t: t.tensor([1e-5, 1.0]), lambda t: t.tensor([1e9, 1.0]), lambda t: t.arange(12.0),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True) * 2, lambda t: t.ones(2, 3, 2),
    lambda t: t.tensor([1, 2], dtype=t.int32), lambda t: t.tensor([], dtype=t.float32),
    lambda t: t.linspace(-1, 1, 9).reshape(3, 3), lambda t: t.tensor([[-0.001, 200.5]]),
    lambda t: t.arange(2000.0), lambda t: t.arange(2000), lambda t: t.ones(3, 40),
    lambda t: t.arange(3000.0).reshape(1000, 3), lambda t: t.tensor([True] * 30),
    lambda t: t.tensor([1e8, 1.0]), lambda t: t.tensor([123456789.0, 1.0]),
    lambda t: t.arange(40.0) / 7, lambda t: t.ones(2, 2, 40), lambda t: t.tensor([-5, 100000]),
]


@pytest.mark.parametrize("make", REPRS, ids=range(len(REPRS)))
def test_repr_prints_as_torch(torch, make) -> None:
    assert repr(make(chaingrad)).replace("chaingrad.", "torch.") == repr(make(torch))


# ---- errors that name what chaingrad lacks; your own attributes ----


def test_a_missing_name_is_named() -> None:
    with pytest.raises(AttributeError, match="chaingrad.Tensor has no 'cummax' yet"):
        chaingrad.ones(2).cummax  # noqa: B018
    with pytest.raises(AttributeError, match="chaingrad has no 'fft' yet"):
        chaingrad.fft  # noqa: B018
    with pytest.raises(AttributeError, match="object has no attribute '_private'"):
        chaingrad.ones(2)._private  # noqa: B018
    assert not hasattr(chaingrad, "__wrapped__") and not hasattr(chaingrad.ones(1), "to_bytes")
    with pytest.raises(NotImplementedError, match=r"chaingrad.Tensor has no norm\(p='nuc'\)"):
        chaingrad.ones(2, 2).norm(p="nuc")


def test_missing_names_are_class_attributes_not_a_getattr_hook() -> None:
    # A class with __getattr__ makes Python look up every attribute of every tensor the
    # slow way (T3 in benchmarks/versions.py: 25% slower forward); the names chaingrad
    # lacks are descriptors instead, hidden from dir(), and a user's own attribute of the
    # same name still wins.
    assert all("__getattr__" not in vars(cls) for cls in Tensor.__mro__)
    t = chaingrad.ones(2)
    assert "cummax" not in dir(t) and "sum" in dir(t)
    t.cummax = "mine"
    assert t.cummax == "mine"
    with pytest.raises(AttributeError, match="chaingrad.Tensor has no 'cummax' yet"):
        chaingrad.nn.Parameter(chaingrad.ones(2)).cummax  # noqa: B018


def test_a_tensor_takes_attributes_of_your_own() -> None:
    p = chaingrad.zeros(2, requires_grad=True)
    p.m, p.v = 0, chaingrad.zeros_like(p)  # an optimizer's moments kept on the parameter
    assert p.m == 0 and p.v.shape == (2,)
    p._vis_color = "red"
    assert p._vis_color == "red"


def test_torchs_size_form_of_the_constructor_is_refused_not_misread() -> None:
    for call in (lambda: Tensor(2, 3), lambda: Tensor(2)):
        with pytest.raises(TypeError, match=r"torch's uninitialized tensor of that size"):
            call()
    assert Tensor((2, 3)).tolist() == [2.0, 3.0] and Tensor(2.0).item() == 2.0


def test_new_factories_take_this_tensors_dtype(torch) -> None:
    def made(lib) -> list:
        base = lib.tensor([1, 2])
        return [(tuple(t.shape), str(t.dtype).split(".")[-1], t.tolist()) for t in (
            base.new_ones(2, 2), base.new_zeros((3,)), base.new_full((2,), 7),
            base.new_tensor([1.5]), base.new_ones(1, dtype=lib.float64))]

    assert made(chaingrad) == made(torch)


def test_a_typo_is_not_called_a_missing_torch_name() -> None:
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'bakward'"):
        chaingrad.ones(2).bakward  # noqa: B018
    with pytest.raises(AttributeError, match="module 'chaingrad' has no attribute 'tensr'"):
        chaingrad.tensr  # noqa: B018


# ---- the class and its parts: from a method to its code in one hop ----


def _parts() -> list[type]:
    """The classes in Tensor's bases that hold part of its methods, each in a module of
    its own (sorting.py's Sorting, ...)."""
    return [part for part in Tensor.__mro__[1:]
            if part.__module__.startswith("chaingrad.tensor_engine.")]


def _public(part: type) -> list[str]:
    return [name for name, thing in vars(part).items() if not name.startswith("_")
            and (callable(thing) or isinstance(thing, property))]


def test_tensor_py_names_the_module_of_every_method_defined_in_a_part() -> None:
    doc = tensor_module.__doc__
    items = {item.split("``")[1]: item for item in doc.split("\n- ")[1:]}
    assert len(_parts()) >= 7
    for part in _parts():
        module = part.__module__.rpartition(".")[2] + ".py"
        assert module in items, f"tensor.py's docstring has no item for {module}"
        missing = [name for name in _public(part) if f"``{name}``" not in items[module]]
        assert not missing, f"tensor.py's docstring does not name {missing} under {module}"


def test_a_method_from_a_part_shows_its_signature_docstring_and_source() -> None:
    for part in _parts():
        for name in _public(part):
            method = getattr(Tensor, name)
            function = method.fget if isinstance(method, property) else method
            assert inspect.getdoc(function), f"Tensor.{name} has no docstring"
            assert inspect.getsourcefile(function) == inspect.getsourcefile(part), name
    assert "stable=True" in pydoc.render_doc(Tensor.sort)
    assert str(inspect.signature(Tensor.sort)) == \
        "(self, dim: 'int' = -1, descending: 'bool' = False, *, stable: 'bool' = False) " \
        "-> 'values_indices'"


# ---- .data: torch's, a leaf that shares the tensor's numbers ----


def test_data_is_a_leaf_sharing_the_numbers_as_torchs(torch) -> None:
    def program(lib):
        x = lib.tensor([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]], dtype=lib.float64,
                       requires_grad=True)
        y = x * 2
        d, dy = x.data, y.data
        facts = [type(d) is lib.Tensor, d.requires_grad, d.is_leaf, d.grad_fn is None,
                 dy.requires_grad, dy.is_leaf, x.requires_grad, d.dtype == lib.float64]
        d[0, 0] = 9.0  # the same numbers: x changes
        dy[1, 1] = -1.0
        return facts + [x.tolist(), y.tolist(), x.data.max(1)[1].tolist(),
                        x.data.max(1)[0].tolist(), x.data.numpy().tolist(),
                        x.data.std().item(), y.data.norm().item()]

    ours, theirs = program(chaingrad), program(torch)
    assert ours[:-2] == theirs[:-2]
    assert ours[-2:] == pytest.approx(theirs[-2:], rel=1e-15)  # std: torch's n - 1
    assert ours[:8] == [True, False, True, True, False, True, True, True]
    x = Tensor(np.ones(3), requires_grad=True)
    assert x.data.numpy() is x.detach().numpy()  # shared, not copied


def test_in_place_ops_through_data_change_the_tensor_as_torchs(torch) -> None:
    def program(lib):
        p = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        (p * p).sum().backward()
        seen = []
        for change in (lambda: p.data.sub_(0.1 * p.grad),
                       lambda: p.data.add_(p.grad, alpha=0.5),
                       lambda: p.data.mul_(2.0),
                       lambda: p.data.copy_(lib.tensor([4.0, 5.0, 6.0])),
                       lambda: p.data.fill_(7.0),
                       lambda: p.data.zero_()):
            change()
            seen.append(p.tolist())
        p.data += 1.5
        seen.append(p.tolist())
        p.data -= 0.25 * p.grad  # Python ends this with p.data = <the result>
        seen.append(p.tolist())
        p.data[1] = 8.0
        seen.append(p.tolist())
        return seen + [p.requires_grad, p.is_leaf]

    assert program(chaingrad) == program(torch)
    p = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    storage = p.detach().numpy()
    p.data -= 0.5 * p.data
    assert p.detach().numpy() is storage and p.tolist() == [0.5, 1.0]


def test_writing_through_data_is_not_counted_as_in_torch(torch) -> None:
    """torch's version counter does not see a write through ``.data`` (its documented
    danger): the backward runs on the new numbers, without an error. A write to the tensor
    itself (under no_grad) is counted, and refused, in both."""
    def program(lib):
        w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        (w * w).sum().backward()  # w saved for backward: d/dw = 2 * w
        first = w.grad.tolist()
        w.grad = None
        y = (w * w).sum()
        w.data.mul_(3.0)  # not counted
        y.backward()
        changed = w.grad.tolist()
        w.grad = None
        y = (w * w).sum()
        w.data = lib.tensor([5.0, 5.0, 5.0], dtype=lib.float64)  # new numbers: not counted
        y.backward()
        replaced = w.grad.tolist()
        v = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
        h = v.exp()
        z = (h * h).sum()
        h.data.zero_()  # an op's output, saved by *: not counted either
        z.backward()
        y = (w * w).sum()
        with lib.no_grad():
            w.mul_(2.0)  # counted
        try:
            y.backward()
            refused = False
        except RuntimeError as exc:
            refused = "modified by an inplace operation" in str(exc)
        return [first, changed, replaced, v.grad.tolist(), refused]

    ours = program(chaingrad)
    assert ours == program(torch)
    assert ours == [[2.0, 4.0, 6.0], [6.0, 12.0, 18.0], [10.0] * 3, [0.0, 0.0], True]


def test_setting_data_takes_a_tensors_numbers_shape_and_dtype_as_torch(torch) -> None:
    def program(lib):
        x = lib.ones(2, 3)
        x.data = lib.zeros(4)
        y = lib.ones(2)
        y.data = lib.tensor([1, 2])
        w = lib.ones(2, requires_grad=True)
        refused = False
        try:
            w.data = lib.tensor([1, 2])
        except RuntimeError as exc:
            refused = "must be floating point" in str(exc)
        source = lib.tensor([3.0, 4.0], dtype=lib.float64)
        w.data = source
        source[0] = 9.0  # shared with w, as torch replaces w's storage with source's
        return [tuple(x.shape), y.tolist(), y.dtype == lib.int64, refused, w.tolist(),
                w.dtype == lib.float64, w.requires_grad, w.is_leaf]

    assert program(chaingrad) == program(torch)


def test_setting_data_also_takes_an_array_and_refuses_other_types() -> None:
    w = chaingrad.tensor([1.0, 2.0], requires_grad=True)
    array = np.array([3.0, 4.0, 5.0])
    w.data = array  # chaingrad takes an array too: shared, its dtype and shape kept
    assert w.detach().numpy() is array and w.dtype == chaingrad.float64 and w.shape == (3,)
    assert w.requires_grad and w.is_leaf
    w.data = [1.0, 2.0]  # a list: by chaingrad.tensor's rule
    assert w.tolist() == [1.0, 2.0] and w.dtype == chaingrad.float32
    for bad in ("12", None, {"a": 1}, chaingrad.Value(1.0)):
        with pytest.raises(TypeError, match=r"Tensor\.data: needs a Tensor \(or an array\), "
                                            f"got {type(bad).__name__}"):
            w.data = bad
    assert w.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match=r"Tensor\.data: data set to a tensor that requires "
                                           r"gradients must be floating point, got "
                                           r"chaingrad\.int64"):
        w.data = np.array([1, 2])


def test_a_parameters_data_is_a_plain_tensor_sharing_its_numbers(torch) -> None:
    import chaingrad.nn as cnn

    def program(lib, nn):
        p = nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.float64))
        d = p.data
        q = nn.Parameter(p.data)  # shares p's numbers
        (p * p).sum().backward()
        p.data.sub_(0.25 * p.grad)
        return [type(d) is lib.Tensor, d.requires_grad, p.requires_grad, p.tolist(),
                q.tolist(), d.tolist()]

    ours = program(chaingrad, cnn)
    assert ours == program(torch, torch.nn)
    assert ours == [True, False, True, [0.5, 1.0], [0.5, 1.0], [0.5, 1.0]]


def test_bool_tensors_refuse_minus_as_torch_does() -> None:
    mask = chaingrad.tensor([True, False])
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -mask  # noqa: B018
    for minus in (lambda: mask - mask, lambda: mask - 1, lambda: 1 - mask,
                  lambda: chaingrad.ones(2) - mask):
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool"):
            minus()
    assert (~mask).tolist() == [False, True] and (mask.long() - 1).tolist() == [0, -1]


@pytest.mark.parametrize("write", [
    lambda t, w: t.__setitem__(0, w[0]), lambda t, w: t.add_(w), lambda t, w: t.__imul__(w),
    lambda t, w: t.copy_(w)], ids=["setitem", "add_", "*=", "copy_"])
def test_writing_a_tensor_that_requires_grad_into_another_is_recorded(write, torch) -> None:
    """As torch: the tensor written into joins the graph, and the gradient reaches the value
    written; the numbers only (detach, or under no_grad) join nothing."""
    grads = []
    for lib in (chaingrad, torch):
        t, w = lib.zeros(2), lib.tensor([2.0, 3.0], requires_grad=True)
        write(t, w * 1.5)
        assert t.requires_grad and not t.is_leaf
        (t * t).sum().backward()
        grads.append((t.tolist(), w.grad.tolist()))
        plain = lib.zeros(2)
        write(plain, w.detach())  # the numbers only
        with lib.no_grad():
            write(plain, w)
        assert not plain.requires_grad
    assert grads[0] == grads[1]


def test_iteration_gives_sub_tensors_and_refuses_a_0d_tensor() -> None:
    rows = list(chaingrad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True))
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]] and rows[0].requires_grad
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(chaingrad.tensor(1.0))


# ---- in-place writes after a forward pass: torch's version counter ----


def _stale_cases(torch):
    """Each case: (name, function of the library that returns the leaf whose .grad to
    read, or raises); the same code for torch and chaingrad."""
    def weight_changed_input_constant():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (w * torch.tensor([3.0, 4.0])).sum()
        with torch.no_grad():
            w -= 0.1  # w's own gradient reads only the other input: still right
        y.backward()
        return w

    def input_changed_that_a_gradient_reads():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        x = torch.tensor([3.0, 4.0])
        y = (w * x).sum()
        x[0] = 5.0
        y.backward()
        return w

    def both_require_grad_and_one_changed():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        v = torch.tensor([3.0, 4.0], requires_grad=True)
        y = (w * v).sum()
        with torch.no_grad():
            v.add_(1.0)
        y.backward()
        return w

    def a_sum_reads_no_numbers():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (w + 1).sum()
        with torch.no_grad():
            w.mul_(3.0)
        y.backward()
        return w

    def forward_again_after_the_change():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        v = torch.tensor([3.0, 4.0], requires_grad=True)
        with torch.no_grad():
            v.add_(1.0)
        (w * v).sum().backward()
        return w

    def an_optimizer_step_between_forward_and_backward():
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        (w * w).sum().backward()
        loss = (w * w).sum()
        opt.step()
        loss.backward()
        return w

    return [weight_changed_input_constant, input_changed_that_a_gradient_reads,
            both_require_grad_and_one_changed, a_sum_reads_no_numbers,
            forward_again_after_the_change, an_optimizer_step_between_forward_and_backward]


@pytest.mark.parametrize("k", range(6))
def test_an_in_place_change_after_the_forward_pass_is_refused_exactly_where_torch_refuses(k, torch):
    import chaingrad

    theirs, ours = _stale_cases(torch)[k], _stale_cases(chaingrad)[k]
    try:
        expected = theirs().grad.tolist()
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc)
        with pytest.raises(RuntimeError, match="modified by an inplace operation: its input"):
            ours()
    else:
        assert ours().grad.tolist() == pytest.approx(expected)


@pytest.mark.parametrize("divisor", ["tensor", "number", "broadcast"])
def test_division_is_torchs_bit_for_bit(torch, divisor) -> None:
    """x / y rounds once, as torch divides (x * (1 / y) rounds twice, and differed from
    torch's in the last bit for a third of the entries), and both gradients are torch's
    bits: g / y and -g * (x / y / y) (a broadcast y's summed in numpy's order)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 40)).astype(np.float32)
    y = {"tensor": rng.uniform(0.5, 2.0, (50, 40)), "number": 3.0,
         "broadcast": rng.uniform(0.5, 2.0, (40,))}[divisor]
    y = np.float32(y) if divisor == "number" else y.astype(np.float32)
    g = rng.standard_normal((50, 40)).astype(np.float32)
    ours = {"x": Tensor(x, requires_grad=True)}
    theirs = {"x": torch.tensor(x, requires_grad=True)}
    if divisor == "number":
        ours["y"], theirs["y"] = float(y), float(y)
    else:
        ours["y"] = Tensor(y, requires_grad=True)
        theirs["y"] = torch.tensor(y, requires_grad=True)
    out, expected = ours["x"] / ours["y"], theirs["x"] / theirs["y"]
    assert np.array_equal(out.detach().numpy(), expected.detach().numpy())
    out.backward(Tensor(g))
    expected.backward(torch.tensor(g))
    assert np.array_equal(ours["x"].grad.numpy(), theirs["x"].grad.numpy())
    if divisor == "tensor":
        assert np.array_equal(ours["y"].grad.numpy(), theirs["y"].grad.numpy())
    elif divisor == "broadcast":  # summed over the rows: in numpy's order, not torch's
        np.testing.assert_allclose(ours["y"].grad.numpy(), theirs["y"].grad.numpy(), rtol=1e-5)
