"""torch's module-level functions: ``chaingrad.exp(x)`` is ``x.exp()``, ``chaingrad.sum(x,
dim)`` is ``x.sum(dim)``, and so on; ``cat``, ``stack`` and ``where`` are in
``functions.py``.

Each one hands its work to the Tensor method of the same name, so there is one
implementation (and one rule) per op. A number or an array given where a tensor is
expected becomes one, as in torch. Functions whose torch name is a builtin's (``sum``,
``max``, ``min``, ``abs``, ``pow``, ``all``, ``any``) are defined here with a trailing
underscore and given their torch name as attributes of ``chaingrad`` (``TORCH_NAMES``), so
that no module shadows a builtin.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..declaration import Primitive
from ..rules import functions_in
from .factories import tensor_argument, with_out, with_outs
from .linalg import matrix_norm
from .tensor import Tensor

_tensor = functools.partial(tensor_argument, numbers=True)
"""An alias: ``factories.tensor_argument``, numbers and lists taken as constants, as torch's
functions here take them (``torch.maximum(x, 0.0)``)."""


def _elementwise(name: str, prim: Primitive) -> Callable[..., Tensor]:
    """torch's ``name(input)`` for an elementwise primitive: the Tensor method of the same
    name, on ``input`` made a Tensor (``out=`` as torch's)."""
    method = prim.method
    of_a_tensor = getattr(Tensor, method)  # (looked up once: most calls pass a Tensor)

    @with_out
    def function(input: Any) -> Tensor:  # noqa: A002 - torch's argument name
        if type(input) is Tensor:
            return of_a_tensor(input)
        return getattr(_tensor(input, name), method)()

    function.__name__ = function.__qualname__ = _defined_as(name)
    function.__doc__ = f"{prim.doc.splitlines()[0]} Entry by entry (``Tensor.{method}``)."
    return function


def _defined_as(name: str) -> str:
    """The name a torch function is defined under here: a builtin's (``abs``) with a
    trailing underscore, so that no module shadows a builtin (``chaingrad.abs`` is it)."""
    return name + "_" if hasattr(builtins, name) else name


class Elementwise(Protocol):
    """What each function of an elementwise primitive (``chaingrad.exp``, ...) takes."""

    def __call__(self, input: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        ...


# exp, log, sin, cos, tanh, sigmoid, relu, sqrt, abs_: from the primitives' declarations
for _name, _prim in functions_in("torch").items():
    globals()[_defined_as(_name)] = _elementwise(_name, _prim)
del _name, _prim

if TYPE_CHECKING:  # the loop's functions, for type checkers (tests/test_typing.py)
    abs_: Elementwise
    cos: Elementwise
    erf: Elementwise
    exp: Elementwise
    expm1: Elementwise
    log: Elementwise
    log1p: Elementwise
    log2: Elementwise
    log10: Elementwise
    relu: Elementwise
    sigmoid: Elementwise
    sin: Elementwise
    sqrt: Elementwise
    tanh: Elementwise


@with_out
def square(input: Any) -> Tensor:  # noqa: A002
    """x ** 2, entry by entry."""
    return _tensor(input, "square") ** 2


@with_out
def neg(input: Any) -> Tensor:  # noqa: A002
    """-x."""
    return -_tensor(input, "neg")


@with_out
def pow_(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """input ** exponent (``chaingrad.pow``); input may be a number, exponent a tensor."""
    if not isinstance(input, Tensor):
        return input ** _tensor(exponent, "pow")
    return input**exponent


@with_out
def add(input: Any, other: Any, *, alpha: float = 1) -> Tensor:  # noqa: A002
    """input + alpha * other."""
    return _tensor(input, "add").add(other, alpha=alpha)


@with_out
def sub(input: Any, other: Any, *, alpha: float = 1) -> Tensor:  # noqa: A002
    """input - alpha * other."""
    return _tensor(input, "sub").sub(other, alpha=alpha)


@with_out
def mul(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input * other."""
    return _tensor(input, "mul") * other


@with_out
def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:  # noqa: A002
    """input / other (true division: integers give floats), or rounded with
    ``rounding_mode`` ``'trunc'`` or ``'floor'`` (see ``Tensor.div``)."""
    return _tensor(input, "div").div(other, rounding_mode=rounding_mode)


@with_out
def matmul(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input @ other (1-D, 2-D, batched), as torch.matmul."""
    return _tensor(input, "matmul") @ _tensor(other, "matmul")


@with_out
def mm(input: Any, mat2: Any) -> Tensor:  # noqa: A002
    """The product of two matrices (both 2-D), as torch.mm."""
    return _tensor(input, "mm").mm(_tensor(mat2, "mm"))


@with_out
def dot(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The dot product of two 1-D tensors, as torch.dot."""
    return _tensor(input, "dot").dot(_tensor(other, "dot"))


@with_out
def maximum(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The larger entry of the two, entry by entry, as torch.maximum."""
    return _tensor(input, "maximum").maximum(other)


@with_out
def minimum(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The smaller entry of the two, entry by entry, as torch.minimum."""
    return _tensor(input, "minimum").minimum(other)


@with_out
def sum_(input: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
         dtype: Any = None) -> Tensor:
    """The sum over ``dim`` (all entries if None) (``chaingrad.sum``)."""
    return _tensor(input, "sum").sum(dim, keepdim, dtype=dtype)


@with_out
def mean(input: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
         dtype: Any = None) -> Tensor:
    """The mean over ``dim`` (all entries if None)."""
    return _tensor(input, "mean").mean(dim, keepdim, dtype=dtype)


@with_out
def var(input: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: int = 1, unbiased: bool | None = None) -> Tensor:
    """The variance over ``dim`` (see ``Tensor.var``)."""
    return _tensor(input, "var").var(dim, keepdim, correction=correction, unbiased=unbiased)


@with_out
def std(input: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: int = 1, unbiased: bool | None = None) -> Tensor:
    """The standard deviation over ``dim`` (see ``Tensor.std``)."""
    return _tensor(input, "std").std(dim, keepdim, correction=correction, unbiased=unbiased)


@with_outs
def max_(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The largest entry, or ``(values, indices)`` along ``dim`` (``chaingrad.max``)."""
    return _tensor(input, "max").max(dim, keepdim)


@with_outs
def min_(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The smallest entry, or ``(values, indices)`` along ``dim`` (``chaingrad.min``)."""
    return _tensor(input, "min").min(dim, keepdim)


@with_out
def amax(input: Any, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The largest entry over ``dim``, ties sharing the gradient."""
    return _tensor(input, "amax").amax(dim, keepdim)


@with_out
def amin(input: Any, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The smallest entry over ``dim``, ties sharing the gradient."""
    return _tensor(input, "amin").amin(dim, keepdim)


def argmax(input: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The index of the first largest entry (of all, or along ``dim``)."""
    return _tensor(input, "argmax").argmax(dim, keepdim)


def argmin(input: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The index of the first smallest entry (of all, or along ``dim``)."""
    return _tensor(input, "argmin").argmin(dim, keepdim)


@with_out
def all_(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Whether every entry is nonzero (``chaingrad.all``)."""
    return _tensor(input, "all").all(dim, keepdim)


def any_(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Whether any entry is nonzero (``chaingrad.any``)."""
    return _tensor(input, "any").any(dim, keepdim)


def norm(input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The p-norm (see ``Tensor.norm``); p='nuc' the nuclear norm of the matrices over
    ``dim`` (all dims if None), as torch.norm routes it (``linalg.matrix_norm``)."""
    x = _tensor(input, "norm")
    if isinstance(p, str) and p == "nuc":
        return matrix_norm(x, "nuc", tuple(range(x.ndim)) if dim is None else dim, keepdim)
    return x.norm(p, dim, keepdim)


@with_out
def clamp(input: Any, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
    """input clamped into [min, max], as torch.clamp."""
    return _tensor(input, "clamp").clamp(min, max)


def softmax(input: Any, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim``, as torch.softmax."""
    x = _tensor(input, "softmax")
    return (x if dtype is None else x.to(dtype)).softmax(dim)


def log_softmax(input: Any, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """x - log(sum(exp(x))) along ``dim``, as torch.log_softmax."""
    x = _tensor(input, "log_softmax")
    return (x if dtype is None else x.to(dtype)).log_softmax(dim)


@with_out
def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """log(sum(exp(x))) over ``dim``, computed stably (see ``Tensor.logsumexp``)."""
    return _tensor(input, "logsumexp").logsumexp(dim, keepdim)


@with_out
def cumsum(input: Any, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The running sums along ``dim`` (see ``Tensor.cumsum``)."""
    return _tensor(input, "cumsum").cumsum(dim, dtype=dtype)


@with_outs
def sort(input: Any, dim: int = -1, descending: bool = False, *,  # noqa: A002
         stable: bool = False) -> Any:
    """``(values, indices)`` of the entries along ``dim`` in order (see ``Tensor.sort``)."""
    return _tensor(input, "sort").sort(dim, descending, stable=stable)


def argsort(input: Any, dim: int = -1, descending: bool = False, *,  # noqa: A002
            stable: bool = False) -> Tensor:
    """Where each entry of the sorted tensor comes from (see ``Tensor.argsort``)."""
    return _tensor(input, "argsort").argsort(dim, descending, stable=stable)


@with_outs
def topk(input: Any, k: int, dim: int = -1, largest: bool = True,  # noqa: A002
         sorted: bool = True) -> Any:  # noqa: A002
    """``(values, indices)`` of the ``k`` largest entries along ``dim`` (see
    ``Tensor.topk``)."""
    return _tensor(input, "topk").topk(k, dim, largest, sorted)


@with_outs
def nonzero(input: Any, *, as_tuple: bool = False) -> Any:  # noqa: A002
    """The indices of the nonzero entries (see ``Tensor.nonzero``)."""
    return _tensor(input, "nonzero").nonzero(as_tuple=as_tuple)


@with_out
def histc(input: Any, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """How many entries fall in each of ``bins`` equal bins (see ``Tensor.histc``)."""
    return _tensor(input, "histc").histc(bins, min, max)


@with_outs
def histogram(input: Any, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: Any = None, density: bool = False) -> Any:
    """``(hist, bin_edges)`` (see ``Tensor.histogram``)."""
    return _tensor(input, "histogram").histogram(bins, range=range, weight=weight,
                                                 density=density)


def unique(input: Any, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct entries in order, and optionally where each went and how often each
    occurs (see ``Tensor.unique``).

    Example:
        >>> unique(Tensor([2.0, 1.0, 2.0])).tolist()
        [1.0, 2.0]
    """
    return _tensor(input, "unique").unique(sorted, return_inverse, return_counts, dim)


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each integer occurs, or the sums of their weights (see
    ``Tensor.bincount``)."""
    return _tensor(input, "bincount").bincount(weights, minlength)


def flip(input: Any, dims: Any) -> Tensor:  # noqa: A002
    """The entries in reverse order along each of ``dims`` (see ``Tensor.flip``)."""
    return _tensor(input, "flip").flip(dims)


def narrow(input: Any, dim: int, start: Any, length: int) -> Tensor:  # noqa: A002
    """The ``length`` entries from ``start`` along ``dim`` (see ``Tensor.narrow``)."""
    return _tensor(input, "narrow").narrow(dim, start, length)


@with_out
def tril(input: Any, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The entries on and below the ``diagonal``, zeros above (see ``Tensor.tril``).

    Example:
        >>> tril(Tensor([[1.0, 1.0], [1.0, 1.0]])).tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    return _tensor(input, "tril").tril(diagonal)


@with_out
def triu(input: Any, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The entries on and above the ``diagonal``, zeros below (see ``Tensor.triu``)."""
    return _tensor(input, "triu").triu(diagonal)


def masked_fill(input: Any, mask: Any, value: Any) -> Tensor:  # noqa: A002
    """``value`` where ``mask`` is True, ``input`` elsewhere (see ``Tensor.masked_fill``)."""
    return _tensor(input, "masked_fill").masked_fill(mask, value)


def split(tensor: Any, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces along ``dim`` (see ``Tensor.split``)."""
    return _tensor(tensor, "split").split(split_size_or_sections, dim)


def chunk(input: Any, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """At most ``chunks`` pieces along ``dim`` (see ``Tensor.chunk``)."""
    return _tensor(input, "chunk").chunk(chunks, dim)


def unbind(input: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """The slices along ``dim`` (see ``Tensor.unbind``)."""
    return _tensor(input, "unbind").unbind(dim)


def roll(input: Any, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    """The entries moved ``shifts`` places along ``dims``, wrapping round (see
    ``Tensor.roll``)."""
    return _tensor(input, "roll").roll(shifts, dims)


@with_out
def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False,  # noqa: A002
           ) -> Tensor:
    """The entries along ``dim`` at ``index`` (see ``Tensor.gather``); ``sparse_grad`` at
    its default only (chaingrad's gradients are dense)."""
    if sparse_grad:
        raise NotImplementedError("gather: chaingrad's gradients are dense: sparse_grad=True "
                                  "is not taken yet")
    return _tensor(input, "gather").gather(dim, index)


def scatter_add(input: Any, dim: int, index: Any, src: Any) -> Tensor:  # noqa: A002
    """``input`` with ``src`` added along ``dim`` at ``index`` (see
    ``Tensor.scatter_add``)."""
    return _tensor(input, "scatter_add").scatter_add(dim, index, src)


@with_out
def bmm(input: Any, mat2: Any) -> Tensor:  # noqa: A002
    """The products of two batches of matrices (see ``Tensor.bmm``)."""
    return _tensor(input, "bmm").bmm(_tensor(mat2, "bmm"))


def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    """The dims from start_dim to end_dim merged into one."""
    return _tensor(input, "flatten").flatten(start_dim, end_dim)


def reshape(input: Any, shape: Any) -> Tensor:  # noqa: A002
    """The entries in a new shape."""
    return _tensor(input, "reshape").reshape(shape)


def squeeze(input: Any, dim: Any = None) -> Tensor:  # noqa: A002
    """Without dims of size 1 (only ``dim``'s, if given)."""
    return _tensor(input, "squeeze").squeeze(dim)


def unsqueeze(input: Any, dim: int) -> Tensor:  # noqa: A002
    """A new dim of size 1 at ``dim``."""
    return _tensor(input, "unsqueeze").unsqueeze(dim)


def transpose(input: Any, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """``dim0`` and ``dim1`` swapped."""
    return _tensor(input, "transpose").transpose(dim0, dim1)


def permute(input: Any, dims: Any) -> Tensor:  # noqa: A002
    """The dims in the order ``dims``."""
    return _tensor(input, "permute").permute(dims)


def t(input: Any) -> Tensor:  # noqa: A002
    """The transpose of a tensor of at most 2 dims."""
    return _tensor(input, "t").t()


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """True when ``|input - other| <= atol + rtol * |other|`` everywhere.

    Example:
        >>> allclose(Tensor([1.0, 2.0]), Tensor([1.0, 2.0 + 1e-9]))
        True
    """
    return _tensor(input, "allclose").allclose(other, rtol, atol, equal_nan)


def equal(input: Any, other: Any) -> bool:  # noqa: A002
    """True when both have the same shape and entries."""
    return _tensor(input, "equal").equal(other)


def numel(input: Tensor) -> int:  # noqa: A002
    """The number of entries."""
    return _tensor(input, "numel").numel()


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a chaingrad Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """Whether the tensor's dtype is a floating one."""
    return _tensor(input, "is_floating_point").is_floating_point()


TORCH_NAMES = {"abs": "abs_", "pow": "pow_", "sum": "sum_", "max": "max_", "min": "min_",
               "all": "all_", "any": "any_", "clip": "clamp"}
"""The torch names that ``chaingrad`` gives functions of this module under (see the
module's docstring)."""


@with_out
def isnan(input: Any) -> Tensor:  # noqa: A002
    """Where ``input`` is nan, as a bool tensor (``Tensor.isnan``)."""
    return _tensor(input, "isnan").isnan()


@with_out
def isinf(input: Any) -> Tensor:  # noqa: A002
    """Where ``input`` is inf or -inf, as a bool tensor (``Tensor.isinf``)."""
    return _tensor(input, "isinf").isinf()


@with_out
def isfinite(input: Any) -> Tensor:  # noqa: A002
    """Where ``input`` is neither nan nor +-inf, as a bool tensor (``Tensor.isfinite``)."""
    return _tensor(input, "isfinite").isfinite()


@with_out
def isposinf(input: Any) -> Tensor:  # noqa: A002
    """Where ``input`` is inf, as a bool tensor (``Tensor.isposinf``)."""
    return _tensor(input, "isposinf").isposinf()


@with_out
def isneginf(input: Any) -> Tensor:  # noqa: A002
    """Where ``input`` is -inf, as a bool tensor (``Tensor.isneginf``)."""
    return _tensor(input, "isneginf").isneginf()


@with_out
def nan_to_num(input: Any, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
               neginf: float | None = None) -> Tensor:
    """nan, inf and -inf replaced by numbers (``Tensor.nan_to_num``).

    Example:
        >>> import chaingrad as torch
        >>> torch.nan_to_num(torch.tensor([float("inf"), 1.0]), posinf=9.0)
        tensor([9., 1.])
    """
    return _tensor(input, "nan_to_num").nan_to_num(nan, posinf, neginf)


@with_out
def nansum(input: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
           dtype: Any = None) -> Tensor:
    """The sum with nan entries taken as 0 (``Tensor.nansum``)."""
    return _tensor(input, "nansum").nansum(dim, keepdim, dtype=dtype)


@with_out
def nanmean(input: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """The mean of the entries that are not nan (``Tensor.nanmean``)."""
    return _tensor(input, "nanmean").nanmean(dim, keepdim, dtype=dtype)
