"""The cubic fit as nn.Sequential(Linear(3, 1), Flatten(0, 1)) with MSELoss(reduction='sum'),
updated by hand under no_grad."""
import math

import torch

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print("p", p.dtype == torch.int64, p.tolist())
print("xx", str(tuple(xx.shape)), xx.dtype == torch.float32)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1),
)
print(model)
# a start that does not depend on the random generator
with torch.no_grad():
    model[0].weight.fill_(0.0)
    model[0].bias.zero_()

loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-6
for t in range(600):
    y_pred = model(xx)

    loss = loss_fn(y_pred, y)
    if t % 150 == 149:
        print("loss", t, loss.item())

    model.zero_grad()

    loss.backward()

    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]
print("y_pred", str(tuple(y_pred.shape)))
print("weight", str(tuple(linear_layer.weight.shape)), linear_layer.weight.requires_grad)
print("bias", str(tuple(linear_layer.bias.shape)), linear_layer.bias.requires_grad)
print(
    "result",
    linear_layer.bias.item(),
    linear_layer.weight[:, 0].item(),
    linear_layer.weight[:, 1].item(),
    linear_layer.weight[:, 2].item(),
)
