"""Neuron, Layer and MLP: micrograd's behaviour, plus activations and width-1 layers."""

from __future__ import annotations

import random
import re

import pytest
from ops_table import agrees_with_numeric

import chaingrad
from chaingrad import Value, no_grad
from chaingrad.nn import MLP, Layer, Module, Neuron


def _seeded(seed: int = 0) -> None:
    random.seed(seed)


def test_neuron_parameters_and_initialisation() -> None:
    _seeded()
    n = Neuron(3)
    assert len(n.parameters()) == 4
    assert n.parameters()[-1] is n.b and n.b.data == 0.0
    assert all(-1.0 <= w.data <= 1.0 for w in n.w)
    assert all(isinstance(p, Value) for p in n.parameters())


def test_neuron_computes_relu_of_the_weighted_sum() -> None:
    _seeded()
    n = Neuron(2)
    n.w[0].data, n.w[1].data, n.b.data = 0.5, -2.0, 0.25
    out = n([2.0, 1.0])
    assert out._op == "ReLU" and out.data == 0.0  # 1 - 2 + 0.25 < 0
    out = n([2.0, -1.0])
    assert out.data == 3.25
    linear = Neuron(2, nonlin=False)
    linear.w[0].data, linear.w[1].data = 0.5, -2.0
    assert linear([2.0, 1.0]).data == -1.0


def test_neuron_reprs() -> None:
    assert repr(Neuron(2)) == "ReLUNeuron(2)"
    assert repr(Neuron(5, nonlin=False)) == "LinearNeuron(5)"


def test_layer_returns_a_list_or_a_single_value() -> None:
    _seeded()
    wide = Layer(2, 3)
    out = wide([1.0, -1.0])
    assert isinstance(out, list) and len(out) == 3
    assert all(isinstance(v, Value) for v in out)
    single = Layer(2, 1)([1.0, -1.0])
    assert isinstance(single, Value)
    assert len(wide.parameters()) == 9
    assert repr(wide) == "Layer of [ReLUNeuron(2), ReLUNeuron(2), ReLUNeuron(2)]"


def test_mlp_repr_and_structure() -> None:
    _seeded()
    model = MLP(2, [3, 2, 1])
    assert repr(model) == (
        "MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2), ReLUNeuron(2)], "
        "Layer of [ReLUNeuron(3), ReLUNeuron(3)], Layer of [LinearNeuron(2)]]"
    )
    assert [n.nonlin for layer in model.layers for n in layer.neurons] == [True] * 5 + [False]


def test_mlp_hidden_layers_are_relu_and_the_last_is_linear() -> None:
    _seeded(3)
    model = MLP(2, [4, 4, 1])
    out = model([0.3, -0.8])
    assert isinstance(out, Value)
    assert out._op == "+"  # the weighted sum, no activation on the last layer
    hidden = model.layers[0]([0.3, -0.8])
    assert all(h._op == "ReLU" and h.data >= 0.0 for h in hidden)
    model.layers[-1].neurons[0].b.data = -100.0
    assert model([0.3, -0.8]).data < 0.0  # a linear output can go negative


def test_mlp_parameter_count_of_the_demo_model() -> None:
    model = MLP(2, [16, 16, 1])
    assert len(model.parameters()) == 337
    assert len({id(p) for p in model.parameters()}) == 337


def test_mlp_with_a_hidden_layer_of_width_one() -> None:
    _seeded(5)
    model = MLP(2, [1, 3, 1])
    model.layers[0].neurons[0].b.data = 0.5  # keep the single ReLU unit on
    out = model([0.2, -0.4])
    assert isinstance(out, Value)
    out.backward()
    assert len(model.parameters()) == 3 + 6 + 4
    first = model.layers[0].neurons[0].w[0]
    assert first.grad != 0.0

    def as_function_of_first(w: Value) -> Value:
        saved = model.layers[0].neurons[0].w[0]
        model.layers[0].neurons[0].w[0] = w
        try:
            return model([0.2, -0.4])
        finally:
            model.layers[0].neurons[0].w[0] = saved

    eps = 1e-6
    with no_grad():
        up = as_function_of_first(Value(first.data + eps)).data
        down = as_function_of_first(Value(first.data - eps)).data
    assert agrees_with_numeric(first.grad, (up - down) / (2 * eps))


@pytest.mark.parametrize(("activation", "op", "name"), [
    ("relu", "ReLU", "ReLU"),
    ("tanh", "tanh", "Tanh"),
    ("sigmoid", "sigmoid", "Sigmoid"),
    ("linear", "+", "Linear"),
])
def test_activations(activation: str, op: str, name: str) -> None:
    _seeded(1)
    neuron = Neuron(2, activation=activation)
    assert neuron([0.5, -0.5])._op == op
    assert repr(neuron).endswith("Neuron(2)")
    model = MLP(2, [3, 1], activation=activation)
    hidden = model.layers[0]([0.5, -0.5])
    assert all(h._op == op for h in hidden)
    assert model([0.5, -0.5])._op == "+"  # the last layer stays linear
    if activation == "tanh":
        assert all(-1.0 < h.data < 1.0 for h in hidden)
    if activation == "sigmoid":
        assert all(0.0 < h.data < 1.0 for h in hidden)
    if activation == "linear":  # a linear net: f(2x) - f(0) == 2 (f(x) - f(0))
        f0, f1, f2 = (model([t, -t]).data for t in (0.0, 0.5, 1.0))
        assert f2 - f0 == pytest.approx(2 * (f1 - f0), abs=1e-12)


def test_bad_activation_is_a_value_error() -> None:
    for build in (lambda: Neuron(2, activation="gelu"),
                  lambda: Layer(2, 3, activation="gelu"),
                  lambda: MLP(2, [3, 1], activation="gelu")):
        with pytest.raises(ValueError, match="gelu"):
            build()


def test_neuron_with_the_wrong_number_of_inputs() -> None:
    with pytest.raises(ValueError, match="3"):
        Neuron(3)([1.0, 2.0])


def test_random_seed_makes_initialisation_reproducible() -> None:
    random.seed(1234)
    a = MLP(3, [4, 4, 1])
    random.seed(1234)
    b = MLP(3, [4, 4, 1])
    c = MLP(3, [4, 4, 1])
    assert [p.data for p in a.parameters()] == [p.data for p in b.parameters()]
    assert [p.data for p in a.parameters()] != [p.data for p in c.parameters()]


def test_zero_grad() -> None:
    _seeded(2)
    model = MLP(2, [4, 1])
    loss = (model([1.0, -2.0]) - 1.0) ** 2
    loss.backward()
    first = [p.grad for p in model.parameters()]
    assert any(g != 0.0 for g in first)
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())
    loss = (model([1.0, -2.0]) - 1.0) ** 2
    loss.backward()
    assert [p.grad for p in model.parameters()] == first


def test_module_base_class() -> None:
    assert Module().parameters() == []
    Module().zero_grad()  # nothing to zero, and no error


def test_a_few_steps_of_gradient_descent_reduce_the_loss() -> None:
    _seeded(7)
    model = MLP(1, [8, 1], activation="tanh")
    xs = [-1.0, -0.5, 0.0, 0.5, 1.0]
    ys = [x * x for x in xs]

    def loss() -> Value:
        return sum((model([x]) - y) ** 2 for x, y in zip(xs, ys, strict=True)) / len(xs)

    start = loss().data
    for _ in range(30):
        current = loss()
        model.zero_grad()
        current.backward()
        for p in model.parameters():
            p.data -= 0.05 * p.grad
    assert loss().data < start


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Neuron(-1), "Neuron: nin must be a whole number >= 0, got -1"),
    (lambda: Neuron(2.5), "Neuron: nin must be a whole number >= 0, got 2.5"),
    (lambda: Layer(2, -3), "Layer: nout must be a whole number >= 1, got -3"),
    (lambda: Layer(2, 0), "Layer: nout must be a whole number >= 1, got 0"),
    (lambda: MLP(2, [4, -1]), "Layer: nout must be a whole number >= 1, got -1"),
    (lambda: MLP(2, [0, 1]), "Layer: nout must be a whole number >= 1, got 0"),
])
def test_bad_sizes_are_refused(build, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build()


@pytest.mark.parametrize("nouts", [[], 3, "16", None])
def test_mlp_needs_a_list_of_widths(nouts) -> None:
    with pytest.raises(TypeError, match="MLP: nouts must be a non-empty list of layer widths"):
        MLP(2, nouts)


def test_numpy_int_sizes_work() -> None:
    np = pytest.importorskip("numpy")
    assert len(MLP(np.int64(2), [np.int64(3), 1]).parameters()) == 3 * 3 + 4


@pytest.mark.parametrize("inputs", [[0.5, -1.25, 2.0], "values", "mixed"])
def test_a_neuron_builds_micrograds_nodes(inputs) -> None:
    """Neuron's fast path makes the very graph of micrograd's ``sum(w*x ..., b)``: the same
    ops in the same order, the same numbers, the same gradients, bit for bit."""
    random.seed(3)
    neuron = Neuron(3)
    data = [0.5, -1.25, 2.0]

    def make(data):
        if inputs == "values":
            return [Value(x) for x in data]
        if inputs == "mixed":
            return [Value(data[0]), data[1], Value(data[2])]
        return list(data)

    xs, ref_xs = make(data), make(data)
    out = neuron(xs)
    ref = sum((wi * xi for wi, xi in zip(neuron.w, ref_xs)), neuron.b).relu()

    def shape(root):
        return [(n._op, n.data, len(n._prev)) for n in chaingrad.topological_order(root)]

    assert shape(out) == shape(ref)
    grads = []
    for root, leaves in ((out, xs), (ref, ref_xs)):
        neuron.zero_grad()
        root.backward()
        grads.append([p.grad for p in neuron.parameters()]
                     + [x.grad for x in leaves if isinstance(x, Value)])
    assert grads[0] == grads[1]


def test_nn_names_its_submodules_and_what_it_lacks():
    import chaingrad.nn as nn

    assert nn.functional.__name__ == "chaingrad.nn.functional"
    with pytest.raises(AttributeError, match="chaingrad.nn has no 'GroupNorm' yet"):
        nn.GroupNorm  # noqa: B018
    with pytest.raises(AttributeError, match="module 'chaingrad.nn' has no attribute 'Nope'"):
        nn.Nope  # noqa: B018
