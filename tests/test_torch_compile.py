"""chaingrad.compile with torch.compile's arguments: a module that computes what the model
computes, compiled where a trace stands for it, eager (saying so once) where not."""

import warnings

import numpy as np
import pytest

import chaingrad
from chaingrad import nn
from chaingrad.torch_compile import OptimizedModule


def _model(dropout: float = 0.0) -> nn.Module:
    chaingrad.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 8), nn.GELU(), nn.Dropout(dropout), nn.Linear(8, 2))


@pytest.mark.parametrize("options", [{}, {"mode": "max-autotune", "fullgraph": True},
                                     {"dynamic": False, "backend": "inductor"},
                                     {"mode": "reduce-overhead", "dynamic": True}])
def test_torchs_arguments_give_a_module_that_computes_the_same(options):
    model = _model()
    compiled = chaingrad.compile(model, **options)
    assert isinstance(compiled, OptimizedModule) and compiled._orig_mod is model
    x = chaingrad.randn(5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled: no warning
        out = compiled(x)
    assert chaingrad.equal(out, model(x))
    out.sum().backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for got, expected in zip(grads, (p.grad.numpy() for p in model.parameters())):
        # the compiled backward runs GELU's rule, eager its float32 twin (Phi within 2 ulps):
        # sums of their products differ by float32 rounding (3e-8 seen, on entries near 1)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    assert "def graph" in compiled._traces[(True,) * 5].source


def test_the_state_dict_and_attributes_are_the_models_as_torchs(torch):
    model, theirs = _model(), torch.compile(torch.nn.Sequential(
        torch.nn.Linear(3, 8), torch.nn.GELU(), torch.nn.Dropout(0.0), torch.nn.Linear(8, 2)))
    compiled = chaingrad.compile(model)
    assert list(compiled.state_dict()) == list(theirs.state_dict())
    layer = nn.Linear(3, 2)
    assert chaingrad.compile(layer).weight is layer.weight  # read through to the model
    assert torch.compile(torch.nn.Linear(3, 2)).in_features == 3 == chaingrad.compile(
        layer).in_features


def test_eval_and_train_each_get_their_own_trace():
    model = _model(dropout=0.5)
    compiled = chaingrad.compile(model)
    model.eval()
    x = chaingrad.randn(4, 3)
    assert chaingrad.equal(compiled(x), model(x))
    model.train()
    with pytest.warns(UserWarning, match=r"compile: Sequential runs eagerly: its dropout '2' "
                                         "draws a new mask at each call"):
        first = compiled(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once
        second = compiled(x)
    assert not chaingrad.equal(first, second)  # a new mask each call, as eagerly


def test_what_the_compiler_cannot_trace_runs_eagerly_saying_so_once():
    class LogitsAndLoss(nn.Module):  # nanoGPT's forward: the loss is None without targets
        def __init__(self):
            self.head = nn.Linear(3, 4)

        def forward(self, x, targets=None):
            logits = self.head(x)
            return logits, None if targets is None else logits.sum()

    model = LogitsAndLoss()
    compiled = chaingrad.compile(model)
    x = chaingrad.randn(2, 3)
    with pytest.warns(UserWarning, match="LogitsAndLoss runs eagerly: chaingrad's compiler "
                                         "cannot trace it"):
        logits, loss = compiled(x)
    assert loss is None and chaingrad.equal(logits, model(x)[0])


def test_torchs_checks_of_the_arguments():
    with pytest.raises(RuntimeError, match="Unrecognized mode='fast'"):
        chaingrad.compile(_model(), mode="fast")
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        chaingrad.compile(_model(), mode="default", options={})
    model = _model()
    assert chaingrad.compile(model, disable=True) is model
    assert isinstance(chaingrad.compile(mode="default")(model), OptimizedModule)


def test_a_function_of_values_compiles_as_before():
    w = chaingrad.Value(-3.0)
    step = chaingrad.compile(lambda x: (x * w).tanh(), fullgraph=True)
    assert round(step(0.5).data, 4) == -0.9051
