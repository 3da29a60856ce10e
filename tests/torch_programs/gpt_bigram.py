"""A next-character table: the smallest language model, the one the GPT lecture starts from,
written here as our own program. A Corpus turns a short story into one int64 tensor of ids,
cut 90/10 into a training and a held-out part, and deals random windows of it
(torch.randint, torch.stack, .to(device) with the device from torch.cuda.is_available()). The
model, NextCharTable, is one nn.Embedding(alphabet, alphabet): the row of a character holds
the scores of the character after it; its forward gives (scores, loss), the loss from
F.cross_entropy over scores.view(rows * width, alphabet), or None without targets.
continue_text samples with F.softmax of the last position's scores and torch.multinomial and
appends with torch.cat(dim=1). held_out_losses, under @torch.no_grad(), switches eval() and
train() around means of torch.zeros(n) tallies. fit runs AdamW with
zero_grad(set_to_none=True); a second round raises the learning rate through param_groups."""
import torch
import torch.nn as nn
from torch.nn import functional as F

# sizes, small enough for a second or two of training
ROWS = 16  # windows in a batch
WIDTH = 8  # characters in a window
STEPS = 60
REPORT_EVERY = 20
LEARNING_RATE = 1e-3
TALLY = 10  # batches averaged into each reported loss
device = 'cuda' if torch.cuda.is_available() else 'cpu'

torch.manual_seed(1337)

# a few paragraphs written for this test
STORY = """On the hill above the harbour stands a lamp that nobody lights.
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


class Corpus:
    """A text as a tensor of character ids: its alphabet, the conversions both ways, and
    two parts, 'fit' (the first 90%) and 'held' (the rest), to draw windows from."""

    def __init__(self, story: str, fit_share: float = 0.9):
        self.alphabet = sorted(set(story))
        self.position = {char: number for number, char in enumerate(self.alphabet)}
        self.ids = torch.tensor(self.to_ids(story), dtype=torch.long)
        cut = int(fit_share * len(self.ids))
        self.parts = {'fit': self.ids[:cut], 'held': self.ids[cut:]}

    def to_ids(self, text):
        return [self.position[char] for char in text]

    def to_text(self, ids):
        return ''.join(self.alphabet[number] for number in ids)

    def windows(self, part):
        """ROWS windows at random starts in one part, and the characters that follow each
        window's characters (the same windows, one character on)."""
        ids = self.parts[part]
        starts = torch.randint(len(ids) - WIDTH, (ROWS,))
        seen = torch.stack([ids[start:start + WIDTH] for start in starts])
        after = torch.stack([ids[start + 1:start + 1 + WIDTH] for start in starts])
        return seen.to(device), after.to(device)


class NextCharTable(nn.Module):
    """Scores for the next character that depend on the current character alone."""

    def __init__(self, alphabet_size):
        super().__init__()
        self.rows = nn.Embedding(alphabet_size, alphabet_size)

    def forward(self, ids, next_ids=None):
        scores = self.rows(ids)  # (rows, width, alphabet): a table lookup per character
        if next_ids is None:
            return scores, None
        rows, width, size = scores.shape
        # cross_entropy wants one row of scores per prediction: flatten rows and positions
        loss = F.cross_entropy(scores.view(rows * width, size), next_ids.view(rows * width))
        return scores, loss


def continue_text(model, ids, extra):
    """``ids`` (rows, length) with ``extra`` sampled ids appended to every row."""
    for _ in range(extra):
        scores, _ = model(ids)
        chances = F.softmax(scores[:, -1, :], dim=-1)  # only the last position predicts
        picked = torch.multinomial(chances, num_samples=1)  # (rows, 1)
        ids = torch.cat((ids, picked), dim=1)
    return ids


@torch.no_grad()
def held_out_losses(model, corpus):
    """The mean loss of TALLY fresh batches from each part, in eval mode, graph-free."""
    model.eval()
    means = []
    for part in ('held', 'fit'):
        tally = torch.zeros(TALLY)
        for slot in range(TALLY):
            tally[slot] = model(*corpus.windows(part))[1].item()
        means.append(tally.mean())
    model.train()
    return means


def fit(model, optimizer, corpus, steps, report_every=0):
    """``steps`` AdamW updates on batches of the 'fit' part; the held-out losses every
    ``report_every`` steps. Returns the last batch's loss."""
    for step in range(1, steps + 1):
        seen, after = corpus.windows('fit')
        optimizer.zero_grad(set_to_none=True)
        _, loss = model(seen, after)
        loss.backward()
        optimizer.step()
        if report_every and step % report_every == 0:
            held, fitted = held_out_losses(model, corpus)
            print(f"{step:3d} updates | held-out {held:.4f} | fit part {fitted:.4f}")
    return loss


corpus = Corpus(STORY)
print(repr(''.join(corpus.alphabet)), len(corpus.alphabet))
round_trip = corpus.to_ids("the lamp")
print(round_trip, corpus.to_text(round_trip))
print(corpus.ids.dtype, corpus.ids.shape, corpus.ids[-20:])
print({part: len(ids) for part, ids in corpus.parts.items()})

# one batch: what the table sees, and what it should predict at each position
seen, after = corpus.windows('fit')
print(seen.shape, after.shape)
print(seen[:2], after[:2], sep='\n')
for width in (1, 2, 5):
    print(f"given {corpus.to_text(seen[0, :width].tolist())!r} predict "
          f"{corpus.to_text([after[0, width - 1].item()])!r}: ids {seen[0, :width]} -> "
          f"{after[0, width - 1]}")

table = NextCharTable(len(corpus.alphabet)).to(device)
scores, loss = table(seen, after)
print(scores.shape, table(seen)[1], f"untrained loss {loss.item():.4f}")
print(table.training, table.rows.weight.device)
start = torch.zeros((1, 1), dtype=torch.long)
print(repr(corpus.to_text(continue_text(table, start, 40)[0].tolist())))

optimizer = torch.optim.AdamW(table.parameters(), lr=LEARNING_RATE)
loss = fit(table, optimizer, corpus, STEPS, REPORT_EVERY)
held, _ = held_out_losses(table, corpus)
print(f"last batch {loss.item():.4f}", table.training, held.requires_grad)
print(f"gradient mass {table.rows.weight.grad.abs().sum().item():.5f}")
optimizer.zero_grad(set_to_none=True)
print(all(p.grad is None for p in table.parameters()))

# a learning rate of 1e-3 barely moves a lookup table: a second round at 0.1
for group in optimizer.param_groups:
    group['lr'] = 0.1
print(f"after 40 faster updates {fit(table, optimizer, corpus, 40).item():.4f}")

start = torch.zeros((1, 1), dtype=torch.long, device=device)
print(corpus.to_text(continue_text(table, start, 200)[0].tolist()))
# three rows sampled side by side, each from its own first character
firsts = torch.tensor([[corpus.position[char]] for char in 'Tw\n'], device=device)
for row in continue_text(table, firsts, 30).tolist():
    print(repr(corpus.to_text(row)))
