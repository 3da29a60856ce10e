"""chaingrad/autodiff.py: the order, the one backward loop for both engines and what guards
it, grad mode, and backward from several threads at once."""

from __future__ import annotations

import ast
import inspect
import math
import random
import sys
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples

from chaingrad import (
    DomainError,
    Tensor,
    Value,
    autodiff,
    enable_grad,
    guards,
    is_grad_enabled,
    no_grad,
    primitive,
)
from chaingrad.nn import MLP


def moons_loss(model: MLP, points: list[list[float]]) -> Value:
    scores = [model(p) for p in points]
    return sum(((1 + -s).relu() for s in scores), Value(0.0)) * (1.0 / len(points))


@pytest.fixture
def switching_often():
    """Threads take turns every microsecond (not every 5 ms), so that passes interleave."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_backward_from_eight_threads_adds_up_what_each_pass_gives_alone(switching_often) -> None:
    random.seed(0)
    model = MLP(2, [16, 16, 1])
    batches = [[[random.uniform(-2, 2), random.uniform(-2, 2)] for _ in range(6)]
               for _ in range(8)]
    alone = []
    for batch in batches:
        model.zero_grad()
        moons_loss(model, batch).backward()
        alone.append([p.grad for p in model.parameters()])
    expected = [sum(gs) for gs in zip(*alone)]
    for _ in range(5):  # each run: eight threads building and back-propagating at once
        model.zero_grad()
        losses = [moons_loss(model, batch) for batch in batches]
        start = threading.Barrier(len(losses))

        def run(loss: Value, start: threading.Barrier = start) -> None:
            start.wait()
            loss.backward()

        threads = [threading.Thread(target=run, args=(loss,)) for loss in losses]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = [p.grad for p in model.parameters()]
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_a_walk_never_sees_another_threads_marks(switching_often) -> None:
    x = Value(1.0)
    root = x
    for i in range(20_000):  # a graph with much sharing: every node reuses x
        root = root * 0.5 + x if i % 2 else (root + x).tanh()
    expected = len(autodiff.topological_order(root))
    results: list[int] = []
    start = threading.Barrier(4)

    def walk() -> None:
        start.wait()
        for _ in range(3):
            order = autodiff.topological_order(root)
            results.append(len({id(n) for n in order}) == len(order) == expected)

    threads = [threading.Thread(target=walk) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 12


def test_no_grad_on_a_generator_function_holds_while_its_body_runs() -> None:
    @no_grad()
    def predictions(xs):
        for x in xs:
            assert not is_grad_enabled()
            yield x * 2
        assert not is_grad_enabled()

    x = Value(3.0)
    outs = []
    for y in predictions([x, x]):
        assert is_grad_enabled()  # between resumptions, the caller's mode
        outs.append(y)
    assert all(y._prev == () for y in outs) and [y.data for y in outs] == [6.0, 6.0]


def test_enable_grad_on_a_generator_inside_no_grad() -> None:
    @enable_grad()
    def squares(x):
        yield x * x

    x = Value(2.0)
    with no_grad():
        (y,) = list(squares(x))
    assert y._prev == (x, x)


def test_a_generator_under_no_grad_gets_what_is_sent_and_returns_its_value() -> None:
    @no_grad()
    def echo():
        got = yield 1
        return got

    gen = echo()
    assert next(gen) == 1
    with pytest.raises(StopIteration) as stop:
        gen.send("done")
    assert stop.value.value == "done"


def test_no_grad_decorates_only_callables() -> None:
    with pytest.raises(TypeError, match=r"no_grad\(\): decorates a function, got int"):
        no_grad()(3)


def test_one_pass_serves_both_engines_with_several_roots() -> None:
    x = Value(2.0)
    found = autodiff.backward([x * x, x * 3], [1.0, 0.5], accumulate=False)
    assert found[id(x)] == 2 * 2.0 + 1.5
    t = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    found = autodiff.backward([t * t, t * 3], [np.ones(2), np.ones(2)], accumulate=False)
    assert found[id(t)].tolist() == [5.0, 7.0]
    assert x.grad == 0.0 and t.grad is None


# ---- the one loop ----


def test_values_and_tensors_run_the_one_loop(monkeypatch) -> None:
    passes = []
    real = autodiff.backward_pass
    monkeypatch.setattr(autodiff, "backward_pass",
                        lambda *args, **kw: passes.append(args[0][-1]) or real(*args, **kw))
    x = Value(2.0)
    y = x * x + x.tanh()
    y.backward()
    t = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    loss = (t * t).sum()
    loss.backward()
    assert passes == [y, loss]
    assert x.grad == 4.0 + (1 - math.tanh(2.0) ** 2) and t.grad.tolist() == [2.0, 4.0]


def test_the_loop_fits_on_a_screen_and_calls_the_rule() -> None:
    """The loop a learner reads is the one that runs: at most 30 lines of code (its
    docstring, comments and blank lines aside), with the rule's call in it."""
    source = inspect.getsource(autodiff.backward_pass)
    body = ast.parse(source).body[0].body
    docstring = body[0].end_lineno if isinstance(body[0], ast.Expr) else 0
    lines = source.splitlines()
    signature = range(1, body[0].lineno)  # the def line(s), counted
    code = [line for i, line in enumerate(lines, start=1) if i > docstring or i in signature]
    code = [line for line in code if line.strip() and not line.strip().startswith("#")]
    assert len(code) <= 30, "\n".join(code)
    assert "rule.vjp(" in source


def test_backward_adds_to_what_each_grad_held() -> None:
    random.seed(3)
    model = MLP(3, [4, 1])
    params = model.parameters()
    model([0.5, -1.0, 2.0]).backward()
    fresh = [p.grad for p in params]
    for i, p in enumerate(params):
        p.grad = 0.25 * i  # gradients left from earlier passes
    model([0.5, -1.0, 2.0]).backward()
    assert [p.grad for p in params] == [0.25 * i + g if i else g for i, g in enumerate(fresh)]


def test_a_gradient_that_is_not_finite_is_named_and_every_grad_left_as_it_was() -> None:
    x = Value(0.0)
    y = x.sqrt() * 2
    x.grad = 5.0
    with pytest.raises(DomainError, match="sqrt: the gradient is not finite"):
        y.backward()
    assert x.grad == 5.0 and y.grad == 0.0  # as it was


def test_a_hand_written_closure_runs_as_its_nodes_step() -> None:
    x = Value(3.0)
    out = Value(x.data * 2, (x,), "double")

    def _backward() -> None:
        x.grad += 2 * out.grad

    out._backward = _backward
    (out * out).backward()
    assert x.grad == 2 * 6.0 * 2


def test_a_primitive_that_stops_an_inf_is_caught() -> None:
    """Its rule gives a finite gradient for an infinite one: the pass finds the inf where
    it stopped, after the pass, and names the op that made it."""
    passthrough = primitive(lambda x: x, lambda xs, out, g: (1.0,), name="through")
    x = Value(1e-310)
    y = passthrough(x).log()
    with pytest.raises(DomainError, match="log"):
        y.backward()
    assert x.grad == 0.0 and math.isfinite(y.grad)


def test_a_rule_that_divides_by_zero_is_named_by_its_node() -> None:
    def rule(xs, out, g):
        return (g / xs[0],)

    inverse_rule = primitive(lambda x: x, rule, name="divides")
    x = Value(0.0)
    with pytest.raises(DomainError, match="divides: the gradient is not finite at input"):
        (inverse_rule(x) * 3).backward()
    assert x.grad == 0.0


def test_sum_to_shape_refuses_a_gradient_that_cannot_be_the_inputs() -> None:
    with pytest.raises(ValueError, match=r"a gradient of shape \(3,\) cannot belong to an "
                                         r"input of shape \(2,\)"):
        autodiff.sum_to_shape(np.ones(3), (2,))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_is_finite_reads_overflowing_squares_entry_by_entry_without_a_warning(dtype) -> None:
    """The check sums squares; where that sum overflows, each entry is looked at, and numpy
    warns of nothing (each Tensor op runs the check on its result, in the user's numpy
    error state: an overflow warning there would be about huge but finite numbers)."""
    big = np.full(10, np.finfo(dtype).max / 2, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert guards.is_finite(big) and guards.is_finite(big.reshape(2, 5).T)
        assert guards.is_finite(big[::3])
        for bad in (np.nan, np.inf, -np.inf):
            worse = big.copy()
            worse[3] = bad
            assert not guards.is_finite(worse)
        if dtype is np.float32:  # a Tensor op whose finite result squares past float32
            assert (Tensor(np.full(4, 1e20, dtype=dtype)) * 1e10).shape == (4,)
    assert guards.is_finite(np.arange(5)) and guards.is_finite(np.float32(1.0))
    assert guards.is_finite(np.array([True])) and guards.is_finite(np.zeros((0, 3)))
    assert not guards.is_finite(float("nan")) and not guards.is_finite(np.float64("inf"))
    assert guards.is_finite(3) and guards.is_finite(None)


@examples(200)
@given(st.sampled_from([np.float16, np.float32, np.float64]),
       st.lists(st.sampled_from([0.0, 1.5, -2.0, 1e4, 1e30, 1e300, np.nan, np.inf, -np.inf]),
                min_size=1, max_size=24),
       st.sampled_from(["C", "transposed", "every other"]))
def test_is_finite_agrees_with_numpy_on_any_array(dtype, entries, layout) -> None:
    """Whatever the dtype, the layout in memory and where a nan, inf or huge entry sits."""
    with np.errstate(over="ignore"):
        a = np.array(entries * 2, dtype=dtype)
    a = {"C": a, "transposed": a.reshape(2, -1).T, "every other": a[::2]}[layout]
    with np.errstate(all="ignore"):
        assert guards.is_finite(a) == bool(np.isfinite(a).all())
        assert guards.is_finite(Tensor(a) if np.isfinite(a).all() else a) \
            == bool(np.isfinite(a).all())


def test_own_takes_a_view_that_is_its_whole_array_and_copies_any_other() -> None:
    """A Linear weight's gradient comes back as a transpose transposed back: the array
    itself, taken as it is; a partial view, a seed or an array taken already is copied."""
    node = Tensor(np.zeros((2, 3), dtype=np.float32))
    whole = np.ones((2, 3), dtype=np.float32)
    assert guards.own(whole.T.T, node, set()) is whole
    assert guards.own(whole.T.T, node, {id(whole)}) is not whole  # taken, or a seed
    wider = np.ones((2, 4), dtype=np.float32)
    part = guards.own(wider[:, :3], node, set())
    assert part.base is None and not np.shares_memory(part, wider)
    flipped = guards.own(np.ones((3, 2), dtype=np.float32).T, node, set())
    assert flipped.flags.c_contiguous and flipped.base is None  # another layout: a copy
    read = np.frombuffer(np.ones(6, dtype=np.float32).tobytes(), dtype=np.float32)
    owned = guards.own(read, Tensor(np.zeros(6, dtype=np.float32)), set())  # bytes' view
    assert owned.base is None and owned.flags.writeable and owned.tolist() == [1.0] * 6
