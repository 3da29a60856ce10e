"""Tensors as the basics tutorial introduces them: making them, their attributes, indexing
and item assignment, joining, arithmetic, in-place ops and the bridge to numpy."""
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data)
print("x_data", x_data.tolist(), x_data.dtype == torch.int64)

np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print("x_np", x_np.tolist(), x_np.dtype == torch.int64)

x_ones = torch.ones_like(x_data)  # keeps the properties of x_data
print("x_ones", x_ones.tolist(), x_ones.dtype == torch.int64)
x_rand = torch.rand_like(x_data, dtype=torch.float)  # overrides the dtype
print("x_rand", str(tuple(x_rand.shape)), x_rand.dtype == torch.float32,
      bool(((x_rand >= 0) & (x_rand < 1)).all()))

shape = (2, 3,)
rand_tensor = torch.rand(shape)
ones_tensor = torch.ones(shape)
zeros_tensor = torch.zeros(shape)
print("rand", str(tuple(rand_tensor.shape)), rand_tensor.dtype == torch.float32)
print(ones_tensor)
print(zeros_tensor)

tensor = torch.rand(3, 4)
print("shape", tensor.shape == (3, 4), str(tuple(tensor.shape)))
print("dtype", tensor.dtype == torch.float32, tensor.dtype == torch.float)
print("device", str(tensor.device), tensor.device == torch.device("cpu"))
print("cuda", torch.cuda.is_available())
if torch.cuda.is_available():
    tensor = tensor.to("cuda")

tensor = torch.ones(4, 4)
print("first row", tensor[0].tolist())
print("first column", tensor[:, 0].tolist())
print("last column", tensor[..., -1].tolist())
tensor[:, 1] = 0
print(tensor)

t1 = torch.cat([tensor, tensor, tensor], dim=1)
print("cat", str(tuple(t1.shape)), t1[0].tolist())
t2 = torch.stack([tensor, tensor])
print("stack", str(tuple(t2.shape)))

# three ways to the same matrix product, and to the same elementwise product
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print("matmul", y1.tolist(), y2.tolist() == y1.tolist(), y3.tolist() == y1.tolist())

z1 = tensor * tensor
z2 = tensor.mul(tensor)
z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print("mul", z1.tolist(), z2.tolist() == z1.tolist(), z3.tolist() == z1.tolist())

agg = tensor.sum()
agg_item = agg.item()
print("sum", agg_item, type(agg_item).__name__)

print("before add_", tensor[0].tolist())
tensor.add_(5)
print("after add_", tensor[0].tolist())

# the numpy bridge: a Tensor and its array share their memory
t = torch.ones(5)
n = t.numpy()
print("t", t.tolist(), "n", n.tolist(), type(n).__name__, n.dtype)
t.add_(1)
print("t", t.tolist(), "n", n.tolist())

n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print("t", t.tolist(), t.dtype == torch.float64, "n", n.tolist())
print(t)
