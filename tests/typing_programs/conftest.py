"""The programs here are checked by pyright and mypy (tests/test_typing.py), which also runs
the two that are meant to run; pytest must not import them (``--doctest-modules`` would run
each one at collection time)."""

collect_ignore_glob = ["*.py"]
