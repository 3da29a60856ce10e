"""The cubic fit as a custom nn.Module holding four nn.Parameter scalars."""
import math

import torch


class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(-0.2))
        self.c = torch.nn.Parameter(torch.tensor(0.05))
        self.d = torch.nn.Parameter(torch.tensor(0.3))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 "
                f"+ {self.d.item()} x^3")


x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

model = Polynomial3()
print("parameters", len(list(model.parameters())))
print("names", [name for name, _ in model.named_parameters()])
print("is Parameter", isinstance(model.a, torch.nn.Parameter), model.a.requires_grad)
print("start", model.string())

criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(600):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 150 == 149:
        print("loss", t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print("result", model.string())
print("state_dict", sorted(model.state_dict().keys()))
