"""Which letter follows which: a bigram model of names, the subject of makemore part 1, on
the first 350 names of names.txt. Counted first: an int32 table of letter pairs filled one
pair at a time by indexed +=, drawn with plt.imshow and plt.text, a row normalised into
probabilities and drawn from with torch.multinomial and a seeded torch.Generator; the
table smoothed by one, its rows normalised in place by broadcasting (and, without
keepdims, the columns divided by mistake); names drawn from it and the negative log
likelihood of some names. Then learned: the same model as a 27 x 27 weight matrix on
F.one_hot codes, the softmax done by hand, the likelihood picked out by fancy indexing plus
a weight penalty, trained by hand with weight.grad = None, backward() and weight.data +=;
names drawn from the network."""
import matplotlib
import torch
import torch.nn.functional as F

matplotlib.use("Agg")  # no window: the figures are made, their contents printed, then closed
import matplotlib.pyplot as plt  # noqa: E402

SEED = 2147483647
BOUNDARY = "."  # code 0: before a name's first letter and after its last

with open("../data/names.txt") as source:  # run from tests/torch_programs, as the test does
    all_names = source.read().splitlines()
print("names", len(all_names), all_names[:5], min(map(len, all_names)), max(map(len, all_names)))

letter_of = [BOUNDARY] + sorted(set("".join(all_names)))
code_of = {letter: code for code, letter in enumerate(letter_of)}
size = len(letter_of)
names = all_names[:350]  # every += below is an op of its own: a slice keeps it quick


def pairs(some_names):
    """(code, next code) for every pair of neighbours, the boundary at both ends."""
    for name in some_names:
        padded = [BOUNDARY, *name, BOUNDARY]
        for left, right in zip(padded, padded[1:]):
            yield code_of[left], code_of[right]


def sample_names(distribution_after, how_many=5):
    """Names drawn letter by letter from a fresh generator, each next letter from the
    distribution `distribution_after(code)` gives, until the boundary is drawn."""
    rng = torch.Generator().manual_seed(SEED)
    for _ in range(how_many):
        code, letters = 0, ""
        while True:
            code = torch.multinomial(distribution_after(code), num_samples=1, replacement=True,
                                     generator=rng).item()
            letters += letter_of[code]
            if code == 0:
                break
        print("drawn:", letters)


# ---- counting pairs ----
tally = torch.zeros((size, size), dtype=torch.int32)
for first, second in pairs(names):
    tally[first, second] += 1
print("tally", tally.dtype, tally.shape, "pairs", tally.sum().item(), "most", tally.max().item())
print(tally[0, 1], tally[code_of["a"], 0], tally[code_of["n"]].tolist())

plt.figure(figsize=(8, 8))
picture = plt.imshow(tally, cmap="Blues")
for row in range(3):  # the first rows' labels: enough to count the texts
    for column in range(size):
        plt.text(column, row, letter_of[row] + letter_of[column], ha="center", va="bottom",
                 color="gray")
        plt.text(column, row, tally[row, column].item(), ha="center", va="top", color="gray")
plt.axis("off")
pixels = picture.get_array()
print("picture", pixels.shape, pixels.sum(), pixels.dtype)
print("labels", len(plt.gca().texts), [label.get_text() for label in plt.gca().texts[:6]])
plt.close()

starts = tally[0].float()
starts = starts / starts.sum()
print("first letters", starts.dtype, f"{starts.sum().item():.4f}",
      [round(v, 4) for v in starts[:6].tolist()])

rng = torch.Generator().manual_seed(SEED)
weights3 = torch.rand(3, generator=rng)
weights3 = weights3 / weights3.sum()
print("three outcomes", weights3)
print("twenty draws", torch.multinomial(weights3, num_samples=20, replacement=True, generator=rng))
code = torch.multinomial(starts, num_samples=1, replacement=True, generator=rng).item()
print("a first letter", code, letter_of[code])

# add-one smoothing, then every row divided by its own total
smoothed = (tally + 1).float()
smoothed /= smoothed.sum(1, keepdims=True)
print("smoothed", smoothed.shape, smoothed.sum(1, keepdims=True).shape,
      f"{smoothed[0].sum().item():.4f}", f"{smoothed[5].sum().item():.4f}",
      f"{smoothed[code_of['q'], code_of['u']].item():.4f}")

# a (27,) vector of totals broadcasts as a row, so this divides each column instead
wrong = (tally + 1).float()
wrong = wrong / wrong.sum(1)
print("keepdims forgotten", f"{wrong[0].sum().item():.6f}", f"{wrong[:, 0].sum().item():.6f}",
      torch.allclose(wrong, smoothed), wrong.sum(0).shape)

sample_names(lambda code: smoothed[code])

# how surprised the counts are by the first 40 names: a sum of 0-d tensors
total_log_prob, seen = 0.0, 0
for first, second in pairs(names[:40]):
    chance = smoothed[first, second]
    surprise = torch.log(chance)
    total_log_prob += surprise
    seen += 1
    if seen <= 4:
        print(f"{letter_of[first]}{letter_of[second]}: {chance:.4f} {surprise:.4f}")
print(f"{total_log_prob=}")
negative = -total_log_prob
print(f"{negative=}")
print(f"{negative / seen}")

# ---- the same model learned by gradient descent ----
inputs, targets = (torch.tensor(column) for column in zip(*pairs(names)))
count = inputs.nelement()
print("training pairs:", count, inputs[:5], targets[:5])

encoded = F.one_hot(inputs, num_classes=size).float()
print("encoded", encoded.shape, encoded.dtype, encoded[:3].argmax(1))
plt.imshow(encoded[:20])
print("one-hot picture", plt.gci().get_array().shape, plt.gci().get_array().sum())
plt.close()

rng = torch.Generator().manual_seed(SEED)
weight = torch.randn((size, size), generator=rng, requires_grad=True)
print("weight", weight[0, :3], weight.is_leaf)


def next_letter_probs(one_hot):
    """The network's softmax, by hand: a row of weights per code, exponentiated, normalised."""
    exps = (one_hot @ weight).exp()
    return exps / exps.sum(1, keepdims=True)


# the untrained network's view of the first five pairs, one at a time
losses5 = torch.zeros(5)
with torch.no_grad():
    table = next_letter_probs(encoded)
    for k in range(5):
        before, after = inputs[k].item(), targets[k].item()
        chance = table[k, after]
        surprise = torch.log(chance)
        losses5[k] = -surprise
        print(f"{letter_of[before]}{letter_of[after]}: chance {chance.item():.4f} "
              f"surprise {-surprise.item():.4f}")
print("mean surprise", f"{losses5.mean().item():.4f}")

for epoch in range(30):
    table = next_letter_probs(F.one_hot(inputs, num_classes=size).float())
    loss = -table[torch.arange(count), targets].log().mean() + 0.01 * (weight**2).mean()
    if epoch % 5 == 0 or epoch == 29:
        print("epoch", epoch, f"loss {loss.item():.4f}")
    weight.grad = None
    loss.backward()
    if epoch == 0:
        print("gradient", weight.grad.shape, f"{weight.grad.abs().sum().item():.6f}",
              [round(v, 6) for v in weight.grad[0, :4].tolist()])
    weight.data += -50 * weight.grad  # a large step: the loss is smooth and the model one layer

sample_names(lambda code: next_letter_probs(
    F.one_hot(torch.tensor([code]), num_classes=size).float()))
