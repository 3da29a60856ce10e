"""PyTorch's time_sequence_prediction example in our own words, small: sine waves with
random phases made with numpy and saved as a tensor with torch.save to an open file, read
back with torch.load; a Sequence of two nn.LSTMCell(…, 51) and an nn.Linear in float64
(.double()), stepping through the series one column at a time (input.split(1, dim=1)) and
then feeding its own predictions back for `future` more steps; nn.MSELoss and optim.LBFGS
with a closure that prints each loss; the test loss under torch.no_grad()."""
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


def generate_sine_wave(path, T=20, L=80, N=12):
    """N waves of L samples, each shifted by a random whole number of samples."""
    np.random.seed(2)
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    with open(path, 'wb') as f:
        torch.save(torch.from_numpy(data), f)


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _i in range(future):  # the model's own output as the next input
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=3, help='steps to run')
    opt = parser.parse_args()
    path = os.path.join(tempfile.mkdtemp(), 'traindata.pt')
    generate_sine_wave(path)
    np.random.seed(0)
    torch.manual_seed(0)
    data = torch.load(path)
    input = data[3:, :-1]
    target = data[3:, 1:]
    test_input = data[:3, :-1]
    test_target = data[:3, 1:]
    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=8)
    for i in range(opt.steps):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print(f'loss: {loss.item():.10f}')
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 20
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print(f'test loss: {loss.item():.10f}')
            y = pred.detach().numpy()
        print('predicted ahead:', ' '.join(f'{v:.6f}' for v in y[0, -future::5]))
