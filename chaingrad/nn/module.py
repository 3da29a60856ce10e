"""Module: the one base of every network, of Values (micrograd's) or of Tensors (PyTorch's).

A Module finds its parts as ``torch.nn.Module`` does: an attribute that is a Module is a
child, and an attribute that is a ``Parameter`` is a parameter, both in the order they were
set. ``named_parameters()``, ``state_dict()``, ``load_state_dict()``, ``zero_grad()``,
``train()``/``eval()``, ``children()``/``modules()`` and the printed form all walk those.
micrograd's classes (``Neuron``, ``Layer``, ``MLP``) keep their Values in lists and name
them themselves, by overriding ``parameters()`` and ``named_parameters()``.

``Parameter`` is a Tensor, and a Tensor needs numpy, which the scalar side must not: so this
module cannot import it. Instead ``Parameter`` inherits the empty class ``ParameterMark``
defined here, and a Module registers any attribute that carries the mark.

Example:
    >>> class Scale(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.inner = Module()
    ...     def forward(self, x):
    ...         return 2 * x
    >>> model = Scale()
    >>> model(3), [name for name, _ in model.named_children()]
    (6, ['inner'])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from ..engine import Value
from . import registry

# A named parameter: a Parameter, a Value, or a (nested) list of Values shaped like a tensor.
Nested = Any


class ParameterMark:
    """The mark that makes an attribute a Module's parameter (``chaingrad.nn.Parameter``
    inherits it; see the module docstring for why a mark and not the class)."""

    __slots__ = ()


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns, as torch's: the keys it missed and did not know."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


class Module:
    """A network, or a part of one: parameters, children, and ``forward``.

    Set a sub-module or a ``Parameter`` as an attribute and it is registered; call the
    module to run ``forward``. A subclass need not call ``super().__init__()`` (micrograd's
    never did). A micrograd-style subclass that defines only ``parameters()`` gets its
    parameters named by position (``'0'``, ``'1'``, ...).
    """

    training = True
    """Training mode (True) or evaluation mode (False); set by ``train()`` and ``eval()``."""

    def __setattr__(self, name: str, value: Any) -> None:
        """Refuse to replace a parameter or a child by something else (None is allowed), as
        torch does: a silently unregistered weight would stop training without a word."""
        old = self.__dict__.get(name)
        if value is not None:
            if isinstance(old, ParameterMark) and not isinstance(value, ParameterMark):
                raise TypeError(f"{type(self).__name__}: cannot assign "
                                f"{type(value).__name__} as parameter {name!r} "
                                f"(chaingrad.nn.Parameter or None expected)")
            if isinstance(old, Module) and not isinstance(value, Module):
                raise TypeError(f"{type(self).__name__}: cannot assign "
                                f"{type(value).__name__} as child module {name!r} "
                                f"(chaingrad.nn.Module or None expected)")
        object.__setattr__(self, name, value)

    # ---- calling ----

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """What calling the module computes; a subclass defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward(...)")

    # ---- children ----

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for each Module attribute, in the order they were set."""
        seen: set[int] = set()
        for name, value in vars(self).items():
            if isinstance(value, Module) and id(value) not in seen:
                seen.add(id(value))
                yield name, value

    def children(self) -> Iterator[Module]:
        """The direct sub-modules."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module (named ``prefix``) and every one below it,
        depth first, each once (walked with a stack: any depth of nesting is fine)."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            below = [(f"{name}.{child}" if name else child, m)
                     for child, m in module.named_children()]
            stack.extend(reversed(below))

    def modules(self) -> Iterator[Module]:
        """This module and every one below it."""
        for _, module in self.named_modules():
            yield module

    # ---- parameters ----

    def named_parameters(self) -> list[tuple[str, Nested]]:
        """``(name, parameter)`` pairs with PyTorch's names (``'0.weight'``, ``'fc.bias'``):
        each module's own parameters, then its children's; one shared by two modules is
        listed once, under its first name.

        A module that names its parameters itself (micrograd's classes name nested lists of
        Values, see ``Neuron``) is asked for them; a subclass that defines only
        ``parameters()`` is named by position.
        """
        if type(self).parameters is not Module.parameters:  # defined, and named_parameters not
            return [(str(i), p) for i, p in enumerate(self.parameters())]
        return self._walk_parameters(unique=True)

    def _state_items(self) -> list[tuple[str, Nested]]:
        """The ``(key, parameter)`` pairs of ``state_dict()``: every name of each one."""
        if _names_its_own(type(self)):
            return self.named_parameters()
        return self._walk_parameters(unique=False)

    def _walk_parameters(self, unique: bool) -> list[tuple[str, Nested]]:
        """The parameters of this module and those below, in PyTorch's order; with
        ``unique`` False a shared parameter (or module) is listed under each of its names,
        as ``state_dict()`` keys it. Walked with a stack: any depth of nesting is fine."""
        named, seen = [], set()
        stack: list[tuple[str, Module, frozenset[int]]] = [("", self, frozenset())]
        while stack:
            prefix, module, above = stack.pop()
            if id(module) in above or (unique and id(module) in seen):
                continue  # a module that contains itself, or one already walked
            seen.add(id(module))
            if module is not self and _names_its_own(type(module)):
                own, below = module.named_parameters(), []
            else:
                own = [(name, value) for name, value in vars(module).items()
                       if isinstance(value, ParameterMark)]
                below = [(name, value) for name, value in vars(module).items()
                         if isinstance(value, Module)]
            for name, p in own:
                if not unique or id(p) not in seen:
                    seen.add(id(p))
                    named.append((f"{prefix}.{name}" if prefix else name, p))
            path = above | {id(module)}
            stack.extend((f"{prefix}.{name}" if prefix else name, child, path)
                         for name, child in reversed(below))
        return named

    def parameters(self) -> list[Any]:
        """Every parameter, in ``named_parameters()``'s order (none for a bare Module); the
        Values of a micrograd module inside, one by one."""
        return [v for _, p in self.named_parameters() for v in _flatten(p)]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients before the next ``backward()``: a Value's ``.grad`` becomes
        0 (micrograd), a Tensor parameter's None (torch; zeroed in place, detached from any
        graph, if ``set_to_none`` is False)."""
        for p in self.parameters():
            zero_grad_of(p, set_to_none)

    def register_parameter(self, name: str, param: Any) -> None:
        """Add ``param`` (a ``Parameter``, or None) as parameter ``name``, as torch's."""
        _check_name("register_parameter", self, name, "parameter")
        if param is not None and not isinstance(param, ParameterMark):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (chaingrad.nn.Parameter or None required)")
        object.__setattr__(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add ``module`` (or None) as child ``name``, as torch's."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name("add_module", self, name, "module")
        object.__setattr__(self, name, module)

    register_module = add_module

    def apply(self, fn: Any) -> Module:
        """``fn(module)`` for every module below this one and then for this one (children
        first, as torch's); returns self.

        Example:
            >>> seen = []
            >>> _ = Module().apply(lambda m: seen.append(type(m).__name__))
            >>> seen
            ['Module']
        """
        order = [m for _, m in self.named_modules()]
        for module in reversed(order):  # a module after everything below it
            fn(module)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Whether the Tensor parameters take gradients (a Value always does); returns
        self."""
        for p in self.parameters():
            if not isinstance(p, Value):
                p.requires_grad = requires_grad
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """``to('cpu')``, ``to(device)``, ``to(dtype)`` or ``to(device, dtype)``: the CPU
        is the only device; a dtype converts the floating parameters in place (each stays
        the same object, as in torch). Returns self."""
        given = list(args) + [kwargs.pop(k) for k in ("device", "dtype") if k in kwargs]
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for arg in given:
            if arg is None:
                continue
            if isinstance(arg, str) or type(arg).__name__ == "device":
                if str(getattr(arg, "type", arg)) != "cpu":
                    raise NotImplementedError(f"Module.to({arg!r}): chaingrad has only the "
                                              "CPU; a device other than it is not in "
                                              "chaingrad yet")
                continue
            self._cast(arg)
        return self

    def cpu(self) -> Module:
        """The module itself: chaingrad computes on the CPU."""
        return self

    def float(self) -> Module:
        """Floating parameters converted to float32, in place; returns self."""
        return self._cast("float32")

    def double(self) -> Module:
        """Floating parameters converted to float64, in place; returns self."""
        return self._cast("float64")

    def _cast(self, dtype: Any) -> Module:
        import numpy as np

        try:
            target = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"Module.to: expected a device or a dtype, got {dtype!r}") from None
        if target.kind != "f":
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                            f"desired dtype={dtype}")
        for p in self.parameters():
            if not isinstance(p, Value) and p._value.dtype.kind == "f":
                p._value = p._value.astype(target)
                if hasattr(p.grad, "_prev"):  # a Tensor gradient: its numbers too
                    p.grad._value = p.grad._value.astype(target)
                elif p.grad is not None:
                    p.grad = p.grad.astype(target)
        return self

    def __getattr__(self, name: str) -> Any:
        """Only called for a missing attribute: torch's Module names say they are not here."""
        if name in _TORCH_MODULE_NAMES:
            raise AttributeError(f"chaingrad.nn.Module has no {name!r} yet")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # ---- modes ----

    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout on) for this module and all below it; returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"train: mode must be True or False, got {mode!r}")
        for module in self.modules():
            module.training = mode
        return self

    def eval(self) -> Module:
        """Evaluation mode (dropout off), as ``train(False)``; returns self."""
        return self.train(False)

    # ---- state ----

    def state_dict(self) -> dict[str, Any]:
        """``{name: numpy array}``: a copy of every named parameter's data, in its own
        dtype (float64 for Values), under PyTorch's names.

        Example:
            >>> import random; random.seed(0)
            >>> from chaingrad.nn import MLP
            >>> {k: v.shape for k, v in MLP(2, [3, 1]).state_dict().items()}
            {'0.weight': (3, 2), '0.bias': (3,), '2.weight': (1, 3), '2.bias': (1,)}
        """
        import numpy as np

        state = {}
        for name, p in self._state_items():
            if _is_scalar(p):
                state[name] = np.array([v._value for v in _flatten(p)],
                                       dtype=np.float64).reshape(_shape(p))
            else:
                state[name] = np.array(p._value, copy=True)
        return state

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copy ``state``'s numbers (numpy arrays, Tensors, torch tensors, lists) into the
        parameters, in place.

        Everything is checked before anything changes: a missing or unexpected key (if
        ``strict``), a shape that differs, a value that is not real numbers (complex,
        bool, text) or not finite raises ValueError naming each parameter, what it expects
        and what it got, and leaves the module as it was.

        Returns:
            The missing and unexpected keys (both empty when ``strict``), as torch does.

        Example:
            >>> import random; random.seed(0)
            >>> from chaingrad.nn import MLP
            >>> a, b = MLP(2, [3, 1]), MLP(2, [3, 1])
            >>> b.load_state_dict(a.state_dict())
            <All keys matched successfully>
            >>> [p.data for p in a.parameters()] == [p.data for p in b.parameters()]
            True
        """
        import numpy as np

        if not isinstance(state, Mapping):
            raise TypeError(f"load_state_dict: expected a mapping of name -> array, "
                            f"got {type(state).__name__}")
        own = dict(self._state_items())
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        problems = []
        if strict and missing:
            problems.append(f"missing keys {missing}")
        if strict and unexpected:
            problems.append(f"unexpected keys {unexpected}")
        arrays = {}
        for name, p in own.items():
            if name in state:
                array, problem = _as_numbers(name, state[name], p, np)
                if problem:
                    problems.append(problem)
                else:
                    arrays[name] = array
        if problems:
            raise ValueError(f"load_state_dict ({type(self).__name__}): "
                             + "; ".join(problems))
        for name, array in arrays.items():
            p = own[name]
            if _is_scalar(p):
                for v, x in zip(_flatten(p), array.ravel().tolist(), strict=True):
                    v._value = x
            else:
                p._value[...] = array  # in place: views of the data stay valid
        return IncompatibleKeys(missing, unexpected)

    # ---- description ----

    def architecture(self) -> dict[str, Any]:
        """The model's type and constructor arguments as JSON values: what
        ``chaingrad.save`` stores so that ``chaingrad.load`` can build it again. Only the
        types of ``chaingrad.nn.registry.LAYER_TYPES`` have one.

        Example:
            >>> from chaingrad.nn import MLP
            >>> MLP(2, [16, 16, 1]).architecture()
            {'type': 'MLP', 'nin': 2, 'nouts': [16, 16, 1], 'activation': 'relu'}
        """
        return registry.architecture(self)

    def extra_repr(self) -> str:
        """The constructor arguments to print between the parentheses (none by default)."""
        return ""

    def __repr__(self) -> str:
        """``Name(extra)``, or PyTorch's indented list of children ``(name): child``."""
        lines = self.extra_repr().split("\n") if self.extra_repr() else []
        children = [f"({name}): {_indent(repr(module))}" for name, module in
                    self.named_children()]
        if not children and len(lines) <= 1:
            return f"{type(self).__name__}({''.join(lines)})"
        body = "\n  ".join(lines + children)
        return f"{type(self).__name__}(\n  {body}\n)"


_TORCH_MODULE_NAMES = frozenset((
    "register_buffer", "buffers", "named_buffers", "register_forward_hook",
    "register_forward_pre_hook", "register_full_backward_hook", "register_backward_hook",
    "get_submodule", "get_parameter", "get_buffer", "half", "bfloat16", "share_memory",
    "to_empty", "ipu", "xpu", "mtia", "compile", "set_extra_state", "get_extra_state",
    "register_state_dict_pre_hook", "register_load_state_dict_post_hook", "type",
))


def zero_grad_of(p: Any, set_to_none: bool = True) -> None:
    """Reset one parameter's gradient: 0.0 for a Value (micrograd's), None for a Tensor,
    or (``set_to_none=False``) its gradient zeroed in place, detached from any graph."""
    if isinstance(p, Value):
        p.grad = 0.0
    elif set_to_none or p.grad is None:
        p.grad = None
    elif hasattr(p.grad, "_prev"):  # a Tensor gradient
        grad = p.grad.detach() if p.grad._prev else p.grad
        grad._value[...] = 0
        p.grad = grad
    else:
        p.grad[...] = 0


def _check_name(where: str, module: Module, name: Any, kind: str) -> None:
    """A child's or parameter's name as torch accepts it."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\", got: {name}")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    if name in vars(type(module)) or (name in vars(module) and not isinstance(
            vars(module)[name], (Module, ParameterMark, type(None)))):
        raise KeyError(f"attribute '{name}' already exists")


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")


def _names_its_own(cls: type) -> bool:
    """Whether a Module class lists its parameters itself (as micrograd's classes do)."""
    return cls.named_parameters is not Module.named_parameters or \
        cls.parameters is not Module.parameters


def _is_scalar(p: Nested) -> bool:
    """Whether a named parameter is micrograd's (a Value or a nested list of Values)."""
    return isinstance(p, (Value, list))


def _shape(p: Nested) -> tuple[int, ...]:
    """The shape of a named parameter: of its data, or of a nested list of Values."""
    if not _is_scalar(p):
        return tuple(p._value.shape)
    shape = []
    while isinstance(p, list):
        shape.append(len(p))
        if not p:
            break
        p = p[0]
    return tuple(shape)


def _flatten(p: Nested) -> list[Any]:
    """The leaves of a nested list, in row-major (C) order."""
    if not isinstance(p, list):
        return [p]
    return [v for item in p for v in _flatten(item)]


def _as_numbers(name: str, value: Any, p: Nested, np: Any) -> tuple[Any, str]:
    """``value`` as an array for parameter ``p`` (float64 for Values, else ``p``'s dtype),
    or the reason it cannot be one: ``(array, '')`` or ``(None, problem)``."""
    if hasattr(value, "detach"):  # a torch tensor or a chaingrad Tensor: its data
        value = value.detach()
    try:
        with np.errstate(all="ignore"):
            array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    except (TypeError, ValueError, RuntimeError) as exc:
        return None, f"{name} is not an array of numbers ({exc})"
    if array.dtype.kind not in "fiu":
        got = "text" if array.dtype.kind in "USO" and _has_text(array) else array.dtype.name
        return None, f"{name} expects real numbers (float or int), got {got}"
    shape = _shape(p)
    if array.shape != shape:
        return None, f"{name} has shape {array.shape}, expected {shape}"
    dtype = np.dtype(np.float64) if _is_scalar(p) else p._value.dtype
    with np.errstate(all="ignore"):
        array = array.astype(dtype)
    if not np.isfinite(array).all():
        return None, f"{name} holds non-finite values (nan or inf, or too large for {dtype})"
    return array, ""


def _has_text(array: Any) -> bool:
    return array.dtype.kind in "US" or any(isinstance(x, (str, bytes)) for x in array.flat)
