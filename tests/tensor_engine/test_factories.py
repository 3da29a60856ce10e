"""torch's factory functions: the same values, shapes and dtypes as torch's for the
deterministic ones; the random ones in range, reproducible after ``manual_seed``, from the one
generator that ``chaingrad.nn`` also draws from; errors naming the factory."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chaingrad
from chaingrad.tensor_engine import generator

# (name, args, kwargs): called the same way on chaingrad and on torch
DETERMINISTIC = [
    ("tensor", ([1.5, -2.0],), {}), ("tensor", ([[1, 2], [3, 4]],), {}),
    ("tensor", ([True, False],), {}), ("tensor", (3,), {}), ("tensor", (2.5,), {}),
    ("tensor", ([1, 2],), {"dtype": "float64"}), ("tensor", ([1.7, -1.7],), {"dtype": "int64"}),
    ("zeros", (2, 3), {}), ("zeros", ((2,),), {"dtype": "int64"}), ("zeros", ([],), {}),
    ("ones", (3,), {"dtype": "bool"}), ("ones", ((1, 2),), {"dtype": "float64"}),
    ("empty", (2, 0), {}),
    ("full", ((2, 2), 7.5), {}), ("full", ((2,), 3), {}), ("full", ((), True), {}),
    ("arange", (5,), {}), ("arange", (1.0, 2.0, 0.25), {}), ("arange", (2, 11, 3), {}),
    ("arange", (5, 0, -2), {}), ("arange", (0, 1, 0.1), {}), ("arange", (3,), {"dtype": "float64"}),
    ("linspace", (0, 1, 5), {}), ("linspace", (-math.pi, math.pi, 7), {}),
    ("linspace", (2, 3, 1), {}), ("linspace", (0, 1, 4), {"dtype": "float64"}),
    ("eye", (3,), {}), ("eye", (2, 3), {}), ("eye", (2,), {"dtype": "int64"}),
    # torch's keyword forms
    ("zeros", (), {"size": (2, 3)}), ("ones", (), {"size": [2]}),
    ("arange", (), {"end": 4}), ("arange", (), {"start": 1, "end": 4}),
    ("arange", (1,), {"end": 7, "step": 2}),
]


def _resolve(lib, kwargs: dict) -> dict:
    return {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}


@pytest.mark.parametrize(("name", "args", "kwargs"), DETERMINISTIC,
                         ids=[f"{n}{a}{k or ''}" for n, a, k in DETERMINISTIC])
def test_factory_gives_torch_values_shape_and_dtype(torch, name, args, kwargs) -> None:
    mine = getattr(chaingrad, name)(*args, **_resolve(chaingrad, kwargs))
    theirs = getattr(torch, name)(*args, **_resolve(torch, kwargs))
    assert mine.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert np.allclose(mine.detach().numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
def test_like_factories_copy_shape_and_dtype(name: str) -> None:
    base = chaingrad.tensor([[1, 2, 3]])
    made = getattr(chaingrad, name)(base)
    assert made.shape == (1, 3) and made.dtype == chaingrad.int64 and made is not base
    assert getattr(chaingrad, name)(base, dtype=chaingrad.float64).dtype == chaingrad.float64
    assert chaingrad.full_like(base, 4).tolist() == [[4, 4, 4]]


def test_tensor_copies_from_numpy_shares() -> None:
    a = np.arange(3.0)
    copied, shared = chaingrad.tensor(a), chaingrad.from_numpy(a)
    a[0] = 9.0
    assert copied.tolist() == [0.0, 1.0, 2.0] and shared.tolist() == [9.0, 1.0, 2.0]
    assert shared.dtype == chaingrad.float64 and chaingrad.as_tensor(a).numpy() is a
    with pytest.raises(TypeError, match=r"from_numpy: expected np.ndarray \(got list\)"):
        chaingrad.from_numpy([1.0])


def test_requires_grad_only_for_floating_dtypes() -> None:
    w = chaingrad.zeros(2, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad is None
    with pytest.raises(RuntimeError, match="Only Tensors of floating point dtype can require"):
        chaingrad.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="requires_grad_: only Tensors of floating point"):
        chaingrad.tensor([1, 2]).requires_grad_()


@pytest.mark.parametrize("make", [
    lambda: chaingrad.rand(3, 4), lambda: chaingrad.randn(3, 4),
    lambda: chaingrad.randint(0, 10, (3, 4)), lambda: chaingrad.randint(5, size=(3, 4)),
    lambda: chaingrad.randperm(12).reshape(3, 4)], ids=["rand", "randn", "randint",
                                                         "randint_high", "randperm"])
def test_random_factories_are_reproducible_after_manual_seed(make) -> None:
    chaingrad.manual_seed(7)
    first = make()
    chaingrad.manual_seed(7)
    assert chaingrad.equal(first, make()) and first.shape == (3, 4)
    assert not chaingrad.equal(first, make())  # the generator moved on


def test_random_values_in_range_and_dtypes() -> None:
    chaingrad.manual_seed(0)
    r = chaingrad.rand(1000)
    assert r.dtype == chaingrad.float32 and r.min().item() >= 0 and r.max().item() < 1
    n = chaingrad.randn(2000, dtype=chaingrad.float64)
    assert n.dtype == chaingrad.float64 and abs(n.mean().item()) < 0.1
    k = chaingrad.randint(3, 6, (500,))
    assert k.dtype == chaingrad.int64 and set(k.tolist()) == {3, 4, 5}
    assert sorted(chaingrad.randperm(5).tolist()) == [0, 1, 2, 3, 4]
    assert chaingrad.rand_like(r).shape == r.shape and chaingrad.randn(2, 3).shape == (2, 3)


def test_one_generator_serves_factories_and_layers() -> None:
    from chaingrad import nn

    chaingrad.manual_seed(3)
    a = chaingrad.rand(2)
    nn.manual_seed(3)  # the same generator, restarted by its other name
    assert chaingrad.equal(a, chaingrad.rand(2))
    state = generator.get_rng_state()
    b = chaingrad.rand(2)
    generator.set_rng_state(state)
    assert chaingrad.equal(b, chaingrad.rand(2))


@pytest.mark.parametrize(("args", "kwargs"), [
    ((10, (5,)), {}), ((3, 10, (5,)), {}), ((), {"high": 10, "size": (5,)}),
    ((), {"low": 3, "high": 10, "size": (2, 3)}), ((3,), {"high": 10, "size": (5,)}),
    ((10,), {"size": (5,)}), ((3, 10), {"size": (5,)}), ((), {"size": [4], "high": 2}),
])
def test_randint_takes_torchs_keyword_forms_with_torchs_numbers(torch, args, kwargs) -> None:
    mine = chaingrad.randint(*args, **kwargs, generator=chaingrad.Generator().manual_seed(3))
    theirs = torch.randint(*args, **kwargs, generator=torch.Generator().manual_seed(3))
    assert mine.tolist() == theirs.tolist()


def test_random_factories_take_size_by_keyword(torch) -> None:
    for name in ("rand", "randn"):
        mine = getattr(chaingrad, name)(size=(2, 3), generator=chaingrad.Generator().manual_seed(1))
        theirs = getattr(torch, name)(size=(2, 3), generator=torch.Generator().manual_seed(1))
        assert mine.tolist() == theirs.tolist()


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: chaingrad.zeros(2, -1), TypeError, r"zeros: size must be ints >= 0"),
    (lambda: chaingrad.zeros(2, size=(2,)), TypeError, "zeros: got a size both by position"),
    (lambda: chaingrad.ones(sise=(2,)), TypeError,
     r"ones\(\) got an unexpected keyword argument 'sise'"),
    (lambda: chaingrad.arange(), TypeError, r"arange: expected arange\(end\)"),
    (lambda: chaingrad.randint(2, 5, (3,), size=(3,)), TypeError, "randint: got size twice"),
    (lambda: chaingrad.randint(1, 2, (3,), 4), TypeError, "randint: takes at most 3"),
    (lambda: chaingrad.ones("a"), TypeError, r"ones: size must be ints"),
    (lambda: chaingrad.arange(0, 1, 0), ValueError, "arange: step must be nonzero"),
    (lambda: chaingrad.linspace(0, 1, -1), TypeError, "linspace: steps must be an int"),
    (lambda: chaingrad.randint(5, 5, (2,)), ValueError, "randint: needs low < high"),
    (lambda: chaingrad.randint(5), TypeError, r"randint: expected randint\(high, size\)"),
    (lambda: chaingrad.rand(2, dtype=chaingrad.int64), TypeError, "rand: needs a floating"),
    (lambda: chaingrad.rand(2, generator=object()), TypeError,
     "rand: generator must be a chaingrad.Generator, got builtins.object"),
    (lambda: chaingrad.zeros_like([1.0]), TypeError, "zeros_like: expected a Tensor"),
    (lambda: chaingrad.tensor("abc"), TypeError, "tensor: data must be numbers"),
    (lambda: chaingrad.manual_seed(None), TypeError, "manual_seed: seed must be an int"),
])
def test_bad_arguments_name_the_factory(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


# ---- devices ----


def test_the_cpu_is_accepted_everywhere_other_devices_are_named() -> None:
    cpu = chaingrad.device("cpu")
    assert repr(cpu) == "device(type='cpu')" and str(cpu) == "cpu" and cpu == "cpu"
    x = chaingrad.ones(2, device="cpu")
    assert x.device == cpu and x.to("cpu") is x and x.cpu() is x and not x.is_cuda
    assert chaingrad.zeros(1, device=cpu).device.type == "cpu"
    assert not chaingrad.cuda.is_available() and chaingrad.cuda.device_count() == 0
    chaingrad.set_default_device("cpu")
    gpu = chaingrad.device("cuda:0")  # naming one is fine, as in torch
    assert (gpu.type, gpu.index) == ("cuda", 0)
    for call in (lambda: chaingrad.ones(2, device="cuda"), lambda: x.to(gpu), lambda: x.cuda(),
                 lambda: chaingrad.set_default_device("mps")):
        with pytest.raises(RuntimeError, match="chaingrad computes on the CPU only"):
            call()
    with pytest.raises(RuntimeError, match="device: expected one of cpu"):
        chaingrad.device("tpu")


OUT_CALLS = {
    "stack": lambda t, **kw: t.stack([t.ones(2), t.zeros(2)], **kw),
    "tril": lambda t, **kw: t.tril(t.ones(2, 2), **kw),
    "var": lambda t, **kw: t.var(t.tensor([1.0, 2.0, 4.0]), **kw),
    "where": lambda t, **kw: t.where(t.tensor([True, False]), t.ones(2), t.zeros(2), **kw),
    "max": lambda t, **kw: t.max(t.tensor([[1.0, 5.0], [3.0, 2.0]]), **kw),
    "amax": lambda t, **kw: t.amax(t.tensor([[1.0, 5.0], [3.0, 2.0]]), 0, **kw),
    "amin": lambda t, **kw: t.amin(t.tensor([[1.0, 5.0], [3.0, 2.0]]), 1, **kw),
    "logsumexp": lambda t, **kw: t.logsumexp(t.tensor([[1.0, 5.0], [3.0, 2.0]]), 1, **kw),
    "gather": lambda t, **kw: t.gather(t.tensor([[1.0, 5.0], [3.0, 2.0]]), 1,
                                       t.tensor([[1], [0]]), **kw),
}

PAIR_CALLS = {  # torch's namedtuple (values, indices), into out=(values, indices)
    "max": lambda t, x, **kw: t.max(x, 1, **kw),
    "min": lambda t, x, **kw: t.min(x, 0, keepdim=True, **kw),
    "sort": lambda t, x, **kw: t.sort(x, 1, descending=True, **kw),
    "topk": lambda t, x, **kw: t.topk(x, 2, **kw),
}


@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_writes_the_result_into_the_tensor_given_as_torchs(torch, name):
    """torch's out=: the result written into ``out`` (resized to it), which is returned."""
    call = OUT_CALLS[name]
    out, theirs = chaingrad.zeros(1), torch.zeros(1)
    assert call(chaingrad, out=out) is out and call(torch, out=theirs) is theirs
    assert out.tolist() == theirs.tolist() and out.shape == tuple(theirs.shape)


@pytest.mark.parametrize("name", sorted(PAIR_CALLS))
def test_out_takes_a_pair_where_torch_gives_values_and_indices(torch, name):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    results = []
    for t in (chaingrad, torch):
        out = (t.zeros(1), t.zeros(1, dtype=t.int64))
        result = PAIR_CALLS[name](t, t.tensor(x), out=out)
        assert result.values is out[0] and result.indices is out[1]
        results.append([r.numpy() for r in out])
    for mine, theirs in zip(*results):
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs)
    with pytest.raises(TypeError, match=rf"{name}\(out=...\): out must be a tuple of 2 "
                                        r"Tensors \(values, indices\), got Tensor"):
        PAIR_CALLS[name](chaingrad, chaingrad.tensor(x), out=chaingrad.zeros(1))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        PAIR_CALLS[name](chaingrad, chaingrad.tensor(x, requires_grad=True),
                         out=(chaingrad.zeros(1), chaingrad.zeros(1, dtype=chaingrad.int64)))


def test_all_writes_its_booleans_into_out(torch):
    for t in (chaingrad, torch):
        out = t.zeros(2, dtype=t.bool)
        assert t.all(t.tensor([[True, False], [True, True]]), 0, out=out) is out
        assert out.tolist() == [True, False]


def test_layout_and_memory_format_are_taken_at_their_defaults_and_named_otherwise():
    x = chaingrad.ones(2)
    assert chaingrad.zeros_like(x, layout=None, memory_format=None).tolist() == [0.0, 0.0]
    with pytest.raises(NotImplementedError, match="zeros_like: chaingrad does not take "
                                                  "memory_format='channels_last' yet"):
        chaingrad.zeros_like(x, memory_format="channels_last")
    with pytest.raises(NotImplementedError, match="randperm: .* pin_memory=True"):
        chaingrad.randperm(3, pin_memory=True)
    for name, call in {"arange": lambda **kw: chaingrad.arange(3, **kw),
                       "eye": lambda **kw: chaingrad.eye(2, **kw),
                       "full": lambda **kw: chaingrad.full((2,), 1.5, **kw),
                       "linspace": lambda **kw: chaingrad.linspace(0, 1, 3, **kw),
                       "empty_like": lambda **kw: chaingrad.empty_like(x, **kw),
                       "full_like": lambda **kw: chaingrad.full_like(x, 2.0, **kw)}.items():
        assert call(layout=None).shape == call().shape
        with pytest.raises(NotImplementedError, match=f"{name}: chaingrad does not take "
                                                      "layout='sparse_coo' yet"):
            call(layout="sparse_coo")
    with pytest.raises(NotImplementedError, match="full_like: .* memory_format='x'"):
        chaingrad.full_like(x, 1.0, memory_format="x")
    index = chaingrad.tensor([1, 0])
    assert chaingrad.gather(x, 0, index, sparse_grad=False).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="gather: chaingrad's gradients are dense"):
        chaingrad.gather(x, 0, index, sparse_grad=True)
