"""One line for each piece of the nn / functional / init / optim surface that issue 14 lists.
Weights are set from fixed patterns, so no result depends on the random generator."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def set_weights(module, scale=0.5):
    """Every parameter of ``module`` from a sine pattern: the same under any library."""
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.zero_()
            p += scale * torch.sin(torch.arange(p.numel()) * 0.9 + i + 1).reshape(p.shape)


def shape(t):
    return str(tuple(t.shape))


# ---- nn.Module: registration, traversal, modes, state ----
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.scale = nn.Parameter(torch.tensor(2.0))
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(3, 2))

    def forward(self, x):
        return self.head(self.block(x))


model = Model()
set_weights(model)
print(model)
print("parameters", len(list(model.parameters())), [shape(p) for p in model.parameters()])
print("named_parameters", [name for name, _ in model.named_parameters()])
print("children", [type(m).__name__ for m in model.children()])
print("modules", [type(m).__name__ for m in model.modules()])
print("is Parameter", isinstance(model.block.scale, nn.Parameter),
      isinstance(model.block.fc.weight, torch.Tensor), model.block.scale.requires_grad)
x = torch.linspace(-1.0, 1.0, 8).reshape(2, 4)
out = model(x)
print("forward", shape(out), out.tolist())
print("forward method", model.forward(x).tolist() == out.tolist())
out.sum().backward()
print("grad", model.block.scale.grad.item(), model.head[1].bias.grad.tolist())
model.zero_grad()
print("zero_grad", model.block.scale.grad is None, model.head[1].bias.grad is None)
print("training", model.training, model.block.fc.training)
model.eval()
print("eval", model.training, model.block.fc.training, model.head.training)
model.train()
print("train", model.training, model.head[0].training)
state = model.state_dict()
print("state_dict", list(state.keys()), shape(state["block.fc.weight"]))
other = Model()
other.load_state_dict(state)
print("loaded", other(x).tolist() == out.tolist(), other.block.scale.item())

# ---- Sequential ----
seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
print(seq)
print("indexing", type(seq[0]).__name__, type(seq[-1]).__name__, len(seq),
      type(seq[1:]).__name__, len(seq[1:]))
print("iterate", [type(m).__name__ for m in seq])

# ---- layers ----
img = torch.sin(torch.arange(2 * 3 * 6 * 6) * 0.37).reshape(2, 3, 6, 6)
lin = nn.Linear(3, 2)
set_weights(lin)
print("Linear", lin.weight.shape == (2, 3), shape(lin.bias),
      lin(torch.linspace(-2.0, 2.0, 12).reshape(4, 3)).tolist())
print("Linear no bias", nn.Linear(3, 2, bias=False).bias is None)
conv = nn.Conv2d(3, 4, kernel_size=3)
set_weights(conv, 0.2)
print("Conv2d", shape(conv.weight), shape(conv(img)), conv(img)[1, 2, 0].tolist())
conv = nn.Conv2d(3, 2, 3, stride=2, padding=1)
set_weights(conv, 0.2)
print("Conv2d stride padding", shape(conv(img)), conv(img)[0, 1].tolist())
print("MaxPool2d", shape(nn.MaxPool2d(2)(img)), nn.MaxPool2d(2)(img)[0, 0].tolist(),
      shape(nn.MaxPool2d(3, stride=1)(img)), shape(nn.MaxPool2d((2, 2))(img)))
print("Flatten", shape(nn.Flatten()(img)), shape(nn.Flatten(0, 1)(img)), shape(nn.Flatten(2)(img)))
m = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
print("ReLU", nn.ReLU()(m).tolist(), nn.ReLU(inplace=True)(m.clone()).tolist())
print("Tanh", nn.Tanh()(m).tolist())
print("Sigmoid", nn.Sigmoid()(m).tolist())
print("Softmax", nn.Softmax(dim=1)(m).tolist(), nn.Softmax(dim=0)(m).tolist())
drop = nn.Dropout(p=0.5)
d = drop(torch.ones(200))
print("Dropout train", bool(((d == 0) | (d == 2)).all()), bool((d == 0).any()),
      bool((d == 2).any()), shape(d))
drop.eval()
print("Dropout eval", drop(m).tolist())
print("Dropout p=0", nn.Dropout(0.0)(m).tolist())
print("modules repr", nn.ReLU(), nn.Tanh(), nn.Sigmoid(), nn.Softmax(dim=1), nn.Dropout(0.25),
      nn.MaxPool2d(2), nn.Flatten(), nn.Conv2d(3, 4, 3, stride=2, padding=1),
      nn.Linear(2, 1, bias=False))

# ---- losses ----
pred = torch.tensor([[0.5, -1.0], [2.0, 0.25], [0.0, 1.5]], requires_grad=True)
target = torch.tensor([[1.0, -1.0], [1.5, 0.0], [0.5, 1.0]])
print("MSELoss", nn.MSELoss()(pred, target).item(),
      nn.MSELoss(reduction="sum")(pred, target).item(),
      nn.MSELoss(reduction="none")(pred, target).tolist())
logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], [-2.0, 3.0, 0.0], [1.0, 1.0, 1.0]],
                      requires_grad=True)
labels = torch.tensor([0, 2, 1, 1])
ce = nn.CrossEntropyLoss()(logits, labels)
print("CrossEntropyLoss", ce.item(), nn.CrossEntropyLoss(reduction="sum")(logits, labels).item(),
      nn.CrossEntropyLoss(reduction="none")(logits, labels).tolist())
ce.backward()
print("CrossEntropyLoss grad", logits.grad.tolist())
log_probs = F.log_softmax(logits, dim=1)
print("NLLLoss", nn.NLLLoss()(log_probs, labels).item(),
      nn.NLLLoss(reduction="none")(log_probs, labels).tolist())
bce_target = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
print("BCEWithLogitsLoss", nn.BCEWithLogitsLoss()(pred, bce_target).item(),
      nn.BCEWithLogitsLoss(reduction="sum")(pred, bce_target).item())
print("losses repr", nn.MSELoss(), nn.CrossEntropyLoss(), nn.NLLLoss(), nn.BCEWithLogitsLoss())

# ---- torch.nn.functional ----
print("F.relu", F.relu(m).tolist())
print("F.max_pool2d", F.max_pool2d(img, 2)[1, 2].tolist(), shape(F.max_pool2d(img, (3, 3))),
      shape(F.max_pool2d(img, 2, stride=1)))
kernel = 0.1 * torch.cos(torch.arange(2 * 3 * 3 * 3) * 0.5).reshape(2, 3, 3, 3)
bias = torch.tensor([0.1, -0.1])
print("F.conv2d", F.conv2d(img, kernel)[0, 0, 0].tolist(), shape(F.conv2d(img, kernel, bias)),
      shape(F.conv2d(img, kernel, bias, stride=2, padding=1)))
weight = torch.tensor([[0.5, -0.5, 1.0], [2.0, 0.0, -1.0]])
print("F.linear", F.linear(m, weight).tolist(),
      F.linear(m, weight, torch.tensor([1.0, -1.0])).tolist())
print("F.mse_loss", F.mse_loss(pred, target).item(),
      F.mse_loss(pred, target, reduction="sum").item())
print("F.cross_entropy", F.cross_entropy(logits, labels).item())
print("F.softmax", F.softmax(m, dim=1).tolist())
print("F.log_softmax", F.log_softmax(m, dim=-1).tolist())
print("F.binary_cross_entropy_with_logits",
      F.binary_cross_entropy_with_logits(pred, bce_target).item())

# ---- nn.init ----
w = torch.zeros(3, 5)
nn.init.zeros_(w)
print("init.zeros_", w.tolist())
nn.init.ones_(w)
print("init.ones_", w.tolist())
nn.init.constant_(w, 0.25)
print("init.constant_", w.tolist())
nn.init.uniform_(w, -0.1, 0.1)
print("init.uniform_", shape(w), bool(((w >= -0.1) & (w <= 0.1)).all()))
nn.init.normal_(w, mean=0.0, std=0.01)
print("init.normal_", shape(w), bool((w.abs() < 1.0).all()))

# ---- optimizers: five steps on the same quadratic ----
goal = torch.tensor([1.0, -2.0, 0.5, 3.0])


def run(make_optimizer, steps=5):
    p = torch.linspace(-1.0, 1.0, 4).requires_grad_()
    optimizer = make_optimizer([p])
    for _ in range(steps):
        optimizer.zero_grad()
        loss = ((p - goal) ** 2).sum() + (p ** 4).sum() * 0.1
        loss.backward()
        optimizer.step()
    return p.tolist()


print("SGD", run(lambda ps: optim.SGD(ps, lr=0.1)))
print("SGD momentum", run(lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9)))
print("SGD weight_decay", run(lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01)))
print("SGD nesterov", run(lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True)))
print("Adam", run(lambda ps: optim.Adam(ps, lr=0.1)))
print("Adam betas", run(lambda ps: optim.Adam(ps, lr=0.05, betas=(0.8, 0.99), weight_decay=0.1)))
print("AdamW", run(lambda ps: optim.AdamW(ps, lr=0.1)))
print("AdamW weight_decay", run(lambda ps: optim.AdamW(ps, lr=0.1, weight_decay=0.5)))
print("RMSprop", run(lambda ps: optim.RMSprop(ps, lr=0.01)))
print("RMSprop momentum", run(lambda ps: optim.RMSprop(ps, lr=0.01, alpha=0.9, momentum=0.5)))

net = nn.Linear(2, 1)
set_weights(net)
opt = optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
group = opt.param_groups[0]
print("param_groups", len(opt.param_groups), group["lr"], group["momentum"],
      len(group["params"]))
for g in opt.param_groups:
    g["lr"] = 0.01
net(torch.ones(3, 2)).sum().backward()
opt.step()
print("lr changed", opt.param_groups[0]["lr"], net.weight.tolist(), net.bias.tolist())
opt.zero_grad()
print("optimizer zero_grad", net.weight.grad is None)
print("lr defaults", optim.Adam([torch.zeros(1, requires_grad=True)]).param_groups[0]["lr"],
      optim.RMSprop([torch.zeros(1, requires_grad=True)]).param_groups[0]["lr"],
      optim.AdamW([torch.zeros(1, requires_grad=True)]).param_groups[0]["weight_decay"])
