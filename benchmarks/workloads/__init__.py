"""The workloads of ``benchmarks/run.py`` and ``versions.py`` and the engines they run on.

``suite`` names the workloads and their sizes; ``engines`` wraps each scalar engine
(chaingrad's Value, micrograd and its forks, PyTorch on 0-d tensors, micrograd-cpp-engine)
behind one small interface; ``scalar`` holds S1-S3 and ``tensor`` T1-T3; ``worker`` runs a
workload in another interpreter (an engine that lives in its own virtualenv, or a chaingrad
source tree); ``contest`` takes the turns; ``report`` prints the table and writes the JSON;
``usage`` holds the scripts' command-line errors.

The modules that a worker imports (``engines``, ``scalar``, ``worker``) need only the
standard library at import time: a competitor's virtualenv has neither chaingrad nor torch.
"""
