"""A hierarchical character model of names in the style of makemore part 5 (the WaveNet
lecture): eight letters of context embedded, then fused two by two over three levels
(Linear, BatchNorm1d, tanh), a LayerNorm and a linear head. The levels are held in a
ModuleList, the weights set by model.apply(init), a buffer counts the steps; trained with
minibatches and a hand-written update, the graph walked back from the loss through
grad_fn.next_functions, evaluated in eval mode, saved with torch.save and loaded back with
torch.load."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

NAMES = """ada alma anouk arlo bea bodhi cleo corin dara eli elowen fenna finn gus hana ines
ivo jora juno kai lena lior mara milo nell noa odin orla pim quinn rafe rosa sami tova ulla
vera wren xan yara zeno""".split()  # noqa: SIM905 - a list to read
BLOCK = 8  # letters of context: three levels of fusing two by two
letters = sorted(set("".join(NAMES)))
stoi = {ch: i + 1 for i, ch in enumerate(letters)}  # 0 is '.', the start and the end
vocab_size = len(letters) + 1

xs, ys = [], []
for name in NAMES:
    context = [0] * BLOCK
    for ch in name + ".":
        xs.append(context)
        ys.append(stoi.get(ch, 0))
        context = context[1:] + [ys[-1]]
X, Y = torch.tensor(xs), torch.tensor(ys)
print("examples", X.shape, Y.shape, X.dtype)


class FlattenConsecutive(nn.Module):
    """(B, T, C) -> (B, T / n, C * n): n neighbours side by side."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        B, T, C = x.shape
        return x.reshape(B, T // self.n, C * self.n)


class Level(nn.Module):
    """Two neighbours fused: Linear, then BatchNorm1d over the channels, then tanh."""

    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.flatten = FlattenConsecutive(2)
        self.linear = nn.Linear(n_in * 2, n_hidden, bias=False)
        self.bn = nn.BatchNorm1d(n_hidden)

    def forward(self, x):
        x = self.linear(self.flatten(x))  # (B, T/2, H)
        x = self.bn(x.transpose(1, 2)).transpose(1, 2)  # BatchNorm1d takes (B, H, T/2)
        return torch.tanh(x)


class WaveNet(nn.Module):
    def __init__(self, n_embd, n_hidden):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.levels = nn.ModuleList([Level(n_embd, n_hidden)]
                                    + [Level(n_hidden, n_hidden) for _ in range(2)])
        self.ln = nn.LayerNorm(n_hidden)
        self.head = nn.Linear(n_hidden, vocab_size)
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, idx):
        x = self.wte(idx)
        for level in self.levels:
            x = level(x)
        return self.head(self.ln(x.squeeze(1)))


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
model = WaveNet(n_embd=6, n_hidden=24)
model.apply(init_weights)
print("apply visited", visited)
print(model)
print("parameters", sum(p.numel() for p in model.parameters()))
print("buffers", [name for name, _ in model.named_buffers()])
print("state", list(model.state_dict()))
print("first weights", model.levels[2].linear.weight[0, :4].tolist(), model.ln.weight[:3].tolist())

for step in range(15):
    ix = torch.randint(0, X.shape[0], (32,))
    logits = model(X[ix])
    loss = F.cross_entropy(logits, Y[ix])
    for p in model.parameters():
        p.grad = None
    loss.backward()
    lr = 0.1 if step < 10 else 0.01
    for p in model.parameters():
        p.data += -lr * p.grad
    model.steps += 1
    if step % 3 == 0 or step == 14:
        print("step", step, "loss", loss.item())

# the blitz's walk down loss.grad_fn.next_functions, to the parameters' AccumulateGrad
seen, stack, reached = set(), [loss.grad_fn], set()
while stack:
    fn = stack.pop()
    if fn in seen:
        continue
    seen.add(fn)
    if hasattr(fn, "variable"):
        reached.add(id(fn.variable))
    stack.extend(f for f, _ in fn.next_functions if f is not None)
print("the walk from the loss reaches", len(reached), "of", len(list(model.parameters())),
      "parameters")

bn = model.get_submodule("levels.1.bn")
print("running mean's size", bn.running_mean.abs().mean().item(),
      "running variance", bn.running_var.mean().item())
print("batches tracked", bn.num_batches_tracked.item(), "steps", model.steps.item())

model.eval()
with torch.no_grad():
    eval_loss = F.cross_entropy(model(X), Y)
print("eval loss", eval_loss.item(), "training", model.training, model.levels[0].bn.training)

path = os.path.join(tempfile.mkdtemp(), "wavenet.pt")
torch.save(model.state_dict(), path)
copy = WaveNet(n_embd=6, n_hidden=24)
print("load", copy.load_state_dict(torch.load(path)))
copy.eval()
with torch.no_grad():
    print("copy's eval loss", F.cross_entropy(copy(X), Y).item())
print("copy's count", copy.levels[1].bn.num_batches_tracked.item(), copy.steps.item())
print("after the run", torch.rand(2).tolist())
