"""chaingrad.amp: autocast runs torch's CPU autocast lists with torch's dtypes and numbers,
its state as torch's; GradScaler runs torch's algorithm on the CPU with torch's numbers,
and passes everything through when disabled, as torch's."""

import warnings

import numpy as np
import pytest

import chaingrad
from chaingrad.tensor_engine import autocast_state

RNG = np.random.default_rng(0)


def _arrays(*shapes):
    return [RNG.normal(size=shape).astype(np.float32) for shape in shapes]


def _bits(t):
    """A tensor's numbers as float32 (a bfloat16 one exactly), without its graph."""
    return np.asarray(t.detach().float().numpy())


# each op of torch's CPU autocast lists that chaingrad has: how to call it, on what shapes
# (float32 arrays; an int64 one for class targets), and its policy's dtype under bfloat16
AUTOCAST_OPS = {
    "matmul": (lambda L, a, b: a @ b, [(4, 8), (8, 5)], "bfloat16"),
    "matmul 1-d": (lambda L, a, b: a @ b, [(8,), (8,)], "bfloat16"),
    "matmul batched": (lambda L, a, b: L.matmul(a, b), [(2, 3, 4, 8), (8, 5)], "bfloat16"),
    "mm": (lambda L, a, b: L.mm(a, b), [(4, 8), (8, 5)], "bfloat16"),
    "bmm": (lambda L, a, b: a.bmm(b), [(3, 4, 8), (3, 8, 5)], "bfloat16"),
    "einsum": (lambda L, a, b: L.einsum("bij,bjk->bik", a, b), [(3, 4, 8), (3, 8, 5)],
               "bfloat16"),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), [(5, 16), (8, 16), (8,)],
               "bfloat16"),
    "linear without bias": (lambda L, x, w: L.nn.functional.linear(x, w), [(5, 16), (8, 16)],
                            "bfloat16"),
    "conv2d": (lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding=1),
               [(2, 3, 6, 6), (4, 3, 3, 3), (4,)], "bfloat16"),
    "conv1d": (lambda L, x, w, b: L.nn.functional.conv1d(x, w, b), [(2, 3, 10), (4, 3, 3), (4,)],
               "bfloat16"),
    "dot (no list: float32)": (lambda L, a, b: a.dot(b), [(8,), (8,)], "float32"),
    "mse_loss": (lambda L, a, b: L.nn.functional.mse_loss(a.bfloat16(), b), [(4, 6), (4, 6)],
                 "float32"),
    "l1_loss": (lambda L, a, b: L.nn.functional.l1_loss(a.bfloat16(), b.bfloat16()),
                [(4, 6), (4, 6)], "float32"),
    "smooth_l1_loss": (lambda L, a, b: L.nn.functional.smooth_l1_loss(a.bfloat16(), b),
                       [(4, 6), (4, 6)], "float32"),
    "huber_loss": (lambda L, a, b: L.nn.functional.huber_loss(a.bfloat16(), b), [(4, 6), (4, 6)],
                   "float32"),
    "cross_entropy": (lambda L, a: L.nn.functional.cross_entropy(
        a.bfloat16(), L.tensor([0, 3, 5, 1])), [(4, 6)], "float32"),
    "nll_loss": (lambda L, a: L.nn.functional.nll_loss(a.bfloat16(), L.tensor([0, 3, 5, 1])),
                 [(4, 6)], "float32"),
    "binary_cross_entropy_with_logits": (
        lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(
            a.bfloat16(), b.sigmoid()), [(4, 6), (4, 6)], "float32"),
    "binary_cross_entropy": (lambda L, a, b: L.nn.functional.binary_cross_entropy(
        a.sigmoid().bfloat16(), b.sigmoid()), [(4, 6), (4, 6)], "float32"),
    "cat (promote)": (lambda L, a, b: L.cat([a.bfloat16(), b]), [(2, 3), (2, 3)], "float32"),
}


@pytest.mark.parametrize("name", sorted(AUTOCAST_OPS))
def test_each_autocast_op_gives_torchs_dtype_and_numbers(torch, name):
    """Under bfloat16 autocast: the dtype and the numbers of torch's, bit for bit; the
    gradients that reach the float32 inputs are float32, and torch's bit for bit too."""
    op, shapes, dtype = AUTOCAST_OPS[name]
    arrays = _arrays(*shapes)
    results = {}
    for lib in (chaingrad, torch):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            out = op(lib, *inputs)
        weights = lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(
            tuple(out.shape)))
        (out.float() * weights).sum().backward()
        results[lib.__name__] = out, [x.grad for x in inputs]
    (ours, our_grads), (theirs, their_grads) = results["chaingrad"], results["torch"]
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1] == dtype
    np.testing.assert_allclose(_bits(ours), _bits(theirs), rtol=2e-7, atol=1e-7)
    for got, expected in zip(our_grads, their_grads):
        assert got.dtype == chaingrad.float32 and expected.dtype == torch.float32
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=2e-7, atol=1e-6)


def test_the_lowered_ops_round_their_inputs_and_their_result_once(torch):
    """torch's CPU autocast: bfloat16 inputs, products summed in float32, the result
    rounded once (a linear's bias added before that rounding): a float64 product of the
    rounded inputs, rounded, is torch's result for every entry."""
    x, w, b = _arrays((64, 128), (96, 128), (96,))
    rounded = [a.astype(chaingrad.bfloat16.dtype).astype(np.float64) for a in (x, w, b)]
    exact = (rounded[0] @ rounded[1].T + rounded[2]).astype(np.float32)
    with chaingrad.autocast("cpu"):
        got = chaingrad.nn.functional.linear(*map(chaingrad.tensor, (x, w, b)))
    np.testing.assert_array_equal(_bits(got), exact.astype(chaingrad.bfloat16.dtype)
                                  .astype(np.float32))
    plain = chaingrad.nn.functional.linear(*map(chaingrad.tensor, (x, w, b)))
    assert plain.dtype == chaingrad.float32 and not np.array_equal(_bits(plain), _bits(got))


def test_float16_autocast_is_torchs(torch):
    a, b = _arrays((4, 8), (8, 5))
    with chaingrad.autocast("cpu", dtype=chaingrad.float16):
        ours = chaingrad.tensor(a) @ chaingrad.tensor(b)
    with torch.autocast("cpu", dtype=torch.float16):
        theirs = torch.tensor(a) @ torch.tensor(b)
    assert ours.dtype == chaingrad.float16 and theirs.dtype == torch.float16
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_attention_written_out_is_torchs_bit_for_bit_forward_and_backward(torch):
    """q @ k^T, a scale, a causal mask, softmax and @ v under autocast: every number of
    the forward and of the three gradients is torch's."""
    b, h, t, d = 2, 2, 8, 16
    arrays, g = _arrays((b, h, t, d), (b, h, t, d), (b, h, t, d)), _arrays((b, h, t, d))[0]
    results = []
    for lib in (chaingrad, torch):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            scores = (q @ k.transpose(-2, -1)) * (1.0 / d**0.5)
            scores = scores.masked_fill(~lib.tensor(np.tril(np.ones((t, t), bool))),
                                        float("-inf"))
            y = scores.softmax(-1) @ v
        (y.float() * lib.tensor(g)).sum().backward()
        results.append([y, q.grad, k.grad, v.grad])
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(_bits(ours), _bits(theirs))


def test_scaled_dot_product_attention_within_one_bfloat16_step_of_torchs(torch):
    """torch's CPU flash-attention kernel rounds the attention weights to bfloat16 before
    their product with v; chaingrad rounds only the result (torch's math path): entries
    differ by at most one step of bfloat16 (2**-8 of the largest)."""
    arrays = _arrays((2, 2, 8, 16), (2, 2, 8, 16), (2, 2, 8, 16))
    outs = []
    for lib in (chaingrad, torch):
        with lib.autocast("cpu"):
            outs.append(lib.nn.functional.scaled_dot_product_attention(
                *map(lib.tensor, arrays), is_causal=True))
    assert outs[0].dtype == chaingrad.bfloat16 and outs[1].dtype == torch.bfloat16
    ours, theirs = _bits(outs[0]), _bits(outs[1])
    assert np.abs(ours - theirs).max() <= 2**-8 * np.abs(theirs).max()


def _gpt_step_losses(lib, steps=6):
    """A small GPT-like model (embeddings, LayerNorm, attention written out, a GELU MLP,
    tied output weights) trained with AdamW under bfloat16 autocast: its losses."""
    nn, F = lib.nn, lib.nn.functional
    rng = np.random.default_rng(3)
    vocab, width, block, heads = 17, 16, 8, 2

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.attn(self.ln1(x)).split(width, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (c // heads) ** 0.5)
            att = att.masked_fill(~lib.tensor(np.tril(np.ones((t, t), bool))), float("-inf"))
            y = (att.softmax(-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
            x = x + self.proj(y)
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(block, width)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.ln_f, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)
            self.head.weight = self.wte.weight

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(lib.arange(idx.shape[1]))
            for each in self.blocks:
                x = each(x)
            return self.head(self.ln_f(x))

    model = GPT()
    state = {name: lib.tensor(rng.normal(0, 0.2, size=tuple(p.shape)).astype(np.float32))
             for name, p in model.state_dict().items()}
    model.load_state_dict(state)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        idx = lib.tensor(rng.integers(0, vocab, size=(4, block + 1)))
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            logits = model(idx[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, vocab), idx[:, 1:].reshape(-1))
        assert logits.dtype == lib.bfloat16 and loss.dtype == lib.float32
        opt.zero_grad()
        loss.backward()
        assert all(p.grad.dtype == lib.float32 for p in model.parameters())
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


GPT_RTOL = 1e-6
"""How close a small GPT's losses under bfloat16 autocast come to torch's: measured, the
largest relative difference over six AdamW steps is 8.4e-8, five of them equal (one
bfloat16 step is 2**-8 = 3.9e-3): every gradient is torch's bit for bit but LayerNorm's,
whose float32 sums run in another order."""


def test_a_gpt_training_step_under_autocast_gives_torchs_losses(torch):
    ours, theirs = _gpt_step_losses(chaingrad), _gpt_step_losses(torch)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-6)
    np.testing.assert_allclose(ours, theirs, rtol=GPT_RTOL)


def test_autocast_leaves_float64_and_everything_outside_it_alone():
    x = chaingrad.tensor([[1.001, 2.0]], dtype=chaingrad.float64)
    w = chaingrad.tensor([[1.0], [1.0]], dtype=chaingrad.float64)
    with chaingrad.autocast("cpu"):
        assert chaingrad.is_autocast_enabled("cpu")
        product = x @ w
        assert product.dtype == chaingrad.float64
        assert product.item() == pytest.approx(3.001, abs=1e-12)
    assert not chaingrad.is_autocast_enabled("cpu")
    assert (x.float() @ w.float()).dtype == chaingrad.float32


def test_autocast_state_nests_and_reads_as_torchs(torch):
    """Nested contexts, ``enabled=False`` within one, the dtype kept while disabled, the
    no-argument ``is_autocast_enabled()`` (CUDA's: False), the deprecated CPU names."""
    seen = {}
    for lib in (chaingrad, torch):
        states = []

        def state(lib=lib, states=states):
            states.append((lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(),
                           str(lib.get_autocast_dtype("cpu")).split(".")[1]))

        state()
        with lib.autocast("cpu"):
            state()
            with lib.autocast("cpu", dtype=lib.float16):
                state()
                with lib.autocast("cpu", enabled=False):
                    state()
                state()
            state()
        state()
        with pytest.warns(DeprecationWarning, match=r"get_autocast_cpu_dtype\(\) is deprecated"):
            states.append(str(lib.get_autocast_cpu_dtype()))
        with pytest.warns(DeprecationWarning, match=r"is_autocast_cpu_enabled\(\) is deprecated"):
            states.append(lib.is_autocast_cpu_enabled())
        seen[lib.__name__] = [str(s).replace("torch.", "chaingrad.") for s in states]
    assert seen["chaingrad"] == seen["torch"]


def test_autocast_functions_check_the_device_as_torchs(torch):
    for lib in (chaingrad, torch):
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, ipu"):
            lib.is_autocast_enabled("gpu")
        with pytest.raises(TypeError, match="must be str, not int"):
            lib.is_autocast_enabled(3)
        assert str(lib.get_autocast_dtype("cuda")).endswith("float16")


def test_set_autocast_enabled_and_dtype_switch_it_without_a_context():
    x, w = chaingrad.tensor([[1.001, 2.0]]), chaingrad.tensor([[1.0], [1.0]])
    chaingrad.set_autocast_enabled("cpu", True)
    try:
        assert (x @ w).dtype == chaingrad.bfloat16
        chaingrad.set_autocast_dtype("cpu", chaingrad.float16)
        assert (x @ w).dtype == chaingrad.float16
    finally:
        chaingrad.set_autocast_enabled("cpu", False)
        chaingrad.set_autocast_dtype("cpu", chaingrad.bfloat16)
    assert (x @ w).dtype == chaingrad.float32


def test_a_weights_cast_is_made_once_until_the_outermost_autocast_exits():
    layer = chaingrad.nn.Linear(4, 3)
    x = chaingrad.ones(2, 4)
    with chaingrad.autocast("cpu"):
        layer(x)
        with chaingrad.autocast("cpu"):
            layer(x)
        assert len(autocast_state.STATE.cache) == 2  # the weight and the bias, once each
    assert autocast_state.STATE.cache == {}
    assert chaingrad.is_autocast_cache_enabled()
    with chaingrad.autocast("cpu", cache_enabled=False):
        layer(x)
        assert autocast_state.STATE.cache == {} and not chaingrad.is_autocast_cache_enabled()
    assert chaingrad.is_autocast_cache_enabled()


def test_a_weight_used_twice_gets_torchs_gradient(torch):
    """The cached cast: the two uses' gradients meet in bfloat16, then reach the weight."""
    x, w = _arrays((3, 8), (8, 8))
    grads = []
    for lib in (chaingrad, torch):
        weight = lib.tensor(w, requires_grad=True)
        with lib.autocast("cpu"):
            y = (lib.tensor(x) @ weight) @ weight
        y.float().sum().backward()
        grads.append(np.asarray(weight.grad.numpy()))
    np.testing.assert_array_equal(*grads)


def test_autocast_off_on_another_device_or_when_disabled_as_torchs(torch):
    x = chaingrad.tensor([[1.001, 2.0]])
    w = chaingrad.tensor([[1.0], [1.0]])
    for library in (torch, chaingrad):
        with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported"):
            context = library.autocast(device_type="cuda")
        with context:
            assert not library.is_autocast_enabled("cpu")
    with chaingrad.autocast("cpu", enabled=False):
        assert (x @ w).item() == pytest.approx(3.001, rel=1e-6)
    with pytest.warns(UserWarning, match="the target dtype is not supported"):
        context = chaingrad.autocast("cpu", dtype=chaingrad.float64)
    with context:
        assert not chaingrad.is_autocast_enabled("cpu")


def test_autocast_as_a_decorator():
    @chaingrad.autocast("cpu")
    def product(a, b):
        return a @ b

    x, w = chaingrad.tensor([[1.001, 2.0]]), chaingrad.tensor([[1.0], [1.0]])
    assert product(x, w).item() == 3.0 and product(x, w).dtype == chaingrad.bfloat16
    assert (x @ w).item() == pytest.approx(3.001, rel=1e-6)


def test_a_loss_warns_at_its_caller_past_the_autocast_hook():
    with pytest.warns(UserWarning, match="Using a target size") as seen:
        chaingrad.nn.functional.mse_loss(chaingrad.ones(3, 1), chaingrad.ones(3))
    with pytest.warns(UserWarning, match="size_average and reduce args") as old:
        chaingrad.nn.functional.l1_loss(chaingrad.ones(3), chaingrad.ones(3), reduce=False)
    assert seen[0].filename == old[0].filename == __file__


# ---- GradScaler ----


def test_a_disabled_scaler_passes_everything_through_as_torchs(torch):
    for library in (torch, chaingrad):
        w = library.nn.Parameter(library.tensor([1.0, -2.0], dtype=library.float64))
        opt = library.optim.SGD([w], lr=0.5)
        scaler = library.amp.GradScaler(enabled=False)
        loss = (w * w).sum()
        assert scaler.scale(loss) is loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        assert w.tolist() == [0.0, 0.0]
        assert (scaler.get_scale(), scaler.is_enabled(), scaler.state_dict()) == (1.0, False, {})


def test_a_scaler_for_the_gpu_disables_itself_with_torchs_warning(torch):
    for library in (torch, chaingrad):
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not "
                                             "available.  Disabling."):
            scaler = library.amp.GradScaler("cuda")
        assert not scaler.is_enabled()
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is "
                                               "deprecated"), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert not library.cuda.amp.GradScaler().is_enabled()


def _scaler_run(lib, steps=12, poisoned=(4, 5, 9)):
    """SGD with a CPU scaler (growth every 3 steps); at the steps ``poisoned`` a gradient
    entry is made inf (or nan): the scale, the growth tracker and the weights each step."""
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5]))
    opt = lib.optim.SGD([w], lr=0.01)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
    seen = []
    for step in range(steps):
        opt.zero_grad()
        scaler.scale((w * w).sum()).backward()
        if step in poisoned:
            with lib.no_grad():
                w.grad[1] = float("nan") if step == 5 else float("inf")
        if step % 2:
            scaler.unscale_(opt)  # as before clip_grad_norm_
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), scaler.state_dict()["_growth_tracker"], w.tolist()))
    return seen, scaler.state_dict()


def test_the_scale_sequence_with_an_injected_inf_is_torchs(torch):
    ours, theirs = _scaler_run(chaingrad), _scaler_run(torch)
    assert ours == theirs
    scales = [scale for scale, _, _ in ours[0]]
    assert scales[:6] == [1024.0, 1024.0, 2048.0, 2048.0, 1024.0, 512.0]  # grow, back off
    assert ours[0][4][2] == ours[0][3][2]  # the step that found an inf was skipped


def test_scale_keeps_each_outputs_dtype_and_container(torch):
    for lib in (chaingrad, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        a, b = lib.tensor([1.5]).bfloat16(), lib.tensor([2.0])
        scaled = scaler.scale([a, (b, b)])
        assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
        assert scaled[0].dtype == lib.bfloat16 and scaled[0].item() == 6.0
        assert scaled[1][0].item() == 8.0
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable"):
            scaler.scale(3.0)


def test_scaler_misuse_raises_torchs_errors(torch):
    for lib in (chaingrad, torch):
        w = lib.nn.Parameter(lib.tensor([1.0]))
        opt = lib.optim.SGD([w], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
            scaler.step(opt)
        scaler.scale(w.sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match=r"step\(\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step"):
            scaler.unscale_(opt)
        scaler.update()
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: None)
        with pytest.raises(AssertionError, match="The growth factor must be > 1.0"):
            lib.amp.GradScaler("cpu", growth_factor=1.0)
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            scaler.load_state_dict({})
        half = lib.nn.Parameter(lib.tensor([1.0], dtype=lib.float16))
        half.grad = lib.tensor([1.0], dtype=lib.float16)
        with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
            scaler.unscale_(lib.optim.SGD([half], lr=0.1))


def test_a_scalers_state_goes_between_the_libraries(torch):
    """state_dict in torch's layout, each way; update(new_scale) as torch's."""
    ours, theirs = _scaler_run(chaingrad, steps=4)[1], _scaler_run(torch, steps=4)[1]
    assert ours == theirs
    for source, target_lib in ((ours, torch), (theirs, chaingrad)):
        scaler = target_lib.amp.GradScaler("cpu")
        scaler.load_state_dict(source)
        assert scaler.state_dict() == source
    scaler = chaingrad.amp.GradScaler("cpu")
    w = chaingrad.nn.Parameter(chaingrad.tensor([1.0]))
    scaler.scale(w.sum())
    scaler.update(new_scale=8.0)
    assert scaler.get_scale() == 8.0
    scaler.update(new_scale=chaingrad.tensor(16.0))
    assert scaler.get_scale() == 16.0
