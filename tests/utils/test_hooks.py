"""chaingrad/utils/hooks.py: a Module's forward and backward hooks, run as torch runs them
(the same calls, arguments, gradients and replacements, checked against torch), and the
handles that take them off."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chaingrad
from chaingrad.utils.hooks import RemovableHandle


def _shown(values: Any) -> Any:
    """Tensors (of either library) as rounded lists, for a log both libraries can write."""
    if isinstance(values, (tuple, list)):
        return [_shown(v) for v in values]
    if values is None or isinstance(values, (int, float, str)):
        return values
    return np.round(values.detach().numpy().astype(np.float64), 4).tolist()


def _hooked_run(T: Any) -> list:
    """A module of two tensor inputs (and a number) and two outputs, every kind of hook on
    it, each hook logging what it sees and replacing some of it; then a hook taken off, a
    module whose input takes no gradient, and hooks with keyword arguments. ``T`` is torch
    or chaingrad."""
    nn = T.nn

    class Two(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, a: Any, k: float, b: Any) -> Any:
            return self.lin(a) * k + b, (a * b.sum()).sum(1)

    T.manual_seed(0)
    model, log = Two(), []

    def full(module, grad_input, grad_output):
        log.append(("full", _shown(grad_input), _shown(grad_output)))
        return (grad_input[0] * 2, None, grad_input[2])

    def pre(module, grad_output):
        log.append(("backward pre", len(grad_output)))
        return (grad_output[0] * 3, grad_output[1])

    def forward_pre(module, args):
        log.append(("forward pre", len(args)))
        return (args[0] + 1, args[1], args[2])

    def forward(module, args, out):
        log.append(("forward", tuple(out[0].shape)))
        return (out[0] * 1, out[1])

    handles = [model.register_full_backward_hook(full),
               model.register_full_backward_pre_hook(pre),
               model.register_forward_pre_hook(forward_pre),
               model.register_forward_hook(forward)]
    a = T.tensor(np.arange(6.0).reshape(2, 3) / 7, requires_grad=True, dtype=T.float32)
    b = T.tensor(np.ones((2, 2)) / 3, requires_grad=True, dtype=T.float32)
    first, second = model(a, 2.0, b)
    (first.sum() + (second * second).sum()).backward()
    log.append(("gradients", _shown(a.grad), _shown(b.grad)))
    handles[0].remove()
    handles[1].remove()
    a.grad = None
    model(a, 2.0, b)[0].sum().backward()
    log.append(("taken off", _shown(a.grad)))
    layer = nn.Linear(3, 1)
    layer.register_full_backward_hook(
        lambda module, grad_input, grad_output: log.append(
            ("no input gradient", grad_input, [tuple(g.shape) for g in grad_output])))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        layer(T.ones(2, 3)).sum().backward()
    log.append(("warned", [str(w.message)[:60] for w in seen]))
    same = nn.Identity()
    same.register_forward_pre_hook(lambda module, args, kwargs: ((args[0] * 5,), kwargs),
                                   with_kwargs=True)
    same.register_forward_hook(lambda module, args, kwargs, out: out + 1, with_kwargs=True,
                               prepend=True)
    log.append(("with kwargs", same(T.ones(1)).tolist()))
    return log


def test_hooks_are_called_with_and_replace_what_torchs_are(torch) -> None:
    ours, theirs = _hooked_run(chaingrad), _hooked_run(torch)
    assert len(ours) == len(theirs) == 11
    for mine, its in zip(ours, theirs, strict=True):
        assert repr(mine) == repr(its)


def test_hooks_run_in_order_prepend_first_and_come_off_with_their_handle() -> None:
    layer, order = chaingrad.nn.Identity(), []
    first = layer.register_forward_hook(lambda m, args, out: order.append("first"))
    layer.register_forward_hook(lambda m, args, out: order.append("second"))
    layer.register_forward_hook(lambda m, args, out: order.append("prepended"), prepend=True)
    layer(chaingrad.ones(1))
    assert order == ["prepended", "first", "second"]
    first.remove()
    first.remove()  # a second time does nothing
    order.clear()
    with layer.register_forward_pre_hook(lambda m, args: order.append("pre")) as handle:
        layer(chaingrad.ones(1))
    assert isinstance(handle, RemovableHandle)
    layer(chaingrad.ones(1))
    assert order == ["pre", "prepended", "second", "prepended", "second"]


def test_an_always_called_hook_runs_when_forward_raises() -> None:
    class Broken(chaingrad.nn.Module):
        def forward(self, x):
            raise ValueError("broken")

    module, seen = Broken(), []
    module.register_forward_hook(lambda m, args, out: seen.append(("always", out)),
                                 always_call=True)
    module.register_forward_hook(lambda m, args, out: seen.append("not"))
    with pytest.raises(ValueError, match="broken"):
        module(chaingrad.ones(1))
    assert seen == [("always", None)]


def test_a_backward_hook_returning_the_wrong_number_of_gradients_is_refused(torch) -> None:
    for nn, ones in ((torch.nn, torch.ones), (chaingrad.nn, chaingrad.ones)):
        layer = nn.Linear(2, 1)
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                                               "grad_input, got 2, but expected 1"):
            layer(ones(3, 2, requires_grad=True)).sum().backward()


def test_a_module_without_hooks_keeps_its_graph_and_hooks_leave_the_values_alone() -> None:
    chaingrad.manual_seed(0)
    model = chaingrad.nn.Sequential(chaingrad.nn.Linear(3, 4), chaingrad.nn.Tanh(),
                                    chaingrad.nn.Linear(4, 1))
    x = chaingrad.randn(5, 3, requires_grad=True)
    model(x).sum().backward()
    plain = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    x.grad = None
    for child in model:
        child.register_full_backward_hook(lambda m, gi, go: None)
        child.register_forward_hook(lambda m, args, out: None)
    out = model(x)
    out.sum().backward()
    hooked = [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]
    for a, b in zip(plain, hooked, strict=True):
        np.testing.assert_array_equal(a, b)
