"""How the code of a Value graph and of a Tensor graph differ: the ``Engine`` that the code
writer (``writer.py``) is given for each.

- Values (``VALUES``): each primitive's forward on floats called by its name (``tanh``,
  which raises the ``DomainError`` of its domain), ``+`` and ``*`` written as Python's
  operators; every constant written as its repr; a gradient added to in place (``+=``).
- Tensors (``tensors()``, made on the first Tensor graph: it needs numpy): each primitive's
  forward on arrays, its ``array`` function called by its name (``np.tanh(add2)``,
  ``sum_on_arrays(x1, (0,), False)``, ``kernels.softmax_on_arrays(mul3, -1)``); gradients
  never added to in place (``g = g + ...``: one array may be the gradient of several nodes);
  a gradient that a rule gives in a broadcast shape summed back; arrays and indices read
  from the list ``K`` (or from ``args``, where they are the call's own arguments); matmul's
  formulas written for matrices only, and a transposed weight's gradient in the weight's
  layout, as the rule computes them.

Example:
    >>> VALUES.forward(FUNCTIONS["tanh"], ["add2"], []), VALUES.in_place
    ('tanh(add2)', True)
"""

from __future__ import annotations

import functools
import operator
from typing import Any

from .. import autodiff
from ..declaration import NumpyFunction, Primitive, identifier, on_floats
from ..rules import FUNCTIONS, PRIMITIVES, data, sign
from .writer import Engine, always

INFIX = {operator.add: "+", operator.mul: "*", operator.truediv: "/", operator.pow: "**"}
"""The forwards that are Python's operators, written as such: ``mul1 = x1 * w1``."""


def is_array(x: Any) -> bool:
    """Whether ``x`` is a numpy array (told by what it offers: numpy is not imported)."""
    return hasattr(x, "__array_interface__") and hasattr(x, "shape")


def engine_of(output: Any) -> Engine:
    """The engine of a graph, told by an output: a Tensor's holds an array."""
    return tensors() if is_array(output._value) else VALUES


# ---- Values ----


def float_forward(prim: Primitive, inputs: list[str], params: list[str]) -> str | None:
    """A primitive's forward on floats as code (``x1 * w1``, ``tanh(add2)``, ``pow_n(x,
    2)``); None for a user's primitive."""
    if prim.forward in INFIX:
        return f"{inputs[0]} {INFIX[prim.forward]} {inputs[1]}"
    if prim not in PRIMITIVES:
        return None
    return f"{identifier(prim.name)}({', '.join(inputs + params)})"


def _float_namespace() -> dict[str, Any]:
    """What the code of a Value graph calls: each primitive's forward on floats by its name
    (``tanh``, ``exp``, with the ``DomainError`` of its domain: ``rules.on_floats``;
    ``cos`` and ``sin`` serve the formulas too; one with parameters is the primitive itself,
    which fills in their defaults where a formula leaves them out: ``softplus(x)``),
    ``sign`` and ``data`` for the formulas, and the rules whose formulas are not exact
    (``vjp_pow``), called whole."""
    space: dict[str, Any] = {"sign": sign, "data": data}
    for prim in PRIMITIVES:
        if prim.forward not in INFIX:
            space[identifier(prim.name)] = prim if prim.defaults else \
                functools.partial(on_floats, prim) if prim.domain else prim.forward
        if not prim.exact:
            space[f"vjp_{identifier(prim.name)}"] = prim.vjp
    return space


VALUES = Engine(
    name="Values",
    namespace=_float_namespace(),
    in_place=True,
    literal=always,  # a float (or a rule's number) is its repr
    forward=float_forward,
    user_forward="{call}",
)
"""The code of a Value graph: floats."""


# ---- Tensors ----


@functools.cache
def tensors() -> Engine:
    """The code of a Tensor graph: arrays (made on first use: the Tensor engine needs numpy).

    Example:
        >>> tensors().forward(FUNCTIONS["tanh"], ["add2"], []), tensors().in_place
        ('np.tanh(add2)', False)
    """
    return Engine(
        name="Tensors",
        namespace=_array_namespace(),
        in_place=False,  # one array may be the gradient of several nodes
        literal=array_literal,
        forward=array_forward,
        user_forward="asarray({call})",
        formula_holds=matmul_of_matrices,
        layout=transposed_weight_gradient,
        gradient_shapes=gradient_shapes,
    )


def _tensor_rules() -> Any:
    """``chaingrad.tensor_engine.rules``, the Tensor's own primitives (matmul, sum, ...)."""
    from ..tensor_engine import rules  # the Tensor engine needs numpy: loaded for Tensors

    return rules


def array_literal(value: Any) -> bool:
    """Whether a constant of a Tensor graph's code is written as its repr: None, ``...``, a
    bool, a number, a string or a slice that is not a numpy scalar; an array, or a tuple
    that may hold one, is not."""
    return not is_array(value) and (value is None or value is Ellipsis or isinstance(
        value, (bool, int, float, str, slice)))


def array_forward(prim: Primitive, inputs: list[str], params: list[str]) -> str | None:
    """A primitive's forward on arrays as code: its ``array`` function called by its name
    (``forward_name``) with the inputs then the parameters, or Python's operator; None for
    a primitive declared outside chaingrad's rules (or one without a forward on arrays)."""
    forward = prim.array if prim.array is not None else prim.forward
    if forward in INFIX:
        return f"{inputs[0]} {INFIX[forward]} {inputs[1]}"
    if forward is operator.getitem:
        return f"{inputs[0]}[{params[0]}]"
    name = forward_name(forward) if prim.array is not None else ""
    if not name or "." not in name and prim not in PRIMITIVES + _tensor_rules().PRIMITIVES:
        return None  # a user's primitive: the writer names its function itself
    return f"{name}({', '.join(inputs + params)})"


def forward_name(forward: Any) -> str:
    """The name Tensor code calls a forward on arrays by: ``np.tanh`` for numpy's,
    ``kernels.softmax_on_arrays`` for the Tensor engine's kernels, else the function's own name (one
    defined beside its rule, which ``_array_namespace`` holds)."""
    if type(forward) is NumpyFunction:
        return f"np.{forward.name}"
    module = getattr(forward, "__module__", None) or ""
    if module == "numpy" or module.startswith("numpy."):
        return f"np.{forward.__name__}"
    if module.endswith(".kernels"):
        return f"kernels.{forward.__name__}"
    return forward.__name__


def matmul_of_matrices(node: Any) -> bool:
    """Whether a Tensor node's formulas hold beyond what its primitive declares: matmul's
    hold for matrices and batches of them only (a 1-D input is a row or a column to its
    rule, and a batch against one matrix is one product of rows)."""
    if node._rule.primitive is not _tensor_rules().MATMUL:
        return True
    x, y = (n._value.ndim for n in (node._prev[0], node._prev[-1]))
    return x >= 2 and y >= 2 and not (x > 2 and y == 2)


def transposed_weight_gradient(node: Any, shares: list[tuple[Any, str]], value: Any,
                               grad: Any) -> list[tuple[Any, str]]:
    """The shares of a Tensor node, with the gradient of a matmul's y that is a transposed
    matrix (``W.T``) in y's layout, as the rule computes it (``matmul_y_grad_transposed``)."""
    rules = _tensor_rules()
    x, y = node._prev[0], node._prev[-1]
    if (node._rule.primitive is rules.MATMUL and x is not y
            and rules.is_transposed_matrix(y._value)):
        transposed = f"({grad(node)}.mT @ {value(x)}).mT"
        return [(z, transposed if z is y else text) for z, text in shares]
    return shares


def _array_namespace() -> dict[str, Any]:
    """What Tensor code calls: the Tensor rules' helpers, the elementwise primitives'
    forwards on arrays for the formulas (``cos``, ``exp``), every primitive's forward on
    arrays by the name ``forward_name`` gives it, numpy as ``np``, the Tensor engine's
    kernels as ``kernels``, numpy's ``asarray`` and ``sign``, and the rules whose formulas
    are not exact."""
    rules = _tensor_rules()
    space = {name: value for name, value in vars(rules).items() if not name.startswith("_")}
    space |= {name: prim if prim.defaults else prim.on_arrays for name, prim in FUNCTIONS.items()}
    np = rules.np
    space |= {"np": np, "kernels": rules.kernels}
    for prim in PRIMITIVES + rules.PRIMITIVES:
        name = forward_name(prim.array) if prim.array is not None else ""
        if name and "." not in name and space.setdefault(name, prim.array) is not prim.array:
            raise RuntimeError(f"compile: two functions named {name} for Tensor code")
    space |= {"asarray": np.asarray, "sign": np.sign, "data": data,
              "sum_to_shape": autodiff.sum_to_shape}
    space |= {name: fn for name, fn in VALUES.namespace.items() if name.startswith("vjp_")}
    return space


def gradient_shapes(trace: Any) -> dict[tuple[int, int], tuple | None]:
    """The shape of what each node's rule gives each input, found by running the rules
    once on the traced arrays: where it is not the input's, the code sums it back."""
    import numpy as np

    shapes = {}
    for node in trace.order:
        rule = node._rule
        if rule is None:
            continue
        g = np.ones_like(node._value)
        with np.errstate(all="ignore"):
            grads = rule.vjp(tuple(x._value for x in node._prev), node._value, g)
        for k, gx in enumerate(grads):
            shapes[(id(node), k)] = None if gx is None else np.shape(gx)
    return shapes
