"""Fit y = a + b x + c x^2 + d x^3 to sin(x) on [-pi, pi], gradients written by hand."""
import math

import torch

dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# fixed starting coefficients, so that the result does not depend on the random generator
a = torch.tensor(0.1, device=device, dtype=dtype)
b = torch.tensor(-0.2, device=device, dtype=dtype)
c = torch.tensor(0.05, device=device, dtype=dtype)
d = torch.tensor(0.3, device=device, dtype=dtype)

learning_rate = 1e-6
for t in range(600):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    loss = (y_pred - y).pow(2).sum().item()
    if t % 150 == 149:
        print("loss", t, loss)

    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()

    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print("x", str(tuple(x.shape)), x.dtype == torch.float32, str(x.device))
print("y_pred", str(tuple(y_pred.shape)), y_pred.dtype == torch.float32)
print("a", a.item())
print("b", b.item())
print("c", c.item())
print("d", d.item())
