"""The backprop tools on makemore part 2's MLP (issue 24): explain, backward_steps, to_dot,
draw_dot and the page on the loss of a batch of 32 contexts of 3 letters, embedded in 10
dimensions, a tanh layer of 200, 27 logits and F.cross_entropy; built from raw tensors (C,
W1, b1, W2, b2) as in the lecture, and as an nn.Module.

The parameters are named as the learner names them: by a model's state_dict() names, a dict
``{"C": C, ...}`` (torchviz's spelling), or a list of tensors carrying labels.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import chaingrad
import chaingrad.nn as nn
import chaingrad.nn.functional as F
from chaingrad import backward_steps, draw_dot, explain, to_dot, to_html
from chaingrad.show.names import grad_summary, parameter_names, reading_order

BATCH, BLOCK, EMBED, HIDDEN, LETTERS = 32, 3, 10, 200, 27
NAMES = ("C", "W1", "b1", "W2", "b2")


def makemore_batch(batch: int = BATCH) -> tuple:
    """A batch of contexts (batch, 3) and next letters (batch,), drawn from the lectures'
    seed: the shapes of makemore's minibatches (the letters themselves do not matter here)."""
    g = chaingrad.Generator().manual_seed(2147483647)
    X = chaingrad.randint(0, LETTERS, (batch, BLOCK), generator=g)
    Y = chaingrad.randint(0, LETTERS, (batch,), generator=g)
    return X, Y


def raw_mlp(batch: int = BATCH, labels: bool = False) -> tuple:
    """The lecture's MLP from raw tensors: (loss, logits, {name: parameter}), with every
    parameter labelled by its variable's name when ``labels``."""
    g = chaingrad.Generator().manual_seed(2147483647)
    shapes = {"C": (LETTERS, EMBED), "W1": (BLOCK * EMBED, HIDDEN), "b1": (HIDDEN,),
              "W2": (HIDDEN, LETTERS), "b2": (LETTERS,)}
    params = {name: chaingrad.randn(shape, generator=g, requires_grad=True)
              for name, shape in shapes.items()}
    if labels:
        for name, p in params.items():
            p.label = name
    X, Y = makemore_batch(batch)
    emb = params["C"][X]
    h = chaingrad.tanh(emb.view(-1, BLOCK * EMBED) @ params["W1"] + params["b1"])
    logits = h @ params["W2"] + params["b2"]
    return F.cross_entropy(logits, Y), logits, params


class Makemore(nn.Module):
    """The same MLP as a Module: an Embedding, a Linear + Tanh, a Linear to the logits."""

    def __init__(self) -> None:
        super().__init__()
        self.C = nn.Embedding(LETTERS, EMBED)
        self.hidden = nn.Sequential(nn.Linear(BLOCK * EMBED, HIDDEN), nn.Tanh())
        self.to_logits = nn.Linear(HIDDEN, LETTERS)

    def forward(self, x: chaingrad.Tensor) -> chaingrad.Tensor:
        return self.to_logits(self.hidden(self.C(x).view(-1, BLOCK * EMBED)))


def module_mlp() -> tuple:
    chaingrad.manual_seed(0)
    model = Makemore()
    X, Y = makemore_batch()
    return F.cross_entropy(model(X), Y), model


# ---- names and shapes ----


def test_the_drawing_shows_shapes_at_makemores_size():
    loss, _, params = raw_mlp()
    order = reading_order(loss)
    assert len(order) == 14  # 5 parameters and 9 ops: one per step of explain below
    text = to_dot(loss, params=params)
    for expected in ("{ C | data (27, 10) float32 | grad None }",
                     "{ getitem1 | data (32, 3, 10) float32 | grad None }",
                     "{ W2 | data (200, 27) float32 | grad None }",
                     "{ add2 | data (32, 27) float32 | grad None }",
                     "{ log_softmax1 | data (32, 27) float32 | grad None }"):
        assert expected in text
    assert "leaf" not in text  # every parameter named; the batch is an index, not a node
    loss.backward()
    assert "{ W1 | data (30, 200) float32 | grad (30, 200) }" in to_dot(loss, params=params)


@pytest.mark.parametrize("spelling", ["dict", "pairs", "labelled list"])
def test_the_learner_s_own_names_for_the_parameters(spelling):
    loss, _, params = raw_mlp(labels=spelling == "labelled list")
    given = {"dict": params, "pairs": list(params.items()),
             "labelled list": list(params.values())}[spelling]
    text = explain(loss, file=io.StringIO(), params=given)
    for name in NAMES:
        assert f"  {name}.grad = ({', '.join(map(str, params[name].shape))}" in text
    assert "matmul : W2.grad += tanh1.data.T @ out.grad   (200, 27) = (200, 32) @ (32, 27)" \
        in text
    assert "leaf" not in text


def test_a_list_of_unlabelled_parameters_names_each_by_its_place():
    loss, _, params = raw_mlp()
    C, W1, b1, W2, b2 = params.values()
    W1.label = "W1"
    names = parameter_names([C, W1, b1, (W2, b2)])
    assert names == {id(C): "params[0]", id(W1): "params[1]", id(b1): "params[2]",
                     id(W2): "params[3, 0]", id(b2): "params[3, 1]"}
    shown = {u.name for s in backward_steps(loss, params=[C, W1, b1, W2, b2])
             for u in s.updates}
    assert {"params[0]", "W1", "params[2]", "params[3]", "params[4]"} <= shown  # labels win


def test_a_lone_tensor_as_params_is_refused_with_what_to_write():
    loss, _, params = raw_mlp()
    with pytest.raises(TypeError, match=r"to_dot: params must be a model, a dict of name -> "
                       r"parameter, \(name, parameter\) pairs or a list of parameters, got a "
                       r"Tensor: put it in a list \(params=\[x\]\)"):
        to_dot(loss, params=params["C"])
    with pytest.raises(TypeError, match=r"explain: params: expected a parameter \(a Value or "
                       r"Tensor\) or a \(name, parameter\) pair, got 'W1'"):
        explain(loss, file=io.StringIO(), params=["W1"])


def test_the_module_s_parameters_get_their_state_dict_names():
    loss, model = module_mlp()
    assert [name for name, _ in model.named_parameters()] == [
        "C.weight", "hidden.0.weight", "hidden.0.bias", "to_logits.weight",
        "to_logits.bias"]
    text = explain(loss, file=io.StringIO(), params=model)
    assert "getitem : C.weight.grad += scatter(out.grad, index, C.weight.shape)" in text
    assert ("transpose : hidden.0.weight.grad += out.grad.transpose(inverse(axes))\n"
            "              (200, 30) = (30, 200).transpose(inverse((1, 0)))") in text
    for name, p in model.named_parameters():
        assert f"  {name}.grad = {grad_summary(p.grad)}" in text
    assert "{ hidden.0.bias | data (200,) float32 | grad (200,) }" in to_dot(loss, params=model)


def test_an_index_array_is_named_not_printed():
    """getitem's and nll_loss's parameters are indices: at a batch of 32 the arrays would
    fill the screen (and the page's formula), so the filled-in formula keeps the words
    ``index`` and ``at``."""
    loss, _, params = raw_mlp()
    text = explain(loss, file=io.StringIO(), params=params)
    assert "array(" not in text
    assert ("nll_loss : log_softmax1.grad += scatter(out.grad * (-w / d), at, "
            "log_softmax1.shape)\n"
            "             (32, 27) = scatter(() * (-1.0 / 32), at, (32, 27))") in text
    assert "(27, 10) = scatter((32, 3, 10), index, (27, 10))" in text
    small = chaingrad.Tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True, label="x")
    steps = backward_steps(small[1].sum())  # a small index is still shown as it is
    assert steps[-1].updates[0].numbers == "scatter((2,), 1, (2, 2))"


# ---- the cross-entropy's backward, opened ----


def test_the_gradient_reaching_the_logits_is_softmax_minus_onehot_over_n():
    loss, logits, params = raw_mlp()
    logits.label, loss.label = "logits", "loss"
    logits.retain_grad()
    steps = backward_steps(loss, params=params)
    _, Y = makemore_batch()
    onehot = np.eye(LETTERS, dtype=np.float32)[Y.numpy()]
    expected = (F.softmax(logits, dim=1).detach().numpy() - onehot) / BATCH
    np.testing.assert_allclose(logits.grad.numpy(), expected, atol=1e-8)
    # the steps from loss to logits are the primitives cross_entropy is made of, torch's
    # two (NllLossBackward0, LogSoftmaxBackward0)
    upto = [s.name for s in steps].index("log_softmax1") + 1
    assert [(s.op, [u.name for u in s.updates]) for s in steps[:upto]] == [
        ("nll_loss", ["log_softmax1"]), ("log_softmax", ["logits"])]
    assert steps[upto - 1].updates[0].formula == (
        "out.grad - exp(out.data) * out.grad.sum(axis=axis, keepdims=True)")
    # the formula, evaluated: what reaches log_softmax is -onehot / n; exp(log_softmax) is
    # the softmax
    arriving = steps[upto - 1].upstream
    np.testing.assert_allclose(arriving, -onehot / BATCH)
    logp = steps[upto - 1].node.detach().numpy()
    np.testing.assert_allclose(arriving - np.exp(logp) * arriving.sum(axis=1, keepdims=True),
                               logits.grad.numpy(), atol=1e-8)


# ---- drawing and the page ----


def test_draw_dot_renders_the_makemore_graph(graphviz_pure):
    loss, _, params = raw_mlp()
    loss.backward()
    svg = draw_dot(loss, params=list(params.items()), renderer=graphviz_pure).pipe()
    texts = {(el.text or "").strip()
             for el in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")}
    assert {"C", "W1", "b1", "W2", "b2", "data (32, 27) float32", "grad (27, 10)",
            "log_softmax", "getitem", "tanh"} <= texts


def page_payload(path: str) -> dict:
    text = Path(path).read_text(encoding="utf-8")
    return json.loads(text.split('id="chaingrad-data">')[1].split("</script>")[0])


def test_the_page_holds_the_named_steps(tmp_path):
    loss, _, params = raw_mlp(labels=True)
    path = to_html(loss, tmp_path / "makemore.html", params=list(params.values()))
    page = Path(path).read_text(encoding="utf-8")
    assert "array(" not in page
    for name in NAMES:
        assert f'data-name="{name}"' in page
    steps = backward_steps(loss, accumulate=False)
    payload = page_payload(path)
    assert [[u["text"] for u in s["updates"]] for s in payload["steps"]] == [
        [u.text(s.op) for u in s.updates] for s in steps]


@pytest.mark.slow  # a real browser
def test_the_page_opens_and_steps_through_the_makemore_loss(tmp_path, browser):
    loss, _, params = raw_mlp()
    path = to_html(loss, tmp_path / "makemore.html", params=params)
    steps = backward_steps(loss, accumulate=False, params=params)
    place = {id(node): f"#n{i}" for i, node in enumerate(reading_order(loss))}
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(Path(path).as_uri())
        assert page.get_attribute("#status", "data-steps") == str(len(steps)) == "9"
        for done, step in enumerate(steps, start=1):
            page.keyboard.press("ArrowRight")
            assert page.get_attribute("#status", "data-step") == str(done)
            formula = page.text_content("#formula")
            for update in step.updates:
                assert update.text(step.op) in formula
                shown = page.get_attribute(place[id(update.input)], "data-grad")
                assert shown == "grad " + grad_summary(update.after)
        for name, p in params.items():
            assert page.get_attribute(place[id(p)], "data-name") == name
        assert page.is_disabled("#step")
    finally:
        page.close()
    assert errors == []
