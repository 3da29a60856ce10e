"""A one-dimensional convnet and an image model from issue 34's nn names: Conv1d with a
padding mode, AvgPool2d, AdaptiveAvgPool2d, F.pad, F.interpolate, the three robust losses
and a module's hooks; the weights drawn after manual_seed, trained a few steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(3)


def show(name, t):
    print(name, tuple(t.shape), [round(v, 4) for v in t.detach().flatten()[:6].tolist()])


# ---- a 1-D convnet on a sine wave, Huber loss ----
signal = torch.sin(torch.arange(48.0) * 0.3).reshape(2, 1, 24)
target = torch.cos(torch.arange(48.0) * 0.3).reshape(2, 1, 24)
wave = nn.Sequential(
    nn.Conv1d(1, 4, 5, padding=2, padding_mode="circular"), nn.Tanh(),
    nn.Conv1d(4, 1, 3, padding="same", padding_mode="reflect"),
)
print(wave)
sizes = []
handle = wave[0].register_forward_hook(lambda module, args, out: sizes.append(tuple(out.shape)))
grads = []


def log_gradient(module, grad_input, grad_output):
    grads.append(round(grad_output[0].abs().sum().item(), 4))


wave[2].register_full_backward_hook(log_gradient)
opt = optim.SGD(wave.parameters(), lr=0.1)
loss_fn = nn.HuberLoss(delta=0.5)
for step in range(4):
    opt.zero_grad()
    loss = loss_fn(wave(signal), target)
    loss.backward()
    opt.step()
    print("huber", step, round(loss.item(), 5))
handle.remove()
wave(signal)
print("forward hook saw", sizes, "backward hook saw", grads)

# ---- an image model: pad, pool, upsample ----
image = torch.linspace(-1, 1, 2 * 3 * 9 * 8).reshape(2, 3, 9, 8)
show("pad reflect", F.pad(image, (1, 2, 2, 1), mode="reflect"))
show("pad replicate", F.pad(image[0], (2, 0), mode="replicate"))
show("pad constant", F.pad(image, (1, 1, 1, 1), value=-2.0))
show("avg_pool2d", F.avg_pool2d(image, 3, stride=2, padding=1, count_include_pad=False))
show("avg_pool2d ceil", F.avg_pool2d(image, 2, ceil_mode=True))
show("adaptive", F.adaptive_avg_pool2d(image, (4, 3)))
show("nearest", F.interpolate(image, scale_factor=1.5))
show("bilinear", F.interpolate(image, size=(5, 11), mode="bilinear", align_corners=True))
show("linear", F.interpolate(image[:, :, 0], scale_factor=0.7, mode="linear"))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.pool = nn.AvgPool2d(2, ceil_mode=True)
        self.squeeze = nn.AdaptiveAvgPool2d((2, 2))
        self.head = nn.Linear(24, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        return self.head(self.squeeze(x).flatten(1))


net = Net()
print(net)
labels = torch.tensor([[0.5, -0.5], [1.0, 0.0]])
opt = optim.Adam(net.parameters(), lr=0.01)
for name, loss_fn in [("smooth_l1", nn.SmoothL1Loss(beta=0.5)), ("l1", nn.L1Loss())]:
    for step in range(3):
        opt.zero_grad()
        loss = loss_fn(net(image), labels)
        loss.backward()
        opt.step()
        print(name, step, round(loss.item(), 5))
show("head weight", net.head.weight)
