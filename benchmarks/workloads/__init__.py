"""The workloads of ``benchmarks/run.py`` and the engines they run on.

``engines`` wraps each scalar engine (chaingrad's Value, micrograd and its forks, PyTorch on
0-d tensors, micrograd-cpp-engine) behind one small interface; ``scalar`` holds S1-S3 and
``tensor`` T1-T3; ``worker`` runs a workload in another interpreter (an engine that lives
in its own virtualenv); ``report`` prints the table and writes the JSON.

The modules that a worker imports (``engines``, ``scalar``, ``worker``) need only the
standard library at import time: a competitor's virtualenv has neither chaingrad nor torch.
"""
