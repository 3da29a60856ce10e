"""chaingrad.distributed: one process; the questions a one-process run asks answered as
torch's, a process group refused in words that say where that path runs."""

import pytest

import chaingrad
import chaingrad.distributed as dist
from chaingrad.errors import SingleProcessError

ONE_PROCESS = (r"chaingrad runs in one process: this program's multi-process path runs on "
               r"PyTorch, with the imports changed back \(import torch\)")


def test_the_questions_of_a_one_process_run_are_answered_as_torchs(torch, monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    for call in ("is_available()", "is_initialized()", "is_torchelastic_launched()"):
        assert eval(f"d.{call}", {"d": dist}) == \
            eval(f"d.{call}", {"d": torch.distributed})  # noqa: S307
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "1")
    assert dist.is_torchelastic_launched() == torch.distributed.is_torchelastic_launched()


def test_starting_a_process_group_says_that_path_runs_on_pytorch():
    with pytest.raises(SingleProcessError, match="^init_process_group: " + ONE_PROCESS):
        dist.init_process_group(backend="nccl")
    assert not dist.is_initialized()


@pytest.mark.parametrize("call", ["get_rank()", "get_world_size()", "barrier()",
                                  "get_backend()", "all_reduce(x, op=d.ReduceOp.AVG)",
                                  "broadcast(x, 0)", "all_gather([x], x)"])
def test_a_collective_without_a_group_raises_torchs_value_error(torch, call):
    words = "Default process group has not been initialized"
    for library in (torch, chaingrad):
        space = {"d": library.distributed, "x": library.ones(1)}
        with pytest.raises(ValueError, match=words):
            eval(f"d.{call}", space)  # noqa: S307


def test_the_reduce_ops_are_torchs():
    assert {op.name for op in dist.ReduceOp} >= {"SUM", "AVG", "PRODUCT", "MIN", "MAX"}
