"""The programs here are scripts, run by tests/test_torch_programs.py in fresh interpreters
under torch and under chaingrad; pytest must not import them (``--doctest-modules`` would
run each one at collection time)."""

collect_ignore_glob = ["*.py"]
