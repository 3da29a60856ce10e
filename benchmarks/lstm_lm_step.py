"""How long does an LSTM language model's training step take, chaingrad against torch?

The model and step of PyTorch's word_language_model example, at its small sizes: an
embedding of 200, a 2-layer LSTM of 200 hidden units, a decoder to a vocabulary of 1000,
batches of 20 sequences of 35 tokens (bptt), cross-entropy, ``clip_grad_norm_(0.25)`` and
SGD, the hidden state carried from batch to batch (detached). Each run is its own process
on one thread (OMP/OPENBLAS/MKL_NUM_THREADS=1, ``torch.set_num_threads(1)``) and times
``--steps`` steps after two untimed ones; the table gives each engine's median over
``--runs`` runs and chaingrad's ratio to torch's.

    python benchmarks/lstm_lm_step.py [--runs 5] [--steps 20] [--model GRU]
    python benchmarks/lstm_lm_step.py --engine chaingrad   # one run: its seconds per step

The ``numpy (by hand)`` row is the same step written out in plain numpy, no graph
(``workloads/by_hand.py``'s ``LstmLmByHand``, from the chaingrad model's initial weights,
on the same batches): the floor under any engine that computes with numpy (LSTM only).

``--model GRU`` (``RNN_TANH``, ``RNN_RELU``) runs the same step with a GRU (an Elman RNN), as
word_language_model's ``--model``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (or torch) is imported anywhere in this process

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads.by_hand import LstmLmByHand  # noqa: E402

VOCAB, EMBED, HIDDEN, LAYERS, BATCH, BPTT = 1000, 200, 200, 2, 20, 35
LR, CLIP = 20.0, 0.25
ENGINES = ("torch", "chaingrad", "numpy")
"""The engines, each run in a process of its own: ``numpy`` is the step written out by hand
in plain numpy (``workloads.by_hand.LstmLmByHand``, LSTM only), the floor under chaingrad."""
LABELS = {"torch": "torch", "chaingrad": "chaingrad", "numpy": "numpy (by hand)"}
MODELS = ("LSTM", "GRU", "RNN_TANH", "RNN_RELU")


def build(torch: Any, steps: int, rnn_type: str = "LSTM") -> tuple[Any, Any, list[Any], Any]:
    """The benchmark's model (word_language_model's ``RNNModel``, ``rnn_type`` from
    ``MODELS``), its SGD, ``steps`` blocks of (BPTT + 1, BATCH) tokens and the zero hidden
    state, built by ``torch`` (torch, or chaingrad imported as torch)."""
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Embedding(VOCAB, EMBED)
            self.rnn = (getattr(nn, rnn_type)(EMBED, HIDDEN, LAYERS) if rnn_type in ("LSTM", "GRU")
                        else nn.RNN(EMBED, HIDDEN, LAYERS, nonlinearity=rnn_type[4:].lower()))
            self.decoder = nn.Linear(HIDDEN, VOCAB)

        def forward(self, tokens: Any, hidden: Any) -> Any:
            output, hidden = self.rnn(self.encoder(tokens), hidden)
            return self.decoder(output).view(-1, VOCAB), hidden

    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    rng = np.random.default_rng(0)
    batches = [torch.tensor(rng.integers(0, VOCAB, (BPTT + 1, BATCH))) for _ in range(steps)]
    hidden = (torch.zeros(LAYERS, BATCH, HIDDEN), torch.zeros(LAYERS, BATCH, HIDDEN))
    if rnn_type != "LSTM":
        hidden = hidden[0]
    return model, optimizer, batches, hidden


def train_step(torch: Any, model: Any, optimizer: Any, batch: Any, hidden: Any) -> Any:
    """One step of word_language_model's ``train()``: the hidden state detached, the loss,
    the backward, ``clip_grad_norm_(CLIP)``, SGD; the new hidden state."""
    nn = torch.nn
    hidden = hidden.detach() if not isinstance(hidden, tuple) else tuple(h.detach() for h in hidden)
    optimizer.zero_grad()
    output, hidden = model(batch[:-1], hidden)
    loss = nn.functional.cross_entropy(output, batch[1:].reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    optimizer.step()
    return hidden, loss


def one_run(engine: str, steps: int, rnn_type: str = "LSTM") -> float:
    """Seconds per training step of ``engine`` (``ENGINES``), with the recurrent layer
    ``rnn_type`` (``MODELS``: word_language_model's ``--model``; the numpy step by hand is
    an LSTM's only)."""
    if engine == "torch":
        import torch
        torch.set_num_threads(1)
    else:
        import chaingrad as torch  # the same program with the import changed
    model, optimizer, batches, hidden = build(torch, steps + 2, rnn_type)
    if engine == "numpy":
        if rnn_type != "LSTM":
            raise ValueError(f"lstm_lm_step: the numpy step by hand is an LSTM's: expected "
                             f"--model LSTM, got {rnn_type}")
        floor = LstmLmByHand(model, BATCH, BPTT, LR, CLIP)
        blocks = [batch.numpy() for batch in batches]
        for block in blocks[:2]:  # untimed: first-call costs
            floor.step(block)
        start = time.perf_counter()
        for block in blocks[2:]:
            floor.step(block)
        return (time.perf_counter() - start) / steps
    for batch in batches[:2]:  # untimed: first-call costs
        hidden, _ = train_step(torch, model, optimizer, batch, hidden)
    start = time.perf_counter()
    for batch in batches[2:]:
        hidden, _ = train_step(torch, model, optimizer, batch, hidden)
    return (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=ENGINES, help="one run of one engine")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--model", choices=MODELS, default="LSTM")
    args = parser.parse_args(argv)
    if args.engine:
        print(f"{one_run(args.engine, args.steps, args.model):.6f}")
        return 0
    engines = ENGINES if args.model == "LSTM" else ENGINES[:2]
    times: dict[str, list[float]] = {engine: [] for engine in engines}
    for _ in range(args.runs):  # alternating, so that all see the same machine load
        for engine in engines:
            out = subprocess.run([sys.executable, __file__, "--engine", engine, "--steps",
                                  str(args.steps), "--model", args.model],
                                 capture_output=True, text=True, check=True)
            times[engine].append(float(out.stdout))
    medians = {engine: statistics.median(t) for engine, t in times.items()}
    for engine in engines:
        runs = " ".join(f"{t * 1e3:.1f}" for t in times[engine])
        print(f"{LABELS[engine]:16} {medians[engine] * 1e3:8.1f} ms/step  "
              f"{medians[engine] / medians['torch']:5.2f}x torch  (runs: {runs})")
    print(f"chaingrad / torch: {medians['chaingrad'] / medians['torch']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
