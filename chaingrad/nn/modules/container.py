"""The containers, as torch.nn.modules.container: ``Sequential`` and ``ModuleList`` name
their children '0', '1', ... (a Sequential also as an OrderedDict names them),
``ModuleDict`` by their keys, so that ``named_parameters()`` gives PyTorch's names
('0.weight', 'blocks.2.bias', ...); ``ParameterList`` and ``ParameterDict`` hold
parameters the same ways.

Example:
    >>> import chaingrad
    >>> from chaingrad.nn import Linear, ReLU
    >>> _ = chaingrad.manual_seed(0)
    >>> model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3))
    >>> [name for name, _ in model.named_parameters()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> model(chaingrad.ones(5, 4)).shape
    chaingrad.Size([5, 3])
    >>> model
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
      (2): Linear(in_features=8, out_features=3, bias=True)
    )
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import numpy as np

from ...tensor_engine.tensor import Tensor
from ..parameter import Parameter
from .module import Module, indent

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


class _Numbered(Module):
    """Children kept in order, named '0', '1', ... (renumbered when one is inserted or
    removed): what ``Sequential`` and ``ModuleList`` share. Its children are its Module
    attributes, in the order they were set."""

    def __len__(self) -> int:
        return len(self._named_layers())

    def __iter__(self) -> Iterator[Module]:
        """The layers in order, a layer given twice twice (``children()`` lists it once)."""
        return iter(self._layers())

    def append(self, module: Module) -> Any:
        """Add ``module`` at the end (named ``str(len(self))``); returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.append: expected a module, got "
                            f"{type(module).__name__}")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Any:
        """``append`` each module of ``modules`` in turn; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"{type(self).__name__}.extend should be called with an "
                            f"iterable, but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Any:
        """Put ``module`` at ``index`` (-len .. len), the layers after it moving up
        (renumbered); returns self."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(self).__name__}.insert: expected a module, got "
                            f"{type(module).__name__}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"{type(self).__name__}.insert: index {index} is out of range "
                             f"for {n} layers")
        layers = self._layers()
        layers.insert(index, module)  # a negative index counts from the end, as torch's
        self._renumber(layers)
        return self

    def pop(self, index: int | slice) -> Any:
        """Remove layer ``index`` (or a slice of them) and return it; the others are
        renumbered."""
        popped = self[index]
        del self[index]
        return popped

    def __setitem__(self, i: int, module: Module) -> None:
        """Replace layer ``i``, keeping its name."""
        setattr(self, self._named_layers()[self._position(i)][0], module)

    def __delitem__(self, i: int | slice) -> None:
        """Remove layer ``i`` (or a slice of them); the others are renumbered, as torch
        does."""
        named = self._named_layers()
        gone = named[i] if isinstance(i, slice) else [named[self._position(i)]]
        for name, _ in gone:
            delattr(self, name)
        self._renumber(self._layers())

    def _position(self, i: Any) -> int:
        return _index(i, len(self), type(self).__name__)

    def _renumber(self, layers: list[Module]) -> None:
        for name, _ in self._named_layers():
            delattr(self, name)
        for k, module in enumerate(layers):
            setattr(self, str(k), module)

    def _layers(self) -> list[Module]:
        return [m for _, m in self._named_layers()]

    def _named_layers(self) -> list[tuple[str, Module]]:
        return [(name, m) for name, m in vars(self).items() if isinstance(m, Module)]


def _index(i: Any, n: int, where: str) -> int:
    """Index ``i`` of a container of ``n`` (negative counts from the end) as a position."""
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"{where}: indices must be integers or slices, got "
                        f"{type(i).__name__}")
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range")
    return int(i) % n


class Sequential(_Numbered):
    """Modules applied in order; child i is named str(i), or as the keys of an OrderedDict
    name them, as in torch.nn.Sequential.

    Example:
        >>> from chaingrad.nn import Linear, ReLU, Tanh
        >>> model = Sequential(Linear(2, 4), Tanh(), Linear(4, 1))
        >>> len(model), type(model[1]).__name__, len(model[:2])
        (3, 'Tanh', 2)
        >>> Sequential(OrderedDict(fc=Linear(2, 2), act=ReLU())).act
        ReLU()
    """

    def __init__(self, *args: Any):
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
            return
        for i, m in enumerate(args):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential: argument {i} must be a module, got "
                                f"{type(m).__name__}")
            setattr(self, str(i), m)

    def forward(self, input: Any) -> Any:  # noqa: A002
        for module in self:
            input = module(input)
        return input

    def __getitem__(self, i: int | slice) -> Module:
        """Layer ``i`` (negative counts from the end), or a Sequential of a slice whose
        layers keep their names, as in torch."""
        if isinstance(i, slice):
            return Sequential(OrderedDict(self._named_layers()[i]))
        return self._named_layers()[self._position(i)][1]


class ModuleList(_Numbered):
    """Modules held in a list, registered as children '0', '1', ... (so that
    ``parameters()``, ``state_dict()``, ``to()`` and ``apply()`` reach them), as
    torch.nn.ModuleList: indexed, sliced, iterated, ``append``, ``extend``, ``insert``,
    ``pop``, ``+`` and ``+=``. It has no ``forward``: the module that holds it calls its
    layers.

    Example:
        >>> import chaingrad
        >>> from chaingrad.nn import Linear, ReLU
        >>> _ = chaingrad.manual_seed(0)
        >>> blocks = ModuleList([Linear(4, 4) for _ in range(3)])
        >>> blocks.append(ReLU())
        ModuleList(
          (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)
          (3): ReLU()
        )
        >>> len(blocks), [name for name, _ in blocks.named_parameters()][:2]
        (4, ['0.weight', '0.bias'])
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, i: int | slice) -> Any:
        """Layer ``i``, or a ModuleList of a slice (numbered from 0 again, as torch's)."""
        if isinstance(i, slice):
            return ModuleList(self._layers()[i])
        return self._named_layers()[self._position(i)][1]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        """A new ModuleList of this one's layers, then ``other``'s."""
        return ModuleList(chain(self, other))

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` at ``index``, the layers after it moving up (renumbered)."""
        super().insert(index, module)

    def __repr__(self) -> str:
        """torch's form: one line per layer, a run of layers that print alike as one
        (``(0-2): 3 x Linear(...)``)."""
        runs: list[list[Any]] = []  # [first, last, text]
        for i, layer in enumerate(self):
            text = repr(layer)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        if not runs:
            return "ModuleList()"
        lines = [indent(f"({a}): {text}" if a == b else f"({a}-{b}): {b - a + 1} x {text}")
                 for a, b, text in runs]
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """Modules held in a dictionary, each registered as a child under its key (so that
    ``parameters()`` names them ``key.weight``, ...), as torch.nn.ModuleDict: ordered by
    insertion, indexed by key, with ``keys``, ``items``, ``values``, ``update``, ``pop``,
    ``clear``, ``in`` and ``len``. A key must be a string without dots that is not the
    name of one of its attributes (``'keys'``, ``'training'``), as in torch. It has no
    ``forward``.

    Example:
        >>> from chaingrad.nn import Linear, ReLU
        >>> heads = ModuleDict({"act": ReLU(), "out": Linear(2, 1)})
        >>> list(heads), [name for name, _ in heads.named_parameters()]
        (['act', 'out'], ['out.weight', 'out.bias'])
    """

    def __init__(self, modules: Any = None):
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        value = vars(self).get(key) if isinstance(key, str) else None
        if not isinstance(value, Module):
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        self[key]  # a KeyError for a key that is not there
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._modules_by_key())

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules_by_key())

    def __contains__(self, key: object) -> bool:
        return key in self._modules_by_key()

    def keys(self) -> Any:
        """The keys, in order."""
        return self._modules_by_key().keys()

    def items(self) -> Any:
        """``(key, module)`` pairs, in order."""
        return self._modules_by_key().items()

    def values(self) -> Any:
        """The modules, in order."""
        return self._modules_by_key().values()

    def clear(self) -> None:
        """Remove every module."""
        for key in list(self):
            del self[key]

    def pop(self, key: str) -> Module:
        """Remove ``key``'s module and return it."""
        module = self[key]
        del self[key]
        return module

    def update(self, modules: Any) -> None:
        """Add (or replace) the modules of a mapping, in its order, or of an iterable of
        ``(key, module)`` pairs, as torch's."""
        for key, module in _pairs("ModuleDict.update", modules):
            self[key] = module

    def _modules_by_key(self) -> dict[str, Module]:
        return {name: m for name, m in vars(self).items() if isinstance(m, Module)}


def _pairs(where: str, given: Any, sort: bool = False) -> list[tuple[Any, Any]]:
    """The ``(key, value)`` pairs of a mapping (its keys sorted if ``sort`` and it is a
    plain dict, as torch's ParameterDict sorts them), of a ModuleDict or ParameterDict, or
    of an iterable of pairs; a TypeError or ValueError naming ``where`` otherwise."""
    if not isinstance(given, Iterable):
        raise TypeError(f"{where} should be called with an iterable of key/value pairs, "
                        f"but got {type(given).__name__}")
    if isinstance(given, (Mapping, ModuleDict, ParameterDict)):
        pairs = list(given.items())
        plain = isinstance(given, Mapping) and not isinstance(given, OrderedDict)
        return sorted(pairs) if sort and plain else pairs
    pairs = []
    for j, pair in enumerate(given):
        if not isinstance(pair, Iterable) or isinstance(pair, (str, bytes)):
            raise TypeError(f"{where}: sequence element #{j} should be a (key, value) "
                            f"pair; is {type(pair).__name__}")
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(f"{where}: sequence element #{j} has length {len(pair)}; 2 is "
                             "required")
        pairs.append(pair)
    return pairs


class ParameterList(Module):
    """Parameters held in a list, registered as '0', '1', ..., as torch.nn.ParameterList:
    a Tensor put in it becomes a ``Parameter`` (other objects are kept as they are);
    indexed, sliced, iterated, ``append``, ``extend``, ``+=``. It cannot be called.

    Example:
        >>> scales = ParameterList([Tensor(np.ones(2)), Parameter(np.zeros(3))])
        >>> [name for name, _ in scales.named_parameters()], type(scales[0]).__name__
        (['0', '1'], 'Parameter')
    """

    def __init__(self, values: Iterable[Any] | None = None):
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return ParameterList([self[k] for k in range(*i.indices(len(self)))])
        return getattr(self, str(_index(i, len(self), "ParameterList")))

    def __setitem__(self, i: int, value: Any) -> None:
        """Put ``value`` at ``i`` (a Tensor made a ``Parameter``, sharing its data)."""
        setattr(self, str(_index(i, len(self), "ParameterList")), _as_parameter(value))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end; returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """``append`` each of ``values`` (an iterable, not a Tensor); returns self."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but "
                            f"got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        """A line per entry: ``(0): Parameter containing: [chaingrad.float32 of size 2x3]``."""
        return "\n".join(f"  ({i}): {_described(p, 'dtype')}" for i, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Parameters held in a dictionary, each registered under its key, as
    torch.nn.ParameterDict: a Tensor put in it becomes a ``Parameter``; ordered by
    insertion (``update`` with a plain dict adds its keys sorted, as torch's); ``keys``,
    ``items``, ``values``, ``get``, ``pop``, ``popitem``, ``setdefault``, ``copy``,
    ``clear``, ``|``. It cannot be called.

    Example:
        >>> table = ParameterDict({"scale": Tensor(np.ones(2)), "bias": Tensor(np.zeros(2))})
        >>> list(table), [name for name, _ in table.named_parameters()]
        (['bias', 'scale'], ['bias', 'scale'])
    """

    def __init__(self, parameters: Any = None):
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        """Put ``value`` under ``key`` (a Tensor made a ``Parameter``, sharing its data)."""
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is "
                            f"not a string (type is '{type(key).__name__}')")
        setattr(self, key, _as_parameter(value))
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        self[key]  # a KeyError for a key that is not there
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Any:
        """The keys, in order."""
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        """``(key, parameter)`` pairs, in order."""
        return ((k, self[k]) for k in list(self._keys))

    def values(self) -> Iterator[Any]:
        """The parameters, in order."""
        return (self[k] for k in list(self._keys))

    def get(self, key: str, default: Any = None) -> Any:
        """``key``'s parameter, or ``default``."""
        return self[key] if key in self else default  # noqa: SIM401 - this is get

    def pop(self, key: str) -> Any:
        """Remove ``key``'s parameter and return it."""
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        """Remove the last ``(key, parameter)`` pair added and return it."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``key``'s parameter, after putting ``default`` there if the key is new."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every parameter."""
        for key in list(self._keys):
            del self[key]

    def copy(self) -> ParameterDict:
        """A new ParameterDict of the same parameters (the same objects), in order."""
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict of ``keys``, each holding ``default``."""
        return ParameterDict([(k, default) for k in keys])

    def update(self, parameters: Any) -> None:
        """Add (or replace) the parameters of a mapping (a plain dict's keys sorted, as
        torch's), of a ParameterDict or OrderedDict in order, or of ``(key, value)``
        pairs."""
        for key, value in _pairs("ParameterDict.update", parameters, sort=True):
            self[key] = value

    def __or__(self, other: ParameterDict) -> ParameterDict:
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        merged = other.copy()
        merged.update(self)
        return merged

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        """A line per entry: ``(w): Parameter containing: [chaingrad.FloatTensor of size 2]``."""
        return "\n".join(f"  ({k}): {_described(p, 'type')}" for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")


def _as_parameter(value: Any) -> Any:
    """A Tensor that is not a Parameter as one (sharing its data), as torch's parameter
    containers store it; anything else as it is."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _described(value: Any, naming: str) -> str:
    """A parameter container's line for ``value``, as torch prints it: its type named by
    its dtype (ParameterList's ``naming='dtype'``) or as ``x.type()`` (ParameterDict's)."""
    if not isinstance(value, Tensor):
        return f"Object of type: {type(value).__name__}"
    kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
    size = "x".join(str(n) for n in value.shape)
    type_name = value.dtype if naming == "dtype" else value.type()
    return f"{kind} containing: [{type_name} of size {size}]"
