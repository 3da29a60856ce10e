"""``tensor.grad_fn``: the op that made a tensor, named as torch names it (``<MulBackward0>``),
and ``next_functions``, the graph walked backward as torch's tutorials walk it.

Nothing here computes: a ``GradFn`` reads the node protocol (``_rule``, ``_prev``,
``requires_grad``) of the tensor it names, which ``Tensor.grad_fn`` hands it.

Example:
    >>> from chaingrad import Tensor
    >>> x = Tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * 2).sum()
    >>> y.grad_fn.name(), [fn.name() for fn, _ in y.grad_fn.next_functions]
    ('SumBackward0', ['MulBackward0'])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..declaration import Bound, Primitive


class GradFn:
    """``tensor.grad_fn``: the op that made a tensor, named as torch names it
    (``<MulBackward0>``), and ``next_functions``, the functions that made its inputs, to
    walk the graph backward as torch's tutorials do
    (``loss.grad_fn.next_functions[0][0]``).

    torch gives the same object at each ``y.grad_fn``; chaingrad makes one on each
    access, and two made for the same tensor are equal (``==``, and hash alike).
    """

    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:  # the Tensor it names
        self.node = node

    @property
    def rule(self) -> Primitive | Bound:
        """The op's rule: its primitive (and the parameters it was bound to)."""
        return self.node._rule

    def name(self) -> str:
        rule = self.rule
        op = rule.primitive.name if rule.primitive is not None else ""
        if op == "getitem" and rule.name == "getitem":
            base = _getitem_grad_fn(rule.params[0], self.node._prev[0].shape)
        else:
            base = (_GRAD_FN_NAMES.get(rule.name) or _GRAD_FN_NAMES.get(op)
                    or (op[:1].upper() + op[1:] if op.isidentifier() else "Function"))
        return base if base.endswith(("Backward0", "Backward1")) else base + "Backward0"

    @property
    def next_functions(self) -> tuple[tuple[GradFn | None, int], ...]:
        """For each input of the op, in order, as torch's: ``(its grad_fn, 0)`` if an op
        made it, ``(AccumulateGrad, 0)`` for a leaf that requires grad (where its ``.grad``
        is added up), ``(None, 0)`` for one that takes no gradient (a constant).

        Example:
            >>> from chaingrad import Tensor
            >>> x = Tensor([1.0, 2.0], requires_grad=True)
            >>> y = (x * 2).sum()
            >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
            ('SumBackward0', 'MulBackward0')
            >>> mul = y.grad_fn.next_functions[0][0]
            >>> mul.next_functions[0][0].variable is x, mul.next_functions[1]
            (True, (None, 0))
        """
        return tuple((GradFn.of_input(t), 0) for t in self.node._prev)

    @staticmethod
    def of_input(tensor: Any) -> GradFn | None:
        """What ``next_functions`` names for ``tensor``: its grad_fn, an AccumulateGrad
        for a leaf that requires grad, or None."""
        if not tensor.requires_grad:
            return None
        return AccumulateGrad(tensor) if tensor._rule is None else GradFn(tensor)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.node is self.node

    def __hash__(self) -> int:
        return hash((type(self), id(self.node)))

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(GradFn):
    """Where a leaf's gradient is added up (its ``.grad``): the end of each path that
    ``next_functions`` walks, as torch's; ``variable`` is the leaf."""

    __slots__ = ()

    @property
    def variable(self) -> Any:
        """The leaf whose gradient this adds up."""
        return self.node

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple[tuple[GradFn | None, int], ...]:
        """None: a leaf was made by no op."""
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


_GRAD_FN_NAMES = {
    "+": "Add", "*": "Mul", "**n": "Pow", "**": "PowBackward1", "ReLU": "Relu",
    "matmul": "Mm", "clip": "Clamp", "reshape": "View", "transpose": "Permute",
    "broadcast_to": "Expand", "concatenate": "Cat", "log_softmax":
    "LogSoftmax", "conv2d": "Convolution", "max_pool2d": "MaxPool2DWithIndices",
    "to": "ToCopy", "max": "Amax", "min": "Amin", "neg": "Neg", "mean": "Mean", "-": "Sub",
    "rsub": "RsubBackward1", "/": "Div", "log1p": "Log1P", "leaky_relu": "LeakyRelu",
    "binary_cross_entropy": "BinaryCrossEntropy", "nll_loss": "NllLoss",
    "inv": "LinalgInvEx", "det": "LinalgDet", "solve": "LinalgSolveEx", "flip": "Flip",
    "svd_U": "LinalgSvd", "svd_S": "LinalgSvd", "svd_Vh": "LinalgSvd", "slogdet": "LinalgSlogdet",
    "cholesky": "LinalgCholeskyEx", "qr_Q": "LinalgQr", "qr_R": "LinalgQr",
    "qr_R_only": "LinalgQr", "eigh_values": "LinalgEigh", "eigh_vectors": "LinalgEigh",
    "pinv": "LinalgPinv", "matrix_exp": "LinalgMatrixExp", "lu_L": "LinalgLu", "lu_U": "LinalgLu",
    "layer_norm": "NativeLayerNorm",
}


def _getitem_grad_fn(index: Any, shape: tuple[int, ...]) -> str:
    """The name torch gives the grad_fn of ``x[index]`` (``x`` of ``shape``; ``index`` as
    ``check_index`` gave it): ``Index`` for an advanced index (an array, a list, a bool);
    otherwise the last of the views torch applies from left to right, ``Select`` for an
    int, ``Slice`` for a slice, ``Unsqueeze`` for None, where a slice of a whole dimension
    within a tuple applies none; ``Alias`` where none is applied (``x[...]``, ``x[:, :]``).

    Example:
        >>> x0_to_3, x0_all = (0, slice(None, 3)), (0, slice(None))
        >>> _getitem_grad_fn(x0_to_3, (4, 5)), _getitem_grad_fn(x0_all, (4, 5))
        ('Slice', 'Select')
    """
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(part, (bool, np.bool_)) or (
            isinstance(part, np.ndarray) and (part.ndim or part.dtype == np.bool_))
           for part in parts):
        return "Index"
    dims_indexed = sum(part is not None and part is not Ellipsis for part in parts)
    dim, name = 0, "Alias"
    for part in parts:
        if part is Ellipsis:
            dim += len(shape) - dims_indexed
        elif part is None:
            name = "Unsqueeze"
        elif isinstance(part, slice):
            whole = (part.start in (None, 0) and part.step in (None, 1)
                     and (part.stop is None or part.stop >= shape[dim]))
            if not (whole and isinstance(index, tuple)):  # x[:] alone is torch's Slice
                name = "Slice"
            dim += 1
        else:  # an int, or a 0-d integer array
            name = "Select"
            dim += 1
    return name
