"""chaingrad.inference_mode and is_inference_mode_enabled, against torch's."""

from __future__ import annotations

import threading

import pytest

import chaingrad
from chaingrad import Value


def modes(lib) -> tuple[bool, bool]:
    return lib.is_grad_enabled(), lib.is_inference_mode_enabled()


def nested_modes(lib) -> list[tuple[bool, bool]]:
    """The two modes at each point of a nest of contexts, to compare with torch's."""
    seen = [modes(lib)]
    with lib.inference_mode():
        seen.append(modes(lib))
        with lib.inference_mode(False):
            seen.append(modes(lib))
            with lib.no_grad():
                seen.append(modes(lib))
            seen.append(modes(lib))
        seen.append(modes(lib))
    with lib.no_grad():
        with lib.inference_mode(False):
            seen.append(modes(lib))
        seen.append(modes(lib))
    seen.append(modes(lib))
    return seen


def decorated_modes(lib) -> list[tuple[bool, bool]]:
    @lib.inference_mode
    def bare():
        return modes(lib)

    @lib.inference_mode()
    def called():
        return modes(lib)

    @lib.inference_mode(False)
    def off():
        return modes(lib)

    @lib.inference_mode()
    def generator():
        yield modes(lib)
        yield modes(lib)

    with lib.no_grad():
        inside_off = off()
    return [bare(), called(), inside_off, *generator(), modes(lib)]


@pytest.mark.parametrize("program", [nested_modes, decorated_modes])
def test_the_modes_are_torchs(torch, program):
    assert program(chaingrad) == program(torch)


def test_no_graph_is_recorded_inside():
    x = chaingrad.ones(2, requires_grad=True)
    with chaingrad.inference_mode():
        y = x * 2
        v = Value(2.0) * 3
    assert not y.requires_grad and y.grad_fn is None and v._prev == ()
    with chaingrad.inference_mode(False):
        assert (x * 2).requires_grad


def test_the_mode_is_restored_after_an_error_and_belongs_to_its_thread():
    with pytest.raises(KeyError), chaingrad.inference_mode():
        raise KeyError("x")
    assert modes(chaingrad) == (True, False)
    seen = []
    with chaingrad.inference_mode():
        thread = threading.Thread(target=lambda: seen.append(modes(chaingrad)))
        thread.start()
        thread.join()
    assert seen == [(True, False)]


def test_a_context_can_be_entered_again_and_nested_in_itself():
    context = chaingrad.inference_mode()
    with context:
        with context:
            assert modes(chaingrad) == (False, True)
        assert modes(chaingrad) == (False, True)
    with context:
        assert modes(chaingrad) == (False, True)
    assert modes(chaingrad) == (True, False)
