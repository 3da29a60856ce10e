"""PyTorch's vae example in our own words, on synthetic 28x28 images instead of MNIST (no
download): argparse settings, the device line of every current example
(torch.accelerator.is_available(), current_accelerator(), else torch.device("cpu")), a
DataLoader over a Dataset of images of blurred strokes, a VAE of Linear layers (784-400-20)
with the reparameterisation trick (torch.exp(0.5 * logvar), torch.randn_like), its loss
F.binary_cross_entropy(reduction='sum') plus the KL divergence, Adam, the example's
train() and test() printouts, and decoded samples from torch.randn under torch.no_grad()."""
import argparse

import torch
from torch import nn, optim
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser(description='VAE on synthetic images')
parser.add_argument('--batch-size', type=int, default=32, metavar='N')
parser.add_argument('--epochs', type=int, default=2, metavar='N')
parser.add_argument('--no-accel', action='store_true', help='disables accelerator')
parser.add_argument('--seed', type=int, default=1, metavar='S')
parser.add_argument('--log-interval', type=int, default=4, metavar='N')
args = parser.parse_args()

use_accel = not args.no_accel and torch.accelerator.is_available()
torch.manual_seed(args.seed)
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
print(f"Using {device} device")


class Strokes(Dataset):
    """Images of a bright bar (horizontal or vertical, at a random place) over faint noise,
    values in [0, 1], each with the bar's direction as its label."""

    def __init__(self, n):
        rows = torch.arange(28).float().view(28, 1)
        places = torch.randint(4, 24, (n,))
        self.labels = torch.randint(0, 2, (n,))
        bars = torch.exp(-(rows - places.view(n, 1, 1).float()) ** 2 / 4)  # (n, 28, 1)
        bars = bars.expand(n, 28, 28)
        vertical = bars.transpose(1, 2)
        chosen = torch.where(self.labels.view(n, 1, 1) == 1, vertical, bars)
        self.images = (0.9 * chosen + 0.1 * torch.rand(n, 28, 28)).unsqueeze(1)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


train_loader = DataLoader(Strokes(192), batch_size=args.batch_size, shuffle=True)
test_loader = DataLoader(Strokes(64), batch_size=args.batch_size, shuffle=False)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE().to(device)
optimizer = optim.Adam(model.parameters(), lr=1e-3)


def loss_function(recon_x, x, mu, logvar):
    """Reconstruction (binary cross-entropy, summed) plus KL(q(z|x) || N(0, I))."""
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.to(device)
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            done, total = batch_idx * len(data), len(train_loader.dataset)
            print(f'Train Epoch: {epoch} [{done}/{total} '
                  f'({100. * batch_idx / len(train_loader):.0f}%)]\t'
                  f'Loss: {loss.item() / len(data):.6f}')
    print(f'====> Epoch: {epoch} Average loss: {train_loss / len(train_loader.dataset):.4f}')


def test(epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
            if i == 0:  # the example saves these as an image; we print a summary
                n = min(data.size(0), 8)
                comparison = torch.cat([data[:n], recon_batch.view(args.batch_size, 1, 28, 28)[:n]])
                print('comparison', tuple(comparison.shape),
                      f'{(comparison[:n] - comparison[n:]).abs().mean().item():.5f}')
    test_loss /= len(test_loader.dataset)
    print(f'====> Test set loss: {test_loss:.4f}')


for epoch in range(1, args.epochs + 1):
    train(epoch)
    test(epoch)
    with torch.no_grad():
        sample = torch.randn(64, 20).to(device)
        sample = model.decode(sample).cpu()
        print('sample', tuple(sample.view(64, 1, 28, 28).shape),
              f'mean {sample.mean().item():.5f}', f'std {sample.std().item():.5f}')
