"""Autograd as the 60-minute blitz shows it: requires_grad, grad_fn, backward with a gradient,
a loop on y.data.norm(), no_grad, detach, and freezing parameters."""
import torch
from torch import nn

x = torch.ones(2, 2, requires_grad=True)
print("x", x.tolist(), x.requires_grad, x.grad_fn is None)

y = x + 2
print("y", y.tolist(), y.grad_fn is not None, y.is_leaf)

z = y * y * 3
out = z.mean()
print("z", z.tolist(), "out", out.item())

a = torch.tensor([[0.5, -1.0], [2.0, 3.0]])
a = ((a * 3) / (a - 1))
print("a requires_grad", a.requires_grad)
a.requires_grad_(True)
print("a requires_grad", a.requires_grad)
b = (a * a).sum()
print("b", b.item(), b.grad_fn is not None)

out.backward()
print("x.grad", x.grad.tolist())

# a vector-Jacobian product: backward(v) on a non-scalar output
x = torch.linspace(-1.0, 1.0, 3, requires_grad=True)
y = x * 2
steps = 0
while y.data.norm() < 1000:
    y = y * 2
    steps += 1
print("doublings", steps, y.tolist())
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print("x.grad", x.grad.tolist())

print("requires_grad", x.requires_grad, (x ** 2).requires_grad)
with torch.no_grad():
    print("under no_grad", (x ** 2).requires_grad)
print("after no_grad", (x ** 2).requires_grad)

y = x.detach()
print("detach", y.requires_grad, y.is_leaf, x.eq(y).all().item())

# the gradient of Q = 3 a^3 - b^2 with respect to a and b
a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
Q = 3 * a ** 3 - b ** 2
external_grad = torch.tensor([1.0, 1.0])
Q.backward(gradient=external_grad)
print("dQ/da", a.grad.tolist(), (9 * a ** 2 == a.grad).tolist())
print("dQ/db", b.grad.tolist(), (-2 * b == b.grad).tolist())

# what is excluded from the graph
x = torch.arange(25.0).reshape(5, 5)
y = torch.full((5, 5), 0.5)
z = torch.zeros((5, 5), requires_grad=True)
c = x + y
print("x + y requires_grad", c.requires_grad)
c = x + z
print("x + z requires_grad", c.requires_grad)

# freeze every parameter, then train only a new last layer
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
for param in model.parameters():
    param.requires_grad = False
model[2] = nn.Linear(3, 2)
print("trainable", [name for name, p in model.named_parameters() if p.requires_grad])
print("frozen", [name for name, p in model.named_parameters() if not p.requires_grad])
loss = model(torch.ones(1, 4)).sum()
loss.backward()
print("grads", model[0].weight.grad is None, model[2].weight.grad is not None,
      str(tuple(model[2].weight.grad.shape)))
