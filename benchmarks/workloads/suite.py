"""The suite that ``run.py`` and ``versions.py`` both run: workload ids, sizes, metrics, titles.

Kept in one place so that a comparison of two chaingrad trees (``versions.py``) times
exactly the workloads that the side-by-side run (``run.py``) times. Only the standard
library is imported here; ``moons`` imports numpy and scikit-learn when called.
"""

from __future__ import annotations

from typing import Any

from . import engines, scalar

WORKLOADS = ("S1", "S2", "S2c", "S3", "T1", "T2", "T3", "T4", "T5", "T6", "T7")
SIZES = {
    "full": {"s1_ops": 100_002, "s2_points": 100, "s2_steps": 3, "s3_width": 32,
             "s3_depth": 319, "s3_max_repeats": 3, "t1_batches": (128, 1024),
             "t1_steps": (10, 3), "t2_batch": 64, "t2_steps": 5, "t3_ops": 10_002,
             "t4_batch": 32, "t4_steps": 100, "t5_batch": 16, "t5_steps": 3,
             "t6_batch": 12, "t6_steps": 2, "t7_batch": 12, "t7_steps": 2},
    "quick": {"s1_ops": 300, "s2_points": 10, "s2_steps": 1, "s3_width": 4, "s3_depth": 3,
              "s3_max_repeats": 1, "t1_batches": (8, 16), "t1_steps": (1, 1), "t2_batch": 8,
              "t2_steps": 1, "t3_ops": 30, "t4_batch": 4, "t4_steps": 1, "t5_batch": 2,
              "t5_steps": 1, "t6_batch": 2, "t6_steps": 1, "t7_batch": 2, "t7_steps": 1},
}
METRICS = {"S1": ("fwd ns/op", "bwd ns/op"), "S2": ("ms/step",),
           "S2c": ("ms/step", "compile ms", "ms/step incl. compile/100"),
           "S3": ("ns/node", "fwd ms", "bwd ms", "tracemalloc B/node", "rss B/node"),
           "T1": ("ms/step",), "T2": ("ms/step",), "T3": ("fwd ns/op", "bwd ns/op"),
           "T4": ("ms/step",), "T5": ("ms/step",), "T6": ("ms/step",), "T7": ("ms/step",)}
"""Per workload, the metrics a row reports (S3's last two come from ``worker.py probe``)."""


def moons(points: int) -> tuple[Any, Any]:
    """The notebook's data: ``np.random.seed(1337)``, make_moons(noise=0.1), y in {-1, 1}."""
    try:
        import numpy as np
        from sklearn.datasets import make_moons
    except ImportError:
        raise engines.MissingError("S2 needs numpy and scikit-learn's make_moons: "
                                   "pip install numpy scikit-learn") from None
    np.random.seed(1337)
    X, y = make_moons(n_samples=points, noise=0.1)
    return X, y * 2 - 1


def tensor_runs(wid: str, sizes: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(table key, batch, steps per block) of tensor workload ``wid``: T1 has one per batch."""
    if wid == "T1":
        return [(f"T1/{batch}", batch, steps)
                for batch, steps in zip(sizes["t1_batches"], sizes["t1_steps"])]
    if wid == "T3":  # one chain of t3_ops per block
        return [(wid, 1, 1)]
    return [(wid, sizes[f"{wid.lower()}_batch"], sizes[f"{wid.lower()}_steps"])]


def titles(sizes: dict[str, Any]) -> dict[str, str]:
    """The heading of each table, keyed like the rows (``T1/128``, ``T1/1024``, ...)."""
    nodes = scalar.deep_mlp_nodes(sizes["s3_width"], sizes["s3_depth"])
    t = {"S1": f"S1: scalar chain of {sizes['s1_ops']:,} ops, y = relu(y * w + b); ns per op",
         "S2": f"S2: micrograd's demo step, MLP(2, [16, 16, 1]) on {sizes['s2_points']} moons "
               f"points, SVM loss + 1e-4 L2, SGD; blocks of {sizes['s2_steps']} timed steps "
               "after an untimed one",
         "S2c": "S2 compiled: the same step, its loss made by chaingrad.compile (compile time "
                "apart, and amortised over 100 steps); against the others' eager step",
         "S3": f"S3: deep scalar MLP, {sizes['s3_width']} wide x {sizes['s3_depth']} ReLU "
               f"layers = {nodes:,} nodes; fwd+bwd time per node, peak bytes per node",
         "T2": f"T2: digits CNN step (conv8-pool-conv16-pool-linear), batch "
               f"{sizes['t2_batch']}, float32, SGD",
         "T3": f"T3: chain of {sizes['t3_ops']:,} 1-element float32 tensor ops, "
               "y = relu(y * w + b); ns per op",
         "T4": f"T4: makemore part 2's MLP step (context 3, embedding 10, tanh 200, 27 "
               f"classes, cross-entropy, p.data += -lr * p.grad), batch {sizes['t4_batch']}",
         "T5": f"T5: the GPT lecture's training iteration (block 32, n_embd 64, 4 heads, 2 "
               f"layers, dropout 0.2, AdamW), batch {sizes['t5_batch']}",
         "T6": f"T6: nanoGPT's GPT (block 64, n_embd 128, 4 heads, 4 layers, GELU, LayerNorm, "
               f"dropout 0, tied output, AdamW), batch {sizes['t6_batch']}",
         "T7": f"T7: nanoGPT's CPU recipe as train.py runs it (T6's GPT without biases, "
               f"scaled_dot_product_attention where the library has it, clip_grad_norm_ 1.0), "
               f"batch {sizes['t7_batch']}"}
    for batch in sizes["t1_batches"]:
        t[f"T1/{batch}"] = (f"T1: MLP 784-128-10 step (ReLU, cross-entropy, SGD), batch "
                            f"{batch}, float32")
    return t
