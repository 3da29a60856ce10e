"""Mistakes that pyright and mypy must both report, each on the line marked ``# error``
and on no other (tests/test_typing.py): a wrong type, a name chaingrad lacks in each public
module, a wrong call. Never run."""

from typing_extensions import assert_type

import chaingrad as torch
import chaingrad.nn as nn
import chaingrad.nn.functional as F
import chaingrad.optim as optim
from chaingrad import Value
from chaingrad.utils.data import DataLoader

x = torch.randn(4, 3)
assert_type(torch.randn(4, 3), int)  # error: a Tensor
assert_type(x.sum(), float)  # error: a Tensor
assert_type(torch.exp(x), Value)  # error: a Tensor
assert_type(Value(2.0).tanh(), float)  # error: a Value
assert_type(nn.Linear(3, 2)(x), Value)  # error: a Tensor
torch.no_such_function(x)  # error: chaingrad lacks it
nn.NoSuchLayer(3, 2)  # error: chaingrad.nn lacks it
F.no_such_loss(x, x)  # error: chaingrad.nn.functional lacks it
optimizer = optim.NoSuchOptimizer([x])  # error: chaingrad.optim lacks it
loader = torch.utils.data.NoSuchLoader(x)  # error: chaingrad.utils.data lacks it
nn.Linear(3, 2)(x, x)  # error: Linear.forward takes one input
x.transpose(0)  # error: transpose takes two dims
DataLoader(x, batch_sze=2)  # error: a misspelt argument
