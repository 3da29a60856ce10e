"""A PyTorch-style program, as a user writes it against chaingrad: each assert_type states
what an editor should infer, and tests/test_typing.py has pyright and mypy check it."""

from contextlib import AbstractContextManager
from typing import Any

from typing_extensions import assert_type

import chaingrad as torch
import chaingrad.nn as nn
import chaingrad.nn.functional as F
from chaingrad.utils.data import DataLoader, TensorDataset

# factories, dtypes and torch's functions
g = torch.manual_seed(0)
assert_type(g, torch.Generator)
x = torch.randn(64, 3)
assert_type(x, torch.Tensor)
y = torch.randint(0, 2, (64,))
assert_type(y, torch.Tensor)
assert_type(torch.zeros(2, 2, dtype=torch.float64), torch.Tensor)
assert_type(torch.tensor([1.0, 2.0], requires_grad=True), torch.Tensor)
assert_type(torch.arange(6).reshape(2, 3), torch.Tensor)
assert_type(torch.float32, torch.dtype)
assert_type(torch.long, torch.dtype)
assert_type(torch.cat([x, x], dim=0), torch.Tensor)
assert_type(torch.exp(x), torch.Tensor)
assert_type(torch.sum(x, 0), torch.Tensor)
assert_type(torch.softmax(x, dim=1), torch.Tensor)
assert_type(torch.einsum("ij,kj->ik", x, x), torch.Tensor)
assert_type(x.shape, torch.Size)
assert_type(x.shape[0], int)
assert_type(x.size(1), int)

# Tensor methods: the elementwise ones come from the primitives' declarations
t = x.tanh()
assert_type(t, torch.Tensor)
assert_type(t.sum(), torch.Tensor)
assert_type(t.sum().item(), int | float | bool)
assert_type(t.leaky_relu(0.2), torch.Tensor)
assert_type(t.float(), torch.Tensor)
assert_type(t @ t.T, torch.Tensor)
assert_type(t > 0, torch.Tensor)
assert_type(t[0, 1:], torch.Tensor)

# layers and functional
lin = nn.Linear(3, 2)
assert_type(lin(x), torch.Tensor)
assert_type(lin.weight, nn.Parameter)
model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
assert_type(model(x), Any)  # as torch's: a Sequential gives what its last module gives
assert_type(F.relu(t), torch.Tensor)
assert_type(F.softplus(t, beta=2.0), torch.Tensor)
assert_type(F.tanh(t), torch.Tensor)
assert_type(nn.CrossEntropyLoss()(lin(x), y), torch.Tensor)


class Net(nn.Module):
    """A module of the user's own: calling it gives what its forward gives."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 2)
        self.register_buffer("scale", torch.ones(2))  # set by name: the checkers allow it

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale: torch.Tensor = self.scale  # Any, as a buffer is in torch: say what it is
        return self.fc2(F.gelu(self.fc1(x))) * scale


net = Net()
assert_type(net(x), torch.Tensor)

# training: an optimizer, a schedule, batches, no_grad
optimizer = torch.optim.AdamW(net.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
for xb, yb in loader:
    logits = net(xb)
    loss = F.cross_entropy(logits, yb)
    assert_type(loss, torch.Tensor)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
scheduler.step()
assert_type(torch.no_grad(), torch.no_grad)
assert isinstance(torch.no_grad(), AbstractContextManager)
with torch.no_grad():
    for p in net.parameters():  # Parameters (Any: a module may hold a micrograd model's Values)
        p -= 0.01 * p
    assert_type(net(x).argmax(1), torch.Tensor)


@torch.no_grad()
def accuracy(model: Net, inputs: torch.Tensor, labels: torch.Tensor) -> float:
    return (model(inputs).argmax(1) == labels).float().mean().item()


assert_type(accuracy(net, x, y), float)
print(f"accuracy {accuracy(net, x, y):.2f}")
