"""How ``explain`` writes a Tensor op's backward step: formulas with shapes filled in.

Each op has one template per input, filled twice: with names (``{x}`` -> ``W.data``,
``{g}`` -> ``out.grad``) and with shapes (``{x}`` -> ``(5, 3)``).
"""

from __future__ import annotations

from typing import Any

# Formulas for Tensor ops, one template per input (a str: the same for every input), filled
# twice: with names ({x} -> "W.data", {g} -> "out.grad") and with shapes ({x} -> "(5, 3)").
# {x} {y} are inputs 0 / 1, {xT} {yT} their matrix transposes, {o} out.data, {g} out.grad,
# {xshape} input 0's shape and {k} the input's position.
TENSOR_FORMULAS: dict[str, tuple[str, ...] | str] = {
    "+": ("{g}", "{g}"),
    "*": ("{y} * {g}", "{x} * {g}"),
    "**n": ("{n} * {x}**{n1} * {g}",),
    "**": ("{y} * {x}**({y} - 1) * {g}", "{o} * log({x}) * {g}"),
    "matmul": ("{g} @ {yT}", "{xT} @ {g}"),
    "ReLU": ("({o} > 0) * {g}",),
    "tanh": ("(1 - {o}**2) * {g}",),
    "sigmoid": ("{o} * (1 - {o}) * {g}",),
    "exp": ("{o} * {g}",),
    "log": ("{g} / {x}",),
    "sqrt": ("{g} / (2 * {o})",),
    "abs": ("sign({x}) * {g}",),
    "clip": ("(min <= {x} <= max) * {g}",),
    "sum": ("expand({g}, {xshape})",),  # out.grad repeated along the summed axes
    "max": ("expand({g}, {xshape}) * ({x} == max) / ties",),
    "min": ("expand({g}, {xshape}) * ({x} == min) / ties",),
    "softmax": ("{o} * ({g} - sum({g} * {o}, axis))",),
    "log_softmax": ("{g} - exp({o}) * sum({g}, axis)",),
    "reshape": ("{g}.reshape({xshape})",),
    "transpose": ("{g}.transpose(inverse axes)",),
    "transpose 2-D": ("{g}.T",),
    "broadcast_to": ("{g}",),
    "getitem": ("scatter({g}, index, {xshape})",),
    "scatter": ("{g}[index]",),
    "concatenate": "{g}[input {k}'s slice along axis]",
    "stack": "{g}[input {k}'s index along axis]",
    "where": ("where(cond, {g}, 0)", "where(cond, 0, {g})"),
    "pad": ("{g} without the padding",),
    "unfold": ("fold({g})",),
    "fold": ("unfold({g})",),
    "max_pool2d": ("{g} at each window's first largest entry (summed where windows overlap)",),
    "unpool": ("{g} read back at each window's first largest entry",),
}
TENSOR_GENERIC = "rule(..., {g})[{k}]"  # any other op: the k-th gradient its rule returns


def tensor_formula(node: Any, k: int, names: dict, raw_shape: tuple) -> tuple[str, str]:
    """The ``k``-th input's update as a formula, and the same with shapes filled in."""
    op, prev = node._op, node._prev
    out_shape = str(node.data.shape)
    by_name: dict[str, Any] = {"g": "out.grad", "o": "out.data", "k": k}
    by_shape: dict[str, Any] = {"g": out_shape, "o": out_shape, "k": k}
    for key, child in zip("xy", prev, strict=False):
        name, shape = names[id(child)], child.data.shape
        swapped = shape[:-2] + shape[-1:] + shape[-2:-1]
        by_name |= {key: f"{name}.data", key + "shape": f"{name}.shape",
                    key + "T": f"{name}.data.{'T' if len(shape) == 2 else 'mT'}"}
        by_shape |= {key: str(shape), key + "shape": str(shape), key + "T": str(swapped)}
    if op == "transpose" and prev[0].data.ndim == 2:
        op = "transpose 2-D"
    templates = TENSOR_FORMULAS.get(op)
    if templates is None and op[:2] == "**" and op[2:].lstrip("-").replace(".", "").isdigit():
        n = float(op[2:])
        n1 = f"{n - 1:g}" if n - 1 >= 0 else f"({n - 1:g})"
        for fill in (by_name, by_shape):
            fill |= {"n": f"{n:g}", "n1": n1}
        templates = TENSOR_FORMULAS["**n"]
    if op == "matmul" and min(child.data.ndim for child in prev) < 2:
        templates = None  # a vector operand: numpy's matmul rules, see tensor_math
    if isinstance(templates, str):
        template = templates
    else:
        template = templates[k] if templates and k < len(templates) else TENSOR_GENERIC
    if raw_shape != prev[k].data.shape:  # the engine sums the broadcast gradient back
        template = f"sum_to_shape({template}, {{tshape}})"
        by_name["tshape"] = f"{names[id(prev[k])]}.shape"
        by_shape["tshape"] = str(prev[k].data.shape)
    return template.format(**by_name), template.format(**by_shape)
