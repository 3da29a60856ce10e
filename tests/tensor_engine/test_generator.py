"""chaingrad's random numbers against torch's, the oracle: the same seed, dtype and shape give
the same numbers bit for bit where only IEEE arithmetic is involved, and within a few ulps
where torch takes log, log1p, sin or cos from the C library and chaingrad from numpy, whose
own implementation depends on the CPU (float64 normals and exponentials; float32 normals
where torch has no AVX2 kernel). Generators, their states in torch's layout, the default
generator, the layers' initial weights, nn.init, dropout's masks, multinomial and the
lecture switch, with makemore part 1's sampling loop on tests/data/names.txt."""

from __future__ import annotations

import json
import pathlib
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numerics import examples

import chaingrad
from chaingrad import nn
from chaingrad.nn import functional as F
from chaingrad.nn import init
from chaingrad.tensor_engine import sampling

SEEDS = [0, 1, 42, 2147483647, 2**40 + 3, -1, -(2**63), 2**64 - 1]
SIZES = [0, 1, 7, 15, 16, 17, 31, 100, 1000]
FLOATS = ["float16", "float32", "float64"]


def pair(torch, seed):
    """A chaingrad Generator and a torch one, both started from ``seed``."""
    return chaingrad.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


def same(ours, theirs, maxulp=0, mean=0.0, std=1.0):
    """Equal bit for bit (maxulp=0), or within ``maxulp`` units in the last place; the same
    dtype and shape either way. For draws of ``mean + std * z`` (``normal_(mean, std)``),
    ``maxulp`` counts ulps of z: the two may differ by ``maxulp * std * ulp(z)`` plus the
    last rounding of each (near 0, where mean + std z cancels, a last-bit difference in z is
    thousands of ulps of the result)."""
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    ours = ours._value if isinstance(ours, chaingrad.Tensor) else np.asarray(ours)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if maxulp and (mean, std) != (0.0, 1.0):
        wide, its = ours.astype(np.float64), theirs.astype(np.float64)
        z = np.abs((its - mean) / std).astype(theirs.dtype)
        last = (np.spacing(np.abs(ours)).astype(np.float64)
                + np.spacing(np.abs(theirs)).astype(np.float64)) / 2
        allowed = maxulp * std * np.spacing(z).astype(np.float64) + last
        beyond = np.abs(wide - its) > allowed
        assert not beyond.any(), (f"{beyond.sum()} numbers more than {maxulp} ulps of z apart:"
                                  f" {ours[beyond][:5]} and {theirs[beyond][:5]}")
    elif maxulp:
        np.testing.assert_array_max_ulp(ours, theirs, maxulp=maxulp)
    else:
        np.testing.assert_array_equal(ours, theirs)


# How far apart the numbers made through log, log1p, sin and cos can be: benchmarks/ulps.py
# measured them under numpy's full dispatch, without AVX-512, on its SSE4.2 baseline, and
# with torch's kernels without AVX2 (benchmarks/RESULTS.md, "Random numbers: ulps"); each
# bound below is twice the largest distance measured, since other CPUs and libm builds may
# round a few more numbers the other way.
FLOAT64_ULPS = 4  # measured 2 (numpy's AVX-512 log and log1p, an ulp from the C library's)
LIBM_FLOAT_ULPS = {"float32": 6, "float16": 2}  # torch's logf, cosf, sinf: measured 3 and 1
TORCH_HAS_AVX2_KERNEL = sampling.BOX_MULLER_16_FLOAT is sampling.box_muller_16_float_avx2


def normal_ulps(dtype: str) -> int:
    """The ulps allowed between chaingrad's and torch's normals of ``dtype``: float64 ones
    take numpy's log, cos and sin and torch's the C library's; float32 and float16 ones are
    bit for bit where torch runs its AVX2 kernel (every x86 machine with AVX2), and within a
    few ulps where it runs the C library's float functions instead (ARM, older x86)."""
    if dtype == "float64":
        return FLOAT64_ULPS
    return 0 if TORCH_HAS_AVX2_KERNEL else LIBM_FLOAT_ULPS[dtype]


# ---- seeds and the raw stream ----


@pytest.mark.parametrize("seed", SEEDS)
def test_a_seed_starts_torchs_stream(torch, seed) -> None:
    ours, theirs = pair(torch, seed)
    assert ours.initial_seed() == theirs.initial_seed()
    same(chaingrad.rand(3000, generator=ours, dtype=chaingrad.float64),
         torch.rand(3000, generator=theirs, dtype=torch.float64))


def test_a_new_generator_and_the_default_one_are_torchs(torch) -> None:
    assert chaingrad.Generator().initial_seed() == torch.Generator().initial_seed()
    same(chaingrad.rand(5, generator=chaingrad.Generator()),
         torch.rand(5, generator=torch.Generator()))
    assert chaingrad.manual_seed(7) is chaingrad.default_generator
    torch.manual_seed(7)
    assert chaingrad.initial_seed() == 7
    same(chaingrad.randn(20), torch.randn(20), normal_ulps("float32"))


@examples(30)
@given(seed=st.integers(0, 2**64 - 1), size=st.integers(0, 300))
def test_any_seed_and_size_gives_torchs_rand_and_randn(torch, seed, size) -> None:
    ours, theirs = pair(torch, seed)
    same(chaingrad.rand(size, generator=ours), torch.rand(size, generator=theirs))
    same(chaingrad.randn(size, generator=ours), torch.randn(size, generator=theirs),
         normal_ulps("float32"))


# ---- each distribution, across seeds, dtypes and sizes ----


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("seed", SEEDS[:5])
def test_floating_distributions_are_torchs(torch, seed, size, dtype) -> None:
    ours, theirs = pair(torch, seed)
    ct, tt = getattr(chaingrad, dtype), getattr(torch, dtype)
    same(chaingrad.rand(size, generator=ours, dtype=ct),
         torch.rand(size, generator=theirs, dtype=tt))
    same(chaingrad.randn(size, generator=ours, dtype=ct),
         torch.randn(size, generator=theirs, dtype=tt), normal_ulps(dtype))
    same(chaingrad.zeros(size, dtype=ct).uniform_(-0.3, 0.7, generator=ours),
         torch.zeros(size, dtype=tt).uniform_(-0.3, 0.7, generator=theirs))
    same(chaingrad.zeros(size, dtype=ct).normal_(0.5, 2.0, generator=ours),
         torch.zeros(size, dtype=tt).normal_(0.5, 2.0, generator=theirs), normal_ulps(dtype),
         mean=0.5, std=2.0)
    # float64 with numpy's log1p; float32 and float16 rounded from it: an ulp at most
    same(chaingrad.zeros(size, dtype=ct).exponential_(1.5, generator=ours),
         torch.zeros(size, dtype=tt).exponential_(1.5, generator=theirs),
         FLOAT64_ULPS if dtype == "float64" else 1)
    same(chaingrad.rand(3, generator=ours, dtype=ct),  # the streams are still in step
         torch.rand(3, generator=theirs, dtype=tt))


@pytest.mark.parametrize("shape", [(2, 3), (4, 5, 6), (1, 16), (3, 0, 2)])
def test_shapes_are_filled_in_row_major_order(torch, shape) -> None:
    ours, theirs = pair(torch, 3)
    same(chaingrad.rand(*shape, generator=ours), torch.rand(*shape, generator=theirs))
    same(chaingrad.randn(shape, generator=ours), torch.randn(shape, generator=theirs),
         normal_ulps("float32"))
    same(chaingrad.randint(10, shape, generator=ours), torch.randint(10, shape, generator=theirs))


def test_a_normal_fill_of_a_transposed_tensor_is_drawn_one_by_one(torch) -> None:
    ours, theirs = pair(torch, 4)
    mine, its = chaingrad.zeros(8, 8).t(), torch.zeros(8, 8).t()
    same(mine.normal_(generator=ours), its.normal_(generator=theirs))
    same(chaingrad.randn(5, generator=ours), torch.randn(5, generator=theirs))


@pytest.mark.parametrize(("low", "high"), [
    (0, 10), (-5, 5), (3, 4), (0, 2**28 - 1), (0, 2**28), (-(2**40), 2**40), (0, 2**62)])
@pytest.mark.parametrize("seed", SEEDS[:5])
def test_randint_is_torchs(torch, seed, low, high) -> None:
    ours, theirs = pair(torch, seed)
    for size in SIZES:
        same(chaingrad.randint(low, high, (size,), generator=ours),
             torch.randint(low, high, (size,), generator=theirs))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "float64"])
def test_randint_of_other_dtypes_and_randint_like(torch, dtype) -> None:
    ours, theirs = pair(torch, 11)
    ct, tt = getattr(chaingrad, dtype), getattr(torch, dtype)
    same(chaingrad.randint(0, 100, (50,), generator=ours, dtype=ct),
         torch.randint(0, 100, (50,), generator=theirs, dtype=tt))
    same(chaingrad.randint_like(chaingrad.zeros(7, dtype=ct), 3, 9, generator=ours),
         torch.randint_like(torch.zeros(7, dtype=tt), 3, 9, generator=theirs))


@pytest.mark.parametrize("seed", SEEDS[:5])
def test_randperm_is_torchs(torch, seed) -> None:
    ours, theirs = pair(torch, seed)
    for n in SIZES:
        same(chaingrad.randperm(n, generator=ours), torch.randperm(n, generator=theirs))
    same(chaingrad.randperm(9, generator=ours, dtype=chaingrad.float32),
         torch.randperm(9, generator=theirs, dtype=torch.float32))


@examples(200)
@given(st.data())
def test_randperms_swaps_at_once_are_its_swaps_one_by_one(data) -> None:
    n = data.draw(st.integers(0, 60))
    offsets = np.array([data.draw(st.integers(0, n - i - 1)) for i in range(n - 1)],
                       dtype=np.int64)
    np.testing.assert_array_equal(sampling.swaps_at_once(n, offsets),
                                  sampling.swaps(n, offsets))


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float16", "float32", "float64"])
def test_random_fills_are_torchs(torch, dtype) -> None:
    ours, theirs = pair(torch, 5)
    ct, tt = getattr(chaingrad, dtype), getattr(torch, dtype)
    same(chaingrad.zeros(40, dtype=ct).random_(generator=ours),
         torch.zeros(40, dtype=tt).random_(generator=theirs))
    same(chaingrad.zeros(40, dtype=ct).random_(2, generator=ours),
         torch.zeros(40, dtype=tt).random_(2, generator=theirs))
    same(chaingrad.zeros(40, dtype=ct).random_(0, 2, generator=ours),
         torch.zeros(40, dtype=tt).random_(0, 2, generator=theirs))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_bernoulli_is_torchs(torch, dtype) -> None:
    ours, theirs = pair(torch, 6)
    ct, tt = getattr(chaingrad, dtype), getattr(torch, dtype)
    chances = np.linspace(0, 1, 37)
    same(chaingrad.zeros(37, dtype=ct).bernoulli_(0.3, generator=ours),
         torch.zeros(37, dtype=tt).bernoulli_(0.3, generator=theirs))
    same(chaingrad.bernoulli(chaingrad.tensor(chances, dtype=ct), generator=ours),
         torch.bernoulli(torch.tensor(chances, dtype=tt), generator=theirs))
    same(chaingrad.zeros(37).bernoulli_(chaingrad.tensor(chances, dtype=ct), generator=ours),
         torch.zeros(37).bernoulli_(torch.tensor(chances, dtype=tt), generator=theirs))
    same(chaingrad.bernoulli(chaingrad.zeros(5, dtype=ct), 0.5, generator=ours),
         torch.bernoulli(torch.zeros(5, dtype=tt), 0.5, generator=theirs))


def test_torch_normal_with_numbers_and_tensors(torch) -> None:
    ours, theirs = pair(torch, 8)
    mean, std = np.linspace(-1, 1, 20, dtype=np.float32), np.linspace(0, 2, 20, dtype=np.float32)
    cm, cs = chaingrad.tensor(mean), chaingrad.tensor(std)
    tm, ts = torch.tensor(mean), torch.tensor(std)
    same(chaingrad.normal(2.0, 0.5, (30,), generator=ours),
         torch.normal(2.0, 0.5, (30,), generator=theirs))
    same(chaingrad.normal(cm, cs, generator=ours), torch.normal(tm, ts, generator=theirs))
    same(chaingrad.normal(cm, 0.5, generator=ours), torch.normal(tm, 0.5, generator=theirs))
    same(chaingrad.normal(0.5, cs, generator=ours), torch.normal(0.5, ts, generator=theirs))


# ---- multinomial ----


PROBS = {
    "1-D": np.array([0.1, 0.0, 0.3, 0.6, 0.25], dtype=np.float32),
    "2-D": np.random.default_rng(0).random((6, 27)).astype(np.float32),
    "float64": np.random.default_rng(1).random((3, 40)),
    "large": np.random.default_rng(2).random((2, 1000)).astype(np.float32),
}


@pytest.mark.parametrize(("samples", "replacement"), [(1, True), (1, False), (4, False),
                                                      (4, True), (30, True)])
@pytest.mark.parametrize("name", list(PROBS))
def test_multinomial_is_torchs(torch, name, samples, replacement) -> None:
    probs = PROBS[name]
    for seed in SEEDS[:5]:
        ours, theirs = pair(torch, seed)
        same(chaingrad.multinomial(chaingrad.tensor(probs), samples, replacement,
                                   generator=ours),
             torch.multinomial(torch.tensor(probs), samples, replacement, generator=theirs))
        same(chaingrad.rand(2, generator=ours), torch.rand(2, generator=theirs))


@pytest.mark.parametrize(("probs", "samples", "replacement"), [
    ([[[1.0]]], 1, True), ([1, 2], 1, True), ([1.0, 2.0], 3, False), ([1.0, 2.0], 0, True),
    ([-1.0, 2.0], 1, True), ([-1.0, 2.0], 2, True), ([0.0, 0.0], 1, False),
    ([0.0, 0.0], 2, True), ([1.0, float("inf")], 1, True), ([1.0, float("nan")], 3, True)])
def test_multinomial_refuses_what_torch_refuses(torch, probs, samples, replacement) -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.multinomial(torch.tensor(probs), samples, replacement)
    data = np.array(probs, dtype=np.float32 if np.asarray(probs).dtype.kind == "f" else None)
    with pytest.raises(RuntimeError) as ours:
        if np.isfinite(data).all():
            chaingrad.multinomial(chaingrad.from_numpy(data), samples, replacement)
        else:  # a chaingrad Tensor holds finite numbers only: the algorithm's own check
            sampling.draw_multinomial(None, data, samples, replacement)
    assert str(theirs.value) in str(ours.value)


def test_the_lecture_switch_draws_one_sample_from_the_cumulative_distribution(
        torch, monkeypatch) -> None:
    """Under the switch, k draws of one sample with replacement are torch's single draw of
    k samples with replacement (the cumulative distribution, one u53 each); without it,
    today's torch's one-sample draws."""
    probs = PROBS["1-D"]
    monkeypatch.delenv("CHAINGRAD_LECTURE_RNG", raising=False)

    def ten_draws():
        g = chaingrad.Generator().manual_seed(2147483647)
        return np.concatenate([chaingrad.multinomial(chaingrad.tensor(probs), 1, True,
                                                     generator=g)._value for _ in range(10)])

    lecture = torch.multinomial(torch.tensor(probs), 10, True,
                                generator=torch.Generator().manual_seed(2147483647))
    g = torch.Generator().manual_seed(2147483647)
    today = torch.cat([torch.multinomial(torch.tensor(probs), 1, True, generator=g)
                       for _ in range(10)])
    same(ten_draws(), today)
    monkeypatch.setenv("CHAINGRAD_LECTURE_RNG", "1")  # read at each draw
    same(ten_draws(), lecture)
    try:
        chaingrad.use_lecture_rng(False)  # the function wins over the environment
        same(ten_draws(), today)
        monkeypatch.delenv("CHAINGRAD_LECTURE_RNG")
        chaingrad.use_lecture_rng(True)
        same(ten_draws(), lecture)
    finally:
        chaingrad.use_lecture_rng(None)
    same(ten_draws(), today)


NAMES = pathlib.Path(__file__).parents[1] / "data" / "names.txt"


def bigram_probabilities(lib):
    """makemore part 1's P: bigram counts of names.txt (27 x 27, '.' as index 0, then a..z),
    plus one, each row divided by its sum; and the index-to-letter table."""
    words = NAMES.read_text().splitlines()
    letters = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(letters)} | {".": 0}
    counts = np.zeros((27, 27), dtype=np.int32)
    for w in words:
        chs = [".", *w, "."]
        for a, b in zip(chs, chs[1:]):
            counts[stoi[a], stoi[b]] += 1
    P = lib.tensor(counts + 1).float()
    P /= P.sum(1, keepdim=True)
    return P, {i: s for s, i in stoi.items()}


def five_names(lib, P, itos):
    """The lecture's loop: start at '.', draw the next letter from P[ix] until '.' again."""
    g = lib.Generator().manual_seed(2147483647)
    names = []
    for _ in range(5):
        out, ix = [], 0
        while True:
            ix = lib.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
            out.append(itos[ix])
            if ix == 0:
                break
        names.append("".join(out))
    return names


def test_names_txt_is_makemores() -> None:
    words = NAMES.read_text().splitlines()
    assert len(words) == 32033 and words[0] == "emma" and words[-1] == "zzyzx"


def test_makemore_part_1_samples_todays_torchs_names_and_under_the_switch_the_videos(
        torch, monkeypatch) -> None:
    monkeypatch.delenv("CHAINGRAD_LECTURE_RNG", raising=False)
    P, itos = bigram_probabilities(chaingrad)
    theirs, _ = bigram_probabilities(torch)
    same(P, theirs, 1)  # chaingrad divides as x * (1/y): an ulp apart, the same draws here
    todays = five_names(torch, theirs, itos)
    assert todays[0] == "cexze."
    assert five_names(chaingrad, P, itos) == todays
    monkeypatch.setenv("CHAINGRAD_LECTURE_RNG", "1")
    assert five_names(chaingrad, P, itos) == [
        "mor.", "axx.", "minaymoryles.", "kondlaisah.", "anchshizarie."]


def makemore_dataset(lib, block_size):
    """makemore's training split: names.txt shuffled by random.seed(42), the first 80%, each
    letter predicted from the ``block_size`` before it (0 for '.')."""
    words = NAMES.read_text().splitlines()
    stoi = {s: i + 1 for i, s in enumerate(sorted(set("".join(words))))} | {".": 0}
    random.Random(42).shuffle(words)
    X, Y = [], []
    for w in words[:int(0.8 * len(words))]:
        context = [0] * block_size
        for ch in w + ".":
            X.append(context)
            Y.append(stoi[ch])
            context = context[1:] + [stoi[ch]]
    return lib.tensor(X), lib.tensor(Y)


def part_3_first_loss(lib):
    """makemore part 3: an MLP with batch normalisation, its weights drawn from the lectures'
    generator, one minibatch drawn from it too, and the loss before any step."""
    Xtr, Ytr = makemore_dataset(lib, 3)
    g = lib.Generator().manual_seed(2147483647)
    C = lib.randn((27, 10), generator=g)
    W1 = lib.randn((30, 200), generator=g) * (5 / 3) / 30**0.5
    W2 = lib.randn((200, 27), generator=g) * 0.01
    b2 = lib.randn(27, generator=g) * 0
    ix = lib.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = emb.view(emb.shape[0], -1) @ W1
    h = lib.tanh((h - h.mean(0, keepdim=True)) / h.std(0, keepdim=True))
    return lib.nn.functional.cross_entropy(h @ W2 + b2, Ytr[ix]).item()


def part_5_first_loss(lib):
    """makemore part 5: the WaveNet-like stack of the lecture (embedding, three times two
    consecutive positions flattened, a linear layer, batch normalisation, tanh, then a linear
    layer scaled by 0.1), its weights drawn after torch.manual_seed(42), one minibatch."""
    Xtr, Ytr = makemore_dataset(lib, 8)
    lib.manual_seed(42)
    table = lib.randn((27, 24))
    weights = [lib.randn((48, 128)) / 48**0.5, lib.randn((256, 128)) / 256**0.5,
               lib.randn((256, 128)) / 256**0.5]
    last = lib.randn((128, 27)) / 128**0.5 * 0.1
    ix = lib.randint(0, Xtr.shape[0], (32,))
    x = table[Xtr[ix]]
    for w in weights:
        B, T, C = x.shape
        x = x.view(B, T // 2, C * 2)
        x = x.squeeze(1) if x.shape[1] == 1 else x
        x = x @ w
        dims = 0 if x.ndim == 2 else (0, 1)
        x = (x - x.mean(dims, keepdim=True)) / lib.sqrt(x.var(dims, keepdim=True) + 1e-5)
        x = lib.tanh(x)
    return lib.nn.functional.cross_entropy(x @ last, Ytr[ix]).item()


@pytest.mark.slow  # the lectures' first steps, on the names file
@pytest.mark.parametrize(("part", "video"), [(part_3_first_loss, "3.3239"),
                                             (part_5_first_loss, "3.3167")])
def test_makemore_parts_3_and_5_start_from_the_videos_loss(torch, part, video) -> None:
    ours, theirs = part(chaingrad), part(torch)
    assert f"{ours:.4f}" == f"{theirs:.4f}" == video


# ---- interleavings and states ----


def draw_a_mixture(lib, g, **kw):
    """rand, an odd number of serial normals (leaving a cached sine), randint, a 16+ normal
    fill, one more serial normal (the cached sine), randperm, multinomial, exponential_."""
    return [lib.rand(5, generator=g, **kw), lib.randn(3, generator=g, **kw),
            lib.randint(0, 7, (4,), generator=g), lib.randn(20, generator=g, **kw),
            lib.randn(1, generator=g, **kw), lib.randperm(6, generator=g),
            lib.multinomial(lib.tensor([0.2, 0.3, 0.5]), 2, generator=g),
            lib.zeros(3).exponential_(generator=g)]


def test_interleaved_draws_stay_in_step(torch) -> None:
    ulps = max(1, normal_ulps("float32"))  # float32: an exponential rounded from float64
    ours, theirs = pair(torch, 2147483647)
    for mine, its in zip(draw_a_mixture(chaingrad, ours), draw_a_mixture(torch, theirs)):
        same(mine, its, ulps if mine.dtype.is_floating_point else 0)
    chaingrad.manual_seed(9)
    torch.manual_seed(9)  # the default generators the same way
    for mine, its in zip(draw_a_mixture(chaingrad, None), draw_a_mixture(torch, None)):
        same(mine, its, ulps if mine.dtype.is_floating_point else 0)


def test_a_generator_draws_apart_from_the_default_one(torch) -> None:
    chaingrad.manual_seed(1)
    g = chaingrad.Generator().manual_seed(1)
    first = chaingrad.rand(4, generator=g)
    same(chaingrad.rand(4), first)  # the default generator did not move with g
    assert not chaingrad.equal(chaingrad.rand(4, generator=g), first)


@pytest.mark.parametrize("drawn", [0, 3, 623, 624, 625, 700])
def test_the_state_is_torchs_byte_for_byte(torch, drawn) -> None:
    ours, theirs = pair(torch, 12345)
    chaingrad.rand(drawn, generator=ours)
    torch.rand(drawn, generator=theirs)
    same(ours.get_state(), theirs.get_state())
    chaingrad.randn(1, generator=ours)  # a cached sine is part of the state
    torch.randn(1, generator=theirs)
    same(ours.get_state(), theirs.get_state())


def test_a_state_moves_between_torch_and_chaingrad(torch) -> None:
    ours, theirs = pair(torch, 77)
    torch.randn(5, generator=theirs)  # leaves a cached sine
    ours.set_state(theirs.get_state())
    same(chaingrad.randn(9, generator=ours), torch.randn(9, generator=theirs))
    chaingrad.rand(100, generator=ours)
    back = torch.Generator().set_state(torch.from_numpy(ours.get_state().numpy()))
    same(chaingrad.randn(3, generator=ours), torch.randn(3, generator=back))
    assert ours.initial_seed() == back.initial_seed() == 77


def test_the_default_generators_state_round_trips(torch) -> None:
    chaingrad.manual_seed(3)
    chaingrad.randn(3)
    state = chaingrad.get_rng_state()
    assert state.dtype == chaingrad.uint8 and state.shape == (5056,)
    first = chaingrad.randn(7)
    chaingrad.set_rng_state(state)
    same(chaingrad.randn(7), first._value)
    nn.set_rng_state(state)  # chaingrad.nn's names are the same generator's
    same(chaingrad.randn(7), first._value)


@pytest.mark.parametrize(("state", "error", "message"), [
    (np.zeros(10, dtype=np.uint8), RuntimeError,
     "Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to "
     "be 10"),
    (np.zeros(5056, dtype=np.uint8), RuntimeError, "Invalid mt19937 state"),
    (np.zeros(5056, dtype=np.int64), TypeError, "RNG state must be a uint8"),
    ([1, 2], TypeError, "expected a uint8 Tensor, got list")])
def test_a_bad_state_is_refused(state, error, message) -> None:
    with pytest.raises(error, match=message):
        chaingrad.Generator().set_state(state)


def test_generator_arguments_are_checked(torch) -> None:
    with pytest.raises(TypeError, match="rand: generator must be a chaingrad.Generator, got "
                                        "torch._C.Generator"):
        chaingrad.rand(2, generator=torch.Generator())
    with pytest.raises(RuntimeError, match="chaingrad computes on the CPU only"):
        chaingrad.Generator(device="cuda")
    with pytest.raises(ValueError, match="seed 18446744073709551616 is out of range"):
        chaingrad.Generator().manual_seed(2**64)
    with pytest.raises(TypeError, match="manual_seed: expected an int seed, got float"):
        chaingrad.Generator().manual_seed(1.5)
    assert chaingrad.manual_seed(1.5).initial_seed() == 1  # torch.manual_seed takes int(seed)


def test_seed_reseeds_from_entropy() -> None:
    g = chaingrad.Generator()
    chosen = g.seed()
    assert g.initial_seed() == chosen and 0 <= chosen < 2**64
    assert chaingrad.seed() == chaingrad.initial_seed()


def test_the_lectures_first_numbers(torch) -> None:
    """makemore part 1: p = torch.rand(3, generator=g); p = p / p.sum()."""
    g = chaingrad.Generator().manual_seed(2147483647)
    p = chaingrad.rand(3, generator=g)
    p = p / p.sum()
    assert repr(p) == "tensor([0.6064, 0.3033, 0.0903])"
    t = torch.rand(3, generator=torch.Generator().manual_seed(2147483647))
    assert repr(t / t.sum()) == repr(p)


# ---- layers, nn.init and dropout ----


@pytest.mark.parametrize("seed", SEEDS[:5])
def test_layers_start_from_torchs_weights(torch, seed) -> None:
    chaingrad.manual_seed(seed)
    torch.manual_seed(seed)
    pairs = [(nn.Linear(30, 7), torch.nn.Linear(30, 7)),
             (nn.Linear(3, 200, dtype=np.float64), torch.nn.Linear(3, 200, dtype=torch.float64)),
             (nn.Conv2d(3, 5, 3), torch.nn.Conv2d(3, 5, 3)),
             (nn.Conv2d(1, 6, (5, 2), bias=False), torch.nn.Conv2d(1, 6, (5, 2), bias=False)),
             (nn.Embedding(27, 10), torch.nn.Embedding(27, 10)),
             (nn.Embedding(5, 3, padding_idx=1), torch.nn.Embedding(5, 3, padding_idx=1))]
    for mine, its in pairs:
        ulps = normal_ulps("float32") if isinstance(mine, nn.Embedding) else 0  # normals
        for (name, p), (its_name, q) in zip(mine.named_parameters(), its.named_parameters()):
            assert name == its_name
            same(p.detach(), q, ulps)


@pytest.mark.parametrize(("name", "kwargs"), [
    ("uniform_", {"a": -2.0, "b": 3.0}), ("normal_", {"mean": 1.0, "std": 0.2}),
    ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}),
    ("kaiming_uniform_", {"a": 5**0.5}), ("kaiming_uniform_", {"mode": "fan_out"}),
    ("kaiming_normal_", {"nonlinearity": "relu"})])
@pytest.mark.parametrize("shape", [(4, 3), (16, 8), (6, 3, 5, 5)])
def test_nn_init_fills_torchs_numbers(torch, name, kwargs, shape) -> None:
    ours, theirs = pair(torch, 21)
    ulps = normal_ulps("float32") if "normal" in name else 0
    mine = getattr(init, name)(chaingrad.zeros(shape), **kwargs, generator=ours)
    its = getattr(torch.nn.init, name)(torch.zeros(shape), **kwargs, generator=theirs)
    same(mine, its, ulps, **kwargs if name == "normal_" else {})
    chaingrad.manual_seed(22)
    torch.manual_seed(22)
    same(getattr(init, name)(chaingrad.zeros(shape), **kwargs),
         getattr(torch.nn.init, name)(torch.zeros(shape), **kwargs), ulps,
         **kwargs if name == "normal_" else {})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_masks_are_torchs(torch, p, dtype) -> None:
    x = np.random.default_rng(3).standard_normal((13, 17)).astype(dtype)
    chaingrad.manual_seed(4)
    torch.manual_seed(4)
    same(F.dropout(chaingrad.tensor(x), p), torch.nn.functional.dropout(torch.tensor(x), p))
    same(nn.Dropout(p)(chaingrad.tensor(x)), torch.nn.Dropout(p)(torch.tensor(x)))
    same(chaingrad.rand(3), torch.rand(3))


# ---- torch's kernel without AVX2 ----


CAPABILITY_DEFAULT = """
import json, sys, numpy as np, {lib}
g = {lib}.Generator().manual_seed(5)
x = {lib}.randn(4096, generator=g).numpy()
json.dump(x.view(np.int32).tolist(), sys.stdout)
"""


@pytest.mark.slow  # a fresh interpreter that imports torch
def test_without_avx2_the_float_normals_are_torchs_libm_kernels_within_a_few_ulps(
        torch, run_python, monkeypatch) -> None:
    """Where torch runs no AVX2 kernel (ARM, older x86; here ATEN_CPU_CAPABILITY=default),
    float32 normals come from the C library's logf, cosf and sinf; chaingrad rounds float64
    ones, which differ from them by an ulp now and then (benchmarks/ulps.py measured three at
    most, after the Box-Muller products; LIBM_FLOAT_ULPS allows twice that)."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    bits = {}
    for lib in ("torch", "chaingrad"):
        done = run_python(CAPABILITY_DEFAULT.format(lib=lib))
        assert done.returncode == 0, done.stderr
        bits[lib] = np.array(json.loads(done.stdout), dtype=np.int32).view(np.float32)
    np.testing.assert_array_max_ulp(bits["chaingrad"], bits["torch"],
                                    maxulp=LIBM_FLOAT_ULPS["float32"])
    assert not sampling._torch_has_avx2_kernel()  # chaingrad reads the setting torch reads


def test_multinomial_is_a_method_too_with_torchs_numbers(torch) -> None:
    weights = np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]], dtype=np.float32)
    for replacement, n in ((True, 5), (False, 2), (True, 1)):
        ours = chaingrad.tensor(weights).multinomial(
            n, replacement, generator=chaingrad.Generator().manual_seed(7))
        theirs = torch.tensor(weights).multinomial(
            n, replacement, generator=torch.Generator().manual_seed(7))
        assert ours.tolist() == theirs.tolist() and ours.dtype == chaingrad.int64
