"""chaingrad.amp: autocast rounds what torch's CPU autocast rounds, to torch's numbers;
GradScaler disabled passes everything through, as torch's."""

import warnings

import numpy as np
import pytest

import chaingrad


def _pair(torch, make):
    """The same layer in both libraries: ``make(lib)`` built under the same seed in chaingrad,
    torch's given chaingrad's numbers."""
    chaingrad.manual_seed(0)
    ours, theirs = make(chaingrad), make(torch)
    theirs.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in
                            ours.state_dict().items()})
    return ours, theirs


LAYERS = {
    "linear": (lambda lib: lib.nn.Linear(16, 8), (5, 16)),
    "conv2d": (lambda lib: lib.nn.Conv2d(3, 4, 3, padding=1), (2, 3, 6, 6)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_autocast_gives_torchs_bfloat16_numbers(torch, name):
    make, shape = LAYERS[name]
    ours, theirs = _pair(torch, make)
    x = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    with chaingrad.autocast(device_type="cpu", dtype=chaingrad.bfloat16):
        got = ours(chaingrad.tensor(x))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        expected = theirs(torch.tensor(x))
    assert expected.dtype == torch.bfloat16 and got.dtype == chaingrad.float32
    np.testing.assert_allclose(got.detach().numpy(), expected.float().detach().numpy(),
                               rtol=2**-8, atol=1e-6)
    plain = ours(chaingrad.tensor(x)).detach().numpy()
    assert not np.array_equal(got.detach().numpy(), plain)  # it did round
    as_bfloat16 = got.detach().numpy().astype(chaingrad.bfloat16.dtype).astype(np.float32)
    np.testing.assert_array_equal(got.detach().numpy(), as_bfloat16)


def test_matmul_under_autocast_is_torchs_and_differentiable(torch):
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(3, 4, 8)).astype(np.float32), rng.normal(size=(3, 8, 2)).astype(
        np.float32)
    x, y = chaingrad.tensor(a, requires_grad=True), chaingrad.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    with chaingrad.autocast("cpu"):
        out = x @ y
    with torch.autocast("cpu"):
        expected = tx @ ty
    np.testing.assert_array_equal(out.detach().numpy(), expected.float().detach().numpy())
    out.sum().backward()
    expected.float().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2**-7)


def test_autocast_leaves_float64_and_everything_outside_it_alone():
    x = chaingrad.tensor([[1.001, 2.0]], dtype=chaingrad.float64)
    w = chaingrad.tensor([[1.0], [1.0]], dtype=chaingrad.float64)
    with chaingrad.autocast("cpu"):
        assert chaingrad.is_autocast_enabled("cpu")
        assert (x @ w).item() == pytest.approx(3.001, abs=1e-12)
    assert not chaingrad.is_autocast_enabled("cpu")
    assert chaingrad.get_autocast_dtype("cpu") == chaingrad.bfloat16


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
    assert product(x, w).item() == 3.0
    assert (x @ w).item() == pytest.approx(3.001, rel=1e-6)


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


def test_a_scaler_that_scales_on_the_cpu_is_not_there_yet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NotImplementedError, match=r"GradScaler\(device='cpu', "
                                                      r"enabled=True\) is not in chaingrad yet"):
            chaingrad.amp.GradScaler("cpu")
