"""T4 and T5: the training steps of the lectures after micrograd, written once against
PyTorch's API and run on the module given, ``torch`` or ``chaingrad`` (issue 24's "fast
enough to follow the lectures").

T4: makemore part 2's MLP step: a batch of 32 contexts of 3 characters, embeddings of 10,
a tanh layer of 200, logits over 27 characters, ``F.cross_entropy``, the gradients reset
to None, ``backward()``, then ``p.data += -lr * p.grad`` for each parameter.

T5: the GPT lecture's training iteration at a small size: a batch of 16 blocks of 32
tokens from a vocabulary of 65, token and position embeddings of 64, 2 blocks of 4 causal
self-attention heads and a feed-forward layer, each after a LayerNorm, dropout 0.2, AdamW.

Both draw their data and initial weights from the module's own generator, seeded: torch
and chaingrad start from the same numbers and compute the same losses (``loss`` is the
last step's).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

MLP = {"batch": 32, "context": 3, "embedding": 10, "hidden": 200, "classes": 27,
       "examples": 5_000, "lr": 0.1}
GPT = {"batch": 16, "block": 32, "n_embd": 64, "heads": 4, "layers": 2, "dropout": 0.2,
       "vocab": 65, "tokens": 10_000, "lr": 1e-3}


class MlpStepT4:
    """makemore part 2's training step, on ``torch`` (the module: torch or chaingrad)."""

    def __init__(self, torch: ModuleType, batch: int = MLP["batch"]):
        c = MLP
        self.torch, self.F, self.batch = torch, torch.nn.functional, batch
        self.g = g = torch.Generator().manual_seed(2147483647)
        self.X = torch.randint(0, c["classes"], (c["examples"], c["context"]), generator=g)
        self.Y = torch.randint(0, c["classes"], (c["examples"],), generator=g)
        width = c["context"] * c["embedding"]
        self.C = torch.randn((c["classes"], c["embedding"]), generator=g)
        self.W1 = torch.randn((width, c["hidden"]), generator=g) * (5 / 3) / width**0.5
        self.b1 = torch.randn(c["hidden"], generator=g) * 0.01
        self.W2 = torch.randn((c["hidden"], c["classes"]), generator=g) * 0.01
        self.b2 = torch.randn(c["classes"], generator=g) * 0
        self.parameters = [self.C, self.W1, self.b1, self.W2, self.b2]
        for p in self.parameters:
            p.requires_grad = True
        self.width, self.loss = width, None

    def step(self) -> None:
        ix = self.torch.randint(0, self.X.shape[0], (self.batch,), generator=self.g)
        emb = self.C[self.X[ix]]
        h = self.torch.tanh(emb.view(-1, self.width) @ self.W1 + self.b1)
        logits = h @ self.W2 + self.b2
        loss = self.F.cross_entropy(logits, self.Y[ix])
        for p in self.parameters:
            p.grad = None
        loss.backward()
        for p in self.parameters:
            p.data += -MLP["lr"] * p.grad
        self.loss = loss


def gpt_model(torch: ModuleType, c: dict[str, Any]) -> Any:
    """The GPT lecture's model at the sizes ``c``, built from ``torch.nn``'s layers."""
    nn, F = torch.nn, torch.nn.functional
    head_size = c["n_embd"] // c["heads"]

    class Head(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.key = nn.Linear(c["n_embd"], head_size, bias=False)
            self.query = nn.Linear(c["n_embd"], head_size, bias=False)
            self.value = nn.Linear(c["n_embd"], head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(c["block"], c["block"])))
            self.dropout = nn.Dropout(c["dropout"])

        def forward(self, x: Any) -> Any:
            T = x.shape[1]
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = self.dropout(F.softmax(wei, dim=-1))
            return wei @ self.value(x)

    class MultiHead(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.heads = nn.ModuleList([Head() for _ in range(c["heads"])])
            self.proj = nn.Linear(c["n_embd"], c["n_embd"])
            self.dropout = nn.Dropout(c["dropout"])

        def forward(self, x: Any) -> Any:
            return self.dropout(self.proj(torch.cat([h(x) for h in self.heads], dim=-1)))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            n = c["n_embd"]
            self.sa = MultiHead()
            self.ffwd = nn.Sequential(nn.Linear(n, 4 * n), nn.ReLU(), nn.Linear(4 * n, n),
                                      nn.Dropout(c["dropout"]))
            self.ln1, self.ln2 = nn.LayerNorm(n), nn.LayerNorm(n)

        def forward(self, x: Any) -> Any:
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPTLanguageModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.token_embedding = nn.Embedding(c["vocab"], c["n_embd"])
            self.position_embedding = nn.Embedding(c["block"], c["n_embd"])
            self.blocks = nn.Sequential(*[Block() for _ in range(c["layers"])])
            self.ln_f = nn.LayerNorm(c["n_embd"])
            self.lm_head = nn.Linear(c["n_embd"], c["vocab"])

        def forward(self, idx: Any, targets: Any) -> tuple[Any, Any]:
            B, T = idx.shape
            x = self.token_embedding(idx) + self.position_embedding(torch.arange(T))
            logits = self.lm_head(self.ln_f(self.blocks(x)))
            loss = F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
            return logits, loss

    return GPTLanguageModel()


class GptIterationT5:
    """The GPT lecture's training iteration (``c`` = ``GPT`` by default)."""

    def __init__(self, torch: ModuleType, batch: int = GPT["batch"]):
        self.torch, self.c, self.batch = torch, GPT, batch
        torch.manual_seed(1337)
        self.data = torch.randint(0, GPT["vocab"], (GPT["tokens"],))
        self.model = gpt_model(torch, GPT)
        self.model.train()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=GPT["lr"])
        self.loss = None

    def step(self) -> None:
        block = self.c["block"]
        ix = self.torch.randint(len(self.data) - block, (self.batch,))
        x = self.torch.stack([self.data[i:i + block] for i in ix])
        y = self.torch.stack([self.data[i + 1:i + block + 1] for i in ix])
        _, loss = self.model(x, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.loss = loss
