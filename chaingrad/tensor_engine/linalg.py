"""torch.linalg on Tensors: which norms, solves, inverses and determinants, and how does
each differentiate?

The norms are composed of primitives (``abs``, ``**``, ``sum``, ``amax``, ``where``), so
their gradients come from those rules. The inverse, the determinant and the solve of a
linear system cannot be composed of them: each is a primitive declared here, with its
closed-form rule beside it, written with operators and with ``matrix_inverse`` and ``solved``
(each a node on Tensors), so that the same rule serves ``backward()`` and
``backward(create_graph=True)``:

- inv:   Y = A^-1;           dA = -Y^T g Y^T
- det:   d = det(A);         dA = g d A^-T       (Jacobi's formula; A invertible)
- solve: X = A^-1 B;         dB = A^-T g,  dA = -dB X^T

Declared outside chaingrad's rules, each is compiled as a user's primitive is
(``chaingrad.primitive``): ``forward`` is its forward on arrays, and the compiled code calls
its rule (``exact=False``: the formulas name ``matrix_inverse`` and ``solved``, which only this
module has). ``chaingrad.linalg`` is torch.linalg's name for these functions.

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
from typing import Any

import numpy as np

from ..declaration import define
from ..errors import LinAlgError
from . import dtypes
from .arrays import ARRAY_TYPES, normalize_axes, quietly
from .factories import tensor_argument
from .functions import cat
from .tensor import Tensor, constant, make_node

# ---- the primitives ----


def inv_on_arrays(a: np.ndarray) -> np.ndarray:
    """A^-1 of each square matrix of ``a`` (numpy's LAPACK inverse, as torch's)."""
    return quietly(np.linalg.inv, a)


@define("inv", ("-(out.data.mT @ out.grad @ out.data.mT)",), array=inv_on_arrays,
        forward=inv_on_arrays, exact=False, saves=("out",))
def INV(xs, out, g):
    """A^-1;  dA = -Y^T g Y^T, reusing the output Y = A^-1."""
    return (-(out.mT @ g @ out.mT),)


def det_on_arrays(a: np.ndarray) -> np.ndarray:
    """det(A) of each square matrix of ``a`` (from an LU factorisation, as torch's)."""
    return quietly(np.linalg.det, a)


@define("det", ("(out.grad * out.data)[..., None, None] * matrix_inverse(x.data).mT",),
        array=det_on_arrays, forward=det_on_arrays, exact=False, saves=("x out",))
def DET(xs, out, g):
    """det(A);  dA = g det(A) A^-T (Jacobi's formula, for an invertible A; at a singular
    one, torch's numbers: see ``det_backward``)."""
    return (det_backward(xs[0], out, g),)


def solve_on_arrays(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X with A X = B, for matrices B (..., n, k), batches broadcast."""
    return quietly(np.linalg.solve, a, b)


@define("solve", ("-(solved(x.data.mT, out.grad) @ out.data.mT)", "solved(x.data.mT, out.grad)"),
        array=solve_on_arrays, forward=solve_on_arrays, exact=False, saves=("x out", "x"))
def SOLVE(xs, out, g):
    """X = A^-1 B;  dB = A^-T g (a solve with A^T), dA = -dB X^T."""
    grad_b = solved(xs[0].mT, g)
    return -(grad_b @ out.mT), grad_b


def matrix_inverse(a: Any) -> Any:
    """A^-1: on arrays, computed; on Tensors, an ``inv`` node (for rules)."""
    if isinstance(a, ARRAY_TYPES):
        return inv_on_arrays(a)
    return a._apply(INV)


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
    its gradient is ``DET``'s rule (for an invertible matrix: at a singular one it is
    not a number, where torch's, from an SVD, is).

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
    gradient is 0, as torch's (not the 0/0 of the formula).

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
    if ord == 1:
        return magnitude.sum(axes, keepdim)
    # a zero vector: the norm of ones instead, then 0, so that its gradient is 0 as torch's
    # (the formula's is 0/0 there)
    zero = magnitude._value.sum(axis=axes, keepdims=True) == 0 if ord > 0 else np.False_
    if zero.any():
        t = t.where(~zero, 1.0)
    total = (t * t if ord == 2 else t.abs() ** ord).sum(axes, keepdim)
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
        if ord is None:
            return vector_norm(a.reshape(-1), 2, 0, False).reshape((1,) * a.ndim if keepdim
                                                                   else ())
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
        if op != "linalg.inv":  # torch's words, its "torch." included
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


@define("svd_U", ("svd_backward(x.data, out.grad, None, None)",), array=singular_u_on_arrays,
        forward=singular_u_on_arrays, exact=False, saves=("x",))
def SVD_U(xs, out, g):
    """U of A = U diag(S) Vh;  dA from g_U alone (``svd_backward``)."""
    return (svd_backward(xs[0], g, None, None),)


@define("svd_S", ("svd_backward(x.data, None, out.grad, None)",),
        array=singular_values_on_arrays, forward=singular_values_on_arrays, exact=False,
        saves=("x",))
def SVD_S(xs, out, g):
    """S of A = U diag(S) Vh;  dA = U diag(g) Vh (``svd_backward``)."""
    return (svd_backward(xs[0], None, g, None),)


@define("svd_Vh", ("svd_backward(x.data, None, None, out.grad)",), array=singular_vh_on_arrays,
        forward=singular_vh_on_arrays, exact=False, saves=("x",))
def SVD_VH(xs, out, g):
    """Vh of A = U diag(S) Vh;  dA from g_Vh alone (``svd_backward``)."""
    return (svd_backward(xs[0], None, None, g),)


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
    """dA of det(A), as torch's ``linalg_det_backward``: g det(A) A^-T (Jacobi's formula)
    for an invertible A. At a singular one torch's two passes differ, and so do these:

    - a plain ``backward()`` (arrays) solves with the LU factors, an exact zero pivot
      replaced by eps; det(A) is 0 there, so dA is 0;
    - ``backward(create_graph=True)`` (Tensors), where |det(A)| < 100 eps, gives the
      adjugate's transpose from an SVD A = U diag(S) Vh, which is well defined at a
      singular matrix: g det(U) det(Vh) U diag(prod of the S_j, j != i) Vh, made of nodes
      so that it differentiates again; elsewhere, Jacobi's formula.
    """
    n = a.shape[-1]
    if isinstance(g, ARRAY_TYPES):
        singular = det_a == 0  # where an inverse may not exist, and g det(A) is 0
        if np.any(singular):
            a = np.where(np.reshape(singular, np.shape(singular) + (1, 1)), _identity(a, n), a)
        return (g * det_a)[..., None, None] * inv_on_arrays(a).mT
    small = np.abs(det_a._value) < 100 * np.finfo(det_a._value.dtype).eps
    if not small.any():
        return (g * det_a)[..., None, None] * matrix_inverse(a).mT
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
