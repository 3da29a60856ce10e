"""Keep a model or a checkpoint: ``save`` and ``load`` as torch's, in torch's file format or
as safetensors; ``to_torch`` to export a model to PyTorch.

Two formats, chosen by the path when saving and recognised by the content when loading:

- **torch's** (any path but ``*.safetensors``, and any file object): the zip archive that
  ``torch.save`` writes (``chaingrad.torch_checkpoints`` says what is in it). It keeps what
  a pickle keeps, so nanoGPT's ``torch.save({'model': model.state_dict(), 'optimizer':
  optimizer.state_dict(), 'iter_num': iter_num, ...}, path)`` works, and PyTorch 2.13's
  ``torch.load(path)`` reads the file with its default ``weights_only=True``: a checkpoint
  survives changing the imports back. ``load`` reads torch's files without torch; with
  ``weights_only=True`` (the default) it refuses any global outside torch's allow list
  (``chaingrad.weights_only``), and ``add_safe_globals``, ``safe_globals``,
  ``get_safe_globals`` and ``clear_safe_globals`` are torch.serialization's.
- **safetensors** (a path ending in ``.safetensors``; ``save_safetensors`` for any path):
  weights only, a file that cannot run code when loaded. What is kept: a model of the types
  that ``chaingrad.nn.registry`` lists (the scalar ``MLP``, or the Tensor layers: a
  ``Sequential``, ``ModuleList`` or ``ModuleDict`` of ``Linear``, ``Conv2d``, ``MaxPool2d``,
  ``Embedding``, ``LayerNorm``, ``BatchNorm1d``, ``BatchNorm2d``, ``Flatten``, the
  activations, ``Dropout``, ``Identity``), or a state dict. One array per entry of the
  state dict, a float32 one per parameter and floating buffer and an int64 one per integer
  buffer (BatchNorm's ``num_batches_tracked``), named as PyTorch names them (``0.weight``,
  ``1.running_mean``, ...), so that PyTorch reads the weights directly, and two metadata
  keys: ``chaingrad``, the architecture as JSON (the layer types and their constructor
  arguments), so that ``load`` can rebuild the model; and ``chaingrad.sha256``, the SHA-256
  of the whole file as written with that value set to 64 zeros. The checksum so covers
  every byte, the architecture included: ``load`` refuses a file with chaingrad's metadata
  whose checksum is wrong or missing. (It guards against corruption and edits by mistake;
  it is not a signature.) A safetensors file without chaingrad's metadata, such as
  PyTorch's, loads as a state dict of numpy arrays::

    import safetensors.torch
    torch_model.load_state_dict(safetensors.torch.load_file("model.safetensors"))
    chaingrad_model.load_state_dict(chaingrad.load("torch_weights.safetensors"))

Under ``import chaingrad as torch``, ``torch.save``, ``torch.load`` and
``torch.serialization`` are these. Either format is written atomically (a temporary file
renamed over the path), and a truncated or corrupt file is refused with a
``ModelFileError`` naming it and what is wrong.

Example:
    >>> import os, random, tempfile
    >>> from chaingrad.nn import MLP
    >>> random.seed(0)
    >>> model = MLP(2, [4, 1])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
    >>> save(model, path)
    >>> load(path).architecture()
    {'type': 'MLP', 'nin': 2, 'nouts': [4, 1], 'activation': 'relu'}
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import random
import re
import struct
from collections.abc import Mapping
from typing import Any, BinaryIO

from . import nn, torch_names
from .errors import NO_CUDA_LOAD, ModelFileError, UnsafeGlobalError
from .files import open_regular, write_atomic
from .guards import all_finite
from .nn import Module, registry
from .weights_only import (
    add_safe_globals,
    added,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)

__all__ = ["CHECKSUM_KEY", "FORMAT_VERSION", "METADATA_KEY", "ModelFileError", "UnsafeGlobalError",
           "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "get_unsafe_globals_in_checkpoint", "load", "safe_globals", "save", "save_safetensors",
           "to_torch"]

FORMAT_VERSION = 2  # 2: the checksum covers the whole file (in 1, the tensors only)
METADATA_KEY = "chaingrad"
CHECKSUM_KEY = "chaingrad.sha256"
_UNSIGNED = "0" * 64  # the checksum's value while the checksum is computed
_CHECKSUM_FIELD = re.compile(rb'"chaingrad\.sha256"\s*:\s*"([0-9a-f]{64})"')
_DTYPES = ("F16", "F32", "F64", "I32", "I64")  # the safetensors dtypes that load reads
_MAX_HEADER = 100_000_000  # the largest header safetensors itself reads


def save(obj: Any, f: str | os.PathLike[str] | BinaryIO, pickle_module: Any = None,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` as ``torch.save`` does, in torch's file format; to a path ending in
    ``.safetensors``, as a safetensors file (see ``save_safetensors``).

    torch's format (a zip archive holding a pickle and each storage's bytes, see
    ``chaingrad.torch_checkpoints``) keeps anything a pickle keeps: a state dict, a
    checkpoint ``{'model': ..., 'optimizer': ..., 'iter_num': 5, ...}``, a tensor, a whole
    model. PyTorch 2.13's ``torch.load(f)`` (``weights_only=True``) reads what torch's
    ``weights_only`` loader accepts: tensors of each dtype chaingrad has (a view saved with
    its whole storage, tensors sharing memory sharing one storage, as torch), dicts, lists,
    tuples, sets, numbers, strings, None, dtypes, ``Size``, ``device``. The numpy arrays of a
    dict, list or tuple (what ``state_dict()`` holds) are written as tensors. A path is
    written atomically (``chaingrad.files.write_atomic``).

    Args:
        obj: What to save.
        f: A path, or a binary file object open for writing (``open(path, "wb")``).
        pickle_module: torch.save's: None or Python's ``pickle``, which chaingrad writes with.
        pickle_protocol: 2, torch's default (the protocol its ``weights_only`` loader reads).
        _use_new_zipfile_serialization: torch.save's: True; torch's legacy format (False)
            is not written.
        _disable_byteorder_record: Leave out the ``byteorder`` record, as torch.save's.

    Raises:
        NotImplementedError: Another ``pickle_module`` or ``pickle_protocol``, or the
            legacy format.
        TypeError: ``obj`` holds something that does not pickle (and, for a safetensors
            path, anything but a model of chaingrad's layers or a state dict of arrays).
        OSError: The file cannot be written.

    Example:
        >>> import io, chaingrad
        >>> f = io.BytesIO()
        >>> save({"w": chaingrad.ones(2), "step": 3}, f)
        >>> _ = f.seek(0)
        >>> load(f)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    if _is_safetensors_path(f):
        save_safetensors(obj, f)  # type: ignore[arg-type]
        return
    if pickle_module not in (None, pickle):
        name = getattr(pickle_module, "__name__", pickle_module)
        raise NotImplementedError(f"save: pickle_module={name}: chaingrad writes with Python's "
                                  "pickle only")
    if pickle_protocol != 2:
        raise NotImplementedError(f"save: pickle_protocol={pickle_protocol!r}: chaingrad writes "
                                  "protocol 2, torch's default, which torch's weights_only "
                                  "loader reads")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("save: _use_new_zipfile_serialization=False: chaingrad writes "
                                  "torch's zip format only (the default since PyTorch 1.6)")
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError(f"save: expected 'f' to be string, path, or a file-like object "
                             f"with a 'write' attribute, got {type(f).__name__}")
    _torch_format("save").write(obj, f, byteorder=not _disable_byteorder_record)


def load(f: str | os.PathLike[str] | BinaryIO, map_location: Any = None,
         pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, model: Module | None = None, **pickle_load_args: Any) -> Any:
    """Load what ``torch.save`` (PyTorch's or chaingrad's) or ``save`` wrote, as
    ``torch.load``; the format (torch's zip archive, torch's legacy format, safetensors) is
    recognised by the file's first bytes, and torch need not be installed.

    With ``weights_only=True`` (the default, as torch's), a file of torch's format loads
    only if its pickle names nothing outside torch's allow list (the tensor rebuilders,
    storage types, dtypes, ``Size``, ``device``, ``OrderedDict``, ...) and the globals that
    ``add_safe_globals`` allowed: a file from the internet runs none of its code, and one
    that names anything else is refused with an error naming it. ``weights_only=False``
    loads any pickle (a whole model, say), which can run any code: only for files you
    trust. A safetensors file never runs code.

    Args:
        f: A path, or a binary file object open for reading.
        map_location: torch.load's, on a machine with the CPU only: None, ``'cpu'``,
            ``device('cpu')``, a dict mapping the file's locations (``{'cuda:0': 'cpu'}``),
            or a function ``(storage, location)`` returning the storage (or None).
        pickle_module: torch.load's: only with ``weights_only=False`` (then Python's pickle).
        weights_only: True (None: the default, True) to refuse globals outside the allow
            list.
        mmap: Map a file of torch's format into memory instead of reading it (a path
            only); the tensors are then copies on write of the file's bytes.
        model: For a safetensors file or a state dict: a model whose weights are replaced
            (in place, once the whole file is checked), and returned.
        pickle_load_args: torch.load's: ``encoding`` (of Python 2 strings), with
            ``weights_only=False``.

    Returns:
        The saved object: chaingrad Tensors where torch's were; for a safetensors file, the
        model its architecture describes, or a state dict of numpy arrays; ``model``, if
        given.

    Raises:
        ModelFileError: The file is truncated or corrupt, is in no format chaingrad reads
            (a TorchScript archive), or does not fit ``model``.
        UnsafeGlobalError: (a ``pickle.UnpicklingError``, as torch's) ``weights_only`` and
            a global outside the allow list; the message names it and how to allow it.
        NotImplementedError: ``map_location`` names another device than the CPU, or the
            file holds something chaingrad lacks (a sparse tensor, a complex dtype).
        RuntimeError: The file's storages are on a GPU and no ``map_location`` moves them
            (torch's error on a build without CUDA); ``pickle_module`` with
            ``weights_only``.
        TypeError: ``model`` is not a Module.
        OSError: The file cannot be read (NotARegularFileError for a FIFO or a device).

    Example:
        >>> import os, tempfile, chaingrad
        >>> path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
        >>> save({"model": {"w": chaingrad.zeros(2)}, "iter_num": 5}, path)
        >>> load(path, map_location="cpu")["iter_num"]
        5
    """
    if isinstance(map_location, Module):
        raise TypeError(f"load: map_location is a {type(map_location).__name__}; to load the "
                        "weights into a model, give it as model=: load(path, model=model)")
    if model is not None and not isinstance(model, Module):
        raise TypeError(f"load: model must be a chaingrad.nn.Module to fill, got "
                        f"{type(model).__name__} (map_location is load's second argument, as "
                        "torch.load's: load(path, 'cpu'))")
    _check_location(map_location)
    weights_only = True if weights_only is None else weights_only
    if weights_only and pickle_module is not None:
        raise RuntimeError("load: Can not safely load weights when explicit pickle_module is "
                           "specified")
    unknown = set(pickle_load_args) - {"encoding"}
    if unknown:
        raise TypeError(f"load: unexpected keyword arguments {sorted(unknown)} (torch.load "
                        "passes only encoding to the unpickler)")
    if isinstance(f, (str, os.PathLike)):
        with open_regular(f, "load") as (opened, size):
            return _load_opened(opened, size, f"load: {os.fspath(f)!r}", map_location,
                                weights_only, os.fspath(f) if mmap else None, model,
                                pickle_load_args.get("encoding", "utf-8"))
    if not hasattr(f, "read"):
        raise TypeError(f"load: expected a path or a binary file object, got "
                        f"{type(f).__name__}")
    if mmap:
        raise ValueError("load: f must be a file path in order to use the mmap argument")
    start = f.tell() if f.seekable() else 0
    size = (f.seek(0, os.SEEK_END) - start) if f.seekable() else -1
    if f.seekable():
        f.seek(start)
    where = f"load: {getattr(f, 'name', type(f).__name__)!r}"
    return _load_opened(f, size, where, map_location, weights_only, None, model,
                        pickle_load_args.get("encoding", "utf-8"))


def get_unsafe_globals_in_checkpoint(f: str | os.PathLike[str] | BinaryIO) -> list[str]:
    """The globals a file of torch.save names that ``load(f)`` (``weights_only=True``)
    would refuse, found without unpickling it: an empty list if it loads, as
    ``torch.serialization.get_unsafe_globals_in_checkpoint``.

    Example:
        >>> import io, collections, chaingrad
        >>> f = io.BytesIO()
        >>> save({"w": chaingrad.ones(2), "count": collections.Counter("aab")}, f)
        >>> get_unsafe_globals_in_checkpoint(f)
        []
    """
    checkpoints = _torch_format("get_unsafe_globals_in_checkpoint")
    if isinstance(f, (str, os.PathLike)):
        with open_regular(f, "get_unsafe_globals_in_checkpoint") as (opened, _):
            names = checkpoints.globals_in(opened, f"load: {os.fspath(f)!r}")
    else:
        names = checkpoints.globals_in(f, f"load: {getattr(f, 'name', type(f).__name__)!r}")
    return [name for name in names if name not in checkpoints.TORCH_GLOBALS
            and name not in checkpoints.LACKING and added(name) is None]


def __getattr__(name: str) -> object:
    """An error naming a name of torch.serialization that chaingrad lacks."""
    raise torch_names.missing(__name__, name, torch_names.SERIALIZATION)


def _load_opened(f: BinaryIO, size: int, where: str, map_location: Any, weights_only: bool,
                 mmap_path: str | None, model: Module | None, encoding: str) -> Any:
    """Dispatch on the first bytes: torch's zip archive, its legacy format (a pickle), or a
    safetensors file."""
    if size < 0:  # a file object that cannot seek: read it whole
        data = f.read()
        f, size = io.BytesIO(data), len(data)
    start = f.tell()
    head = f.read(9)
    f.seek(start)
    if mmap_path is not None and not head.startswith(b"PK\x03\x04"):
        raise RuntimeError("load: mmap can only be used with files saved in torch's zip format "
                           "(torch.save's, and chaingrad.save's)")
    if head.startswith(b"PK\x03\x04"):
        loaded = _torch_format("load").read(f, where, map_location, weights_only, mmap_path,
                                            encoding)
    elif head.startswith(b"\x80") and head[8:9] != b"{":  # a pickle, not a safetensors header
        loaded = _torch_format("load").read_legacy(f, where, map_location, weights_only,
                                                   encoding)
    else:
        return _load_safetensors(f, size, where, model)
    if model is None:
        return loaded
    if not isinstance(loaded, Mapping):
        raise ModelFileError(f"{where} holds a {type(loaded).__name__}, not a state dict to "
                             "load into the model given")
    try:
        model.load_state_dict(loaded)
    except (TypeError, ValueError, AttributeError) as exc:
        raise ModelFileError(f"{where} does not match the model given: {exc}") from exc
    return model


def _is_safetensors_path(f: Any) -> bool:
    return isinstance(f, (str, os.PathLike)) and os.fspath(f).endswith(
        ".safetensors" if isinstance(os.fspath(f), str) else b".safetensors")


def _check_location(map_location: Any) -> None:
    """Refuse a map_location naming a device other than the CPU, in chaingrad's words and
    torch's (a NotImplementedError is a RuntimeError, torch's type)."""
    if map_location is None or callable(map_location) or isinstance(map_location, Mapping):
        return
    named = map_location.decode() if isinstance(map_location, bytes) else map_location
    kind = str(getattr(named, "type", named)).partition(":")[0]
    if kind != "cpu":
        words = f" {NO_CUDA_LOAD}" if kind == "cuda" else ""
        raise NotImplementedError(f"load(map_location={map_location!r}): chaingrad has only "
                                  f"the CPU; a device other than it is not in chaingrad "
                                  f"yet.{words}")


def _torch_format(what: str) -> Any:
    """chaingrad.torch_checkpoints, which needs numpy (``import chaingrad`` does not)."""
    return torch_names.load_module("chaingrad.torch_checkpoints", f"chaingrad.{what} in "
                                   "torch's format")


def save_safetensors(model: Module | Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write ``model``'s weights (float32; integer buffers int64) and architecture to a
    safetensors file: what ``save`` does for a path ending in ``.safetensors``.

    The file is written to a temporary file in the same folder and then renamed over
    ``path`` (see ``chaingrad.files.write_atomic``), so an interrupted save leaves either the
    old file or the new one, never a broken one.

    Args:
        model: A model of ``chaingrad.nn.registry.LAYER_TYPES`` (an ``MLP``, a
            ``Sequential`` of Tensor layers, ...), or a state dict ``{name: array}`` (e.g.
            ``model.state_dict()`` of a model of your own), which ``load`` gives back.
        path: Where to write, conventionally ``*.safetensors``.

    Raises:
        TypeError: The model cannot describe its architecture (e.g. a layer of your own:
            save its ``state_dict()`` instead, as the message says), or a state dict holds
            something else than arrays of numbers.
        ValueError: A weight does not fit in a float32, or holds nan or inf (a Tensor may,
            as torch's; a model file does not), or layers nest too deeply.
        ModuleNotFoundError: numpy or safetensors is missing (the message says what to
            install).
        OSError: The file cannot be written (e.g. IsADirectoryError for a folder,
            NotARegularFileError for a device or a FIFO).

    Example:
        >>> import os, tempfile
        >>> from chaingrad.nn import MLP
        >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
        >>> save_safetensors(MLP(3, [4, 2]), path)
        >>> sorted(load(path).state_dict())
        ['0.bias', '0.weight', '2.bias', '2.weight']
    """
    np, safetensors_numpy = _dependencies("save")
    if isinstance(model, Module):
        try:
            arch = dict(model.architecture(), format_version=FORMAT_VERSION)
        except TypeError as exc:
            name = type(model).__name__
            raise TypeError(f"save: cannot save a {name} whole ({exc}); save its weights: "
                            f"save(model.state_dict(), path), and load them into a new {name} "
                            "with model.load_state_dict(load(path)); or save it to a path "
                            "that does not end in .safetensors, pickled as torch.save pickles "
                            "it (to load with weights_only=False)") from exc
        state = model.state_dict()
    elif isinstance(model, Mapping):
        arch, state = None, dict(model)
    else:
        raise TypeError(f"save: expected a model (an MLP, a Sequential, ...) or a state dict, "
                        f"got {type(model).__name__}")
    arrays = {}
    for name, value in state.items():
        array = _numbers(f"save: {name!r}", value, np)
        # safetensors 0.8 needs C order to write correctly (np.asarray keeps a 0-d array
        # 0-d, where np.ascontiguousarray makes it 1-d)
        if array.dtype.kind in "iu":  # a count (num_batches_tracked): kept whole
            arrays[name] = np.asarray(array, dtype=np.int64, order="C")
            continue
        with np.errstate(over="ignore"):
            array32 = np.asarray(array, dtype=np.float32, order="C")
        if not all_finite(array32):  # a model file holds finite weights: load refuses others
            if not all_finite(np.asarray(array, dtype=np.float64)):
                raise ValueError(f"save: {name} holds nan or inf; a model file holds finite "
                                 "weights (chaingrad.load refuses others)")
            raise ValueError(f"save: {name} has values too large for float32 "
                             f"(largest magnitude {np.abs(array).max():g})")
        arrays[name] = array32
    metadata = {CHECKSUM_KEY: _UNSIGNED}
    if arch is not None:
        metadata[METADATA_KEY] = json.dumps(arch)
    unsigned = safetensors_numpy.save(arrays, metadata=metadata)
    (size,) = struct.unpack("<Q", unsigned[:8])
    start, end = _checksum_span(unsigned[8:8 + size], "save")
    signed = hashlib.sha256(unsigned).hexdigest().encode("ascii")
    write_atomic(path, unsigned[:8 + start] + signed + unsigned[8 + end:])


def to_torch(model: Module, dtype: Any = None) -> Any:
    """The same network as a ``torch.nn`` module holding chaingrad's weights.

    ``MLP(2, [16, 16, 1])`` becomes ``Sequential(Linear(2, 16), ReLU(), Linear(16, 16),
    ReLU(), Linear(16, 1))``; a Tensor ``Sequential`` becomes the ``nn.Sequential`` of
    the same layers (in the same train/eval mode). Either gives the same outputs.

    Args:
        model: A model of ``chaingrad.nn.registry.LAYER_TYPES``.
        dtype: The torch dtype of the weights (default: torch's default, float32).

    Example:
        >>> import random, torch; random.seed(0)
        >>> from chaingrad.nn import MLP
        >>> model = MLP(2, [4, 1])
        >>> net = to_torch(model, dtype=torch.float64)
        >>> abs(net(torch.tensor([0.5, -1.0], dtype=torch.float64)).item()
        ...     - model([0.5, -1.0]).data) < 1e-12
        True
    """
    import torch

    if not isinstance(model, Module):
        raise TypeError(f"to_torch: expected an MLP or a Tensor layer such as a Sequential, "
                        f"got {type(model).__name__}")
    net = registry.build_torch(model.architecture(), torch.nn, dtype)
    net.train(model.training)
    target = torch.get_default_dtype() if dtype is None else dtype
    state = {k: torch.tensor(v, dtype=target if v.dtype.kind == "f" else None)
             for k, v in model.state_dict().items()}  # num_batches_tracked stays int64
    net.load_state_dict(state, strict=True)
    return net


# ---- reading a safetensors file ----


def _load_safetensors(f: BinaryIO, size: int, where: str, model: Module | None) -> Any:
    """A safetensors file's model (its architecture's, or ``model`` filled), or its state
    dict of numpy arrays; reading only the bytes its header declares (``size`` is what the
    file holds from here)."""
    _, safetensors_numpy = _dependencies("load")
    prefix, raw_header, header = _read_header(f, size, where)
    body_size = _check_tensors(where, header, size - len(prefix) - len(raw_header))
    body = f.read(body_size)
    if len(body) != body_size:
        raise ModelFileError(f"{where} is truncated: it shrank while it was read")
    metadata = _metadata(where, header)
    if any(key == METADATA_KEY or key.startswith(METADATA_KEY + ".") for key in metadata):
        _verify(where, prefix, raw_header, body, metadata)
    arch = _architecture(where, metadata, body_size)
    try:
        arrays = safetensors_numpy.load(prefix + raw_header + body)
    except Exception as exc:  # safetensors raises its own error types for a bad file
        raise ModelFileError(f"{where} is corrupt: {exc}") from exc
    if arch is None and model is None:
        return arrays
    if model is None:
        try:
            model = _build(arch)
        except (TypeError, ValueError) as exc:  # e.g. Dropout(p=1.5): the layer refuses
            raise ModelFileError(f"{where}: cannot build {registry.summary(arch)}: "
                                 f"{exc}") from exc
    elif arch is not None:
        _check_given(where, arch, model)
    try:
        model.load_state_dict(arrays)
    except (TypeError, ValueError, AttributeError) as exc:
        described = f"its architecture {registry.summary(arch)}" if arch else "the model given"
        raise ModelFileError(f"{where} does not match {described}: {exc}") from exc
    return model






def _dependencies(what: str) -> tuple[Any, Any]:
    """numpy and safetensors.numpy, or an error that says how to install them."""
    try:
        import numpy
        import safetensors.numpy
    except ModuleNotFoundError as exc:
        missing = (exc.name or "a module").partition(".")[0]
        raise ModuleNotFoundError(
            f"chaingrad.{what} needs numpy and safetensors ({missing} is missing): "
            "pip install 'chaingrad[demo]', or pip install numpy safetensors",
            name=missing) from exc
    return numpy, safetensors.numpy


def _read_header(f: Any, size: int, where: str) -> tuple[bytes, bytes, dict[str, Any]]:
    """The 8-byte length, the header's bytes and the header, checked by hand for precise
    errors (and before reading any more than the header)."""
    prefix = f.read(8)
    if len(prefix) < 8:
        raise ModelFileError(f"{where} is not a safetensors file (only {size} bytes)")
    (header_size,) = struct.unpack("<Q", prefix)
    raw = f.read(header_size) if header_size <= min(size - 8, _MAX_HEADER) else b""
    if header_size > size - 8:
        raise ModelFileError(f"{where} is truncated or not a safetensors file (its header "
                             f"claims {header_size} bytes, the file has {size - 8} more)")
    if header_size > _MAX_HEADER:
        raise ModelFileError(f"{where} is not a safetensors file (a header of {header_size} "
                             f"bytes; safetensors allows {_MAX_HEADER})")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{where} is not a safetensors file (bad header: "
                             f"{_reason(exc)})") from exc
    if not isinstance(header, dict):
        raise ModelFileError(f"{where} is not a safetensors file (the header is not a map)")
    return prefix, raw, header


def _check_tensors(where: str, header: dict[str, Any], available: int) -> int:
    """Refuse dtypes load cannot read, and a body of another size than the header
    describes; return that size."""
    end = 0
    for name, entry in header.items():
        if name == "__metadata__" or not isinstance(entry, dict):
            continue  # safetensors itself reports a malformed entry
        dtype = entry.get("dtype")
        if isinstance(dtype, str) and dtype not in _DTYPES:
            raise ModelFileError(f"{where}: tensor {name!r} has dtype {dtype}, which is not "
                                 f"supported (load reads {', '.join(_DTYPES)}; e.g. convert a "
                                 "PyTorch bfloat16 model with .float() before saving)")
        offsets = entry.get("data_offsets")
        if isinstance(offsets, list) and len(offsets) == 2 and all(
                isinstance(n, int) and not isinstance(n, bool) for n in offsets):
            end = max(end, offsets[1])
    if available < end:
        raise ModelFileError(f"{where} is truncated: its header describes {end} bytes of "
                             f"tensor data, the file has {available}")
    if available > end:
        raise ModelFileError(f"{where} is not a safetensors file as written: it has "
                             f"{available - end} bytes after the {end} bytes of tensor data "
                             "its header describes")
    return end


def _metadata(where: str, header: dict[str, Any]) -> dict[str, str]:
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ModelFileError(f"{where} is not a safetensors file (its __metadata__ is not a "
                             "map of strings)")
    return metadata


def _checksum_span(raw_header: bytes, where: str) -> tuple[int, int]:
    """Where the checksum's 64 hex digits sit in the header's bytes (exactly once)."""
    found = list(_CHECKSUM_FIELD.finditer(raw_header))
    if len(found) != 1:
        raise ModelFileError(f"{where} is corrupt: its header holds {len(found)} "
                             f"{CHECKSUM_KEY} fields, expected one")
    return found[0].span(1)


def _verify(where: str, prefix: bytes, raw_header: bytes, body: bytes,
            metadata: dict[str, str]) -> None:
    """Check the checksum of a file with chaingrad's metadata: over every byte, with the
    checksum's own 64 digits taken as zeros."""
    if CHECKSUM_KEY not in metadata:
        raise ModelFileError(f"{where} has chaingrad's metadata but no checksum "
                             f"({CHECKSUM_KEY}): it was changed after chaingrad.save wrote it, "
                             "or written by something else, and is not loaded unchecked")
    start, end = _checksum_span(raw_header, where)
    stored = raw_header[start:end]
    if stored.decode("ascii") != metadata[CHECKSUM_KEY]:
        raise ModelFileError(f"{where} is corrupt: its {CHECKSUM_KEY} is written twice")
    digest = hashlib.sha256(prefix)
    digest.update(raw_header[:start])
    digest.update(_UNSIGNED.encode("ascii"))
    digest.update(raw_header[end:])
    digest.update(body)
    if digest.hexdigest().encode("ascii") != stored:
        raise ModelFileError(f"{where} is corrupt: checksum mismatch (the SHA-256 of its "
                             f"bytes is not the {CHECKSUM_KEY} saved in it: it was changed "
                             "after it was saved)")


def _architecture(where: str, metadata: dict[str, str], body_size: int) -> dict | None:
    """The file's checked architecture, or None for a file without one."""
    if METADATA_KEY not in metadata:
        return None
    try:
        arch = json.loads(metadata[METADATA_KEY])
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{where}: the architecture metadata is not JSON "
                             f"({_reason(exc)})") from exc
    if not isinstance(arch, dict):
        raise ModelFileError(f"{where}: the architecture is not a map")
    version = arch.pop("format_version", None)
    if version != FORMAT_VERSION:
        raise ModelFileError(f"{where}: format_version {version!r} is not supported "
                             f"(this chaingrad reads {FORMAT_VERSION})")
    try:
        registry.check(arch)
    except ValueError as exc:
        raise ModelFileError(f"{where}: {exc}") from exc
    count = registry.weight_count(arch)
    if 2 * count > body_size:  # refuse before allocating what a crafted header asks for
        raise ModelFileError(f"{where}: its architecture needs {count} weights, more than its "
                             f"{body_size} bytes of tensor data can hold (2 bytes each at "
                             "least)")
    return arch


def _reason(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "it nests too deeply"
    return str(exc)


def _check_given(where: str, arch: dict[str, Any], model: Any) -> None:
    """Refuse a model given to ``load`` that is not of the file's architecture."""
    try:
        given = model.architecture()
    except (AttributeError, TypeError, ValueError):
        given = None
    if given != arch:
        got = registry.summary(given) if given is not None else type(model).__name__
        raise ModelFileError(f"{where} holds {registry.summary(arch)}, but the model given "
                             f"is {got}")


def _build(arch: dict[str, Any]) -> Module:
    """The model of a checked architecture, with fresh weights; the caller's random
    sequences (``random`` for an MLP, ``chaingrad.nn``'s generator for Tensor layers) are
    left where they were."""
    python_state = random.getstate()
    tensor_state = nn.get_rng_state() if arch["type"] != "MLP" else None
    try:
        return registry.build_module(arch, nn)
    finally:
        random.setstate(python_state)
        if tensor_state is not None:
            nn.set_rng_state(tensor_state)


def _numbers(where: str, value: Any, np: Any) -> Any:
    """A state dict's value as an array of real numbers."""
    if hasattr(value, "detach"):  # a torch tensor or a chaingrad Tensor
        value = value.detach()
        value = value.numpy() if hasattr(value, "numpy") else value
    array = np.asarray(value) if not isinstance(value, (Mapping, str, bytes)) else None
    if array is None or array.dtype == object:
        raise TypeError(f"{where}: expected an array of real numbers, got "
                        f"{type(value).__name__} (a safetensors file holds arrays only, "
                        "where torch.save pickles any object: save a model's state_dict(), or "
                        "save to a path that does not end in .safetensors, in torch's format)")
    if array.dtype.kind not in "fiu":
        raise TypeError(f"{where}: expected real numbers (float or int), got "
                        f"{array.dtype.name}")
    return array
