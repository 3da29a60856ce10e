"""PyTorch's regression example in our own words: a polynomial of degree 4 with random
coefficients, learned by one nn.Linear from its powers of x (torch.cat of x ** i), batch
by batch with F.smooth_l1_loss, the parameters updated by hand through
param.data.add_(-lr * param.grad) until the loss falls below 1e-3; the learned and the
true polynomials printed as text, as the example prints them."""
from itertools import count

import torch
import torch.nn.functional as F

POLY_DEGREE = 4
torch.manual_seed(7)
W_target = torch.randn(POLY_DEGREE, 1) * 5
b_target = torch.randn(1) * 5


def make_features(x):
    """Rows [x, x^2, x^3, x^4] for a column of x."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """The polynomial to learn."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """The polynomial as text, highest power last."""
    terms = ' '.join(f'{w:+.2f} x^{i}' for i, w in enumerate(W, 1))
    return f'y = {terms} {b.item():+.2f}'


def get_batch(batch_size=32):
    """A batch of (features, f(x)) for x drawn from a standard normal."""
    random = torch.randn(batch_size)
    x = make_features(random)
    return x, f(x)


fc = torch.nn.Linear(W_target.size(0), 1)
for batch_idx in count(1):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    if loss < 1e-3 or batch_idx == 2000:
        break

print(f'Loss: {loss:.6f} after {batch_idx} batches')
print('==> Learned function:\t' + poly_desc(fc.weight.view(-1).tolist(), fc.bias))
print('==> Actual function:\t' + poly_desc(W_target.view(-1).tolist(), b_target))
