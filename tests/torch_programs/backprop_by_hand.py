"""Backpropagation written out by hand, in the style of makemore part 4: a character MLP
(embedding, a linear layer, batch normalisation spelled out op by op, tanh, logits, the
cross-entropy spelled out too), every intermediate's .grad kept with retain_grad(); then
each gradient derived by hand from the one after it and compared with autograd's: exact
(bit for bit), close (allclose), and the largest difference."""
import torch
import torch.nn.functional as F

WORDS = """alba bruno cyra dante edda fiona gael hugo iris jonas kira lucas mila nico olga
pablo quin remy sofia tilda uma vito wanda xenia yusuf zora""".split()  # noqa: SIM905
letters = sorted(set("".join(WORDS)))
stoi = {ch: i + 1 for i, ch in enumerate(letters)}
vocab = len(letters) + 1
BLOCK = 3
xs, ys = [], []
for word in WORDS:
    context = [0] * BLOCK
    for ch in word + ".":
        xs.append(context)
        ys.append(stoi[ch] if ch != "." else 0)
        context = context[1:] + [ys[-1]]
X, Y = torch.tensor(xs), torch.tensor(ys)

g = torch.Generator().manual_seed(2147483647)
n_embd, n_hidden, batch = 10, 64, 32
C = torch.randn((vocab, n_embd), generator=g)
W1 = torch.randn((n_embd * BLOCK, n_hidden), generator=g) * (5 / 3) / (n_embd * BLOCK) ** 0.5
b1 = torch.randn(n_hidden, generator=g) * 0.1
W2 = torch.randn((n_hidden, vocab), generator=g) * 0.1
b2 = torch.randn(vocab, generator=g) * 0.1
bngain = torch.randn((1, n_hidden), generator=g) * 0.1 + 1.0
bnbias = torch.randn((1, n_hidden), generator=g) * 0.1
parameters = [C, W1, b1, W2, b2, bngain, bnbias]
for p in parameters:
    p.requires_grad = True

ix = torch.randint(0, X.shape[0], (batch,), generator=g)
Xb, Yb = X[ix], Y[ix]
n = batch

# the forward pass, one small step at a time
emb = C[Xb]
embcat = emb.view(emb.shape[0], -1)
hprebn = embcat @ W1 + b1
bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
bndiff = hprebn - bnmeani
bndiff2 = bndiff**2
bnvar = 1 / (n - 1) * bndiff2.sum(0, keepdim=True)
bnvar_inv = (bnvar + 1e-5) ** -0.5
bnraw = bndiff * bnvar_inv
hpreact = bngain * bnraw + bnbias
h = torch.tanh(hpreact)
logits = h @ W2 + b2
logit_maxes = logits.max(1, keepdim=True).values
norm_logits = logits - logit_maxes
counts = norm_logits.exp()
counts_sum = counts.sum(1, keepdim=True)
counts_sum_inv = counts_sum**-1
probs = counts * counts_sum_inv
logprobs = probs.log()
loss = -logprobs[range(n), Yb].mean()

intermediates = [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits,
                 logit_maxes, logits, h, hpreact, bnraw, bnvar_inv, bnvar, bndiff2, bndiff,
                 hprebn, bnmeani, embcat, emb]
for t in intermediates:
    t.retain_grad()
loss.backward()
print("loss", round(loss.item(), 4))


def compare(name, by_hand, t):
    exact = torch.all(by_hand == t.grad).item()
    close = torch.allclose(by_hand, t.grad)
    biggest = (by_hand - t.grad).abs().max().item()
    print(f"{name:15} exact {exact}  close {close}  biggest difference {biggest:.3g}")


# the backward pass, by hand
dlogprobs = torch.zeros_like(logprobs)
dlogprobs[range(n), Yb] = -1.0 / n
compare("logprobs", dlogprobs, logprobs)
dprobs = (1.0 / probs) * dlogprobs
compare("probs", dprobs, probs)
dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
compare("counts_sum_inv", dcounts_sum_inv, counts_sum_inv)
dcounts = counts_sum_inv * dprobs
dcounts_sum = (-(counts_sum**-2)) * dcounts_sum_inv
compare("counts_sum", dcounts_sum, counts_sum)
dcounts += torch.ones_like(counts) * dcounts_sum
compare("counts", dcounts, counts)
dnorm_logits = counts * dcounts
compare("norm_logits", dnorm_logits, norm_logits)
dlogits = dnorm_logits.clone()
dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
compare("logit_maxes", dlogit_maxes, logit_maxes)
dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
compare("logits", dlogits, logits)
dh = dlogits @ W2.T
compare("h", dh, h)
dhpreact = (1.0 - h**2) * dh
compare("hpreact", dhpreact, hpreact)
dbnraw = bngain * dhpreact
compare("bnraw", dbnraw, bnraw)
dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
compare("bnvar_inv", dbnvar_inv, bnvar_inv)
dbnvar = (-0.5 * (bnvar + 1e-5) ** -1.5) * dbnvar_inv
compare("bnvar", dbnvar, bnvar)
dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
compare("bndiff2", dbndiff2, bndiff2)
dbndiff = bnvar_inv * dbnraw + 2 * bndiff * dbndiff2
compare("bndiff", dbndiff, bndiff)
dhprebn = dbndiff.clone()
dbnmeani = (-dbndiff).sum(0, keepdim=True)
compare("bnmeani", dbnmeani, bnmeani)
dhprebn += 1.0 / n * torch.ones_like(hprebn) * dbnmeani
compare("hprebn", dhprebn, hprebn)
dembcat = dhprebn @ W1.T
compare("embcat", dembcat, embcat)
demb = dembcat.view(emb.shape)
compare("emb", demb, emb)

# the parameters, by hand too
dw2 = h.T @ dlogits
db2 = dlogits.sum(0)
dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
dbnbias = dhpreact.sum(0, keepdim=True)
dw1 = embcat.T @ dhprebn
db1 = dhprebn.sum(0)
dc = torch.zeros_like(C)
for k in range(Xb.shape[0]):
    for j in range(Xb.shape[1]):
        dc[Xb[k, j]] += demb[k, j]
for name, by_hand, p in [("C", dc, C), ("W1", dw1, W1), ("b1", db1, b1), ("W2", dw2, W2),
                         ("b2", db2, b2), ("bngain", dbngain, bngain),
                         ("bnbias", dbnbias, bnbias)]:
    compare(name, by_hand, p)

# the cross-entropy's gradient in one expression: softmax minus one-hot, over n
dlogits_fused = F.softmax(logits, 1)
dlogits_fused[range(n), Yb] -= 1
dlogits_fused /= n
compare("logits (fused)", dlogits_fused, logits)
