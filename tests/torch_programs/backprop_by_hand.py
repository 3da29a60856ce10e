"""Every gradient of a small character network worked out by hand and checked against
autograd, the exercise of makemore part 4. The forward pass is spelled out one elementary
operation at a time (an embedding lookup, a linear layer, batch normalisation from its
mean and variance, tanh, a linear read-out, a softmax from exponentials and a log
likelihood); each step's tensor keeps its .grad through retain_grad(). The chain rule is
then applied by hand from the loss backwards, and each result is printed beside autograd's:
bit for bit equal, allclose, and the largest difference."""
import torch
import torch.nn.functional as F

NAMES = """alba bruno cyra dante edda fiona gael hugo iris jonas kira lucas mila nico olga
pablo quin remy sofia tilda uma vito wanda xenia yusuf zora""".split()  # noqa: SIM905
END = 0  # the code of '.', which pads the context and ends a name
CONTEXT = 3
alphabet = sorted(set("".join(NAMES)))
code_of = {letter: position for position, letter in enumerate(alphabet, start=1)}
n_codes = len(alphabet) + 1


def windows(names):
    """Each name slid past a window of CONTEXT codes: (window, the code that follows)."""
    seen, following = [], []
    for name in names:
        window = [END] * CONTEXT
        for code in [code_of[letter] for letter in name] + [END]:
            seen.append(window)
            following.append(code)
            window = window[1:] + [code]
    return torch.tensor(seen), torch.tensor(following)


inputs, targets = windows(NAMES)
rng = torch.Generator().manual_seed(2147483647)
width, hidden_units, rows = 10, 64, 32
fan_in = width * CONTEXT
table = torch.randn((n_codes, width), generator=rng)
w_in = torch.randn((fan_in, hidden_units), generator=rng) * (5 / 3) / fan_in**0.5
b_in = torch.randn(hidden_units, generator=rng) * 0.1
w_out = torch.randn((hidden_units, n_codes), generator=rng) * 0.1
b_out = torch.randn(n_codes, generator=rng) * 0.1
gamma = torch.randn((1, hidden_units), generator=rng) * 0.1 + 1.0
beta = torch.randn((1, hidden_units), generator=rng) * 0.1
weights = {"table": table, "w_in": w_in, "b_in": b_in, "w_out": w_out, "b_out": b_out,
           "gamma": gamma, "beta": beta}
for tensor in weights.values():
    tensor.requires_grad = True

picked = torch.randint(0, inputs.shape[0], (rows,), generator=rng)
batch_in, batch_out = inputs[picked], targets[picked]

# the forward pass; `act` holds every step by name, each keeping its gradient
act = {}


def step(name, tensor):
    tensor.retain_grad()
    act[name] = tensor
    return tensor


vectors = step("vectors", table[batch_in])
flat = step("flat", vectors.view(vectors.shape[0], -1))
pre_norm = step("pre_norm", flat @ w_in + b_in)
batch_mean = step("batch_mean", 1 / rows * pre_norm.sum(0, keepdim=True))
centred = step("centred", pre_norm - batch_mean)
centred_sq = step("centred_sq", centred**2)
batch_var = step("batch_var", 1 / (rows - 1) * centred_sq.sum(0, keepdim=True))  # Bessel
inv_std = step("inv_std", (batch_var + 1e-5) ** -0.5)
normed = step("normed", centred * inv_std)
scaled = step("scaled", gamma * normed + beta)
hidden = step("hidden", torch.tanh(scaled))
scores = step("scores", hidden @ w_out + b_out)
row_max = step("row_max", scores.max(1, keepdim=True).values)  # for exp's range only
shifted = step("shifted", scores - row_max)
exps = step("exps", shifted.exp())
exp_total = step("exp_total", exps.sum(1, keepdim=True))
inv_total = step("inv_total", exp_total**-1)
softmax = step("softmax", exps * inv_total)
log_softmax = step("log_softmax", softmax.log())
loss = -log_softmax[range(rows), batch_out].mean()
loss.backward()
print("loss", round(loss.item(), 4))

# the chain rule by hand, from the loss back to the embeddings: d[x] is dloss/dx
d = {}
d["log_softmax"] = torch.zeros_like(log_softmax)
d["log_softmax"][range(rows), batch_out] = -1.0 / rows  # the mean picks one entry a row
d["softmax"] = (1.0 / softmax) * d["log_softmax"]
d["inv_total"] = (exps * d["softmax"]).sum(1, keepdim=True)
d["exp_total"] = (-(exp_total**-2)) * d["inv_total"]
# exps reaches the loss twice: through the product and through the row total
d["exps"] = inv_total * d["softmax"] + torch.ones_like(exps) * d["exp_total"]
d["shifted"] = exps * d["exps"]
d["row_max"] = (-d["shifted"]).sum(1, keepdim=True)
argmax = F.one_hot(scores.max(1).indices, num_classes=scores.shape[1])
d["scores"] = d["shifted"] + argmax * d["row_max"]
d["hidden"] = d["scores"] @ w_out.T
d["scaled"] = (1.0 - hidden**2) * d["hidden"]
d["normed"] = gamma * d["scaled"]
d["inv_std"] = (centred * d["normed"]).sum(0, keepdim=True)
d["batch_var"] = (-0.5 * (batch_var + 1e-5) ** -1.5) * d["inv_std"]
d["centred_sq"] = (1.0 / (rows - 1)) * torch.ones_like(centred_sq) * d["batch_var"]
d["centred"] = inv_std * d["normed"] + 2 * centred * d["centred_sq"]
d["batch_mean"] = (-d["centred"]).sum(0, keepdim=True)
d["pre_norm"] = d["centred"] + 1.0 / rows * torch.ones_like(pre_norm) * d["batch_mean"]
d["flat"] = d["pre_norm"] @ w_in.T
d["vectors"] = d["flat"].view(vectors.shape)

# the weights' gradients from the activations' ones
d["w_out"] = hidden.T @ d["scores"]
d["b_out"] = d["scores"].sum(0)
d["gamma"] = (normed * d["scaled"]).sum(0, keepdim=True)
d["beta"] = d["scaled"].sum(0, keepdim=True)
d["w_in"] = flat.T @ d["pre_norm"]
d["b_in"] = d["pre_norm"].sum(0)
d["table"] = torch.zeros_like(table)
for code, row in zip(batch_in.view(-1).tolist(), d["vectors"].view(-1, width)):
    d["table"][code] += row  # a code used twice gathers both rows

# softmax's and the log's chain collapsed into one line: (softmax - one-hot) / rows
d["scores (fused)"] = F.softmax(scores, 1)
d["scores (fused)"][range(rows), batch_out] -= 1
d["scores (fused)"] /= rows


def report(label, mine, autograd):
    same = torch.all(mine == autograd).item()
    near = torch.allclose(mine, autograd)
    gap = (mine - autograd).abs().max().item()
    print(f"{label:15} exact {same}  close {near}  biggest difference {gap:.3g}")


checked = {**act, **weights, "scores (fused)": scores}
for label, mine in d.items():
    report(label, mine, checked[label].grad)
