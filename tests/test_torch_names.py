"""chaingrad/torch_names.py: a torch name that chaingrad lacks is named in the error, in
every module that PyTorch code reaches through ``import chaingrad as torch``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import traceback
import types

import numpy as np
import pytest

import chaingrad
from chaingrad import torch_names
from chaingrad.errors import TorchNameError

MODULES = ["", ".nn", ".nn.functional", ".nn.init", ".nn.utils", ".nn.utils.rnn", ".optim",
           ".optim.lr_scheduler", ".utils", ".utils.data", ".utils.tensorboard"]


def public_names(module: types.ModuleType) -> list[str]:
    """A torch module's public names: its functions and classes, and its own submodules (not
    what it imports from typing or the standard library); for ``torch`` itself, imported or
    not yet (another test may import ``torch.onnx``, say)."""
    names = [m.name for m in pkgutil.iter_modules(module.__path__) if not m.name.startswith("_")
             ] if module.__name__ == "torch" else []
    if hasattr(module, "__path__"):  # a package: its submodules, whether imported yet or not
        names += [m.name for m in pkgutil.iter_modules(module.__path__)
                  if not m.name.startswith("_") and m.name not in names]
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


# ---- issue 34, point 6: no Python error for a torch name ----

WALKED = {"torch": "chaingrad", "torch.nn": "chaingrad.nn",
          "torch.nn.functional": "chaingrad.nn.functional", "torch.optim": "chaingrad.optim",
          "torch.autograd": "chaingrad.autograd", "torch.utils.data": "chaingrad.utils.data"}


def refusal(holder: object, name: str, ours: str) -> str | None:
    """Why asking ``holder`` (chaingrad's ``ours``) for torch's ``name`` is wrong, or None:
    it is there, or chaingrad's ``TorchNameError`` names it; never Python's own error (an
    AttributeError whose printout may suggest a private name, a TypeError, a
    ModuleNotFoundError), never a private name in what it says."""
    try:
        getattr(holder, name)
    except TorchNameError as error:
        shown = "".join(traceback.format_exception_only(type(error), error))
        if not str(error).startswith(f"{ours} has no {name!r} yet"):
            return f"{name}: {error}"
        if "Did you mean" in shown or re.search(r"'_\w+'", shown):
            return f"{name}: suggests a private name: {shown}"
    except Exception as error:  # noqa: BLE001 - any other error is the failure reported
        return f"{name}: {type(error).__name__}: {error}"
    return None


@pytest.mark.parametrize("theirs", sorted(WALKED))
def test_every_public_name_of_torch_is_there_or_refused_naming_it(torch, theirs):
    """dir() of each of torch's modules, less its private names: chaingrad has each, or
    raises its error naming it."""
    module = importlib.import_module(theirs)
    ours = importlib.import_module(WALKED[theirs])
    wrong = [why for name in dir(module) if not name.startswith("_")
             if (why := refusal(ours, name, WALKED[theirs])) is not None]
    assert not wrong, f"{theirs}: {len(wrong)} names: {wrong}"


def test_every_public_name_of_torchs_tensor_is_there_or_refused_naming_it(torch):
    """dir(torch.Tensor), less its private names, asked of a chaingrad tensor."""
    x = chaingrad.zeros(2, 3)
    wrong = [why for name in dir(torch.Tensor) if not name.startswith("_")
             if (why := refusal(x, name, "chaingrad.Tensor")) is not None]
    assert not wrong, f"Tensor: {len(wrong)} names: {wrong}"


def test_a_refused_name_is_chaingrads_error_and_a_typo_pythons():
    with pytest.raises(TorchNameError, match="^chaingrad.autograd has no 'Variable' yet$"):
        chaingrad.autograd.Variable  # noqa: B018
    assert not hasattr(chaingrad, "fft") and getattr(chaingrad, "fft", 3) == 3
    with pytest.raises(AttributeError) as typo:
        chaingrad.gradchek  # noqa: B018
    assert type(typo.value) is AttributeError


# ---- torch's arguments on the functions chaingrad has ----

# torch keywords that other parts of issue 34 bring (torch.save and load: the checkpoint
# format; torch.norm's out and dtype: the linalg work), or that are torch's internals
OTHERS_WORK = {"torch.save": {"obj", "f", "pickle_module", "pickle_protocol"},
               "torch.load": {"f", "pickle_module", "mmap"}, "torch.norm": {"out", "dtype"},
               "torch.enable_grad": {"orig_func"}, "torch.autograd.enable_grad": {"orig_func"}}


def torch_keywords(fn: object, name: str) -> list[str] | None:
    """The keywords a torch function takes: from its signature, or for a builtin from the
    first line of its docstring (``add(input, other, *, alpha=1, out=None) -> Tensor``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (ValueError, TypeError):
        lines = (getattr(fn, "__doc__", None) or "").strip().splitlines()
        found = re.match(rf"{name}\((.*)\)", lines[0]) if lines else None
        return re.findall(r"(\w+)=", found.group(1)) if found else None
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name != "self" and not p.name.startswith("_")]


@pytest.mark.parametrize("theirs", sorted(WALKED))
def test_every_torch_keyword_of_a_function_chaingrad_has_is_taken_or_a_known_gap(torch, theirs):
    """For each function and class chaingrad has under torch's name, every keyword of
    torch's is one of chaingrad's too (where chaingrad's signature lists them), or one of
    ``torch_names.KEYWORDS_NOT_YET``, whose reason the docs give."""
    module, ours = importlib.import_module(theirs), importlib.import_module(WALKED[theirs])
    lacking = []
    for name in dir(module):
        if name.startswith("_") or not callable(getattr(module, name)):
            continue
        try:
            mine = getattr(ours, name)
            parameters = inspect.signature(mine, follow_wrapped=False).parameters
        except (AttributeError, ValueError, TypeError):
            continue
        if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
            continue  # takes any keyword: its own checks name what it refuses
        keywords = torch_keywords(getattr(module, name), name) or []
        missing = set(keywords) - set(parameters) - set(torch_names.KEYWORDS_NOT_YET) \
            - OTHERS_WORK.get(f"{theirs}.{name}", set())
        lacking += [f"{name}({keyword}=)" for keyword in sorted(missing)]
    assert not lacking, f"{theirs}: keywords chaingrad neither takes nor lists: {lacking}"


@pytest.mark.parametrize("call", [
    lambda t, out: t.cat([t.ones(2), t.zeros(1)], out=out),
    lambda t, out: t.concatenate([t.ones(2), t.zeros(1)], out=out),
    lambda t, out: t.arange(3, out=out),
    lambda t, out: t.full((3,), 2.5, out=out),
    lambda t, out: t.linspace(0, 1, 3, out=out),
    lambda t, out: t.histc(t.tensor([0.0, 1.0, 1.0]), 3, out=out),
], ids=["cat", "concatenate", "arange", "full", "linspace", "histc"])
def test_out_is_taken_where_torch_takes_it(torch, call):
    """No keyword of torch's is left untaken (``KEYWORDS_NOT_YET`` is empty): ``out=`` on the
    joins, the factories and the histograms writes into the tensor given, as torch's."""
    assert not torch_names.KEYWORDS_NOT_YET
    results = []
    for lib in (chaingrad, torch):
        out = lib.zeros(3)
        assert call(lib, out) is out
        results.append(out.tolist())
    assert results[0] == results[1]
