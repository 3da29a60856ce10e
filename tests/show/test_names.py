"""chaingrad.show.names: a model's parameters named as in its state_dict(), the same in
explain, backward_steps, to_dot, draw_dot and to_html."""

from __future__ import annotations

import io

import numpy as np
import pytest

from chaingrad import Tensor, Value, backward_steps, draw_dot, explain, to_dot
from chaingrad.nn import Linear, Neuron
from chaingrad.show.names import node_names, parameter_names, reading_order


def test_every_entry_of_the_state_dict_names_its_value(teaching_graphs):
    _, model = teaching_graphs["mlp"]()
    names = parameter_names(model)
    expected = {f"{key}[{', '.join(map(str, index))}]"
                for key, array in model.state_dict().items() for index in np.ndindex(array.shape)}
    assert set(names.values()) == expected and len(names) == len(model.parameters()) == 13
    assert names[id(model.layers[0].neurons[1].w[0])] == "0.weight[1, 0]"
    assert names[id(model.layers[0].neurons[2].b)] == "0.bias[2]"


def test_params_may_be_a_model_a_dict_or_pairs():
    neuron = Neuron(2)
    as_model = parameter_names(neuron)
    assert sorted(as_model.values()) == ["bias", "weight[0]", "weight[1]"]
    assert parameter_names(dict(neuron.named_parameters())) == as_model
    assert parameter_names(neuron.named_parameters()) == as_model
    w = Value(1.0)
    assert parameter_names({"first": w, "again": [w]}) == {id(w): "first"}  # first name kept


def test_a_label_wins_and_other_nodes_keep_their_op_names(teaching_graphs):
    loss, model = teaching_graphs["mlp"]()
    model.layers[0].neurons[0].w[0].label = "w00"
    order = reading_order(loss)
    names = node_names(order, params=model)
    shown = {names[id(n)] for n in order}
    assert "w00" in shown and "0.weight[0, 0]" not in shown
    assert {"x0", "x1", "y", "mul1", "add1", "relu1", "leaf1", "loss"} <= shown
    assert "0.weight[2, 1]" in shown and "2.bias[0]" in shown
    without = node_names(order)
    old = {without[id(n)] for n in order}  # without params: the names as before
    assert {"leaf1", "leaf13"} <= old and "leaf14" not in old  # 12 weights and biases, -1


def test_every_tool_names_the_parameters_alike(teaching_graphs):
    loss, model = teaching_graphs["mlp"]()
    steps = backward_steps(loss, accumulate=False, params=model)
    assert "0.weight[2, 1]" in {u.name for s in steps for u in s.updates}
    fresh, fresh_model = teaching_graphs["mlp"]()
    text = explain(fresh, file=io.StringIO(), params=fresh_model)
    assert "* : 0.weight[1, 0].grad += x0.data * out.grad" in text
    assert "  0.bias[2].grad = " in text
    assert r"{ 0.weight[1,\ 0] | data" in to_dot(loss, params=model)
    assert r"{ 2.bias[0] | data" in draw_dot(loss, params=model).source


def test_a_tensor_model_names_whole_tensors():
    layer = Linear(3, 2)
    x = Tensor(np.ones((4, 3)), label="x")
    text = explain(layer(x).sum(), file=io.StringIO(), params=layer)
    assert "weight.grad +=" in text and "bias.grad =" in text


def test_bad_params_say_what_was_expected():
    y = Value(1.0) * 2
    with pytest.raises(TypeError, match="explain: params must be a model, a dict of name -> "
                       "parameter, \\(name, parameter\\) pairs or a list of parameters, got "
                       "int"):
        explain(y, file=io.StringIO(), params=3)
    with pytest.raises(TypeError, match="to_dot: params: w\\[0\\] holds a float, not a Value "
                       "or Tensor"):
        to_dot(y, params={"w": [1.0]})
    with pytest.raises(TypeError, match="draw_dot: params: expected a parameter \\(a Value or "
                       "Tensor\\) or a \\(name, parameter\\) pair, got 'w'"):
        draw_dot(y, params=["w"])
    with pytest.raises(TypeError, match="backward_steps: params must be a model"):
        backward_steps(y, params="weights")
