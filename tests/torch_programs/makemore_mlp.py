"""A character MLP of names in the style of makemore parts 2 and 3, on a slice of names.txt
shuffled by Python's random.seed(42) and split 80/10/10 by build_dataset (a context of
three letters). Part 2: an embedding table C indexed by the contexts (emb = C[X]), the
embeddings joined by torch.cat(torch.unbind(emb, 1), 1) and by emb.view(-1, 30), the
cross-entropy written out and through F.cross_entropy, minibatches drawn by torch.randint with
a seeded Generator, the learning-rate search over 10**torch.linspace(-3, 0, 1000) plotted
with plt.plot(lri, lossi), the update p.data += -lr * p.grad, the embedding drawn with
plt.scatter and plt.text. Part 3: W1 scaled by (5/3) / 30**0.5, batch normalisation written
out (bngain, bnbias, hpreact.mean(0, keepdim=True), .std(0, keepdim=True), running
statistics under torch.no_grad()), plt.hist of the activations, plt.imshow(h.abs() > 0.99),
the losses averaged with torch.tensor(lossi).view(-1, 10).mean(1), an @torch.no_grad()
split_loss over 'train'/'val'/'test'; then the lecture's own Linear, BatchNorm1d and Tanh
classes keeping .out (a network without batch normalisation first, its biases added in
place), layer.out.retain_grad(), the activation and gradient statistics with
torch.histogram(t, density=True) plotted, the update-to-data ratios, and names sampled in
eval mode with F.softmax and torch.multinomial."""
import random

import matplotlib
import torch
import torch.nn.functional as F

matplotlib.use("Agg")  # no window: the figures are made, their contents printed, then closed
import matplotlib.pyplot as plt  # noqa: E402


def line_summary(line):
    """A plotted line as numbers: how many points, the first and last x, the y's sum."""
    x, y = line.get_xdata(), line.get_ydata()
    return f"{len(x)} points, x {float(x[0]):.6f}..{float(x[-1]):.6f}, y sum {float(sum(y)):.6f}"


with open("../data/names.txt") as f:  # run from tests/torch_programs, as the test runs it
    words = f.read().splitlines()
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)
print("vocab_size", vocab_size)

random.seed(42)
random.shuffle(words)
words = words[:800]  # a slice, so that the program stays quick
block_size = 3  # letters of context


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape, X.dtype)
    return X, Y


n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])
for x, y in zip(Xtr[:4], Ytr[:4]):
    print("".join(itos[ix.item()] for ix in x), "--->", itos[y.item()])

# ---- part 2: the MLP ----
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((27, 10), generator=g)
emb = C[Xtr]
print("emb", emb.shape, C[5], F.one_hot(torch.tensor(5), num_classes=27).float() @ C)
joined = torch.cat(torch.unbind(emb, 1), 1)
print("cat of unbind", joined.shape, (joined == emb.view(-1, 30)).all().item())
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]
print("parameters", sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

# the cross-entropy written out, then F.cross_entropy
emb = C[Xtr[:32]]
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
logits = h @ W2 + b2
counts = logits.exp()
prob = counts / counts.sum(1, keepdims=True)
loss = -prob[torch.arange(32), Ytr[:32]].log().mean()
print(f"by hand {loss.item():.4f}, F.cross_entropy {F.cross_entropy(logits, Ytr[:32]).item():.4f}")
print("h saturated", f"{(h.abs() > 0.99).float().mean().item():.6f}")

# the learning-rate search
lre = torch.linspace(-3, 0, 1000)
lrs = 10**lre
lri, lossi = [], []
for i in range(0, 800, 20):  # up to lr 0.22: beyond it the loss jumps, and float32 noise with it
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = lrs[i]
    for p in parameters:
        p.data += -lr * p.grad
    lri.append(lre[i])
    lossi.append(loss.item())
(line,) = plt.plot(lri, lossi)
print("lr search:", line_summary(line))
print("last lr", f"{lr.item():.6f}", f"loss {lossi[-1]:.4f}")
plt.close()

g = torch.Generator().manual_seed(2147483647)  # a fresh start, trained at the rate found
C = torch.randn((27, 10), generator=g)
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, 27), generator=g)
b2 = torch.randn(27, generator=g)
parameters = [C, W1, b1, W2, b2]
for p in parameters:
    p.requires_grad = True
stepi, lossi = [], []
for i in range(40):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 30 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    stepi.append(i)
    lossi.append(loss.log10().item())
(line,) = plt.plot(stepi, lossi)
print("training:", line_summary(line))
plt.close()
for X, Y in [(Xtr, Ytr), (Xdev, Ydev)]:
    emb = C[X]
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
    print(f"split loss {F.cross_entropy(h @ W2 + b2, Y).item():.4f}")

plt.figure(figsize=(8, 8))
dots = plt.scatter(C[:, 0].data, C[:, 1].data, s=200)
for i in range(C.shape[0]):
    plt.text(C[i, 0].item(), C[i, 1].item(), itos[i], ha="center", va="center", color="white")
plt.grid("minor")
print("scatter", dots.get_offsets().shape, f"{dots.get_offsets().sum():.4f}",
      plt.gca().texts[1].get_position())
plt.close()

# ---- part 3: initialisation and batch normalisation written out ----
print("expected first loss", f"{-torch.tensor(1 / 27.0).log().item():.4f}")
x = torch.randn(1000, 10, generator=g)
w = torch.randn(10, 200, generator=g) / 10**0.5
y = x @ w
print(f"x std {x.std().item():.6f}, y std {y.std().item():.6f}")

n_embd, n_hidden = 10, 200
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / (30**0.5)
b1 = torch.randn(n_hidden, generator=g) * 0.01  # drawn, not used: bnbias replaces it
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.01
b2 = torch.randn(vocab_size, generator=g) * 0
bngain = torch.ones((1, n_hidden))
bnbias = torch.zeros((1, n_hidden))
bnmean_running = torch.zeros((1, n_hidden))
bnstd_running = torch.ones((1, n_hidden))
parameters = [C, W1, W2, b2, bngain, bnbias]
print("parameters", sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

max_steps, batch_size = 30, 32
lossi = []
for i in range(max_steps):
    ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix]
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmeani = hpreact.mean(0, keepdim=True)
    bnstdi = hpreact.std(0, keepdim=True)
    hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
    with torch.no_grad():
        bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
        bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Yb)
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 20 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    if i % 10 == 0:
        print(f"{i:7d}/{max_steps:7d}: {loss.item():.4f}")
    if i == 0:
        counts, bins, patches = plt.hist(h.view(-1).tolist(), 50)
        print("hist", len(patches), counts.sum(), counts[:5].tolist(), f"{bins[0]:.6f}")
        plt.close()
        counts, bins, patches = plt.hist(hpreact.view(-1).tolist(), 50)
        print("hpreact hist", counts.max(), f"{bins[0]:.6f} {bins[-1]:.6f}")
        plt.close()
        plt.figure(figsize=(20, 10))
        image = plt.imshow(h.abs() > 0.99, cmap="gray", interpolation="nearest")
        print("saturated", image.get_array().shape, image.get_array().sum())
        plt.close()
        print("grads", f"{bngain.grad.abs().sum().item():.6f}", f"{W1.grad.std().item():.6f}",
              f"{C.grad.abs().sum().item():.6f}")
    lossi.append(loss.log10().item())
(line,) = plt.plot(torch.tensor(lossi).view(-1, 10).mean(1))
print("averaged:", line_summary(line))
plt.close()
print("running", f"{bnmean_running.mean().item():.6f}", f"{bnstd_running.mean().item():.6f}")

# the batch statistics of the whole training set, as the lecture calibrates them
with torch.no_grad():
    emb = C[Xtr]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    bnmean = hpreact.mean(0, keepdim=True)
    bnstd = hpreact.std(0, keepdim=True)
print("calibrated", f"{bnmean.abs().mean().item():.6f}", f"{bnstd.mean().item():.6f}")


@torch.no_grad()
def split_loss(split):
    x, y = {
        "train": (Xtr, Ytr),
        "val": (Xdev, Ydev),
        "test": (Xte, Yte),
    }[split]
    emb = C[x]
    embcat = emb.view(emb.shape[0], -1)
    hpreact = embcat @ W1
    hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, y)
    print(split, f"{loss.item():.4f}", loss.requires_grad)


split_loss("train")
split_loss("val")
split_loss("test")

# ---- part 3: the layers as classes ----


class Linear:

    def __init__(self, fan_in, fan_out, bias=True):
        self.weight = torch.randn((fan_in, fan_out), generator=g) / fan_in**0.5
        self.bias = torch.zeros(fan_out) if bias else None

    def __call__(self, x):
        self.out = x @ self.weight
        if self.bias is not None:
            self.out += self.bias
        return self.out

    def parameters(self):
        return [self.weight] + ([] if self.bias is None else [self.bias])


class BatchNorm1d:

    def __init__(self, dim, eps=1e-5, momentum=0.1):
        self.eps = eps
        self.momentum = momentum
        self.training = True
        self.gamma = torch.ones(dim)
        self.beta = torch.zeros(dim)
        self.running_mean = torch.zeros(dim)
        self.running_var = torch.ones(dim)

    def __call__(self, x):
        if self.training:
            xmean = x.mean(0, keepdim=True)
            xvar = x.var(0, keepdim=True)
        else:
            xmean = self.running_mean
            xvar = self.running_var
        xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
        self.out = self.gamma * xhat + self.beta
        if self.training:
            with torch.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
        return self.out

    def parameters(self):
        return [self.gamma, self.beta]


class Tanh:
    def __call__(self, x):
        self.out = torch.tanh(x)
        return self.out

    def parameters(self):
        return []


n_embd, n_hidden = 10, 64
g = torch.Generator().manual_seed(2147483647)

# first without batch normalisation: the biases are added in place, self.out += self.bias
C = torch.randn((vocab_size, n_embd), generator=g)
layers = [Linear(n_embd * block_size, n_hidden), Tanh(), Linear(n_hidden, n_hidden), Tanh(),
          Linear(n_hidden, vocab_size)]
with torch.no_grad():
    layers[-1].weight *= 0.1
    for layer in layers[:-1]:
        if isinstance(layer, Linear):
            layer.weight *= 5 / 3
parameters = [C] + [p for layer in layers for p in layer.parameters()]
for p in parameters:
    p.requires_grad = True
for i in range(10):
    ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    x = C[Xtr[ix]].view(batch_size, -1)
    for layer in layers:
        x = layer(x)
    loss = F.cross_entropy(x, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    for p in parameters:
        p.data += -0.1 * p.grad
    if i % 3 == 0:
        print(f"no batch norm {i}: {loss.item():.4f}", layers[0].out.grad_fn.name(),
              f"{layers[-1].bias.grad.abs().sum().item():.6f}",
              f"{layers[1].out.std().item():.6f}")

C = torch.randn((vocab_size, n_embd), generator=g)
layers = [
    Linear(n_embd * block_size, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
    Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
    Linear(n_hidden, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
    Linear(n_hidden, vocab_size, bias=False), BatchNorm1d(vocab_size),
]
with torch.no_grad():
    layers[-1].gamma *= 0.1  # a less confident first guess
    for layer in layers[:-1]:  # tanh's gain
        if isinstance(layer, Linear):
            layer.weight *= 5 / 3
parameters = [C] + [p for layer in layers for p in layer.parameters()]
print("parameters", sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

max_steps = 20
lossi, ud = [], []
for i in range(max_steps):
    ix = torch.randint(0, Xtr.shape[0], (batch_size,), generator=g)
    Xb, Yb = Xtr[ix], Ytr[ix]
    emb = C[Xb]
    x = emb.view(emb.shape[0], -1)
    for layer in layers:
        x = layer(x)
    loss = F.cross_entropy(x, Yb)
    for layer in layers:
        layer.out.retain_grad()
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 1.0 if i < 10 else 0.1
    for p in parameters:
        p.data += -lr * p.grad
    if i % 5 == 0:
        print(f"{i:7d}/{max_steps:7d}: {loss.item():.4f}")
    lossi.append(loss.log10().item())
    with torch.no_grad():
        ud.append([((lr * p.grad).std() / p.data.std()).log10().item() for p in parameters])

# the activations' and their gradients' statistics, layer by layer
for attribute in ("out", "grad"):
    plt.figure(figsize=(20, 4))
    legends = []
    for i, layer in enumerate(layers[:-1]):
        if isinstance(layer, Tanh):
            t = layer.out if attribute == "out" else layer.out.grad
            print("layer %d (%10s): mean %+.6f, std %.6e, saturated: %.4f%%" % (  # noqa: UP031
                i, layer.__class__.__name__, t.mean(), t.std(),
                (t.abs() > 0.97).float().mean() * 100))
            hy, hx = torch.histogram(t, density=True)
            plt.plot(hx[:-1].detach(), hy.detach())
            legends.append(f"layer {i} ({layer.__class__.__name__})")
    plt.legend(legends)
    for line in plt.gca().get_lines():
        print(attribute, "density:", line_summary(line))
    plt.close()

for p in parameters:
    t = p.grad
    if p.ndim == 2:
        print("weight %10s | mean %+e | std %e | grad:data ratio %e" % (  # noqa: UP031
            tuple(p.shape), t.mean(), t.std(), t.std() / p.std()))

plt.figure(figsize=(20, 4))
for i, p in enumerate(parameters):
    if p.ndim == 2:
        plt.plot([ud[j][i] for j in range(len(ud))])
plt.plot([0, len(ud)], [-3, -3], "k")
for line in plt.gca().get_lines()[:-1]:
    print("update:data", line_summary(line))
plt.close()
print("last ratios", [round(r, 4) for r in ud[-1]])

# sample from the model, its batch norms in eval mode
for layer in layers:
    layer.training = False
g = torch.Generator().manual_seed(2147483647 + 10)
for _ in range(5):
    out = []
    context = [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        x = emb.view(emb.shape[0], -1)
        for layer in layers:
            x = layer(x)
        logits = x
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break
    print("".join(itos[i] for i in out))
