"""torch.linalg's names: ``chaingrad.linalg.norm``, ``vector_norm``, ``matrix_norm``,
``solve``, ``inv``, ``det``, ``svd``, ``svdvals``, ``slogdet``, ``cholesky``, ``qr``,
``eigh``, ``eigvalsh``, ``pinv``, ``lstsq``, ``solve_triangular``, ``matrix_power``,
``matrix_rank``, ``matrix_exp``, ``lu``, ``lu_factor``, ``lu_factor_ex``, ``lu_solve``,
``cond``, ``multi_dot``, ``cross``, ``vecdot``, ``diagonal``, ``vander``, ``tensorinv``,
``tensorsolve``, ``matmul`` (``chaingrad.matmul`` itself) and ``LinAlgError``, as ``import
chaingrad as torch`` code writes them (``torch.linalg.inv(A)``).

Each is defined in ``chaingrad/tensor_engine/linalg.py``, beside the primitives it makes
(inv, det, solve, svd's three outputs, ..., each with its rule), but ``matmul``
(``chaingrad/tensor_engine/maths.py``); this module only names them where torch does. A
torch.linalg name chaingrad lacks raises an error naming it.

Example:
    >>> import chaingrad as torch
    >>> torch.linalg.solve(torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([4.0, 3.0]))
    tensor([2., 3.])
"""

from . import torch_names
from .errors import LinAlgError
from .tensor_engine.linalg import (
    cholesky,
    cholesky_ex,
    cond,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    matrix_exp,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
    vector_norm,
)
from .tensor_engine.maths import matmul  # torch.linalg.matmul is torch.matmul

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
           "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]

__getattr__ = torch_names.submodules_on_use("chaingrad.linalg", (), torch_names.LINALG)
