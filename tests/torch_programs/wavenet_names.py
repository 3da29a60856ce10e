"""Names predicted by a tree of layers, the idea of makemore part 5 (after WaveNet): a
window of eight letters is embedded, then neighbouring positions are fused pairwise, three
times over (Linear, BatchNorm1d, tanh at each level), down to one vector that a LayerNorm
and a linear read-out turn into scores. The levels sit in a ModuleList, model.apply(init)
draws the weights, a registered buffer counts the updates. Trained on random minibatches by
a hand-written update; then the graph is walked from the loss through
grad_fn.next_functions, the model evaluated in eval mode, saved with torch.save and read
back with torch.load."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

NAMES = """ada alma anouk arlo bea bodhi cleo corin dara eli elowen fenna finn gus hana ines
ivo jora juno kai lena lior mara milo nell noa odin orla pim quinn rafe rosa sami tova ulla
vera wren xan yara zeno""".split()  # noqa: SIM905 - a list to read
WINDOW = 8  # letters seen at once: halved three times, 8 -> 4 -> 2 -> 1
alphabet = sorted(set("".join(NAMES)))
code_of = {letter: code for code, letter in enumerate(alphabet, start=1)}  # 0: '.', both ends
n_codes = len(alphabet) + 1


def examples(names):
    """Every window of WINDOW codes over a name padded with zeros in front and one zero
    behind, with the code that comes after it."""
    windows, nexts = [], []
    for name in names:
        padded = [0] * WINDOW + [code_of[letter] for letter in name] + [0]
        for start in range(len(padded) - WINDOW):
            windows.append(padded[start:start + WINDOW])
            nexts.append(padded[start + WINDOW])
    return torch.tensor(windows), torch.tensor(nexts)


contexts, answers = examples(NAMES)
print("examples", contexts.shape, answers.shape, contexts.dtype)


class PairUp(nn.Module):
    """Neighbouring positions side by side: (batch, length, width) -> (batch, length / 2,
    width * 2), so that the next linear layer sees two of them at once."""

    def forward(self, x):
        batch, length, width = x.shape
        return x.reshape(batch, length // 2, width * 2)


class Level(nn.Module):
    """Two neighbours fused: Linear, then BatchNorm1d over the channels, then tanh."""

    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.pair = PairUp()
        self.linear = nn.Linear(n_in * 2, n_hidden, bias=False)  # the norm's shift is the bias
        self.norm = nn.BatchNorm1d(n_hidden)

    def forward(self, x):
        fused = self.linear(self.pair(x))  # (batch, length / 2, hidden)
        # BatchNorm1d normalises dimension 1 of a 3-d input: the channels go there and back
        return torch.tanh(self.norm(fused.transpose(1, 2)).transpose(1, 2))


class Tree(nn.Module):
    """Codes embedded, then fused up a binary tree of Levels to one vector per window,
    normalised and read out as scores for the next code. `updates` counts training steps."""

    def __init__(self, width, hidden):
        super().__init__()
        self.embed = nn.Embedding(n_codes, width)
        sizes = [width, hidden, hidden]
        self.levels = nn.ModuleList([Level(size, hidden) for size in sizes])
        self.norm = nn.LayerNorm(hidden)
        self.readout = nn.Linear(hidden, n_codes)
        self.register_buffer("updates", torch.zeros((), dtype=torch.long))

    def forward(self, codes):
        x = self.embed(codes)
        for level in self.levels:
            x = level(x)
        return self.readout(self.norm(x.squeeze(1)))  # the length is down to 1


visited = []


def init_weights(module):
    """Draws from the generator: the numbers depend on the order apply visits in."""
    visited.append(type(module).__name__)
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.2)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
    if isinstance(module, nn.LayerNorm):
        nn.init.uniform_(module.weight, 0.9, 1.1)


torch.manual_seed(42)
model = Tree(width=6, hidden=24)
model.apply(init_weights)
print("apply visited", visited)
print(model)
print("parameters", sum(p.numel() for p in model.parameters()))
print("buffers", [name for name, _ in model.named_buffers()])
print("state", list(model.state_dict()))
print("first weights", model.levels[2].linear.weight[0, :4].tolist(),
      model.norm.weight[:3].tolist())

for step in range(15):
    rows = torch.randint(0, contexts.shape[0], (32,))
    loss = F.cross_entropy(model(contexts[rows]), answers[rows])
    for p in model.parameters():
        p.grad = None
    loss.backward()
    rate = 0.1 if step < 10 else 0.01  # a tenth for the last five steps
    for p in model.parameters():
        p.data += -rate * p.grad
    model.updates += 1  # a buffer: saved in the state, never given a gradient
    if step % 3 == 0 or step == 14:
        print("step", step, "loss", loss.item())

# from the loss down grad_fn.next_functions to the leaves' AccumulateGrad nodes
visited_nodes, to_visit, leaves = set(), [loss.grad_fn], set()
while to_visit:
    node = to_visit.pop()
    if node in visited_nodes:
        continue
    visited_nodes.add(node)
    if hasattr(node, "variable"):  # an AccumulateGrad: the leaf it adds into
        leaves.add(id(node.variable))
    to_visit.extend(parent for parent, _ in node.next_functions if parent is not None)
print("the walk from the loss reaches", len(leaves), "of", len(list(model.parameters())),
      "parameters")

middle = model.get_submodule("levels.1.norm")
print("running mean's size", middle.running_mean.abs().mean().item(),
      "running variance", middle.running_var.mean().item())
print("batches tracked", middle.num_batches_tracked.item(), "steps", model.updates.item())

model.eval()
with torch.no_grad():
    eval_loss = F.cross_entropy(model(contexts), answers)
print("eval loss", eval_loss.item(), "training", model.training, model.levels[0].norm.training)

path = os.path.join(tempfile.mkdtemp(), "tree.pt")
torch.save(model.state_dict(), path)
copy = Tree(width=6, hidden=24)
print("load", copy.load_state_dict(torch.load(path)))
copy.eval()
with torch.no_grad():
    print("copy's eval loss", F.cross_entropy(copy(contexts), answers).item())
print("copy's count", copy.levels[1].norm.num_batches_tracked.item(), copy.updates.item())
print("after the run", torch.rand(2).tolist())
