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
