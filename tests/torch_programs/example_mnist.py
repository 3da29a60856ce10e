"""PyTorch's mnist example in our own words, on synthetic 28x28 digit-like images instead
of MNIST (no download): its argparse settings, the device line of every current example
(torch.accelerator.is_available()), the images normalised with MNIST's mean and std, the
example's Net (two nn.Conv2d, F.max_pool2d, two nn.Dropout, torch.flatten, two nn.Linear,
F.log_softmax), F.nll_loss, optim.Adadelta stepped down by StepLR(step_size=1, gamma=0.7),
the train() and test() printouts (loss summed with reduction='sum', accuracy from
argmax(dim=1, keepdim=True) and pred.eq(target.view_as(pred))), and the state dict saved
with torch.save."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


class Digits(Dataset):
    """Ten classes of images: class k is a blob at the k-th of ten places on a ring, plus
    noise; normalised with MNIST's mean and std as the example's transform does."""

    def __init__(self, n):
        self.targets = torch.randint(0, 10, (n,))
        angle = self.targets.float() * (2 * 3.14159265 / 10)
        cy = (14 + 8 * torch.sin(angle)).view(n, 1, 1)
        cx = (14 + 8 * torch.cos(angle)).view(n, 1, 1)
        grid = torch.arange(28).float()
        d2 = (grid.view(1, 28, 1) - cy) ** 2 + (grid.view(1, 1, 28) - cx) ** 2
        images = torch.exp(-d2 / 8) + 0.2 * torch.rand(n, 28, 28)
        self.data = ((images.clamp(0, 1) - 0.1307) / 0.3081).unsqueeze(1)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return self.data[i], self.targets[i]


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            done, total = batch_idx * len(data), len(train_loader.dataset)
            print(f'Train Epoch: {epoch} [{done}/{total} '
                  f'({100. * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss.item():.6f}')


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    total = len(test_loader.dataset)
    print(f'\nTest set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{total} '
          f'({100. * correct / total:.0f}%)\n')


def main():
    parser = argparse.ArgumentParser(description='A convnet on synthetic digits')
    parser.add_argument('--batch-size', type=int, default=16, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=32, metavar='N')
    parser.add_argument('--epochs', type=int, default=3, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-accel', action='store_true')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=2, metavar='N')
    parser.add_argument('--save-model', action='store_true', default=True)
    args = parser.parse_args()

    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_accel:
        accel_kwargs = {'num_workers': 1, 'persistent_workers': True, 'pin_memory': True,
                        'shuffle': True}
        train_kwargs.update(accel_kwargs)
        test_kwargs.update(accel_kwargs)
    train_kwargs['shuffle'] = True

    dataset1, dataset2 = Digits(96), Digits(32)
    train_loader = DataLoader(dataset1, **train_kwargs)
    test_loader = DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()
        print('lr now', scheduler.get_last_lr())

    if args.save_model:
        path = os.path.join(tempfile.mkdtemp(), "mnist_cnn.pt")
        torch.save(model.state_dict(), path)
        print(sorted(torch.load(path)), os.path.getsize(path) > 0)


if __name__ == '__main__':
    main()
