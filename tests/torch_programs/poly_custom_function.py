"""y = a + b P3(c + d x), with the Legendre polynomial P3 an autograd.Function."""
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5 x^3 - 3 x) / 2, with its derivative 3 (5 x^2 - 1) / 2 by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

# the Function on its own: value and gradient at three points
p = torch.tensor([-0.5, 0.25, 2.0], requires_grad=True)
q = LegendrePolynomial3.apply(p)
q.sum().backward()
print("P3", q.tolist())
print("dP3", p.grad.tolist())
print("P3 grad_fn", q.grad_fn is not None, q.requires_grad)

learning_rate = 5e-6
for t in range(600):
    P3 = LegendrePolynomial3.apply

    y_pred = a + b * P3(c + d * x)

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

print("result", a.item(), b.item(), c.item(), d.item())
