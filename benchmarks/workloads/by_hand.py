"""T4-T7 by hand in plain numpy: how little time can an engine built on numpy take for the
steps of ``lectures.py``? (issue 32 point 5, issue 34 point 7: the floor under chaingrad's
rows, the "numpy (by hand)" rows of ``run.py``.)

``MlpStepT4Numpy`` is T4's. The GPT steps (``GptByHand``) take their workload's model and
optimizer as built on chaingrad (``GptIterationT5``, ``NanoGptIterationT6``,
``NanoGptTrainIterationT7``): the same initial weights, the same data, the same AdamW
hyperparameters and weight-decay groups. Its ``step`` then writes out,
in float32 numpy with no graph, what the workload's step computes: the forward, the loss,
every gradient and AdamW's update (T7: the gradients clipped to norm 1.0 first), as a careful
engineer would for shapes known in advance:

- every array the step needs is allocated once, in ``__init__``; the step writes into them
  (``out=``) and allocates only row statistics, index arrays and T5's dropout masks;
- the parameters, their gradients and AdamW's two moments are each one flat array, each
  parameter a view of it (the matrices with weight decay first), so that the update is a
  dozen passes over the whole model, taken a cache-sized chunk at a time;
- the linear layers are matmuls on 2-D views; the heads are an axis of a (B, T, 3, H, hs)
  view of one query-key-value product (T5's per-head Linears are rows of one matrix), and
  the attention's products read and write those strided views directly;
- the softmax's backward in its short form, p * (g - sum(p * g)); LayerNorm's backward in
  torch's form, rstd * (g*w - mean(g*w) - xhat * mean(g*w * xhat)); cross-entropy's as
  (softmax - onehot) / N; the embedding's scatter as a one-hot matrix's product;
- GELU (T6, T7; torch's exact, erf) through chaingrad's float32 erf, erf(a) =
  -expm1(-a S(a)), with S of degree 7 (``ERF_EXPONENT_7``, within 2 ulps of ``math.erf``)
  where chaingrad's is of degree 10, and its derivative Phi(x) + x phi(x), each a
  cache-sized chunk at a time, Phi kept from the forward.

T5's dropout (0.2) multiplies by masks of 0 and 1 / (1 - p) drawn in the model's order
(each head's attention weights, then the heads' projection, then the feed-forward output);
by default from numpy's generator, and ``keep`` can give others (a test gives chaingrad's,
so that the step is the very step chaingrad takes). ``batches`` likewise: the next (x, y)
blocks of tokens, by default drawn by numpy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from .lectures import (
    GPT,
    MLP,
    NANOGPT,
    GptIterationT5,
    MlpStepT4,
    NanoGptIterationT6,
    NanoGptTrainIterationT7,
)


class MlpStepT4Numpy:
    """T4 by hand in plain numpy, the floor any engine built on numpy stands on: the same
    arrays as ``MlpStepT4(chaingrad)`` (so the same losses for the same batches), the
    forward, the backward and the update written out with no graph, nothing allocated
    that the step can do without. ``batches``: a function giving the next batch's row
    numbers (by default numpy's own generator, which costs less than torch's; a test
    draws them from ``generator``, where ``MlpStepT4``'s would come from)."""

    def __init__(self, chaingrad: ModuleType, batch: int = MLP["batch"],
                 batches: Any = None):
        start = MlpStepT4(chaingrad, batch)
        self.batch, self.width, self.generator = batch, start.width, start.g
        self.X, self.Y = start.X.numpy(), start.Y.numpy()
        self.C, self.W1, self.b1, self.W2, self.b2 = (
            p.detach().numpy().copy() for p in start.parameters)
        rng = np.random.default_rng(2147483647)
        self.batches = batches or (lambda: rng.integers(0, len(self.X), batch))
        self.rows = np.arange(batch)
        self.lr = np.float32(-MLP["lr"])
        self.loss = None

    def step(self) -> None:
        ix = self.batches()
        contexts, Y = self.X[ix], self.Y[ix]
        flat = self.C[contexts].reshape(self.batch, self.width)
        h = np.tanh(flat @ self.W1 + self.b1)
        logits = h @ self.W2 + self.b2
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        self.loss = -np.log(probs[self.rows, Y]).mean()
        g = probs  # d(mean cross-entropy)/d(logits) = (softmax - onehot) / batch
        g[self.rows, Y] -= 1
        g /= self.batch
        gh = g @ self.W2.T
        gh *= 1 - h * h  # through tanh
        gflat = gh @ self.W1.T
        self.W2 += self.lr * (h.T @ g)
        self.b2 += self.lr * g.sum(axis=0)
        self.W1 += self.lr * (flat.T @ gh)
        self.b1 += self.lr * gh.sum(axis=0)
        np.add.at(self.C, contexts.reshape(-1), self.lr * gflat.reshape(-1, self.C.shape[1]))


# ---- the GPT steps, T5-T7 ----

CHUNK = 65_536
"""Entries of an elementwise pass taken at a time where a step makes many passes over one
array (GELU, AdamW): 256 KiB of float32, so that each pass finds its operands in cache."""

SQRT1_2 = math.sqrt(0.5)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
LN_EPS = 1e-5


ERF_EXPONENT_7 = (-1.128379225730896, -0.6366177797317505, -0.10280075669288635,
                  0.01926991529762745, -0.00011677086149575189, -0.001326634781435132,
                  0.0004109898000024259, -4.524852556642145e-05)
"""-S(a) for 0 <= a <= 4, where erf(a) = 1 - exp(-a * S(a)), as chaingrad's
``fast_kernels.ERF_EXPONENT`` but of degree 7 where that is of degree 10: six passes of Horner's
rule fewer. Fitted as that one is (least squares at 3,000 Chebyshev points of [0, 4], here on
erf's relative error, (1 - erf(a)) a / erf(a) times S's, reweighted by Lawson's iteration,
80 rounds; largest relative error 1.7e-8), then rounded to float32. Measured, computed as
``erf_into`` computes it: within 2 ulps of ``math.erf`` and of torch's on the points of
tests/tensor_engine/test_kernels.py's erf test (tests/test_benchmarks.py checks it);
within 3 on 4,200,000 points of [-6, 6], where degree 10's is also 3 (at -0.224148 both),
with 0.9% of the points more than 1 ulp off against degree 10's 0.18% (degree 8: 0.17%;
degree 6: 7 ulps)."""


def erf_into(z: np.ndarray, out: np.ndarray, a: np.ndarray) -> None:
    """erf(z) into ``out`` for a float32 chunk, as ``chaingrad.fast_kernels.erf_float32`` computes
    it (erf(|z|) = -expm1(-|z| S(|z|)), then z's sign bit by bit) with ``ERF_EXPONENT_7``,
    into arrays given: ``a`` is scratch; z, out and a distinct."""
    np.abs(z, out=a)
    np.minimum(a, 4.0, out=a)
    np.multiply(a, ERF_EXPONENT_7[-1], out=out)
    for c in ERF_EXPONENT_7[-2:0:-1]:
        out += c
        out *= a
    out += ERF_EXPONENT_7[0]
    out *= a  # -|z| S(|z|)
    np.expm1(out, out=out)  # -erf(|z|)
    bits = out.view(np.uint32)
    bits &= np.uint32(0x7FFFFFFF)
    sign = a.view(np.uint32)
    np.bitwise_and(z.view(np.uint32), np.uint32(0x80000000), out=sign)
    bits |= sign


def gelu_forward(h: np.ndarray, phi: np.ndarray, u: np.ndarray, z: np.ndarray,
                 a: np.ndarray) -> None:
    """u = h * Phi(h), Phi(h) = 0.5 * (1 + erf(h / sqrt 2)) kept in ``phi`` for the backward;
    flat arrays, a chunk at a time (``z``, ``a``: scratch of ``CHUNK`` entries)."""
    for start in range(0, h.size, CHUNK):
        part = slice(start, start + CHUNK)
        x, p = h[part], phi[part]
        n = x.size
        np.multiply(x, SQRT1_2, out=z[:n])
        erf_into(z[:n], p, a[:n])
        p += 1.0
        p *= 0.5
        np.multiply(x, p, out=u[part])


def gelu_backward(g: np.ndarray, h: np.ndarray, phi: np.ndarray, t: np.ndarray) -> None:
    """g *= Phi(h) + h * phi(h), phi the normal density exp(-h**2 / 2) / sqrt(2 pi), in
    place on flat arrays, a chunk at a time (``t``: scratch of ``CHUNK`` entries)."""
    for start in range(0, h.size, CHUNK):
        part = slice(start, start + CHUNK)
        x = h[part]
        d = t[:x.size]
        np.multiply(x, x, out=d)
        d *= -0.5
        np.exp(d, out=d)
        d *= INV_SQRT_2PI
        d *= x
        d += phi[part]
        g[part] *= d


class GptByHand:
    """The GPT step of ``work`` (a chaingrad workload of ``lectures``) in plain numpy.

    ``place(name)`` gives, for each of the model's parameter names, the key of the array
    that holds it here and the first row it fills (T5's heads are rows of one matrix).
    Keys: ``wte``, ``wpe``, ``head.w``, ``head.b``, ``lnf.w``, ``lnf.b`` and, per layer
    ``l``, ``{l}.ln1.w``/``.b``, ``{l}.qkv.w``/``.b``, ``{l}.o.w``/``.b``, ``{l}.ln2.w``/``.b``,
    ``{l}.fc.w``/``.b``, ``{l}.pr.w``/``.b`` (a weight in torch's (out, in) layout). A
    missing bias is left out; ``head.w`` missing means the output layer is ``wte``.
    """

    clip: float | None = None
    """The gradients' largest norm (``clip_grad_norm_``), or None."""

    def __init__(self, work: Any, place: Callable[[str], tuple[str, int]], gelu: bool,
                 batches: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None,
                 keep: Callable[[tuple[int, ...]], np.ndarray] | None = None):
        c = work.c
        B, T, C, H = work.batch, c["block"], c["n_embd"], c["heads"]
        self.B, self.T, self.C, self.H, self.hs = B, T, C, H, C // H
        self.V, self.layers, self.p, self.gelu = c["vocab"], c["layers"], c["dropout"], gelu
        self.N = N = B * T
        self.data = work.data.numpy().copy()
        self.rng = np.random.default_rng(1337)
        self.batches = batches or self.draw_batch
        self.keep = keep or self.draw_keep
        self.lay_out(work, place)
        group = work.optimizer.param_groups[0]
        self.lr, (self.beta1, self.beta2), self.eps = group["lr"], group["betas"], group["eps"]
        self.t = 0
        L, F = self.layers, 4 * C
        f32 = np.float32
        # the forward's arrays, kept for the backward (one per layer)
        self.x = np.empty((N, C), f32)
        self.xhat1, self.a1, self.xhat2, self.a2 = (np.empty((L, N, C), f32) for _ in range(4))
        self.rstd1, self.rstd2 = np.empty((L, N, 1), f32), np.empty((L, N, 1), f32)
        self.qkv = np.empty((L, N, 3 * C), f32)
        self.probs = np.empty((L, B, H, T, T), f32)
        self.y = np.empty((L, N, C), f32)
        self.hpre, self.u = np.empty((L, N, F), f32), np.empty((L, N, F), f32)
        self.phi = np.empty((L, N, F), f32) if gelu else None
        if self.p:
            self.dropped = np.empty((L, B, H, T, T), f32)
            self.keep_att = np.empty((L, H, B, T, T), f32)
            self.keep_o, self.keep_f = np.empty((L, N, C), f32), np.empty((L, N, C), f32)
        self.xhatf, self.af = np.empty((N, C), f32), np.empty((N, C), f32)
        self.rstdf = np.empty((N, 1), f32)
        self.logits = np.empty((N, self.V), f32)
        self.onehot = np.zeros((N, self.V), f32)
        # the backward's scratch
        self.gx, self.ga, self.gy, self.tmp = (np.empty((N, C), f32) for _ in range(4))
        self.gu = np.empty((N, F), f32)
        self.gqkv = np.empty((N, 3 * C), f32)
        self.gprobs = np.empty((B, H, T, T), f32)
        self.head_grad = np.empty((self.V, C), f32)
        self.scratch = [np.empty(CHUNK, f32) for _ in range(3)]
        self.causal = np.triu(np.full((T, T), -np.inf, f32), 1)  # 0 on and below the diagonal
        self.scale = 1.0 / math.sqrt(self.hs)
        # sums and means over an axis as products with a vector: BLAS's gemv, 2-4 times as
        # fast as numpy's reductions here (1/C, a power of 2 here: the same numbers as a mean)
        self.ones = np.ones(N, f32)
        self.mean_of_row = np.full((C, 1), 1 / C, f32)
        self.matmul: Callable[..., np.ndarray] = np.matmul  # every product of the model
        self.loss: float | None = None

    def lay_out(self, work: Any, place: Callable[[str], tuple[str, int]]) -> None:
        """The flat parameters, gradients and moments, each parameter's views of them, filled
        with the model's weights; the spans of flat entries that AdamW decays."""
        decay_of = {id(p): g["weight_decay"] for g in work.optimizer.param_groups
                    for p in g["params"]}
        found: dict[str, list[tuple[int, np.ndarray]]] = {}
        decay: dict[str, float] = {}
        self.names: dict[str, tuple[str, int, int]] = {}
        for name, p in work.model.named_parameters():
            key, row = place(name)
            value = p.detach().numpy()
            found.setdefault(key, []).append((row, value))
            decay[key] = decay_of[id(p)]
            self.names[name] = (key, row, row + value.shape[0])
        shapes = {key: (max(row + v.shape[0] for row, v in parts),) + parts[0][1].shape[1:]
                  for key, parts in found.items()}
        order = sorted(shapes, key=lambda key: -decay[key])  # stable: the decayed first
        size = sum(math.prod(shapes[key]) for key in order)
        self.params, self.grads = np.zeros(size, np.float32), np.zeros(size, np.float32)
        self.m, self.v = np.zeros(size, np.float32), np.zeros(size, np.float32)
        self.w: dict[str, np.ndarray] = {}
        self.g: dict[str, np.ndarray] = {}
        self.decayed: list[tuple[int, int, float]] = []
        start = 0
        for key in order:
            stop = start + math.prod(shapes[key])
            self.w[key] = self.params[start:stop].reshape(shapes[key])
            self.g[key] = self.grads[start:stop].reshape(shapes[key])
            if decay[key]:
                self.decayed.append((start, stop, decay[key]))
            for row, value in found[key]:
                self.w[key][row:row + value.shape[0]] = value
            start = stop

    def named_parameters(self) -> Iterator[tuple[str, np.ndarray]]:
        """(the model's name, this step's view of its value), as ``Module.named_parameters``."""
        for name, (key, start, stop) in self.names.items():
            yield name, self.w[key][start:stop]

    def draw_batch(self) -> tuple[np.ndarray, np.ndarray]:
        """Blocks of ``T`` tokens at random places, and the tokens after them."""
        starts = self.rng.integers(0, len(self.data) - self.T, self.B)
        rows = starts[:, None] + np.arange(self.T)
        return self.data[rows], self.data[rows + 1]

    def draw_keep(self, shape: tuple[int, ...]) -> np.ndarray:
        """A dropout mask: 0 with probability p, else 1 / (1 - p), in float32."""
        kept = self.rng.random(shape, dtype=np.float32) >= self.p
        return np.multiply(kept, np.float32(1 / (1 - self.p)), dtype=np.float32)

    # ---- the step ----

    def step(self) -> None:
        """One training iteration: the forward and the loss, every gradient, then (T7) the
        gradients clipped to norm ``clip`` and AdamW's update."""
        idx, targets = self.batches()
        self.forward(idx.reshape(-1), targets.reshape(-1))
        self.backward(idx.reshape(-1))
        if self.clip is not None:
            norm = math.sqrt(float(np.dot(self.grads, self.grads)))
            coefficient = self.clip / (norm + 1e-6)
            if coefficient < 1.0:
                self.grads *= np.float32(coefficient)
        self.adamw()

    def linear(self, x: np.ndarray, key: str, out: np.ndarray) -> np.ndarray:
        """x @ W.T + b into ``out`` (W, b: the layer ``key``'s weight and bias, if any)."""
        self.matmul(x, self.w[f"{key}.w"].T, out=out)
        bias = self.w.get(f"{key}.b")
        if bias is not None:
            out += bias
        return out

    def norm(self, x: np.ndarray, key: str, xhat: np.ndarray, rstd: np.ndarray,
             out: np.ndarray) -> None:
        """LayerNorm of the rows of x into ``out``, keeping xhat and 1 / std."""
        np.subtract(x, np.matmul(x, self.mean_of_row), out=xhat)
        np.multiply(xhat, xhat, out=out)
        var = np.matmul(out, self.mean_of_row)
        var += LN_EPS
        np.sqrt(var, out=var)
        np.divide(1.0, var, out=rstd)
        xhat *= rstd
        np.multiply(xhat, self.w[f"{key}.w"], out=out)
        bias = self.w.get(f"{key}.b")
        if bias is not None:
            out += bias

    def heads(self, qkv: np.ndarray, which: int) -> np.ndarray:
        """The (B, H, T, hs) view of the queries (0), keys (1) or values (2) in ``qkv``."""
        return qkv.reshape(self.B, self.T, 3, self.H, self.hs)[:, :, which].transpose(0, 2, 1, 3)

    def forward(self, idx: np.ndarray, targets: np.ndarray) -> None:
        """The model on the tokens ``idx`` and the mean cross-entropy against ``targets``
        (``loss``); what the backward reads is kept, and ``logits`` ends as the loss's
        gradient with respect to them."""
        x, B, T, C, H = self.x, self.B, self.T, self.C, self.H
        np.take(self.w["wte"], idx, axis=0, out=x)
        x.reshape(B, T, C)[...] += self.w["wpe"][:T]
        for layer in range(self.layers):
            a1 = self.a1[layer]
            self.norm(x, f"{layer}.ln1", self.xhat1[layer], self.rstd1[layer], a1)
            qkv = self.linear(a1, f"{layer}.qkv", self.qkv[layer])
            q, k, v = (self.heads(qkv, i) for i in range(3))
            probs = self.probs[layer]
            self.matmul(q, k.transpose(0, 1, 3, 2), out=probs)
            probs *= self.scale
            probs += self.causal
            probs -= probs.max(axis=-1, keepdims=True)
            np.exp(probs, out=probs)
            probs /= np.matmul(probs.reshape(-1, T), self.ones[:T]).reshape(B, H, T, 1)
            if self.p:
                for h in range(H):  # the model's order: head after head
                    self.keep_att[layer, h] = self.keep((B, T, T))
                probs = np.multiply(probs, self.keep_att[layer].transpose(1, 0, 2, 3),
                                    out=self.dropped[layer])
            y = self.y[layer]
            self.matmul(probs, v, out=y.reshape(B, T, H, self.hs).transpose(0, 2, 1, 3))
            o = self.linear(y, f"{layer}.o", self.tmp)
            if self.p:
                self.keep_o[layer] = self.keep((B, T, C)).reshape(-1, C)
                o *= self.keep_o[layer]
            x += o
            a2 = self.a2[layer]
            self.norm(x, f"{layer}.ln2", self.xhat2[layer], self.rstd2[layer], a2)
            hpre, u = self.hpre[layer], self.u[layer]
            self.linear(a2, f"{layer}.fc", hpre)
            if self.gelu:
                gelu_forward(hpre.reshape(-1), self.phi[layer].reshape(-1), u.reshape(-1),
                             *self.scratch[:2])
            else:
                np.maximum(hpre, 0.0, out=u)
            f = self.linear(u, f"{layer}.pr", self.tmp)
            if self.p:
                self.keep_f[layer] = self.keep((B, T, C)).reshape(-1, C)
                f *= self.keep_f[layer]
            x += f
        self.norm(x, "lnf", self.xhatf, self.rstdf, self.af)
        if "head.w" in self.w:
            logits = self.linear(self.af, "head", self.logits)
        else:  # tied: the token embedding is the output layer's weight
            logits = self.matmul(self.af, self.w["wte"].T, out=self.logits)
        # cross-entropy, mean over the N positions; logits become its gradient
        rows = np.arange(self.N)
        logits -= logits.max(axis=1, keepdims=True)
        picked = logits[rows, targets]
        np.exp(logits, out=logits)
        total = logits.sum(axis=1, keepdims=True)
        self.loss = float(np.mean(np.log(total[:, 0]) - picked))
        total *= self.N
        logits /= total
        logits[rows, targets] -= np.float32(1 / self.N)

    def norm_backward(self, g: np.ndarray, key: str, xhat: np.ndarray, rstd: np.ndarray,
                      gx: np.ndarray) -> None:
        """gx += LayerNorm's input gradient, for the output gradient ``g`` (overwritten);
        the weight's and the bias's gradients written."""
        tmp = self.tmp
        np.multiply(g, xhat, out=tmp)
        np.matmul(self.ones, tmp, out=self.g[f"{key}.w"])
        if f"{key}.b" in self.g:
            np.matmul(self.ones, g, out=self.g[f"{key}.b"])
        g *= self.w[f"{key}.w"]
        np.multiply(g, xhat, out=tmp)
        np.multiply(xhat, np.matmul(tmp, self.mean_of_row), out=tmp)
        g -= np.matmul(g, self.mean_of_row)
        g -= tmp
        g *= rstd
        gx += g

    def linear_backward(self, g: np.ndarray, x: np.ndarray, key: str,
                        gx: np.ndarray | None) -> None:
        """The weight's and bias's gradients of ``linear(x, key)`` for its output gradient
        g; its input's into ``gx`` (unless None)."""
        self.matmul(g.T, x, out=self.g[f"{key}.w"])
        if f"{key}.b" in self.g:
            np.matmul(self.ones, g, out=self.g[f"{key}.b"])
        if gx is not None:
            self.matmul(g, self.w[f"{key}.w"], out=gx)

    def backward(self, idx: np.ndarray) -> None:
        """Every parameter's gradient into ``grads``, the layers in reverse; ``idx``: the
        tokens, for the embedding's."""
        B, T, C, H = self.B, self.T, self.C, self.H
        g, gx, ga = self.logits, self.gx, self.ga
        tied = "head.w" not in self.w
        self.matmul(g.T, self.af, out=self.head_grad if tied else self.g["head.w"])
        if "head.b" in self.g:
            np.matmul(self.ones, g, out=self.g["head.b"])
        self.matmul(g, self.w["wte" if tied else "head.w"], out=ga)
        gx.fill(0.0)
        self.norm_backward(ga, "lnf", self.xhatf, self.rstdf, gx)
        for layer in reversed(range(self.layers)):
            # x = x + dropout(pr(act(fc(ln2(x)))))
            gf = np.multiply(gx, self.keep_f[layer], out=self.gy) if self.p else gx
            gu = self.gu
            self.linear_backward(gf, self.u[layer], f"{layer}.pr", gu)
            if self.gelu:
                gelu_backward(gu.reshape(-1), self.hpre[layer].reshape(-1),
                              self.phi[layer].reshape(-1), self.scratch[0])
            else:
                gu *= self.u[layer] > 0
            self.linear_backward(gu, self.a2[layer], f"{layer}.fc", ga)
            self.norm_backward(ga, f"{layer}.ln2", self.xhat2[layer], self.rstd2[layer], gx)
            # x = x + dropout(o(attention(qkv(ln1(x)))))
            go = np.multiply(gx, self.keep_o[layer], out=self.gy) if self.p else gx
            gy = ga
            self.linear_backward(go, self.y[layer], f"{layer}.o", gy)
            gy4 = gy.reshape(B, T, H, self.hs).transpose(0, 2, 1, 3)
            qkv, gqkv = self.qkv[layer], self.gqkv
            q, k, v = (self.heads(qkv, i) for i in range(3))
            probs = self.probs[layer]
            used = self.dropped[layer] if self.p else probs
            self.matmul(used.transpose(0, 1, 3, 2), gy4, out=self.heads(gqkv, 2))
            gp = self.gprobs
            self.matmul(gy4, v.transpose(0, 1, 3, 2), out=gp)
            if self.p:
                gp *= self.keep_att[layer].transpose(1, 0, 2, 3)
            # softmax: gs = p * (gp - sum(p * gp)), then the scale
            gp -= np.einsum("bhij,bhij->bhi", gp, probs)[..., None]
            gp *= probs
            gp *= self.scale
            self.matmul(gp, k, out=self.heads(gqkv, 0))
            self.matmul(gp.transpose(0, 1, 3, 2), q, out=self.heads(gqkv, 1))
            self.linear_backward(gqkv, self.a1[layer], f"{layer}.qkv", ga)
            self.norm_backward(ga, f"{layer}.ln1", self.xhat1[layer], self.rstd1[layer], gx)
        # the embeddings: tokens through a one-hot matrix, positions summed over the batch
        onehot = self.onehot
        onehot.fill(0.0)
        onehot[np.arange(self.N), idx] = 1.0
        self.matmul(onehot.T, gx, out=self.g["wte"])
        if tied:
            self.g["wte"] += self.head_grad
        np.matmul(self.ones[:B], gx.reshape(B, T * C), out=self.g["wpe"][:T].reshape(-1))

    def adamw(self) -> None:
        """torch's AdamW on the flat arrays: decay, the moments, the bias-corrected step."""
        self.t += 1
        lr, beta1, beta2 = self.lr, self.beta1, self.beta2
        for start, stop, decay in self.decayed:
            self.params[start:stop] *= np.float32(1 - lr * decay)
        root2 = math.sqrt(1 - beta2 ** self.t)
        step = -lr / (1 - beta1 ** self.t)
        s = self.scratch[0]
        for start in range(0, self.params.size, CHUNK):
            part = slice(start, start + CHUNK)
            p, g, m, v = self.params[part], self.grads[part], self.m[part], self.v[part]
            d = s[:p.size]
            np.subtract(g, m, out=d)  # m = m + (1 - beta1) * (g - m), torch's lerp
            d *= 1 - beta1
            m += d
            v *= beta2  # v = beta2 * v + (1 - beta2) * g * g
            np.multiply(g, g, out=d)
            d *= 1 - beta2
            v += d
            np.sqrt(v, out=d)  # p -= lr / (1 - beta1^t) * m / (sqrt(v / (1 - beta2^t)) + eps)
            d /= root2
            d += self.eps
            np.divide(m, d, out=d)
            d *= step
            p += d


def t5_place(name: str) -> tuple[str, int]:
    """Where ``gpt_model``'s parameter ``name`` sits here (``GptByHand``'s keys)."""
    fixed = {"tokens.weight": "wte", "places.weight": "wpe", "norm.weight": "lnf.w",
             "norm.bias": "lnf.b", "out.weight": "head.w", "out.bias": "head.b"}
    if name in fixed:
        return fixed[name], 0
    head = re.fullmatch(r"layers\.(\d+)\.heads\.(\d+)\.([qkv])\.weight", name)
    if head:
        layer, h, which = head.groups()
        rows = GPT["n_embd"] // GPT["heads"]
        return f"{layer}.qkv.w", "qkv".index(which) * GPT["n_embd"] + int(h) * rows
    layer, module, kind = re.fullmatch(r"layers\.(\d+)\.(\w+(?:\.\d)?)\.(\w+)", name).groups()
    key = {"norm_a": "ln1", "norm_f": "ln2", "mix": "o", "feed.0": "fc", "feed.2": "pr"}[module]
    return f"{layer}.{key}.{kind[0]}", 0


def nanogpt_place(name: str) -> tuple[str, int]:
    """Where ``nanogpt_model``'s parameter ``name`` sits here (``GptByHand``'s keys); the
    output layer is the token embedding (tied)."""
    fixed = {"transformer.wte.weight": "wte", "transformer.wpe.weight": "wpe",
             "transformer.ln_f.weight": "lnf.w", "transformer.ln_f.bias": "lnf.b"}
    if name in fixed:
        return fixed[name], 0
    layer, module, kind = re.fullmatch(r"transformer\.h\.(\d+)\.(\w+(?:\.\w+)?)\.(\w+)",
                                       name).groups()
    key = {"ln_1": "ln1", "ln_2": "ln2", "attn.c_attn": "qkv", "attn.c_proj": "o",
           "mlp.c_fc": "fc", "mlp.c_proj": "pr"}[module]
    return f"{layer}.{key}.{kind[0]}", 0


class GptIterationT5Numpy(GptByHand):
    """T5 by hand in plain numpy: ``GptIterationT5(chaingrad)``'s model, data and AdamW
    (ReLU, per-head Linears, dropout 0.2, weight decay 0.01 on every parameter)."""

    def __init__(self, chaingrad: ModuleType, batch: int = GPT["batch"], **draws: Any):
        super().__init__(GptIterationT5(chaingrad, batch), t5_place, gelu=False, **draws)


class NanoGptIterationT6Numpy(GptByHand):
    """T6 by hand in plain numpy: ``NanoGptIterationT6(chaingrad)``'s model, data and AdamW
    (GELU, the output tied to the token embedding, weight decay 0.1 on the matrices)."""

    workload: type = NanoGptIterationT6

    def __init__(self, chaingrad: ModuleType, batch: int = NANOGPT["batch"], **draws: Any):
        work = self.workload(chaingrad, batch)
        if work.c["dropout"]:
            raise ValueError(f"{type(self).__name__}: expected dropout 0 (nanoGPT's embedding "
                             f"dropout is not written out here), got {work.c['dropout']}")
        super().__init__(work, nanogpt_place, gelu=True, **draws)


class NanoGptTrainIterationT7Numpy(NanoGptIterationT6Numpy):
    """T7 by hand in plain numpy: T6's step without biases (``NANOGPT_TRAIN``), the
    gradients clipped to norm 1.0 before AdamW's update (the attention of
    ``scaled_dot_product_attention(is_causal=True)`` is T6's, written out)."""

    workload = NanoGptTrainIterationT7

    def __init__(self, chaingrad: ModuleType, batch: int = NANOGPT["batch"], **draws: Any):
        super().__init__(chaingrad, batch, **draws)
        self.clip = self.workload.config["grad_clip"]


GPT_FLOORS = {"T5": GptIterationT5Numpy, "T6": NanoGptIterationT6Numpy,
              "T7": NanoGptTrainIterationT7Numpy}
"""The numpy floor of each GPT workload of ``lectures.STEPS``."""

FLOORS: dict[str, type] = {"T4": MlpStepT4Numpy, **GPT_FLOORS}
"""The numpy floor of each workload of ``lectures.STEPS``."""


# ---- the LSTM language model's step (benchmarks/lstm_lm_step.py) ----


def scatter_rows_into(out: np.ndarray, index: np.ndarray, rows: np.ndarray) -> None:
    """out = zeros, then ``rows[k]`` added into ``out[index[k]]`` for every k, each row of
    ``out`` adding its rows in their order (``np.add.at``'s numbers): the rows ranked among
    those of the same index (a stable sort), then the rows of each rank added at once, rank 0
    first, as chaingrad's ``scatter_array_fast`` does (6x faster than ``np.add.at`` here)."""
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    position = np.arange(index.size)
    first = np.empty(index.size, bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    rank = position - np.maximum.accumulate(np.where(first, position, 0))
    out.fill(0.0)
    for r in range(int(rank.max()) + 1):
        chosen = order[rank == r]
        out[index[chosen]] += rows[chosen]  # distinct rows of out: one add each


class LstmLmByHand:
    """The step of ``benchmarks/lstm_lm_step.py`` (PyTorch's word_language_model at its small
    sizes: an embedding, an LSTM of ``layers`` layers, a decoder, the mean cross-entropy,
    ``clip_grad_norm_(clip)`` and SGD) in plain float32 numpy, no graph: the floor under
    chaingrad's row of that table.

    ``model``: the chaingrad model the benchmark builds (its ``named_parameters()``:
    ``encoder.weight``, ``rnn.weight_ih_l{k}``, ``rnn.weight_hh_l{k}``, ``rnn.bias_ih_l{k}``,
    ``rnn.bias_hh_l{k}``, ``decoder.weight``, ``decoder.bias``), whose weights it starts from.
    ``step(tokens)`` takes a (bptt + 1, batch) block of token numbers, as the benchmark's
    ``batches``; the hidden state is carried from step to step (detached), from zeros.

    As a careful engineer would write it for shapes known in advance:

    - every array is allocated once; the parameters and their gradients are each one flat
      array in the model's order and torch's layouts (so SGD is two passes over the model),
      and W_hh is also kept transposed, row-major for the forward's recurrent products
      (``(20,200) @ (200,800)``, 72 us, against 125 through a transposed view; the
      backward's ``(20,800) @ (800,200)`` wants torch's layout, 84 us against 141), copied
      after each update (the products over all steps take either layout alike);
    - a layer's input products for all bptt steps are one product, the biases added once;
      then, step after step, the recurrent product and the gates: the sigmoid of i, f, o as
      0.5 tanh(x / 2) + 0.5, so that one tanh takes all four gates (four passes over one
      contiguous block); c = f c + i g and h = o tanh(c);
    - the gates' derivatives (s (1 - s), 1 - g^2) and o (1 - tanh(c)^2) are taken in the
      forward's loop, while the step's gates are in cache (after it, over all steps at once,
      they took three times as long), so that the backward's loop over time is seven
      products of (20,200) blocks, one multiply by the derivatives and one (20,800) @
      (800,200) product a step; the weight gradients are then one product each over all
      steps;
    - the embedding's gradient by ranks (``scatter_rows_into``); sums over rows as
      products with a vector of ones.

    Left out: torch's order of float32 additions in ``clip_grad_norm_``'s norms (chaingrad
    adds each gradient's norm in torch's order, ``reduction_order.norm_in_torch_order``,
    about 2.6 ms a step here; the floor takes BLAS's ``sdot``, 0.07 ms: the clip coefficient
    may differ in its last bits).
    """

    def __init__(self, model: Any, batch: int, bptt: int, lr: float = 20.0,
                 clip: float = 0.25):
        named = [(name, p.detach().numpy()) for name, p in model.named_parameters()]
        shapes = dict((name, value.shape) for name, value in named)
        self.layers = sum(name.startswith("rnn.weight_hh_l") for name in shapes)
        self.V, self.E = shapes["encoder.weight"]
        self.H = H = shapes["rnn.weight_hh_l0"][1]
        self.B, self.T, self.N = batch, bptt, batch * bptt
        self.lr, self.clip = lr, clip
        size = sum(value.size for _, value in named)
        f32 = np.float32
        self.params, self.grads = np.empty(size, f32), np.zeros(size, f32)
        self.w: dict[str, np.ndarray] = {}
        self.g: dict[str, np.ndarray] = {}
        start = 0
        for name, value in named:
            stop = start + value.size
            self.w[name] = self.params[start:stop].reshape(value.shape)
            self.g[name] = self.grads[start:stop].reshape(value.shape)
            self.w[name][...] = value
            start = stop
        L, T, B, N = self.layers, bptt, batch, self.N
        self.whh_t = [np.empty((H, 4 * H), f32) for _ in range(L)]
        self.bias = [np.empty(4 * H, f32) for _ in range(L)]
        self.refresh()
        # sigmoid(x) = 0.5 tanh(0.5 x) + 0.5 on i, f, o; tanh on g: per column of the gates
        self.half = np.concatenate([np.full(2 * H, 0.5, f32), np.ones(H, f32),
                                    np.full(H, 0.5, f32)])
        self.shift = self.half.copy()
        self.shift[2 * H:3 * H] = 0.0
        self.slope = np.full(4 * H, 0.25, f32)  # d/dx of 0.5 tanh(x / 2) + 0.5 is
        self.slope[2 * H:3 * H] = 1.0  # (1 - tanh(x / 2)^2) / 4; of tanh(x), 1 - tanh(x)^2
        self.minus_slope = -self.slope
        # the forward's arrays, kept for the backward (one per layer)
        self.x = np.empty((N, self.E), f32)
        self.gates = np.empty((L, T, B, 4 * H), f32)  # after the sigmoids and the tanh
        self.dgate = np.empty((L, T, B, 4 * H), f32)  # their derivatives
        self.hs, self.cs = np.zeros((L, T + 1, B, H), f32), np.zeros((L, T + 1, B, H), f32)
        self.tc = np.empty((L, T, B, H), f32)  # tanh(c)
        self.q = np.empty((L, T, B, H), f32)  # o (1 - tanh(c)^2)
        self.logits = np.empty((N, self.V), f32)
        # scratch
        self.g4 = np.empty((B, 4 * H), f32)
        self.gh = np.empty((B, H), f32)
        self.dc, self.dc_next = np.empty((B, H), f32), np.empty((B, H), f32)
        self.dy = np.empty((N, H), f32)
        self.dx = np.empty((N, self.E), f32)
        self.dgates = np.empty((T, B, 4 * H), f32)
        self.ones = np.ones(max(N, self.V), f32)
        self.rows = np.arange(N)
        self.matmul: Callable[..., np.ndarray] = np.matmul  # every product of the step
        self.loss: float | None = None

    def refresh(self) -> None:
        """The transposed copies of W_hh, and b_ih + b_hh, from the parameters."""
        for k in range(self.layers):
            np.copyto(self.whh_t[k], self.w[f"rnn.weight_hh_l{k}"].T)
            np.add(self.w[f"rnn.bias_ih_l{k}"], self.w[f"rnn.bias_hh_l{k}"], out=self.bias[k])

    def step(self, tokens: np.ndarray) -> None:
        """One training step on a (bptt + 1, batch) block of tokens: the hidden state
        carried (detached), the forward and the loss, every gradient, the clip, SGD."""
        self.hs[:, 0] = self.hs[:, -1]
        self.cs[:, 0] = self.cs[:, -1]
        idx = tokens[:-1].reshape(-1)
        self.forward(idx, tokens[1:].reshape(-1))
        self.backward(idx)
        self.update()

    def forward(self, idx: np.ndarray, targets: np.ndarray) -> None:
        """The loss (``loss``), with what the backward reads kept; ``logits`` ends as the
        loss's gradient with respect to them."""
        T, H, N = self.T, self.H, self.N
        x = np.take(self.w["encoder.weight"], idx, axis=0, out=self.x)
        for k in range(self.layers):
            gates, hs, cs, tc = self.gates[k], self.hs[k], self.cs[k], self.tc[k]
            self.matmul(x, self.w[f"rnn.weight_ih_l{k}"].T, out=gates.reshape(N, 4 * H))
            gates += self.bias[k]
            whh_t, g4, gh = self.whh_t[k], self.g4, self.gh
            d, q = self.dgate[k], self.q[k]
            for t in range(T):
                self.matmul(hs[t], whh_t, out=g4)
                a = gates[t]
                a += g4
                a *= self.half
                np.tanh(a, out=a)  # tanh(x) on g, tanh(x / 2) on i, f, o
                np.multiply(a, a, out=d[t])  # their derivatives while in cache:
                d[t] *= self.minus_slope  # 1 - g^2 on g, s (1 - s) = (1 - tanh^2) / 4
                d[t] += self.slope
                a *= self.half
                a += self.shift
                i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
                c = cs[t + 1]
                np.multiply(f, cs[t], out=c)
                np.multiply(i, g, out=gh)
                c += gh
                np.tanh(c, out=tc[t])
                np.multiply(o, tc[t], out=hs[t + 1])
                np.multiply(tc[t], tc[t], out=q[t])  # o (1 - tanh(c)^2), for the backward
                np.subtract(1.0, q[t], out=q[t])
                q[t] *= o
            x = hs[1:].reshape(N, H)
        logits = self.matmul(x, self.w["decoder.weight"].T, out=self.logits)
        logits += self.w["decoder.bias"]
        # cross-entropy, mean over the N positions; logits become its gradient
        logits -= logits.max(axis=1, keepdims=True)
        picked = logits[self.rows, targets]
        np.exp(logits, out=logits)
        total = self.matmul(logits, self.ones[:self.V])
        self.loss = float(np.mean(np.log(total) - picked))
        total *= N
        logits /= total[:, None]
        logits[self.rows, targets] -= np.float32(1 / N)

    def backward(self, idx: np.ndarray) -> None:
        """Every parameter's gradient into ``grads``: the decoder, then each layer's
        backpropagation through time, last layer first, then the embedding."""
        T, B, H, N = self.T, self.B, self.H, self.N
        g = self.logits
        top = self.hs[-1, 1:].reshape(N, H)
        self.matmul(g.T, top, out=self.g["decoder.weight"])
        self.matmul(self.ones[:N], g, out=self.g["decoder.bias"])
        dy = self.matmul(g, self.w["decoder.weight"], out=self.dy).reshape(T, B, H)
        dgates, dc, dc_next = self.dgates, self.dc, self.dc_next
        for k in reversed(range(self.layers)):
            gates, cs, tc, q, d = self.gates[k], self.cs[k], self.tc[k], self.q[k], self.dgate[k]
            whh = self.w[f"rnn.weight_hh_l{k}"]
            dc_next.fill(0.0)
            for t in reversed(range(T)):
                dh, a, da = dy[t], gates[t], dgates[t]
                np.multiply(dh, tc[t], out=da[:, 3 * H:])  # do
                np.multiply(dh, q[t], out=dc)
                dc += dc_next
                np.multiply(dc, a[:, 2 * H:3 * H], out=da[:, :H])  # di = dc g
                np.multiply(dc, cs[t], out=da[:, H:2 * H])  # df = dc c_prev
                np.multiply(dc, a[:, :H], out=da[:, 2 * H:3 * H])  # dg = dc i
                np.multiply(dc, a[:, H:2 * H], out=dc_next)  # through c = f c_prev + ...
                da *= d[t]
                if t:
                    self.matmul(da, whh, out=self.gh)
                    dy[t - 1] += self.gh
            flat = dgates.reshape(N, 4 * H)
            x = self.x if k == 0 else self.hs[k - 1, 1:].reshape(N, H)
            self.matmul(flat.T, x, out=self.g[f"rnn.weight_ih_l{k}"])
            self.matmul(flat.T, self.hs[k, :-1].reshape(N, H), out=self.g[f"rnn.weight_hh_l{k}"])
            self.matmul(self.ones[:N], flat, out=self.g[f"rnn.bias_ih_l{k}"])
            self.g[f"rnn.bias_hh_l{k}"][...] = self.g[f"rnn.bias_ih_l{k}"]
            wih = self.w[f"rnn.weight_ih_l{k}"]
            if k:  # the layer below's output gradient (this layer's is used up)
                dy = self.matmul(flat, wih, out=self.dy).reshape(T, B, H)
            else:
                dx = self.matmul(flat, wih, out=self.dx)
                scatter_rows_into(self.g["encoder.weight"], idx, dx)

    def update(self) -> None:
        """clip_grad_norm_(clip): the norm of the gradients' norms, each gradient's by BLAS
        in float32; the coefficient as torch computes it; then SGD, p -= lr * g."""
        norms = np.array([np.dot(g.ravel(), g.ravel()) for g in self.g.values()], np.float32)
        np.sqrt(norms, out=norms)
        total = np.sqrt(np.dot(norms, norms))
        one = np.float32(1.0)
        coefficient = min(one / (total + np.float32(1e-6)) * np.float32(self.clip), one)
        self.grads *= np.float32(-self.lr * coefficient)
        self.params += self.grads
        self.refresh()
