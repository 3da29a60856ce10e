"""How a Module's hooks are kept and called, as ``torch.utils.hooks``: ``RemovableHandle``,
what registering a hook returns, which takes it off again; ``ModuleHooks``, a module's
hooks and the call that runs them around ``forward``; and ``BackwardHook``, which puts a
module's backward hooks on the gradients of its inputs and outputs.

A module's call with hooks is torch's: the forward pre-hooks see (and may replace) the
arguments, ``forward`` runs, the forward hooks see (and may replace) the output. For the
backward hooks, the tensors that go in and come out pass through one node each way (an
``autograd.Function`` that hands its values on unchanged): the node after the outputs
receives the gradients of the outputs (``grad_output``), which the backward pre-hooks may
replace, and the node before the inputs receives the gradients of the inputs
(``grad_input``), which the backward hooks see with ``grad_output`` and may replace.
Several tensors pass through one node as one flat tensor, so that their gradients arrive
together, as torch's.

Example:
    >>> import chaingrad
    >>> layer = chaingrad.nn.Linear(2, 1)
    >>> seen = []
    >>> handle = layer.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    >>> _ = layer(chaingrad.ones(3, 2))
    >>> handle.remove()
    >>> _ = layer(chaingrad.ones(3, 2))
    >>> seen
    [chaingrad.Size([3, 1])]
"""

from __future__ import annotations

import itertools
import math
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..autodiff import Node
from ..autograd import Function, FunctionCtx
from ..engine import Value
from ..gradmode import is_grad_enabled

__all__ = ["BackwardHook", "ModuleHooks", "RemovableHandle"]

Hook = Callable[..., Any]

NO_INPUT_GRADIENTS = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")
"""torch's warning when a module's backward hook is called though none of its inputs takes a
gradient (then with ``grad_input`` all None)."""


class RemovableHandle:
    """What registering a hook returns: ``remove()`` takes the hook off (a second call does
    nothing), and so does leaving a ``with`` block, as torch's.

    Attributes:
        id: The hook's key in the table it was put in.

    Example:
        >>> table = OrderedDict()
        >>> handle = RemovableHandle(table)
        >>> table[handle.id] = print
        >>> with handle:
        ...     len(table)
        1
        >>> len(table)
        0
    """

    next_id = itertools.count()
    """Every handle's id, in the order they were made."""

    def __init__(self, hooks_dict: OrderedDict[int, Hook], *,
                 extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle.next_id)
        extras = [] if extra_dict is None else extra_dict if isinstance(extra_dict, list) \
            else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(table) for table in extras)

    def remove(self) -> None:
        """Take the hook off (from its table and from the tables of its options)."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            table = ref()
            if table is not None and self.id in table:
                del table[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()


class ModuleHooks:
    """One module's hooks, each table in the order they run (torch's ``_forward_hooks``,
    ``_forward_pre_hooks``, ``_backward_hooks``, ``_backward_pre_hooks``), and the ids of
    those registered ``with_kwargs`` or ``always_call``."""

    def __init__(self) -> None:
        self.forward_pre: OrderedDict[int, Hook] = OrderedDict()
        self.forward: OrderedDict[int, Hook] = OrderedDict()
        self.backward_pre: OrderedDict[int, Hook] = OrderedDict()
        self.backward: OrderedDict[int, Hook] = OrderedDict()
        self.with_kwargs: OrderedDict[int, bool] = OrderedDict()
        self.always_called: OrderedDict[int, bool] = OrderedDict()

    def add(self, table: OrderedDict[int, Hook], hook: Hook, prepend: bool,
            with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
        """Put ``hook`` in ``table`` (first if ``prepend``, else last); its handle."""
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {type(hook).__name__}")
        options = [t for t, on in ((self.with_kwargs, with_kwargs),
                                   (self.always_called, always_call)) if on]
        handle = RemovableHandle(table, extra_dict=options)
        table[handle.id] = hook
        for option in options:
            option[handle.id] = True
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    def call(self, module: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        """``module.forward(*args, **kwargs)`` with the hooks around it, as torch's
        ``Module.__call__``."""
        for key, hook in list(self.forward_pre.items()):
            if key in self.with_kwargs:
                changed = hook(module, args, kwargs)
                if changed is not None:
                    if not (isinstance(changed, tuple) and len(changed) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {changed}.")
                    args, kwargs = changed
            else:
                changed = hook(module, args)
                if changed is not None:
                    args = changed if isinstance(changed, tuple) else (changed,)
        backward = BackwardHook(module, list(self.backward.values()),
                                list(self.backward_pre.values())) \
            if (self.backward or self.backward_pre) and is_grad_enabled() else None
        if backward is not None:
            args = backward.setup_input_hook(args)
        called: set[int] = set()
        result = None
        try:
            result = module.forward(*args, **kwargs)
            for key, hook in list(self.forward.items()):
                called.add(key)
                result = self._after(key, hook, module, args, kwargs, result)
        except Exception:
            for key, hook in list(self.forward.items()):  # those to call even so, once
                if key in self.always_called and key not in called:
                    self._after(key, hook, module, args, kwargs, result)
            raise
        if backward is not None:
            result = backward.setup_output_hook(result)
        return result

    def _after(self, key: int, hook: Hook, module: Any, args: tuple, kwargs: dict[str, Any],
               result: Any) -> Any:
        """One forward hook's call: the output, or what the hook put in its place."""
        changed = hook(module, args, kwargs, result) if key in self.with_kwargs \
            else hook(module, args, result)
        return result if changed is None else changed


def hooks_of(module: Any) -> ModuleHooks:
    """The module's hooks (an empty set made on first use, so that a module without hooks
    is called as fast as before)."""
    hooks = module.__dict__.get("_hooks")
    if hooks is None:
        hooks = module.__dict__["_hooks"] = ModuleHooks()
    return hooks


def _takes_grad(value: Any) -> bool:
    """Whether ``value`` is a Tensor (a graph node other than a Value) that takes a
    gradient."""
    return isinstance(value, Node) and not isinstance(value, Value) and \
        bool(getattr(value, "requires_grad", False))


class BackwardHookFunction(Function):
    """The node that a module's inputs or outputs pass through when it has backward
    hooks: its output is its inputs' values (one, or several flattened one after the
    other), and its backward hands the gradient, split back into one per input, to
    ``on_backward``, which returns the gradients to pass on (torch's node of the same
    name)."""

    @staticmethod
    def forward(ctx: FunctionCtx, *tensors: Any,  # type: ignore[override]
                on_backward: Callable[[tuple], tuple]) -> Any:
        ctx.shapes = [tuple(t.shape) for t in tensors]  # type: ignore[attr-defined]
        ctx.on_backward = on_backward  # type: ignore[attr-defined]
        if len(tensors) == 1:
            return tensors[0]
        dtypes = {t.dtype for t in tensors}
        if len(dtypes) > 1:
            raise NotImplementedError(f"a module's backward hook with inputs (or outputs) of "
                                      f"several dtypes {sorted(map(str, dtypes))} is not in "
                                      "chaingrad yet")
        flat = tensors[0].new_zeros(sum(t.numel() for t in tensors))
        start = 0
        for t in tensors:
            flat[start:start + t.numel()] = t.reshape(-1)
            start += t.numel()
        return flat

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        (grad,) = grad_outputs
        shapes = ctx.shapes  # type: ignore[attr-defined]
        if len(shapes) == 1:
            grads: tuple = (grad,)
        else:
            sizes = [math.prod(shape) for shape in shapes]
            starts = list(itertools.accumulate([0, *sizes]))
            grads = tuple(grad[a:a + n].reshape(shape)
                          for a, n, shape in zip(starts, sizes, shapes, strict=False))
        passed = ctx.on_backward(grads)  # type: ignore[attr-defined]
        return tuple(g if g is not None else original * 0
                     for g, original in zip(passed, grads, strict=True))


class BackwardHook:
    """One call's backward hooks (``register_full_backward_hook`` and
    ``register_full_backward_pre_hook``), as torch's ``BackwardHook``: made for each call
    of a module that has some, it puts a ``BackwardHookFunction`` node before the inputs
    that take a gradient and one after the outputs that do.

    ``grad_input`` holds one entry per positional argument of the call and ``grad_output``
    one per output tensor (None where there is no gradient); a hook returning a tuple of
    the same length replaces them.
    """

    def __init__(self, module: Any, user_hooks: list[Hook], user_pre_hooks: list[Hook]):
        self.module = module
        self.user_hooks, self.user_pre_hooks = user_hooks, user_pre_hooks
        self.n_inputs = 0
        self.input_positions: list[int] = []
        self.grad_outputs: tuple | None = None

    def setup_input_hook(self, args: tuple) -> tuple:
        """The arguments, those that take a gradient through the node of the inputs."""
        self.n_inputs = len(args)
        self.input_positions = [i for i, a in enumerate(args) if _takes_grad(a)]
        if not self.input_positions:
            return args
        passed = self._through([args[i] for i in self.input_positions], self._on_inputs)
        changed = list(args)
        for i, value in zip(self.input_positions, passed, strict=True):
            changed[i] = value
        return tuple(changed)

    def setup_output_hook(self, result: Any) -> Any:
        """The output (a tensor, or a tuple or list of them), through the node of the
        outputs."""
        several = isinstance(result, (tuple, list))
        outputs = list(result) if several else [result]
        positions = [i for i, out in enumerate(outputs) if _takes_grad(out)]
        if not positions:
            return result

        def on_outputs(grads: tuple) -> tuple:
            return self._on_outputs(len(outputs), positions, grads)

        for i, value in zip(positions, self._through([outputs[i] for i in positions],
                                                       on_outputs), strict=True):
            outputs[i] = value
        if not several:
            return outputs[0]
        named = isinstance(result, tuple) and type(result) is not tuple  # a namedtuple
        return type(result)(*outputs) if named else type(result)(outputs)

    def _through(self, tensors: list[Any], on_backward: Callable[[tuple], tuple]) -> list[Any]:
        """The tensors passed through one ``BackwardHookFunction`` node."""
        out = BackwardHookFunction.apply(*tensors, on_backward=on_backward)
        if len(tensors) == 1:
            return [out]
        pieces, start = [], 0
        for t in tensors:
            pieces.append(out[start:start + t.numel()].reshape(tuple(t.shape)))
            start += t.numel()
        return pieces

    def _on_outputs(self, count: int, positions: list[int], grads: tuple) -> tuple:
        """The outputs' gradients arrive: the backward pre-hooks see (and may replace)
        them; if no input takes a gradient, the backward hooks are called now, with None
        for every input."""
        full: tuple = tuple(grads[positions.index(i)] if i in positions else None
                            for i in range(count))
        for hook in self.user_pre_hooks:
            changed = hook(self.module, full)
            if changed is not None:
                changed = tuple(changed) if isinstance(changed, (tuple, list)) else (changed,)
                if len(changed) != count:
                    raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(changed)}, but expected {count}")
                full = changed
        self.grad_outputs = full
        if not self.input_positions:
            if self.user_hooks:
                warnings.warn(NO_INPUT_GRADIENTS, UserWarning, stacklevel=2)
            for hook in self.user_hooks:
                changed = hook(self.module, (None,) * self.n_inputs, full)
                if changed is not None and not (isinstance(changed, tuple)
                                                and all(g is None for g in changed)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(full[i] for i in positions)

    def _on_inputs(self, grads: tuple) -> tuple:
        """The inputs' gradients arrive: each backward hook sees them with the outputs'
        and may replace them."""
        full: tuple = tuple(grads[self.input_positions.index(i)]
                            if i in self.input_positions else None
                            for i in range(self.n_inputs))
        for hook in self.user_hooks:
            changed = hook(self.module, full, self.grad_outputs)
            if changed is not None:
                changed = tuple(changed) if isinstance(changed, (tuple, list)) else (changed,)
                if len(changed) != self.n_inputs:
                    raise RuntimeError(f"Backward hook returned an invalid number of "
                                       f"grad_input, got {len(changed)}, but expected "
                                       f"{self.n_inputs}")
                full = changed
        self.grad_outputs = None
        return tuple(full[i] for i in self.input_positions)
