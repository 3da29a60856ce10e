"""Module: the one base of every network, of Values (micrograd's) or of Tensors (PyTorch's).

A Module finds its parts as ``torch.nn.Module`` does: an attribute that is a Module is a
child, an attribute that is a ``Parameter`` is a parameter, and a Tensor given to
``register_buffer`` is a buffer (state that is not trained, such as BatchNorm's running
mean), each in the order it was registered. ``named_parameters()``, ``named_buffers()``,
``state_dict()``, ``load_state_dict()``, ``zero_grad()``, ``train()``/``eval()``,
``children()``/``modules()``, ``apply()`` and the printed form all walk those.
micrograd's classes (``Neuron``, ``Layer``, ``MLP``) keep their Values in lists and name
them themselves, by overriding ``parameters()`` and ``named_parameters()``.

The parts live in the instance's ``__dict__``, as plain attributes: reading ``self.weight``
costs what reading any attribute costs. What torch keeps in its three dictionaries
(``_parameters``, ``_modules``, ``_buffers``) is here one record, ``_kinds``: each
registered name and its kind, so that a slot set to None stays a parameter's, a child's or
a buffer's slot (``layer.bias = None``, then only a Parameter or None may go there again),
as in torch.

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

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, ParamSpec, Protocol, TypeVar

from ... import anomaly
from ...autodiff import Node
from ...engine import Value
from ...errors import NoCudaError
from ...guards import all_finite
from ...utils.hooks import RemovableHandle, hooks_of
from .. import registry

# A named parameter: a Parameter, a Value, or a (nested) list of Values shaped like a tensor.
Nested = Any

# The kinds of registered attribute (``Module._kinds``): torch's _parameters, _modules, and
# _buffers with its _non_persistent_buffers_set.
PARAMETER, MODULE, BUFFER, NON_PERSISTENT = ("parameter", "module", "buffer",
                                             "non-persistent buffer")
BUFFERS = (BUFFER, NON_PERSISTENT)


class ParameterMark:
    """The mark that makes an attribute a Module's parameter (``chaingrad.nn.Parameter``
    inherits it; see the module docstring for why a mark and not the class)."""

    __slots__ = ()


Item = TypeVar("Item")


class GeneratorList(list[Item]):
    """What ``parameters()`` and ``named_parameters()`` return: a list, as micrograd's
    ``parameters()`` is (indexed, added to, measured with ``len``), that ``next()`` also
    walks, as it walks torch's generators: ``next(model.parameters())`` is the first
    parameter. A ``for`` loop or ``list()`` starts from the first each time, as on a list.

    Example:
        >>> items = GeneratorList(["w", "b"])
        >>> next(items), next(items), len(items), items + ["c"]
        ('w', 'b', 2, ['w', 'b', 'c'])
    """

    __slots__ = ("_taken",)

    def __next__(self) -> Item:
        taken = getattr(self, "_taken", 0)
        if taken >= len(self):
            raise StopIteration
        self._taken = taken + 1
        return self[taken]


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns, as torch's: the keys it missed and did not know."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


Args = ParamSpec("Args")
Result = TypeVar("Result")
Result_co = TypeVar("Result_co", covariant=True)


class HasForward(Protocol[Args, Result_co]):
    """A module as ``Module.__call__`` sees it: calling it is calling its ``forward``."""

    def forward(self, *args: Args.args, **kwargs: Args.kwargs) -> Result_co:
        ...


class Module:
    """A network, or a part of one: parameters, buffers, children, and ``forward``.

    Set a sub-module or a ``Parameter`` as an attribute and it is registered (a Tensor is
    registered as a buffer by ``register_buffer``); call the module to run ``forward``. A
    subclass need not call ``super().__init__()`` (micrograd's never did). A
    micrograd-style subclass that defines only ``parameters()`` gets its parameters named
    by position (``'0'``, ``'1'``, ...).
    """

    training = True
    """Training mode (True) or evaluation mode (False); set by ``train()`` and ``eval()``."""

    def __setattr__(self, name: str, value: Any) -> None:
        """Register a Module or a ``Parameter`` as torch does, and refuse to put anything
        else than None where a parameter is registered (a Parameter aside), than a Module or
        None where a child is, and than a Tensor or None where a buffer is: a silently
        unregistered weight would stop training without a word.

        A Module or Parameter set over an attribute of another kind (a plain one, a buffer,
        a child where a Parameter goes) is registered anew, after the others of its kind, as
        in torch."""
        kind, new = _registered_kind(self, name), _kind_of(value)
        # torch's order: a Parameter may go anywhere; a parameter's slot takes nothing else
        # but None; a Module may go anywhere else; a child's slot takes nothing else but None
        refused = value is not None and new != PARAMETER and (
            kind == PARAMETER or (kind == MODULE and new != MODULE))
        if refused:
            expected = "chaingrad.nn.Parameter" if kind == PARAMETER else "chaingrad.nn.Module"
            where = "parameter" if kind == PARAMETER else "child module"
            raise TypeError(f"{type(self).__name__}: cannot assign {type(value).__name__} as "
                            f"{where} {name!r} ({expected} or None expected)")
        if new is not None:
            if kind != new:  # registered anew: last of its kind, as in torch's dictionaries
                self.__dict__.pop(name, None)
                self.__dict__.get("_kinds", {}).pop(name, None)
            _kinds(self)[name] = new
        elif value is not None and kind in BUFFERS and not _is_tensor(value):
            raise TypeError(f"{type(self).__name__}: cannot assign {type(value).__name__} as "
                            f"buffer {name!r} (chaingrad.Tensor or None expected)")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        """Remove an attribute, and with it the registration of a parameter, a child or a
        buffer of that name."""
        object.__delattr__(self, name)
        self.__dict__.get("_kinds", {}).pop(name, None)

    # ---- calling ----

    def __call__(self: HasForward[Args, Result], *args: Args.args,
                 **kwargs: Args.kwargs) -> Result:
        """``forward(*args, **kwargs)``, which type checkers read for the arguments and the
        result: ``nn.Linear(3, 2)(x)`` is a Tensor. With hooks registered, they run around
        it, as torch's (``chaingrad.utils.hooks.ModuleHooks.call``)."""
        hooks = self.__dict__.get("_hooks")
        if hooks is None:
            return self.forward(*args, **kwargs)
        return hooks.call(self, args, kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """What calling the module computes; a subclass defines it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward(...)")

    # ---- hooks ----

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each ``forward``, as torch's: a result other
        than None replaces the positional arguments (a value that is not a tuple is the one
        argument). With ``with_kwargs``, ``hook(module, args, kwargs)``, returning None or
        ``(args, kwargs)``. ``prepend`` runs it before those already registered.

        Returns:
            A handle whose ``remove()`` takes the hook off.

        Example:
            >>> import chaingrad
            >>> layer = chaingrad.nn.Identity()
            >>> handle = layer.register_forward_pre_hook(lambda m, args: args[0] * 2)
            >>> layer(chaingrad.tensor([1.0])).tolist()
            [2.0]
        """
        hooks = hooks_of(self)
        return hooks.add(hooks.forward_pre, hook, prepend, with_kwargs=with_kwargs)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each ``forward``, as torch's: a result
        other than None replaces the output. With ``with_kwargs``,
        ``hook(module, args, kwargs, output)``; with ``always_call``, it is called even
        when ``forward`` raises (with the output None). ``prepend`` runs it before those
        already registered.

        Returns:
            A handle whose ``remove()`` takes the hook off.

        Example:
            >>> import chaingrad
            >>> layer = chaingrad.nn.Linear(3, 2)
            >>> shapes = []
            >>> handle = layer.register_forward_hook(lambda m, args, out: shapes.append(
            ...     (tuple(args[0].shape), tuple(out.shape))))
            >>> _ = layer(chaingrad.ones(4, 3))
            >>> shapes
            [((4, 3), (4, 2))]
        """
        hooks = hooks_of(self)
        return hooks.add(hooks.forward, hook, prepend, with_kwargs=with_kwargs,
                         always_call=always_call)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs
        are known in a backward pass, as torch's: ``grad_output`` is a tuple, one per
        output tensor; a tuple returned in its place replaces them.

        Returns:
            A handle whose ``remove()`` takes the hook off.
        """
        hooks = hooks_of(self)
        return hooks.add(hooks.backward_pre, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the
        module's inputs are known in a backward pass, as torch's: ``grad_input`` holds one
        per positional argument of the call (None for one that takes no gradient),
        ``grad_output`` one per output tensor; a tuple returned in place of ``grad_input``
        replaces it. If no input takes a gradient, the hook is called once the outputs'
        are known, with ``grad_input`` all None.

        Returns:
            A handle whose ``remove()`` takes the hook off.

        Example:
            >>> import chaingrad
            >>> layer = chaingrad.nn.Linear(3, 2)
            >>> handle = layer.register_full_backward_hook(
            ...     lambda m, grad_input, grad_output: (grad_input[0] * 0,))
            >>> x = chaingrad.ones(4, 3, requires_grad=True)
            >>> layer(x).sum().backward()
            >>> x.grad.abs().sum().item()
            0.0
        """
        hooks = hooks_of(self)
        return hooks.add(hooks.backward, hook, prepend)

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

    def named_modules(self, memo: set[Module] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module (named ``prefix``) and every one below it,
        depth first, as torch's: each once, unless ``remove_duplicate`` is False (then a
        module reached by two paths is listed under each). ``memo``, a set, holds the
        modules already listed (they are skipped, and those listed are added). Walked
        with a stack: any depth of nesting is fine, and a module that contains itself is
        not entered again."""
        memo = set() if memo is None else memo
        stack: list[tuple[str, Module, frozenset[int]]] = [(prefix, self, frozenset())]
        while stack:
            name, module, above = stack.pop()
            if module in memo or id(module) in above:
                continue
            if remove_duplicate:
                memo.add(module)
            yield name, module
            path = above | {id(module)}
            below = [(f"{name}.{child}" if name else child, m, path)
                     for child, m in module.named_children()]
            stack.extend(reversed(below))

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This module and every one below it (``named_modules``' order)."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def get_submodule(self, target: str) -> Module:
        """The module at ``target``, a dotted path of child names (``'blocks.0.ln'``; ``''``
        is this module), as torch's.

        Raises:
            AttributeError: A name on the path is not there, or is not a Module.

        Example:
            >>> outer = Module(); outer.inner = Module(); outer.inner.leaf = Module()
            >>> outer.get_submodule("inner.leaf") is outer.inner.leaf
            True
        """
        if target == "":
            return self
        module = self
        for name in target.split("."):
            if not hasattr(module, name):
                raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
            module = getattr(module, name)
            if not isinstance(module, Module):
                raise AttributeError(f"`{name}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Any:
        """The parameter at ``target`` (``'blocks.0.ln.weight'``), as torch's.

        Raises:
            AttributeError: The path is not there, or does not end at a Parameter.
        """
        module, name = self._owner(target)
        value = getattr(module, name)
        if not isinstance(value, ParameterMark):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return value

    def get_buffer(self, target: str) -> Any:
        """The buffer at ``target`` (``'bn.running_mean'``), as torch's.

        Raises:
            AttributeError: The path is not there, or does not end at a buffer.
        """
        module, name = self._owner(target)
        if module.__dict__.get("_kinds", {}).get(name) not in BUFFERS:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(module, name)

    def _owner(self, target: str) -> tuple[Module, str]:
        """The module that holds the last name of ``target``, and that name."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        return module, name

    # ---- parameters ----

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> GeneratorList[tuple[str, Any]]:
        """``(name, parameter)`` pairs with PyTorch's names (``'0.weight'``, ``'fc.bias'``):
        each module's own parameters, then its children's; one shared by two modules is
        listed once, under its first name (each time, if ``remove_duplicate`` is False).
        ``prefix`` starts every name; ``recurse=False`` lists this module's own only.

        A module that names its parameters itself (micrograd's classes name nested lists of
        Values, see ``Neuron``) is asked for them; a subclass that defines only
        ``parameters()`` is named by position.
        """
        if type(self).parameters is not Module.parameters:  # defined, and named_parameters not
            named = [(str(i), p) for i, p in enumerate(self.parameters())]
        else:
            named = self._walk(remove_duplicate, parameters=True, buffers=(), recurse=recurse)
        return GeneratorList(_prefixed(prefix, named))

    def _state_items(self) -> list[tuple[str, Nested]]:
        """The ``(key, tensor)`` pairs of ``state_dict()``: every name of each parameter and
        persistent buffer."""
        if _names_its_own(type(self)):
            return self.named_parameters()
        return self._walk(unique=False, parameters=True, buffers=(BUFFER,))

    def _walk(self, unique: bool, parameters: bool, buffers: tuple[str, ...],
              recurse: bool = True) -> list[tuple[str, Nested]]:
        """The parameters (if ``parameters``) and the buffers of the kinds ``buffers`` of
        this module and those below, in PyTorch's order: each module's own parameters, then
        its own buffers, then its children's, depth first. With ``unique`` False a shared
        tensor (or module) is listed under each of its names, as ``state_dict()`` keys it.
        Walked with a stack: any depth of nesting is fine."""
        named, seen = [], set()
        stack: list[tuple[str, Module, frozenset[int]]] = [("", self, frozenset())]
        while stack:
            prefix, module, above = stack.pop()
            if id(module) in above or (unique and id(module) in seen):
                continue  # a module that contains itself, or one already walked
            seen.add(id(module))
            if module is not self and _names_its_own(type(module)):
                own = module.named_parameters() if parameters else []
                below = []
            else:
                own = [(name, value) for name, value in vars(module).items()
                       if parameters and isinstance(value, ParameterMark)]
                kinds = module.__dict__.get("_kinds", {})
                own += [(name, value) for name, value in vars(module).items()
                        if value is not None and kinds.get(name) in buffers]
                below = [(name, value) for name, value in vars(module).items()
                         if recurse and isinstance(value, Module)]
            for name, tensor in own:
                if not unique or id(tensor) not in seen:
                    seen.add(id(tensor))
                    named.append((f"{prefix}.{name}" if prefix else name, tensor))
            path = above | {id(module)}
            stack.extend((f"{prefix}.{name}" if prefix else name, child, path)
                         for name, child in reversed(below))
        return named

    def parameters(self, recurse: bool = True) -> GeneratorList[Any]:
        """Every parameter, in ``named_parameters()``'s order (none for a bare Module); the
        Values of a micrograd module inside, one by one. ``recurse=False``: this module's
        own only. A list that ``next()`` walks too (``GeneratorList``)."""
        named = self.named_parameters() if recurse else self.named_parameters(recurse=False)
        return GeneratorList(v for _, p in named for v in _flatten(p))

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients before the next ``backward()``: a Value's ``.grad`` becomes
        0 (micrograd), a Tensor parameter's None (torch; zeroed in place, detached from any
        graph, if ``set_to_none`` is False)."""
        for p in self.parameters():
            zero_grad_of(p, set_to_none)

    def register_parameter(self, name: str, param: Any) -> None:
        """Add ``param`` (a ``Parameter``, or None) as parameter ``name``, as torch's."""
        _check_name(self, name, PARAMETER)
        if param is not None and not isinstance(param, ParameterMark):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (chaingrad.nn.Parameter or None required)")
        _kinds(self)[name] = PARAMETER
        object.__setattr__(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add ``module`` (or None) as child ``name``, as torch's."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self, name, MODULE)
        _kinds(self)[name] = MODULE
        object.__setattr__(self, name, module)

    register_module = add_module

    # ---- buffers ----

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        """Add ``tensor`` (a Tensor, or None) as buffer ``name``: state that is not trained
        (BatchNorm's running mean, a causal mask), reached as ``self.name``, listed by
        ``buffers()``, converted by ``to(dtype)`` and, if ``persistent``, kept in
        ``state_dict()``; as torch's.

        Example:
            >>> import numpy as np
            >>> from chaingrad import Tensor
            >>> m = Module()
            >>> m.register_buffer("mask", Tensor(np.ones(3)), persistent=False)
            >>> m.register_buffer("count", Tensor(np.zeros(1)))
            >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
            (['mask', 'count'], ['count'])
        """
        _check_name(self, name, BUFFER)
        if tensor is not None and not _is_tensor(tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (chaingrad.Tensor or None required)")
        _kinds(self)[name] = BUFFER if persistent else NON_PERSISTENT
        object.__setattr__(self, name, tensor)

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        """``(name, buffer)`` pairs with torch's names (``'bn.running_mean'``), persistent
        or not, in torch's order (each module's own, then its children's); a buffer of two
        modules once, under its first name (unless ``remove_duplicate`` is False)."""
        yield from _prefixed(prefix, self._walk(remove_duplicate, parameters=False,
                                                buffers=BUFFERS, recurse=recurse))

    def buffers(self, recurse: bool = True) -> Iterator[Any]:
        """Every buffer, in ``named_buffers()``' order."""
        for _, tensor in self.named_buffers(recurse=recurse):
            yield tensor

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """``fn(module)`` for every module below this one and then for this one, in torch's
        order: each child in turn, its whole subtree first (children before their parent);
        a module held by two parents is visited under each, as torch's. Returns self.

        Example:
            >>> outer = Module(); outer.a = Module(); outer.a.inner = Module(); outer.b = Module()
            >>> for name, m in outer.named_modules():
            ...     m.label = name or "outer"
            >>> seen = []
            >>> _ = outer.apply(lambda m: seen.append(m.label))
            >>> seen
            ['a.inner', 'a', 'b', 'outer']
        """
        # a stack of (module, its ancestors, whether its children are done): torch's
        # recursion, without its depth limit; a module that contains itself is not re-entered
        stack: list[tuple[Module, frozenset[int], bool]] = [(self, frozenset(), False)]
        while stack:
            module, above, done = stack.pop()
            if done:
                fn(module)
                continue
            stack.append((module, above, True))
            path = above | {id(module)}
            stack.extend((child, path, False) for child in reversed(list(module.children()))
                         if id(child) not in path)
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
        is the only device; a dtype converts the floating parameters and buffers in place
        (each stays the same object; an integer buffer, such as BatchNorm's
        ``num_batches_tracked``, keeps its dtype, as in torch). Returns self."""
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

    def cuda(self, device: Any = None) -> Module:
        """An error, as torch's CPU build: chaingrad computes on the CPU only (a
        ``NoCudaError``, the AssertionError "Torch not compiled with CUDA enabled")."""
        raise NoCudaError("Module.cuda: Torch not compiled with CUDA enabled (chaingrad "
                          "computes on the CPU only; chaingrad.cuda.is_available() is False)")

    def float(self) -> Module:
        """Floating parameters and buffers converted to float32, in place; returns self."""
        return self._cast("float32")

    def double(self) -> Module:
        """Floating parameters and buffers converted to float64, in place; returns self."""
        return self._cast("float64")

    def half(self) -> Module:
        """Floating parameters and buffers converted to float16, in place; returns self.

        Example:
            >>> import chaingrad as torch
            >>> torch.nn.Linear(2, 3).half().weight.dtype
            chaingrad.float16
        """
        return self._cast("float16")

    def bfloat16(self) -> Module:
        """Floating parameters and buffers converted to bfloat16, in place; returns self.
        Where chaingrad has no bfloat16 dtype (numpy has none of its own), a
        NotImplementedError that says so."""
        import numpy as np

        try:
            np.dtype("bfloat16")  # numpy knows it once the dtype's provider is loaded
        except TypeError:
            raise NotImplementedError("Module.bfloat16: chaingrad has no 'bfloat16' dtype yet; "
                                      "use half() (float16) or float() (float32)") from None
        return self._cast("bfloat16")

    def _cast(self, dtype: Any) -> Module:
        import numpy as np

        try:
            target = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"Module.to: expected a device or a dtype, got {dtype!r}") from None
        if not _floating(target):
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                            f"desired dtype={dtype}")
        for p in [*self.parameters(), *self.buffers()]:
            if not isinstance(p, Value) and _floating(p._value.dtype):
                p._value = p._value.astype(target)
                if hasattr(p.grad, "_prev"):  # a Tensor gradient: its numbers too
                    p.grad._value = p.grad._value.astype(target)
                elif p.grad is not None:
                    p.grad = p.grad.astype(target)
        return self

    def __getattr__(self, name: str) -> Any:
        """Only called for a missing attribute: torch's Module names say they are not here.
        (To type checkers it stands for what ``register_buffer`` and ``register_parameter``
        set by name, as torch's does.)"""
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
        """``{name: numpy array}``: a copy of the data of every named parameter and
        persistent buffer, in its own dtype (float64 for Values), under PyTorch's names and
        in its order (each module's parameters, then its buffers, then its children's).

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
        parameters and persistent buffers, in place.

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
        children = [f"({name}): {indent(repr(module))}" for name, module in
                    self.named_children()]
        if not children and len(lines) <= 1:
            return f"{type(self).__name__}({''.join(lines)})"
        body = "\n  ".join(lines + children)
        return f"{type(self).__name__}(\n  {body}\n)"


_TORCH_MODULE_NAMES = frozenset((
    "register_backward_hook",
    "half", "bfloat16", "share_memory",
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


def _check_name(module: Module, name: Any, kind: str) -> None:
    """A parameter's, child's or buffer's name as torch accepts it: a string without dots,
    not the name of another attribute (a method, a plain attribute, or a part of another
    kind); a part of the same kind may be replaced."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\", got: {name}")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    registered = _registered_kind(module, name)
    same = registered in BUFFERS if kind == BUFFER else registered == kind
    if not same and hasattr(module, name):
        raise KeyError(f"attribute '{name}' already exists")


def _kinds(module: Module) -> dict[str, str]:
    """The module's record of its registered names and their kinds (made on first use: a
    subclass need not call ``super().__init__()``)."""
    kinds = module.__dict__.get("_kinds")
    if kinds is None:
        kinds = module.__dict__["_kinds"] = {}
        anomaly.modules.add(module)  # for an AnomalyError to name its parameters
    return kinds


def _registered_kind(module: Module, name: str) -> str | None:
    """What ``name`` is registered as (a None slot included), else what its value makes it
    (for an attribute set past ``__setattr__``); None for a plain attribute."""
    return module.__dict__.get("_kinds", {}).get(name) or _kind_of(module.__dict__.get(name))


def _kind_of(value: Any) -> str | None:
    """PARAMETER for a Parameter, MODULE for a Module: what setting it registers."""
    if isinstance(value, ParameterMark):
        return PARAMETER
    return MODULE if isinstance(value, Module) else None


def _is_tensor(value: Any) -> bool:
    """Whether ``value`` is a chaingrad Tensor (a graph node that is not a Value; this
    module cannot import the class, which needs numpy)."""
    return isinstance(value, Node) and not isinstance(value, Value)


def _prefixed(prefix: str, named: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The pairs with ``prefix.`` before each name (none for an empty prefix)."""
    return [(f"{prefix}.{name}", v) for name, v in named] if prefix else named


def indent(text: str) -> str:
    r"""``text`` with every line but the first indented two spaces, as torch nests a repr.

    Example:
        >>> indent("ModuleList(\n  (0): Tanh()\n)")
        'ModuleList(\n    (0): Tanh()\n  )'
    """
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
    if not all_finite(array):
        return None, f"{name} holds non-finite values (nan or inf, or too large for {dtype})"
    return array, ""


def _has_text(array: Any) -> bool:
    return array.dtype.kind in "US" or any(isinstance(x, (str, bytes)) for x in array.flat)


def _floating(dtype: Any) -> bool:
    """Whether a numpy dtype is a floating one: float16, 32, 64, or bfloat16 (ml_dtypes',
    of numpy's kind 'V')."""
    return dtype.kind == "f" or dtype.name == "bfloat16"
