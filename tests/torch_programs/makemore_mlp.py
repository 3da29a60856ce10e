"""Names from a window of three letters: the multi-layer perceptron of makemore parts 2 and
3, on 800 names of names.txt shuffled by Python's random.seed(42) and cut 80/10/10 into
train, validation and test. Part 2: a table of letter vectors indexed by whole windows at
once, the vectors joined by torch.cat(torch.unbind(..., 1), 1) and by view(-1, 30), the
cross-entropy written out beside F.cross_entropy, minibatches drawn by torch.randint with a
seeded Generator, a sweep of learning rates over 10**torch.linspace(-3, 0, 1000) plotted
as a list of 0-d tensors, the update t.data += -rate * t.grad, and the letter vectors drawn
with plt.scatter and plt.text. Part 3: the first layer scaled for tanh, batch normalisation
written out (a gain and a shift, mean and std over the batch with keepdim, running
statistics under torch.no_grad()), histograms and a picture of the saturated units, the
log losses averaged ten at a time, an @torch.no_grad() loss per split; then small layer
classes of our own that keep their last output (a network without batch normalisation,
its bias added in place, then one with it), retain_grad() on those outputs, the
activations' and gradients' statistics with torch.histogram(t, density=True), the ratios of
update to data, and names drawn in evaluation mode with F.softmax and torch.multinomial."""
import random

import matplotlib
import torch
import torch.nn.functional as F

matplotlib.use("Agg")  # no window: the figures are made, their contents printed, then closed
import matplotlib.pyplot as plt  # noqa: E402

SEED = 2147483647
WINDOW = 3  # letters the model sees before guessing the next
WIDTH = 10  # numbers per letter vector
FLAT = WIDTH * WINDOW


def line_summary(line):
    """A plotted line as numbers: how many points, the first and last x, the y's sum."""
    x, y = line.get_xdata(), line.get_ydata()
    return f"{len(x)} points, x {float(x[0]):.6f}..{float(x[-1]):.6f}, y sum {float(sum(y)):.6f}"


with open("../data/names.txt") as source:  # run from tests/torch_programs, as the test does
    names = source.read().splitlines()
letter_of = ["."] + sorted(set("".join(names)))  # '.' pads a window and ends a name
code_of = {letter: code for code, letter in enumerate(letter_of)}
n_codes = len(letter_of)
print("letters and end", n_codes)

random.seed(42)
random.shuffle(names)
names = names[:800]  # a slice, so that the program stays quick


def windows_and_next(some_names):
    """Every window of WINDOW codes over each name (zeros before it) and the code after it."""
    windows, nexts = [], []
    for name in some_names:
        codes = [0] * WINDOW + [code_of[letter] for letter in name] + [0]
        for end in range(WINDOW, len(codes)):
            windows.append(codes[end - WINDOW:end])
            nexts.append(codes[end])
    inputs, targets = torch.tensor(windows), torch.tensor(nexts)
    print("split", inputs.shape, targets.shape, inputs.dtype)
    return inputs, targets


cut_val, cut_test = int(0.8 * len(names)), int(0.9 * len(names))
splits = {"train": windows_and_next(names[:cut_val]),
          "val": windows_and_next(names[cut_val:cut_test]),
          "test": windows_and_next(names[cut_test:])}
train_in, train_out = splits["train"]
for window, code in zip(train_in[:4].tolist(), train_out[:4].tolist()):
    print("".join(letter_of[c] for c in window), "then", letter_of[code])


def draw_mlp(rng, hidden):
    """The letter table, then the hidden and the output layer's weights and biases, drawn
    from `rng` in that order."""
    return [torch.randn((n_codes, WIDTH), generator=rng),
            torch.randn((FLAT, hidden), generator=rng), torch.randn(hidden, generator=rng),
            torch.randn((hidden, n_codes), generator=rng), torch.randn(n_codes, generator=rng)]


def learnable(tensors):
    for t in tensors:
        t.requires_grad = True
    return tensors


def descend(tensors, loss, rate):
    """One step of plain gradient descent on `loss`, by hand."""
    for t in tensors:
        t.grad = None
    loss.backward()
    for t in tensors:
        t.data += -rate * t.grad


def mlp_scores(table, w_hidden, b_hidden, w_out, b_out, inputs):
    hidden = torch.tanh(table[inputs].view(-1, FLAT) @ w_hidden + b_hidden)
    return hidden @ w_out + b_out


def batch_of(rng, size=32):
    return torch.randint(0, train_in.shape[0], (size,), generator=rng)


# ---- part 2: the perceptron ----
rng = torch.Generator().manual_seed(SEED)
mlp = draw_mlp(rng, 200)
table = mlp[0]
looked_up = table[train_in]
print("looked up", looked_up.shape, table[5],
      F.one_hot(torch.tensor(5), num_classes=n_codes).float() @ table)
side_by_side = torch.cat(torch.unbind(looked_up, 1), 1)
print("cat of unbind", side_by_side.shape, (side_by_side == looked_up.view(-1, FLAT)).all().item())
print("parameters", sum(t.nelement() for t in mlp))
learnable(mlp)

# the loss by hand, then by F.cross_entropy, on the first 32 windows
table, w_hidden, b_hidden, w_out, b_out = mlp
hidden = torch.tanh(table[train_in[:32]].view(-1, FLAT) @ w_hidden + b_hidden)
scores = hidden @ w_out + b_out
exps = scores.exp()
softmax = exps / exps.sum(1, keepdims=True)
by_hand = -softmax[torch.arange(32), train_out[:32]].log().mean()
print(f"written out {by_hand.item():.4f}, "
      f"F.cross_entropy {F.cross_entropy(scores, train_out[:32]).item():.4f}")
print("near +-1", f"{(hidden.abs() > 0.99).float().mean().item():.6f}")

# which learning rate? one step at each of a rising sequence of rates
exponents = torch.linspace(-3, 0, 1000)
rates = 10**exponents
tried, losses = [], []
for k in range(0, 800, 20):  # up to 0.22: beyond it the loss jumps, float32 noise with it
    picked = batch_of(rng)
    loss = F.cross_entropy(mlp_scores(*mlp, train_in[picked]), train_out[picked])
    descend(mlp, loss, rates[k])
    tried.append(exponents[k])  # 0-d tensors, plotted as they are
    losses.append(loss.item())
(curve,) = plt.plot(tried, losses)
print("rate sweep:", line_summary(curve))
print("last rate", f"{rates[k].item():.6f}", f"loss {losses[-1]:.4f}")
plt.close()

rng = torch.Generator().manual_seed(SEED)  # the same start again, trained at a fixed rate
mlp = learnable(draw_mlp(rng, 200))
steps, log_losses = [], []
for k in range(40):
    picked = batch_of(rng)
    loss = F.cross_entropy(mlp_scores(*mlp, train_in[picked]), train_out[picked])
    descend(mlp, loss, 0.1 if k < 30 else 0.01)
    steps.append(k)
    log_losses.append(loss.log10().item())
(curve,) = plt.plot(steps, log_losses)
print("fixed rate:", line_summary(curve))
plt.close()
for split in ("train", "val"):
    inputs, targets = splits[split]
    print(split, f"loss {F.cross_entropy(mlp_scores(*mlp, inputs), targets).item():.4f}")

table = mlp[0]
plt.figure(figsize=(8, 8))
dots = plt.scatter(table[:, 0].data, table[:, 1].data, s=200)
for code in range(table.shape[0]):
    plt.text(table[code, 0].item(), table[code, 1].item(), letter_of[code], ha="center",
             va="center", color="white")
plt.grid("minor")
print("letter map", dots.get_offsets().shape, f"{dots.get_offsets().sum():.4f}",
      plt.gca().texts[1].get_position())
plt.close()

# ---- part 3: a sensible start, and batch normalisation written out ----
print("loss of a uniform guess", f"{-torch.tensor(1 / 27.0).log().item():.4f}")
samples = torch.randn(1000, 10, generator=rng)
projected = samples @ (torch.randn(10, 200, generator=rng) / 10**0.5)  # std kept near 1
print(f"std in {samples.std().item():.6f}, std out {projected.std().item():.6f}")

hidden_size, batch_size = 200, 32
rng = torch.Generator().manual_seed(SEED)
table, w_hidden, unused_bias, w_out, b_out = draw_mlp(rng, hidden_size)
w_hidden = w_hidden * (5 / 3) / (30**0.5)  # tanh's gain over the square root of fan-in
w_out = w_out * 0.01  # near-uniform first guesses
b_out = b_out * 0
gain, shift = torch.ones((1, hidden_size)), torch.zeros((1, hidden_size))
mean_seen, std_seen = torch.zeros((1, hidden_size)), torch.ones((1, hidden_size))
normed_mlp = learnable([table, w_hidden, w_out, b_out, gain, shift])  # no hidden bias
print("parameters", sum(t.nelement() for t in normed_mlp))


def show_first_batch(hidden, pre_activation):
    counts, edges, bars = plt.hist(hidden.view(-1).tolist(), 50)
    print("tanh histogram", len(bars), counts.sum(), counts[:5].tolist(), f"{edges[0]:.6f}")
    plt.close()
    counts, edges, bars = plt.hist(pre_activation.view(-1).tolist(), 50)
    print("before tanh", counts.max(), f"{edges[0]:.6f} {edges[-1]:.6f}")
    plt.close()
    plt.figure(figsize=(20, 10))
    picture = plt.imshow(hidden.abs() > 0.99, cmap="gray", interpolation="nearest")
    print("saturated units", picture.get_array().shape, picture.get_array().sum())
    plt.close()
    print("gradients", f"{gain.grad.abs().sum().item():.6f}", f"{w_hidden.grad.std().item():.6f}",
          f"{table.grad.abs().sum().item():.6f}")


n_steps, log_losses = 30, []
for k in range(n_steps):
    picked = batch_of(rng, batch_size)
    flat = table[train_in[picked]]
    flat = flat.view(flat.shape[0], -1)
    before = flat @ w_hidden
    batch_mean, batch_std = before.mean(0, keepdim=True), before.std(0, keepdim=True)
    pre_activation = gain * (before - batch_mean) / batch_std + shift
    with torch.no_grad():  # a slow average for use after training
        mean_seen = 0.999 * mean_seen + 0.001 * batch_mean
        std_seen = 0.999 * std_seen + 0.001 * batch_std
    hidden = torch.tanh(pre_activation)
    loss = F.cross_entropy(hidden @ w_out + b_out, train_out[picked])
    descend(normed_mlp, loss, 0.1 if k < 20 else 0.01)
    if k % 10 == 0:
        print(f"step {k:3d} of {n_steps}: {loss.item():.4f}")
    if k == 0:
        show_first_batch(hidden, pre_activation)
    log_losses.append(loss.log10().item())
(curve,) = plt.plot(torch.tensor(log_losses).view(-1, 10).mean(1))
print("tens averaged:", line_summary(curve))
plt.close()
print("kept while training", f"{mean_seen.mean().item():.6f}", f"{std_seen.mean().item():.6f}")

# the same statistics measured once over the whole training split
with torch.no_grad():
    flat = table[train_in]
    before = flat.view(flat.shape[0], -1) @ w_hidden
    whole_mean, whole_std = before.mean(0, keepdim=True), before.std(0, keepdim=True)
print("over the whole split", f"{whole_mean.abs().mean().item():.6f}",
      f"{whole_std.mean().item():.6f}")


@torch.no_grad()
def report_split(split):
    inputs, targets = splits[split]
    flat = table[inputs]
    before = flat.view(flat.shape[0], -1) @ w_hidden
    hidden = torch.tanh(gain * (before - mean_seen) / std_seen + shift)
    loss = F.cross_entropy(hidden @ w_out + b_out, targets)
    print(split, f"{loss.item():.4f}", loss.requires_grad)


for split in splits:
    report_split(split)


# ---- part 3 again: layers as small classes that remember their output ----


class Layer:
    """Calls `compute` and keeps its result in `self.output`, for the statistics below."""

    training = True

    def __call__(self, x):
        self.output = self.compute(x)
        return self.output

    def params(self):
        return []


class Dense(Layer):
    def __init__(self, n_in, n_out, rng, bias=True):
        self.weight = torch.randn((n_in, n_out), generator=rng) / n_in**0.5
        self.bias = torch.zeros(n_out) if bias else None

    def compute(self, x):
        y = x @ self.weight
        if self.bias is not None:
            y += self.bias  # in place, on a tensor in the graph
        return y

    def params(self):
        return [self.weight] + ([] if self.bias is None else [self.bias])


class Normalise(Layer):
    """Batch normalisation over dimension 0, with averages kept for evaluation."""

    def __init__(self, size, eps=1e-5, momentum=0.1):
        self.eps, self.momentum = eps, momentum
        self.scale, self.offset = torch.ones(size), torch.zeros(size)
        self.mean, self.variance = torch.zeros(size), torch.ones(size)

    def compute(self, x):
        if not self.training:
            return self.scale * ((x - self.mean) / torch.sqrt(self.variance + self.eps)) \
                + self.offset
        mean, variance = x.mean(0, keepdim=True), x.var(0, keepdim=True)
        y = self.scale * ((x - mean) / torch.sqrt(variance + self.eps)) + self.offset
        with torch.no_grad():
            keep = 1 - self.momentum
            self.mean = keep * self.mean + self.momentum * mean
            self.variance = keep * self.variance + self.momentum * variance
        return y

    def params(self):
        return [self.scale, self.offset]


class Squash(Layer):
    def compute(self, x):
        return torch.tanh(x)


def everything(table, net):
    return learnable([table] + [t for layer in net for t in layer.params()])


def run(table, net, inputs):
    x = table[inputs].view(inputs.shape[0], -1)
    for layer in net:
        x = layer(x)
    return x


hidden_size = 64
rng = torch.Generator().manual_seed(SEED)

# no normalisation yet: Dense adds its bias in place
table = torch.randn((n_codes, WIDTH), generator=rng)
net = [Dense(FLAT, hidden_size, rng), Squash(), Dense(hidden_size, hidden_size, rng), Squash(),
       Dense(hidden_size, n_codes, rng)]
with torch.no_grad():
    net[-1].weight *= 0.1
    for layer in net[:-1]:
        if isinstance(layer, Dense):
            layer.weight *= 5 / 3
weights = everything(table, net)
for k in range(10):
    picked = batch_of(rng, batch_size)
    loss = F.cross_entropy(run(table, net, train_in[picked]), train_out[picked])
    descend(weights, loss, 0.1)
    if k % 3 == 0:
        print(f"plain net, step {k}: {loss.item():.4f}", net[0].output.grad_fn.name(),
              f"{net[-1].bias.grad.abs().sum().item():.6f}", f"{net[1].output.std().item():.6f}")

table = torch.randn((n_codes, WIDTH), generator=rng)
net = [Dense(FLAT, hidden_size, rng, bias=False), Normalise(hidden_size), Squash()]
for _ in range(2):
    net += [Dense(hidden_size, hidden_size, rng, bias=False), Normalise(hidden_size), Squash()]
net += [Dense(hidden_size, n_codes, rng, bias=False), Normalise(n_codes)]
with torch.no_grad():
    net[-1].scale *= 0.1  # less sure of its first guesses
    for layer in net[:-1]:
        if isinstance(layer, Dense):
            layer.weight *= 5 / 3
weights = everything(table, net)
print("parameters", sum(t.nelement() for t in weights))

n_steps, ratios = 20, []
for k in range(n_steps):
    picked = batch_of(rng, batch_size)
    loss = F.cross_entropy(run(table, net, train_in[picked]), train_out[picked])
    for layer in net:
        layer.output.retain_grad()
    rate = 1.0 if k < 10 else 0.1
    descend(weights, loss, rate)
    if k % 5 == 0:
        print(f"step {k:3d} of {n_steps}: {loss.item():.4f}")
    with torch.no_grad():  # how big each step is beside what it changes, as a log10
        ratios.append([((rate * t.grad).std() / t.data.std()).log10().item() for t in weights])

# each tanh layer's outputs, then their gradients: summary and density
for what in ("output", "gradient"):
    plt.figure(figsize=(20, 4))
    labels = []
    for position, layer in enumerate(net[:-1]):
        if isinstance(layer, Squash):
            t = layer.output if what == "output" else layer.output.grad
            print("%s of layer %d: mean %+.6f, std %.6e, beyond 0.97: %.4f%%" % (  # noqa: UP031
                what, position, t.mean(), t.std(), (t.abs() > 0.97).float().mean() * 100))
            density, edges = torch.histogram(t, density=True)
            plt.plot(edges[:-1].detach(), density.detach())
            labels.append(f"layer {position}")
    plt.legend(labels)
    for curve in plt.gca().get_lines():
        print(what, "density:", line_summary(curve))
    plt.close()

for t in weights:
    if t.ndim == 2:
        print("%-10s gradient mean %+e, std %e, std over the weights' %e" % (  # noqa: UP031
            tuple(t.shape), t.grad.mean(), t.grad.std(), t.grad.std() / t.std()))

plt.figure(figsize=(20, 4))
for position, t in enumerate(weights):
    if t.ndim == 2:
        plt.plot([row[position] for row in ratios])
plt.plot([0, len(ratios)], [-3, -3], "k")  # 1e-3, a rule of thumb
for curve in plt.gca().get_lines()[:-1]:
    print("step size over data:", line_summary(curve))
plt.close()
print("last step's ratios", [round(r, 4) for r in ratios[-1]])

# names from the trained net, its normalisation using the kept averages
for layer in net:
    layer.training = False
rng = torch.Generator().manual_seed(SEED + 10)
for _ in range(5):
    window, drawn = [0] * WINDOW, []
    while True:
        chances = F.softmax(run(table, net, torch.tensor([window])), dim=1)
        code = torch.multinomial(chances, num_samples=1, generator=rng).item()
        window = window[1:] + [code]
        drawn.append(code)
        if code == 0:
            break
    print("drawn:", "".join(letter_of[c] for c in drawn))
