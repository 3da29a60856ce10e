"""Every model of makemore.py (its --type: bigram, mlp, rnn, gru, bow, transformer) trained on
a slice of names, as makemore.py builds, trains, evaluates, saves and samples them.

A CharDataset(Dataset) of names, each a row of letters after a 0 start token with the
targets past a name's end masked as -1 (cross_entropy's ignore_index=-1); its split with
randperm; a ModelConfig dataclass; an InfiniteDataLoader drawing batches through a
RandomSampler(replacement=True, num_samples=int(1e10)), fetched by two worker processes.

The models: a Bigram of one nn.Parameter(torch.zeros((n, n))); an MLP whose context window
rolls the token indices (torch.roll and a blank token past the vocabulary); an RNN and a GRU
written out as cells (torch.cat([xt, hprev], dim=1), F.tanh, F.sigmoid, a learned start
state expanded over the batch, torch.stack(hiddens, 1)); a BoW of causal averaging (a tril
buffer, -inf over the future, softmax); a Transformer (nn.ModuleDict(wte, wpe,
h=nn.ModuleList, ln_f), CausalSelfAttention with a registered tril().view(1, 1, n, n)
buffer, c_attn split into q, k, v, transpose(1, 2), masked_fill(== 0, -inf),
contiguous().view, a tanh GELU written with math.sqrt(2.0 / math.pi) and torch.pow, the
block's MLP called through a lambda attribute over its ModuleDict, lm_head with bias=False).

Each trains with AdamW(weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8) and
zero_grad(set_to_none=True) (the first step's gradient norms printed: AdamW's steps would
hide a gradient's scale), is evaluated in eval mode over a shuffled DataLoader(num_workers=0),
the losses logged with SummaryWriter's add_scalar and flush, the best so far saved with
torch.save of its state_dict and loaded back with torch.load, and samples names with a
@torch.no_grad() generate (idx_cond, temperature, top_k by torch.topk, F.softmax,
torch.multinomial, or torch.topk(probs, k=1) for the greedy name)."""
import math
import os
import tempfile
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import Dataset
from torch.utils.data.dataloader import DataLoader
from torch.utils.tensorboard import SummaryWriter

# -----------------------------------------------------------------------------
# the data: one name a row, as makemore.py reads its input file


class CharDataset(Dataset):

    def __init__(self, words, chars, max_word_length):
        self.words = words
        self.chars = chars
        self.max_word_length = max_word_length
        self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}  # 0 starts and ends a name
        self.itos = {i: s for s, i in self.stoi.items()}

    def __len__(self):
        return len(self.words)

    def contains(self, word):
        return word in self.words

    def get_vocab_size(self):
        return len(self.chars) + 1

    def get_output_length(self):
        return self.max_word_length + 1  # the letters and the 0 that ends them

    def encode(self, word):
        return torch.tensor([self.stoi[w] for w in word], dtype=torch.long)

    def decode(self, ix):
        return "".join(self.itos[i] for i in ix)

    def __getitem__(self, idx):
        ix = self.encode(self.words[idx])
        x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        x[1:1 + len(ix)] = ix  # x starts with the 0 token
        y[:len(ix)] = ix  # y is x shifted by one: the next letter at each place
        y[len(ix) + 1:] = -1  # past the closing 0 there is nothing to predict
        return x, y


def create_datasets(path, every):
    with open(path) as f:
        words = f.read().splitlines()
    words = [w.strip() for w in words][::every]  # a slice of the names, to stay quick
    words = [w for w in words if w]
    chars = sorted(list(set("".join(words))))
    max_word_length = max(len(w) for w in words)
    print(f"number of examples: {len(words)}, max word length: {max_word_length}")
    print(f"vocabulary ({len(chars)}): {''.join(chars)}")
    test_set_size = min(1000, int(len(words) * 0.1))
    rp = torch.randperm(len(words)).tolist()
    train_words = [words[i] for i in rp[:-test_set_size]]
    test_words = [words[i] for i in rp[-test_set_size:]]
    print(f"split: {len(train_words)} train, {len(test_words)} test, first {train_words[:3]}")
    return (CharDataset(train_words, chars, max_word_length),
            CharDataset(test_words, chars, max_word_length))


class InfiniteDataLoader:
    """Batches for ever: a sampler drawing with replacement, restarted should it run dry."""

    def __init__(self, dataset, **kwargs):
        sampler = torch.utils.data.RandomSampler(dataset, replacement=True,
                                                 num_samples=int(1e10))
        self.train_loader = DataLoader(dataset, sampler=sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            self.data_iter = iter(self.train_loader)
            batch = next(self.data_iter)
        return batch


# -----------------------------------------------------------------------------
# the models: each maps (B, T) indices to (B, T, vocab_size) logits, and a loss if given
# targets


@dataclass
class ModelConfig:
    block_size: int = None  # the length of a row of letters
    vocab_size: int = None  # 0 and the letters
    n_layer: int = 2
    n_embd: int = 16
    n_embd2: int = 24
    n_head: int = 2


def masked_loss(logits, targets):
    if targets is None:
        return None
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


class NewGELU(nn.Module):
    """GELU with tanh's approximation, written out as in BERT and GPT."""

    def forward(self, x):
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)  # q, k, v for every head
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        n = config.block_size
        self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, 1, n, n))
        self.n_head = config.n_head
        self.n_embd = config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # the heads side by side again
        return self.c_proj(y)


class Block(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = nn.ModuleDict(dict(
            c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
            c_proj=nn.Linear(4 * config.n_embd, config.n_embd),
            act=NewGELU(),
        ))
        m = self.mlp
        self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))  # a plain attribute, not a module

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlpf(self.ln_2(x))
        return x


class Transformer(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        n_params = sum(p.numel() for p in self.transformer.parameters())  # lm_head aside
        print(f"number of parameters: {n_params / 1e6:.4f}M")

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.block_size, f"a row of {t} is longer than the block, {self.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)  # (1, t)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return logits, masked_loss(logits, targets)


class CausalBoW(nn.Module):
    """Each place gets the average of itself and the places before it."""

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        n = config.block_size
        self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, n, n))

    def forward(self, x):
        B, T, C = x.size()
        att = torch.zeros((B, T, T), device=x.device)
        att = att.masked_fill(self.bias[:, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)  # 1/k over the k places so far
        return att @ x


class BoWBlock(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.cbow = CausalBoW(config)
        self.mlp = nn.ModuleDict(dict(
            c_fc=nn.Linear(config.n_embd, config.n_embd2),
            c_proj=nn.Linear(config.n_embd2, config.n_embd),
        ))

    def forward(self, x):
        x = x + self.cbow(x)
        x = x + self.mlp.c_proj(F.tanh(self.mlp.c_fc(x)))
        return x


class BoW(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.context_block = BoWBlock(config)
        self.lm_head = nn.Linear(config.n_embd, self.vocab_size)

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.context_block(self.wte(idx) + self.wpe(pos))
        logits = self.lm_head(x)
        return logits, masked_loss(logits, targets)


class RNNCell(nn.Module):
    """The plain recurrence: h_t = tanh(W [x_t, h_{t-1}] + b)."""

    def __init__(self, config):
        super().__init__()
        self.xh_to_h = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)

    def forward(self, xt, hprev):
        xh = torch.cat([xt, hprev], dim=1)
        return F.tanh(self.xh_to_h(xh))


class GRUCell(nn.Module):
    """A gated recurrence: a reset gate r, an update gate z, a candidate hbar."""

    def __init__(self, config):
        super().__init__()
        self.xh_to_z = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
        self.xh_to_r = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)
        self.xh_to_hbar = nn.Linear(config.n_embd + config.n_embd2, config.n_embd2)

    def forward(self, xt, hprev):
        xh = torch.cat([xt, hprev], dim=1)
        r = F.sigmoid(self.xh_to_r(xh))
        xhr = torch.cat([xt, r * hprev], dim=1)
        hbar = F.tanh(self.xh_to_hbar(xhr))
        z = F.sigmoid(self.xh_to_z(xh))
        return (1 - z) * hprev + z * hbar


class RNN(nn.Module):

    def __init__(self, config, cell_type):
        super().__init__()
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.start = nn.Parameter(torch.zeros(1, config.n_embd2))  # the state before t = 0
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.cell = RNNCell(config) if cell_type == "rnn" else GRUCell(config)
        self.lm_head = nn.Linear(config.n_embd2, self.vocab_size)

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        b, t = idx.size()
        emb = self.wte(idx)  # (b, t, n_embd)
        hprev = self.start.expand((b, -1))
        hiddens = []
        for i in range(t):
            hprev = self.cell(emb[:, i, :], hprev)
            hiddens.append(hprev)
        hidden = torch.stack(hiddens, 1)  # (b, t, n_embd2)
        logits = self.lm_head(hidden)
        return logits, masked_loss(logits, targets)


class MLP(nn.Module):
    """Bengio et al. 2003: the last block_size letters' embeddings, side by side, into an MLP."""

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.wte = nn.Embedding(config.vocab_size + 1, config.n_embd)  # + a blank token
        self.mlp = nn.Sequential(
            nn.Linear(self.block_size * config.n_embd, config.n_embd2),
            nn.Tanh(),
            nn.Linear(config.n_embd2, self.vocab_size),
        )

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        embs = []
        for _ in range(self.block_size):
            embs.append(self.wte(idx))  # this letter, then the one before, ...
            idx = torch.roll(idx, 1, 1)
            idx[:, 0] = self.vocab_size  # before the start: the blank token
        x = torch.cat(embs, -1)  # (b, t, n_embd * block_size)
        logits = self.mlp(x)
        return logits, masked_loss(logits, targets)


class Bigram(nn.Module):
    """The next letter from this one alone: a table of logits."""

    def __init__(self, config):
        super().__init__()
        n = config.vocab_size
        self.logits = nn.Parameter(torch.zeros((n, n)))

    def get_block_size(self):
        return 1

    def forward(self, idx, targets=None):
        logits = self.logits[idx]
        return logits, masked_loss(logits, targets)


# -----------------------------------------------------------------------------
# training, evaluating, sampling


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
    block_size = model.get_block_size()
    for _ in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits, _ = model(idx_cond)
        logits = logits[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float("Inf")
        probs = F.softmax(logits, dim=-1)
        if do_sample:
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            _, idx_next = torch.topk(probs, k=1, dim=-1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def sample_names(model, dataset, num, do_sample=True, temperature=1.0, top_k=None):
    X_init = torch.zeros(num, 1, dtype=torch.long).to(device)
    steps = dataset.get_output_length() - 1  # the first 0 is given
    X_samp = generate(model, X_init, steps, temperature=temperature, do_sample=do_sample,
                      top_k=top_k).to("cpu")
    names = []
    for i in range(X_samp.size(0)):
        row = X_samp[i, 1:].tolist()
        crop_index = row.index(0) if 0 in row else len(row)
        names.append(dataset.decode(row[:crop_index]))
    return names


@torch.inference_mode()
def evaluate(model, dataset, batch_size=50, max_batches=None):
    model.eval()
    loader = DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=0)
    losses = []
    for i, batch in enumerate(loader):
        batch = [t.to(device) for t in batch]
        X, Y = batch
        logits, loss = model(X, Y)
        losses.append(loss.item())
        if max_batches is not None and i >= max_batches:
            break
    mean_loss = torch.tensor(losses).mean().item()
    model.train()
    return mean_loss


def build(model_type, config):
    if model_type == "transformer":
        return Transformer(config)
    if model_type == "bigram":
        return Bigram(config)
    if model_type == "mlp":
        return MLP(config)
    if model_type in ("rnn", "gru"):
        return RNN(config, cell_type=model_type)
    if model_type == "bow":
        return BoW(config)
    raise ValueError(f"model type {model_type} is not recognized")


device = "cpu"
torch.manual_seed(3407)
torch.cuda.manual_seed_all(3407)
work_dir = tempfile.mkdtemp()
writer = SummaryWriter(log_dir=work_dir)

names_path = os.path.join("..", "data", "names.txt")  # run from tests/torch_programs
train_dataset, test_dataset = create_datasets(names_path, every=100)
vocab_size = train_dataset.get_vocab_size()
block_size = train_dataset.get_output_length()
x, y = train_dataset[0]
print(f"first example: {train_dataset.words[0]} x {x.tolist()} y {y.tolist()}")

for model_type in ["bigram", "mlp", "rnn", "gru", "bow", "transformer"]:
    print(f"--- {model_type}")
    config = ModelConfig(vocab_size=vocab_size, block_size=block_size)
    model = build(model_type, config)
    model.to(device)
    print(f"model #params: {sum(p.numel() for p in model.parameters())}")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01,
                                  betas=(0.9, 0.99), eps=1e-8)
    batch_loader = InfiniteDataLoader(train_dataset, batch_size=16, pin_memory=True,
                                      num_workers=2)
    out_path = os.path.join(work_dir, f"{model_type}.pt")
    best_loss = None
    for step in range(30):
        batch = batch_loader.next()
        batch = [t.to(device) for t in batch]
        X, Y = batch
        logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        if step == 0:  # before AdamW, whose steps hide a gradient's scale
            norms = [f"{p.grad.norm().item():.6g}" for p in model.parameters()]
            print(f"first gradients' norms: {' '.join(norms)}")
        optimizer.step()
        if step % 6 == 0:
            print(f"step {step} | loss {loss.item():.4f}")
        if step % 15 == 14:  # evaluate, and keep the best model so far
            train_loss = evaluate(model, train_dataset, batch_size=50, max_batches=2)
            test_loss = evaluate(model, test_dataset, batch_size=50, max_batches=2)
            writer.add_scalar(f"{model_type}/train", train_loss, step)
            writer.add_scalar(f"{model_type}/test", test_loss, step)
            writer.flush()
            print(f"step {step} train loss: {train_loss:.4f} test loss: {test_loss:.4f}")
            if best_loss is None or test_loss < best_loss:
                print(f"test loss {test_loss:.4f} is the best so far, saving model")
                torch.save(model.state_dict(), out_path)
                best_loss = test_loss
    model.zero_grad(set_to_none=True)
    print(f"logits {tuple(logits.shape)}, grads after zero_grad: "
          f"{[p.grad for p in model.parameters()][:2]}, training {model.training}")

    reloaded = build(model_type, config)
    reloaded.load_state_dict(torch.load(out_path))
    print(f"state {list(reloaded.state_dict())[:4]}")
    print(f"reloaded test loss {evaluate(reloaded, test_dataset, batch_size=50, max_batches=2):.4f}"
          f" best {best_loss:.4f}")

    samples = sample_names(reloaded, train_dataset, num=6)
    greedy = sample_names(reloaded, train_dataset, num=1, do_sample=False)
    top3 = sample_names(reloaded, train_dataset, num=3, temperature=0.8, top_k=3)
    kinds = ["train" if train_dataset.contains(w) else "test" if test_dataset.contains(w)
             else "new" for w in samples]
    print(f"samples {samples} {kinds}")
    print(f"greedy {greedy} top-3 at temperature 0.8 {top3}")
print(f"after the run {torch.rand(2).tolist()}")
