"""Keep a trained model: ``save`` to safetensors, ``load`` it back, ``to_torch`` to export.

Two kinds of model are kept: the scalar ``MLP`` of Values, and the Tensor layers of
``chaingrad.layers`` (a ``Sequential`` of ``Linear``, ``Conv2d``, ``MaxPool2d``,
``Flatten``, ``ReLU``, ``Tanh``, ``Sigmoid``, ``Dropout``, ``Identity``).

The file is a standard safetensors file: one float32 array per named parameter
(``0.weight``, ``0.bias``, ... as PyTorch names an ``nn.Sequential``), and the
architecture as JSON under the metadata key ``chaingrad`` (the layer kinds and their
constructor arguments), so that ``load`` can rebuild the model and PyTorch can read the
weights directly. safetensors has no checksum, so ``save`` also stores ``chaingrad.sha256``:
the SHA-256 of the tensors' little-endian bytes in sorted-name order, which ``load`` checks
when it is there (files from elsewhere, without it, load too)::

    import safetensors.torch
    torch_model.load_state_dict(safetensors.torch.load_file("model.safetensors"))

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

import errno
import hashlib
import json
import os
import random
import struct
from typing import Any

from .files import write_atomic
from .nn import ACTIVATIONS, MLP, Module

FORMAT_VERSION = 1
METADATA_KEY = "chaingrad"
CHECKSUM_KEY = "chaingrad.sha256"
_DTYPES = ("F16", "F32", "F64")  # the safetensors dtypes that load reads
_TORCH_ACTIVATIONS = {"relu": "ReLU", "tanh": "Tanh", "sigmoid": "Sigmoid", "linear": "Identity"}

# The constructor arguments of each Tensor layer, and what each must be (see _ARG_KINDS).
_LAYER_ARGS: dict[str, dict[str, str]] = {
    "Linear": {"in_features": "size", "out_features": "size", "bias": "bool"},
    "Conv2d": {"in_channels": "size", "out_channels": "size", "kernel_size": "pair",
               "stride": "pair", "padding": "pair", "bias": "bool"},
    "MaxPool2d": {"kernel_size": "pair", "stride": "pair"},
    "Flatten": {"start_dim": "int"},
    "Dropout": {"p": "number"},
    "Sequential": {"layers": "list"},
    "ReLU": {}, "Tanh": {}, "Sigmoid": {}, "Identity": {},
}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_ARG_KINDS = {
    "size": (lambda v: _is_int(v) and v > 0, "a positive integer"),
    "int": (_is_int, "an integer"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
    "pair": (lambda v: isinstance(v, list) and len(v) == 2 and all(_is_int(n) and n >= 0
                                                                    for n in v),
             "a pair of integers >= 0"),
    "list": (lambda v: isinstance(v, list), "a list of layers"),
}


class ModelFileError(ValueError):
    """A model file that cannot be loaded: not safetensors, truncated, corrupt, or not
    holding the model it describes. The message names the file and what is wrong."""


def save(model: Module, path: str | os.PathLike) -> None:
    """Write ``model``'s weights (float32) and architecture to a safetensors file.

    The file is written to a temporary file in the same directory and then renamed over
    ``path``, so an interrupted save leaves either the old file or the new one, never a
    broken one.

    Args:
        model: A model with ``architecture()`` and ``state_dict()``: an ``MLP``, or a
            Tensor layer such as a ``Sequential`` (see the module docstring).
        path: Where to write, conventionally ``*.safetensors``.

    Raises:
        TypeError: The model cannot describe its architecture (e.g. a custom layer).
        ValueError: A weight does not fit in a float32.
        OSError: The file cannot be written (IsADirectoryError if ``path`` is a folder).

    Example:
        >>> import os, tempfile
        >>> from chaingrad.nn import MLP
        >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
        >>> save(MLP(3, [4, 2]), path)
        >>> sorted(load(path).state_dict())
        ['0.bias', '0.weight', '2.bias', '2.weight']
    """
    import numpy as np
    from safetensors.numpy import save as to_bytes

    if not callable(getattr(model, "architecture", None)):
        raise TypeError(f"save: expected a model with architecture() such as an MLP or a "
                        f"Sequential, got {type(model).__name__}")
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "save: expected a file path, got a folder",
                                os.fspath(path))
    arch = dict(model.architecture(), format_version=FORMAT_VERSION)
    arrays = {}
    for name, array in model.state_dict().items():
        # safetensors 0.8 writes a non-contiguous array's memory in the wrong order
        with np.errstate(over="ignore"):
            array32 = np.ascontiguousarray(array, dtype=np.float32)
        if not np.isfinite(array32).all():
            raise ValueError(f"save: {name} has values too large for float32 "
                             f"(largest magnitude {np.abs(array).max():g})")
        arrays[name] = array32
    metadata = {METADATA_KEY: json.dumps(arch), CHECKSUM_KEY: _checksum(arrays)}
    write_atomic(path, to_bytes(arrays, metadata=metadata))


def load(path: str | os.PathLike, model: Module | None = None) -> Module:
    """Rebuild the model saved at ``path`` (or load its weights into ``model``).

    Args:
        path: A file written by ``save``.
        model: If given, a model of the same architecture whose weights are replaced (in
            place, and only once the whole file has been checked).

    Returns:
        The model: a new one, or ``model``.

    Raises:
        ModelFileError: The file is not a chaingrad safetensors file, is truncated or
            corrupt, or its weights do not match its architecture (or ``model``'s). No
            model is changed.
        OSError: The file cannot be read (e.g. FileNotFoundError).

    Example:
        >>> import os, tempfile
        >>> from chaingrad.nn import MLP
        >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
        >>> save(MLP(2, [3, 1]), path)
        >>> other = MLP(2, [3, 1])
        >>> load(path, model=other) is other   # its weights replaced by the file's
        True
    """
    with open(path, "rb") as f:
        data = f.read()
    arch, expected_sum = _read_architecture(path, data)
    try:
        from safetensors.numpy import load as from_bytes

        arrays = from_bytes(data)
    except Exception as exc:  # safetensors raises its own error types for a bad body
        raise ModelFileError(f"load: {os.fspath(path)!r} is corrupt: {exc}") from exc
    if expected_sum is not None and _checksum(arrays) != expected_sum:
        raise ModelFileError(f"load: {os.fspath(path)!r} is corrupt: checksum mismatch (its "
                             f"tensors' SHA-256 is not the {CHECKSUM_KEY} saved with them)")
    if model is None:
        try:
            model = _build(arch)
        except (TypeError, ValueError) as exc:  # e.g. Dropout(p=1.5): the layer refuses
            raise ModelFileError(f"load: {os.fspath(path)!r}: cannot build "
                                 f"{_describe(arch)}: {exc}") from exc
    elif not callable(getattr(model, "architecture", None)) or model.architecture() != {
        k: v for k, v in arch.items() if k != "format_version"
    }:
        got = _describe(model.architecture()) if hasattr(model, "architecture") else model
        raise ModelFileError(f"load: {os.fspath(path)!r} holds {_describe(arch)}, "
                             f"but the model given is {got}")
    try:
        model.load_state_dict(arrays)
    except ValueError as exc:
        raise ModelFileError(f"load: {os.fspath(path)!r} does not match its "
                             f"architecture {_describe(arch)}: {exc}") from exc
    return model


def to_torch(model: Module, dtype: Any = None) -> Any:
    """The same network as a ``torch.nn`` module holding chaingrad's weights.

    ``MLP(2, [16, 16, 1])`` becomes ``Sequential(Linear(2, 16), ReLU(), Linear(16, 16),
    ReLU(), Linear(16, 1))``; a Tensor ``Sequential`` becomes the ``nn.Sequential`` of
    the same layers (in the same train/eval mode). Either gives the same outputs.

    Args:
        model: An ``MLP`` or a Tensor layer such as a ``Sequential``.
        dtype: The torch dtype of the weights (default: torch's default, float32).

    Example:
        >>> import random, torch; random.seed(0)
        >>> model = MLP(2, [4, 1])
        >>> net = to_torch(model, dtype=torch.float64)
        >>> abs(net(torch.tensor([0.5, -1.0], dtype=torch.float64)).item()
        ...     - model([0.5, -1.0]).data) < 1e-12
        True
    """
    import torch

    if isinstance(model, MLP):
        arch = model.architecture()
        sizes = [arch["nin"], *arch["nouts"]]
        layers: list[Any] = []
        for i in range(len(arch["nouts"])):
            if i > 0:  # an Identity keeps PyTorch's names 0, 2, 4, ... for a linear MLP too
                layers.append(getattr(torch.nn, _TORCH_ACTIVATIONS[arch["activation"]])())
            layers.append(torch.nn.Linear(sizes[i], sizes[i + 1], dtype=dtype))
        net = torch.nn.Sequential(*layers)
    elif type(model).__module__ == "chaingrad.nn.layers":
        net = _torch_layer(model.architecture(), torch.nn, dtype)
        net.train(model.training)
    else:
        raise TypeError(f"to_torch: expected an MLP or a Tensor layer such as a Sequential, "
                        f"got {type(model).__name__}")
    target = torch.get_default_dtype() if dtype is None else dtype
    state = {k: torch.tensor(v, dtype=target) for k, v in model.state_dict().items()}
    net.load_state_dict(state, strict=True)
    return net


def _torch_layer(arch: dict[str, Any], nn: Any, dtype: Any) -> Any:
    """The torch.nn module for one entry of a Tensor model's architecture."""
    kind = arch["type"]
    args = {k: tuple(v) if isinstance(v, list) else v for k, v in arch.items()
            if k not in ("type", "layers")}
    if kind == "Sequential":
        return nn.Sequential(*(_torch_layer(layer, nn, dtype) for layer in arch["layers"]))
    if kind in ("Linear", "Conv2d"):
        args["dtype"] = dtype
    return getattr(nn, kind)(**args)


# ---- reading the header ----


def _checksum(arrays: dict[str, Any]) -> str:
    """The SHA-256 (hex) of the arrays' little-endian C-order bytes, in sorted-name order."""
    import numpy as np

    digest = hashlib.sha256()
    for _, array in sorted(arrays.items()):  # sorted by name: the names are unique
        digest.update(np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes())
    return digest.hexdigest()


def _read_architecture(path: str | os.PathLike, data: bytes) -> tuple[dict[str, Any], str | None]:
    """Check the safetensors header by hand (for precise errors); return the architecture
    and the stored checksum (None in a file saved without one)."""
    where = f"load: {os.fspath(path)!r}"
    if len(data) < 8:
        raise ModelFileError(f"{where} is not a safetensors file (only {len(data)} bytes)")
    (header_size,) = struct.unpack("<Q", data[:8])
    if header_size > len(data) - 8:
        raise ModelFileError(f"{where} is truncated or not a safetensors file (its header "
                             f"claims {header_size} bytes, the file has {len(data) - 8} more)")
    try:
        header = json.loads(data[8 : 8 + header_size].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{where} is not a safetensors file (bad header: {exc})") from exc
    if not isinstance(header, dict):
        raise ModelFileError(f"{where} is not a safetensors file (the header is not a map)")
    _check_tensors(where, header, len(data) - 8 - header_size)
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict) or METADATA_KEY not in metadata:
        raise ModelFileError(f"{where} has no chaingrad architecture in its metadata "
                             f"(key {METADATA_KEY!r}); was it written by chaingrad.save?")
    try:
        arch = json.loads(metadata[METADATA_KEY])
    except (TypeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{where}: the architecture metadata is not JSON ({exc})") from exc
    if not isinstance(arch, dict) or arch.get("type") not in ("MLP", *_LAYER_ARGS):
        raise ModelFileError(f"{where}: unknown architecture {arch!r} (expected type 'MLP' "
                             f"or one of {', '.join(_LAYER_ARGS)})")
    version = arch.get("format_version")
    if version != FORMAT_VERSION:
        raise ModelFileError(f"{where}: format_version {version!r} is not supported "
                             f"(this chaingrad reads {FORMAT_VERSION})")
    arch = {k: v for k, v in arch.items() if k != "format_version"}
    if arch["type"] == "MLP":
        _check_mlp(where, arch)
    else:
        _check_layer(where, arch, "")
    count = _weight_count(arch)
    if 4 * count > len(data):  # refuse before allocating what a corrupt header asks for
        raise ModelFileError(f"{where}: its architecture needs {count} float32 weights, more "
                             f"than the file's {len(data)} bytes can hold")
    checksum = metadata.get(CHECKSUM_KEY)
    return arch, checksum if isinstance(checksum, str) else None


def _check_tensors(where: str, header: dict[str, Any], body: int) -> None:
    """Refuse dtypes load cannot read, and a body shorter than the header describes."""
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
        if isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_int, offsets)):
            end = max(end, offsets[1])
    if body < end:
        raise ModelFileError(f"{where} is truncated: its header describes {end} bytes of "
                             f"tensor data, the file has {body}")


def _check_mlp(where: str, arch: dict[str, Any]) -> None:
    nin, nouts, activation = arch.get("nin"), arch.get("nouts"), arch.get("activation")
    sizes = [nin, *nouts] if isinstance(nouts, list) and nouts else [None]
    if not all(_is_int(n) and n > 0 for n in sizes):
        raise ModelFileError(f"{where}: bad layer sizes nin={nin!r}, nouts={nouts!r} "
                             "(expected positive integers)")
    if activation not in ACTIVATIONS:
        raise ModelFileError(f"{where}: bad activation {activation!r} "
                             f"(expected one of {ACTIVATIONS})")


def _check_layer(where: str, arch: Any, at: str) -> None:
    """Check one layer's entry (and a Sequential's layers, recursively) against _LAYER_ARGS."""
    kind = arch.get("type") if isinstance(arch, dict) else None
    if kind not in _LAYER_ARGS:
        raise ModelFileError(f"{where}: layer{at} is {arch!r}, expected a map with a type "
                             f"in {', '.join(_LAYER_ARGS)}")
    wanted = _LAYER_ARGS[kind]
    given = set(arch) - {"type"}
    if given != set(wanted):
        raise ModelFileError(f"{where}: {kind}{at or ''} has arguments {sorted(given)}, "
                             f"expected {sorted(wanted)}")
    for name, kind_of_arg in wanted.items():
        ok, expected = _ARG_KINDS[kind_of_arg]
        if not ok(arch[name]):
            raise ModelFileError(f"{where}: {kind}{at} has {name}={arch[name]!r}, expected "
                                 f"{expected}")
    for i, layer in enumerate(arch.get("layers", [])):
        _check_layer(where, layer, f"{at}.layers[{i}]" if at else f" layers[{i}]")


def _weight_count(arch: dict[str, Any]) -> int:
    """How many numbers the model holds, from its (checked) architecture."""
    kind = arch["type"]
    if kind == "MLP":
        sizes = [arch["nin"], *arch["nouts"]]
        return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))
    if kind == "Sequential":
        return sum(_weight_count(layer) for layer in arch["layers"])
    if kind == "Linear":
        return (arch["in_features"] + arch["bias"]) * arch["out_features"]
    if kind == "Conv2d":
        kh, kw = arch["kernel_size"]
        return arch["out_channels"] * (arch["in_channels"] * kh * kw + arch["bias"])
    return 0


def _build(arch: dict[str, Any]) -> Module:
    """The model of a checked architecture, with fresh weights; the caller's random
    sequences (``random`` for an MLP, ``chaingrad.layers``' generator) are kept."""
    if arch["type"] == "MLP":
        state = random.getstate()
        try:
            return MLP(arch["nin"], arch["nouts"], activation=arch["activation"])
        finally:
            random.setstate(state)
    from .nn import layers

    state = layers._rng.bit_generator.state
    try:
        return _build_layer(arch, layers)
    finally:
        layers._rng.bit_generator.state = state


def _build_layer(arch: dict[str, Any], layers: Any) -> Module:
    args = {k: v for k, v in arch.items() if k not in ("type", "layers")}
    if arch["type"] == "Sequential":
        return layers.Sequential(*(_build_layer(layer, layers) for layer in arch["layers"]))
    return getattr(layers, arch["type"])(**args)


def _describe(arch: dict[str, Any]) -> str:
    """A short constructor-like text: ``MLP(2, [16, 1], ...)``, ``Sequential(Linear(...))``."""
    if arch.get("type") == "MLP":
        return (f"MLP({arch.get('nin')}, {arch.get('nouts')}, "
                f"activation={arch.get('activation')!r})")
    if arch.get("type") == "Sequential":
        return f"Sequential({', '.join(_describe(layer) for layer in arch['layers'])})"
    args = ", ".join(f"{k}={v!r}" for k, v in arch.items() if k not in ("type",
                                                                        "format_version"))
    return f"{arch.get('type')}({args})"
