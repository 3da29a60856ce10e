"""What is in a file of ``torch.save``, and how chaingrad writes and reads one without torch.

The file is a zip archive of uncompressed records under one folder (``archive/``):

- ``data.pkl``: the object, pickled with protocol 2. A tensor is pickled as a call
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
  OrderedDict())`` (a ``Parameter`` as ``torch._utils._rebuild_parameter(tensor,
  requires_grad, OrderedDict())``), and its ``storage`` is not in the pickle: it is a
  persistent id, ``('storage', torch.FloatStorage, '0', 'cpu', numel)``, naming the record
  that holds it;
- ``data/0``, ``data/1``, ...: each storage's raw bytes, little-endian, each record's
  bytes starting at a multiple of 64 in the file (so that it can be memory-mapped);
- ``byteorder`` (``little``), ``version`` (``3``), ``.format_version`` (``1``),
  ``.storage_alignment`` (``64``) and ``.data/serialization_id``.

A storage is a whole buffer: a view (``w.t()``, ``w[1]``) is saved as its base's storage
with an offset and strides, and two tensors that share memory (a tied weight) share one
storage in the file, and share memory again once loaded, as with torch.

Writing: Python's pickler, with chaingrad's objects standing for torch's (a chaingrad
Tensor is reduced to ``rebuild_tensor_v2`` of this module; ``FloatStorage`` below stands
for ``torch.FloatStorage``; ``chaingrad.float32`` for ``torch.float32``); then each
``GLOBAL`` instruction that names a stand-in is renamed to torch's name (``WRITTEN_AS``).
Reading: ``weights_only.Unpickler`` maps each of torch's names back (``TORCH_GLOBALS``);
``read_legacy`` reads the format torch wrote before 1.6 (and with
``_use_new_zipfile_serialization=False``), the same pickle in a plainer container.
The numpy arrays of a state dict (what chaingrad's ``state_dict()`` holds) are written as
tensors, so that torch loads them as its own.

Example:
    >>> import io, chaingrad
    >>> f = io.BytesIO()
    >>> write({"w": chaingrad.tensor([1.0, 2.0])}, f)
    >>> read(io.BytesIO(f.getvalue()), "example")
    {'w': tensor([1., 2.])}
"""

from __future__ import annotations

import codecs
import hashlib
import io
import mmap
import os
import pickle
import pickletools
import struct
import zipfile
from collections import Counter, OrderedDict
from collections.abc import Mapping
from typing import Any, BinaryIO, ClassVar

import numpy as np

from .errors import NO_CUDA_LOAD, ModelFileError, UnsafeGlobalError
from .files import write_atomic
from .nn.parameter import Parameter
from .tensor_engine import dtypes
from .tensor_engine.conversions import Size
from .tensor_engine.devices import device
from .tensor_engine.tensor import Tensor, leaf
from .weights_only import PYTHON2_MODULES, Unpickler

__all__ = ["ALIGNMENT", "LACKING", "MAGIC_NUMBER", "TORCH_GLOBALS", "WRITTEN_AS", "Storage",
           "StorageType", "globals_in", "read", "read_legacy", "rebuild_parameter",
           "rebuild_tensor_v2", "write"]

ALIGNMENT = 64
"""Where each record's bytes start in the file: at a multiple of this, as torch's."""

FOLDER = "archive"
"""The folder of the records, as torch names it for a file object."""


# ---- torch's storage types, and what stands for them ----


class StorageType:
    """Stands for one of torch's storage types (``torch.FloatStorage``, ...): the dtype of
    a storage's elements, by the name of chaingrad's dtype. Python's pickler writes a class
    by its module and name, so each type torch writes has a class of its name here, which
    ``write`` renames to torch's; loading, ``TORCH_GLOBALS`` maps torch's back to it."""

    dtype_name: ClassVar[str] = "uint8"  # torch.storage.UntypedStorage: bytes

    @classmethod
    def numpy_dtype(cls) -> np.dtype:
        """The numpy dtype of the elements; an error naming it if chaingrad lacks it."""
        found = DTYPES_BY_NAME.get(cls.dtype_name)
        if found is None:  # bfloat16, before chaingrad has it
            raise NotImplementedError(f"load: the file holds a {cls.__name__} "
                                      f"({cls.dtype_name}), a dtype chaingrad does not have yet "
                                      "(in PyTorch, save the tensors .float() to load them)")
        return found.dtype


class FloatStorage(StorageType):
    dtype_name = "float32"


class DoubleStorage(StorageType):
    dtype_name = "float64"


class HalfStorage(StorageType):
    dtype_name = "float16"


class BFloat16Storage(StorageType):
    dtype_name = "bfloat16"


class ByteStorage(StorageType):
    dtype_name = "uint8"


class CharStorage(StorageType):
    dtype_name = "int8"


class ShortStorage(StorageType):
    dtype_name = "int16"


class IntStorage(StorageType):
    dtype_name = "int32"


class LongStorage(StorageType):
    dtype_name = "int64"


class BoolStorage(StorageType):
    dtype_name = "bool"


STORAGE_TYPES: tuple[type[StorageType], ...] = (
    FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, ByteStorage, CharStorage,
    ShortStorage, IntStorage, LongStorage, BoolStorage)
DTYPES_BY_NAME = {d.name: d for d in dtypes.DTYPES}
_STORAGE_OF = {cls.dtype_name: cls for cls in STORAGE_TYPES}


class Storage:
    """A storage: a flat numpy array of one dtype that tensors view. ``cpu()`` and
    ``device`` let a ``map_location`` function handle it as torch's."""

    device = device("cpu")

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def cpu(self) -> Storage:
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> Storage:
        raise RuntimeError(NO_CUDA_LOAD)


# ---- rebuilding tensors: what torch's rebuild functions load as ----


def rebuild_tensor_v2(storage: Storage, storage_offset: int, size: tuple[int, ...],
                      stride: tuple[int, ...], requires_grad: bool = False,
                      backward_hooks: Any = None, metadata: Any = None) -> Tensor:
    """torch._utils._rebuild_tensor_v2: a tensor viewing ``storage`` (sharing its memory)
    from ``storage_offset`` with ``size`` and ``stride`` (counted in elements), each
    checked to stay inside the storage.

    Example:
        >>> rebuild_tensor_v2(Storage(np.arange(6.0)), 1, (2, 2), (3, 1))
        tensor([[1., 2.],
                [4., 5.]], dtype=chaingrad.float64)
    """
    if not isinstance(storage, Storage):
        raise ModelFileError(f"load: a tensor's storage is a {type(storage).__name__}, not a "
                             "storage of the file")
    array = storage.array
    size, stride = _ints("size", size), _ints("stride", stride)
    offset = _ints("storage_offset", (storage_offset,))[0]
    if len(size) != len(stride):
        raise ModelFileError(f"load: a tensor of size {size} has strides {stride}")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset - 1
    if offset > array.size or last >= array.size:
        raise ModelFileError(f"load: a tensor of size {size}, stride {stride} at offset "
                             f"{offset} reaches past its storage of {array.size} elements")
    item = array.dtype.itemsize
    view = np.ndarray(size, array.dtype, buffer=array, offset=offset * item,
                      strides=tuple(s * item for s in stride)) if array.size else (
        np.zeros(size, array.dtype))
    return leaf(view, bool(requires_grad), "load")


def rebuild_tensor_v3(storage: Storage, storage_offset: int, size: tuple[int, ...],
                      stride: tuple[int, ...], requires_grad: bool, backward_hooks: Any,
                      dtype: Any, metadata: Any = None) -> Tensor:
    """torch._utils._rebuild_tensor_v3: as v2, the dtype given apart from the storage's."""
    if not isinstance(dtype, dtypes.dtype) or not isinstance(storage, Storage):
        raise ModelFileError(f"load: _rebuild_tensor_v3 of a {type(storage).__name__} as "
                             f"{dtype!r}")
    typed = Storage(storage.array.view(np.uint8).view(dtype.dtype))
    return rebuild_tensor_v2(typed, storage_offset, size, stride, requires_grad)


def rebuild_tensor(storage: Storage, storage_offset: int, size: tuple[int, ...],
                   stride: tuple[int, ...]) -> Tensor:
    """torch._utils._rebuild_tensor (older files): v2 without requires_grad."""
    return rebuild_tensor_v2(storage, storage_offset, size, stride)


def rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any,
                      state: Any = None) -> Parameter:
    """torch._utils._rebuild_parameter: a Parameter sharing ``data``'s memory.

    Example:
        >>> rebuild_parameter(rebuild_tensor_v2(Storage(np.ones(2)), 0, (2,), (1,)), True, None)
        Parameter containing:
        tensor([1., 1.], dtype=chaingrad.float64, requires_grad=True)
    """
    if not isinstance(data, Tensor):
        raise ModelFileError(f"load: a Parameter of a {type(data).__name__}, not a tensor")
    return Parameter(data, requires_grad=bool(requires_grad))


def rebuild_from_type_v2(func: Any, new_type: Any, args: tuple, state: Any) -> Any:
    """torch._tensor._rebuild_from_type_v2: a tensor with attributes of its own (a
    tensor subclass is refused: chaingrad has torch.Tensor and Parameter)."""
    if new_type not in (Tensor, Parameter) or not callable(func):
        raise NotImplementedError(f"load: the file holds a tensor of type {new_type!r}, "
                                  "a subclass chaingrad does not have")
    made = func(*args)
    for key, value in (state if isinstance(state, dict) else {}).items():
        if not isinstance(key, str) or key.startswith("_"):  # a tensor's own slots stay its own
            raise ModelFileError(f"load: a tensor's attribute {key!r:.80} cannot be set")
        setattr(made, key, value)
    return made


def _ints(what: str, values: Any) -> tuple[int, ...]:
    if not isinstance(values, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise ModelFileError(f"load: a tensor's {what} is {values!r:.80}, expected "
                             "non-negative integers")
    return tuple(values)


# ---- torch's names <-> chaingrad's objects ----


TORCH_GLOBALS: dict[str, Any] = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "_codecs.encode": codecs.encode,
    "builtins.bytearray": bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": rebuild_parameter,
    "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
    "torch.nn.parameter.Parameter": Parameter,
    "torch.Tensor": Tensor,
    "torch.Size": Size,
    "torch.device": device,
    "torch.storage.UntypedStorage": StorageType,
    **{f"torch.{d.name}": d for d in dtypes.DTYPES},
    **{f"{module}.{cls.__name__}": cls for cls in STORAGE_TYPES
       for module in ("torch", "torch.cuda")},
}
"""torch's names that ``torch.load(weights_only=True)`` allows, each mapped to what
chaingrad loads for it."""

_TORCH_ALSO_ALLOWS: dict[str, str] = {
    **{f"torch._utils._rebuild_{kind}": f"a {kind.replace('_', ' ')}" for kind in (
        "qtensor", "sparse_tensor", "meta_tensor_no_storage", "nested_tensor",
        "wrapper_subclass", "device_tensor_from_numpy", "device_tensor_from_cpu_tensor")},
    "torch.serialization._get_layout": "a sparse layout",
    "torch.storage.TypedStorage": "a storage saved on its own",
    **{f"torch.{name}": f"the dtype torch.{name}" for name in (
        "complex32", "complex64", "complex128", "qint8", "quint8", "qint32", "quint4x2",
        "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16", "float8_e4m3fn",
        "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
        "float4_e2m1fn_x2", "bfloat16", "uint16", "uint32", "uint64")},
    **{f"torch.{kind}{n}": f"the dtype torch.{kind}{n}" for kind in ("int", "uint")
       for n in range(1, 8)},
    **{f"torch.{name}": f"the quantization scheme torch.{name}" for name in (
        "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
        "per_channel_symmetric", "per_channel_affine_float_qparams")},
    **{f"{module}.{kind}Storage": f"a {kind} storage" for module in ("torch", "torch.cuda")
       for kind in ("ComplexFloat", "ComplexDouble")},
    **{f"torch.{kind}Storage": f"a {kind} storage" for kind in (
        "QInt8", "QUInt8", "QInt32", "QUInt4x2", "QUInt2x4")},
    **{f"{module}.{kind}Tensor": f"torch's legacy tensor type {module}.{kind}Tensor"
       for module in ("torch", "torch.cuda", "torch.sparse", "torch.cuda.sparse")
       for kind in ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int",
                    "Long", "Short") if not (kind == "Bool" and "sparse" in module)},
}
LACKING = {name: what for name, what in _TORCH_ALSO_ALLOWS.items() if name not in TORCH_GLOBALS}
"""The names torch's ``weights_only`` loader allows that chaingrad cannot load (yet: a
dtype that chaingrad gains moves to ``TORCH_GLOBALS``), refused with an error naming them
(``tests/test_torch_checkpoints.py`` checks that the two tables hold torch 2.13's list)."""


def _stand_in(obj: Any) -> str:
    """How Python's pickler writes a stand-in's global: ``module name``."""
    name = obj.__qualname__ if hasattr(obj, "__qualname__") else _dtype_attribute(obj)
    return f"{obj.__module__} {name}"


def _dtype_attribute(d: dtypes.dtype) -> str:
    """The name of a dtype in its module (``bool_`` for bool: no module shadows a builtin)."""
    return d.name if getattr(dtypes, d.name, None) is d else f"{d.name}_"


WRITTEN_AS: dict[str, str] = {
    _stand_in(TORCH_GLOBALS[name]): " ".join(name.rsplit(".", 1)) for name in (
        "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter", "torch.Size",
        "torch.device", *(f"torch.{d.name}" for d in dtypes.DTYPES),
        *(f"torch.{cls.__name__}" for cls in STORAGE_TYPES))
}
"""``{"stand-in's module and name": "torch's module and name"}``: how ``write`` renames
the globals of a pickle."""


# ---- writing ----


def write(obj: Any, f: str | os.PathLike[str] | BinaryIO, byteorder: bool = True) -> None:
    """Write ``obj`` as ``torch.save`` does: to a path (atomically, through a temporary
    file) or to a binary file object open for writing; ``byteorder=False`` leaves out the
    ``byteorder`` record, as torch's ``_disable_byteorder_record``.

    Example:
        >>> import io
        >>> f = io.BytesIO()
        >>> write([1, "two", None], f)
        >>> sorted(zipfile.ZipFile(f).namelist())[:3]
        ['archive/.data/serialization_id', 'archive/.format_version', 'archive/.storage_alignment']
    """
    data = io.BytesIO()
    pickler = _Pickler(data)
    pickler.dump(_tensors_of_arrays(obj))
    pickled = _renamed(data.getvalue())
    records: list[tuple[str, Any]] = [("data.pkl", pickled), (".format_version", b"1"),
                                      (".storage_alignment", str(ALIGNMENT).encode())]
    if byteorder:
        records.append(("byteorder", b"little"))
    digest = hashlib.sha256(pickled)
    for key, storage in pickler.storages.items():
        raw = _little_endian(storage.array).reshape(-1).view(np.uint8)
        digest.update(raw.data)
        records.append((f"data/{key}", raw))
    records += [("version", b"3\n"),
                (".data/serialization_id", str(int(digest.hexdigest(), 16))[:40].encode())]
    archive = _Forward()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        for name, payload in records:
            _write_record(zf, archive, f"{FOLDER}/{name}", payload)
    if isinstance(f, (str, os.PathLike)):
        write_atomic(f, archive.getvalue())
    else:
        f.write(archive.getbuffer())


class _Forward(io.BytesIO):
    """A buffer that Python's zipfile cannot seek back in, so that it writes each record
    as torch's writer does: sizes and CRC in a data descriptor after the bytes, so that the
    records follow one another at offsets torch computes (``calculate_storage_offsets``)."""

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        raise OSError("written forward only")

    def seekable(self) -> bool:
        return False


class _Pickler(pickle.Pickler):
    """Python's pickler at protocol 2, chaingrad's tensors and storages reduced as torch
    reduces its own; ``storages`` collects each distinct storage under its key."""

    def __init__(self, file: BinaryIO) -> None:
        super().__init__(file, protocol=2)
        self.storages: dict[str, Storage] = {}
        self._keys: dict[int, tuple[Storage, np.ndarray]] = {}  # id(base): base kept alive
        self._key_of: dict[int, str] = {}  # id(storage) -> its key

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                return rebuild_parameter, (_Data(obj), obj.requires_grad, OrderedDict())
            return self.reduce_tensor(obj.detach().numpy(), obj.requires_grad)
        if isinstance(obj, _Data):
            return self.reduce_tensor(obj.tensor.detach().numpy(), obj.tensor.requires_grad)
        if isinstance(obj, dtypes.dtype):
            return _dtype_attribute(obj)  # a global: chaingrad.float32 (renamed torch.float32)
        if isinstance(obj, device):
            return device, (str(obj),)
        if isinstance(obj, Size):
            return Size, (tuple(obj),)
        return NotImplemented

    def reduce_tensor(self, array: np.ndarray, requires_grad: bool) -> tuple:
        storage, offset, stride = self.storage_of(array)
        return rebuild_tensor_v2, (storage, offset, tuple(array.shape), stride,
                                   bool(requires_grad), OrderedDict())

    def storage_of(self, array: np.ndarray) -> tuple[Storage, int, tuple[int, ...]]:
        """The storage an array views (its base's whole buffer, shared with every other
        view of it), its offset and strides there; a copy of its own where it cannot view
        one (negative strides, another dtype than its base's, no elements)."""
        base = array
        while isinstance(base.base, np.ndarray):
            base = base.base
        item = array.dtype.itemsize
        start = array.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        if not (base.flags.c_contiguous and base.dtype == array.dtype and array.size
                and start % item == 0 and all(s >= 0 and s % item == 0 for s in array.strides)):
            array = base = np.array(array, order="C", copy=True)  # keeps a 0-d array 0-d
            start = 0
        if id(base) not in self._keys:
            storage = Storage(base.reshape(-1))
            self._keys[id(base)] = (storage, base)
            self._key_of[id(storage)] = str(len(self.storages))
            self.storages[self._key_of[id(storage)]] = storage
        storage, _ = self._keys[id(base)]
        return storage, start // item, tuple(s // item for s in array.strides)

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, Storage):
            return None
        return ("storage", _STORAGE_OF[dtypes.of(obj.array.dtype).name], self._key_of[id(obj)],
                "cpu", obj.array.size)


class _Data:
    """A Parameter's data, pickled as a plain tensor inside its ``_rebuild_parameter``."""

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor


def _tensors_of_arrays(obj: Any) -> Any:
    """``obj`` with the numpy arrays in its dicts, lists and tuples as Tensors sharing
    their memory (torch loads them as tensors); anything else as it is."""
    if isinstance(obj, np.ndarray):
        return leaf(obj, False, "save")
    if type(obj) in (dict, OrderedDict):
        made = type(obj)((k, _tensors_of_arrays(v)) for k, v in obj.items())
        if hasattr(obj, "__dict__"):
            made.__dict__.update(obj.__dict__)  # a state dict's _metadata, as torch keeps it
        return made
    if type(obj) in (list, tuple):
        return type(obj)(_tensors_of_arrays(v) for v in obj)
    return obj


def _renamed(pickled: bytes) -> bytes:
    """The pickle with each global that names a stand-in renamed to torch's name."""
    ops = list(pickletools.genops(pickled))
    parts, start = [], 0
    for (op, arg, pos), (_, _, end) in zip(ops, [*ops[1:], (None, None, len(pickled))]):
        if op.name == "GLOBAL" and arg in WRITTEN_AS:
            module, name = WRITTEN_AS[arg].split(" ")
            parts += [pickled[start:pos], f"c{module}\n{name}\n".encode()]
            start = end
    parts.append(pickled[start:])
    return b"".join(parts)


def _little_endian(array: np.ndarray) -> np.ndarray:
    """The array itself on a little-endian machine; its bytes swapped on another."""
    return array.astype(array.dtype.newbyteorder("<"), copy=False)


def _write_record(zf: zipfile.ZipFile, archive: io.BytesIO, name: str, payload: Any) -> None:
    """One uncompressed record whose bytes start at a multiple of ``ALIGNMENT``: the local
    header's extra field pads it (``FB``, its length, then ``Z``s, as torch's writer)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    size = payload.nbytes if isinstance(payload, np.ndarray) else len(payload)
    info.file_size = size
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT  # Python's rule: a zip64 field follows ours
    header = archive.tell() + 30 + len(name.encode()) + 4 + 20 * zip64
    padding = -header % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", padding) + b"Z" * padding
    with zf.open(info, "w", force_zip64=zip64) as record:
        record.write(payload.data if isinstance(payload, np.ndarray) else payload)


# ---- reading ----


def read(f: BinaryIO, where: str, map_location: Any = None, weights_only: bool = True,
         mmap_path: str | None = None, encoding: str = "utf-8") -> Any:
    """The object in a file of ``torch.save``, open for reading in binary.

    Args:
        f: The file (one that cannot seek is read whole first).
        where: How errors name it (``load: 'gpt.pt'``).
        map_location: torch.load's: None, ``'cpu'``, a ``device``, a dict of locations,
            or a function ``(storage, location) -> storage or None``.
        weights_only: Refuse any global outside torch's allow list and the safe globals.
        mmap_path: The file's path, to map its storages into memory (copy on write, as
            torch's ``mmap=True``) instead of reading them.
        encoding: How the pickle's Python 2 strings decode (torch.load's, "utf-8").

    Raises:
        ModelFileError: Not a zip archive of torch.save, truncated or corrupt.
        UnsafeGlobalError: (weights_only) A global outside the allow list.
        NotImplementedError: A storage on a device other than the CPU, or something torch
            allows that chaingrad lacks (the message names it).
    """
    if not f.seekable():
        f = io.BytesIO(f.read())
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, EOFError, ValueError) as exc:
        raise ModelFileError(f"{where} is not a zip archive of torch.save, or is truncated "
                             f"({exc})") from exc
    with zf:
        names = zf.namelist()
        folder = names[0].split("/")[0] if names else ""
        if f"{folder}/constants.pkl" in names:
            raise ModelFileError(f"{where} is a TorchScript archive (torch.jit.save), which "
                                 "chaingrad does not load")
        if f"{folder}/data.pkl" not in names:
            raise ModelFileError(f"{where} is a zip archive without {folder}/data.pkl: not a "
                                 "file of torch.save")
        overall = None if mmap_path is None else _mapped(mmap_path)
        loader = _StorageLoader(zf, folder, where, _restore(map_location), overall)
        unpickler = Unpickler(io.BytesIO(_record(zf, f"{folder}/data.pkl", where)),
                              TORCH_GLOBALS, LACKING, loader, weights_only=weights_only,
                              encoding=encoding)
        try:
            return unpickler.load()
        except (UnsafeGlobalError, ModelFileError, NotImplementedError, RuntimeError):
            raise
        except (EOFError, pickle.UnpicklingError, TypeError, ValueError, IndexError,
                KeyError, AttributeError, struct.error) as exc:
            if not weights_only and not isinstance(exc, (EOFError, pickle.UnpicklingError)):
                raise  # from the file's own classes, which it may run
            raise ModelFileError(f"{where} is corrupt: its data.pkl does not unpickle "
                                 f"({type(exc).__name__}: {exc})") from exc


MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
"""The first pickle of a file in torch's legacy format (``_use_new_zipfile_serialization=
False``, and PyTorch before 1.6)."""


def read_legacy(f: BinaryIO, where: str, map_location: Any = None, weights_only: bool = True,
                encoding: str = "utf-8") -> Any:
    """The object in a file of torch's legacy format: five pickles one after the other
    (the magic number, the protocol version 1001, the machine's description, the object,
    the keys of its storages in the order their bytes follow), then each storage's bytes,
    after its number of elements (8 bytes, little-endian). A tensor views a storage that
    is filled once the pickles are read, so storages are made empty first.

    Raises:
        ModelFileError: Not a file of this format, truncated or corrupt.
        UnsafeGlobalError: (weights_only) A global outside the allow list.
    """
    storages: dict[str, Storage] = {}
    restore = _restore(map_location)
    start = f.tell()
    size = f.seek(0, os.SEEK_END) - start
    f.seek(start)

    def storage(pid: tuple) -> Storage:
        if len(pid) != 6 or not (isinstance(pid[1], type) and issubclass(pid[1], StorageType)):
            raise ModelFileError(f"{where} is corrupt: a storage's id is {pid!r:.80}")
        _, kind, key, location, numel, view = pid
        key = _text(key)
        if view is not None:
            raise NotImplementedError(f"{where}: a storage view of torch's legacy format, "
                                      "which chaingrad does not read")
        if key not in storages:
            dtype = kind.numpy_dtype()
            if not isinstance(numel, int) or not 0 <= numel * dtype.itemsize <= size:
                raise ModelFileError(f"{where} is corrupt: a storage of {numel!r:.80} elements "
                                     f"in a file of {size} bytes")
            storages[key] = restore(Storage(np.zeros(numel, dtype)), _text(location))
        return storages[key]

    def unpickled() -> Any:
        return Unpickler(f, TORCH_GLOBALS, LACKING, storage, weights_only=weights_only,
                         encoding=encoding).load()

    try:
        if unpickled() != MAGIC_NUMBER:
            raise ModelFileError(f"{where} is not a file of torch.save (no magic number)")
        if unpickled() != 1001:
            raise ModelFileError(f"{where}: a legacy format other than protocol 1001")
        unpickled()  # the machine's description: its byte order, the sizes of C's types
        result = unpickled()
        keys = unpickled()
        for key in keys if isinstance(keys, list) else [None]:
            if key not in storages:
                raise ModelFileError(f"{where} is corrupt: its storage {key!r:.80} is not used")
            array = storages[key].array
            (numel,) = struct.unpack("<q", f.read(8))
            raw = f.read(array.nbytes)
            if numel != array.size or len(raw) != array.nbytes:
                raise ModelFileError(f"{where} is truncated or corrupt: storage {key} holds "
                                     f"{len(raw)} bytes, its tensors need {array.nbytes}")
            array.view(np.uint8)[:] = np.frombuffer(raw, np.uint8)
    except (UnsafeGlobalError, ModelFileError, NotImplementedError, RuntimeError):
        raise
    except (EOFError, pickle.UnpicklingError, TypeError, ValueError, IndexError, KeyError,
            AttributeError, struct.error) as exc:
        if not weights_only and not isinstance(exc, (EOFError, pickle.UnpicklingError)):
            raise
        raise ModelFileError(f"{where} is truncated or corrupt: {type(exc).__name__}: "
                             f"{exc}") from exc
    return result


def globals_in(f: BinaryIO, where: str) -> list[str]:
    """The globals (``module.name``) that the pickle of a file of torch.save names, read
    from its instructions without unpickling it (Python 2's module names as Python 3's).

    Example:
        >>> import io
        >>> f = io.BytesIO()
        >>> write({"w": Size([2])}, f)
        >>> globals_in(f, "example")
        ['torch.Size']
    """
    try:
        with zipfile.ZipFile(f) as zf:
            folder = zf.namelist()[0].split("/")[0] if zf.namelist() else ""
            pickled = _record(zf, f"{folder}/data.pkl", where)
        found = [arg for op, arg, _ in pickletools.genops(pickled) if op.name == "GLOBAL"]
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise ModelFileError(f"{where} is not a file of torch.save, or is corrupt "
                             f"({exc})") from exc
    names = []
    for module, _, name in (arg.partition(" ") for arg in found):
        full = f"{PYTHON2_MODULES.get(module, module)}.{name}"
        if full not in names:
            names.append(full)
    return names


class _StorageLoader:
    """The persistent_load of a file: each storage read (or mapped) once, from its record."""

    def __init__(self, zf: zipfile.ZipFile, folder: str, where: str, restore: Any,
                 overall: mmap.mmap | None) -> None:
        self.zf, self.folder, self.where, self.restore = zf, folder, where, restore
        self.overall = overall
        self.big = zf.read(f"{folder}/byteorder") == b"big" if (
            f"{folder}/byteorder" in zf.namelist()) else False
        self.loaded: dict[str, Storage] = {}

    def __call__(self, pid: tuple) -> Storage:
        if len(pid) != 5:
            raise ModelFileError(f"{self.where} is corrupt: a storage's id is {pid!r:.80}")
        _, kind, key, location, numel = pid
        key, location = _text(key), _text(location)
        if key in self.loaded:
            return self.loaded[key]
        if not (isinstance(kind, type) and issubclass(kind, StorageType)):
            raise ModelFileError(f"{self.where} is corrupt: {kind!r:.80} is not a storage type")
        dtype = kind.numpy_dtype()
        if not isinstance(numel, int) or numel < 0:
            raise ModelFileError(f"{self.where} is corrupt: a storage of {numel!r:.80} elements")
        name = f"{self.folder}/data/{key}"
        if self.overall is not None:
            start = _data_offset(self.zf, name, self.where, self.overall)
            if start + numel * dtype.itemsize > len(self.overall):
                raise ModelFileError(f"{self.where} is truncated: {name} ends past the file")
            array = np.frombuffer(self.overall, dtype, numel, start) if numel else (
                np.zeros(0, dtype))  # a base of its own: saved again, it is this storage
        else:
            array = _read_storage(self.zf, name, self.where, dtype, numel)
        if self.big:
            array = array.byteswap()
        storage = self.restore(Storage(array), location)
        self.loaded[key] = storage
        return storage


def _text(value: Any) -> str:
    return value.decode("ascii") if isinstance(value, bytes) else str(value)


def _record(zf: zipfile.ZipFile, name: str, where: str) -> bytes:
    try:
        return zf.read(name)
    except KeyError:
        raise ModelFileError(f"{where} is truncated or corrupt: it has no record {name}, "
                             "which its data.pkl names") from None
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ModelFileError(f"{where} is corrupt: record {name} cannot be read "
                             f"({exc})") from exc


def _read_storage(zf: zipfile.ZipFile, name: str, where: str, dtype: np.dtype,
                  numel: int) -> np.ndarray:
    """A storage's record read into a new array, its size checked before anything is
    allocated (a file cannot ask for more memory than it holds bytes)."""
    try:
        info = zf.getinfo(name)
        if info.file_size != numel * dtype.itemsize:
            raise ModelFileError(f"{where} is corrupt: {name} holds {info.file_size} bytes, "
                                 f"its tensors need {numel * dtype.itemsize}")
        array = np.empty(numel, dtype)
        with zf.open(info) as record:
            got = record.readinto(memoryview(array.view(np.uint8)))
    except KeyError:
        raise ModelFileError(f"{where} is truncated or corrupt: it has no record {name}, "
                             "which its data.pkl names") from None
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ModelFileError(f"{where} is corrupt: record {name} cannot be read "
                             f"({exc})") from exc
    if got != array.nbytes:
        raise ModelFileError(f"{where} is truncated: {name} gave {got} of its "
                             f"{array.nbytes} bytes")
    return array


def _mapped(path: str) -> mmap.mmap:
    """The file mapped into memory, copy on write (torch's default, MAP_PRIVATE)."""
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)


def _data_offset(zf: zipfile.ZipFile, name: str, where: str, overall: mmap.mmap) -> int:
    """Where a stored record's bytes start in the file (after its local header)."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ModelFileError(f"{where} is truncated or corrupt: it has no record "
                             f"{name}") from None
    header = bytes(overall[info.header_offset:info.header_offset + 30])
    if len(header) < 30 or info.compress_type != zipfile.ZIP_STORED:
        raise ModelFileError(f"{where}: record {name} is compressed or cut short; mmap needs "
                             "the file as torch.save writes it")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_length + extra_length


def _restore(map_location: Any) -> Any:
    """``(storage, location) -> storage``: where a storage goes, as torch.load's
    ``map_location`` says, on a machine with the CPU only."""

    def on_cpu(storage: Storage, location: str) -> Storage:
        if location.partition(":")[0] != "cpu":
            raise RuntimeError(NO_CUDA_LOAD if location.startswith("cuda") else
                               f"load: the file's storages are on {location!r}; chaingrad has "
                               "only the CPU (give map_location='cpu')")
        return storage

    if map_location is None:
        return on_cpu
    if isinstance(map_location, Mapping):
        return lambda storage, location: on_cpu(storage, _text(
            map_location.get(location, location)))
    if isinstance(map_location, (str, bytes, device)):
        return lambda storage, location: on_cpu(storage, str(device(_text(map_location))))

    def called(storage: Storage, location: str) -> Storage:
        result = map_location(storage, location)
        if result is None:
            return on_cpu(storage, location)
        if not isinstance(result, Storage):
            raise TypeError(f"load: map_location returned a {type(result).__name__}, expected "
                            "the storage it was given (or None)")
        return result

    return called

