"""minGPT's projects in miniature, written here as our own program in its style: a CfgNode
config (attribute access, merge_from_dict, printed as an indented tree), set_seed over
random, numpy and torch, a GPT with a tanh GELU module, a lambda over a ModuleDict for the
MLP, default configs merged with the user's, parameters split into decayed and not by
module type for AdamW, and generate() with greedy or sampled tokens; a Trainer that draws
endless batches through a DataLoader over RandomSampler(replacement=True), clips the
gradients and calls the callbacks registered for 'on_batch_end'. Two demos: the adder
(learn two-digit addition, the sum written backwards; the answer read back with flip(1) and
scored for accuracy) and the sorter (lists of digits, their number of distinct values from
unique(), the split by a hash of the list, scored against torch.sort)."""
import math
import pickle
import random

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import Dataset
from torch.utils.data.dataloader import DataLoader

# ---- utils ----

def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class CfgNode:
    """A config whose entries are attributes, nested nodes printed indented."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __str__(self):
        return self._render(0)

    def _render(self, indent):
        parts = []
        for key, value in self.__dict__.items():
            if isinstance(value, CfgNode):
                parts.append(f"{key}:\n{value._render(indent + 1)}")
            else:
                parts.append(f"{key}: {value}\n")
        return "".join(" " * 4 * indent + part for part in parts)

    def merge_from_dict(self, d):
        self.__dict__.update(d)


# ---- the model ----

class NewGELU(nn.Module):
    """GELU by its tanh approximation, written out."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                           * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)
        n = config.block_size
        self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, 1, n, n))
        self.n_head, self.n_embd = config.n_head, config.n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        heads = lambda t: t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


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
            dropout=nn.Dropout(config.resid_pdrop),
        ))
        m = self.mlp
        self.mlpf = lambda x: m.dropout(m.c_proj(m.act(m.c_fc(x))))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlpf(self.ln_2(x))


class GPT(nn.Module):

    @staticmethod
    def get_default_config():
        return CfgNode(model_type='gpt', n_layer=None, n_head=None, n_embd=None,
                       vocab_size=None, block_size=None,
                       embd_pdrop=0.1, resid_pdrop=0.1, attn_pdrop=0.1)

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.embd_pdrop),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        n_params = sum(p.numel() for p in self.transformer.parameters())
        print(f"number of parameters: {n_params / 1e6:.3f}M")

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        elif isinstance(module, nn.LayerNorm):
            torch.nn.init.zeros_(module.bias)
            torch.nn.init.ones_(module.weight)

    def configure_optimizers(self, train_config):
        """Weight decay on the Linear layers' weights only; none on biases, LayerNorms and
        embeddings."""
        decay, no_decay = set(), set()
        whitelist, blacklist = (nn.Linear,), (nn.LayerNorm, nn.Embedding)
        for mn, m in self.named_modules():
            for pn, _p in m.named_parameters():
                fpn = f'{mn}.{pn}' if mn else pn
                if pn.endswith('bias'):
                    no_decay.add(fpn)
                elif pn.endswith('weight') and isinstance(m, whitelist):
                    decay.add(fpn)
                elif pn.endswith('weight') and isinstance(m, blacklist):
                    no_decay.add(fpn)
        param_dict = dict(self.named_parameters())
        assert not decay & no_decay and decay | no_decay == set(param_dict)
        optim_groups = [
            {"params": [param_dict[pn] for pn in sorted(decay)],
             "weight_decay": train_config.weight_decay},
            {"params": [param_dict[pn] for pn in sorted(no_decay)], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(optim_groups, lr=train_config.learning_rate,
                                 betas=train_config.betas)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            if do_sample:
                idx_next = torch.multinomial(probs, num_samples=1)
            else:
                _, idx_next = torch.topk(probs, k=1, dim=-1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


# ---- the trainer ----

class Trainer:

    @staticmethod
    def get_default_config():
        return CfgNode(device='auto', num_workers=0, max_iters=None, batch_size=64,
                       learning_rate=3e-4, betas=(0.9, 0.95), weight_decay=0.1,
                       grad_norm_clip=1.0)

    def __init__(self, config, model, train_dataset):
        self.config, self.model, self.train_dataset = config, model, train_dataset
        self.optimizer = None
        self.callbacks = {}
        if config.device == 'auto':
            self.device = 'cuda' if torch.cuda.is_available() else 'cpu'
        else:
            self.device = config.device
        self.model = self.model.to(self.device)
        print("running on device", self.device)
        self.iter_num = 0

    def add_callback(self, onevent, callback):
        self.callbacks.setdefault(onevent, []).append(callback)

    def set_callback(self, onevent, callback):
        self.callbacks[onevent] = [callback]

    def trigger_callbacks(self, onevent):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def run(self):
        model, config = self.model, self.config
        self.optimizer = model.configure_optimizers(config)
        train_loader = DataLoader(
            self.train_dataset,
            sampler=torch.utils.data.RandomSampler(self.train_dataset, replacement=True,
                                                   num_samples=int(1e10)),
            shuffle=False, pin_memory=False, batch_size=config.batch_size,
            num_workers=config.num_workers)
        model.train()
        self.iter_num = 0
        data_iter = iter(train_loader)
        while True:
            try:
                batch = next(data_iter)
            except StopIteration:
                data_iter = iter(train_loader)
                batch = next(data_iter)
            x, y = [t.to(self.device) for t in batch]
            logits, self.loss = model(x, y)
            model.zero_grad(set_to_none=True)
            self.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
            self.optimizer.step()
            self.trigger_callbacks('on_batch_end')
            self.iter_num += 1
            if config.max_iters is not None and self.iter_num >= config.max_iters:
                break


def batch_end_callback(trainer):
    if trainer.iter_num % 10 == 0:
        print(f"iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}")


# ---- the adder ----

class AdditionDataset(Dataset):
    """a + b = c for two ndigit numbers, as one row of digits: a, b, then c backwards
    (the way it is added by hand), padded to ndigit + 1 digits. The targets of a's and b's
    digits are -1: only the sum is learned."""

    def __init__(self, ndigit, split):
        self.ndigit, self.split = ndigit, split
        num = (10 ** ndigit) ** 2
        rng = torch.Generator()
        rng.manual_seed(1337)
        perm = torch.randperm(num, generator=rng)
        num_test = min(int(num * 0.2), 100)
        self.ixes = perm[:num_test] if split == 'test' else perm[num_test:]

    def get_vocab_size(self):
        return 10

    def get_block_size(self):
        return 3 * self.ndigit + 1 - 1

    def __len__(self):
        return self.ixes.nelement()

    def __getitem__(self, idx):
        nd = self.ndigit
        idx = self.ixes[idx].item()
        a, b = idx // (10 ** nd), idx % (10 ** nd)
        c = a + b
        render = f'%0{nd}d' % a + f'%0{nd}d' % b + (f'%0{nd + 1}d' % c)[::-1]
        dix = [int(s) for s in render]
        x = torch.tensor(dix[:-1], dtype=torch.long)
        y = torch.tensor(dix[1:], dtype=torch.long)
        y[:nd * 2 - 1] = -1
        return x, y


def eval_adder(model, dataset, ndigit, max_batches):
    results, mistakes = [], []
    factors = torch.tensor([[10 ** i for i in range(ndigit + 1)][::-1]])
    loader = DataLoader(dataset, batch_size=50, num_workers=0, drop_last=False)
    for b, (x, _y) in enumerate(loader):
        d1d2 = x[:, :ndigit * 2]
        d1d2d3 = model.generate(d1d2, ndigit + 1, do_sample=False)
        d3 = d1d2d3[:, -(ndigit + 1):].flip(1)  # the sum was written backwards
        d1i = (d1d2[:, :ndigit] * factors[:, 1:]).sum(1)
        d2i = (d1d2[:, ndigit:ndigit * 2] * factors[:, 1:]).sum(1)
        d3i_pred = (d3 * factors).sum(1)
        correct = (d3i_pred == d1i + d2i)
        for i in range(x.size(0)):
            results.append(int(correct[i]))
            if not correct[i] and len(mistakes) < 3:
                mistakes.append(f"{d1i[i]} + {d2i[i]} = {d3i_pred[i]}, not {d1i[i] + d2i[i]}")
        if max_batches is not None and b + 1 >= max_batches:
            break
    rt = torch.tensor(results, dtype=torch.float)
    print(f"adder: {rt.sum():.0f}/{len(results)} correct, {100 * rt.mean():.2f}%")
    for line in mistakes:
        print("  wrong:", line)


# ---- the sorter ----

class SortDataset(Dataset):
    """Lists of ``length`` digits below ``num_digits`` and the same sorted; half of those
    with many repeats drawn again, so that repeats are learned too."""

    def __init__(self, split, length=5, num_digits=3):
        self.split, self.length, self.num_digits = split, length, num_digits

    def __len__(self):
        return 10000

    def get_vocab_size(self):
        return self.num_digits

    def get_block_size(self):
        return self.length * 2 - 1

    def __getitem__(self, idx):
        while True:
            inp = torch.randint(self.num_digits, size=(self.length,), dtype=torch.long)
            if torch.rand(1).item() < 0.5 and inp.unique().nelement() <= self.length // 2:
                continue  # too many repeats: half of these are drawn again
            h = hash(pickle.dumps(inp.tolist()))
            inp_split = 'test' if h % 4 == 0 else 'train'
            if inp_split == self.split:
                break
        sol = torch.sort(inp)[0]
        cat = torch.cat((inp, sol), dim=0)
        x, y = cat[:-1].clone(), cat[1:].clone()
        y[:self.length - 1] = -1
        return x, y


def small_gpt(vocab_size, block_size):
    model_config = GPT.get_default_config()
    model_config.merge_from_dict(dict(model_type=None, n_layer=2, n_head=2, n_embd=24,
                                      vocab_size=vocab_size, block_size=block_size))
    return model_config, GPT(model_config)


def train_config(max_iters):
    config = Trainer.get_default_config()
    config.merge_from_dict(dict(learning_rate=1e-3, max_iters=max_iters, batch_size=32))
    return config


set_seed(3407)
ndigit = 2
train_dataset = AdditionDataset(ndigit=ndigit, split='train')
test_dataset = AdditionDataset(ndigit=ndigit, split='test')
print(len(train_dataset), len(test_dataset), train_dataset[0])
model_config, model = small_gpt(train_dataset.get_vocab_size(), train_dataset.get_block_size())
print(model_config, end='')
trainer = Trainer(train_config(60), model, train_dataset)
trainer.set_callback('on_batch_end', batch_end_callback)
seen = []
trainer.add_callback('on_batch_end', lambda t: seen.append(t.iter_num))
trainer.run()
print(f"callbacks saw {len(seen)} batches, the last {seen[-1]}")
model.eval()
with torch.no_grad():
    eval_adder(model, test_dataset, ndigit, max_batches=2)

set_seed(3407)
train_dataset = SortDataset('train')
test_dataset = SortDataset('test')
x, y = train_dataset[0]
print(x.tolist(), y.tolist())
_, model = small_gpt(train_dataset.get_vocab_size(), train_dataset.get_block_size())
trainer = Trainer(train_config(40), model, train_dataset)
trainer.set_callback('on_batch_end', batch_end_callback)
trainer.run()
model.eval()
n = train_dataset.length
inp = torch.tensor([[2, 0, 1, 2, 0], [1, 1, 0, 2, 2]], dtype=torch.long)
with torch.no_grad():
    cat = model.generate(inp, n, do_sample=False)
sol = torch.sort(inp)[0]
print('input sequence  :', inp.tolist())
print('predicted sorted:', cat[:, n:].tolist())
print('gt sort         :', sol.tolist())
print('matches         :', bool((sol == cat[:, n:]).all()))
with torch.no_grad():
    sampled = model.generate(inp, n, temperature=1.0, do_sample=True, top_k=2)
print('sampled         :', sampled[:, n:].tolist())
