"""``chaingrad.onnx``: ONNX export is not in chaingrad; ``import torch.onnx`` at the top of
a script works, and ``export`` says what to do instead.

Example:
    >>> import chaingrad as torch
    >>> torch.onnx.is_in_onnx_export()
    False
    >>> torch.onnx.export(None, ())
    Traceback (most recent call last):
    ...
    NotImplementedError: onnx.export is not in chaingrad yet: export the model from PyTorch \
(load its state dict into the same model under torch, then torch.onnx.export)
"""

from typing import Any

from . import torch_names


def export(model: Any, args: Any = (), f: Any = None, *more: Any, **options: Any) -> Any:
    """An error: chaingrad writes no ONNX (see the module)."""
    raise NotImplementedError("onnx.export is not in chaingrad yet: export the model from "
                              "PyTorch (load its state dict into the same model under torch, "
                              "then torch.onnx.export)")


def is_in_onnx_export() -> bool:
    """False: no export is ever running."""
    return False


__getattr__ = torch_names.submodules_on_use(__name__, (), torch_names.ONNX)
