"""A bigram language model of characters in the style of the GPT lecture's first script: a
character vocabulary from a text, encode/decode lambdas, the text as one long int64 tensor
split 90/10 into train and val, get_batch built on torch.randint and torch.stack, a
BigramLanguageModel holding one nn.Embedding(vocab, vocab) whose forward returns
(logits, loss) through logits.view(B*T, C) and F.cross_entropy, and whose generate samples
with softmax and torch.multinomial and grows the context with torch.cat; an estimate_loss
decorated with @torch.no_grad() that switches eval()/train() and averages into
torch.zeros(eval_iters); AdamW with zero_grad(set_to_none=True); the device chosen by
torch.cuda.is_available() and everything moved .to(device)."""
import torch
import torch.nn as nn
from torch.nn import functional as F

# settings, kept small so that the run takes a second or two
batch_size = 16  # rows per batch
block_size = 8  # characters per row
max_iters = 60
eval_interval = 20
learning_rate = 1e-3
device = 'cuda' if torch.cuda.is_available() else 'cpu'
eval_iters = 10

torch.manual_seed(1337)

# the text to learn from: a few paragraphs written for this test
text = """On the hill above the harbour stands a lamp that nobody lights.
The keeper left it forty winters ago, when the boats stopped coming,
and the gulls have had the tower since. At dusk the fog rolls in
from the bay and settles on the stones like wool on a fence,
and the children of the village say the lamp remembers the ships.

Every spring the baker climbs the path with a loaf under each arm.
She leaves one on the step for the keeper, who is not there,
and one on the wall for the gulls, who are. Then she sits
on the warm rock and counts the sails on the far side of the water:
seven on a good day, two on a poor one, none when the wind is wrong.

The lamp is made of brass and glass and a little patience.
Its lens was ground by hand in a town that no map keeps any more,
and when the sun goes down behind the island the glass catches
the last of the light and throws it back across the bay,
so that for a minute or two the old tower shines again.
"""

# the vocabulary: every character of the text, sorted
chars = sorted(list(set(text)))
vocab_size = len(chars)
print(''.join(chars))
print(vocab_size)
# character <-> integer
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]  # noqa: E731 - text to ids
decode = lambda l: ''.join([itos[i] for i in l])  # noqa: E731, E741 - ids to text
print(encode("the lamp"))
print(decode(encode("the lamp")))

# the whole text as one tensor of ids, split 90/10
data = torch.tensor(encode(text), dtype=torch.long)
print(data.shape, data.dtype)
print(data[:24])
n = int(0.9 * len(data))
train_data = data[:n]
val_data = data[n:]
print(len(train_data), len(val_data))

x = train_data[:block_size]
y = train_data[1:block_size + 1]
for t in range(3):
    context = x[:t + 1]
    target = y[t]
    print(f"after {context} comes {target}")


def get_batch(split):
    # batch_size random windows of the split; the targets are the windows shifted by one
    data = train_data if split == 'train' else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
    x, y = x.to(device), y.to(device)
    return x, y


xb, yb = get_batch('train')
print('inputs:')
print(xb.shape)
print(xb[:2])
print('targets:')
print(yb.shape)
print(yb[:2])


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


class BigramLanguageModel(nn.Module):

    def __init__(self, vocab_size):
        super().__init__()
        # row i of the table: the scores of the character that follows character i
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):

        logits = self.token_embedding_table(idx)  # (B,T,C)

        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            loss = F.cross_entropy(logits, targets)

        return logits, loss

    def generate(self, idx, max_new_tokens):
        # idx: (B, T) ids; each step appends one sampled id to every row
        for _ in range(max_new_tokens):
            logits, loss = self(idx)
            logits = logits[:, -1, :]  # the scores after the last character: (B, C)
            probs = F.softmax(logits, dim=-1)  # (B, C)
            idx_next = torch.multinomial(probs, num_samples=1)  # (B, 1)
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx


model = BigramLanguageModel(vocab_size)
m = model.to(device)
logits, loss = m(xb, yb)
print(logits.shape)
print(f"{loss.item():.4f}")
print(m.training, m.token_embedding_table.weight.device)

print(decode(m.generate(idx=torch.zeros((1, 1), dtype=torch.long), max_new_tokens=40)[0].tolist()))

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
    optimizer.step()

print(f"last batch loss {loss.item():.4f}", m.training, losses['val'].requires_grad)
print(f"{m.token_embedding_table.weight.grad.abs().sum().item():.5f}")
optimizer.zero_grad(set_to_none=True)
print([p.grad is None for p in m.parameters()])

# 1e-3 hardly moves a bigram table in 60 steps: 40 more at 0.1
for g in optimizer.param_groups:
    g['lr'] = 1e-1
for _ in range(40):
    xb, yb = get_batch('train')
    logits, loss = m(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
print(f"{loss.item():.4f}")

# a sample from the trained table
context = torch.zeros((1, 1), dtype=torch.long, device=device)
print(decode(m.generate(context, max_new_tokens=200)[0].tolist()))
# generate works on a batch: three rows sampled side by side, each from its own start
starts = torch.tensor([[stoi['T']], [stoi['s']], [stoi['\n']]], device=device)
for row in m.generate(starts, max_new_tokens=30).tolist():
    print(repr(decode(row)))
