"""A bigram model of names in the style of makemore part 1, on a slice of names.txt. First
counted: an int32 count matrix filled one bigram at a time by N[ix1, ix2] += 1, drawn with
plt.imshow and plt.text, a row turned into probabilities and sampled with torch.multinomial
from a seeded torch.Generator, the smoothed matrix P = (N + 1).float() normalised in place
by broadcasting its row sums, names sampled from it and the average negative log likelihood.
Then learned: the same model as one linear layer on F.one_hot inputs, logits exponentiated
and normalised by hand, the loss picked out with probs[torch.arange(num), ys] plus a weight
penalty, W.grad = None, loss.backward() and W.data += -50 * W.grad, and names sampled from
the trained network."""
import matplotlib
import torch
import torch.nn.functional as F

matplotlib.use("Agg")  # no window: the figures are made, their contents printed, then closed
import matplotlib.pyplot as plt  # noqa: E402

with open("../data/names.txt") as f:  # run from tests/torch_programs, as the test runs it
    words = f.read().splitlines()
print("words", len(words), words[:5], min(len(w) for w in words), max(len(w) for w in words))

chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
words = words[:350]  # a slice: every += below is an op

# ---- counting ----
N = torch.zeros((27, 27), dtype=torch.int32)
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1
print("N", N.dtype, N.shape, "total", N.sum().item(), "biggest", N.max().item())
print(N[0, 1], N[stoi["a"], 0], N[stoi["n"]].tolist())

plt.figure(figsize=(8, 8))
image = plt.imshow(N, cmap="Blues")
for i in range(3):
    for j in range(27):
        chstr = itos[i] + itos[j]
        plt.text(j, i, chstr, ha="center", va="bottom", color="gray")
        plt.text(j, i, N[i, j].item(), ha="center", va="top", color="gray")
plt.axis("off")
print("imshow", image.get_array().shape, image.get_array().sum(), image.get_array().dtype)
print("texts", len(plt.gca().texts), [t.get_text() for t in plt.gca().texts[:6]])
plt.close()

p = N[0].float()
p = p / p.sum()
print("p", p.dtype, f"{p.sum().item():.4f}", [round(v, 4) for v in p[:6].tolist()])

g = torch.Generator().manual_seed(2147483647)
p3 = torch.rand(3, generator=g)
p3 = p3 / p3.sum()
print("p3", p3)
print("draws", torch.multinomial(p3, num_samples=20, replacement=True, generator=g))
ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
print("first letter", ix, itos[ix])

P = (N + 1).float()
P /= P.sum(1, keepdims=True)
print("P", P.shape, P.sum(1, keepdims=True).shape, f"{P[0].sum().item():.4f}",
      f"{P[5].sum().item():.4f}", f"{P[stoi['q'], stoi['u']].item():.4f}")

# without keepdims the (27,) sums broadcast as a row: each column is divided, not each row
Q = (N + 1).float()
Q = Q / Q.sum(1)
print("columns divided", f"{Q[0].sum().item():.6f}", f"{Q[:, 0].sum().item():.6f}",
      torch.allclose(Q, P), Q.sum(0).shape)

g = torch.Generator().manual_seed(2147483647)
for _ in range(5):
    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print("".join(out))

log_likelihood = 0.0
n = 0
for w in words[:40]:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        prob = P[ix1, ix2]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
        if n <= 4:
            print(f"{ch1}{ch2}: {prob:.4f} {logprob:.4f}")
print(f"{log_likelihood=}")
nll = -log_likelihood
print(f"{nll=}")
print(f"{nll / n}")

# ---- the neural network ----
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print("number of examples:", num, xs[:5], ys[:5])

xenc = F.one_hot(xs, num_classes=27).float()
print("xenc", xenc.shape, xenc.dtype, xenc[:3].argmax(1))
plt.imshow(xenc[:20])
print("one-hot image", plt.gci().get_array().shape, plt.gci().get_array().sum())
plt.close()

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)
print("W", W[0, :3], W.is_leaf)

# the first five examples, one by one, as the lecture walks through them
nlls = torch.zeros(5)
with torch.no_grad():
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    for i in range(5):
        x = xs[i].item()
        y = ys[i].item()
        p = probs[i, y]
        logp = torch.log(p)
        nlls[i] = -logp
        print(f"{itos[x]}{itos[y]}: prob {p.item():.4f} nll {-logp.item():.4f}")
print("average nll", f"{nlls.mean().item():.4f}")

for k in range(30):
    # forward pass
    xenc = F.one_hot(xs, num_classes=27).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
    if k % 5 == 0 or k == 29:
        print("step", k, f"loss {loss.item():.4f}")

    # backward pass
    W.grad = None
    loss.backward()
    if k == 0:
        print("grad", W.grad.shape, f"{W.grad.abs().sum().item():.6f}",
              [round(v, 6) for v in W.grad[0, :4].tolist()])

    # update
    W.data += -50 * W.grad

g = torch.Generator().manual_seed(2147483647)
for _ in range(5):
    out = []
    ix = 0
    while True:
        xenc = F.one_hot(torch.tensor([ix]), num_classes=27).float()
        logits = xenc @ W
        counts = logits.exp()
        p = counts / counts.sum(1, keepdims=True)
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print("".join(out))
