"""The rule of conftest.py: under CHAINGRAD_NO_SKIPS=1 (as on CI) one skip fails the run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")


@pytest.mark.slow  # runs pytest in a fresh process
@pytest.mark.parametrize(("no_skips", "exit_code"), [(None, 0), ("1", 1)])
def test_a_skip_fails_the_run_only_under_no_skips(tmp_path, no_skips, exit_code):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    shutil.copy(CONFTEST.with_name("numerics.py"), tmp_path / "numerics.py")  # it imports
    (tmp_path / "test_inner.py").write_text(
        "import pytest\n\n"
        "def test_runs():\n    pass\n\n"
        "def test_needs_something():\n    pytest.skip('the inner test needs a browser')\n")
    env = {k: v for k, v in os.environ.items() if k != "CHAINGRAD_NO_SKIPS"}
    if no_skips is not None:
        env["CHAINGRAD_NO_SKIPS"] = no_skips
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-c",
         os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert result.returncode == exit_code, result.stdout + result.stderr
    assert "the inner test needs a browser" in result.stdout  # the reason is shown either way
    if exit_code:
        assert "CHAINGRAD_NO_SKIPS=1: 1 test(s) were skipped" in result.stdout


@pytest.mark.slow  # runs pytest in a fresh process
@pytest.mark.parametrize(("marks", "quick"), [([], False), (["-m", "not slow"], True)])
def test_the_quick_loop_draws_a_fifth_of_the_examples(tmp_path, marks, quick):
    """``pytest -m "not slow"`` sets numerics.QUICK: examples(50) draws 10 there, 50 in the
    full run (CI's)."""
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    shutil.copy(CONFTEST.with_name("numerics.py"), tmp_path / "numerics.py")
    (tmp_path / "test_inner.py").write_text(
        "import numerics\n\n"
        "def test_examples():\n"
        f"    assert numerics.QUICK is {quick}\n"
        f"    assert numerics.examples(50).max_examples == {10 if quick else 50}\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull,
         "--rootdir", str(tmp_path), *marks, str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
