"""What every optimizer shares (torch.optim.optimizer): the base class ``Optimizer`` and the
check of a hyperparameter.

An optimizer is torch.optim's: ``param_groups`` with torch's keys (change a group's ``lr``
between steps), ``add_param_group``, ``state`` keyed by parameter,
``zero_grad(set_to_none=True)``, ``step(closure)``, torch's printed form, and
``state_dict()`` / ``load_state_dict()`` in torch's layout (parameters numbered across the
groups, each entry a Tensor of torch's dtype: a state dict of torch's loads here, one of
chaingrad's into torch, and training goes on with the same numbers). A subclass
(``SGD`` in ``sgd.py``, ``Adam`` in ``adam.py``, ...) brings its hyperparameters' checks and
its update rule, a pure function of a parameter's data, its gradient and its state, written
as plain arithmetic, so that the same line of maths updates a Value (a float) and a Tensor
(a numpy array, updated in place so that views of it stay valid). ``optimizer.lr`` reads the
first group's rate and sets every group's (what chaingrad's schedules use).

``step()`` checks every gradient before it changes anything: a gradient of another shape
than its parameter, or not of real numbers, raises ValueError or TypeError, and a nan or inf
one ``NonFiniteGradError``, each naming the parameter; no parameter (and no optimizer state)
is touched.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from numbers import Real
from typing import Any

from ..engine import Value
from ..errors import NonFiniteGradError
from ..gradmode import enable_grad
from ..guards import is_finite, quiet_numpy

__all__ = ["Optimizer", "check_hyperparameter", "write_parameter"]


class Optimizer:
    """What every optimizer shares: ``param_groups``, ``state``, ``zero_grad()``, ``step()``.

    Args:
        params: Parameters (Values, e.g. ``model.parameters()``, or Tensors), or
            ``(name, parameter)`` pairs (``model.named_parameters()``: errors then name
            them, and each group has torch's ``param_names``), or dicts, one per parameter
            group, each with its ``'params'`` and any hyperparameters of its own. Nested
            lists of Values are flattened, and their Values named ``name[i, j]``.
        defaults: Each hyperparameter's value for a group that does not give its own.

    A subclass validates a group's hyperparameters in ``_check_group`` and writes its
    step with its pure update rule in ``_update(x, g, state, group) -> (new_x, new_state)``,
    which must not modify ``x``, ``g`` or ``state``: ``step()`` commits the results only
    once every parameter's update has been computed and checked.

    ``state[p]`` holds a parameter's state as the rule reads it: numpy arrays of the
    parameter's dtype (floats for a Value) and the step count as an int;
    ``state_dict()`` gives it in torch's layout.
    """

    # Every array in a parameter's state has the parameter's shape (LBFGS's does not).
    _state_has_parameter_shape = True

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]):
        self._name = type(self).__name__
        self.defaults = defaults
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)  # torch's
        self.param_groups: list[dict[str, Any]] = []
        self._names: dict[int, str | None] = {}
        if hasattr(params, "_prev") and not isinstance(params, Value):
            params = [params]  # one Tensor, as torch takes it
        if isinstance(params, (Value, str, dict)) or not isinstance(params, Iterable):
            raise TypeError(f"{self._name}: params must be an iterable of parameters (or of "
                            f"dicts, one per group), got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError(f"{self._name}: got an empty parameter list")
        if isinstance(groups[0], dict):
            for group in groups:
                self.add_param_group(group)
        else:
            self.add_param_group({"params": groups})

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with hyperparameters of its own (the defaults fill in
        the rest), as torch's: e.g. a layer fine-tuned at a lower ``lr``.

        Example:
            >>> from chaingrad.optim import SGD
            >>> a, b = Value(1.0), Value(2.0)
            >>> opt = SGD([a], lr=0.1)
            >>> opt.add_param_group({'params': [b], 'lr': 0.01})
            >>> [g['lr'] for g in opt.param_groups]
            [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"{self._name}: param_group must be a dict, got "
                            f"{type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError(f"{self._name}: a parameter group needs its 'params'")
        names, found = _collect(self._name, param_group["params"])
        if not found:
            raise ValueError(f"{self._name}: got an empty parameter list")
        group = dict(param_group, params=found)
        if all(n is not None for n in names):
            group["param_names"] = names
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self._check_group(group)
        known = set().union(*(map(id, g["params"]) for g in self.param_groups))
        if any(id(p) in known for p in found):
            raise ValueError("some parameters appear in more than one parameter group")
        for name, p in zip(names, found):
            self._names[id(p)] = name
        self.param_groups.append(group)

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state and hyperparameters in torch's layout, to save and resume:
        ``{'state': {0: {'step': tensor(3.), 'exp_avg': ..., ...}, ...},
        'param_groups': [{'lr': ..., ..., 'params': [0, 1, ...]}, ...]}``.

        Parameters are numbered 0, 1, ... across the groups, in order, as torch numbers
        them; ``state`` has an entry for each parameter that has state. For a Tensor
        parameter each array is a Tensor of the parameter's dtype and ``step`` a float32
        0-d Tensor (torch's); for a Value the state is numbers. The Tensors are copies: a
        later step does not change a state dict already taken.

        Example:
            >>> import chaingrad as torch
            >>> w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
            >>> opt = torch.optim.Adam([w], lr=0.1)
            >>> (w * w).sum().backward()
            >>> opt.step()
            >>> state = opt.state_dict()
            >>> state['state'][0]['step'], state['param_groups'][0]['params']
            (tensor(1.), [0])
            >>> sorted(state['state'][0])
            ['exp_avg', 'exp_avg_sq', 'step']
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, entries in self.state.items():
            if id(p) in index:
                state[index[id(p)]] = {key: _exported(key, value, p)
                                       for key, value in entries.items()}
            else:  # a key a loaded state dict had that is no parameter: kept, as torch's
                state[p] = entries
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from ``state_dict()``'s result, chaingrad's or torch's (its tensors as
        chaingrad Tensors, numpy arrays or torch's own): each group's hyperparameters
        become the saved ones, and each parameter's state the saved state, as numbers of
        the parameter's dtype (``step`` as a count). The state is copied: the dict can be
        changed afterwards without changing the optimizer.

        Raises:
            ValueError: The state dict has another number of parameter groups, a group
                with another number of parameters (torch's messages), or a parameter's
                state of another shape than the parameter.

        Example:
            >>> import chaingrad as torch
            >>> w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
            >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
            >>> (w * w).sum().backward()
            >>> opt.step()
            >>> again = torch.optim.SGD([w], lr=0.5)
            >>> again.load_state_dict(opt.state_dict())
            >>> again.param_groups[0]['lr'], again.state[w]['momentum_buffer']
            (0.1, array([2., 4.], dtype=float32))
        """
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            raise TypeError(f"{self._name}.load_state_dict: expected a dict with 'state' and "
                            f"'param_groups' (an optimizer's state_dict()), got "
                            f"{_short(state_dict)}")
        groups, saved_groups = self.param_groups, copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        parameter_of = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                                chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, saved in state_dict["state"].items():
            if key not in parameter_of:  # kept as it is, as torch keeps it
                state[key] = saved
                continue
            p = parameter_of[key]
            state[p] = {name: self._imported(name, value, p) for name, value in saved.items()}
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            for key, value in self.defaults.items():  # an older torch's groups lack some
                saved.setdefault(key, value)
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            for name, p in zip(saved.get("param_names", ()), group["params"]):
                self._names[id(p)] = name
        self.state, self.param_groups = state, saved_groups

    def _imported(self, key: str, value: Any, p: Any) -> Any:
        """One entry of a saved state, as ``state[p]`` holds it: a count for ``step``, an
        array of the parameter's dtype (a float for a Value) for a tensor."""
        if isinstance(value, dict):
            return {k: self._imported(k, v, p) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._imported("", v, p) for v in value)
        if not hasattr(value, "__array__"):  # a number, None, a string: as it is
            return value
        import numpy as np

        array = np.array(np.asarray(value))  # a copy; asarray, as torch's __array__ takes no copy=
        if key == "step":
            count = float(array)
            return int(count) if count.is_integer() else count
        if isinstance(p._value, Real):
            return float(array) if array.ndim == 0 else array.astype(np.float64)
        array = array.astype(p._value.dtype)
        if self._state_has_parameter_shape and array.shape != p._value.shape:
            raise ValueError(f"{self._name}.load_state_dict: the state {key!r} of parameter "
                             f"{self._label(p)} has shape {array.shape}, expected "
                             f"{p._value.shape} (the parameter's)")
        return array

    def _check_group(self, group: dict[str, Any]) -> None:
        """Refuse a group whose hyperparameters are not valid (torch's messages)."""
        check_hyperparameter(self._name, "learning rate", "lr", group["lr"])
        for flag in ("differentiable", "fused", "capturable"):
            if group.get(flag):
                raise NotImplementedError(f"{self._name}({flag}=True) is not in chaingrad yet")

    @property
    def lr(self) -> float:
        """The first group's learning rate; setting it sets every group's (and checks it:
        ``Invalid learning rate: -1.0``)."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        check_hyperparameter(self._name, "learning rate", "lr", value)
        for group in self.param_groups:
            group["lr"] = value

    @property
    def params(self) -> list[Any]:
        """Every parameter, group by group."""
        return [p for group in self.param_groups for p in group["params"]]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every gradient before the next ``backward()``: a Value's ``.grad`` to 0.0
        (micrograd's), a Tensor's to None (torch's default), or zeroed in place if
        ``set_to_none`` is False."""
        for p in self.params:
            if isinstance(p, Value) or isinstance(p.grad, Real):
                p.grad = 0.0
            elif set_to_none or p.grad is None:
                p.grad = None
            elif hasattr(p.grad, "_prev"):  # a Tensor gradient: detached, then zeroed
                grad = p.grad.detach() if p.grad._prev else p.grad
                grad._value[...] = 0
                p.grad = grad
            else:
                p.grad[...] = 0

    def step(self, closure: Any = None) -> Any:
        """Update every parameter that has a gradient, with the optimizer's rule; with a
        ``closure`` (which recomputes the loss and calls ``backward()``), call it first,
        with gradients on, and return its loss.

        Raises:
            NonFiniteGradError: A gradient (or the update it leads to) is nan or inf;
                nothing has been changed.

        Example:
            >>> from chaingrad.optim import SGD
            >>> x, y = Value(1.0), Value(2.0)
            >>> opt = SGD([x, y], lr=0.5)
            >>> (x * y).backward()   # x.grad = 2, y.grad = 1
            >>> opt.step()
            >>> x.data, y.data
            (0.0, 1.5)
            >>> y.grad = float("nan")
            >>> opt.step()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            chaingrad.errors.NonFiniteGradError: SGD.step: ... parameter 1 of 2 is nan; ...
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        updates, results = [], []
        with quiet_numpy(self.params):  # an overflow is reported below, not warned
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:  # a Tensor that took no part in the loss, as torch.optim
                        continue
                    if hasattr(g, "_prev"):  # a Tensor gradient, or a graph node
                        g = g._value
                    g = self._checked(p, g)
                    if not is_finite(g):
                        raise NonFiniteGradError(
                            f"{self._name}.step: the gradient of parameter {self._label(p)} "
                            f"is {_describe(g)}; no parameter was changed{self._hint(p)}")
                    updates.append((group, p, g))
            for group, p, g in updates:
                new_x, new_state = self._update(p._value, g, self.state.get(p, {}), group)
                if not is_finite(new_x):
                    raise NonFiniteGradError(
                        f"{self._name}.step: the update of parameter {self._label(p)} is not "
                        f"finite (is lr={group['lr']:g} too large?); no parameter was changed"
                        f"{self._hint(p)}", what="update")
                results.append((p, new_x, new_state))
        for p, new_x, new_state in results:
            write_parameter(p, new_x)
            if new_state or p in self.state:  # plain SGD keeps none, as torch's
                self.state[p] = new_state
        return loss

    def _checked(self, p: Any, g: Any) -> Any:
        """The gradient of ``p`` if it fits: a real number for a number, an array of real
        numbers of the parameter's shape (never broadcast) for an array; else a TypeError
        or ValueError naming the parameter."""
        if isinstance(p._value, Real):
            if isinstance(g, bool) or not isinstance(g, Real):
                raise TypeError(f"{self._where(p)} must be a real number like its data, got "
                                f"{type(g).__name__} {_short(g)}; no parameter was changed")
            return float(g)
        shape, kind = getattr(g, "shape", None), getattr(getattr(g, "dtype", None), "kind", "")
        if shape is None or not kind or kind not in "fiu":
            raise TypeError(f"{self._where(p)} must be an array of real numbers, got "
                            f"{getattr(g, 'dtype', type(g).__name__)}; no parameter was "
                            "changed")
        if shape != p._value.shape and tuple(shape) != tuple(p._value.shape):
            raise ValueError(f"{self._where(p)} has shape {tuple(shape)}, expected "
                             f"{tuple(p._value.shape)} (the parameter's; a gradient is never "
                             "broadcast); no parameter was changed")
        return g

    def _where(self, p: Any) -> str:
        return f"{self._name}.step: the gradient of parameter {self._label(p)}"

    def _update(self, x: Any, g: Any, state: dict[str, Any], group: dict[str, Any],
                ) -> tuple[Any, dict[str, Any]]:
        raise NotImplementedError(f"{self._name} must define _update(x, g, state, group)")

    def _label(self, p: Any) -> str:
        name = self._names.get(id(p))
        if name is not None:
            return name
        params = self.params
        index = next(i for i, q in enumerate(params) if q is p)
        return f"{index} of {len(params)}"

    def _hint(self, p: Any) -> str:
        """How to get names into the message, when the parameters came without them."""
        if self._names.get(id(p)) is not None:
            return ""
        return " (pass model.named_parameters() to the optimizer to see names)"

    def __repr__(self) -> str:
        """As torch prints an optimizer: each group's hyperparameters, sorted."""
        text = f"{self._name} ("
        for i, group in enumerate(self.param_groups):
            text += f"{chr(10) if i else ''}\nParameter Group {i}"
            for key in sorted(group):
                if key != "params":
                    text += f"\n    {key}: {group[key]}"
        return text + "\n)"


# ---- helpers ----


def check_hyperparameter(where: str, what: str, arg: str, value: Any,
                         ok: Callable[[float], bool] | None = None, needs: str = ">= 0",
                         ) -> float:
    """A hyperparameter, checked: ``value`` as a float if it is a finite real number and
    ``ok(value)`` holds (by default: ``value >= 0``); else an error in torch.optim's words.

    Args:
        where: Who checks (the optimizer's or schedule's name), for the message.
        what: What the value is, as torch's message calls it (``"learning rate"``).
        arg: The argument's name (``"lr"``).
        value: The value given.
        ok: The condition the value must meet, if not ``>= 0``.
        needs: That condition in words, for the message.

    Raises:
        TypeError: ``value`` is not a real number (a bool is not).
        ValueError: ``value`` is nan, infinite, or does not meet the condition.

    Example:
        >>> check_hyperparameter("SGD", "momentum value", "momentum", 0.9)
        0.9
        >>> check_hyperparameter("SGD", "learning rate", "lr", -1)
        Traceback (most recent call last):
        ...
        ValueError: SGD: Invalid learning rate: -1.0 (lr must be >= 0)
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{where}: {arg} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    value = float(value)
    if not (math.isfinite(value) and (value >= 0 if ok is None else ok(value))):
        raise ValueError(f"{where}: Invalid {what}: {value} ({arg} must be {needs})")
    return value


def _collect(where: str, params: Iterable[Any]) -> tuple[list[str | None], list[Any]]:
    """Flatten ``params`` (parameters or (name, parameter) pairs) to names and parameters."""
    if hasattr(params, "_prev") and not isinstance(params, Value):
        params = [params]  # one Tensor, as torch accepts
    if isinstance(params, (Value, str)) or not isinstance(params, Iterable):
        raise TypeError(f"{where}: params must be an iterable of parameters, "
                        f"got {type(params).__name__}")
    names: list[str | None] = []
    found: list[Any] = []
    for item in params:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            for suffix, p in _leaves(item[1]):
                names.append(item[0] + suffix)
                found.append(p)
        else:
            for _, p in _leaves(item):
                names.append(None)
                found.append(p)
    seen: set[int] = set()
    for i, p in enumerate(found):
        if not (hasattr(p, "_value") and hasattr(p, "grad")):
            raise TypeError(f"{where}: parameter {names[i] or i} must be a node with ._value "
                            f"and .grad (a Value or a Tensor), got {type(p).__name__}")
        if id(p) in seen:
            raise ValueError(f"{where}: parameter {names[i] or i} appears more than once")
        seen.add(id(p))
    return names, found


def _leaves(p: Any, index: tuple[int, ...] = ()) -> list[tuple[str, Any]]:
    """The parameters of a nested list, each with its index suffix such as ``'[3, 1]'``."""
    if isinstance(p, (list, tuple)):
        return [leaf for i, item in enumerate(p) for leaf in _leaves(item, index + (i,))]
    return [(f"[{', '.join(map(str, index))}]" if index else "", p)]


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(g: Any) -> str:
    if isinstance(g, (float, int)):
        return str(g)
    import numpy as np

    bad = int(np.size(g) - np.count_nonzero(np.isfinite(g)))
    return f"not finite ({bad} of {np.size(g)} entries are nan or inf)"


def _exported(key: str, value: Any, p: Any) -> Any:
    """One entry of ``state[p]`` as torch's state dict holds it: for a Tensor parameter an
    array as a Tensor, and ``step`` a float32 0-d Tensor; a number, or a Value's, as it is."""
    if isinstance(value, dict):
        return {k: _exported(k, v, p) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_exported("", v, p) for v in value)
    if isinstance(p._value, Real):
        return value
    if key == "step":
        return p.new_tensor(float(value), dtype="float32")
    if hasattr(value, "__array__") and hasattr(value, "dtype"):  # an array or numpy number
        return p.new_tensor(value, dtype=value.dtype)
    return value


def write_parameter(p: Any, new: Any) -> None:
    """Store an update: a float replaces a Value's data, an array is copied in place (so
    that views of a Tensor's numbers stay valid).

    Example:
        >>> x = Value(1.0)
        >>> write_parameter(x, 0.5)
        >>> x.data
        0.5
    """
    if isinstance(p._value, (float, int)):
        p._value = float(new)
    else:
        p._value[...] = new
        if hasattr(p, "_wrote"):  # a Tensor counts it: a graph made before refuses backward
            p._wrote()
