"""A character model with a head of causal self-attention, written as the GPT lecture writes
it: the keys, queries and values split from one Linear, the scores masked with
masked_fill(tril == 0, -inf) before their softmax, a GELU feed-forward, AdamW, and sampling
with topk and multinomial. Then the other names that small PyTorch programs reach for: a
logistic regression with binary_cross_entropy, one_hot, einsum and bmm, cumsum, logsumexp,
log1p, sort and nonzero, and a custom autograd.Function checked with gradcheck."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1337)
text = "the cat sat on the mat. the dog sat on the log. " * 6
chars = sorted(set(text))
vocab = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
block, batch, embd = 8, 6, 16


def get_batch():
    ix = torch.randint(len(data) - block, (batch,))
    x = torch.stack([data[i:i + block] for i in ix])
    y = torch.stack([data[i + 1:i + block + 1] for i in ix])
    return x, y


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(embd, 3 * embd, bias=False)
        self.tril = torch.tril(torch.ones(block, block))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(embd, dim=2)
        wei = q @ k.transpose(-2, -1) * C**-0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ v


class CharModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab, embd)
        self.pos = nn.Embedding(block, embd)
        self.attn = Attention()
        self.ffwd = nn.Sequential(nn.Linear(embd, 4 * embd), nn.GELU(), nn.Linear(4 * embd, embd))
        self.lm_head = nn.Linear(embd, vocab)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(T))
        x = x + self.attn(x)
        x = x + self.ffwd(x)
        logits = self.lm_head(x)
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(B * T, vocab), targets.view(B * T))


model = CharModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(40):
    xb, yb = get_batch()
    _, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 10 == 0 or step == 39:
        print(f"step {step}: loss {loss.item():.4f}")

with torch.no_grad():
    idx = torch.zeros((1, 1), dtype=torch.long)
    for _ in range(16):
        logits, _ = model(idx[:, -block:])
        logits = logits[:, -1, :]
        v, _ = torch.topk(logits, 3)
        logits[logits < v[:, [-1]]] = -float("inf")
        probs = F.softmax(logits, dim=-1)
        idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
print("sample:", repr("".join(chars[i] for i in idx[0].tolist())))

# a logistic regression: sigmoid probabilities and binary cross-entropy
torch.manual_seed(0)
points = torch.randn(64, 2)
labels = (points[:, 0] + 0.5 * points[:, 1] > 0).float()
clf = nn.Linear(2, 1)
sgd = torch.optim.SGD(clf.parameters(), lr=0.5)
for _ in range(50):
    p = torch.sigmoid(clf(points)).squeeze(1)
    bce = F.binary_cross_entropy(p, labels)
    sgd.zero_grad()
    bce.backward()
    sgd.step()
accuracy = ((p > 0.5).float() == labels).float().mean()
print(f"logistic regression: loss {bce.item():.4f}, accuracy {accuracy.item():.3f}")

# the lectures' other names
xs = torch.tensor([0, 5, 13])
print("one_hot:", F.one_hot(xs, num_classes=14).sum(0).tolist())
a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
print("einsum == bmm:",
      torch.allclose(torch.einsum("bij,bjk->bik", a, b), torch.bmm(a, b), atol=1e-6))
print("einsum trace:", round(torch.einsum("ij,ij->", a[0], a[0]).item(), 4))
r = torch.arange(1.0, 6.0)
print("cumsum:", r.cumsum(0).tolist(), "logsumexp:", round(torch.logsumexp(r, dim=0).item(), 4))
print("log1p:", [f"{t:.6g}" for t in torch.log1p(torch.tensor([1e-8, 0.5, 3.0])).tolist()])
values, order = torch.sort(torch.tensor([3.0, 1.0, 2.0]), descending=True)
print("sort:", values.tolist(), order.tolist(),
      "nonzero:", torch.tensor([0, 2, 0, 4]).nonzero().flatten().tolist())
print("leaky_relu:", F.leaky_relu(torch.tensor([-2.0, 3.0]), 0.1).tolist())


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x**2


class WrongCube(Cube):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 2 * x**2


point = torch.randn(4, dtype=torch.double, requires_grad=True)
print("gradcheck Cube:", torch.autograd.gradcheck(Cube.apply, (point,), eps=1e-6, atol=1e-4))
print("gradcheck WrongCube:",
      torch.autograd.gradcheck(WrongCube.apply, (point,), eps=1e-6, atol=1e-4,
                               raise_exception=False))
