"""chaingrad/torch_names.py: a torch name that chaingrad lacks is named in the error, in
every module that PyTorch code reaches through ``import chaingrad as torch``."""

from __future__ import annotations

import importlib
import pkgutil
import types

import numpy as np
import pytest

import chaingrad
from chaingrad import torch_names

MODULES = ["", ".nn", ".nn.functional", ".nn.init", ".nn.utils", ".optim",
           ".optim.lr_scheduler", ".utils", ".utils.data", ".utils.tensorboard"]


def public_names(module: types.ModuleType) -> list[str]:
    """A torch module's public names: its functions and classes, and its own submodules (not
    what it imports from typing or the standard library); for ``torch`` itself, imported or
    not yet (another test may import ``torch.onnx``, say)."""
    names = [m.name for m in pkgutil.iter_modules(module.__path__) if not m.name.startswith("_")
             ] if module.__name__ == "torch" else []
    for name in dir(module):
        thing = getattr(module, name)
        if name.startswith("_"):
            continue
        if isinstance(thing, types.ModuleType):
            if thing.__name__.startswith(module.__name__ + ".") and name not in names:
                names.append(name)
        elif callable(thing) and (getattr(thing, "__module__", None) or "").startswith("torch"):
            names.append(name)
    return names


@pytest.mark.parametrize("suffix", MODULES, ids=[f"torch{m}" for m in MODULES])
def test_every_public_name_of_torchs_module_is_there_or_named_as_missing(torch, suffix):
    theirs = importlib.import_module("torch" + suffix)
    ours = importlib.import_module("chaingrad" + suffix)
    unnamed = []
    for name in public_names(theirs):
        try:
            getattr(ours, name)
        except AttributeError as error:  # named, and perhaps what to write instead
            named = f"chaingrad{suffix} has no {name!r} yet"
            if str(error) != named and not str(error).startswith(named + "; for "):
                unnamed.append(f"{name}: {error}")
    assert not unnamed, f"torch{suffix} names that chaingrad neither has nor names: {unnamed}"


def test_a_typo_gets_pythons_own_message():
    import chaingrad.optim

    with pytest.raises(AttributeError, match="^module 'chaingrad.optim' has no attribute 'SDG'$"):
        chaingrad.optim.SDG  # noqa: B018
    assert "Rprop" in torch_names.OPTIM


def _samples(lib) -> dict:
    """The names of ``INSTEAD``'s code: torch (or chaingrad) as ``torch``, its ``F`` and
    ``nn``, float64 tensors ``x``, ``y`` (3, 4) in (0.1, 0.9), ``k`` (3, 5), ``m`` (4, 5),
    ``v`` (4,), ``w`` (5,), and int64 indices ``i`` (into x's rows) and ``j`` (3, 2)."""
    rng = np.random.default_rng(0)
    shapes = {"x": (3, 4), "y": (3, 4), "k": (3, 5), "m": (4, 5), "v": (4,), "w": (5,)}
    space = {name: lib.tensor(rng.uniform(0.1, 0.9, shape)) for name, shape in shapes.items()}
    space |= {"i": lib.tensor([2, 0, 2]), "j": lib.tensor([[0, 3], [1, 1], [2, 0]])}
    return space | {"torch": lib, "F": lib.nn.functional, "nn": lib.nn}


def _numbers(result) -> list:
    """A result (a tensor of either library, or a tuple of them) as nested lists."""
    if isinstance(result, tuple):
        return [_numbers(r) for r in result]
    return np.asarray(result.detach().numpy(), dtype=np.float64).tolist()


@pytest.mark.parametrize("name", sorted(torch_names.INSTEAD))
def test_each_suggestion_runs_in_chaingrad_and_gives_torchs_result(torch, name) -> None:
    """Where chaingrad names a torch name it lacks, what it says to write instead is code
    that runs, and computes what torch's call does; the call itself raises that error."""
    call, instead = torch_names.INSTEAD[name]
    ours_space, theirs_space = _samples(chaingrad), _samples(torch)
    # the code is our own table's, run on our own sample tensors
    expected = eval(call, theirs_space)  # noqa: S307
    got = eval(instead, ours_space)  # noqa: S307
    np.testing.assert_allclose(np.array(_numbers(got)), np.array(_numbers(expected)),
                               rtol=1e-12, atol=1e-15, err_msg=name)
    try:
        ours = eval(call, ours_space)  # noqa: S307
    except AttributeError as error:
        assert str(error).endswith(f" yet; for {call} write {instead}"), str(error)
    else:  # chaingrad has it now (the stand-in is no longer shown): its own is torch's too
        np.testing.assert_allclose(np.array(_numbers(ours)), np.array(_numbers(expected)),
                                   rtol=1e-12, atol=1e-15, err_msg=name)
