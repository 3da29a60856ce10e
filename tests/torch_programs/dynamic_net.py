"""A custom Module whose forward picks, at random, how many higher-order terms to add."""
import math
import random

import torch


class DynamicNet(torch.nn.Module):
    def __init__(self, rng):
        super().__init__()
        self.rng = rng
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(-0.2))
        self.c = torch.nn.Parameter(torch.tensor(0.05))
        self.d = torch.nn.Parameter(torch.tensor(0.3))
        self.e = torch.nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, self.rng.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 "
                f"+ {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?")


x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# Python's own generator, seeded here: the same sequence of shapes under any library
model = DynamicNet(random.Random(0))

criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(600):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 150 == 149:
        print("loss", t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print("result", model.string())
print("training", model.training)
model.eval()
print("after eval", model.training)
