"""Six next-letter models of names, one after another, each trained, scored, saved, reloaded
and asked for new names: the ideas of makemore.py's --type choices (a letter-pair table, a
window of embeddings into an MLP, a tanh recurrence, a gated recurrence, a running average,
a small causal transformer), written for this project.

The data: names padded to a common width, the inputs opening with a 0 token and the targets
masked with -1 past a name's closing 0 (cross_entropy's ignore_index=-1), split with
randperm; training batches come endlessly from a RandomSampler(replacement=True,
num_samples=int(1e10)) fetched by two worker processes; scoring uses a shuffled
DataLoader(num_workers=0) under torch.inference_mode() in eval() mode.

The torch names it leans on: nn.Parameter(torch.zeros(...)) indexed by tokens;
torch.roll, nn.Embedding with one spare row, nn.Sequential(*layers); torch.cat on dim 1,
F.tanh, F.sigmoid, a learned first state .expand((b, -1)), torch.stack(states, 1);
register_buffer of a torch.tril of ones, masked_fill(== 0, float("-inf")), F.softmax;
nn.ModuleDict(dict(...)) holding an nn.ModuleList, nn.LayerNorm, Linear(...).split,
view / transpose(1, 2) / contiguous(), torch.pow, a lambda stored on a module, Linear with
bias=False; AdamW(weight_decay, betas, eps), zero_grad(set_to_none=True), SummaryWriter's
add_scalar and flush, torch.save / torch.load of a state_dict, and sampling with
torch.topk, boolean-mask assignment, torch.multinomial and a @torch.no_grad() decorator."""
import math
import os
import tempfile
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import Dataset
from torch.utils.data.dataloader import DataLoader
from torch.utils.tensorboard import SummaryWriter

STEPS = 30
REPORT_EVERY = 6
SCORE_EVERY = 15
SCORE_BATCHES = 3


# ---- names as rows of token ids ----------------------------------------------------------

class NameRows(Dataset):
    """Name i as (inputs, targets): inputs are 0 then the letters, targets the letters then 0,
    both padded to the longest name plus one; targets past the closing 0 are -1 (ignored)."""

    def __init__(self, names, alphabet, longest):
        self.names = names
        self.longest = longest
        self.id_of = {letter: number for number, letter in enumerate(alphabet, start=1)}
        self.letter_of = {number: letter for letter, number in self.id_of.items()}

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        ids = self.to_ids(self.names[i])
        gap = self.longest - len(ids)
        zero = torch.zeros(1, dtype=torch.long)
        inputs = torch.cat([zero, ids, torch.zeros(gap, dtype=torch.long)])
        targets = torch.cat([ids, zero, torch.full((gap,), -1, dtype=torch.long)])
        return inputs, targets

    def row_length(self):
        return self.longest + 1

    def has(self, name):
        return name in self.names

    def to_ids(self, name):
        return torch.tensor([self.id_of[letter] for letter in name], dtype=torch.long)

    def to_name(self, ids):
        return "".join(self.letter_of[number] for number in ids)


def load_names(path, stride):
    """Every stride-th non-blank line of the file."""
    with open(path) as handle:
        lines = [line.strip() for line in handle.read().splitlines()]
    return [name for name in lines[::stride] if name]


def train_and_held_out(names):
    """Two NameRows sharing one alphabet: a tenth of the names (at most 1000) held out."""
    alphabet = sorted(set("".join(names)))
    longest = max(map(len, names))
    held = min(1000, len(names) // 10)
    order = torch.randperm(len(names)).tolist()
    fit_names = [names[i] for i in order[held:]]
    held_names = [names[i] for i in order[:held]]
    print(f"{len(names)} names, the longest {longest} letters; alphabet of {len(alphabet)}: "
          f"{''.join(alphabet)}")
    print(f"{len(fit_names)} to fit, {len(held_names)} held out; the first to fit "
          f"{fit_names[:3]}")
    return NameRows(fit_names, alphabet, longest), NameRows(held_names, alphabet, longest)


def endless_batches(rows, batch_size, workers):
    """Batches drawn with replacement, for as long as they are asked for."""
    sampler = torch.utils.data.RandomSampler(rows, replacement=True, num_samples=int(1e10))
    loader = DataLoader(rows, batch_size=batch_size, sampler=sampler, num_workers=workers)
    while True:
        yield from loader


# ---- the models: (B, T) ids -> (B, T, vocab) logits ----------------------------------------

@dataclass
class Sizes:
    row: int  # tokens in a row: the longest name and its closing 0
    vocab: int  # 0 and the letters
    embed: int = 16
    hidden: int = 24
    layers: int = 2
    heads: int = 2


def next_letter_loss(logits, targets):
    """Mean cross-entropy over the places whose target is not -1."""
    flat = logits.view(-1, logits.size(-1))
    return F.cross_entropy(flat, targets.view(-1), ignore_index=-1)


class PairTable(nn.Module):
    """A learned table: row a holds the logits of the letter that follows a."""

    def __init__(self, sizes):
        super().__init__()
        self.context = 1
        self.table = nn.Parameter(torch.zeros((sizes.vocab, sizes.vocab)))

    def forward(self, ids):
        return self.table[ids]


class WindowMLP(nn.Module):
    """The embeddings of a letter and the letters before it, laid end to end, into a hidden
    tanh layer; places before the row's start read a blank token (id vocab)."""

    def __init__(self, sizes):
        super().__init__()
        self.context = sizes.row
        self.blank = sizes.vocab
        self.embedding = nn.Embedding(sizes.vocab + 1, sizes.embed)
        layers = [nn.Linear(sizes.row * sizes.embed, sizes.hidden), nn.Tanh(),
                  nn.Linear(sizes.hidden, sizes.vocab)]
        self.head = nn.Sequential(*layers)

    def forward(self, ids):
        looking_back = [ids]
        for _ in range(self.context - 1):
            earlier = torch.roll(looking_back[-1], 1, 1)
            earlier[:, 0] = self.blank  # what rolled round from the end is not a letter
            looking_back.append(earlier)
        window = torch.cat([self.embedding(shifted) for shifted in looking_back], -1)
        return self.head(window)


class TanhStep(nn.Module):
    """state' = tanh(W [letter, state] + b)."""

    def __init__(self, sizes):
        super().__init__()
        self.mix = nn.Linear(sizes.embed + sizes.hidden, sizes.hidden)

    def forward(self, letter, state):
        return F.tanh(self.mix(torch.cat([letter, state], dim=1)))


class GatedStep(nn.Module):
    """A GRU step: a reset gate picks what of the state the proposal sees, an update gate how
    far the state moves towards the proposal."""

    def __init__(self, sizes):
        super().__init__()
        both = sizes.embed + sizes.hidden
        self.reset_gate = nn.Linear(both, sizes.hidden)
        self.update_gate = nn.Linear(both, sizes.hidden)
        self.proposal = nn.Linear(both, sizes.hidden)

    def forward(self, letter, state):
        seen = torch.cat([letter, state], dim=1)
        keep = F.sigmoid(self.reset_gate(seen))
        move = F.sigmoid(self.update_gate(seen))
        proposed = F.tanh(self.proposal(torch.cat([letter, keep * state], dim=1)))
        return state + move * (proposed - state)


class Recurrent(nn.Module):
    """One step module run along the row from a learned first state."""

    def __init__(self, sizes, step):
        super().__init__()
        self.context = sizes.row
        self.embedding = nn.Embedding(sizes.vocab, sizes.embed)
        self.first_state = nn.Parameter(torch.zeros(1, sizes.hidden))
        self.step = step
        self.readout = nn.Linear(sizes.hidden, sizes.vocab)

    def forward(self, ids):
        letters = self.embedding(ids)
        state = self.first_state.expand((ids.size(0), -1))
        states = []
        for place in range(ids.size(1)):
            state = self.step(letters[:, place, :], state)
            states.append(state)
        return self.readout(torch.stack(states, 1))


def causal_mask(n, leading):
    """Ones on and below the diagonal of an n x n square, with `leading` axes of size 1."""
    return torch.tril(torch.ones(n, n)).view(*([1] * leading), n, n)


class RunningAverage(nn.Module):
    """Place t becomes the mean of places 0..t: softmax of zeros with the future at -inf."""

    def __init__(self, sizes):
        super().__init__()
        self.register_buffer("allowed", causal_mask(sizes.row, 1))

    def forward(self, x):
        batch, places, _ = x.size()
        scores = torch.zeros((batch, places, places))
        scores = scores.masked_fill(self.allowed[:, :places, :places] == 0, float("-inf"))
        return F.softmax(scores, dim=-1) @ x


class AveragingModel(nn.Module):
    """Letter and place embeddings, a residual running average, a residual tanh layer."""

    def __init__(self, sizes):
        super().__init__()
        self.context = sizes.row
        self.letters = nn.Embedding(sizes.vocab, sizes.embed)
        self.places = nn.Embedding(sizes.row, sizes.embed)
        self.average = RunningAverage(sizes)
        self.up = nn.Linear(sizes.embed, sizes.hidden)
        self.down = nn.Linear(sizes.hidden, sizes.embed)
        self.readout = nn.Linear(sizes.embed, sizes.vocab)

    def forward(self, ids):
        where = torch.arange(0, ids.size(1), dtype=torch.long).unsqueeze(0)
        h = self.letters(ids) + self.places(where)
        h = h + self.average(h)
        h = h + self.down(F.tanh(self.up(h)))
        return self.readout(h)


class TanhGELU(nn.Module):
    """GELU by its tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def forward(self, x):
        cubic = x + 0.044715 * torch.pow(x, 3.0)
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * cubic))


class MaskedHeads(nn.Module):
    """Multi-head self-attention in which a place sees only itself and earlier places."""

    def __init__(self, sizes):
        super().__init__()
        if sizes.embed % sizes.heads:
            raise ValueError(f"MaskedHeads: embed {sizes.embed} must divide by heads "
                             f"{sizes.heads}")
        self.heads = sizes.heads
        self.to_qkv = nn.Linear(sizes.embed, 3 * sizes.embed)
        self.merge = nn.Linear(sizes.embed, sizes.embed)
        self.register_buffer("allowed", causal_mask(sizes.row, 2))

    def split_heads(self, x):
        batch, places, width = x.size()
        return x.view(batch, places, self.heads, width // self.heads).transpose(1, 2)

    def forward(self, x):
        batch, places, width = x.size()
        query, key, value = map(self.split_heads, self.to_qkv(x).split(width, dim=2))
        scores = query @ key.transpose(-2, -1) / math.sqrt(key.size(-1))
        scores = scores.masked_fill(self.allowed[:, :, :places, :places] == 0, float("-inf"))
        mixed = F.softmax(scores, dim=-1) @ value  # (batch, heads, places, width / heads)
        return self.merge(mixed.transpose(1, 2).contiguous().view(batch, places, width))


class DecoderLayer(nn.Module):
    """Pre-norm residual layer: attention, then a 4x-wide GELU feed-forward."""

    def __init__(self, sizes):
        super().__init__()
        self.norm_before_attention = nn.LayerNorm(sizes.embed)
        self.attention = MaskedHeads(sizes)
        self.norm_before_ff = nn.LayerNorm(sizes.embed)
        self.ff = nn.ModuleDict(dict(
            widen=nn.Linear(sizes.embed, 4 * sizes.embed),
            gelu=TanhGELU(),
            narrow=nn.Linear(4 * sizes.embed, sizes.embed),
        ))
        ff = self.ff
        # a bare function on a module: torch keeps it as a plain attribute, no submodule
        self.feed_forward = lambda h: ff.narrow(ff.gelu(ff.widen(h)))

    def forward(self, h):
        h = h + self.attention(self.norm_before_attention(h))
        return h + self.feed_forward(self.norm_before_ff(h))


class SmallTransformer(nn.Module):
    """Letter and place embeddings, DecoderLayers, a final LayerNorm, a bias-free readout."""

    def __init__(self, sizes):
        super().__init__()
        self.context = sizes.row
        self.body = nn.ModuleDict(dict(
            letters=nn.Embedding(sizes.vocab, sizes.embed),
            places=nn.Embedding(sizes.row, sizes.embed),
            layers=nn.ModuleList([DecoderLayer(sizes) for _ in range(sizes.layers)]),
            norm=nn.LayerNorm(sizes.embed),
        ))
        self.readout = nn.Linear(sizes.embed, sizes.vocab, bias=False)
        body_count = sum(p.numel() for p in self.body.parameters())
        print(f"transformer body: {body_count / 1e6:.4f}M parameters, readout aside")

    def forward(self, ids):
        if ids.size(1) > self.context:
            raise ValueError(f"SmallTransformer: rows of at most {self.context} ids, "
                             f"got {ids.size(1)}")
        where = torch.arange(0, ids.size(1), dtype=torch.long).unsqueeze(0)
        h = self.body.letters(ids) + self.body.places(where)
        for layer in self.body.layers:
            h = layer(h)
        return self.readout(self.body.norm(h))


MAKERS = {
    "pairs": PairTable,
    "window": WindowMLP,
    "tanh-rnn": lambda sizes: Recurrent(sizes, TanhStep(sizes)),
    "gru": lambda sizes: Recurrent(sizes, GatedStep(sizes)),
    "average": AveragingModel,
    "transformer": SmallTransformer,
}


# ---- scoring and sampling ------------------------------------------------------------------

@torch.inference_mode()
def mean_loss(model, rows, batches):
    """The mean loss over the first `batches` shuffled batches of 40, in eval mode."""
    model.eval()
    total, seen = 0.0, 0
    for inputs, targets in DataLoader(rows, batch_size=40, shuffle=True, num_workers=0):
        total += next_letter_loss(model(inputs), targets).item()
        seen += 1
        if seen == batches:
            break
    model.train()
    return total / seen


@torch.no_grad()
def extend(model, ids, count, temperature=1.0, sample=True, top_k=None):
    """`ids` with `count` more tokens, each from the model's last logits over the most recent
    `model.context` tokens: drawn at `temperature` among the `top_k` best, or the best."""
    for _ in range(count):
        window = ids[:, -model.context:]
        last = model(window)[:, -1, :] / temperature
        if top_k is not None:
            best, _ = torch.topk(last, top_k)
            last[last < best[:, [-1]]] = -float("Inf")
        chances = F.softmax(last, dim=-1)
        if sample:
            chosen = torch.multinomial(chances, num_samples=1)
        else:
            chosen = torch.topk(chances, k=1, dim=-1).indices
        ids = torch.cat((ids, chosen), dim=1)
    return ids


def invent(model, rows, how_many, **options):
    """`how_many` names, each read up to its first 0."""
    starts = torch.zeros(how_many, 1, dtype=torch.long)
    made = extend(model, starts, rows.row_length() - 1, **options)
    names = []
    for row in made[:, 1:].tolist():
        end = row.index(0) if 0 in row else len(row)
        names.append(rows.to_name(row[:end]))
    return names


# ---- one model's run -------------------------------------------------------------------------

def gradient_norms(model):
    return " ".join(f"{p.grad.norm().item():.6g}" for p in model.parameters())


def run(kind, sizes, fit_rows, held_rows, log, folder):
    """Train a `kind` model, keep its best state on disk, reload it and sample from it."""
    model = MAKERS[kind](sizes)
    print(f"[{kind}] {sum(p.numel() for p in model.parameters())} parameters")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01,
                                  betas=(0.9, 0.99), eps=1e-8)
    batches = endless_batches(fit_rows, batch_size=16, workers=2)
    checkpoint = os.path.join(folder, f"{kind}.pt")
    lowest = math.inf
    for step in range(1, STEPS + 1):
        inputs, targets = next(batches)
        logits = model(inputs)
        loss = next_letter_loss(logits, targets)
        model.zero_grad(set_to_none=True)
        loss.backward()
        if step == 1:  # printed before any update: Adam's steps would hide a wrong scale
            print(f"[{kind}] gradient norms at the start: {gradient_norms(model)}")
        optimizer.step()
        if step % REPORT_EVERY == 1:
            print(f"[{kind}] step {step}: batch loss {loss.item():.4f}")
        if step % SCORE_EVERY == 0:
            fit_loss = mean_loss(model, fit_rows, SCORE_BATCHES)
            held = mean_loss(model, held_rows, SCORE_BATCHES)
            log.add_scalar(f"loss/{kind}/fit", fit_loss, step)
            log.add_scalar(f"loss/{kind}/held", held, step)
            log.flush()
            improved = held < lowest
            print(f"[{kind}] step {step}: fit {fit_loss:.4f}, held out {held:.4f}"
                  f"{' (lowest yet, saved)' if improved else ''}")
            if improved:
                torch.save(model.state_dict(), checkpoint)
                lowest = held
    model.zero_grad(set_to_none=True)
    grads = [p.grad for p in model.parameters()]
    print(f"[{kind}] logits {tuple(logits.shape)}; after zero_grad {grads[:2]}; "
          f"training mode {model.training}")

    restored = MAKERS[kind](sizes)
    restored.load_state_dict(torch.load(checkpoint))
    print(f"[{kind}] restored {list(restored.state_dict())[:4]}: held out "
          f"{mean_loss(restored, held_rows, SCORE_BATCHES):.4f} (saved at {lowest:.4f})")
    drawn = invent(restored, fit_rows, 6)
    where = ["seen" if fit_rows.has(name) else "held" if held_rows.has(name) else "new"
             for name in drawn]
    print(f"[{kind}] drawn {list(zip(drawn, where))}")
    print(f"[{kind}] most likely {invent(restored, fit_rows, 1, sample=False)}; "
          f"top 3 at 0.8 {invent(restored, fit_rows, 3, temperature=0.8, top_k=3)}")


def main():
    torch.manual_seed(1234)
    folder = tempfile.mkdtemp()
    log = SummaryWriter(log_dir=folder)
    names = load_names(os.path.join("..", "data", "names.txt"), stride=100)  # cwd: this folder
    fit_rows, held_rows = train_and_held_out(names)
    inputs, targets = fit_rows[0]
    print(f"{fit_rows.names[0]!r} as inputs {inputs.tolist()} and targets {targets.tolist()}")
    sizes = Sizes(row=fit_rows.row_length(), vocab=len(fit_rows.id_of) + 1)
    for kind in MAKERS:
        run(kind, sizes, fit_rows, held_rows, log, folder)
    print(f"the generator's next draws {torch.rand(2).tolist()}")


if __name__ == "__main__":
    main()
