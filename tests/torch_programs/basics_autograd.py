"""Autograd as the basics tutorial introduces it: a one-layer network with
binary_cross_entropy_with_logits, grad_fn, no_grad, detach, and Jacobian products."""
import torch
import torch.nn.functional as F

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
# fixed weights in place of torch.randn(5, 3, requires_grad=True)
w = torch.linspace(-1.0, 1.0, 15).reshape(5, 3).requires_grad_()
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = F.binary_cross_entropy_with_logits(z, y)
print("z", z.tolist())
print("loss", loss.item())

print("grad_fn", z.grad_fn is not None, loss.grad_fn is not None, w.grad_fn is None)

loss.backward()
print("w.grad", w.grad.tolist())
print("b.grad", b.grad.tolist())
print("grad is tensor", isinstance(w.grad, torch.Tensor), str(tuple(w.grad.shape)))

z = torch.matmul(x, w) + b
print("z requires_grad", z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print("under no_grad", z.requires_grad)

z = torch.matmul(x, w) + b
z_det = z.detach()
print("detach", z_det.requires_grad, z_det.tolist() == z.tolist())

# backward of a non-scalar output takes the vector of a vector-Jacobian product
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print("first call", inp.grad.tolist())
out.backward(torch.ones_like(out), retain_graph=True)
print("second call", inp.grad.tolist())
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print("call after zeroing", inp.grad.tolist())
