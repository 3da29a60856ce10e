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
from typing import TYPE_CHECKING

from . import torch_names
from .autodiff import topological_order
from .autograd import grad, gradcheck, primitive
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
from .torch_compile import compile

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
            "dtype", "float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32",
            "int64", "get_default_dtype", "set_default_dtype", "finfo", "iinfo"),
        f"{_ENGINE}.devices": ("device", "set_default_device", "get_default_device"),
        f"{_ENGINE}.threads": ("set_num_threads", "get_num_threads", "set_num_interop_threads",
                               "get_num_interop_threads"),
        "chaingrad.amp.autocast_mode": ("autocast", "is_autocast_enabled", "get_autocast_dtype",
                                        "get_autocast_cpu_dtype", "is_autocast_cpu_enabled",
                                        "set_autocast_enabled", "set_autocast_dtype",
                                        "is_autocast_cache_enabled",
                                        "set_autocast_cache_enabled", "clear_autocast_cache"),
        "chaingrad.amp.grad_scaler": ("GradScaler",),
        "chaingrad.backends": ("set_float32_matmul_precision", "get_float32_matmul_precision"),
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
_TENSOR_NAMES |= {name: (f"{_ENGINE}.maths", name)
                  for name in ("bincount", "flip", "narrow", "unique")}
# torch's legacy tensor types (torch.FloatTensor, ...): a class per dtype
_TENSOR_NAMES |= {name: (f"{_ENGINE}.legacy", name)
                  for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
                               "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
                               "BoolTensor")}


# Submodules reachable as attributes (chaingrad.losses, ...) without an import of their own;
# they load on first use (agreement needs numpy; losses only on Tensors).
_SUBMODULES = ("agreement", "cuda", "generic", "losses", "nn", "optim", "utils",
               "accelerator", "amp", "backends", "distributed", "onnx")
_SUBMODULES += ("linalg", "testing")  # torch.linalg, torch.testing

if TYPE_CHECKING:
    # The same names from the same places, for type checkers and editors, which do not run
    # __getattr__ (tests/test_typing.py checks that the two say the same). `X as X` makes X
    # part of this module's interface; a builtin's name is bound to the function that has it.
    from . import accelerator as accelerator
    from . import agreement as agreement
    from . import amp as amp
    from . import backends as backends
    from . import cuda as cuda
    from . import distributed as distributed
    from . import generic as generic
    from . import linalg as linalg
    from . import losses as losses
    from . import nn as nn
    from . import onnx as onnx
    from . import optim as optim
    from . import testing as testing
    from . import utils as utils
    from .amp.autocast_mode import autocast as autocast
    from .amp.autocast_mode import clear_autocast_cache as clear_autocast_cache
    from .amp.autocast_mode import get_autocast_cpu_dtype as get_autocast_cpu_dtype
    from .amp.autocast_mode import get_autocast_dtype as get_autocast_dtype
    from .amp.autocast_mode import is_autocast_cache_enabled as is_autocast_cache_enabled
    from .amp.autocast_mode import is_autocast_cpu_enabled as is_autocast_cpu_enabled
    from .amp.autocast_mode import is_autocast_enabled as is_autocast_enabled
    from .amp.autocast_mode import set_autocast_cache_enabled as set_autocast_cache_enabled
    from .amp.autocast_mode import set_autocast_dtype as set_autocast_dtype
    from .amp.autocast_mode import set_autocast_enabled as set_autocast_enabled
    from .amp.grad_scaler import GradScaler as GradScaler
    from .backends import get_float32_matmul_precision as get_float32_matmul_precision
    from .backends import set_float32_matmul_precision as set_float32_matmul_precision
    from .tensor_engine import Tensor as Tensor
    from .tensor_engine import cat as cat
    from .tensor_engine import concatenate as concatenate
    from .tensor_engine import dtypes as _dtypes
    from .tensor_engine import maths as _maths
    from .tensor_engine import stack as stack
    from .tensor_engine import where as where
    from .tensor_engine.conversions import Size as Size
    from .tensor_engine.devices import device as device
    from .tensor_engine.devices import get_default_device as get_default_device
    from .tensor_engine.devices import set_default_device as set_default_device
    from .tensor_engine.dtypes import bfloat16 as bfloat16
    from .tensor_engine.dtypes import dtype as dtype
    from .tensor_engine.dtypes import finfo as finfo
    from .tensor_engine.dtypes import float16 as float16
    from .tensor_engine.dtypes import float32 as float32
    from .tensor_engine.dtypes import float64 as float64
    from .tensor_engine.dtypes import get_default_dtype as get_default_dtype
    from .tensor_engine.dtypes import iinfo as iinfo
    from .tensor_engine.dtypes import int8 as int8
    from .tensor_engine.dtypes import int16 as int16
    from .tensor_engine.dtypes import int32 as int32
    from .tensor_engine.dtypes import int64 as int64
    from .tensor_engine.dtypes import set_default_dtype as set_default_dtype
    from .tensor_engine.dtypes import uint8 as uint8
    from .tensor_engine.factories import arange as arange
    from .tensor_engine.factories import as_tensor as as_tensor
    from .tensor_engine.factories import bernoulli as bernoulli
    from .tensor_engine.factories import empty as empty
    from .tensor_engine.factories import empty_like as empty_like
    from .tensor_engine.factories import eye as eye
    from .tensor_engine.factories import from_numpy as from_numpy
    from .tensor_engine.factories import full as full
    from .tensor_engine.factories import full_like as full_like
    from .tensor_engine.factories import linspace as linspace
    from .tensor_engine.factories import multinomial as multinomial
    from .tensor_engine.factories import normal as normal
    from .tensor_engine.factories import ones as ones
    from .tensor_engine.factories import ones_like as ones_like
    from .tensor_engine.factories import rand as rand
    from .tensor_engine.factories import rand_like as rand_like
    from .tensor_engine.factories import randint as randint
    from .tensor_engine.factories import randint_like as randint_like
    from .tensor_engine.factories import randn as randn
    from .tensor_engine.factories import randn_like as randn_like
    from .tensor_engine.factories import randperm as randperm
    from .tensor_engine.factories import tensor as tensor
    from .tensor_engine.factories import zeros as zeros
    from .tensor_engine.factories import zeros_like as zeros_like
    from .tensor_engine.functions import einsum as einsum
    from .tensor_engine.generator import Generator as Generator
    from .tensor_engine.generator import default_generator as default_generator
    from .tensor_engine.generator import get_rng_state as get_rng_state
    from .tensor_engine.generator import initial_seed as initial_seed
    from .tensor_engine.generator import manual_seed as manual_seed
    from .tensor_engine.generator import seed as seed
    from .tensor_engine.generator import set_rng_state as set_rng_state
    from .tensor_engine.generator import use_lecture_rng as use_lecture_rng
    from .tensor_engine.legacy import BoolTensor as BoolTensor
    from .tensor_engine.legacy import ByteTensor as ByteTensor
    from .tensor_engine.legacy import CharTensor as CharTensor
    from .tensor_engine.legacy import DoubleTensor as DoubleTensor
    from .tensor_engine.legacy import FloatTensor as FloatTensor
    from .tensor_engine.legacy import HalfTensor as HalfTensor
    from .tensor_engine.legacy import IntTensor as IntTensor
    from .tensor_engine.legacy import LongTensor as LongTensor
    from .tensor_engine.legacy import ShortTensor as ShortTensor
    from .tensor_engine.maths import add as add
    from .tensor_engine.maths import allclose as allclose
    from .tensor_engine.maths import amax as amax
    from .tensor_engine.maths import amin as amin
    from .tensor_engine.maths import argmax as argmax
    from .tensor_engine.maths import argmin as argmin
    from .tensor_engine.maths import argsort as argsort
    from .tensor_engine.maths import bincount as bincount
    from .tensor_engine.maths import bmm as bmm
    from .tensor_engine.maths import chunk as chunk
    from .tensor_engine.maths import clamp as clamp
    from .tensor_engine.maths import cos as cos
    from .tensor_engine.maths import cumsum as cumsum
    from .tensor_engine.maths import div as div
    from .tensor_engine.maths import dot as dot
    from .tensor_engine.maths import equal as equal
    from .tensor_engine.maths import erf as erf
    from .tensor_engine.maths import exp as exp
    from .tensor_engine.maths import expm1 as expm1
    from .tensor_engine.maths import flatten as flatten
    from .tensor_engine.maths import flip as flip
    from .tensor_engine.maths import gather as gather
    from .tensor_engine.maths import histc as histc
    from .tensor_engine.maths import histogram as histogram
    from .tensor_engine.maths import is_floating_point as is_floating_point
    from .tensor_engine.maths import is_tensor as is_tensor
    from .tensor_engine.maths import isfinite as isfinite
    from .tensor_engine.maths import isinf as isinf
    from .tensor_engine.maths import isnan as isnan
    from .tensor_engine.maths import isneginf as isneginf
    from .tensor_engine.maths import isposinf as isposinf
    from .tensor_engine.maths import log as log
    from .tensor_engine.maths import log1p as log1p
    from .tensor_engine.maths import log2 as log2
    from .tensor_engine.maths import log10 as log10
    from .tensor_engine.maths import log_softmax as log_softmax
    from .tensor_engine.maths import logsumexp as logsumexp
    from .tensor_engine.maths import masked_fill as masked_fill
    from .tensor_engine.maths import matmul as matmul
    from .tensor_engine.maths import maximum as maximum
    from .tensor_engine.maths import mean as mean
    from .tensor_engine.maths import minimum as minimum
    from .tensor_engine.maths import mm as mm
    from .tensor_engine.maths import mul as mul
    from .tensor_engine.maths import nan_to_num as nan_to_num
    from .tensor_engine.maths import nanmean as nanmean
    from .tensor_engine.maths import nansum as nansum
    from .tensor_engine.maths import narrow as narrow
    from .tensor_engine.maths import neg as neg
    from .tensor_engine.maths import nonzero as nonzero
    from .tensor_engine.maths import norm as norm
    from .tensor_engine.maths import numel as numel
    from .tensor_engine.maths import permute as permute
    from .tensor_engine.maths import relu as relu
    from .tensor_engine.maths import reshape as reshape
    from .tensor_engine.maths import roll as roll
    from .tensor_engine.maths import scatter_add as scatter_add
    from .tensor_engine.maths import sigmoid as sigmoid
    from .tensor_engine.maths import sin as sin
    from .tensor_engine.maths import softmax as softmax
    from .tensor_engine.maths import sort as sort
    from .tensor_engine.maths import split as split
    from .tensor_engine.maths import sqrt as sqrt
    from .tensor_engine.maths import square as square
    from .tensor_engine.maths import squeeze as squeeze
    from .tensor_engine.maths import std as std
    from .tensor_engine.maths import sub as sub
    from .tensor_engine.maths import t as t
    from .tensor_engine.maths import tanh as tanh
    from .tensor_engine.maths import topk as topk
    from .tensor_engine.maths import transpose as transpose
    from .tensor_engine.maths import tril as tril
    from .tensor_engine.maths import triu as triu
    from .tensor_engine.maths import unbind as unbind
    from .tensor_engine.maths import unique as unique
    from .tensor_engine.maths import unsqueeze as unsqueeze
    from .tensor_engine.maths import var as var
    from .tensor_engine.printing import set_printoptions as set_printoptions
    from .tensor_engine.threads import get_num_interop_threads as get_num_interop_threads
    from .tensor_engine.threads import get_num_threads as get_num_threads
    from .tensor_engine.threads import set_num_interop_threads as set_num_interop_threads
    from .tensor_engine.threads import set_num_threads as set_num_threads

    abs = _maths.abs_
    all = _maths.all_
    any = _maths.any_
    max = _maths.max_
    min = _maths.min_
    pow = _maths.pow_
    sum = _maths.sum_
    clip = _maths.clamp
    concat = cat
    bool, half, float, double = _dtypes.bool_, _dtypes.float16, _dtypes.float32, _dtypes.float64
    short, int, long = _dtypes.int16, _dtypes.int32, _dtypes.int64
else:
    def __getattr__(name: str) -> object:
        """A Tensor-side name, loaded on first use; an error naming what chaingrad lacks
        (type checkers see the declarations above instead, and flag a name that is not
        there)."""
        if name in _TENSOR_NAMES:
            module, attr = _TENSOR_NAMES[name]
            value = getattr(torch_names.load_module(module, f"chaingrad.{name}"), attr)
            if not hasattr(builtins, name):  # keep builtins usable in this module
                globals()[name] = value
            return value
        if name in _SUBMODULES:
            # (which sets the attribute)
            return torch_names.load_module(f"chaingrad.{name}", f"chaingrad.{name}")
        raise torch_names.missing("chaingrad", name, torch_names.TORCH)  # torch's, or a typo


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
