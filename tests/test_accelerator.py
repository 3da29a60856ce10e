"""chaingrad.accelerator: no accelerator, as torch's CPU build answers."""

import pytest

import chaingrad


@pytest.mark.parametrize("call", ["is_available()", "device_count()", "current_accelerator()",
                                  "current_accelerator(check_available=True)"])
def test_each_question_is_answered_as_torchs_cpu_build_answers(torch, call):
    assert eval(f"a.{call}", {"a": chaingrad.accelerator}) == \
        eval(f"a.{call}", {"a": torch.accelerator})  # noqa: S307


@pytest.mark.parametrize("call", ["current_device_index()", "set_device_index(0)",
                                  "synchronize()", "empty_cache()", "memory_allocated()",
                                  "max_memory_allocated()"])
def test_what_needs_a_device_raises_torchs_runtime_error(torch, call):
    words = "Cannot access accelerator device when none is available."
    for library in (torch, chaingrad):
        with pytest.raises(RuntimeError, match=words):
            eval(f"a.{call}", {"a": library.accelerator})  # noqa: S307


def test_the_device_line_of_pytorchs_examples_picks_the_cpu():
    torch = chaingrad
    device = torch.accelerator.current_accelerator().type \
        if torch.accelerator.is_available() else "cpu"
    assert torch.ones(2, device=device).device == torch.device("cpu")
