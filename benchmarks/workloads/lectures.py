"""T4-T7: the training steps of the lectures after micrograd, and nanoGPT's,
written once against PyTorch's API and run on the module given, ``torch`` or ``chaingrad``
(issue 24's "fast enough to follow the lectures", issue 32's "faster than torch").

T4: makemore part 2's MLP step: a batch of 32 contexts of 3 characters, embeddings of 10,
a tanh layer of 200, logits over 27 characters, ``F.cross_entropy``, the gradients reset
to None, ``backward()``, then ``p.data += -lr * p.grad`` for each parameter.

T5: the GPT lecture's training iteration at a small size: a batch of 16 blocks of 32
tokens from a vocabulary of 65, token and position embeddings of 64, 2 blocks of 4 causal
self-attention heads and a feed-forward layer, each after a LayerNorm, dropout 0.2, AdamW.

T6: the same GPT as nanoGPT builds it (its ``model.py``, the attention written out as it is
where ``F.scaled_dot_product_attention`` is missing): batch 12, block 64, n_embd 128, 4
heads, 4 layers, dropout 0, vocabulary 65; one linear for the keys, queries and values of
all heads, ``nn.GELU()`` (erf, ``approximate='none'``) in the feed-forward layer,
``LayerNorm`` before each, the output layer's weight tied to the token embedding, nanoGPT's
initialisation, and ``AdamW`` with weight decay 0.1 on the matrices only, betas (0.9, 0.99).

T7: nanoGPT's CPU recipe as its ``train.py`` runs it (``--block_size=64 --batch_size=12
--n_layer=4 --n_head=4 --n_embd=128 --dropout=0.0``, issue 34): T6's model with
train.py's default ``bias=False`` (no bias in any Linear or LayerNorm), the attention by
``F.scaled_dot_product_attention(is_causal=True)`` where the module has it (nanoGPT's
``flash`` path, which torch 2.13 takes; else written out as in T6), and the gradients
clipped to norm 1.0 before AdamW's step. On torch this iteration takes less time than
T6's (benchmarks/RESULTS.md, issue 34).

All four draw their data and initial weights from the module's own generator, seeded:
torch and chaingrad start from the same numbers and compute the same losses (``loss`` is
the last step's).
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

MLP = {"batch": 32, "context": 3, "embedding": 10, "hidden": 200, "classes": 27,
       "examples": 5_000, "lr": 0.1}
GPT = {"batch": 16, "block": 32, "n_embd": 64, "heads": 4, "layers": 2, "dropout": 0.2,
       "vocab": 65, "tokens": 10_000, "lr": 1e-3}
NANOGPT = {"batch": 12, "block": 64, "n_embd": 128, "heads": 4, "layers": 4, "dropout": 0.0,
           "vocab": 65, "tokens": 10_000, "lr": 1e-3, "weight_decay": 0.1,
           "betas": (0.9, 0.99)}
NANOGPT_TRAIN = {**NANOGPT, "bias": False, "flash": True, "grad_clip": 1.0}


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
    """A character GPT of the GPT lecture's shape at the sizes ``c``, from ``torch.nn``'s
    layers: per-head linear keys, queries and values over a causal mask, a feed-forward
    layer four times as wide, each after a LayerNorm and added back, dropout throughout."""
    nn, F = torch.nn, torch.nn.functional
    width, heads, block = c["n_embd"], c["heads"], c["block"]

    class CausalHead(nn.Module):
        """Each position mixes the values of itself and of the positions before it."""

        def __init__(self) -> None:
            super().__init__()
            size = width // heads
            self.k, self.q, self.v = (nn.Linear(width, size, bias=False) for _ in range(3))
            self.register_buffer("mask", torch.tril(torch.ones(block, block)))
            self.drop = nn.Dropout(c["dropout"])

        def forward(self, x: Any) -> Any:
            n = x.shape[1]
            keys = self.k(x)
            scores = self.q(x) @ keys.transpose(-2, -1) * keys.shape[-1] ** -0.5
            scores = scores.masked_fill(self.mask[:n, :n] == 0, float("-inf"))
            return self.drop(F.softmax(scores, dim=-1)) @ self.v(x)

    class Layer(nn.Module):
        """The heads side by side, then a feed-forward network, each on a normalised input
        and added back to it."""

        def __init__(self) -> None:
            super().__init__()
            self.norm_a, self.norm_f = nn.LayerNorm(width), nn.LayerNorm(width)
            self.heads = nn.ModuleList([CausalHead() for _ in range(heads)])
            self.mix = nn.Linear(width, width)
            self.drop = nn.Dropout(c["dropout"])
            self.feed = nn.Sequential(nn.Linear(width, 4 * width), nn.ReLU(),
                                      nn.Linear(4 * width, width), nn.Dropout(c["dropout"]))

        def forward(self, x: Any) -> Any:
            seen = self.norm_a(x)
            x = x + self.drop(self.mix(torch.cat([head(seen) for head in self.heads], dim=-1)))
            return x + self.feed(self.norm_f(x))

    class CharacterGPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(c["vocab"], width)
            self.places = nn.Embedding(block, width)
            self.layers = nn.Sequential(*[Layer() for _ in range(c["layers"])])
            self.norm = nn.LayerNorm(width)
            self.out = nn.Linear(width, c["vocab"])

        def forward(self, idx: Any, targets: Any) -> tuple[Any, Any]:
            x = self.tokens(idx) + self.places(torch.arange(idx.shape[1]))
            logits = self.out(self.norm(self.layers(x)))
            flat = logits.view(-1, logits.shape[-1])
            return logits, F.cross_entropy(flat, targets.view(-1))

    return CharacterGPT()


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

    def next_batch(self) -> tuple[Any, Any]:
        """The next batch: blocks of tokens at random places, and the tokens after them."""
        block = self.c["block"]
        ix = self.torch.randint(len(self.data) - block, (self.batch,))
        x = self.torch.stack([self.data[i:i + block] for i in ix])
        y = self.torch.stack([self.data[i + 1:i + block + 1] for i in ix])
        return x, y

    def step(self) -> None:
        _, loss = self.model(*self.next_batch())
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.loss = loss


def nanogpt_model(torch: ModuleType, c: dict[str, Any]) -> Any:
    """nanoGPT's GPT (``model.py``) at the sizes ``c``, from ``torch.nn``'s layers: one
    linear makes every head's keys, queries and values, the heads are an axis of their
    own, the feed-forward layer's activation is ``nn.GELU()``, the output layer shares the
    token embedding's weight, and the weights start as nanoGPT starts them. ``c["bias"]``
    (default True): biases in the Linears and LayerNorms; ``c["flash"]`` (default False):
    the attention by ``F.scaled_dot_product_attention`` where the module has it."""
    nn, F = torch.nn, torch.nn.functional
    width, heads, block, layers = c["n_embd"], c["heads"], c["block"], c["layers"]
    bias = c.get("bias", True)
    flash = c.get("flash", False) and hasattr(F, "scaled_dot_product_attention")

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(width, 3 * width, bias=bias)
            self.c_proj = nn.Linear(width, width, bias=bias)
            self.attn_dropout, self.resid_dropout = nn.Dropout(c["dropout"]), nn.Dropout(
                c["dropout"])
            if not flash:
                self.register_buffer("bias", torch.tril(torch.ones(block, block))
                                     .view(1, 1, block, block))

        def forward(self, x: Any) -> Any:
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(width, dim=2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            if flash:
                y = F.scaled_dot_product_attention(
                    q, k, v, dropout_p=c["dropout"] if self.training else 0.0, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                y = self.attn_dropout(F.softmax(att, dim=-1)) @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_fc, self.gelu = nn.Linear(width, 4 * width, bias=bias), nn.GELU()
            self.c_proj = nn.Linear(4 * width, width, bias=bias)
            self.dropout = nn.Dropout(c["dropout"])

        def forward(self, x: Any) -> Any:
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(width, bias=bias), CausalSelfAttention()
            self.ln_2, self.mlp = nn.LayerNorm(width, bias=bias), MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(c["vocab"], width), wpe=nn.Embedding(block, width),
                drop=nn.Dropout(c["dropout"]), h=nn.ModuleList([Block() for _ in range(layers)]),
                ln_f=nn.LayerNorm(width, bias=bias)))
            self.lm_head = nn.Linear(width, c["vocab"], bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying
            self.apply(self._init_weights)
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

        def _init_weights(self, module: Any) -> None:
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

        def forward(self, idx: Any, targets: Any) -> tuple[Any, Any]:
            t = idx.size(1)
            pos = torch.arange(0, t, dtype=torch.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for layer in self.transformer.h:
                x = layer(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
            return logits, loss

    return GPT()


class NanoGptIterationT6(GptIterationT5):
    """nanoGPT's training iteration (``c`` = ``config``, ``NANOGPT``): its AdamW decays the
    weights of the matrices (every parameter of two or more axes) and not the biases and
    norms."""

    config: dict[str, Any] = NANOGPT

    def __init__(self, torch: ModuleType, batch: int = NANOGPT["batch"]):
        c = self.config
        self.torch, self.c, self.batch = torch, c, batch
        torch.manual_seed(1337)
        self.data = torch.randint(0, c["vocab"], (c["tokens"],))
        self.model = nanogpt_model(torch, c)
        self.model.train()
        params = [p for p in self.model.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.dim() >= 2],
                   "weight_decay": c["weight_decay"]},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        self.optimizer = torch.optim.AdamW(groups, lr=c["lr"], betas=c["betas"])
        self.loss = None


class NanoGptTrainIterationT7(NanoGptIterationT6):
    """nanoGPT's CPU recipe as ``train.py`` runs it (``c`` = ``NANOGPT_TRAIN``): T6's model
    without biases, the attention by ``F.scaled_dot_product_attention`` where the module has
    it, and ``clip_grad_norm_(model.parameters(), 1.0)`` between backward and step."""

    config: dict[str, Any] = NANOGPT_TRAIN

    def step(self) -> None:
        _, loss = self.model(*self.next_batch())
        loss.backward()
        self.torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.c["grad_clip"])
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.loss = loss


STEPS = {"T4": MlpStepT4, "T5": GptIterationT5, "T6": NanoGptIterationT6,
         "T7": NanoGptTrainIterationT7}
"""The workload id of each step's class."""
