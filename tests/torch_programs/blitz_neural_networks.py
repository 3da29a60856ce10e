"""The blitz's small convnet: define it, run it, a loss, backward, a manual SGD step, then
torch.optim."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from the image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        # max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # a square window can be given as one number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)  # every dimension but the batch one
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
print(net)

params = list(net.parameters())
print("parameters", len(params))
print("conv1.weight size", str(tuple(params[0].size())))
print("shapes", [str(tuple(p.shape)) for p in params])
print("names", [name for name, _ in net.named_parameters()])

# weights that do not depend on the random generator: a sine pattern scaled by fan-in
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        fan_in = p[0].numel() if p.dim() > 1 else p.shape[0]
        pattern = torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape)
        p.zero_()
        p += pattern / math.sqrt(fan_in)

input = torch.cos(torch.linspace(0.0, 20.0, 32 * 32)).reshape(1, 1, 32, 32)
out = net(input)
print("out", str(tuple(out.shape)), out.tolist())

net.zero_grad()
out.backward(torch.linspace(-0.5, 0.5, 10).reshape(1, 10))
print("fc3.bias.grad", net.fc3.bias.grad.tolist())

output = net(input)
target = torch.linspace(-1.0, 1.0, 10)  # a dummy target
target = target.view(1, -1)  # the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print("loss", loss.item(), loss.grad_fn is not None)

net.zero_grad()  # zeroes the gradient buffers of all parameters
print("conv1.bias.grad before backward", net.conv1.bias.grad)
loss.backward()
print("conv1.bias.grad after backward", net.conv1.bias.grad.tolist())

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
print("after manual step", criterion(net(input), target).item())

optimizer = optim.SGD(net.parameters(), lr=0.01)
for step in range(5):
    optimizer.zero_grad()  # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()  # does the update
    print("step", step, loss.item())
print("conv1.bias", net.conv1.bias.tolist())
