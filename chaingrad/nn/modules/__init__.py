"""torch.nn's modules, a file for each kind, as torch lays out ``torch/nn/modules/``.

``module.py`` holds ``Module``, the one base of every network, of Values (micrograd's) or
of Tensors. Each other file holds the Tensor modules of one kind (``activation.py``,
``linear.py``, ``conv.py``, ``pooling.py``, ``sparse.py``, ``normalization.py``,
``batchnorm.py``, ``dropout.py``, ``loss.py``, ``flatten.py``, ``container.py``,
``rnn.py``, ``transformer.py``), and its
``__all__`` names them: that is the one list of them. ``chaingrad.nn.Linear`` and
``chaingrad.nn.modules.Linear`` are ``chaingrad.nn.modules.linear.Linear``, as in torch, and
a new module is one class in the file of its kind, named in that file's ``__all__``.

Each layer has torch's name, constructor signature (argument order and defaults),
attributes, printed form and initial weights' distribution (``reset_parameters``, through
``nn.init``), and computes its output with ``chaingrad.nn.functional``. An option chaingrad
does not have (``Conv2d(dilation=2)``, ``MaxPool2d(ceil_mode=True)``, a device other than
the CPU) raises NotImplementedError when the layer is made, naming it. ``inplace=True`` is
accepted and computes out of place. Random numbers (initial weights, dropout masks) come
from the default generator, the same as torch's: after ``manual_seed(n)`` a layer starts
from the very weights torch's starts from. The types that save and load rebuild are listed
in ``chaingrad.nn.registry``.

The Tensor modules need numpy, which ``Module`` (and micrograd's ``MLP`` on it) must not:
so this package imports ``module.py`` only, and the files of ``KINDS`` when one of their
names is first asked for.

Example:
    >>> import chaingrad
    >>> from chaingrad.nn.modules import linear
    >>> _ = chaingrad.manual_seed(0)
    >>> layer = chaingrad.nn.Linear(4, 3)
    >>> type(layer) is linear.Linear, isinstance(layer, chaingrad.nn.modules.Module)
    (True, True)
    >>> "Conv2d" in tensor_modules() and "Linear" in chaingrad.nn.modules.__all__
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import torch_names
from .module import Module as Module

KINDS = ("activation", "batchnorm", "container", "conv", "dropout", "flatten", "linear",
         "loss", "normalization", "pooling", "rnn", "sparse", "transformer")
"""The files of Tensor modules, one for each kind: each one's ``__all__`` names its modules."""


def tensor_modules(wanted: str = __name__) -> dict[str, type[Module]]:
    """Every Tensor module, by name: those that the files of ``KINDS`` name in their
    ``__all__``, in that order (importing the files, which needs numpy: without it, an
    error saying that ``wanted`` needs it).

    Example:
        >>> tensor_modules()["Linear"].__module__
        'chaingrad.nn.modules.linear'
    """
    found: dict[str, type[Module]] = {}
    for kind in KINDS:
        file = torch_names.load_module(f"{__name__}.{kind}", wanted)
        found |= {name: getattr(file, name) for name in file.__all__}
    return found


if TYPE_CHECKING:
    # The same names, for type checkers and editors, which do not run __getattr__: `*`
    # brings each file's, as its __all__ lists them (chaingrad.nn declares them likewise).
    from .activation import *  # noqa: F403 - the names of its __all__
    from .batchnorm import *  # noqa: F403 - the names of its __all__
    from .container import *  # noqa: F403 - the names of its __all__
    from .conv import *  # noqa: F403 - the names of its __all__
    from .dropout import *  # noqa: F403 - the names of its __all__
    from .flatten import *  # noqa: F403 - the names of its __all__
    from .linear import *  # noqa: F403 - the names of its __all__
    from .loss import *  # noqa: F403 - the names of its __all__
    from .normalization import *  # noqa: F403 - the names of its __all__
    from .pooling import *  # noqa: F403 - the names of its __all__
    from .rnn import *  # noqa: F403 - the names of its __all__
    from .sparse import *  # noqa: F403 - the names of its __all__
    from .transformer import *  # noqa: F403 - the names of its __all__
else:
    def __getattr__(name: str) -> object:
        """A file of ``KINDS`` (``chaingrad.nn.modules.linear``), one of their modules, or
        ``__all__`` (``Module`` and theirs), loaded on first use."""
        if name in KINDS:
            return torch_names.load_module(f"{__name__}.{name}", f"{__name__}.{name}")
        if name == "__all__":
            return ["Module", *tensor_modules()]
        found = tensor_modules(f"{__name__}.{name}").get(name) if name[:1] != "_" else None
        if found is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return found


def __dir__() -> list[str]:
    """This package's names, the Tensor modules among them (when numpy is there)."""
    try:
        tensor = tensor_modules()
    except ModuleNotFoundError:  # without numpy: Module alone
        tensor = {}
    return sorted(set(globals()) | set(KINDS) | set(tensor))
