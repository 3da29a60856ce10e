"""A micrograd-style program, as a user writes it against chaingrad: Values, a neuron, an
MLP trained by hand; each assert_type states what an editor should infer, and
tests/test_typing.py has pyright and mypy check it."""

import random

from typing_extensions import assert_type

import chaingrad
from chaingrad import Value
from chaingrad.nn import MLP, Neuron
from chaingrad.optim import SGD

# an expression, its gradients
a = Value(2.0, label="a")
b = Value(-3.0)
c = (a * b + 1).tanh()
assert_type(c, Value)
assert_type(a.relu(), Value)
assert_type(a.exp().log() / 2 - b, Value)
assert_type(a**2, Value)
assert_type(2 * a, Value)
assert_type(a.leaky_relu(0.2), Value)
c.backward()
assert_type(a.grad, float)
assert_type(c.data, float)
(da,) = chaingrad.grad(a**3, [a])
print(f"c = {c.data:.4f}, dc/da = {a.grad:.4f}, d(a**3)/da = {da}")

# micrograd's model, trained by hand
random.seed(0)
model = MLP(2, [8, 8, 1])
xs = [[2.0, 3.0], [3.0, -1.0], [0.5, 1.0]]
ys = [1.0, -1.0, 1.0]
loss = Value(0.0)
for _ in range(5):
    preds = [model(x) for x in xs]  # a list of Values, or one Value when the last width is 1
    assert_type(preds[0], Value | list[Value])
    scores = [p for p in preds if isinstance(p, Value)]
    loss = sum(((s - y) ** 2 for s, y in zip(scores, ys)), Value(0.0))
    assert_type(loss, Value)
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        assert_type(p, Value)
        p.data -= 0.05 * p.grad

# a neuron, and an optimizer on Values
n = Neuron(2, activation="tanh")
assert_type(n([1.0, 2.0]), Value)
optimizer = SGD(n.parameters(), lr=0.1)
out = n([1.0, 2.0])
out.backward()
optimizer.step()
print(f"loss {loss.data:.4f}, neuron {n([1.0, 2.0]).data:.4f}")
