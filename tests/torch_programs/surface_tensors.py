"""One line for each piece of the Tensor surface that issue 14 lists: factories, dtypes,
devices, module-level functions, Tensor methods, in-place updates, autograd."""
import numpy as np
import torch

# ---- factories ----
print("tensor", torch.tensor([1.5, -2.0]).tolist(), torch.tensor(3).item())
print("tensor dtype", torch.tensor([1, 2]).dtype, torch.tensor([1.0]).dtype,
      torch.tensor([True]).dtype, torch.tensor([1, 2], dtype=torch.float64).dtype)
print("zeros", torch.zeros(2, 3).tolist(), torch.zeros((2,), dtype=torch.long).tolist())
print("ones", torch.ones(2, 2).tolist(), torch.ones(3, dtype=torch.bool).tolist())
base = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)
print("zeros_like", torch.zeros_like(base).tolist(), torch.zeros_like(base).dtype)
print("ones_like", torch.ones_like(base).tolist(), torch.ones_like(base, dtype=torch.int64).dtype)
r = torch.rand(3, 4)
print("rand", str(tuple(r.shape)), r.dtype, bool(((r >= 0) & (r < 1)).all()))
r = torch.randn(2, 5, dtype=torch.float64)
print("randn", str(tuple(r.shape)), r.dtype)
r = torch.randint(0, 10, (4, 4))
print("randint", str(tuple(r.shape)), r.dtype, bool(((r >= 0) & (r < 10)).all()))
r = torch.randint(5, (6,))
print("randint high", str(tuple(r.shape)), bool(((r >= 0) & (r < 5)).all()))
print("arange", torch.arange(5).tolist(), torch.arange(5).dtype,
      torch.arange(1.0, 2.0, 0.25).tolist(),
      torch.arange(2, 11, 3).tolist())
print("linspace", torch.linspace(0, 1, 5).tolist(), torch.linspace(-1, 1, 3).dtype)
print("eye", torch.eye(3).tolist(), torch.eye(2, 3).tolist())
print("full", torch.full((2, 2), 7.5).tolist(), torch.full((2,), 3).dtype)
a = np.arange(6.0).reshape(2, 3)
t = torch.from_numpy(a)
print("from_numpy", t.tolist(), t.dtype, str(tuple(t.shape)))
torch.manual_seed(0)
first = torch.rand(4)
torch.manual_seed(0)
second = torch.rand(4)
print("manual_seed", torch.equal(first, second), bool((first == second).all()))

# ---- dtypes and devices ----
print("aliases", torch.float is torch.float32, torch.double is torch.float64,
      torch.long is torch.int64)
print("dtype names", torch.float32, torch.float64, torch.int64, torch.bool)
x = torch.ones(2, dtype=torch.float32, device="cpu")
print("device", str(x.device), x.device.type, x.device == torch.device("cpu"),
      str(torch.device("cpu")))
print("device kw", torch.zeros(2, device=torch.device("cpu")).tolist(),
      str(torch.ones(1, device="cpu").device))
print("cuda", torch.cuda.is_available())
torch.set_default_device("cpu")
print("default device", str(torch.ones(1).device))
print("conversions", x.float().dtype, x.double().dtype, x.long().dtype,
      torch.tensor([1.7, -1.7]).long().tolist())
print("to", x.to(torch.float64).dtype, str(x.to("cpu").device))

# ---- promotion of Python numbers ----
i = torch.tensor([1, 2, 3])
f = torch.tensor([1.0, 2.0, 3.0])
print("int + int", (i + 1).dtype, (i + 1).tolist())
print("int * float", (i * 2.5).dtype, (i * 2.5).tolist())
print("int / int", (i / 2).dtype, (i / 2).tolist())
print("float * int", (f * 2).dtype, (2 ** f).tolist())
print("float64 + float32", (f.double() + f).dtype)
print("int + float tensor", (i + f).dtype)

# ---- module-level maths ----
v = torch.tensor([0.5, 1.0, 2.0])
m = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
print("exp", torch.exp(v).tolist())
print("log", torch.log(v).tolist())
print("sin", torch.sin(v).tolist())
print("cos", torch.cos(v).tolist())
print("tanh", torch.tanh(v).tolist())
print("sigmoid", torch.sigmoid(v).tolist())
print("relu", torch.relu(m).tolist())
print("sqrt", torch.sqrt(v).tolist())
print("abs", torch.abs(m).tolist())
print("pow", torch.pow(v, 2).tolist(), torch.pow(2, v).tolist(), torch.pow(v, v).tolist())
print("matmul", torch.matmul(m, m.T).tolist(), torch.matmul(v, v).item())
print("mm", torch.mm(m, m.T).tolist())
print("sum", torch.sum(m).item(), torch.sum(m, dim=0).tolist(),
      torch.sum(m, 1, keepdim=True).tolist())
print("mean", torch.mean(m).item(), torch.mean(m, dim=1).tolist())
print("max", torch.max(m).item(), torch.max(m, dim=1).values.tolist(),
      torch.max(m, dim=1).indices.tolist(), torch.max(v, torch.tensor(1.5)).tolist())
values, indices = torch.max(m, 0)
print("max unpacked", values.tolist(), indices.tolist())
print("min", torch.min(m).item(), torch.min(m, dim=0).values.tolist(),
      torch.min(m, dim=0).indices.tolist())
print("argmax", torch.argmax(m).item(), torch.argmax(m, dim=1).tolist(),
      torch.argmax(m, dim=1, keepdim=True).tolist())
print("cat", torch.cat([m, m]).tolist(), str(tuple(torch.cat((m, m), dim=1).shape)))
print("stack", str(tuple(torch.stack([v, v]).shape)), str(tuple(torch.stack([v, v], dim=1).shape)))
print("where", torch.where(m > 0, m, torch.zeros_like(m)).tolist(),
      torch.where(m > 0, m, 0.0).tolist())
c = torch.arange(24).reshape(2, 3, 4)
print("flatten", str(tuple(torch.flatten(c).shape)), str(tuple(torch.flatten(c, 1).shape)),
      str(tuple(torch.flatten(c, 0, 1).shape)))
print("clamp", torch.clamp(m, -2.0, 2.0).tolist(), torch.clamp(m, min=0.0).tolist(),
      torch.clamp(m, max=1.0).tolist())
print("softmax", torch.softmax(m, dim=1).tolist())
print("log_softmax", torch.log_softmax(m, dim=0).tolist())
print("allclose", torch.allclose(v, v + 1e-9), torch.allclose(v, v + 1.0))
print("grad mode", torch.is_grad_enabled())
with torch.no_grad():
    print("no_grad", torch.is_grad_enabled())
    with torch.enable_grad():
        print("enable_grad", torch.is_grad_enabled())


@torch.no_grad()
def doubled(t):
    return t * 2


print("no_grad decorator", doubled(torch.ones(2, requires_grad=True)).requires_grad)

# ---- Tensor methods ----
print("sum dim", m.sum(dim=1).tolist(), m.sum(1, keepdim=True).tolist(), m.sum(axis=0).tolist(),
      m.sum(axis=0, keepdims=True).tolist())
print("mean dim", m.mean(dim=0).tolist(), m.mean(dim=(0, 1)).item())
print("max dim", m.max().item(), m.max(dim=0).values.tolist(), m.max(1)[1].tolist())
print("transpose", m.transpose(0, 1).tolist(), str(tuple(c.transpose(0, 2).shape)),
      str(tuple(c.transpose(-1, -2).shape)))
print("permute", str(tuple(c.permute(2, 0, 1).shape)), c.permute(2, 0, 1)[1, 0].tolist())
print("view", c.view(6, 4)[1].tolist(), str(tuple(c.view(-1).shape)),
      str(tuple(c.view(4, -1).shape)))
print("reshape", str(tuple(c.reshape(3, 8).shape)), str(tuple(c.reshape((-1, 2)).shape)))
print("unsqueeze", str(tuple(v.unsqueeze(0).shape)), str(tuple(v.unsqueeze(-1).shape)))
s = torch.zeros(1, 3, 1)
print("squeeze", str(tuple(s.squeeze().shape)), str(tuple(s.squeeze(0).shape)),
      str(tuple(s.squeeze(-1).shape)))
print("flatten method", str(tuple(c.flatten().shape)), str(tuple(c.flatten(1).shape)),
      str(tuple(c.flatten(0, 1).shape)), str(tuple(c.flatten(start_dim=1, end_dim=2).shape)))
print("T", m.T.tolist())
print("mT", str(tuple(c.mT.shape)), c.mT[0, 1].tolist())
print("item", torch.tensor([[2.5]]).item(), type(torch.tensor(3).item()).__name__)
print("tolist", m.tolist(), torch.tensor(1.5).tolist())
n = m.numpy()
print("numpy", type(n).__name__, n.dtype, n.shape, n.tolist())
w = torch.tensor([1.0, 2.0], requires_grad=True)
print("detach", w.detach().requires_grad, w.detach().tolist())
k = w.clone()
print("clone", k.requires_grad, k.is_leaf, k.tolist())
plain = torch.tensor([1.0, 2.0])
print("clone independent", plain.clone().add_(1).tolist(), plain.tolist())
print("requires_grad_", plain.requires_grad_().requires_grad, plain.requires_grad)
z = torch.ones(2, 2)
print("zero_", z.zero_().tolist(), z.tolist())
print("fill_", z.fill_(3.5).tolist(), z.tolist())
print("size", str(tuple(c.size())), c.size(0), c.size(-1), c.size() == (2, 3, 4))
print("shape", str(tuple(c.shape)), c.shape[1], c.ndim, c.dim(), c.numel())
print("dtype device", c.dtype, str(c.device))
print("pow method", v.pow(2).tolist(), (v ** 0.5).tolist(), (2 ** v).tolist())
print("exp sin methods", v.exp().tolist(), v.sin().tolist(), v.log().tolist(), v.cos().tolist())
print("more methods", m.abs().tolist(), m.relu().tolist(), v.sqrt().tolist(), v.tanh().tolist(),
      v.sigmoid().tolist())
print("method softmax", m.softmax(dim=-1).tolist(), m.log_softmax(-1).tolist())
print("method argmax clamp", m.argmax(dim=0).tolist(), m.clamp(min=-1, max=1).tolist())

# ---- indexing, slicing, item assignment ----
g = torch.arange(12.0).reshape(3, 4)
print("index", g[1].tolist(), g[1, 2].item(), g[-1, -1].item())
print("slice", g[:, 1].tolist(), g[1:, ::2].tolist(), g[..., 0].tolist(),
      g[:, None].shape == (3, 1, 4))
print("fancy", g[[0, 2]].tolist(), g[torch.tensor([2, 0])].tolist(), g[g > 8].tolist())
g[:, 1] = 0
g[0] = torch.tensor([9.0, 9.0, 9.0, 9.0])
g[2, 3] = -1.0
g[g > 8] = 100.0
print("assigned", g.tolist())

# ---- comparisons return bool Tensors ----
p = torch.tensor([1.0, 2.0, 3.0])
q = torch.tensor([3.0, 2.0, 1.0])
print("compare", (p == q).tolist(), (p != q).tolist(), (p < q).tolist(), (p <= q).tolist(),
      (p > 2).tolist(), (p >= 2).tolist(), (p == q).dtype)
print("eq methods", p.eq(q).tolist(), p.eq(q).any().item(), p.eq(p).all().item())
print("equal", torch.equal(p, p.clone()), torch.equal(p, q))

# ---- in-place updates on leaves under no_grad ----
leaf = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(leaf * leaf).sum().backward()
with torch.no_grad():
    leaf -= 0.1 * leaf.grad
    leaf += 1.0
    leaf *= 2.0
    leaf /= 4.0
print("in-place ops", leaf.tolist(), leaf.requires_grad, leaf.is_leaf)
with torch.no_grad():
    leaf.add_(1.0)
    leaf.sub_(0.5)
    leaf.mul_(2.0)
    leaf.add_(leaf.grad, alpha=-0.5)
print("in-place methods", leaf.tolist(), leaf.requires_grad, leaf.is_leaf)
leaf.grad = None
(leaf ** 2).sum().backward()
print("grad after reset", leaf.grad.tolist(), isinstance(leaf.grad, torch.Tensor))
leaf.grad.zero_()
print("grad zero_", leaf.grad.tolist())

# ---- backward ----
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
y.backward(gradient=torch.tensor([1.0, 0.5, 0.25]), retain_graph=True)
print("backward gradient", x.grad.tolist())
y.backward(torch.ones(3))
print("backward accumulates", x.grad.tolist())
try:
    (x * x).backward()
except RuntimeError:
    print("non-scalar backward raises RuntimeError")
x = torch.tensor(2.0, requires_grad=True)
(dx,) = torch.autograd.grad(x ** 3, x)
print("autograd.grad", dx.item(), x.grad is None)
(dx,) = torch.autograd.grad(x ** 3, x, create_graph=True)
(ddx,) = torch.autograd.grad(dx, x)
print("second derivative", dx.item(), ddx.item())

# ---- printing ----
print(torch.tensor([1.0, 2.5, -3.0]))
print(torch.tensor([[1, 2], [3, 4]]))
print(torch.tensor([0.5, 1.0], requires_grad=True))
print(torch.tensor([True, False]))
print(torch.tensor(2.0))
print(torch.zeros(2, dtype=torch.float64))
