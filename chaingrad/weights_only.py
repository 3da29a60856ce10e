"""What may a checkpoint's pickle name? torch's ``weights_only`` rule: an allow list.

A pickle is a little program: its ``GLOBAL`` instructions name any importable function
(``os.system``, say) and ``REDUCE`` calls it. ``torch.load(f)``, with its default
``weights_only=True``, runs such a program only if every global it names is on a list of
harmless ones: the functions that rebuild tensors, the storage types, ``torch.Size``,
``torch.device``, the dtypes, ``collections.OrderedDict``, ``collections.Counter``, and
``set``, ``complex``, ``bytearray`` and ``_codecs.encode`` (how protocol 2 writes them),
plus what the user adds with ``add_safe_globals``. Globals from ``os``, ``sys``, ``posix``
and ``nt`` are refused even when added. A file that names anything else is refused before
the global is looked up, so loading a file from the internet runs none of its code.

``Unpickler`` is Python's unpickler whose ``find_class`` (through which every global a
pickle names is looked up) consults that list; the caller (``torch_checkpoints``) gives the
list of torch's names, each mapped to chaingrad's object that stands for it.

``add_safe_globals``, ``safe_globals``, ``get_safe_globals`` and ``clear_safe_globals`` are
``torch.serialization``'s, and are ``chaingrad.serialization``'s (so
``torch.serialization.add_safe_globals`` runs unchanged under ``import chaingrad as torch``).

Example:
    >>> import collections
    >>> with safe_globals([collections.namedtuple]):
    ...     [f.__name__ for f in get_safe_globals()]
    ['namedtuple']
    >>> get_safe_globals()
    []
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO

from .errors import UnsafeGlobalError

__all__ = ["BLOCKED_MODULES", "PYTHON2_MODULES", "Unpickler", "add_safe_globals", "added",
           "clear_safe_globals", "full_name", "get_safe_globals", "refusal", "safe_globals"]

BLOCKED_MODULES = frozenset({"sys", "os", "posix", "nt"})
"""Modules whose globals are refused even when added to the safe globals, as torch's."""

PYTHON2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}
"""Python 2's names of modules, which protocol 2 writes (``__builtin__ set``)."""

SafeGlobal = Callable[..., Any] | tuple[Callable[..., Any], str]
"""A global to allow: the object (named by its ``__module__`` and ``__qualname__``), or
``(object, "module.name")`` for one saved under another name."""

_added: list[SafeGlobal] = []  # what add_safe_globals was given, in order


def add_safe_globals(safe_globals: list[SafeGlobal]) -> None:
    """Allow ``weights_only`` loads to name these globals (classes or functions of your own
    that you trust), as ``torch.serialization.add_safe_globals``.

    Args:
        safe_globals: Objects, or ``(object, "module.name")`` pairs for an object that a
            file names otherwise than by its ``__module__`` and ``__qualname__``.

    Raises:
        TypeError: An entry is neither, or a pair's name is not a string.

    Example:
        >>> import fractions
        >>> add_safe_globals([fractions.Fraction])
        >>> fractions.Fraction in get_safe_globals()
        True
        >>> clear_safe_globals()
    """
    for entry in safe_globals:
        full_name(entry)  # refuses a malformed entry before any is added
    _added.extend(entry for entry in safe_globals if entry not in _added)


def get_safe_globals() -> list[SafeGlobal]:
    """The globals that ``add_safe_globals`` (or an open ``safe_globals``) allowed.

    Example:
        >>> get_safe_globals()
        []
    """
    return list(_added)


def clear_safe_globals() -> None:
    """Forget every global that ``add_safe_globals`` allowed.

    Example:
        >>> add_safe_globals([complex]); clear_safe_globals(); get_safe_globals()
        []
    """
    _added.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list[SafeGlobal]) -> Iterator[None]:
    """Allow these globals inside a ``with`` block only, as
    ``torch.serialization.safe_globals``.

    Example:
        >>> import fractions
        >>> with safe_globals([fractions.Fraction]):
        ...     fractions.Fraction in get_safe_globals()
        True
        >>> fractions.Fraction in get_safe_globals()
        False
    """
    new = [entry for entry in safe_globals if entry not in _added]
    add_safe_globals(new)
    try:
        yield
    finally:
        for entry in new:
            if entry in _added:
                _added.remove(entry)


def added(name: str) -> Any:
    """The safe global that ``add_safe_globals`` allowed under ``name`` (``module.name``),
    or None (always for a name of a blocked module).

    Example:
        >>> import fractions
        >>> with safe_globals([fractions.Fraction]):
        ...     added("fractions.Fraction") is fractions.Fraction, added("os.system")
        (True, None)
    """
    if name.rpartition(".")[0] in BLOCKED_MODULES:
        return None
    for entry in _added:
        if full_name(entry) == name:
            return entry[0] if isinstance(entry, tuple) else entry
    return None


def full_name(entry: SafeGlobal) -> str:
    """The ``module.name`` under which a pickle names a safe global.

    Example:
        >>> import collections
        >>> full_name(collections.OrderedDict), full_name((complex, "my.Complex"))
        ('collections.OrderedDict', 'my.Complex')
    """
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError(f"add_safe_globals: expected (global, 'module.name'), got {entry!r}")
        return entry[1]
    module, name = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(f"add_safe_globals: expected a class or a function (or a pair "
                        f"(global, 'module.name')), got {entry!r}")
    return f"{module}.{name}"


def refusal(name: str) -> str:
    """The message that refuses a global outside the allow list: its name and how to
    allow it, as torch's (``torch.serialization`` is ``chaingrad.serialization`` under the
    import swap).

    Example:
        >>> print(refusal("fractions.Fraction").splitlines()[1][:72])
        If you trust this class or function, allow it with torch.serialization.a
    """
    module = name.rpartition(".")[0]
    if module in BLOCKED_MODULES:
        how = (f"Its module {module} is blocked: weights_only=True never loads a global of "
               f"{', '.join(sorted(BLOCKED_MODULES))}.")
    else:
        how = (f"If you trust this class or function, allow it with "
               f"torch.serialization.add_safe_globals([{name}]) or the "
               f"torch.serialization.safe_globals([{name}]) context manager "
               "(chaingrad.serialization's, under import chaingrad as torch).")
    return (f"Weights only load failed: the file names the global {name}, which is not "
            f"allowed by default.\n{how}\nOnly if you trust the file's source: "
            "torch.load(f, weights_only=False) loads it whole, and can run any code it holds.")


class Unpickler(pickle.Unpickler):
    """Python's unpickler, with every global a pickle names looked up first among torch's
    names (``allowed``, each mapped to chaingrad's object that stands for it); then, if
    ``weights_only``, among the safe globals and nowhere else; if not, imported as
    Python's unpickler imports it (which can run any code).

    Args:
        file: The pickle.
        allowed: ``{"module.name": object}``: torch's names and what they load as.
        lacking: ``{"module.name": what}``: names torch allows that chaingrad lacks.
        persistent_load: What a persistent id (torch's storages) loads as.
        weights_only: Refuse any global outside ``allowed`` and the safe globals.
        encoding: How Python 2 strings decode, as ``pickle.Unpickler``'s.

    Raises (from ``load``):
        UnsafeGlobalError: (a ``pickle.UnpicklingError``, as torch's) The pickle names a
            global outside the allow list (the message names it and how to allow it), or
            another persistent id than a storage.
        NotImplementedError: A global that torch allows and chaingrad lacks (a sparse or
            quantized tensor, a complex dtype): the message names it.
    """

    def __init__(self, file: BinaryIO, allowed: Mapping[str, Any], lacking: Mapping[str, str],
                 persistent_load: Callable[[Any], Any], *, weights_only: bool = True,
                 encoding: str = "utf-8") -> None:
        super().__init__(file, encoding=encoding)
        self.allowed, self.lacking, self.weights_only = allowed, lacking, weights_only
        self.load_storage = persistent_load

    def find_class(self, module: str, name: str) -> Any:
        module = PYTHON2_MODULES.get(module, module)
        wanted = f"{module}.{name}"
        if wanted in self.allowed:
            return self.allowed[wanted]
        if wanted in self.lacking:
            raise NotImplementedError(f"load: the file holds {wanted}, {self.lacking[wanted]}, "
                                      "which chaingrad does not have yet")
        if not self.weights_only:
            return super().find_class(module, name)
        found = added(wanted)
        if found is None:
            raise UnsafeGlobalError(refusal(wanted))
        return found

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and pid and pid[0] in ("storage", b"storage")):
            raise UnsafeGlobalError(f"load: only the persistent ids of storages are allowed, "
                                    f"got {pid!r:.80}")
        return self.load_storage(pid)
