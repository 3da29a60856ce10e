"""chaingrad.cuda: no GPU, and seeding the GPUs does nothing (as torch's without one)."""

import pytest

import chaingrad


def test_seeding_the_gpus_does_not_touch_the_cpus_numbers():
    chaingrad.manual_seed(0)
    expected = chaingrad.rand(3)
    chaingrad.manual_seed(0)
    assert chaingrad.cuda.manual_seed(5) is None
    assert chaingrad.cuda.manual_seed_all(7) is None
    assert chaingrad.equal(chaingrad.rand(3), expected)


def test_the_seed_is_checked_as_torch_takes_it(torch):
    for seed in (3, "4", 2.5, 2**70):
        torch.cuda.manual_seed_all(seed)
        chaingrad.cuda.manual_seed_all(seed)
    with pytest.raises(TypeError, match=r"cuda.manual_seed_all: seed must be an int, got NoneType"):
        chaingrad.cuda.manual_seed_all(None)
    with pytest.raises(TypeError, match=r"cuda.manual_seed: seed must be an int, got str 'x'"):
        chaingrad.cuda.manual_seed("x")


# ---- what torch 2.13's CPU build answers, asked of both ----

# each call, with ``torch`` standing for either library; torch's CPU build is the oracle
ANSWERS = [
    "torch.cuda.is_available()", "torch.cuda.device_count()", "torch.cuda.is_initialized()",
    "torch.cuda.is_bf16_supported()", "torch.cuda.is_bf16_supported(including_emulation=False)",
    "torch.cuda.is_tf32_supported()", "torch.cuda.get_arch_list()", "torch.cuda.seed()",
    "torch.cuda.seed_all()", "torch.cuda.empty_cache()", "torch.cuda.memory_allocated()",
    "torch.cuda.max_memory_allocated()", "torch.cuda.memory_reserved()",
    "torch.cuda.max_memory_reserved()", "torch.cuda.get_rng_state_all()",
]
REFUSALS = [
    "torch.cuda.current_device()", "torch.cuda.synchronize()", "torch.cuda.init()",
    "torch.cuda.get_device_name()", "torch.cuda.get_device_capability()",
    "torch.cuda.get_device_properties(0)", "torch.cuda.initial_seed()",
    "torch.cuda.get_rng_state()", "torch.cuda.current_stream()", "torch.cuda.mem_get_info()",
    "torch.ones(2).cuda()", "torch.nn.Linear(2, 2).cuda()", "torch.zeros(2, device='cuda')",
]


@pytest.mark.parametrize("call", ANSWERS)
def test_each_question_is_answered_as_torchs_cpu_build_answers(torch, call):
    assert eval(call, {"torch": chaingrad}) == eval(call, {"torch": torch})  # noqa: S307


@pytest.mark.parametrize("call", REFUSALS)
def test_what_needs_a_gpu_raises_torchs_assertion_error_with_its_words(torch, call):
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        eval(call, {"torch": torch})  # noqa: S307
    with pytest.raises(AssertionError) as caught:
        eval(call, {"torch": chaingrad})  # noqa: S307
    assert isinstance(caught.value, chaingrad.errors.NoCudaError)
    assert isinstance(caught.value, RuntimeError)  # chaingrad's own error for a missing device
    assert "chaingrad computes on the CPU only" in str(caught.value)


def test_set_device_raises_the_error_of_a_build_without_cuda():
    """torch's CPU build fails here on a private name of its C extension (an
    AttributeError); chaingrad raises what its other GPU calls raise."""
    with pytest.raises(AssertionError, match=r"cuda.set_device: Torch not compiled with CUDA"):
        chaingrad.cuda.set_device(0)


def test_the_older_amp_names_warn_as_torchs_and_disable_themselves(torch):
    for lib in (torch, chaingrad):
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is "
                                               "deprecated"):
            scaler = lib.cuda.amp.GradScaler(enabled=False)
        assert scaler.is_enabled() is False
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is "
                                               "deprecated"), \
                pytest.warns(UserWarning, match="CUDA is not available or torch_xla is "
                                                "imported. Disabling autocast."):
            context = lib.cuda.amp.autocast()
        with context:
            assert not lib.is_autocast_enabled("cpu")


def test_a_torch_name_chaingrad_lacks_is_named():
    with pytest.raises(chaingrad.errors.TorchNameError, match=r"^chaingrad.cuda has no 'Stream' "
                                                              "yet$"):
        chaingrad.cuda.Stream  # noqa: B018
