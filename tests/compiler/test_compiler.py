"""chaingrad.compile: the code it writes gives the eager graph's values and gradients, bit
for bit; it reads as the backward's steps; its guards retrace instead of going stale."""

from __future__ import annotations

import math
import random
import re
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples
from ops_table import OP_IDS, OPS, Op

import chaingrad
from chaingrad import CompileCheckError, DomainError, Value, no_grad, primitive
from chaingrad.compiler import chunks, line_table, tracing
from chaingrad.nn import MLP


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def grads_both_ways(make_fn, params: list[Value], *args) -> tuple[list, list, float, float]:
    """Leaf gradients and the output, by the eager function and by its compiled form."""
    fn = make_fn()
    for p in params:
        p.grad = 0.0
    eager = fn(*args)
    eager.backward()
    by_eager = [bits(p.grad) for p in params]
    for p in params:
        p.grad = 0.0
    out = chaingrad.compile(fn)(*args)
    out.backward()
    return by_eager, [bits(p.grad) for p in params], eager.data, out.data


@pytest.mark.parametrize("op", OPS, ids=OP_IDS)
@examples(30)
@given(data=st.data())
def test_every_op_compiles_to_the_same_bits(op: Op, data: st.DataObject) -> None:
    point = data.draw(op.points(), label="point")
    params = [Value(x) for x in point]

    def make():
        def fn():
            out = op.fn(*params)
            return out * out + out * 0.5  # the output reused: gradients that accumulate
        return fn

    eager, compiled, value, compiled_value = grads_both_ways(make, params)
    assert compiled == eager and bits(compiled_value) == bits(value)


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_compile_to_the_same_bits(seed: int) -> None:
    rng = random.Random(seed)
    params = [Value(rng.uniform(0.5, 1.5)) for _ in range(4)]

    def make():
        def fn(scale):
            nodes = list(params)
            pick = random.Random(seed)
            for _ in range(60):
                a, b = pick.choice(nodes), pick.choice(nodes)
                kind = pick.randrange(6)
                if kind == 0:
                    out = a + b * scale
                elif kind == 1:
                    out = (a * b * 0.5).tanh()
                elif kind == 2:
                    out = (a * a + 1).log() - b.relu()
                elif kind == 3:
                    out = a.sigmoid() * b.exp() ** 0.5
                elif kind == 4:
                    out = (a - b).abs() + a.sin() * b.cos()
                else:
                    out = (a * a + 1).sqrt() / (b * b + 1)
                nodes.append(out)
            return sum(nodes[-5:], nodes[0])
        return fn

    eager, compiled, value, compiled_value = grads_both_ways(make, params, 0.7)
    assert compiled == eager and bits(compiled_value) == bits(value)


def demo(model: MLP):
    """micrograd's demo loss (hinge + L2) over points and labels given as arguments."""
    def loss(points, labels):
        inputs = [list(map(Value, row)) for row in points]
        scores = list(map(model, inputs))
        losses = [(1 + -y * s).relu() for y, s in zip(labels, scores)]
        return sum(losses) * (1.0 / len(losses)) + 1e-4 * sum(p * p for p in model.parameters())
    return loss


def test_micrograd_demo_trains_the_same_compiled() -> None:
    rng = random.Random(0)
    points = [[rng.uniform(-1, 2), rng.uniform(-1, 1)] for _ in range(20)]
    labels = [rng.choice((-1, 1)) for _ in points]
    histories = []
    for compiled in (False, True):
        random.seed(1337)
        model = MLP(2, [8, 8, 1])
        loss_fn = demo(model)
        step = chaingrad.compile(loss_fn) if compiled else loss_fn
        history = []
        for k in range(5):  # micrograd's loop, unchanged
            loss = step(points, labels)
            model.zero_grad()
            loss.backward()
            for p in model.parameters():
                p.data -= (1.0 - 0.9 * k / 100) * p.grad
            history.append(bits(loss.data))
        histories.append((history, [bits(p.data) for p in model.parameters()]))
        if compiled:
            assert len(step.traces) == 1  # the parameters changed, not the trace
    assert histories[0] == histories[1]


def test_inputs_change_without_a_retrace_and_constants_retrace() -> None:
    w = Value(2.0)
    step = chaingrad.compile(lambda xs, ys: sum(Value(x) * w * -y for x, y in zip(xs, ys)))
    assert step([1.0, 2.0], [1, 1]).data == -6.0
    assert step([3.0, 4.0], [1, 1]).data == -14.0  # the x are inputs: same trace
    assert len(step.traces) == 1
    assert step([3.0, 4.0], [1, -1]).data == 2.0  # -y is Python arithmetic: guarded
    traced = len(step.traces)
    assert step([3.0, 4.0, 5.0], [1, 1, 1]).data == -24.0  # another structure
    assert len(step.traces) == traced + 1


def test_check_names_the_first_node_that_differs() -> None:
    x = Value(1.0, label="x")

    def branchy(scale):
        y = x * scale
        return y.tanh() if y.data > 0 else y.exp()  # Python control flow on a value

    step = chaingrad.compile(branchy, check=True)
    assert step(2.0).data == math.tanh(2.0)
    with pytest.raises(CompileCheckError, match=r"at tanh1 the graph differs from the traced "
                                                r"one \(traced 'tanh', now 'exp'\)"):
        step(-2.0)


def test_check_passes_a_faithful_function_and_compares_gradients() -> None:
    random.seed(0)
    model = MLP(2, [4, 1])
    step = chaingrad.compile(demo(model), check=True)
    for _ in range(3):
        step([[0.5, -1.0], [1.5, 0.2]], [1, -1]).backward()


def test_check_runs_on_a_tensor_graph_and_names_the_gradient_that_differs() -> None:
    """check=True on Tensors: arrays compared entry by entry, the outputs seeded with ones."""
    chaingrad.manual_seed(0)
    layer = chaingrad.nn.Linear(3, 2)
    targets = chaingrad.tensor([0, 1])

    def loss(x):
        return chaingrad.nn.functional.cross_entropy(layer(x), targets)

    step = chaingrad.compile(loss, check=True)
    for _ in range(2):
        step(chaingrad.randn(2, 3)).backward()
    scale = {"c": 1.0}
    w = chaingrad.ones(3, requires_grad=True)
    scaled = chaingrad.compile(lambda: (w * scale["c"]).sum(), check=True)
    scaled().backward()
    scale["c"] = 2.0  # a constant of the trace changes: the gradients differ
    with pytest.raises(CompileCheckError, match=r"the gradient of \w+ differs: array\(\[2\., "):
        scaled()


def test_the_neuron_reads_as_the_walk_through() -> None:
    x1, w1 = Value(2.0, label="x1"), Value(-3.0, label="w1")
    x2, w2 = Value(0.0, label="x2"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")

    def neuron():
        return (x1 * w1 + x2 * w2 + b).tanh()

    step = chaingrad.compile(neuron)
    out = step()
    out.backward()
    assert [round(v.grad, 4) for v in (x1, w1, x2, w2, b)] == [-1.5, 1.0, 0.5, 0.0, 0.5]
    backward = step.source.split("while True:\n")[1]
    assert [line.strip() for line in backward.splitlines()] == [
        "tanh1_grad = seeds[0]",
        "# tanh1: tanh",
        "add2_grad = (1 - tanh1**2) * tanh1_grad",
        "# add2: +",
        "add1_grad = add2_grad",
        "b_grad = add2_grad",
        "# add1: +",
        "mul1_grad = add1_grad",
        "mul2_grad = add1_grad",
        "# mul2: *",
        "x2_grad = w2 * mul2_grad",
        "w2_grad = x2 * mul2_grad",
        "# mul1: *",
        "x1_grad = w1 * mul1_grad",
        "w1_grad = x1 * mul1_grad",
        "seeds = yield (x1_grad, w1_grad, x2_grad, w2_grad, b_grad)",
    ]
    assert str(step) == step.source and "tanh1 = tanh(add2)" in step.source


def test_a_node_used_twice_gets_both_shares() -> None:
    a = Value(3.0, label="a")
    step = chaingrad.compile(lambda: (a + a) * (a + a))
    step().backward()
    assert a.grad == 24.0
    assert "a_grad = add2_grad\n        a_grad += add2_grad\n" in step.source
    assert step.source.count("a_grad += add1_grad") == 2


def test_several_outputs_each_with_its_backward() -> None:
    x = Value(2.0)
    step = chaingrad.compile(lambda: (x * x, x * 3))
    square, triple = step()
    square.backward()
    triple.backward()
    assert (square.data, triple.data, x.grad) == (4.0, 6.0, 7.0)
    square.backward()  # again: the backward runs again
    assert x.grad == 11.0


def test_under_no_grad_values_without_a_graph() -> None:
    x = Value(2.0)
    step = chaingrad.compile(lambda: x * x)
    with no_grad():
        out = step()
    assert out.data == 4.0 and out._prev == ()


def test_a_users_primitive_is_called_by_name() -> None:
    cube = primitive(lambda x: x**3, lambda xs, out, g: (3 * xs[0] ** 2 * g,), name="cube")
    x = Value(2.0, label="x")
    step = chaingrad.compile(lambda: cube(x) + x)
    step().backward()
    assert x.grad == 13.0 and "cube1 = cube(x)" in step.source


def test_a_node_named_as_a_users_primitive_does_not_hide_its_function() -> None:
    cube = primitive(lambda x: x**3, lambda xs, out, g: (3 * xs[0] ** 2 * g,), name="cube")
    x = Value(2.0, label="cube")
    step = chaingrad.compile(lambda: cube(x) + x)
    out = step()
    out.backward()
    assert (out.data, x.grad) == (10.0, 13.0)
    assert "cube1 = cube_(cube)" in step.source


def test_what_cannot_be_compiled_says_so() -> None:
    x = Value(3.0)

    def closure_op():
        out = Value(x.data * 2, (x,), "double")

        def _backward():
            x.grad += 2 * out.grad

        out._backward = _backward
        return out

    with pytest.raises(TypeError, match="compile: node 'double' has a hand-written _backward"):
        chaingrad.compile(closure_op)()
    with pytest.raises(TypeError, match="must return a Value or a Tensor, or a tuple or list "
                                        "of them; got float"):
        chaingrad.compile(lambda: 3.0)()
    with pytest.raises(TypeError, match="arguments may be numbers, Values, Tensors, numpy "
                                        "arrays, and lists or tuples of them; got str"):
        chaingrad.compile(lambda s: x)("a")
    with pytest.raises(TypeError, match="needs a function, got int"):
        chaingrad.compile(3)
    with pytest.raises(RuntimeError, match="has not been called yet"):
        _ = chaingrad.compile(lambda: x).source
    out = chaingrad.compile(lambda: x * x)()
    with pytest.raises(TypeError, match="create_graph=True\\) needs the eager graph"):
        out.backward(create_graph=True)


def test_an_overflow_is_reported_as_the_eager_function_reports_it() -> None:
    x = Value(1e150)
    step = chaingrad.compile(lambda scale: x * x * Value(scale))
    assert step(1e-200).data == pytest.approx(1e100)
    with pytest.raises(DomainError, match=r"\*: the result of \*\(9\.99.*e\+299, 1.*\) overflows"):
        step(1e10)


@pytest.fixture
def small_chunks(monkeypatch):
    """Graphs of more than 40 nodes written in chunks of 7 nodes."""
    monkeypatch.setattr(chunks, "LOCALS_LIMIT", 40)
    monkeypatch.setattr(chunks, "CHUNK", 7)


@pytest.mark.parametrize("seed", range(6))
def test_a_graph_in_chunks_gives_the_same_bits(small_chunks, seed: int) -> None:
    test_random_graphs_compile_to_the_same_bits(seed)


def test_the_demo_in_chunks_trains_the_same(small_chunks) -> None:
    test_micrograd_demo_trains_the_same_compiled()
    step = chaingrad.compile(lambda a: Value(a) * 2 + sum(Value(i) for i in range(50)))
    step(1.0)
    with pytest.raises(RuntimeError, match="written in chunks over lists of values, and not "
                                           "kept"):
        _ = step.source


def test_a_graph_in_chunks_is_let_go_before_its_code_is_compiled(
        small_chunks, monkeypatch, collector_sees_this_test_only) -> None:
    import gc

    def alive() -> int:  # the Values made since the test began
        gc.collect()
        return sum(type(o) is Value for o in gc.get_objects())

    build, seen = tracing.build, []

    def counting_build(writer, texts):
        seen.append(alive())  # when the code starts to be compiled
        return build(writer, texts)

    monkeypatch.setattr(tracing, "build", counting_build)
    w = Value(0.5)

    def chain(x):
        y = Value(x)
        for _ in range(30):
            y = (y * w).tanh()
        return y

    chunk, while_written = chunks.write_chunk, []

    def counting_chunk(writer, start, kind):
        if kind == "backward":
            while_written.append(alive())
        return chunk(writer, start, kind)

    monkeypatch.setattr(chunks, "write_chunk", counting_chunk)
    step = chaingrad.compile(chain)
    before = alive()
    out = step(0.3)
    # the graph shrinks chunk by chunk as the backward is written, last chunk first
    assert len(while_written) == 9 and while_written == sorted(while_written, reverse=True)
    assert while_written[0] - while_written[-1] >= 40
    # then only the input leaf and the template of outputs, not the 61 nodes; then the output
    assert seen == [before + 2] and alive() == before + 3
    out.backward()
    assert out.data == chain(0.3).data


def test_a_chunk_without_column_positions_runs_and_still_tracebacks(small_chunks) -> None:
    import sys
    import traceback

    def logs(x):
        y = Value(x)
        for _ in range(20):
            y = (y * 1.0001).log() + 2.0
        return y

    code = line_table.without_positions(logs.__code__)
    if sys.version_info[:2] in line_table.KNOWN_LOCATION_TABLES:
        assert len(code.co_linetable) < len(logs.__code__.co_linetable) / 2
    step = chaingrad.compile(logs)
    assert step(3.0).data == logs(3.0).data
    with pytest.raises(DomainError, match="log: got -1.0001") as error:
        step(-1.0)
    shown = "".join(traceback.format_exception(error.value))
    assert re.search(r"<chaingrad.compile #\d+: forward_0>", shown) and "in on_floats" in shown


@pytest.mark.slow  # 150,000 nodes, compiled
def test_a_graph_past_the_locals_limit_compiles_in_chunks_under_the_default_recursion_limit(
) -> None:
    import sys

    from chaingrad.compiler import chunks

    w = Value(0.5)
    # six nodes a round, the constants included: half as many again as the default limit,
    # so that the chunked writer runs with its real sizes (the million-node chain of the
    # README is differentiated in tests/test_engine.py; compiling it took a minute more)
    rounds = chunks.LOCALS_LIMIT * 3 // 2 // 6

    def chain(x):
        y = Value(x)
        for _ in range(rounds):
            y = (y * w + 1.0).tanh() * 0.5
        return y

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # CPython's default
    try:
        step = chaingrad.compile(chain)
        out = step(0.3)
        out.backward()
        compiled_grad, w.grad = w.grad, 0.0
        eager = chain(0.3)
        eager.backward()
    finally:
        sys.setrecursionlimit(limit)
    assert step.last.chunked  # the graph was let go as its code was written
    assert out.data == eager.data
    assert compiled_grad == pytest.approx(w.grad, rel=1e-12)


# ---- Tensors ----


def tensor_mlp():
    import numpy as np

    from chaingrad import Tensor
    from chaingrad.losses import cross_entropy
    from chaingrad.nn import Linear, ReLU, Sequential, manual_seed

    manual_seed(0)
    model = Sequential(Linear(6, 5), ReLU(), Linear(5, 3))

    def loss(x, labels):
        return cross_entropy(model(Tensor(x)), labels)

    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((4, 6)).astype(np.float32), rng.integers(0, 3, 4))
               for _ in range(3)]
    return model, loss, batches


def test_a_tensor_step_compiles_to_the_same_bits_and_reads_new_batches() -> None:
    import numpy as np

    model, loss, batches = tensor_mlp()
    step = chaingrad.compile(loss)
    for x, labels in batches:  # new inputs and new labels each call: one trace
        for fn in (loss, step):
            for p in model.parameters():
                p.grad = None
            out = fn(x, labels)
            out.backward()
            if fn is loss:
                expected = (out.item(), [p.grad.clone() for p in model.parameters()])
        assert out.item() == expected[0]
        assert all(np.array_equal(p.grad, g) for p, g in zip(model.parameters(), expected[1]))
    assert len(step.traces) == 1
    assert "args[1]" in step.source  # the labels are read from the call, not baked in


def test_a_small_convnet_compiles_to_the_same_gradients() -> None:
    import numpy as np

    from chaingrad import Tensor
    from chaingrad.nn import Conv2d, Flatten, Linear, ReLU, Sequential, manual_seed

    manual_seed(1)
    net = Sequential(Conv2d(1, 2, 3, padding=1), ReLU(), Flatten(), Linear(2 * 5 * 5, 1))
    x = np.random.default_rng(2).standard_normal((3, 1, 5, 5)).astype(np.float32)
    grads = []
    for fn in (lambda a: (net(Tensor(a)) ** 2).mean(),):
        for f in (fn, chaingrad.compile(fn)):
            for p in net.parameters():
                p.grad = None
            f(x).backward()
            grads.append([p.grad.clone() for p in net.parameters()])
    assert all(np.array_equal(a, b) for a, b in zip(*grads))


def test_compiling_tensors_works_first_thing_in_a_fresh_process(run_python) -> None:
    out = run_python(
        "import numpy as np, chaingrad\n"
        "from chaingrad import Tensor\n"
        "w = Tensor(np.ones((3, 2)), requires_grad=True)\n"
        "step = chaingrad.compile(lambda x: (Tensor(x) @ w).tanh().sum())\n"
        "step(np.ones((4, 3))).backward()\n"
        "print(tuple(w.grad.shape))\n")
    assert out.returncode == 0 and out.stdout.strip().endswith("(3, 2)"), out.stderr


def test_an_output_that_reaches_no_parameter_and_explain_of_a_compiled_output() -> None:
    out = chaingrad.compile(lambda x: (Value(x) * 2).tanh())(0.5)
    out.backward()
    assert out._prev == () and out.grad == 1.0
    x1, w1 = Value(2.0, label="x1"), Value(-3.0, label="w1")
    text = chaingrad.explain(chaingrad.compile(lambda: (x1 * w1).tanh())(),
                             file=__import__("io").StringIO())
    assert "<lambda> : x1.grad += d(out)/d(x1) * out.grad" in text
    assert x1.grad == pytest.approx(-3 * (1 - math.tanh(-6.0) ** 2))


def test_a_compiled_tensor_graph_refuses_backward_after_any_parameter_changed_in_place():
    import numpy as np

    from chaingrad import Tensor

    w1 = Tensor([1.0, 2.0], requires_grad=True)
    w2 = Tensor([3.0, 4.0], requires_grad=True)
    step = chaingrad.compile(lambda x: (Tensor(x) * w1 * w2).sum())
    step(np.ones(2)).backward()  # traced, then run
    out = step(np.ones(2))
    with no_grad():
        w2 += 1.0  # the second parameter: its rule (compile's own) may read any input
    with pytest.raises(RuntimeError, match="modified by an inplace operation: its input 1"):
        out.backward()


def test_a_tensor_named_as_what_the_code_uses_gets_a_name_of_its_own():
    import numpy as np

    from chaingrad import Tensor

    w = Tensor(np.ones((3, 2)), requires_grad=True, label="np")
    k = Tensor(np.full((3, 2), 0.5), requires_grad=True, label="K")
    fn = lambda x: (Tensor(x) @ (w * k + np.arange(2.0))).tanh().sum()  # noqa: E731
    fn(np.ones((4, 3))).backward()
    eager = [w.grad.clone(), k.grad.clone()]
    w.grad = k.grad = None
    step = chaingrad.compile(fn)
    step(np.ones((4, 3))).backward()
    assert np.array_equal(w.grad, eager[0]) and np.array_equal(k.grad, eager[1])
    assert "(_np, _K) = params" in step.source and "K[0]" in step.source


@pytest.mark.parametrize("transposed", [True, False])
def test_a_batch_of_rows_times_one_matrix_compiles_to_the_eager_bits(transposed):
    """(B, T, n) @ W: the rule makes one product of all the rows (as torch does), and
    the compiled code runs that rule, not the formula of one matrix per batch entry."""
    import numpy as np

    from chaingrad import Tensor

    rng = np.random.default_rng(0)
    weight = Tensor(rng.normal(size=(3, 4)).astype(np.float32), requires_grad=True)
    fn = lambda x: (Tensor(x) @ (weight.T if transposed else weight.reshape(4, 3))).tanh().sum()  # noqa: E731
    x = rng.normal(size=(2, 5, 4)).astype(np.float32)
    fn(x).backward()
    eager, weight.grad = weight.grad.clone(), None
    step = chaingrad.compile(fn)
    for _ in range(2):
        step(x).backward()
        assert np.array_equal(weight.grad, eager)
        weight.grad = None


def test_a_vector_times_a_transposed_matrix_compiles():
    import numpy as np

    from chaingrad import Tensor

    weight = Tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    fn = lambda x: (Tensor(x) @ weight.T).sum()  # noqa: E731  (1-D @ 2-D: a row, to the rule)
    fn(np.ones(3)).backward()
    eager, weight.grad = weight.grad.clone(), None
    chaingrad.compile(fn)(np.ones(3)).backward()
    assert np.array_equal(weight.grad, eager)


def test_a_traceback_through_compiled_code_shows_its_line_until_the_function_is_gone():
    """The compiled source is registered with linecache: a traceback, pdb and inspect show
    the line that ran; the entry goes with the function."""
    import gc
    import linecache
    import traceback

    before = set(linecache.cache)
    step = chaingrad.compile(lambda x: (x * 2).log())
    step(Value(1.0))
    with pytest.raises(chaingrad.DomainError) as caught:
        step(Value(-1.0))
    shown = "".join(traceback.format_exception(caught.value))
    assert "<chaingrad.compile #" in shown and "log1 = log(mul1)" in shown
    names = [name for name in set(linecache.cache) - before
             if name.startswith("<chaingrad.compile #")]
    assert len(names) == 1
    del step, caught, shown
    gc.collect()
    assert not any(name in linecache.cache for name in names)


def test_tensor_code_calls_each_forward_by_its_name():
    """No forward is text: Tensor code calls numpy's function, the kernel or the function
    beside the rule by name, with the inputs then the parameters."""
    import numpy as np

    from chaingrad import Tensor

    w = Tensor(np.ones((3, 2)), requires_grad=True)
    step = chaingrad.compile(lambda x: (Tensor(x) @ w).tanh().softmax(-1).sum())
    x = np.arange(6.0).reshape(2, 3) / 10
    step(x).backward()
    source = step.source
    assert "np.tanh(" in source and "kernels.softmax_on_arrays(" in source
    assert "matmul_on_arrays(" in source and "sum_on_arrays(" in source
    eager = Tensor(np.ones((3, 2)), requires_grad=True)
    ((Tensor(x) @ eager).tanh().softmax(-1).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), eager.grad.numpy(), rtol=0, atol=1e-15)


def test_a_parameterised_primitive_called_by_name_in_another_rule_runs_eagerly_and_compiled():
    """A rule (and its formula) may call softplus or leaky_relu by name with their defaults
    left out; compiled code calls them as the eager rule does (issue 33)."""
    import numpy as np

    from chaingrad import Tensor
    from chaingrad.declaration import define
    from chaingrad.rules import LEAKY_RELU as leaky_relu
    from chaingrad.rules import SOFTPLUS as softplus
    from chaingrad.rules import leaky_relu_on_arrays, softplus_forward

    @define("smooth", ("(softplus(x.data) + leaky_relu(x.data)) * out.grad",),
            forward=lambda x: x, array=lambda x: x * 1.0, saves=("x",))
    def SMOOTH(xs, out, g):
        """x;  d/dx = softplus(x) + leaky_relu(x) (made up: only the calls matter)."""
        return ((softplus(xs[0]) + leaky_relu(xs[0])) * g,)

    def expected(x: float) -> float:
        return softplus_forward(x, 1.0, 20.0) + (x if x > 0 else 0.01 * x)

    for x0 in (-2.0, 0.5):
        eager = Value(x0)
        eager._apply(SMOOTH).backward()
        compiled = Value(x0)
        step = chaingrad.compile(lambda v: v._apply(SMOOTH))
        step(compiled).backward()
        assert eager.grad == pytest.approx(expected(x0), rel=1e-15)
        assert compiled.grad == pytest.approx(eager.grad, rel=1e-15)
    x = np.array([-2.0, 0.5])
    leaf = Tensor(x, requires_grad=True)
    leaf._apply(SMOOTH).sum().backward()
    tensor_step = chaingrad.compile(lambda t: t._apply(SMOOTH).sum())
    other = Tensor(x, requires_grad=True)
    tensor_step(other).backward()
    want = np.log1p(np.exp(x)) + leaky_relu_on_arrays(x, 0.01)
    np.testing.assert_allclose(leaf.grad.numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(other.grad.numpy(), want, rtol=1e-15)


# ---- Tensor masks and indices given as arguments, or kept in a buffer ----


def _masked(w, x, m):
    return (w * x).masked_fill(m, 0.0).sum()


def _where(w, x, m):
    return chaingrad.where(m, w * x, -w).sum()


def _selected(w, x, m):
    return (w * x)[m].sum()


def _compared(w, x, m):
    return (w * x).masked_fill(m == 0, 0.0).sum()


def _picked(w, x, m):
    return chaingrad.nn.functional.cross_entropy((w * x).reshape(2, 2), m)


MASK_CASES = [  # (function, the two masks, the traces two calls take, what the code reads)
    (_masked, [[True, False, True, False], [False, True, True, True]], 1,
     "np.broadcast_to(args[2]._value, (4,))"),
    (_where, [[True, False, True, False], [False, True, True, True]], 1, "args[2]._value"),
    (_picked, [[0, 1], [1, 1]], 1, "args[2]._value"),
    (_selected, [[True, False, True, False], [False, True, True, True]], 2, None),
    (_compared, [[1, 0, 1, 0], [0, 1, 1, 1]], 2, None),
]


@pytest.mark.parametrize(("fn", "masks", "traces", "reads"), MASK_CASES,
                         ids=[case[0].__name__.strip("_") for case in MASK_CASES])
def test_a_tensor_mask_given_anew_is_read_afresh_or_traced_again(fn, masks, traces, reads):
    """A mask or an index Tensor that changes between calls is read from the call (the
    code reads its array), or, where what the function made of it is a constant of the
    trace (``m == 0``) or decides a shape (``x[m]``), the call traces again: never the first
    call's mask."""
    import numpy as np

    from chaingrad import Tensor

    step = chaingrad.compile(fn)
    x = Tensor([1.0, -2.0, 3.0, 0.5])
    for mask in masks:
        results = []
        for f in (fn, step):
            w = Tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
            out = f(w, x, chaingrad.tensor(mask))
            out.backward()
            results.append((out.item(), w.grad.numpy()))
        assert results[1][0] == results[0][0]
        assert np.array_equal(results[1][1], results[0][1])
    assert len(step.traces) == 1  # one shape of call
    assert reads is None or reads in step.source
    assert _traces_taken(fn, masks) == traces


def _traces_taken(fn, masks) -> int:
    """How many times ``compile(fn)`` traces over calls with these masks in turn."""
    from chaingrad import Tensor

    step, traced = chaingrad.compile(fn), []
    w, x = Tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True), Tensor([1.0, -2.0, 3.0, 0.5])
    for mask in masks:
        step(w, x, chaingrad.tensor(mask))
        traced.append(step.last)  # (kept: a trace let go may leave its id to the next)
    return len({id(trace) for trace in traced})


def test_a_buffer_mask_changed_in_place_between_calls_is_read_afresh() -> None:
    from chaingrad import Tensor

    mask = chaingrad.tensor([True, False, True, False])
    w = Tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)

    def masked(x):
        return (w * x).masked_fill(mask, 0.0).sum()

    step, x = chaingrad.compile(masked), Tensor([1.0, 1.0, 1.0, 1.0])
    assert step(x).item() == 6.0
    mask.copy_(chaingrad.tensor([False, True, True, True]))
    assert step(x).item() == masked(x).item() == 1.0
    mask[0] = True
    assert step(x).item() == masked(x).item() == 0.0
    assert len(step.traces) == 1
