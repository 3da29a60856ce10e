"""``chaingrad.compile`` with torch's arguments: ``torch.compile(model, mode=...,
fullgraph=..., dynamic=..., backend=...)`` returns a module that computes what the model
computes, compiled by chaingrad's compiler (``chaingrad.compiler``) where a trace can stand
for it, and run eagerly, saying so once, where it cannot.

A function is compiled as ``chaingrad.compiler.compile_function`` compiles it. A model becomes an
``OptimizedModule``, as torch's: its parameters are the model's (its state dict's keys start
with ``_orig_mod.``, as torch's), its attributes are read through to the model, and each
call runs

- the compiled trace of the model's forward, one trace for each setting of the modules'
  ``training`` flags (``model.eval()`` switches to another), where it can;
- the model itself, with a ``UserWarning`` the first time, where a trace would not compute
  what the model computes: while a dropout module draws a mask in training (a trace would
  replay its first mask), or where chaingrad's compiler cannot trace the forward (it
  returns a None beside a tensor, say).

Torch's tuning arguments (``mode``, ``dynamic``, ``backend``, ``options``) choose among
torch's code generators and are accepted and checked as torch checks them; chaingrad has
one compiler.

Example:
    >>> import chaingrad as torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    >>> fast = torch.compile(model, mode="max-autotune", fullgraph=True)
    >>> x = torch.randn(4, 3)
    >>> torch.equal(fast(x), model(x)), sorted(fast.state_dict())[0]
    (True, '_orig_mod.0.bias')
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from . import compiler
from .nn.modules.module import Module

MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
"""The ``mode``s torch.compile takes."""


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: str | Callable[..., Any] | None = None, mode: str | None = None,
            options: dict[str, Any] | None = None, name: str | None = None,
            disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None,
            check: bool = False) -> Any:
    """Compile ``model`` (a module or a function), with torch.compile's arguments.

    Args:
        model: An ``nn.Module`` (returns an ``OptimizedModule``) or a function (returns
            ``chaingrad.compiler``'s ``Compiled``); omitted, a decorator.
        fullgraph: torch's, as are ``dynamic``, ``backend``, ``mode``, ``options``,
            ``name``, ``recompile_limit``, ``isolate_recompiles`` and ``shapes_spec``:
            checked as torch checks them, and otherwise the same to chaingrad's one
            compiler.
        disable: True returns ``model`` itself, as torch's.
        check: chaingrad's: run the eager model beside the compiled code at every call and
            raise ``CompileCheckError`` at the first difference.

    Returns:
        The compiled module or function.

    Example:
        >>> from chaingrad import Value
        >>> w = Value(-3.0)
        >>> step = compile(lambda x: (x * w).tanh())
        >>> round(step(0.5).data, 4)
        -0.9051
    """
    if mode not in MODES:
        raise RuntimeError(f"compile: Unrecognized mode={mode!r}, should be one of: "
                           f"{', '.join(m for m in MODES if m)}")
    if mode is not None and options is not None:
        raise RuntimeError("compile: Either mode or options can be specified, but both can't "
                           "be specified at the same time.")
    if not (backend is None or isinstance(backend, str) or callable(backend)):
        raise TypeError(f"compile: backend must be a string or a callable, got {backend!r}")
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, name=name, disable=disable,
                                 recompile_limit=recompile_limit,
                                 isolate_recompiles=isolate_recompiles,
                                 shapes_spec=shapes_spec, check=check)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, check)
    return compiler.compile_function(model, check=check)


class OptimizedModule(Module):
    """``model`` compiled by ``chaingrad.compile`` (see the module): call it as the model.

    Attributes:
        _orig_mod: The model (torch's name: its state dict's keys start with it).
    """

    def __init__(self, model: Module, check: bool = False) -> None:
        self._orig_mod = model
        object.__setattr__(self, "_check", check)
        object.__setattr__(self, "_traces", {})
        object.__setattr__(self, "_warned", False)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        model = self._orig_mod
        why = _eager_because(model, kwargs)
        if why is None:
            flags = tuple(m.training for m in model.modules())
            compiled = self._traces.get(flags)
            if compiled is None:
                compiled = self._traces[flags] = compiler.compile_function(model, check=self._check)
            try:
                return compiled(*args)
            except (TypeError, RuntimeError) as error:
                why = f"chaingrad's compiler cannot trace it ({error})"
        if not self._warned:
            object.__setattr__(self, "_warned", True)
            warnings.warn(f"compile: {type(model).__name__} runs eagerly: {why}",
                          stacklevel=3)
        return model(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """What the model has (``compiled.config``, ``compiled.generate(...)``), as torch's
        OptimizedModule reads through."""
        if name.startswith("_"):
            return super().__getattr__(name)
        return getattr(self._orig_mod, name)


def _eager_because(model: Module, kwargs: dict[str, Any]) -> str | None:
    """Why ``model`` must run eagerly now (a trace would not compute what it does), or None."""
    if kwargs:
        return "chaingrad's compiler takes positional arguments only"
    for name, m in model.named_modules():
        if m.training and "Dropout" in type(m).__name__ and getattr(m, "p", 0) > 0:
            return (f"its dropout {name!r} draws a new mask at each call in training, which a "
                    "trace would replay")
    return None
