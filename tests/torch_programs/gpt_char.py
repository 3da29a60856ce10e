"""A small character GPT in the style of the GPT lecture's second script. First the
lecture's warm-up: a bag of words averaged over the past with a loop, with a tril matrix of
weights, with masked_fill(-inf) and softmax, checked equal by allclose; one head of
self-attention on random numbers; softmax of sharpened scores; rows normalised by hand and
compared with F.layer_norm. Then the model: a Head with key/query/value
nn.Linear(n_embd, head_size, bias=False), a registered tril buffer, scores scaled by
k.shape[-1]**-0.5 and masked with masked_fill(tril[:T, :T] == 0, -inf), softmax and
dropout; MultiHeadAttention over an nn.ModuleList of heads joined by torch.cat(dim=-1), a
projection and dropout; FeedFoward as nn.Sequential(Linear, ReLU, Linear, Dropout); Blocks
with two LayerNorms and residual additions, stacked in nn.Sequential(*[...]); token and
position embeddings (torch.arange(T, device=device)); weights set by self.apply of an
_init_weights that calls torch.nn.init.normal_(mean=0.0, std=0.02) and zeros_; dropout 0.2
with the generator's masks; AdamW, the first gradients' norms printed; an estimate_loss
under @torch.no_grad() in eval mode;
generate cropping idx[:, -block_size:]; the state dict saved with torch.save and loaded
into a new model with torch.load."""
import os
import tempfile

import torch
import torch.nn as nn
from torch.nn import functional as F

# settings: a model of some 28 thousand weights, trained for a few seconds
batch_size = 12  # rows per batch
block_size = 16  # characters of context at most
max_iters = 40
eval_interval = 10
learning_rate = 1e-3
device = 'cuda' if torch.cuda.is_available() else 'cpu'
eval_iters = 4
n_embd = 32
n_head = 4
n_layer = 2
dropout = 0.2

torch.manual_seed(1337)

# warm-up: position t of each row replaced by the mean of positions 0..t, three ways
B, T, C = 4, 8, 2
x = torch.randn(B, T, C)
by_loop = torch.zeros((B, T, C))
for b in range(B):
    for t in range(T):
        by_loop[b, t] = torch.mean(x[b, :t + 1], 0)
tril = torch.tril(torch.ones(T, T))
by_matrix = (tril / tril.sum(1, keepdim=True)) @ x  # (T, T) broadcast against (B, T, C)
wei = F.softmax(torch.zeros((T, T)).masked_fill(tril == 0, float('-inf')), dim=-1)
by_softmax = wei @ x
# the sums run in another order (torch's own two differ by 3e-8 where a mean is 0.002):
# equal within float32 rounding, so within a tolerance above it
print(torch.allclose(by_loop, by_matrix, atol=1e-6), torch.allclose(by_loop, by_softmax, atol=1e-6))
print(by_loop[0, :3].tolist())
print(wei[2])
weights = torch.tril(torch.ones(4, 4))
weights = weights / torch.sum(weights, 1, keepdim=True)
print(weights @ torch.randint(0, 10, (4, 3)).float())

# one head of attention over random inputs, its weights from the default init
B, T, C = 4, 8, 32
x = torch.randn(B, T, C)
head_size = 16
key = nn.Linear(C, head_size, bias=False)
query = nn.Linear(C, head_size, bias=False)
value = nn.Linear(C, head_size, bias=False)
k = key(x)
q = query(x)
wei = q @ k.transpose(-2, -1) * head_size**-0.5  # (B, T, T)
wei = wei.masked_fill(tril == 0, float('-inf'))
wei = F.softmax(wei, dim=-1)
out = wei @ value(x)
print(out.shape)
print([f"{w:.4f}" for w in wei[0, 3].tolist()])
print(f"{k.var().item():.4f} {q.var().item():.4f} {wei.var().item():.4f}")
# why the scores are scaled: large scores make softmax pick one position
scores = torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5])
print(torch.softmax(scores, dim=-1), torch.softmax(scores * 8, dim=-1))


def normalise_rows(x, eps=1e-5):
    """Each row brought to mean 0 and variance 1: what nn.LayerNorm does before its gain
    and bias (its variance divides by n, not n - 1)."""
    centred = x - x.mean(1, keepdim=True)
    return centred / torch.sqrt(centred.pow(2).mean(1, keepdim=True) + eps)


rows = torch.randn(32, 100) * 3 + 1
x = normalise_rows(rows)
print(torch.allclose(x, F.layer_norm(rows, (100,)), atol=1e-5), x.var(1, keepdim=True).shape)
print(f"{x[:, 0].mean().item():.4f} {x[:, 0].std().item():.4f} "
      f"{x[0, :].mean().item():.4f} {x[0, :].std(unbiased=False).item():.4f}")

# the text to learn from: a few paragraphs written for this test
text = """Mira kept a garden on the roof of the old print works, between the chimney
and the water tank. She grew beans up the railings and tomatoes in paint tins,
and in the corner where the sun stayed longest she kept a fig tree in a barrel.
The pigeons came for the peas, the sparrows for the seed heads, and once a year
a kestrel came for the pigeons and sat on the tank looking pleased with itself.

In the evenings the neighbours climbed the iron stairs with chairs and cups.
They talked about the weather and the rent and the price of onions, and they
argued about whether the fig would ever ripen this far north. Old Tomas said
it never would. Mira said it only needed patience and a warm September.

The fig ripened in the second week of October, three of them, soft and purple.
Mira cut them into quarters so that everyone could have a piece, and Tomas ate
his slowly, without a word, and then asked if she had any cuttings to spare.
Now there are figs in barrels on four roofs along the street, and every autumn
the neighbours climb each other's stairs to count them.
"""

# the vocabulary and the two directions of the mapping
chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]  # noqa: E731 - text to ids
decode = lambda l: ''.join([itos[i] for i in l])  # noqa: E731, E741 - ids to text

# 90% to train on, 10% to validate
data = torch.tensor(encode(text), dtype=torch.long)
n = int(0.9 * len(data))
train_data = data[:n]
val_data = data[n:]
print(vocab_size, len(train_data), len(val_data))


def get_batch(split):
    # random windows of the split, and the same windows one character later
    data = train_data if split == 'train' else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
    x, y = x.to(device), y.to(device)
    return x, y


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


class Head(nn.Module):
    """Causal self-attention with one set of keys, queries and values."""

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        # how much each position attends to each earlier one, scaled to keep softmax soft
        wei = q @ k.transpose(-2, -1) * k.shape[-1]**-0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))  # no looking ahead
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)
        out = wei @ v  # (B, T, head_size)
        return out


class MultiHeadAttention(nn.Module):
    """Several heads side by side, their outputs concatenated and projected."""

    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.dropout(self.proj(out))
        return out


class FeedFoward(nn.Module):
    """Per-position MLP, four times wider inside."""

    def __init__(self, n_embd):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.ReLU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """Attention, then the MLP, each on a layer-normed input and added back."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        head_size = n_embd // n_head
        self.sa = MultiHeadAttention(n_head, head_size)
        self.ffwd = FeedFoward(n_embd)
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x


class GPTLanguageModel(nn.Module):

    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

        # small normal weights and zero biases instead of the layers' defaults
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape

        tok_emb = self.token_embedding_table(idx)  # (B, T, n_embd)
        pos_emb = self.position_embedding_table(torch.arange(T, device=device))  # (T, n_embd)
        x = tok_emb + pos_emb
        x = self.blocks(x)
        x = self.ln_f(x)
        logits = self.lm_head(x)  # (B, T, vocab_size)

        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            loss = F.cross_entropy(logits, targets)

        return logits, loss

    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            # the position table has block_size rows: look at the last block_size ids only
            idx_cond = idx[:, -block_size:]
            logits, loss = self(idx_cond)
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


model = GPTLanguageModel()
m = model.to(device)
print(sum(p.numel() for p in m.parameters())/1e6, 'M parameters')
print(f"{m.lm_head.weight.std().item():.5f}", m.lm_head.bias.abs().sum().item(),
      m.blocks[1].ln2.weight.sum().item())
state = m.state_dict()
print(len(state), list(state)[:8])

optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)

for iter in range(max_iters):

    # the averaged losses now and then, and after the last step
    if iter % eval_interval == 0 or iter == max_iters - 1:
        losses = estimate_loss()
        print(f"step {iter}: estimated loss, train {losses['train']:.4f}, val {losses['val']:.4f}")

    xb, yb = get_batch('train')

    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if iter == 0:  # the first gradients of a block, each parameter's norm
        print(' '.join(f"{p.grad.norm().item():.4e}" for p in m.blocks[0].parameters()))
    optimizer.step()

print(f"last loss {loss.item():.4f}")
grad = m.blocks[0].sa.heads[1].query.weight.grad
print(f"{grad.norm().item():.4e} {m.position_embedding_table.weight.grad.abs().sum().item():.6f}")

# a sample, then the weights saved and loaded into a fresh model
context = torch.zeros((1, 1), dtype=torch.long, device=device)
print(repr(decode(m.generate(context, max_new_tokens=40)[0].tolist())))

path = os.path.join(tempfile.mkdtemp(), 'gpt.pt')
torch.save(m.state_dict(), path)
copy = GPTLanguageModel().to(device)
print(copy.load_state_dict(torch.load(path, map_location=device)))
copy.eval()
m.eval()
with torch.no_grad():
    xb, yb = get_batch('val')
    print(f"{m(xb, yb)[1].item():.4f} {copy(xb, yb)[1].item():.4f}")
print(torch.equal(copy.blocks[1].sa.heads[3].tril, m.blocks[1].sa.heads[3].tril))
