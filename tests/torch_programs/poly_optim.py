"""The cubic fit with torch.optim: RMSprop (to sin(x) + 0.5, so that every coefficient has a
nonzero gradient to follow), then SGD with momentum."""
import math

import torch

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)


def make_model():
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    with torch.no_grad():
        model[0].weight.fill_(0.0)
        model[0].bias.fill_(0.0)
    return model


def report(name, model):
    layer = model[0]
    print(name, layer.bias.item(), layer.weight[:, 0].item(), layer.weight[:, 1].item(),
          layer.weight[:, 2].item())


loss_fn = torch.nn.MSELoss(reduction="sum")

# RMSprop divides by the gradient's size: a coefficient whose gradient is only rounding noise
# (an even one, for an odd target) moves by noise, and near the minimum it bounces. So: a target
# with even parts, and 300 steps, while the steps still point the same way in any float32
y_shifted = y + 0.5

model = make_model()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
print("param_groups", len(optimizer.param_groups), optimizer.param_groups[0]["lr"])
for t in range(300):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y_shifted)
    if t % 100 == 99:
        print("rmsprop loss", t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
report("rmsprop", model)

model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)
for t in range(1000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 250 == 249:
        print("sgd loss", t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
report("sgd", model)
