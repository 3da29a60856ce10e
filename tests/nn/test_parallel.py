"""chaingrad.nn.parallel: DataParallel runs the model, as torch's without GPUs;
DistributedDataParallel imports, and wrapping a model in it is PyTorch's path."""

import numpy as np
import pytest

import chaingrad
from chaingrad.errors import NoCudaError, SingleProcessError
from chaingrad.nn.parallel import DistributedDataParallel as DDP  # noqa: N817 - nanoGPT's


def test_data_parallel_runs_the_model_and_names_it_module_as_torchs(torch):
    ours = chaingrad.nn.DataParallel(chaingrad.nn.Linear(3, 2))
    theirs = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    theirs.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in
                            ours.state_dict().items()})
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(chaingrad.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    assert isinstance(ours, chaingrad.nn.parallel.DataParallel)


def test_data_parallel_over_gpus_is_refused():
    with pytest.raises(NoCudaError, match="Torch not compiled with CUDA enabled"):
        chaingrad.nn.DataParallel(chaingrad.nn.Linear(3, 2), device_ids=[0])


def test_distributed_data_parallel_is_the_multi_process_path():
    with pytest.raises(SingleProcessError, match="^DistributedDataParallel: chaingrad runs in "
                                                 "one process"):
        DDP(chaingrad.nn.Linear(3, 2), device_ids=[0])
