"""A character-level transformer, the model of the GPT lecture's second script, written here
as our own program. Part one checks the ideas attention is built from: the mean of the past
three ways (a loop, a row-normalised torch.tril matrix under @, masked_fill(-inf) and
softmax), one causal head over random inputs and the variances that motivate its
k.shape[-1]**-0.5 scale, softmax of sharpened scores, and rows standardised by hand against
F.layer_norm. Part two trains CharGPT: AttentionHead modules (query/key/value
nn.Linear(bias=False), a registered tril buffer, masked_fill(... == 0, -inf), softmax,
dropout) gathered in an nn.ModuleList and joined with torch.cat(dim=-1); the per-position
MLP built by a function as nn.Sequential(Linear, ReLU, Linear, Dropout); DecoderLayers with
two LayerNorms and residual sums, stacked by nn.Sequential(*layers); character and place
embeddings (torch.arange(T, device=device)); weights reset by self.apply(small_init) with
nn.init.normal_ and zeros_. AdamW trains it for a few seconds; mean_loss measures under
@torch.no_grad() in eval mode; sample crops its context to the last CONTEXT ids; the state
dict goes through torch.save and torch.load into a fresh model."""
import os
import tempfile

import torch
import torch.nn as nn
from torch.nn import functional as F

# sizes: some 28 thousand weights, a few seconds of training
ROWS = 12  # windows per batch
CONTEXT = 16  # the longest stretch of text the model sees
WIDTH = 32  # the vector each position carries
HEADS = 4
DEPTH = 2  # decoder layers
DROPOUT = 0.2
STEPS = 40
REPORT_EVERY = 10
LEARNING_RATE = 1e-3
TALLY = 4  # batches averaged into each reported loss
device = 'cuda' if torch.cuda.is_available() else 'cpu'

torch.manual_seed(1337)

# ---- part one: the pieces of attention, on small random tensors ----

# every position replaced by the mean of itself and all positions before it
batches, length, channels = 4, 8, 2
series = torch.randn(batches, length, channels)
lower = torch.tril(torch.ones(length, length))
looped = torch.zeros((batches, length, channels))
for t in range(length):  # all batches at once, one position at a time
    looped[:, t] = torch.mean(series[:, :t + 1], 1)
averaging = lower / lower.sum(1, keepdim=True)  # each row of the triangle sums to one
# softmax turns zeros into equal shares; -inf above the diagonal turns the future off
shares = F.softmax(torch.zeros((length, length)).masked_fill(lower == 0, float('-inf')), dim=-1)
# three orders of summation: equal up to float32 rounding, hence the tolerance
print('mean of the past, matrix and softmax agree with the loop:',
      torch.allclose(averaging @ series, looped, atol=1e-6),
      torch.allclose(shares @ series, looped, atol=1e-6))
print(shares[3], looped[1, :2].tolist())
counts = torch.randint(0, 10, (4, 3)).float()
triangle = torch.tril(torch.ones(4, 4))
print((triangle / torch.sum(triangle, 1, keepdim=True)) @ counts)

# one head over random vectors: queries meet keys, the past's values are mixed
batches, length, channels, head_width = 4, 8, 32, 16
tokens = torch.randn(batches, length, channels)
to_query, to_key, to_value = (nn.Linear(channels, head_width, bias=False) for _ in range(3))
q, k = to_query(tokens), to_key(tokens)
affinity = q @ k.transpose(-2, -1) * head_width**-0.5  # (batches, length, length)
weights = F.softmax(affinity.masked_fill(lower == 0, float('-inf')), dim=-1)
mixed = weights @ to_value(tokens)
print('head output', mixed.shape)
print(' '.join(f"{w:.4f}" for w in weights[1, 4].tolist()))
print(f"variance of queries {q.var().item():.4f}, keys {k.var().item():.4f}, "
      f"weights {weights.var().item():.4f}")
# unscaled scores grow with the width, and softmax of large scores is nearly one-hot
logits = torch.tensor([0.4, -0.1, 0.2, 0.0, -0.3])
print(torch.softmax(logits, dim=-1), torch.softmax(logits * 8, dim=-1))


def standardise(table, eps=1e-5):
    """Each row shifted to mean 0 and scaled to variance 1, the variance divided by n: what
    F.layer_norm does before any gain or bias."""
    shifted = table - table.mean(1, keepdim=True)
    spread = torch.sqrt(shifted.pow(2).mean(1, keepdim=True) + eps)
    return shifted / spread


raw = torch.randn(32, 100) * 2 - 0.5
even = standardise(raw)
print('by hand equals F.layer_norm:', torch.allclose(even, F.layer_norm(raw, (100,)), atol=1e-5))
print(f"row 0: mean {even[0].mean().item():.4f}, std {even[0].std(unbiased=False).item():.4f}; "
      f"column 0: mean {even[:, 0].mean().item():.4f}, std {even[:, 0].std().item():.4f}",
      even.var(1, keepdim=True).shape)

# ---- part two: a small GPT over a story ----

# a few paragraphs written for this test
STORY = """Mira kept a garden on the roof of the old print works, between the chimney
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

alphabet = sorted(set(STORY))
number_of = {char: number for number, char in enumerate(alphabet)}


def as_text(ids):
    return ''.join(alphabet[number] for number in ids)


story_ids = torch.tensor([number_of[char] for char in STORY], dtype=torch.long)
cut = int(len(story_ids) * 0.9)
parts = {'learn': story_ids[:cut], 'check': story_ids[cut:]}  # 90% to train on, 10% to check
print(len(alphabet), {name: len(ids) for name, ids in parts.items()})


def windows(part):
    """ROWS windows of CONTEXT ids at random starts, and each shifted one id on: the
    character every position should predict."""
    ids = parts[part]
    starts = torch.randint(len(ids) - CONTEXT, (ROWS,))
    seen = torch.stack([ids[s:s + CONTEXT] for s in starts])
    after = torch.stack([ids[s + 1:s + 1 + CONTEXT] for s in starts])
    return seen.to(device), after.to(device)


class AttentionHead(nn.Module):
    """Causal self-attention of one head: each position takes a weighted mean of the values
    at itself and before it, weighted by softmax of its query against their keys."""

    def __init__(self, width, head_width, context):
        super().__init__()
        self.to_query = nn.Linear(width, head_width, bias=False)
        self.to_key = nn.Linear(width, head_width, bias=False)
        self.to_value = nn.Linear(width, head_width, bias=False)
        # a buffer: saved in the state dict and moved by .to(), never trained
        self.register_buffer('past', torch.tril(torch.ones(context, context)))
        self.drop = nn.Dropout(DROPOUT)

    def forward(self, x):
        length = x.shape[1]
        q, k = self.to_query(x), self.to_key(x)
        # scaled so that the scores' variance stays near 1 whatever the head's width
        scores = q @ k.transpose(-2, -1) * k.shape[-1]**-0.5
        scores = scores.masked_fill(self.past[:length, :length] == 0, float('-inf'))
        return self.drop(F.softmax(scores, dim=-1)) @ self.to_value(x)


class HeadGroup(nn.Module):
    """Heads side by side on the same input; their outputs, concatenated, are mixed back to
    the model's width by one Linear."""

    def __init__(self, width, heads, context):
        super().__init__()
        self.members = nn.ModuleList([AttentionHead(width, width // heads, context)
                                      for _ in range(heads)])
        self.merge = nn.Linear(width, width)
        self.drop = nn.Dropout(DROPOUT)

    def forward(self, x):
        joined = torch.cat([head(x) for head in self.members], dim=-1)
        return self.drop(self.merge(joined))


def position_mlp(width):
    """The same small MLP at every position: four times wider inside."""
    return nn.Sequential(nn.Linear(width, 4 * width), nn.ReLU(),
                         nn.Linear(4 * width, width), nn.Dropout(DROPOUT))


class DecoderLayer(nn.Module):
    """Positions talk (attention), then each thinks alone (the MLP); both read a normalised
    copy of the stream and add their result back to it."""

    def __init__(self, width, heads, context):
        super().__init__()
        self.norm_before_talk = nn.LayerNorm(width)
        self.talk = HeadGroup(width, heads, context)
        self.norm_before_think = nn.LayerNorm(width)
        self.think = position_mlp(width)

    def forward(self, stream):
        stream = stream + self.talk(self.norm_before_talk(stream))
        return stream + self.think(self.norm_before_think(stream))


def small_init(module):
    """Weights drawn from N(0, 0.02) and zero biases, in place of each layer's default."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


class CharGPT(nn.Module):
    """Next-character scores from what a character is and where it stands in the window."""

    def __init__(self, alphabet_size, width=WIDTH, heads=HEADS, depth=DEPTH, context=CONTEXT):
        super().__init__()
        self.context = context
        self.char_vectors = nn.Embedding(alphabet_size, width)
        self.place_vectors = nn.Embedding(context, width)
        self.layers = nn.Sequential(*[DecoderLayer(width, heads, context) for _ in range(depth)])
        self.last_norm = nn.LayerNorm(width)
        self.readout = nn.Linear(width, alphabet_size)
        self.apply(small_init)

    def forward(self, ids, next_ids=None):
        places = torch.arange(ids.shape[1], device=device)
        stream = self.char_vectors(ids) + self.place_vectors(places)  # (rows, T, width)
        scores = self.readout(self.last_norm(self.layers(stream)))  # (rows, T, alphabet)
        if next_ids is None:
            return scores, None
        rows, length, size = scores.shape
        loss = F.cross_entropy(scores.view(rows * length, size), next_ids.view(rows * length))
        return scores, loss


@torch.no_grad()
def mean_loss(model, part):
    """The loss averaged over TALLY batches of a part, dropout off; the model's mode as
    it was afterwards."""
    was_training = model.training
    model.eval()
    tally = torch.zeros(TALLY)
    for slot in range(TALLY):
        tally[slot] = model(*windows(part))[1].item()
    model.train(was_training)
    return tally.mean().item()


@torch.no_grad()
def sample(model, ids, extra):
    """``ids`` with ``extra`` sampled ids appended to each row; the model sees at most its
    last ``model.context`` ids, as many as it has place vectors for."""
    for _ in range(extra):
        scores, _ = model(ids[:, -model.context:])
        chances = F.softmax(scores[:, -1, :], dim=-1)
        ids = torch.cat((ids, torch.multinomial(chances, num_samples=1)), dim=1)
    return ids


gpt = CharGPT(len(alphabet)).to(device)
print(f"{sum(p.numel() for p in gpt.parameters()) / 1e6} million weights")
print(f"readout std {gpt.readout.weight.std().item():.5f}, "
      f"bias {gpt.readout.bias.abs().sum().item()}, "
      f"gain {gpt.layers[1].norm_before_think.weight.sum().item()}")
names = list(gpt.state_dict())
print(len(names), names[2:9])

optimizer = torch.optim.AdamW(gpt.parameters(), lr=LEARNING_RATE)
print(f"untrained: learn {mean_loss(gpt, 'learn'):.4f}, check {mean_loss(gpt, 'check'):.4f}")
for step in range(1, STEPS + 1):
    seen, after = windows('learn')
    optimizer.zero_grad(set_to_none=True)
    _, loss = gpt(seen, after)
    loss.backward()
    if step == 1:  # the first gradients, one norm per parameter of the first layer
        print(' '.join(f"{p.grad.norm().item():.4e}" for p in gpt.layers[0].parameters()))
    optimizer.step()
    if step % REPORT_EVERY == 0:
        print(f"step {step}: batch {loss.item():.4f}, learn {mean_loss(gpt, 'learn'):.4f}, "
              f"check {mean_loss(gpt, 'check'):.4f}", gpt.training)

grad = gpt.layers[0].talk.members[2].to_key.weight.grad
print(f"{grad.norm().item():.4e} {gpt.place_vectors.weight.grad.abs().sum().item():.6f}")

gpt.eval()
first = torch.full((1, 1), number_of['T'], dtype=torch.long, device=device)
print(repr(as_text(sample(gpt, first, 40)[0].tolist())))

# the weights through a file and into a model built afresh
path = os.path.join(tempfile.mkdtemp(), 'char_gpt.pt')
torch.save(gpt.state_dict(), path)
twin = CharGPT(len(alphabet)).to(device)
print(twin.load_state_dict(torch.load(path, map_location=device)))
twin.eval()
with torch.no_grad():
    seen, after = windows('check')
    print(f"{gpt(seen, after)[1].item():.4f} {twin(seen, after)[1].item():.4f}")
print(torch.equal(twin.layers[0].talk.members[1].past, gpt.layers[0].talk.members[1].past))
