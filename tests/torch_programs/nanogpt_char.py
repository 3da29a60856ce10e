"""A character-level GPT trained, sampled and resumed the way nanoGPT's README runs its
Shakespeare recipe on a CPU, written here as our own program. It has nanoGPT's shape: the
imports at its top (torch.distributed, DistributedDataParallel, nullcontext), a config dict
of globals, a prepare step that writes the text's ids as uint16 to train.bin and val.bin and
its alphabet to meta.pkl, get_batch reading them back through np.memmap and
torch.from_numpy, the device and dtype lines (torch.cuda.is_available() and
torch.cuda.is_bf16_supported(), torch.backends' tf32 flags, nullcontext on a CPU or
torch.amp.autocast), a GPT of LayerNorms with an optional bias, one Linear for the queries,
keys and values, F.scaled_dot_product_attention where torch has it (else the attention
written out), dropout, tied embedding and readout weights, the residual projections' init
scaled by the depth; AdamW over two groups (weight decay on the matrices only), the fused
check through inspect.signature, a warmup-then-cosine learning rate set in each param_group,
gradient accumulation, GradScaler(enabled=False), clip_grad_norm_, estimate_loss under
torch.no_grad() in eval mode, and a checkpoint dict ({'model', 'optimizer', 'model_args',
'iter_num', 'best_val_loss', 'config'}) through torch.save. A second run resumes from it
(torch.load(ckpt_path, map_location=device), load_state_dict of the model and the
optimizer) and trains on; then a sampler loads the checkpoint and draws text with a
temperature and top_k through torch.multinomial."""
import inspect
import math
import os
import pickle
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.distributed import destroy_process_group, init_process_group
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

# a few lines written for this test, in place of Shakespeare
TEXT = """WARDEN: Who keeps the gate tonight? The wind is up and the lamps are low.
KEEPER: I keep it, sir, as I kept it last night and the night before.
WARDEN: Then keep it well. There are riders on the north road, and they ride late.
KEEPER: Let them ride. The gate is oak and the bar is iron, and I am awake.
WARDEN: Awake is good. Sober is better. Are you sober, keeper?
KEEPER: As a judge on a Monday, sir. Go to your bed; the gate will hold.
"""

# -----------------------------------------------------------------------------
# the config: nanoGPT's globals, overridden here as its config file and the command line
# would (--device=cpu --compile=False --eval_iters=... --block_size=... and so on)
out_dir = tempfile.mkdtemp()
data_dir = tempfile.mkdtemp()
eval_interval = 10
log_interval = 2
eval_iters = 3
always_save_checkpoint = False
init_from = 'scratch'
dataset = 'keeper_char'
gradient_accumulation_steps = 2
batch_size = 6
block_size = 16
n_layer = 2
n_head = 2
n_embd = 32
dropout = 0.1
bias = False
learning_rate = 1e-2
max_iters = 20
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.99
grad_clip = 1.0
decay_lr = True
warmup_iters = 4
lr_decay_iters = 30
min_lr = 1e-3
backend = 'gloo'
device = 'cpu'
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
compile = False
config_keys = [k for k, v in globals().items()
               if not k.startswith('_') and isinstance(v, (int, float, bool, str))]
config_keys.remove('TEXT')
config = {k: globals()[k] for k in config_keys}
# -----------------------------------------------------------------------------


def prepare():
    """Characters to ids, 90% to train.bin and 10% to val.bin as uint16, the alphabet to
    meta.pkl: what nanoGPT's data/shakespeare_char/prepare.py writes."""
    chars = sorted(set(TEXT))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    n = len(TEXT)
    train_ids = np.array([stoi[c] for c in TEXT[:int(n * 0.9)]], dtype=np.uint16)
    val_ids = np.array([stoi[c] for c in TEXT[int(n * 0.9):]], dtype=np.uint16)
    train_ids.tofile(os.path.join(data_dir, 'train.bin'))
    val_ids.tofile(os.path.join(data_dir, 'val.bin'))
    with open(os.path.join(data_dir, 'meta.pkl'), 'wb') as f:
        pickle.dump({'vocab_size': len(chars), 'itos': itos, 'stoi': stoi}, f)
    print(f"vocab size: {len(chars)}, train has {len(train_ids)} tokens, "
          f"val has {len(val_ids)} tokens")


# ---- the model ----

class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (nn.LayerNorm's bias= came later)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            # the mask, for the attention written out
            n = config.block_size
            self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, 1, n, n))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # one matrix, two uses
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        print(f"number of parameters: {self.get_num_params() / 1e6:.2f}M")

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])  # the last position is all sampling needs
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0},
        ]
        num_decay_params = sum(p.numel() for p in decay_params)
        num_nodecay_params = sum(p.numel() for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, "
              f"with {num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, "
              f"with {num_nodecay_params:,} parameters")
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        return optimizer

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size \
                else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


# ---- train.py ----

def train(init_from, max_iters):
    ddp = int(os.environ.get('RANK', -1)) != -1  # a torchrun launch? not here
    if ddp:
        init_process_group(backend=backend)
    master_process, seed_offset = True, 0
    tokens_per_iter = gradient_accumulation_steps * batch_size * block_size
    print(f"tokens per iteration will be: {tokens_per_iter:,}")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(1337 + seed_offset)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device_type = 'cuda' if 'cuda' in device else 'cpu'
    ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16,
               'float16': torch.float16}[dtype]
    ctx = nullcontext() if device_type == 'cpu' \
        else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

    def get_batch(split):
        # a new memmap each batch, as nanoGPT does
        name = 'train.bin' if split == 'train' else 'val.bin'
        data = np.memmap(os.path.join(data_dir, name), dtype=np.uint16, mode='r')
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64))
                         for i in ix])
        return x.to(device), y.to(device)

    iter_num = 0
    best_val_loss = 1e9
    with open(os.path.join(data_dir, 'meta.pkl'), 'rb') as f:
        meta_vocab_size = pickle.load(f)['vocab_size']
    model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                      bias=bias, vocab_size=None, dropout=dropout)
    if init_from == 'scratch':
        print("Initializing a new model from scratch")
        model_args['vocab_size'] = meta_vocab_size
        model = GPT(GPTConfig(**model_args))
    elif init_from == 'resume':
        print("Resuming training from out_dir")
        ckpt_path = os.path.join(out_dir, 'ckpt.pt')
        checkpoint = torch.load(ckpt_path, map_location=device)
        checkpoint_model_args = checkpoint['model_args']
        for k in ['n_layer', 'n_head', 'n_embd', 'block_size', 'bias', 'vocab_size']:
            model_args[k] = checkpoint_model_args[k]
        model = GPT(GPTConfig(**model_args))
        state_dict = checkpoint['model']
        unwanted_prefix = '_orig_mod.'
        for k, _v in list(state_dict.items()):
            if k.startswith(unwanted_prefix):
                state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
        model.load_state_dict(state_dict)
        iter_num = checkpoint['iter_num']
        best_val_loss = checkpoint['best_val_loss']
    model.to(device)

    scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16' and device_type == 'cuda'))
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2),
                                           device_type)
    if init_from == 'resume':
        optimizer.load_state_dict(checkpoint['optimizer'])
    checkpoint = None
    if compile:
        model = torch.compile(model)
    if ddp:
        model = DDP(model, device_ids=[0])

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    def get_lr(it):
        if it < warmup_iters:  # linear warmup
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # from 1 down to 0
        return min_lr + coeff * (learning_rate - min_lr)

    X, Y = get_batch('train')
    raw_model = model.module if ddp else model
    while True:
        lr = get_lr(iter_num) if decay_lr else learning_rate
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
        if iter_num % eval_interval == 0 and master_process:
            losses = estimate_loss()
            print(f"step {iter_num}: train loss {losses['train']:.4f}, "
                  f"val loss {losses['val']:.4f}")
            if losses['val'] < best_val_loss or always_save_checkpoint:
                best_val_loss = losses['val']
                if iter_num > 0:
                    checkpoint = {
                        'model': raw_model.state_dict(),
                        'optimizer': optimizer.state_dict(),
                        'model_args': model_args,
                        'iter_num': iter_num,
                        'best_val_loss': best_val_loss,
                        'config': config,
                    }
                    print("saving checkpoint to out_dir")
                    torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))
        if iter_num == 0 and init_from == 'scratch':
            pass  # nanoGPT's eval_only would stop here
        for _micro_step in range(gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / gradient_accumulation_steps
            X, Y = get_batch('train')  # the next batch while (on a GPU) this one runs
            scaler.scale(loss).backward()
        if grad_clip != 0.0:
            scaler.unscale_(optimizer)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if iter_num % log_interval == 0 and master_process:
            lossf = loss.item() * gradient_accumulation_steps
            print(f"iter {iter_num}: loss {lossf:.4f}, lr {lr:.6f}, grad norm {norm.item():.4f}")
        iter_num += 1
        if iter_num > max_iters:
            break
    if ddp:
        destroy_process_group()
    return raw_model


# ---- sample.py ----

def sample(start, num_samples, max_new_tokens, temperature, top_k):
    torch.manual_seed(1337)
    ckpt_path = os.path.join(out_dir, 'ckpt.pt')
    checkpoint = torch.load(ckpt_path, map_location=device)
    model = GPT(GPTConfig(**checkpoint['model_args']))
    model.load_state_dict(checkpoint['model'])
    model.eval()
    model.to(device)
    print(f"checkpoint of iter {checkpoint['iter_num']}, best val loss "
          f"{checkpoint['best_val_loss']:.4f}, dataset {checkpoint['config']['dataset']}")
    with open(os.path.join(data_dir, 'meta.pkl'), 'rb') as f:
        meta = pickle.load(f)
    stoi, itos = meta['stoi'], meta['itos']
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731 (sample.py's own lambdas)
    decode = lambda ids: ''.join([itos[i] for i in ids])  # noqa: E731
    x = torch.tensor(encode(start), dtype=torch.long, device=device)[None, ...]
    with torch.no_grad():
        for _k in range(num_samples):
            y = model.generate(x, max_new_tokens, temperature=temperature, top_k=top_k)
            print(repr(decode(y[0].tolist())))
            print('---------------')


prepare()
first = train('scratch', max_iters)
# a second process in nanoGPT: `python train.py ... --init_from=resume --max_iters=30`
second = train('resume', 30)
sample("KEEPER:", num_samples=2, max_new_tokens=40, temperature=0.8, top_k=8)
