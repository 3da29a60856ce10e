"""chaingrad: the autograd engine a learner can read in an afternoon and still train with.

Example:
    >>> from chaingrad import Value
    >>> x = Value(2.0)
    >>> y = x * x + 3 * x
    >>> y.backward()
    >>> y.data, x.grad
    (10.0, 7.0)
"""

import builtins
import importlib

from . import torch_names
from .autodiff import topological_order
from .autograd import grad, gradcheck, primitive
from .compiler import compile
from .engine import Value
from .errors import AnomalyError, CompileCheckError, DomainError, GradcheckError
from .gradmode import (
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_anomaly_enabled,
    set_grad_enabled,
)
from .optim import NonFiniteGradError
from .reference import use_reference
from .rules import functions_in
from .serialization import ModelFileError, load, save, to_torch
from .show.dot import draw_dot, to_dot
from .show.explain import explain
from .show.page import to_html
from .show.steps import backward_steps

__version__ = "0.1.0"

# The Tensor engine needs numpy, which `import chaingrad` must not: its names load on use.
# Each is {name: (module, the name there)}: torch's names for the Tensor side.
_ENGINE = "chaingrad.tensor_engine"
_TENSOR_NAMES: dict[str, tuple[str, str]] = {
    name: (module, name)
    for module, names in {
        _ENGINE: ("Tensor", "cat", "concatenate", "stack", "where"),
        f"{_ENGINE}.functions": ("einsum",),
        f"{_ENGINE}.conversions": ("Size",),
        f"{_ENGINE}.printing": ("set_printoptions",),
        f"{_ENGINE}.factories": (
            "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full",
            "zeros_like", "ones_like", "empty_like", "full_like", "rand", "randn",
            "rand_like", "randn_like", "randint", "randint_like", "randperm", "normal",
            "bernoulli", "multinomial", "arange", "linspace", "eye"),
        f"{_ENGINE}.maths": (
            "square", "neg",
            "add", "sub", "mul", "div", "matmul", "mm", "dot", "mean", "amax", "amin",
            "maximum", "minimum", "var", "std",
            "argmax", "argmin", "norm", "clamp", "softmax", "log_softmax", "flatten",
            "reshape", "squeeze", "unsqueeze", "transpose", "permute", "t", "allclose",
            "equal", "numel", "is_tensor", "is_floating_point", "logsumexp", "cumsum", "sort",
            "argsort", "topk", "nonzero", "histc", "histogram", "tril", "triu", "masked_fill",
            "split", "chunk", "unbind", "roll", "gather", "scatter_add", "bmm", "isnan",
            "isinf", "isfinite", "isneginf", "isposinf", "nan_to_num", "nanmean", "nansum"),
        f"{_ENGINE}.dtypes": (
            "dtype", "float16", "float32", "float64", "uint8", "int8", "int16", "int32",
            "int64", "get_default_dtype", "set_default_dtype", "finfo", "iinfo"),
        f"{_ENGINE}.devices": ("device", "set_default_device", "get_default_device"),
        f"{_ENGINE}.generator": (
            "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
            "get_rng_state", "set_rng_state", "use_lecture_rng"),
    }.items()
    for name in names
}
# torch's names that are Python builtins, or other names for the same thing: defined under
# another name (no module shadows a builtin), and not kept in this module's namespace
# the elementwise primitives that torch has as functions (exp, log, ..., abs): from their
# declarations in chaingrad/rules.py, defined in maths.py (a builtin's name with a "_")
_TENSOR_NAMES |= {name: (f"{_ENGINE}.maths", name + "_" * hasattr(builtins, name))
                  for name in functions_in("torch")}
_TENSOR_NAMES |= {
    "pow": (f"{_ENGINE}.maths", "pow_"),
    "sum": (f"{_ENGINE}.maths", "sum_"), "max": (f"{_ENGINE}.maths", "max_"),
    "min": (f"{_ENGINE}.maths", "min_"), "all": (f"{_ENGINE}.maths", "all_"),
    "any": (f"{_ENGINE}.maths", "any_"), "clip": (f"{_ENGINE}.maths", "clamp"),
    "concat": (_ENGINE, "cat"), "bool": (f"{_ENGINE}.dtypes", "bool_"),
    "half": (f"{_ENGINE}.dtypes", "float16"), "float": (f"{_ENGINE}.dtypes", "float32"),
    "double": (f"{_ENGINE}.dtypes", "float64"), "short": (f"{_ENGINE}.dtypes", "int16"),
    "int": (f"{_ENGINE}.dtypes", "int32"), "long": (f"{_ENGINE}.dtypes", "int64"),
}


# Submodules reachable as attributes (chaingrad.losses, ...) without an import of their own;
# they load on first use (agreement needs numpy; losses only on Tensors).
_SUBMODULES = ("agreement", "cuda", "generic", "losses", "nn", "optim", "utils")


def __getattr__(name: str) -> object:
    """A Tensor-side name, loaded on first use; an error naming what chaingrad lacks."""
    if name in _TENSOR_NAMES:
        module, attr = _TENSOR_NAMES[name]
        value = getattr(_load(module, f"chaingrad.{name}"), attr)
        if not hasattr(builtins, name):  # keep builtins usable in this module
            globals()[name] = value
        return value
    if name in _SUBMODULES:
        return _load(f"chaingrad.{name}", f"chaingrad.{name}")  # which sets the attribute
    raise torch_names.missing("chaingrad", name, torch_names.TORCH)  # torch's name, or a typo


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
    "AnomalyError",
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
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "load",
    "no_grad",
    "primitive",
    "save",
    "set_anomaly_enabled",
    "set_grad_enabled",
    "to_dot",
    "to_html",
    "to_torch",
    "topological_order",
    "use_reference",
]
