"""chaingrad.backends: torch's kernel switches, kept and changing nothing, as on torch's CPU
build; set/get_float32_matmul_precision."""

import pytest

import chaingrad
import chaingrad.backends.cudnn

FLAGS = ["cuda.matmul.allow_tf32", "cuda.matmul.allow_fp16_reduced_precision_reduction",
         "cuda.matmul.allow_bf16_reduced_precision_reduction", "cudnn.allow_tf32",
         "cudnn.benchmark", "cudnn.deterministic", "cudnn.enabled"]
QUESTIONS = ["mps.is_available()", "mps.is_built()", "cuda.is_built()", "cudnn.is_available()",
             "cudnn.version()", "cuda.flash_sdp_enabled()", "cuda.math_sdp_enabled()",
             "cuda.mem_efficient_sdp_enabled()", "cuda.cudnn_sdp_enabled()"]


@pytest.mark.parametrize("name", FLAGS + QUESTIONS)
def test_each_reads_as_on_torchs_cpu_build(torch, name):
    assert eval(f"b.{name}", {"b": chaingrad.backends}) == \
        eval(f"b.{name}", {"b": torch.backends})  # noqa: S307


@pytest.fixture
def flags_put_back():
    """Every flag of FLAGS as it was, after the test."""
    saved = {name: eval(f"b.{name}", {"b": chaingrad.backends}) for name in FLAGS}  # noqa: S307
    yield
    for name, value in saved.items():
        holder, _, attr = name.rpartition(".")
        setattr(eval(f"b.{holder}", {"b": chaingrad.backends}), attr, value)  # noqa: S307


def test_setting_the_flags_changes_no_number(flags_put_back):
    chaingrad.manual_seed(0)
    a, b = chaingrad.randn(8, 16), chaingrad.randn(16, 4)
    before = (a @ b).tolist()
    for name in FLAGS:
        holder, _, attr = name.rpartition(".")
        setattr(eval(f"b.{holder}", {"b": chaingrad.backends}), attr, True)  # noqa: S307
    chaingrad.set_float32_matmul_precision("medium")
    try:
        assert (a @ b).tolist() == before
    finally:
        chaingrad.set_float32_matmul_precision("highest")
    assert chaingrad.backends.cuda.matmul.allow_tf32 is True


def test_the_matmul_precision_reads_back_as_torchs(torch):
    for library in (torch, chaingrad):
        assert library.get_float32_matmul_precision() == "highest"
        library.set_float32_matmul_precision("high")
        assert library.get_float32_matmul_precision() == "high"
        library.set_float32_matmul_precision("highest")


def test_a_precision_torch_does_not_take_is_refused():
    with pytest.raises(ValueError, match=r"'bogus' is not one of 'highest', 'high', or 'medium'"):
        chaingrad.set_float32_matmul_precision("bogus")
    assert chaingrad.get_float32_matmul_precision() == "highest"


def test_a_backend_chaingrad_lacks_is_named():
    with pytest.raises(chaingrad.errors.TorchNameError,
                       match=r"^chaingrad.backends has no 'mkldnn' yet$"):
        chaingrad.backends.mkldnn  # noqa: B018
