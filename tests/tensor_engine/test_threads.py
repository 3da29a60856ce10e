"""torch's thread functions: chaingrad's govern numpy's BLAS threads (threadpoolctl), with
torch's default and torch's argument checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from threadpoolctl import threadpool_info

import chaingrad
from chaingrad.tensor_engine import threads

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

REPORT = ("import json, {module} as m\n"
          "print(json.dumps([m.get_num_threads(), m.get_num_interop_threads()]))\n")


def _fresh(module: str, **variables: str) -> list[int]:
    """[get_num_threads(), get_num_interop_threads()] of ``module`` in a fresh process
    whose environment has no thread variable but ``variables``."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES} | variables
    done = subprocess.run([sys.executable, "-c", REPORT.format(module=module)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("variables", [{}, {"OMP_NUM_THREADS": "1"}, {"MKL_NUM_THREADS": "3"}],
                         ids=["no variable", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=3"])
def test_the_defaults_are_torchs(torch, variables):
    assert _fresh("chaingrad", **variables) == _fresh("torch", **variables)


@pytest.fixture
def blas_threads():
    """Put the BLAS's thread count back after the test."""
    before = chaingrad.get_num_threads()
    yield
    chaingrad.set_num_threads(before)


@pytest.mark.parametrize("n", [1, 3])
def test_set_num_threads_sets_the_blas_threads(blas_threads, n):
    chaingrad.set_num_threads(n)
    assert chaingrad.get_num_threads() == n
    assert {pool["num_threads"] for pool in threadpool_info()
            if pool["user_api"] == "blas"} == {n}


@pytest.mark.parametrize("name", ["set_num_threads", "set_num_interop_threads"])
@pytest.mark.parametrize("n", [0, -1, 2.0, "2", True, None])
def test_a_bad_count_is_refused_as_torch_refuses_it(torch, monkeypatch, name, n):
    monkeypatch.setattr(threads, "_interop", [None])  # as if never set
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch, name)(n)
    with pytest.raises(RuntimeError) as ours:
        getattr(chaingrad, name)(n)
    assert str(ours.value) == str(theirs.value)


def test_interop_threads_are_set_once_as_in_torch(monkeypatch):
    monkeypatch.setattr(threads, "_interop", [None])
    chaingrad.set_num_interop_threads(3)
    assert chaingrad.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads after"):
        chaingrad.set_num_interop_threads(2)
    assert chaingrad.get_num_interop_threads() == 3


def test_without_threadpoolctl_set_num_threads_names_it(run_python):
    done = run_python("import sys; sys.modules['threadpoolctl'] = None\n"
                      "import chaingrad\n"
                      "print(chaingrad.get_num_threads() >= 1)\n"
                      "chaingrad.set_num_threads(1)\n")
    assert done.stdout == "True\n"
    assert "pip install 'chaingrad[tensor]'" in done.stderr.splitlines()[-1]
