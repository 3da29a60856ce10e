"""chaingrad: the autograd engine a learner can read in an afternoon and still train with.

Example:
    >>> from chaingrad import Value
    >>> x = Value(2.0)
    >>> y = x * x + 3 * x
    >>> y.backward()
    >>> y.data, x.grad
    (10.0, 7.0)
"""

import importlib

from .autodiff import enable_grad, is_grad_enabled, no_grad, topological_order
from .autograd import grad, gradcheck, primitive
from .compiler import compile
from .engine import Value
from .errors import CompileCheckError, DomainError, GradcheckError
from .optim import NonFiniteGradError
from .serialization import ModelFileError, load, save, to_torch
from .show.dot import draw_dot, to_dot
from .show.explain import explain
from .show.page import to_html
from .show.steps import backward_steps

__version__ = "0.1.0"

# The Tensor engine needs numpy, which `import chaingrad` must not: its names load on use.
_TENSOR_NAMES = {
    "Tensor": "chaingrad.tensor_engine",
    "concatenate": "chaingrad.tensor_engine",
    "stack": "chaingrad.tensor_engine",
    "where": "chaingrad.tensor_engine",
}


# Submodules reachable as attributes (chaingrad.losses, ...) without an import of their own;
# they load on first use (agreement needs numpy; losses only on Tensors).
_SUBMODULES = ("agreement", "functional", "losses", "nn", "optim")


def __getattr__(name: str) -> object:
    if name in _TENSOR_NAMES:
        value = getattr(_load(_TENSOR_NAMES[name], f"chaingrad.{name}"), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return _load(f"chaingrad.{name}", f"chaingrad.{name}")  # which sets the attribute
    raise AttributeError(f"module 'chaingrad' has no attribute {name!r}")


def _load(module: str, what: str) -> object:
    """Import ``module``; without numpy, say which extra brings it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != "numpy":
            raise
        raise ModuleNotFoundError(f"{what} needs numpy: pip install 'chaingrad[tensor]'",
                                  name="numpy") from exc


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_TENSOR_NAMES) | set(_SUBMODULES))

__all__ = [
    "CompileCheckError",
    "DomainError",
    "GradcheckError",
    "ModelFileError",
    "NonFiniteGradError",
    "Value",
    "backward_steps",
    "compile",
    "draw_dot",
    "enable_grad",
    "explain",
    "grad",
    "gradcheck",
    "is_grad_enabled",
    "load",
    "no_grad",
    "primitive",
    "save",
    "to_dot",
    "to_html",
    "to_torch",
    "topological_order",
]
