"""chaingrad/cli/folders.py: the folder ``demo --out`` and ``graph -o`` write into, made
when missing and removed again when the run leaves it empty."""

from __future__ import annotations

import os

import pytest

from chaingrad.cli.folders import output_folder
from chaingrad.errors import UsageError


def test_the_output_folder_goes_again_when_nothing_was_written_in_it(tmp_path):
    out = tmp_path / "a" / "b"
    with pytest.raises(KeyboardInterrupt), output_folder(str(out), "--out"):
        assert out.is_dir()
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []  # both folders the run made
    with output_folder(str(out), "--out"):
        (out / "loss.png").write_bytes(b"x")
    assert [p.name for p in out.iterdir()] == ["loss.png"]
    with output_folder(str(tmp_path), "--out"):  # a folder that was there stays
        pass
    assert (tmp_path / "a").is_dir()


def test_a_relative_folder_is_made_and_given_back_as_it_was_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with output_folder(os.path.join("x", "y"), "-o x/y/g.svg") as folder:
        assert folder == os.path.join("x", "y") and (tmp_path / "x" / "y").is_dir()
    with output_folder("", "-o g.svg") as folder:  # a file in the current folder
        assert folder == "."
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("where", "message"), [
    ("afile/sub", "--out: cannot create the folder (Not a directory)"),
    ("afile", "--out: afile is not a folder"),
])
def test_a_folder_that_cannot_be_made_is_a_usage_error(where, message, tmp_path,
                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UsageError) as caught, output_folder(where, "--out"):
        pass
    assert str(caught.value) == message
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]
