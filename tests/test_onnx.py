"""chaingrad.onnx: ``import torch.onnx`` works; export says it is not there."""

import pytest

import chaingrad
import chaingrad.onnx


def test_export_says_it_is_not_in_chaingrad_and_what_to_do():
    with pytest.raises(NotImplementedError, match=r"onnx.export is not in chaingrad yet: "
                                                  "export the model from PyTorch"):
        chaingrad.onnx.export(chaingrad.nn.Linear(2, 1), (chaingrad.ones(1, 2),), "m.onnx")
    assert chaingrad.onnx.is_in_onnx_export() is False


def test_its_other_names_are_named_as_missing():
    with pytest.raises(chaingrad.errors.TorchNameError, match="chaingrad.onnx has no "
                                                              "'ONNXProgram' yet"):
        chaingrad.onnx.ONNXProgram  # noqa: B018
