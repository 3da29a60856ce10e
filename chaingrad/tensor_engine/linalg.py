"""torch.linalg on Tensors: which norms, solves, inverses, determinants and
decompositions, and how does each differentiate?

The norms are composed of primitives (``abs``, ``**``, ``sum``, ``amax``, ``where``, and
``svdvals`` for 'nuc', 2 and -2), so their gradients come from those rules. The inverse,
the determinant and the solve of a linear system cannot be composed of them: each is a
primitive declared here, with its closed-form rule beside it, written with operators and
with ``matrix_inverse`` and ``solved`` (each a node on Tensors), so that the same rule
serves ``backward()`` and ``backward(create_graph=True)``:

- inv:   Y = A^-1;           dA = -Y^T g Y^T
- det:   d = det(A);         dA = g d A^-T       (Jacobi's formula; A invertible)
- solve: X = A^-1 B;         dB = A^-T g,  dA = -dB X^T

The decompositions (``svd``, ``qr``, ``eigh``, ``lu``) have several outputs, and a node has one:
each output is a primitive of its own on A, whose rule is torch's backward with that
output's gradient alone (``svd_backward(a, grad_u, None, None)``); torch's backward is
linear in the outputs' gradients, so that the rules add up to its gradient. On Tensors
those functions take the decomposition from its own nodes, so they differentiate again.
``slogdet``, ``cholesky``, ``pinv`` and ``matrix_exp`` are primitives too; ``matrix_power``,
``matrix_rank``, ``cond``, ``multi_dot``, ``cross``, ``vecdot``, ``diagonal``,
``vander``, ``tensorinv``, ``tensorsolve``, ``solve_triangular``, ``lstsq``,
``lu_factor`` and ``lu_solve`` are composed; ``inv_ex``, ``solve_ex`` and
``cholesky_ex`` are theirs with LAPACK's info, and at a failure its numbers.

Declared outside chaingrad's rules, each is compiled as a user's primitive is
(``chaingrad.primitive``): ``forward`` is its forward on arrays, and the compiled code calls
its rule (``exact=False``: the formulas name ``matrix_inverse``, ``solved`` and the
backward functions, which only this module has). ``chaingrad.linalg`` is torch.linalg's
name for these functions.

Example:
    >>> import chaingrad as torch
    >>> a = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> torch.linalg.det(a).backward()
    >>> a.grad.tolist()
    [[3.0, -1.0], [-1.0, 2.0]]
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any, NoReturn

import numpy as np

from ..declaration import define
from ..errors import LinAlgError
from ..formulas import shown
from . import dtypes
from .arrays import ARRAY_TYPES, normalize_axes, quietly
from .factories import tensor_argument
from .functions import cat, stack
from .reduction_order import norm_sum
from .tensor import Tensor, constant, make_node

# ---- the primitives ----


def inv_on_arrays(a: np.ndarray) -> np.ndarray:
    """A^-1 of each square matrix of ``a`` (numpy's LAPACK inverse, as torch's)."""
    return quietly(np.linalg.inv, a)


@define("inv", array=inv_on_arrays, forward=inv_on_arrays, exact=False, saves=("out",))
def INV(xs, out, g):
    """A^-1;  dA = -Y^T g Y^T, reusing the output Y = A^-1."""
    return (-(out.mT @ g @ out.mT),)


def det_on_arrays(a: np.ndarray) -> np.ndarray:
    """det(A) of each square matrix of ``a`` (from an LU factorisation, as torch's)."""
    return quietly(np.linalg.det, a)


@define("det", array=det_on_arrays, forward=det_on_arrays, exact=False, saves=("x out",))
def DET(xs, out, g):
    """det(A);  dA = g det(A) A^-T (Jacobi's formula, for an invertible A; at a singular
    one, torch's numbers: see ``det_backward``)."""
    if invertible(out):  # every det(A) of the batch away from 0: the general case
        return ((g * out)[..., None, None] * matrix_inverse(xs[0]).mT,)
    return (det_backward(xs[0], out, g),)


@shown()
def invertible(det_a: Any) -> bool:
    """Whether Jacobi's formula holds for every matrix of a batch (``singular_where``)."""
    return not np.any(singular_where(det_a))


def singular_where(det_a: Any) -> np.ndarray:
    """Where Jacobi's formula for det's gradient fails, as torch's two passes tell: det(A)
    is 0 in a plain ``backward()`` (arrays), below 100 eps in size under ``create_graph``
    (Tensors; see ``det_backward``)."""
    if isinstance(det_a, ARRAY_TYPES):
        return det_a == 0
    return np.abs(det_a._value) < 100 * np.finfo(det_a._value.dtype).eps


def solve_on_arrays(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B, for matrices B (..., n, k), batches broadcast."""
    return quietly(np.linalg.solve, a, b)


@define("solve", array=solve_on_arrays, forward=solve_on_arrays, exact=False, saves=("x out", "x"))
def SOLVE(xs, out, g):
    """X = A^-1 B;  dB = A^-T g (a solve with A^T), dA = -dB X^T."""
    grad_b = solved(xs[0].mT, g)
    return -(grad_b @ out.mT), grad_b


@shown()
def matrix_inverse(a: Any) -> Any:
    """A^-1: on arrays, computed; on Tensors, an ``inv`` node (for rules)."""
    if isinstance(a, ARRAY_TYPES):
        return inv_on_arrays(a)
    return a._apply(INV)


@shown()
def solved(a: Any, b: Any) -> Any:
    """X with A X = B: on arrays, computed; on Tensors, a ``solve`` node (for rules)."""
    if isinstance(a, ARRAY_TYPES):
        return solve_on_arrays(a, b)
    return a._apply(SOLVE, b)


# ---- torch.linalg's functions ----


def inv(A: Any) -> Tensor:  # noqa: N803 - torch's name
    """The inverse of a square matrix (or of each in a batch), as torch.linalg.inv;
    its gradient is ``INV``'s rule.

    Raises:
        LinAlgError: A matrix is singular (torch's words, naming its first zero pivot).

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.inv(torch.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
    """
    a = _square_matrices(A, "linalg.inv")
    return make_node(_factored("linalg.inv", a._value, inv_on_arrays), (a,), INV)


def det(A: Any) -> Tensor:  # noqa: N803 - torch's name
    """The determinant of a square matrix (or of each in a batch), as torch.linalg.det;
    its gradient is ``DET``'s rule, torch's at a singular matrix too (``det_backward``: 0
    in a plain ``backward()``, the adjugate under ``create_graph=True``).

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.det(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
        -2.0
    """
    a = _square_matrices(A, "linalg.det")
    return make_node(np.asarray(det_on_arrays(a._value), dtype=a._value.dtype), (a,), DET)


def solve(A: Any, B: Any, *, left: bool = True, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """X with A X = B (``left=False``: X A = B), as torch.linalg.solve: B is a batch of
    vectors when it is 1-D or has one dim fewer than A, with A's leading dims; batch dims
    broadcast. Its gradient is ``SOLVE``'s rule.

    Raises:
        LinAlgError: A matrix of A is singular.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.tensor([[2.0, 0.0], [0.0, 4.0]])
        >>> torch.linalg.solve(A, torch.tensor([2.0, 2.0])).tolist()
        [1.0, 0.5]
    """
    if out is not None:
        raise NotImplementedError("chaingrad.linalg has no solve(out=...) yet; write "
                                  "x = torch.linalg.solve(A, B)")
    a = _square_matrices(A, "linalg.solve")
    b = tensor_argument(B, "linalg.solve", "B")
    if b._value.dtype != a._value.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {dtypes.scalar_type(a._value.dtype)} and B of type "
                           f"{dtypes.scalar_type(b._value.dtype)} instead.")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    if not left:  # X A = B is A^T X^T = B^T
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                               "supported for left=False. In this case linalg.solve is "
                               "equivalent to B / A.squeeze(-1)")
        return solve(a.mT, b.mT).mT
    m = b.unsqueeze(-1) if vector else b
    if m.ndim < 2 or m.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({a.shape[-2]}x{a.shape[-1]} and "
                           f"{'x'.join(map(str, m.shape[-2:]))})")
    try:
        np.broadcast_shapes(a.shape[:-2], m.shape[:-2])
    except ValueError:
        raise RuntimeError(f"linalg.solve: the batch dims of A {tuple(a.shape[:-2])} and B "
                           f"{tuple(m.shape[:-2])} do not broadcast") from None
    x = make_node(_factored("linalg.solve", a._value, solve_on_arrays, m._value), (a, m),
                  SOLVE)
    return x.squeeze(-1) if vector else x


def vector_norm(x: Any, ord: float = 2, dim: Any = None,  # noqa: A002 - torch's names
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The ``ord``-norm of the entries over ``dim`` (all of them if None) as vectors, as
    torch.linalg.vector_norm: sum(|x|**ord)**(1/ord); inf the largest |x|, -inf the
    smallest, 0 the number of nonzero entries. Composed of primitives; at a zero vector the
    gradient is 0, as torch's (not the 0/0 of the formula). float32 and float64 sums are
    added in the order torch adds them, so the norm has torch's rounding to the bit
    (``tensor_engine/reduction_order.py``).

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.vector_norm(torch.tensor([3.0, -4.0])).item()
        5.0
        >>> torch.linalg.vector_norm(torch.tensor([3.0, -4.0]), ord=float("inf")).item()
        4.0
    """
    t = _floating(x, "linalg.vector_norm", dtype)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    axes = normalize_axes(dim, t.ndim, "linalg.vector_norm") if t.ndim else ()
    if ord < 0 and any(t.shape[a] == 0 for a in axes) or (t.numel() == 0 and ord < 0):
        raise RuntimeError(f"linalg.vector_norm: Expected a non-empty tensor for ord={ord}")
    magnitude = t.abs()
    if ord == math.inf:
        return magnitude.amax(axes, keepdim)
    if ord == -math.inf:
        return magnitude.amin(axes, keepdim)
    if ord == 0:
        return (magnitude != 0).to(t.dtype).sum(axes, keepdim)
    if t.numel() and all(t.shape[a] == 1 for a in axes):  # one entry each: torch's |x|
        return magnitude if keepdim else magnitude.squeeze(axes)
    # the sums added in torch's order (reduction_order.py): its float32 rounding
    layout = t._value
    if ord == 1:
        return norm_sum(t, 1, axes, keepdim, layout)
    # a zero vector: the norm of ones instead, then 0, so that its gradient is 0 as torch's
    # (the formula's is 0/0 there)
    zero = magnitude._value.sum(axis=axes, keepdims=True) == 0 if ord > 0 else np.False_
    if zero.any():
        t = t.where(~zero, 1.0)
    total = norm_sum(t, ord, axes, keepdim, layout)
    out = total.sqrt() if ord == 2 else total ** (1.0 / ord)
    return out.where(~(zero if keepdim else zero.squeeze(axis=axes)), 0.0) if zero.any() else out


def matrix_norm(A: Any, ord: Any = "fro", dim: tuple[int, int] = (-2, -1),  # noqa: N803, A002
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The ``ord``-norm of the matrices over the two dims ``dim``, as
    torch.linalg.matrix_norm: 'fro' sqrt(sum(|a|**2)); 1 (-1) the largest (smallest) sum
    of |a| down a column, inf (-inf) along a row; 'nuc' the sum of the singular values, 2
    (-2) the largest (smallest) of them (``svdvals``). Composed of primitives.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
        >>> norm = torch.linalg.matrix_norm
        >>> norm(A, ord=1).item(), norm(A, ord=float("inf")).item()
        (6.0, 7.0)
        >>> round(norm(A, ord="nuc").item(), 4), round(norm(A, ord=2).item(), 4)
        (7.0711, 5.1167)
    """
    a = _floating(A, "linalg.matrix_norm", dtype)
    if a.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions. Got {a.ndim}D.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim!r}")
    rows, cols = (normalize_axes(d, a.ndim, "linalg.matrix_norm")[0] for d in dim)
    if rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if ord == "fro":
        return vector_norm(a, 2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):  # of the singular values: their sum, the largest, the smallest
        others = tuple(d for d in range(a.ndim) if d not in (rows, cols))
        values = svdvals(a.permute(others + (rows, cols)))
        out = values.sum(-1) if ord == "nuc" else values.amax(-1) if ord == 2 else values.amin(-1)
        if not keepdim:
            return out
        kept = list(out.shape)
        for d in sorted((rows, cols)):
            kept.insert(d, 1)
        return out.reshape(kept)
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    summed, across = (rows, cols) if abs(ord) == 1 else (cols, rows)
    sums = a.abs().sum(summed, keepdim=True)
    out = sums.amax(across, keepdim=True) if ord > 0 else sums.amin(across, keepdim=True)
    return out if keepdim else out.squeeze((rows, cols))


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False,  # noqa: N803, A002
         *, dtype: Any = None) -> Tensor:
    """A vector or a matrix norm, as torch.linalg.norm: with ``dim`` an int (or one dim) a
    vector norm, two dims a matrix norm; without ``dim``, the 2-norm of all entries when
    ``ord`` is None, else the norm of the 1-D or 2-D input (``vector_norm``,
    ``matrix_norm``).

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.norm(torch.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
        5.0
    """
    a = _floating(A, "linalg.norm", dtype)
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        dim = (dim,)
    if dim is None:
        if ord is None:  # over all dims as they lie in memory, not flattened: torch's order
            return vector_norm(a, 2, None, keepdim)
        if a.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {a.ndim}D.")
        dim = tuple(range(a.ndim))
    if len(dim) == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"linalg.norm: ord={ord!r} is a matrix norm: give two dims "
                               f"(got dim={tuple(dim)})")
        return vector_norm(a, 2 if ord is None else ord, dim, keepdim)
    if len(dim) == 2:
        return matrix_norm(a, "fro" if ord is None else ord, tuple(dim), keepdim)
    raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                       f"{list(dim)}")


# ---- checks ----


def _floating(x: Any, op: str, dtype: Any) -> Tensor:
    """``x`` as a floating Tensor (in ``dtype`` if given), or torch's error."""
    t = tensor_argument(x, op)
    if dtype is not None:
        t = t.to(dtype)
    if t._value.dtype.kind != "f":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.scalar_type(t._value.dtype)}")
    return t


def _square_matrices(x: Any, op: str) -> Tensor:
    """``x`` as a floating Tensor of square matrices, or torch's error."""
    t = _floating(x, op, None)
    if t.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if t.shape[-1] != t.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{t.shape[-2]} by {t.shape[-1]} matrices")
    return t


def _factored(op: str, a: np.ndarray, forward: Any, *others: np.ndarray) -> np.ndarray:
    """``forward(a, *others)``; for a singular matrix of ``a``, torch's LinAlgError (for
    an inverse, naming the first zero on the diagonal of its LU factorisation)."""
    try:
        return forward(a, *others)
    except np.linalg.LinAlgError:
        if op not in ("linalg.inv", "linalg.inv_ex"):  # torch's words, "torch." included
            raise LinAlgError(f"torch.{op}: The solver failed because the input matrix is "
                              "singular.") from None
        batch = a.reshape((-1,) + a.shape[-2:])
        for k, matrix in enumerate(batch):
            pivot = _first_zero_pivot(matrix)
            if pivot is not None:
                where = f"(Batch element {k}): " if a.ndim > 2 else ""
                raise LinAlgError(f"{op}: {where}The diagonal element {pivot} is zero, the "
                                  "inversion could not be completed because the input matrix "
                                  "is singular.") from None
        raise


def _first_zero_pivot(matrix: np.ndarray) -> int | None:
    """The 1-based place of the first exact zero on U's diagonal in LU with partial
    pivoting (LAPACK's getrf, which reports it), or None."""
    u = matrix.astype(np.float64)
    n = u.shape[0]
    for k in range(n):
        row = k + int(np.argmax(np.abs(u[k:, k])))
        if u[row, k] == 0:
            return k + 1
        u[[k, row]] = u[[row, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return None


# ---- singular values: svd and svdvals; det at a singular matrix ----
#
# A = U diag(S) Vh has three outputs, and a node has one: U, S and Vh are each a node of A,
# with a rule of its own. torch's svd_backward is linear in the three cotangents (the
# terms of gU, gS and gVh add up), so that the three rules together give torch's gradient.

svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
"""What ``svd`` returns, as torch's ``torch.return_types.linalg_svd``."""


def svd_on_arrays(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """U, S, Vh of each matrix of ``a``, thin (k = min(m, n) columns of U, rows of Vh), S
    descending: numpy's LAPACK gesdd, torch's default on a CPU."""
    return quietly(np.linalg.svd, a, False)


def singular_u_on_arrays(a: np.ndarray) -> np.ndarray:
    """U of the thin SVD of each matrix of ``a``."""
    return svd_on_arrays(a)[0]


def singular_values_on_arrays(a: np.ndarray) -> np.ndarray:
    """S of the SVD of each matrix of ``a``, descending."""
    return svd_on_arrays(a)[1]


def singular_vh_on_arrays(a: np.ndarray) -> np.ndarray:
    """Vh of the thin SVD of each matrix of ``a``."""
    return svd_on_arrays(a)[2]


@define("svd_U", array=singular_u_on_arrays,
        forward=singular_u_on_arrays, exact=False, saves=("x",))
def SVD_U(xs, out, g):
    """U of A = U diag(S) Vh;  dA from g_U alone (``svd_backward``)."""
    return (svd_backward(xs[0], g, None, None),)


@define("svd_S",
        array=singular_values_on_arrays, forward=singular_values_on_arrays, exact=False,
        saves=("x",))
def SVD_S(xs, out, g):
    """S of A = U diag(S) Vh;  dA = U diag(g) Vh (``svd_backward``)."""
    return (svd_backward(xs[0], None, g, None),)


@define("svd_Vh", array=singular_vh_on_arrays,
        forward=singular_vh_on_arrays, exact=False, saves=("x",))
def SVD_VH(xs, out, g):
    """Vh of A = U diag(S) Vh;  dA from g_Vh alone (``svd_backward``)."""
    return (svd_backward(xs[0], None, None, g),)


@shown()
def svd_backward(a: Any, grad_u: Any, grad_s: Any, grad_vh: Any) -> Any:
    """dA from the gradients of the thin SVD's U, S and Vh (None: that output has none), as
    torch's ``svd_backward``. With E[j, k] = S_k**2 - S_j**2 (1 on the diagonal) and
    skew(X) = X - X^T:

        dA = U [(skew(U^T gU) / E) S + S (skew(Vh gVh^T) / E) + diag(gS)] Vh
             + (I - U U^T) gU S^-1 Vh        (m > n)
             + U S^-1 gVh (I - Vh^T Vh)      (m < n)

    It needs distinct singular values for gU and gVh (E divides), and nonzero ones for a
    rectangular A; gS alone needs neither. On arrays the SVD is computed again; on Tensors
    it is ``svd``'s nodes, so that the rule differentiates again.
    """
    u, s, vh = thin_svd(a)
    m, n = a.shape[-2], a.shape[-1]
    if grad_u is None and grad_vh is None:
        return u @ (grad_s[..., :, None] * vh) if m >= n else (u * grad_s[..., None, :]) @ vh
    squares = s * s
    gaps = squares[..., None, :] - squares[..., :, None] + _identity(s, s.shape[-1])
    inner: Any = 0
    if grad_u is not None:
        product = u.mT @ grad_u
        inner = (product - product.mT) / gaps * s[..., None, :]
    if grad_vh is not None:
        product = vh @ grad_vh.mT
        inner = inner + s[..., :, None] * ((product - product.mT) / gaps)
    if grad_s is not None:
        inner = inner + grad_s[..., :, None] * _identity(s, s.shape[-1])
    if m > n and grad_u is not None:
        scaled = grad_u / s[..., None, :]
        return (u @ inner + scaled - u @ (u.mT @ scaled)) @ vh
    if m < n and grad_vh is not None:
        scaled = grad_vh / s[..., :, None]
        return u @ (inner @ vh + scaled - (scaled @ vh.mT) @ vh)
    return u @ (inner @ vh) if m >= n else (u @ inner) @ vh


def thin_svd(a: Any) -> tuple[Any, Any, Any]:
    """U, S, Vh of the thin SVD: on arrays, computed; on Tensors, ``svd``'s nodes (for
    rules)."""
    if isinstance(a, ARRAY_TYPES):
        return svd_on_arrays(a)
    return tuple(svd(a, full_matrices=False))


def det_backward(a: Any, det_a: Any, g: Any) -> Any:
    """dA of det(A) for a batch that holds a singular matrix (``singular_where``), as
    torch's ``linalg_det_backward``: g det(A) A^-T (Jacobi's formula) for an invertible A.
    At a singular one torch's two passes differ, and so do these:

    - a plain ``backward()`` (arrays): torch solves with its LU factors, an exact zero
      pivot replaced by eps, so that its dA there is g det(A) = 0 times a finite matrix: 0.
      Here too: where det(A) is 0, the identity stands in for A before inverting;
    - ``backward(create_graph=True)`` (Tensors), where |det(A)| < 100 eps, gives the
      adjugate's transpose from an SVD A = U diag(S) Vh, which is well defined at a
      singular matrix: g det(U) det(Vh) U diag(prod of the S_j, j != i) Vh, made of nodes
      so that it differentiates again; elsewhere, Jacobi's formula.
    """
    n, small = a.shape[-1], singular_where(det_a)
    if isinstance(g, ARRAY_TYPES):  # where an inverse may not exist, g det(A) is 0
        a = np.where(np.reshape(small, np.shape(small) + (1, 1)), _identity(a, n), a)
        return (g * det_a)[..., None, None] * inv_on_arrays(a).mT
    if small.all():
        return _adjugate_by_svd(a, g)
    # some of a batch: each formula on its own matrices, then back in the batch's order
    flat_a, flat_g = a.reshape((-1, n, n)), g.reshape(-1)
    flat_det = det_a.reshape(-1)
    singular, regular = np.flatnonzero(small), np.flatnonzero(~small)
    parts = cat([_adjugate_by_svd(flat_a[singular], flat_g[singular]),
                 (flat_g[regular] * flat_det[regular])[:, None, None]
                 * matrix_inverse(flat_a[regular]).mT])
    return parts[np.argsort(np.concatenate([singular, regular]))].reshape(a.shape)


def _adjugate_by_svd(a: Tensor, g: Tensor) -> Tensor:
    """g adj(A)^T from the SVD A = U diag(S) Vh: g det(U) det(Vh) U diag(d) Vh, d_i the
    product of the S_j but S_i (a product that needs no division, so 0 at no cost)."""
    u, s, vh = svd(a)
    n = s.shape[-1]
    others: Any = 1
    for j, one_hot in enumerate(_identity(s, n)):
        others = others * (s[..., j:j + 1] * (1 - one_hot) + one_hot)
    scale = det(u) * det(vh) * g
    return (u * (scale[..., None] * others)[..., None, :]) @ vh


def _identity(like: Any, n: int) -> np.ndarray:
    """The n x n identity in the float dtype of ``like`` (an array or a Tensor)."""
    return np.eye(n, dtype=like.dtype if isinstance(like, ARRAY_TYPES) else like._value.dtype)


def svd(A: Any, full_matrices: bool = True, *, driver: str | None = None,  # noqa: N803
        out: Any = None) -> svd_result:
    """The singular value decomposition A = U diag(S) Vh of a matrix (or of each in a
    batch), as torch.linalg.svd: S descending; with ``full_matrices`` (torch's default) U
    is m x m and Vh n x n, else k = min(m, n) of their columns and rows. Each column of U
    (row of Vh) is defined only up to its sign, which may differ from torch's; a loss that
    does not depend on the signs has torch's gradient (``svd_backward``). With
    ``full_matrices``, the columns beyond k are a basis of what U's first k leave, and take
    no gradient, as in torch.

    Raises:
        RuntimeError: A has fewer than 2 dims, or is not floating; ``driver`` (CUDA only).

    Example:
        >>> import chaingrad as torch
        >>> U, S, Vh = torch.linalg.svd(torch.tensor([[3.0, 0.0], [0.0, -4.0]]))
        >>> S.tolist()
        [4.0, 3.0]
        >>> (U * S @ Vh).tolist()
        [[3.0, 0.0], [0.0, -4.0]]
    """
    a = _matrices(A, "linalg.svd", driver, out)
    u, s, vh = (make_node(part, (a,), rule) for part, rule in
                zip(svd_on_arrays(a._value), (SVD_U, SVD_S, SVD_VH)))
    m, n = a.shape[-2], a.shape[-1]
    if full_matrices and m > n:
        u = cat([u, constant(_complement(u._value))], -1)
    elif full_matrices and m < n:
        vh = cat([vh, constant(_complement(vh._value.mT).mT)], -2)
    return svd_result(u, s, vh)


def svdvals(A: Any, *, driver: str | None = None, out: Any = None) -> Tensor:  # noqa: N803
    """The singular values of a matrix (or of each in a batch), descending, as
    torch.linalg.svdvals; dA = U diag(g) Vh (``svd_backward``), defined for repeated and
    zero singular values too.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.svdvals(torch.tensor([[0.0, 2.0], [1.0, 0.0]])).tolist()
        [2.0, 1.0]
    """
    a = _matrices(A, "linalg.svd", driver, out)
    return make_node(singular_values_on_arrays(a._value), (a,), SVD_S)


def _complement(u: np.ndarray) -> np.ndarray:
    """Orthonormal columns spanning what the orthonormal columns of ``u`` (m x k) leave:
    the last m - k columns of the complete QR factorisation's Q."""
    return np.linalg.qr(u, mode="complete")[0][..., u.shape[-1]:]


def _matrices(x: Any, op: str, driver: Any, out: Any) -> Tensor:
    """``x`` as a floating Tensor of matrices for a decomposition, or torch's error (CPU
    has no ``driver``)."""
    if driver is not None:
        raise RuntimeError(f"torch.{op}: keyword argument `driver=` is only supported on CUDA "
                           "inputs with cuSOLVER backend.")
    if out is not None:
        raise NotImplementedError(f"chaingrad.linalg has no {op.split('.')[-1]}(out=...) yet; "
                                  "use the result it returns")
    t = _floating(x, op, None)
    if t.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    return t


# ---- everyday torch.linalg names: each a primitive where it cannot be composed ----

slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
"""What ``slogdet`` returns, as torch's ``torch.return_types.linalg_slogdet``."""

qr_result = namedtuple("linalg_qr", ["Q", "R"])
"""What ``qr`` returns, as torch's ``torch.return_types.linalg_qr``."""

eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
"""What ``eigh`` returns, as torch's ``torch.return_types.linalg_eigh``."""

lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
"""What ``lstsq`` returns, as torch's ``torch.return_types.linalg_lstsq``."""


def logabsdet_on_arrays(a: np.ndarray) -> np.ndarray:
    """log|det(A)| of each square matrix of ``a`` (from an LU factorisation, as torch's)."""
    return quietly(np.linalg.slogdet, a)[1]


@define("slogdet",
        array=logabsdet_on_arrays, forward=logabsdet_on_arrays, exact=False, saves=("x",))
def LOGABSDET(xs, out, g):
    """log|det(A)|;  dA = g A^-T."""
    return (g[..., None, None] * matrix_inverse(xs[0]).mT,)


def cholesky_on_arrays(a: np.ndarray, upper: bool = False) -> np.ndarray:
    """L lower triangular with L L^T = A, from A's lower triangle (LAPACK's potrf); with
    ``upper``, U upper triangular with U^T U = A, from A's upper triangle."""
    if upper:
        return quietly(np.linalg.cholesky, a.mT).mT
    return quietly(np.linalg.cholesky, a)


@define("cholesky", array=cholesky_on_arrays,
        forward=cholesky_on_arrays, exact=False, saves=("out",), params=("upper",))
def CHOLESKY(xs, out, g, upper):
    """L with L L^T = A (or U = L^T);  dA = L^-T Phi L^-1, Phi = tril(L^T g) with its
    diagonal halved, made symmetric (``cholesky_backward``)."""
    return (cholesky_backward(out, g, upper),)


@shown()
def cholesky_backward(factor: Any, grad: Any, upper: bool) -> Any:
    """dA of the Cholesky factor L (lower; for ``upper``, U = L^T, and its gradient are
    transposed first) for its gradient ``grad``, as torch's ``cholesky_backward`` (Murray,
    2016): with P = tril(L^T grad), dA = L^-T (P + tril(P, -1)^T) / 2 L^-1, solved with L
    twice rather than inverted."""
    lower, grad = (factor.mT, grad.mT) if upper else (factor, grad)
    product = _lower(lower.mT @ grad, 0)
    inner = (product + _lower(product, -1).mT) * 0.5
    left = solved(lower.mT, inner)  # L^-T inner
    return solved(lower.mT, left.mT).mT  # (L^-T left^T)^T = left L^-1


def _lower(x: Any, k: int) -> Any:
    """The lower triangle of x on and below diagonal ``k`` (an array or a Tensor)."""
    mask = np.tri(x.shape[-2], x.shape[-1], k, dtype=bool)
    return np.where(mask, x, 0) if isinstance(x, ARRAY_TYPES) else x.tril(k)


def qr_q_on_arrays(a: np.ndarray) -> np.ndarray:
    """Q of the reduced QR factorisation of each matrix of ``a`` (Householder's, LAPACK's)."""
    return quietly(np.linalg.qr, a)[0]


def qr_r_on_arrays(a: np.ndarray) -> np.ndarray:
    """R of the reduced QR factorisation of each matrix of ``a``."""
    return quietly(np.linalg.qr, a)[1]


@define("qr_Q", array=qr_q_on_arrays,
        forward=qr_q_on_arrays, exact=False, saves=("x",))
def QR_Q(xs, out, g):
    """Q of A = Q R;  dA from g_Q alone (``qr_backward``)."""
    return (qr_backward(xs[0], g, None),)


@define("qr_R", array=qr_r_on_arrays,
        forward=qr_r_on_arrays, exact=False, saves=("x",))
def QR_R(xs, out, g):
    """R of A = Q R;  dA from g_R alone (``qr_backward``)."""
    return (qr_backward(xs[0], None, g),)


@shown()
def qr_backward(a: Any, grad_q: Any, grad_r: Any) -> Any:
    """dA from the gradients of the reduced QR's Q and R (None: that output has none), as
    torch's ``linalg_qr_backward``: with M = g_R R^T - Q^T g_Q,

        m >= n:  dA = (Q (M' + M'^T with the diagonal halved) + g_Q) R^-T,  M' = triu(M)
        m < n:   dA = [Q tril(N - N^T) R_1^-T, 0] + Q g_R,  N = -M, R_1 = R[:, :m]

    On arrays the factorisation is computed again; on Tensors it is ``qr``'s nodes."""
    q, r = thin_qr(a)
    m, n = a.shape[-2], a.shape[-1]
    if any(grad is not None and tuple(grad.shape[-2:]) != tuple(thin.shape[-2:])
           for grad, thin in ((grad_q, q), (grad_r, r))):  # mode='complete', m > n
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    if grad_q is None:
        inner = grad_r @ r.mT
    elif grad_r is None:
        inner = -(q.mT @ grad_q)
    else:
        inner = grad_r @ r.mT - q.mT @ grad_q
    if m >= n:
        both = _upper(inner) + _upper(inner).mT
        both = both - 0.5 * both * _identity(both, n)  # the diagonal halved
        total = q @ both if grad_q is None else q @ both + grad_q
        return solved(r, total.mT).mT  # total R^-T
    skew = _lower(inner.mT - inner, 0)
    head = solved(r[..., :, :m], (q @ skew).mT).mT  # Q skew R_1^-T
    grad = _join([head, _zeros_like(r[..., :, m:])], -1)
    return grad if grad_r is None else grad + q @ grad_r


def thin_qr(a: Any) -> tuple[Any, Any]:
    """Q, R of the reduced QR: on arrays, computed; on Tensors, ``qr``'s nodes (for rules)."""
    if isinstance(a, ARRAY_TYPES):
        return quietly(np.linalg.qr, a)
    return tuple(qr(a))


@define("qr_R_only", array=qr_r_on_arrays, forward=qr_r_on_arrays,
        exact=False, saves=("",))
def QR_R_ONLY(xs, out, g):
    """R of A = Q R computed without Q (mode='r'): not differentiable, as in torch."""
    return (not_differentiable("The derivative of linalg.qr depends on Q, which is not "
                               "computed when mode='r'. Please use linalg.qr(A, "
                               "mode='reduced') if you are going to differentiate through "
                               "linalg.qr."),)


@shown()
def not_differentiable(message: str) -> NoReturn:
    """The rule of an output that torch refuses to differentiate: a RuntimeError."""
    raise RuntimeError(message)


def eigenvalues_on_arrays(a: np.ndarray, lower: bool = True) -> np.ndarray:
    """The eigenvalues, ascending, of each symmetric matrix of ``a``, from its lower (or
    upper) triangle: LAPACK's syevd, as torch's."""
    return quietly(np.linalg.eigh, a, "L" if lower else "U")[0]


def eigenvectors_on_arrays(a: np.ndarray, lower: bool = True) -> np.ndarray:
    """The eigenvectors (columns), in the order of the eigenvalues, of each symmetric
    matrix of ``a``, from its lower (or upper) triangle."""
    return quietly(np.linalg.eigh, a, "L" if lower else "U")[1]


@define("eigh_values",
        array=eigenvalues_on_arrays, forward=eigenvalues_on_arrays, exact=False,
        saves=("x",), params=("lower",))
def EIGH_VALUES(xs, out, g, lower):
    """The eigenvalues L of a symmetric A = V diag(L) V^T;  dA = V diag(g) V^T."""
    return (eigh_backward(xs[0], g, None, lower),)


@define("eigh_vectors",
        array=eigenvectors_on_arrays, forward=eigenvectors_on_arrays, exact=False,
        saves=("x",), params=("lower",))
def EIGH_VECTORS(xs, out, g, lower):
    """The eigenvectors V of a symmetric A = V diag(L) V^T;  dA from g_V alone
    (``eigh_backward``)."""
    return (eigh_backward(xs[0], None, g, lower),)


@shown()
def eigh_backward(a: Any, grad_values: Any, grad_vectors: Any, lower: bool) -> Any:
    """dA from the gradients of eigh's eigenvalues L and eigenvectors V (None: none), as
    torch's ``linalg_eig_backward`` for a symmetric A: with E[i, j] = L_j - L_i (1 on the
    diagonal), dA = V (diag(g_L) + ((V^T g_V - (V^T g_V)^T) / 2) / E) V^T. It needs
    distinct eigenvalues for g_V. On arrays the decomposition is computed again; on
    Tensors it is ``eigh``'s nodes."""
    values, vectors = _eigh_parts(a, lower)
    n = a.shape[-1]
    inner: Any = 0
    if grad_vectors is not None:
        product = vectors.mT @ grad_vectors
        gaps = values[..., None, :] - values[..., :, None] + _identity(values, n)
        inner = (product - product.mT) * 0.5 / gaps
    if grad_values is not None:
        inner = inner + grad_values[..., :, None] * _identity(values, n)
    return vectors @ (inner @ vectors.mT)


def _eigh_parts(a: Any, lower: bool) -> tuple[Any, Any]:
    """The eigenvalues and eigenvectors: on arrays, computed; on Tensors, nodes."""
    if isinstance(a, ARRAY_TYPES):
        return quietly(np.linalg.eigh, a, "L" if lower else "U")
    return tuple(eigh(a, "L" if lower else "U"))


def pinv_on_arrays(a: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """The pseudo-inverse of each matrix of ``a`` from its SVD, as torch's: 1/S for the
    singular values above max(atol, rtol * the largest), 0 for the others."""
    u, s, vh = svd_on_arrays(a)
    largest = s.max(axis=-1, keepdims=True, initial=0.0)
    keep = s > np.maximum(atol, rtol * largest)
    inverted = np.where(keep, 1 / np.where(keep, s, 1), 0).astype(s.dtype)
    return (vh.mT * inverted[..., None, :]) @ u.mT


@define("pinv", array=pinv_on_arrays,
        forward=pinv_on_arrays, exact=False, saves=("x out",), params=("atol", "rtol"))
def PINV(xs, out, g, atol, rtol):
    """A^+ (the pseudo-inverse);  dA as torch's ``pinv_backward``."""
    return (pinv_backward(xs[0], out, g),)


@shown()
def pinv_backward(a: Any, pinv_a: Any, grad: Any) -> Any:
    """dA of the pseudo-inverse P = A^+ for its gradient g, as torch's ``pinv_backward``
    (for m <= n, with K = g^T P: -(P K)^T + K P^T - A P K P^T + P^T P (g^T - K A); its
    transpose's for m > n), exact where A's rank does not change."""
    m, n = a.shape[-2], a.shape[-1]
    grad_t, pinv_t = grad.mT, pinv_a.mT
    if m <= n:
        k = grad_t @ pinv_a
        k_pinv_t = k @ pinv_t
        return (-(pinv_a @ k).mT + k_pinv_t - (a @ pinv_a) @ k_pinv_t
                + (pinv_t @ pinv_a) @ (grad_t - k @ a))
    k = pinv_a @ grad_t
    pinv_t_k = pinv_t @ k
    return (-(k @ pinv_a).mT + (grad_t - a @ k) @ pinv_a @ pinv_t + pinv_t_k
            - pinv_t_k @ pinv_a @ a)


def slogdet(A: Any, *, out: Any = None) -> slogdet_result:  # noqa: N803 - torch's name
    """The sign and the log of the absolute value of the determinant, as
    torch.linalg.slogdet: det(A) = sign * exp(logabsdet), exact where det would over- or
    underflow. d(logabsdet)/dA = A^-T; the sign takes no gradient (torch's is 0).

    Example:
        >>> import chaingrad as torch
        >>> sign, logabsdet = torch.linalg.slogdet(torch.tensor([[0.0, 2.0], [3.0, 0.0]]))
        >>> sign.item(), round(logabsdet.exp().item(), 4)
        (-1.0, 6.0)
    """
    _no_out("slogdet", out)
    a = _square_matrices(A, "linalg.slogdet")
    sign, logabsdet = quietly(np.linalg.slogdet, a._value)
    return slogdet_result(constant(np.asarray(sign, dtype=a._value.dtype)),
                          make_node(np.asarray(logabsdet, dtype=a._value.dtype), (a,),
                                    LOGABSDET))


def cholesky(A: Any, *, upper: bool = False, out: Any = None) -> Tensor:  # noqa: N803
    """The Cholesky factor of a symmetric positive-definite matrix (or of each in a
    batch), as torch.linalg.cholesky: L lower triangular with A = L L^T, read from A's lower
    triangle (``upper=True``: U upper triangular with A = U^T U, read from A's upper
    triangle). Its gradient is torch's, symmetric (``cholesky_backward``).

    Raises:
        LinAlgError: A matrix is not positive-definite (torch's words, naming the order of
            its first leading minor that is not).

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.cholesky(torch.tensor([[4.0, 2.0], [2.0, 5.0]])).tolist()
        [[2.0, 0.0], [1.0, 2.0]]
    """
    _no_out("cholesky", out)
    a = _square_matrices(A, "linalg.cholesky")
    try:
        factor = cholesky_on_arrays(a._value, bool(upper))
    except np.linalg.LinAlgError:
        read = a._value.mT if upper else a._value  # the triangle read, as a lower one
        batch = read.reshape((-1,) + tuple(a.shape[-2:]))
        for index, matrix in enumerate(batch):
            order = _first_not_positive_minor(matrix)
            if order is not None:
                where = f"(Batch element {index}): " if a.ndim > 2 else ""
                raise LinAlgError(f"linalg.cholesky: {where}The factorization could not be "
                                  "completed because the input is not positive-definite (the "
                                  f"leading minor of order {order} is not positive-definite)."
                                  ) from None
        raise
    return make_node(factor, (a,), CHOLESKY.bind(bool(upper)))


def _first_not_positive_minor(matrix: np.ndarray) -> int | None:
    """The order of the first leading minor of ``matrix`` (its lower triangle) whose
    Cholesky factorisation fails, or None."""
    for order in range(1, matrix.shape[-1] + 1):
        try:
            np.linalg.cholesky(matrix[:order, :order])
        except np.linalg.LinAlgError:
            return order
    return None


def qr(A: Any, mode: str = "reduced", *, out: Any = None) -> qr_result:  # noqa: N803
    """The QR factorisation A = Q R of a matrix (or of each in a batch), as torch.linalg.qr:
    Q with orthonormal columns, R upper triangular (Householder's, as LAPACK's, so the signs
    are torch's). ``mode``: 'reduced' (k = min(m, n) columns of Q), 'complete' (Q m x m;
    not differentiable for m > n, as in torch) or 'r' (R only, Q empty; not
    differentiable). The gradient is torch's (``qr_backward``).

    Example:
        >>> import chaingrad as torch
        >>> Q, R = torch.linalg.qr(torch.tensor([[3.0, 1.0], [4.0, 2.0]]))
        >>> [[round(r, 4) for r in row] for row in R.tolist()]
        [[-5.0, -2.2], [0.0, 0.4]]
    """
    _no_out("qr", out)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    a = _matrices(A, "linalg.qr", None, None)
    m, n = a.shape[-2], a.shape[-1]
    if mode == "r":
        r = make_node(qr_r_on_arrays(a._value), (a,), QR_R_ONLY)
        return qr_result(constant(np.zeros((0,), dtype=a._value.dtype)), r)
    q_array, r_array = quietly(np.linalg.qr, a._value)
    if mode == "complete" and m > n:  # Q m x m, R m x n: the rule refuses a g of Q's shape
        q_array, r_array = quietly(np.linalg.qr, a._value, "complete")
    return qr_result(make_node(q_array, (a,), QR_Q), make_node(r_array, (a,), QR_R))


def eigh(A: Any, UPLO: str = "L", *, out: Any = None) -> eigh_result:  # noqa: N803
    """The eigenvalues (ascending) and eigenvectors of a symmetric matrix (or of each in a
    batch), as torch.linalg.eigh, read from its lower (``UPLO='L'``) or upper triangle.
    Each eigenvector is defined only up to its sign; a loss that does not depend on the
    signs has torch's gradient (``eigh_backward``).

    Example:
        >>> import chaingrad as torch
        >>> values, vectors = torch.linalg.eigh(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
        >>> values.tolist()
        [1.0, 2.0]
    """
    _no_out("eigh", out)
    a = _symmetric(A, "linalg.eigh", UPLO)
    values, vectors = quietly(np.linalg.eigh, a._value, UPLO)
    lower = UPLO == "L"
    return eigh_result(make_node(values, (a,), EIGH_VALUES.bind(lower)),
                       make_node(vectors, (a,), EIGH_VECTORS.bind(lower)))


def eigvalsh(A: Any, UPLO: str = "L", *, out: Any = None) -> Tensor:  # noqa: N803
    """The eigenvalues (ascending) of a symmetric matrix (or of each in a batch), as
    torch.linalg.eigvalsh; dA = V diag(g) V^T.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.eigvalsh(torch.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist()
        [1.0, 3.0]
    """
    _no_out("eigvalsh", out)
    a = _symmetric(A, "linalg.eigvalsh", UPLO)
    return make_node(eigenvalues_on_arrays(a._value, UPLO == "L"), (a,),
                     EIGH_VALUES.bind(UPLO == "L"))


def _symmetric(x: Any, op: str, uplo: Any) -> Tensor:
    """``x`` as square floating matrices for eigh, with torch's check of ``UPLO``."""
    if uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return _square_matrices(x, op)


def pinv(A: Any, *, atol: float | None = None, rtol: float | None = None,  # noqa: N803
         hermitian: bool = False, out: Any = None) -> Tensor:
    """The pseudo-inverse of a matrix (or of each in a batch), as torch.linalg.pinv: from
    the SVD, 1/S for the singular values above max(atol, rtol * the largest) and 0 for the
    others; with neither given, rtol = max(m, n) * eps. ``hermitian`` is accepted and the
    SVD used (the numbers are the same to rounding). The gradient is torch's
    (``pinv_backward``).

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.pinv(torch.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.0]]
    """
    _no_out("pinv", out)
    a = tensor_argument(A, "linalg.pinv")
    if a.ndim < 2 or a._value.dtype.kind != "f":
        raise RuntimeError(f"linalg.pinv({dtypes.scalar_type(a._value.dtype)}"
                           f"{{{list(a.shape)}}}): expected a tensor with 2 or more dimensions "
                           "of float, double, cfloat or cdouble types")
    for name, value in (("atol", atol), ("rtol", rtol)):
        if value is not None and not isinstance(value, (int, float)):
            raise TypeError(f"linalg.pinv: {name} must be a number, got {value!r}")
    if rtol is None:
        rtol = (max(a.shape[-2:]) * float(np.finfo(a._value.dtype).eps)
                if atol is None or atol <= 0 else 0.0)
    rule = PINV.bind(float(atol or 0.0), float(rtol))
    return make_node(pinv_on_arrays(a._value, *rule.params), (a,), rule)


def matrix_power(A: Any, n: int, *, out: Any = None) -> Tensor:  # noqa: N803 - torch's name
    """A to the integer power ``n``, as torch.linalg.matrix_power: the identity for 0, the
    inverse's power for n < 0 (floating A only), by squaring as torch's (A A A for 3, then
    the bits of n from the lowest). Composed of matmul and inv.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.matrix_power(torch.tensor([[1.0, 1.0], [0.0, 1.0]]), 5).tolist()
        [[1.0, 5.0], [0.0, 1.0]]
    """
    _no_out("matrix_power", out)
    a = tensor_argument(A, "linalg.matrix_power")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {n!r}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {a.shape[-2] if a.ndim > 1 else 1} by {a.shape[-1]} "
                           "matrices")
    if n == 0:  # the identity, from A as torch's (a copy into it): its gradient is 0
        return a.where(np.zeros(a.shape, dtype=bool), np.eye(a.shape[-1], dtype=a._value.dtype))
    if n < 0:
        a, n = inv(a), -n
    if n <= 3:
        return a.clone() if n == 1 else a @ a if n == 2 else a @ a @ a
    square: Tensor | None = None
    result: Tensor | None = None
    while n > 0:
        bit, n = n % 2, n // 2
        square = a if square is None else square @ square
        if bit:
            result = square if result is None else result @ square
    return result


def multi_dot(tensors: Any, *, out: Any = None) -> Tensor:
    """The product of two or more matrices, as torch.linalg.multi_dot: the first may be a
    vector (a row), the last a vector (a column); multiplied in the order that costs the
    fewest multiplications (the matrix-chain order, as torch's). Composed of matmul.

    Example:
        >>> import chaingrad as torch
        >>> A, B, C = torch.ones(2, 3), torch.ones(3, 4), torch.ones(4)
        >>> torch.linalg.multi_dot([A, B, C]).tolist()
        [12.0, 12.0]
    """
    _no_out("multi_dot", out)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    mats = [tensor_argument(t, "linalg.multi_dot") for t in tensors]
    first, last = mats[0].ndim, mats[-1].ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i, t in enumerate(mats[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    row, column = first == 1, last == 1
    if row:
        mats[0] = mats[0].unsqueeze(0)
    if column:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    result = _chain(mats, _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]]),
                    0, len(mats) - 1)
    if row:
        result = result.squeeze(0)
    if column:
        result = result.squeeze(-1)
    return result


def _chain_order(sizes: list[int]) -> list[list[int]]:
    """Where to split each run i..j of the chain of matrices (sizes[i] x sizes[i + 1]) so
    that the product costs the fewest multiplications (the textbook dynamic programme)."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    """The product of mats[i..j] in the order ``split`` gives."""
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain(mats, split, i, k) @ _chain(mats, split, k + 1, j)


def cross(input: Any, other: Any, *, dim: int = -1, out: Any = None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim``, as torch.linalg.cross (the inputs
    broadcast): (a2 b3 - a3 b2, a3 b1 - a1 b3, a1 b2 - a2 b1). Composed of roll, * and -.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.cross(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    _no_out("cross", out)
    a = tensor_argument(input, "linalg.cross", "input")
    b = tensor_argument(other, "linalg.cross", "other")
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if not -a.ndim <= dim < max(a.ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-a.ndim}, {a.ndim - 1}], but got {dim})")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[dim]} and {b.shape[dim]}")
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    a, b = a.broadcast_to(shape), b.broadcast_to(shape)
    return a.roll(-1, dim) * b.roll(-2, dim) - a.roll(-2, dim) * b.roll(-1, dim)


def vecdot(x: Any, y: Any, *, dim: int = -1, out: Any = None) -> Tensor:
    """The dot product of vectors along ``dim``, as torch.linalg.vecdot (the inputs
    broadcast): sum(x * y, dim). Composed of * and sum.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.vecdot(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.ones(2)).tolist()
        [3.0, 7.0]
    """
    _no_out("vecdot", out)
    a = tensor_argument(x, "linalg.vecdot", "x")
    b = tensor_argument(y, "linalg.vecdot", "y")
    return (a * b).sum(dim)


def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The diagonal (``offset`` above it, or below for a negative one) of the matrices over
    ``dim1`` and ``dim2``, as torch.linalg.diagonal: those two dims go, and the diagonal is
    the last dim. Composed of permute and an index.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.diagonal(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), offset=1).tolist()
        [2.0]
    """
    a = tensor_argument(A, "linalg.diagonal")
    rows, cols = (normalize_axes(d, a.ndim, "linalg.diagonal")[0] for d in (dim1, dim2))
    if rows == cols:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    others = tuple(d for d in range(a.ndim) if d not in (rows, cols))
    moved = a.permute(others + (rows, cols))
    start_row, start_col = max(-offset, 0), max(offset, 0)
    length = max(min(a.shape[rows] - start_row, a.shape[cols] - start_col), 0)
    steps = np.arange(length)
    return moved[..., start_row + steps, start_col + steps]


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True,  # noqa: N803
                     unitriangular: bool = False, out: Any = None) -> Tensor:
    """X with A X = B (``left=False``: X A = B) for a triangular A, as
    torch.linalg.solve_triangular: only A's upper (``upper=True``) or lower triangle is
    read, and with ``unitriangular`` its diagonal is taken as ones. Composed of ``triu``
    or ``tril`` and the ``solve`` primitive, so that A's gradient is torch's: the solve's,
    on the triangle read.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.tensor([[2.0, 1.0], [9.0, 4.0]])
        >>> torch.linalg.solve_triangular(A, torch.tensor([[3.0], [4.0]]), upper=True).tolist()
        [[1.0], [1.0]]
    """
    _no_out("solve_triangular", out)
    a = _square_matrices(A, "linalg.solve_triangular")
    b = tensor_argument(B, "linalg.solve_triangular", "B")
    if b.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if b._value.dtype != a._value.dtype:  # torch computes in A's dtype
        b = b.to(a.dtype)
    n = a.shape[-1]
    read = a.triu(1 if unitriangular else 0) if upper else a.tril(-1 if unitriangular else 0)
    if unitriangular:
        read = read + constant(np.eye(n, dtype=a._value.dtype))
    if not left:  # X A = B is A^T X^T = B^T
        read, b = read.mT, b.mT
    if b.shape[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{'x'.join(map(str, (b.mT if not left else b).shape[-2:]))})")
    x = make_node(_factored("linalg.solve_triangular", read._value, solve_on_arrays,
                            b._value), (read, b), SOLVE)
    return x if left else x.mT


def lstsq(A: Any, B: Any, rcond: float | None = None, *,  # noqa: N803 - torch's names
          driver: str | None = None) -> lstsq_result:
    """The least-squares solution X of A X = B (the X with the smallest |A X - B|, and of
    those the smallest), as torch.linalg.lstsq on a CPU, with each driver's outputs:

    - 'gelsy' (the default): the solution and the rank;
    - 'gelsd', 'gelss': the solution, the rank, the singular values of A, and the residuals
      (the squared |A X - B| of each column of B) where m > n and every A has rank n;
    - 'gels' (for A of full rank): the solution, and the residuals where m > n.

    The other outputs are empty, as torch's. The solution is ``pinv(A) @ B`` (rounded as
    that, not as LAPACK's drivers, within float rounding of torch's where A is not close to
    rank deficient), so its gradient is torch's (which is pinv's); the residuals' gradient
    takes X as fixed, as torch's (X minimises them). B is a vector when it has one dim
    fewer than A.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
        >>> B = torch.tensor([[1.0], [2.0], [3.0]])
        >>> torch.linalg.lstsq(A, B).solution.tolist()
        [[1.0], [2.0]]
        >>> torch.linalg.lstsq(A, B, driver="gelsd").residuals.tolist()
        [9.0]
    """
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    driver = driver or "gelsy"
    a = _matrices(A, "linalg.lstsq", None, None)
    b = tensor_argument(B, "linalg.lstsq", "B")
    if b._value.dtype != a._value.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {dtypes.scalar_type(a._value.dtype)} "
                           f"and other's dtype {dtypes.scalar_type(b._value.dtype)}")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))
    m = b.unsqueeze(-1) if vector else b
    if m.ndim < 2 or m.shape[-2] != a.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    eps = float(np.finfo(a._value.dtype).eps)
    tolerance = max(a.shape[-2:]) * eps if rcond is None or rcond < 0 else float(rcond)
    inverse = make_node(pinv_on_arrays(a._value, 0.0, tolerance), (a,),
                        PINV.bind(0.0, tolerance))
    solution = inverse @ m
    s = singular_values_on_arrays(a._value)
    rank = (s > tolerance * s.max(axis=-1, keepdims=True, initial=0.0)).sum(-1)
    empty = constant(np.zeros((0,), dtype=a._value.dtype))
    residuals = empty
    rows, cols = a.shape[-2], a.shape[-1]
    if rows > cols and (driver == "gels" or driver in ("gelsd", "gelss") and
                        np.all(rank == cols)):
        residuals = ((a @ solution.detach() - m) ** 2).sum(-2)
    return lstsq_result(
        solution.squeeze(-1) if vector else solution, residuals,
        constant(np.zeros((0,), dtype=np.int64)) if driver == "gels"
        else constant(np.asarray(rank, dtype=np.int64)),
        constant(s) if driver in ("gelsd", "gelss") else empty)


def matrix_rank(A: Any, *, atol: float | None = None, rtol: float | None = None,  # noqa: N803
                hermitian: bool = False, out: Any = None) -> Tensor:
    """The number of singular values of each matrix above max(atol, rtol * the largest), as
    torch.linalg.matrix_rank (with neither given, rtol = max(m, n) * eps, as ``pinv``'s);
    an int64 tensor, which takes no gradient. ``hermitian`` is accepted and the SVD used.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.matrix_rank(torch.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
        1
    """
    _no_out("matrix_rank", out)
    a = _matrices(A, "linalg.matrix_rank", None, None)
    if rtol is None:
        rtol = (max(a.shape[-2:]) * float(np.finfo(a._value.dtype).eps)
                if atol is None or atol <= 0 else 0.0)
    values = singular_values_on_arrays(a._value)
    largest = values.max(axis=-1, keepdims=True, initial=0.0)
    return constant(np.asarray((values > np.maximum(atol or 0.0, rtol * largest)).sum(-1),
                               dtype=np.int64))


def cond(A: Any, p: Any = None, *, out: Any = None) -> Tensor:  # noqa: N803 - torch's name
    """The condition number of each matrix in the ``p`` norm, as torch.linalg.cond: for p
    None or 2 the largest singular value over the smallest (-2: the other way round), of
    any matrix; of square matrices, for 'nuc' the sum of the singular values times the sum
    of their reciprocals, for 'fro', 1, -1, inf or -inf ``matrix_norm(A, p)`` times that of
    A's inverse (inf where A is singular).
    Composed of ``svdvals``, ``matrix_norm`` and ``inv``. (torch 2.13's backward raises for
    these last ones; chaingrad's differentiates.)

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.cond(torch.tensor([[4.0, 0.0], [0.0, 2.0]])).item()
        2.0
    """
    _no_out("cond", out)
    a = _matrices(A, "linalg.cond", None, None)
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        values = svdvals(a)
        ratio = values[..., 0] / values[..., -1]
        return ratio if p is None or p == 2 else 1 / ratio
    if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {a.shape[-2]} by {a.shape[-1]} matrices")
    if p == "nuc":
        values = svdvals(a)
        return values.sum(-1) * (1 / values).sum(-1)
    singular = det_on_arrays(a._value) == 0
    if not np.any(singular):
        return matrix_norm(a, p) * matrix_norm(inv(a), p)
    eye = np.eye(a.shape[-1], dtype=a._value.dtype)
    regular = a.where(~np.reshape(singular, np.shape(singular) + (1, 1)), eye)
    return (matrix_norm(a, p) * matrix_norm(inv(regular), p)).where(~singular, math.inf)


def vander(x: Any, *, N: int | None = None) -> Tensor:  # noqa: N803 - torch's name
    """The Vandermonde matrix of the last dim of ``x``: its columns x**0, x**1, ...,
    x**(N-1) (N the size of that dim if None), as torch.linalg.vander, each power the one
    before times x (torch's cumulative product). Composed of * and stack.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.vander(torch.tensor([1.0, 2.0, 3.0])).tolist()
        [[1.0, 1.0, 1.0], [1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]
    """
    t = tensor_argument(x, "linalg.vander", "x")
    count = (t.shape[-1] if t.ndim else 1) if N is None else N
    if count <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = [constant(np.ones(t.shape, dtype=t._value.dtype)), t]
    while len(powers) < count:
        powers.append(powers[-1] * t)
    return stack(powers, -1)


def tensorinv(A: Any, ind: int = 2, *, out: Any = None) -> Tensor:  # noqa: N803
    """The inverse of A as a linear map from its last dims to its first ``ind``, as
    torch.linalg.tensorinv: ``inv`` of A reshaped to a square matrix, reshaped to
    A.shape[ind:] + A.shape[:ind]. Composed of reshape and inv.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.eye(4).reshape(4, 2, 2) * 2
        >>> torch.linalg.tensorinv(A, ind=1).shape
        chaingrad.Size([2, 2, 4])
    """
    _no_out("tensorinv", out)
    a = tensor_argument(A, "linalg.tensorinv")
    if isinstance(ind, bool) or not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(a.shape[:ind]), math.prod(a.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(a.reshape(rows, cols)).reshape(tuple(a.shape[ind:]) + tuple(a.shape[:ind]))


def tensorsolve(A: Any, B: Any, dims: Any = None, *, out: Any = None) -> Tensor:  # noqa: N803
    """X with tensordot(A, X, X.ndim) = B, as torch.linalg.tensorsolve: A's dims ``dims``
    moved to its end first; X has A's dims beyond B's. Composed of permute, reshape and
    solve.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.eye(6).reshape(2, 3, 6) * 2
        >>> torch.linalg.tensorsolve(A, torch.ones(2, 3)).tolist()
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    """
    _no_out("tensorsolve", out)
    a = tensor_argument(A, "linalg.tensorsolve")
    b = tensor_argument(B, "linalg.tensorsolve", "B")
    if dims is not None:
        moved = normalize_axes(tuple(dims), a.ndim, "linalg.tensorsolve")
        a = a.permute(tuple(d for d in range(a.ndim) if d not in moved) + moved)
    rest = tuple(a.shape[b.ndim:])
    size = math.prod(b.shape)
    if math.prod(rest) != size:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                           f"but got {math.prod(rest)} != {size}")
    return solve(a.reshape(size, size), b.reshape(size)).reshape(rest)


# ---- the matrix exponential ----

_PADE_13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
            129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
            40840800.0, 960960.0, 16380.0, 182.0, 1.0)
"""The coefficients of the [13/13] Pade approximant of exp (Higham, 2005)."""

_PADE_13_REACH = 5.371920351148152
"""The largest 1-norm at which the [13/13] approximant is exp to double precision."""


def matrix_exp_on_arrays(a: np.ndarray) -> np.ndarray:
    """exp(A) of each square matrix of ``a`` by scaling and squaring (Higham, 2005): A
    scaled by 2**-s into the reach of the [13/13] Pade approximant p(A) / q(A), which is
    then squared s times. Computed in float64 and rounded to ``a``'s dtype (torch's own
    float32 kernel rounds at each step: within float32's rounding of this)."""
    x = a.astype(np.float64)
    n = x.shape[-1]
    if x.size == 0:
        return a.copy()
    norm = np.abs(x).sum(axis=-2).max(axis=-1)  # the 1-norm of each matrix
    with np.errstate(divide="ignore"):
        steps = np.maximum(0, np.ceil(np.log2(norm / _PADE_13_REACH))).astype(int)
    x = x / (2.0 ** steps)[..., None, None]
    b = _PADE_13
    eye = np.eye(n)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    odd = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4
               + b[3] * x2 + b[1] * eye)
    even = (x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2
            + b[0] * eye)
    out = np.linalg.solve(even - odd, even + odd)
    for step in range(int(steps.max(initial=0))):
        out = np.where((step < steps)[..., None, None], out @ out, out)
    return out.astype(a.dtype)


@define("matrix_exp", array=matrix_exp_on_arrays,
        forward=matrix_exp_on_arrays, exact=False, saves=("x",))
def MATRIX_EXP(xs, out, g):
    """exp(A);  dA = the top right block of exp([[A^T, g], [0, A^T]])
    (``matrix_exp_backward``)."""
    return (matrix_exp_backward(xs[0], g),)


@shown()
def matrix_exp_backward(a: Any, grad: Any) -> Any:
    """dA of exp(A) for its gradient ``grad``, as torch's (Mathias, 1996): the top right
    n x n block of the exponential of the 2n x 2n matrix [[A^T, grad], [0, A^T]]. On
    Tensors, that exponential is a ``matrix_exp`` node, so that it differentiates again."""
    n = a.shape[-1]
    if isinstance(a, ARRAY_TYPES):
        block = np.zeros(a.shape[:-2] + (2 * n, 2 * n), dtype=a.dtype)
        block[..., :n, :n] = block[..., n:, n:] = a.mT
        block[..., :n, n:] = grad
        return matrix_exp_on_arrays(block)[..., :n, n:]
    zeros = constant(np.zeros(tuple(a.shape), dtype=a._value.dtype))
    block = cat([cat([a.mT, grad], -1), cat([zeros, a.mT], -1)], -2)
    return matrix_exp(block)[..., :n, n:]


def matrix_exp(A: Any) -> Tensor:  # noqa: N803 - torch's name
    """The matrix exponential exp(A) = I + A + A^2/2! + ... of a square matrix (or of each
    in a batch), as torch.linalg.matrix_exp (by scaling and squaring a Pade approximant,
    ``matrix_exp_on_arrays``); its gradient is torch's (``matrix_exp_backward``).

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.matrix_exp(torch.tensor([[0.0, 1.0], [0.0, 0.0]])).tolist()
        [[1.0, 1.0], [0.0, 1.0]]
    """
    a = _square_matrices(A, "linalg.matrix_exp")
    return make_node(matrix_exp_on_arrays(a._value), (a,), MATRIX_EXP)


# ---- LU: lu, lu_factor, lu_factor_ex, lu_solve ----

lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
"""What ``lu`` returns, as torch's ``torch.return_types.linalg_lu``."""

lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
"""What ``lu_factor`` returns, as torch's ``torch.return_types.linalg_lu_factor``."""

lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
"""What ``lu_factor_ex`` returns, as torch's ``torch.return_types.linalg_lu_factor_ex``."""


def lu_factor_on_arrays(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LU with partial pivoting of each matrix of ``a``, as LAPACK's getrf: the factors
    packed in one matrix (L's unit diagonal left out), the pivots (1-based: row j was
    swapped with row pivots[j]) and info (the 1-based place of the first zero pivot, 0 if
    none: the factorisation goes on past it, as LAPACK's)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = a.reshape((-1, m, n)).copy()
    count = flat.shape[0]
    pivots = np.zeros((count, k), dtype=np.int32)
    info = np.zeros(count, dtype=np.int32)
    every = np.arange(count)
    for j in range(k):
        row = j + np.argmax(np.abs(flat[:, j:, j]), axis=-1)  # the first largest, as idamax
        pivots[:, j] = row + 1
        flat[every, j], flat[every, row] = flat[every, row], flat[every, j].copy()
        pivot = flat[:, j, j]
        zero = pivot == 0  # then the column below is 0 too: nothing to scale or subtract
        info = np.where((info == 0) & zero, j + 1, info).astype(np.int32)
        flat[:, j + 1:, j] /= np.where(zero, 1, pivot)[:, None]
        flat[:, j + 1:, j + 1:] -= flat[:, j + 1:, j, None] * flat[:, j, None, j + 1:]
    batch = a.shape[:-2]
    return flat.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def permutation_of(pivots: np.ndarray, m: int) -> np.ndarray:
    """The row order ``perm`` that the pivots' swaps give (A[perm] = L U), per matrix."""
    order = np.broadcast_to(np.arange(m), pivots.shape[:-1] + (m,)).copy()
    flat, swaps = order.reshape((-1, m)), pivots.reshape((-1, pivots.shape[-1])) - 1
    every = np.arange(flat.shape[0])
    for j in range(swaps.shape[-1]):
        row = swaps[:, j]
        flat[every, j], flat[every, row] = flat[every, row], flat[every, j].copy()
    return order


def lu_parts_on_arrays(a: np.ndarray, factored: tuple | None = None,
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P, L (m x k, unit lower triangular) and U (k x n, upper triangular) with A = P L U
    (from ``factored``, ``lu_factor_on_arrays(a)``, if given)."""
    packed, pivots, _ = lu_factor_on_arrays(a) if factored is None else factored
    m, n = a.shape[-2:]
    k = min(m, n)
    lower = np.tril(packed[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    upper = np.triu(packed[..., :k, :])
    perm = permutation_of(pivots, m)
    p = (perm[..., :, None] == np.arange(m)).astype(a.dtype).mT  # P[perm[i], i] = 1
    return p, lower, upper


def lu_l_on_arrays(a: np.ndarray) -> np.ndarray:
    """L of A = P L U."""
    return lu_parts_on_arrays(a)[1]


def lu_u_on_arrays(a: np.ndarray) -> np.ndarray:
    """U of A = P L U."""
    return lu_parts_on_arrays(a)[2]


@define("lu_L", array=lu_l_on_arrays,
        forward=lu_l_on_arrays, exact=False, saves=("x",))
def LU_L(xs, out, g):
    """L of A = P L U;  dA from g_L alone (``lu_backward``)."""
    return (lu_backward(xs[0], g, None),)


@define("lu_U", array=lu_u_on_arrays,
        forward=lu_u_on_arrays, exact=False, saves=("x",))
def LU_U(xs, out, g):
    """U of A = P L U;  dA from g_U alone (``lu_backward``)."""
    return (lu_backward(xs[0], None, g),)


@shown()
def lu_backward(a: Any, grad_l: Any, grad_u: Any) -> Any:
    """dA from the gradients of L and U of A = P L U (None: none), as torch's
    ``linalg_lu_backward``; for a square A,
    dA = P L^-T (tril(L^T g_L, -1) + triu(g_U U^T)) U^-T,
    and for a wide (tall) one, the same on its first m columns (rows) with the rest of U
    (L) added. On arrays the factorisation is computed again; on Tensors it is ``lu``'s
    nodes."""
    p, lower, upper = _lu_parts(a)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    if m == n:
        inner: Any = 0
        if grad_l is not None:
            inner = _lower(lower.mT @ grad_l, -1)
        if grad_u is not None:
            inner = inner + _upper(grad_u @ upper.mT)
        grad = _solve_lower_t_unit(lower, _solve_right_upper_t(upper, inner))
        return p @ grad
    if m < n:  # wide: L is m x m, U = [U1 U2]
        inner = 0
        if grad_l is not None:
            inner = lower.mT @ grad_l
        if grad_u is not None:
            inner = inner - _upper(grad_u) @ upper.mT
        head = _solve_right_upper_t(upper[..., :, :k], _lower(inner, -1))
        if grad_u is not None:
            grad = _join([head + _upper(grad_u[..., :, :k]), grad_u[..., :, k:]], -1)
        else:
            grad = _join([head, _zeros_like(upper[..., :, k:])], -1)
        return p @ _solve_lower_t_unit(lower, grad)
    inner = 0  # tall: U is n x n, L = [L1; L2]
    if grad_u is not None:
        inner = grad_u @ upper.mT
    if grad_l is not None:
        inner = inner - lower.mT @ _lower(grad_l, -1)
    head = _solve_lower_t_unit(lower[..., :k, :], _upper(inner))
    if grad_l is not None:
        grad = _join([head + _lower(grad_l[..., :k, :], -1), grad_l[..., k:, :]], -2)
    else:
        grad = _join([head, _zeros_like(lower[..., k:, :])], -2)
    return p @ _solve_right_upper_t(upper, grad)


def _lu_parts(a: Any) -> tuple[Any, Any, Any]:
    """P, L, U: on arrays, computed; on Tensors, ``lu``'s nodes (for rules)."""
    if isinstance(a, ARRAY_TYPES):
        return lu_parts_on_arrays(a)
    return tuple(lu(a))


def _upper(x: Any) -> Any:
    """The upper triangle of x, its diagonal included (an array or a Tensor)."""
    return x - _lower(x, -1)


def _solve_lower_t_unit(lower: Any, b: Any) -> Any:
    """L^-T b for a unit lower triangular L (on Tensors, a ``solve`` node)."""
    return solved(lower.mT, b)


def _solve_right_upper_t(upper: Any, b: Any) -> Any:
    """b U^-T for an upper triangular U: (U^-1 b^T)^T."""
    return solved(upper, b.mT).mT


def _join(parts: list, axis: int) -> Any:
    """Arrays or Tensors side by side along ``axis``."""
    if isinstance(parts[0], ARRAY_TYPES):
        return np.concatenate(parts, axis)
    return cat(parts, axis)


def _zeros_like(x: Any) -> Any:
    """Zeros of x's shape and dtype (an array, or a constant Tensor)."""
    if isinstance(x, ARRAY_TYPES):
        return np.zeros_like(x)
    return constant(np.zeros(tuple(x.shape), dtype=x._value.dtype))


def lu(A: Any, *, pivot: bool = True, out: Any = None) -> lu_result:  # noqa: N803
    """The LU factorisation with partial pivoting A = P L U of a matrix (or of each in a
    batch), as torch.linalg.lu: P a permutation matrix (no gradient), L m x k lower
    triangular with a unit diagonal, U k x n upper triangular, k = min(m, n); the pivots
    are LAPACK getrf's (the largest in each column, the first of equals). Its gradient is
    torch's (``lu_backward``).

    Example:
        >>> import chaingrad as torch
        >>> P, L, U = torch.linalg.lu(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> P.tolist(), L.tolist()
        ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.3333333432674408, 1.0]])
    """
    _no_out("lu", out)
    return _lu_nodes(_lu_input(A, "linalg.lu", pivot))[0]


def _lu_nodes(a: Tensor) -> tuple[lu_result, np.ndarray, np.ndarray]:
    """``lu``'s P, L and U of ``a``, with the pivots and info of the one factorisation."""
    factored = lu_factor_on_arrays(a._value)
    p, lower, upper = lu_parts_on_arrays(a._value, factored)
    nodes = lu_result(constant(p), make_node(lower, (a,), LU_L), make_node(upper, (a,), LU_U))
    return nodes, factored[1], factored[2]


def lu_factor(A: Any, *, pivot: bool = True, out: Any = None) -> lu_factor_result:  # noqa: N803
    """The LU factorisation as torch.linalg.lu_factor: L (but its unit diagonal) and U
    packed in one m x n matrix, and the pivots (int32, 1-based, LAPACK's), for
    ``lu_solve``. Composed of ``lu``'s L and U, so that its gradient is torch's.

    Raises:
        RuntimeError: A matrix has a zero pivot (torch's words; ``lu_factor_ex`` reports it
            in ``info`` instead).

    Example:
        >>> import chaingrad as torch
        >>> LU, pivots = torch.linalg.lu_factor(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> pivots.tolist()
        [2, 2]
    """
    _no_out("lu_factor", out)
    packed, pivots, _ = _lu_factor(A, pivot, "linalg.lu_factor", True)
    return lu_factor_result(packed, pivots)


def lu_factor_ex(A: Any, *, pivot: bool = True, check_errors: bool = False,  # noqa: N803
                 out: Any = None) -> lu_factor_ex_result:
    """``lu_factor`` and its ``info``, as torch.linalg.lu_factor_ex: the 1-based place of
    the first zero pivot of each matrix (0 if none), where the factorisation went on.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.lu_factor_ex(torch.tensor([[1.0, 2.0], [2.0, 4.0]])).info.item()
        2
    """
    _no_out("lu_factor_ex", out)
    return lu_factor_ex_result(*_lu_factor(A, pivot, "linalg.lu_factor_ex", check_errors))


def _lu_factor(x: Any, pivot: bool, op: str, check_errors: bool) -> tuple:
    """The packed factors (a node made of ``lu``'s L and U), the pivots and the info;
    with ``check_errors``, torch's error at a zero pivot."""
    a = _lu_input(x, op, pivot)
    (_, lower, upper), pivots, info = _lu_nodes(a)
    if check_errors and np.any(info > 0):
        k = int(info[info > 0].flat[0])
        where = f"(Batch element {int(np.flatnonzero(info)[0])}): " if info.ndim else ""
        raise RuntimeError(f"torch.{op}: {where}U[{k},{k}] is zero and using it on lu_solve "
                           "would result in a division by zero. If you still want to perform "
                           "the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    strictly_lower = lower.tril(-1)
    if k < n:
        strictly_lower = cat([strictly_lower, _zeros_like(upper[..., :, k:])], -1)
    if k < m:
        upper = cat([upper, constant(np.zeros(tuple(upper.shape[:-2]) + (m - k, n),
                                              dtype=a._value.dtype))], -2)
    return strictly_lower + upper, constant(pivots), constant(info)


def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True,  # noqa: N803
             adjoint: bool = False, out: Any = None) -> Tensor:
    """X with A X = B from A's ``lu_factor``, as torch.linalg.lu_solve (``adjoint``: with
    A^T; ``left=False``: X A = B). Composed of ``solve_triangular`` on the packed factors
    (each solve reads its own triangle) and a reordering of rows, so that the gradients
    of LU and B are torch's.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> LU, pivots = torch.linalg.lu_factor(A)
        >>> X = torch.linalg.lu_solve(LU, pivots, torch.tensor([[5.0], [11.0]]))
        >>> [[round(x, 6) for x in row] for row in X.tolist()]
        [[1.0], [2.0]]
    """
    _no_out("lu_solve", out)
    packed = _square_matrices(LU, "linalg.lu_solve")
    b = tensor_argument(B, "linalg.lu_solve", "B")
    order = np.asarray(tensor_argument(pivots, "linalg.lu_solve", "pivots")._value)
    if b.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if not left:  # X A = B is A^T X^T = B^T, X A^T = B is A X^T = B^T
        return lu_solve(packed, pivots, b.mT, adjoint=not adjoint).mT
    n = packed.shape[-1]
    perm = permutation_of(order.astype(np.int64), n)
    batch = np.broadcast_shapes(tuple(packed.shape[:-2]), tuple(b.shape[:-2]), perm.shape[:-1])
    b = b.broadcast_to(batch + tuple(b.shape[-2:]))
    if not adjoint:  # A = P L U: X = U^-1 L^-1 (P^T B), P^T B = B[perm]
        rows = b.gather(-2, _row_index(perm, b))
        lower = solve_triangular(packed, rows, upper=False, unitriangular=True)
        return solve_triangular(packed, lower, upper=True)
    upper_t = solve_triangular(packed.mT, b, upper=False)  # U^T W = B
    lower_t = solve_triangular(packed.mT, upper_t, upper=True, unitriangular=True)
    return lower_t.gather(-2, _row_index(np.argsort(perm, axis=-1), lower_t))  # X = P V


def _row_index(perm: np.ndarray, b: Tensor) -> np.ndarray:
    """``perm`` (rows, per matrix) as a gather index over the rows of ``b``."""
    shape = np.broadcast_shapes(perm.shape[:-1], tuple(b.shape[:-2])) + tuple(b.shape[-2:])
    return np.broadcast_to(perm[..., :, None], shape)


def _lu_input(x: Any, op: str, pivot: bool) -> Tensor:
    """``x`` as floating matrices for an LU factorisation (with pivoting: torch's CPU has
    no other)."""
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    return _matrices(x, op, None, None)


# ---- the _ex variants: the result and LAPACK's info, no error unless asked ----

inv_ex_result = namedtuple("linalg_inv_ex", ["inverse", "info"])
"""What ``inv_ex`` returns, as torch's ``torch.return_types.linalg_inv_ex``."""

solve_ex_result = namedtuple("linalg_solve_ex", ["result", "info"])
"""What ``solve_ex`` returns, as torch's ``torch.return_types.linalg_solve_ex``."""

cholesky_ex_result = namedtuple("linalg_cholesky_ex", ["L", "info"])
"""What ``cholesky_ex`` returns, as torch's ``torch.return_types.linalg_cholesky_ex``."""


def lu_substitution(packed: np.ndarray, pivots: np.ndarray, b: np.ndarray,
                    adjoint: bool = False) -> np.ndarray:
    """X with P L U X = B (``adjoint``: (P L U)^T X = B) from ``lu_factor_on_arrays``'
    factors, by substitution in LAPACK getrs' order (no step skipped): at a zero pivot, the
    infs and nans that torch's ``_ex`` functions give for a singular matrix."""
    n = packed.shape[-1]
    perm = permutation_of(pivots.astype(np.int64), n)
    rows = np.broadcast_to(perm[..., :, None], b.shape)
    with np.errstate(all="ignore"):
        if adjoint:  # U^T w = B, then L^T v = w, then X = P v (X[perm] = v)
            x = b.copy()
            for i in range(n):
                done = (packed[..., :i, i:i + 1] * x[..., :i, :]).sum(-2, keepdims=True)
                x[..., i:i + 1, :] = (x[..., i:i + 1, :] - done) / packed[..., i:i + 1, i:i + 1]
            for i in range(n - 1, -1, -1):
                done = (packed[..., i + 1:, i:i + 1] * x[..., i + 1:, :]).sum(-2, keepdims=True)
                x[..., i:i + 1, :] -= done
            out = np.empty_like(x)
            np.put_along_axis(out, rows, x, -2)
            return out
        x = np.take_along_axis(b, rows, -2).copy()
        for k in range(n):  # L y = P^T B, L unit lower triangular
            x[..., k + 1:, :] -= x[..., k:k + 1, :] * packed[..., k + 1:, k:k + 1]
        for k in range(n - 1, -1, -1):  # U X = y
            x[..., k:k + 1, :] /= packed[..., k:k + 1, k:k + 1]
            x[..., :k, :] -= x[..., k:k + 1, :] * packed[..., :k, k:k + 1]
    return x


def inv_ex(A: Any, *, check_errors: bool = False, out: Any = None) -> inv_ex_result:  # noqa: N803
    """The inverse and LAPACK's info, as torch.linalg.inv_ex: info is 0, or for a singular
    matrix the 1-based place of its first zero pivot, where the inverse holds the infs and
    nans of the substitution (``lu_substitution``, as torch's) and takes no gradient; no
    error unless ``check_errors``.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.inv_ex(torch.tensor([[1.0, 2.0], [2.0, 4.0]])).info.item()
        2
    """
    _no_out("inv_ex", out)
    a = _square_matrices(A, "linalg.inv_ex")
    packed, pivots, info = lu_factor_on_arrays(a._value)
    singular = info > 0
    if not np.any(singular):
        return inv_ex_result(inv(a), constant(info))
    if check_errors:
        _factored("linalg.inv_ex", a._value, inv_on_arrays)
    eye = np.eye(a.shape[-1], dtype=a._value.dtype)
    mask = np.reshape(singular, singular.shape + (1, 1))
    garbage = lu_substitution(packed, pivots, np.broadcast_to(eye, a.shape))
    return inv_ex_result(inv(a.where(~mask, eye)).where(~mask, garbage), constant(info))


def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False,  # noqa: N803
             out: Any = None) -> solve_ex_result:
    """``solve`` and LAPACK's info, as torch.linalg.solve_ex: info is 0, or for a singular
    matrix the 1-based place of its first zero pivot, where the result holds the infs and
    nans of the substitution and takes no gradient (left=True: as torch's); no error
    unless ``check_errors``.

    Example:
        >>> import chaingrad as torch
        >>> A = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
        >>> torch.linalg.solve_ex(A, torch.ones(2)).info.item()
        2
    """
    _no_out("solve_ex", out)
    a = _square_matrices(A, "linalg.solve_ex")
    packed, pivots, info = lu_factor_on_arrays(a._value)
    singular = info > 0
    if not np.any(singular):
        return solve_ex_result(solve(a, B, left=left), constant(info))
    if check_errors:
        where = f"(Batch element {int(np.flatnonzero(singular)[0])}): " if a.ndim > 2 else ""
        raise LinAlgError(f"torch.linalg.solve_ex: {where}The solver failed because the input "
                          "matrix is singular.")
    eye = np.eye(a.shape[-1], dtype=a._value.dtype)
    mask = np.reshape(singular, singular.shape + (1, 1))
    result = solve(a.where(~mask, eye), B, left=left)
    b = tensor_argument(B, "linalg.solve_ex", "B")._value
    vector = result.ndim == a.ndim - 1
    if left:
        rhs = b[..., None] if vector else b
        shape = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
        garbage = lu_substitution(np.broadcast_to(packed, shape + packed.shape[-2:]),
                                  np.broadcast_to(pivots, shape + pivots.shape[-1:]),
                                  np.broadcast_to(rhs, shape + rhs.shape[-2:]))
    else:  # X A = B is A^T X^T = B^T
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        garbage = lu_substitution(np.broadcast_to(packed, shape + packed.shape[-2:]),
                                  np.broadcast_to(pivots, shape + pivots.shape[-1:]),
                                  np.broadcast_to(b.mT, shape + b.mT.shape[-2:]), True).mT
    if vector:
        garbage, mask = garbage[..., 0], mask[..., 0]
    return solve_ex_result(result.where(~mask, garbage), constant(info))


def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False,  # noqa: N803
                out: Any = None) -> cholesky_ex_result:
    """``cholesky`` and LAPACK's info, as torch.linalg.cholesky_ex: info is 0, or the order
    of the first leading minor that is not positive-definite, where L holds what LAPACK's
    potf2 leaves (the columns before it, at it the value that is not positive, after it A's
    own lower triangle) and takes no gradient; no error unless ``check_errors``.

    Example:
        >>> import chaingrad as torch
        >>> torch.linalg.cholesky_ex(torch.tensor([[1.0, 2.0], [2.0, 1.0]])).L.tolist()
        [[1.0, 0.0], [2.0, -3.0]]
    """
    _no_out("cholesky_ex", out)
    a = _square_matrices(A, "linalg.cholesky_ex")
    partial, info = _cholesky_columns(a._value.mT if upper else a._value)
    failed = info > 0
    if not np.any(failed):
        return cholesky_ex_result(cholesky(a, upper=upper), constant(info))
    if check_errors:  # cholesky's error, naming the minor, in cholesky_ex's name
        try:
            cholesky(a, upper=upper)
        except LinAlgError as error:
            raise LinAlgError(str(error).replace("linalg.cholesky:", "linalg.cholesky_ex:",
                                                 1)) from None
    eye = np.eye(a.shape[-1], dtype=a._value.dtype)
    mask = np.reshape(failed, failed.shape + (1, 1))
    factor = cholesky(a.where(~mask, eye), upper=upper)
    return cholesky_ex_result(factor.where(~mask, partial.mT if upper else partial),
                              constant(info))


def _cholesky_columns(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Cholesky factor column by column, as LAPACK's potf2, stopping each matrix at its
    first diagonal that is not positive (left there, not rooted; A's lower triangle after
    it), and info (that column, 1-based, or 0)."""
    n = a.shape[-1]
    lower = np.tril(a).astype(a.dtype)
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            going = info == 0
            d = lower[..., j, j] - (lower[..., j, :j] ** 2).sum(-1)
            bad = going & ~(d > 0)
            info = np.where(bad, j + 1, info).astype(np.int32)
            going = going & ~bad
            root = np.sqrt(np.where(going, d, 1))
            lower[..., j, j] = np.where(going, root, np.where(bad, d, lower[..., j, j]))
            done = (lower[..., j + 1:, :j] @ lower[..., j, :j, None])[..., 0]
            below = (lower[..., j + 1:, j] - done) / root[..., None]
            lower[..., j + 1:, j] = np.where(going[..., None], below, lower[..., j + 1:, j])
    return lower, info


def _no_out(op: str, out: Any) -> None:
    """chaingrad's error for torch's ``out=`` where it is not there yet."""
    if out is not None:
        raise NotImplementedError(f"chaingrad.linalg has no {op}(out=...) yet; use the "
                                  "result it returns")
