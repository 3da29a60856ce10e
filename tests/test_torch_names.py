"""chaingrad/torch_names.py: a torch name that chaingrad lacks is named in the error, in
every module that PyTorch code reaches through ``import chaingrad as torch``."""

from __future__ import annotations

import importlib
import pkgutil
import types

import pytest

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
        except AttributeError as error:
            if str(error) != f"chaingrad{suffix} has no {name!r} yet":
                unnamed.append(f"{name}: {error}")
    assert not unnamed, f"torch{suffix} names that chaingrad neither has nor names: {unnamed}"


def test_a_typo_gets_pythons_own_message():
    import chaingrad.optim

    with pytest.raises(AttributeError, match="^module 'chaingrad.optim' has no attribute 'SDG'$"):
        chaingrad.optim.SDG  # noqa: B018
    assert "LBFGS" in torch_names.OPTIM
