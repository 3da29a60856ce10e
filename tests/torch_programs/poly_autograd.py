"""The cubic fit again, its gradients computed by autograd."""
import math

import torch

dtype = torch.float
device = "cpu"

x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype, device=device)
y = torch.sin(x)

a = torch.full((), 0.1, dtype=dtype, device=device, requires_grad=True)
b = torch.full((), -0.2, dtype=dtype, device=device, requires_grad=True)
c = torch.full((), 0.05, dtype=dtype, device=device, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, device=device, requires_grad=True)
print("leaf", a.is_leaf, a.requires_grad, a.grad is None)

learning_rate = 1e-6
for t in range(600):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    loss = (y_pred - y).pow(2).sum()
    if t % 150 == 149:
        print("loss", t, loss.item())

    loss.backward()

    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print("still leaves", a.is_leaf, a.requires_grad, d.is_leaf, d.requires_grad)
print("loss requires_grad", loss.requires_grad, loss.grad_fn is not None)
print("result", a.item(), b.item(), c.item(), d.item())
