"""The Tensor engine's forwards on arrays that are more than one numpy call, each as its
readable reference and, where a benchmark showed one pays, its fast twin beside it:

- softmax and log_softmax (the twins sum rows with ``np.einsum``);
- scatter, the gradient of ``x[index]`` (the twin adds an embedding's rows by ranks);
- conv2d and its two gradients (the twins lay windows out as columns, im2col, so that one
  matrix product applies every filter, and take short image rows in batch-long runs);
- max pooling (the twin reads every window's entry k at once as a plane);
- unpooling, max pooling's gradient.

The function named for each op and ``on_arrays`` (``softmax_on_arrays``,
``conv2d_on_arrays``, ...) is what its primitive's ``array`` calls
(``tensor_engine/rules.py``): the twin, or the reference when ``chaingrad.use_reference()``
is on. Each twin computes what its reference computes (conv2d's within float rounding: the
sums run in another order; the others exactly or within rounding, as each says), tested
against it on random shapes (tests/tensor_engine/test_kernels.py); the measurements are in
benchmarks/RESULTS.md (``benchmarks/conv.py``, ``benchmarks/ops.py``). Where they overflow
(exp), their callers have numpy's warnings off. """

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from .. import reference

# ---- softmax and log_softmax along an axis ----


def softmax_reference(x: np.ndarray, axis: int) -> np.ndarray:
    """exp(x) / sum(exp(x)) along ``axis``, with the largest entry subtracted first (no
    overflow)."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_reference(x: np.ndarray, axis: int) -> np.ndarray:
    """x - log(sum(exp(x))) along ``axis``, with the largest entry subtracted first."""
    z = x - x.max(axis=axis, keepdims=True)
    z -= np.log(np.exp(z).sum(axis=axis, keepdims=True))  # (in place: one array less)
    return z


SUMMED_ROW = 16
"""The shortest last axis whose rows the softmax twins sum with ``np.einsum``: below it, a
row is too short for einsum's vector loop to pay."""


def _rows_summable(x: np.ndarray, axis: int) -> bool:
    """Whether x is a float array, C-contiguous, taken along its last axis of at least
    ``SUMMED_ROW`` entries: the case the softmax twins handle."""
    return (x.dtype.kind == "f" and x.ndim >= 1 and axis == x.ndim - 1
            and x.shape[-1] >= SUMMED_ROW and x.flags.c_contiguous)


def row_maxima(x: np.ndarray) -> np.ndarray:
    """The largest entry of each row (the last axis) of a C-contiguous array with rows
    (``_rows_summable``), kept as a size-1 axis: ``x.max(axis=-1, keepdims=True)``'s
    numbers (a maximum is exact; nan propagates as there), by ``np.maximum.reduceat`` over
    the flat entries at each row's start, which loops over the rows faster than numpy's
    reduction over a last axis does (at 512x192 float32, 39 us against 62; at 3072x64,
    attention's rows in T6, 200 against 325)."""
    n = x.shape[-1]
    flat = x.reshape(-1)
    return np.maximum.reduceat(flat, np.arange(0, flat.size, n)).reshape(x.shape[:-1] + (1,))


def softmax_fast(x: np.ndarray, axis: int) -> np.ndarray:
    """The twin of ``softmax_reference`` (equal within float rounding: each row's exponentials
    are summed by ``np.einsum``, not numpy's pairwise sum), along the last axis, in one
    array: x minus its row maxima (``row_maxima``), exponentiated and divided in place."""
    if not _rows_summable(x, axis) or x.size == 0:
        return softmax_reference(x, axis)
    out = np.subtract(x, row_maxima(x))
    np.exp(out, out=out)
    out /= np.einsum("...i->...", out)[..., None]
    return out


def log_softmax_fast(x: np.ndarray, axis: int) -> np.ndarray:
    """The twin of ``log_softmax_reference`` (equal within float rounding, as ``softmax``'s),
    along the last axis: x minus its row maxima, minus the log of the row sums of their
    exponentials."""
    if not _rows_summable(x, axis) or x.size == 0:
        return log_softmax_reference(x, axis)
    out = np.subtract(x, row_maxima(x))
    out -= np.log(np.einsum("...i->...", np.exp(out)))[..., None]
    return out


def softmax_on_arrays(x: np.ndarray, axis: int) -> np.ndarray:
    """softmax's forward on arrays: ``softmax_fast``, or ``softmax_reference`` under
    ``chaingrad.use_reference()``."""
    return softmax_reference(x, axis) if reference.only else softmax_fast(x, axis)


def log_softmax_on_arrays(x: np.ndarray, axis: int) -> np.ndarray:
    """log_softmax's forward on arrays: ``log_softmax_fast``, or ``log_softmax_reference``
    under ``chaingrad.use_reference()``."""
    return log_softmax_reference(x, axis) if reference.only else log_softmax_fast(x, axis)

# ---- scatter: the gradient of x[index] ----


def scatter_array_reference(g: np.ndarray, index: Any, shape: tuple[int, ...]) -> np.ndarray:
    """Zeros of ``shape`` with ``g`` added at ``index``: the inverse of ``x[index]``.

    Integer arrays can pick an entry twice; ``np.add.at`` adds both, as the chain rule
    wants (plain assignment would keep only one).
    """
    out = np.zeros(shape, dtype=g.dtype)
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(p, np.ndarray) and p.dtype.kind in "iu" for p in parts):
        np.add.at(out, index, g)
    else:
        out[index] = g
    return out


SCATTERED_ENTRIES = 4096
"""The fewest entries of g that ``scatter_array_fast`` adds by ranks: below it the sorts cost
more than ``np.add.at`` saves (makemore's C[X], 960 entries: 32 us against 10; 64 rows of
64 from 65, 4096 entries: 39 against 36; 32 rows of 200, benchmarks/ops.py's small
embedding, 6400 entries: 35 against 54)."""


def scatter_array_fast(g: np.ndarray, index: Any, shape: tuple[int, ...]) -> np.ndarray:
    """The twin of ``scatter_array_reference`` (the same numbers, bit for bit), for a float g
    scattered along the first axis by one integer array (``C[X]``, an embedding's
    gradient). ``np.add.at`` adds one row at a time (about 8 ns an entry); here each row
    gets its rank among the rows of the same index (0 for an index's first row, 1 for its
    second, ...: by a stable sort), and the rows of each rank are added at once, rank 0
    first: no index appears twice in one rank, and each destination still adds its rows in
    their order. 5-6x faster for 512 rows of 192. Other indices, and fewer than
    ``SCATTERED_ENTRIES`` entries, go to ``scatter_array_reference``."""
    parts = index if isinstance(index, tuple) else (index,)
    picked = parts[0]
    if (len(parts) != 1 or not isinstance(picked, np.ndarray) or picked.dtype.kind not in "iu"
            or picked.size == 0 or g.dtype.kind != "f" or not shape
            or g.size < SCATTERED_ENTRIES):
        return scatter_array_reference(g, index, shape)
    where = picked.ravel()
    if where.min() < 0:  # -1 and n - 1 are one row: name it once
        where = where + shape[0] * (where < 0)
    rows = g.reshape(where.size, -1)
    order = np.argsort(where, kind="stable")  # rows by index, each index's in their order
    ordered = where[order]
    position = np.arange(where.size)
    first = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    rank = position - np.maximum.accumulate(np.where(first, position, 0))
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(rank.max() + 2))
    rows_by_rank = order[by_rank]
    out = np.zeros((shape[0], rows.shape[1]), dtype=g.dtype)
    for start, stop in zip(bounds[:-1], bounds[1:]):
        chosen = rows_by_rank[start:stop]
        out[where[chosen]] += rows[chosen]  # distinct rows of out: one add each
    return out.reshape(shape)


def scatter_on_arrays(g: np.ndarray, index: Any, shape: tuple[int, ...]) -> np.ndarray:
    """g added into zeros of ``shape`` at ``index`` (getitem's gradient, the ``scatter``
    primitive's forward): ``scatter_array_fast``, or ``scatter_array_reference`` under
    ``chaingrad.use_reference()``."""
    if reference.only:
        return scatter_array_reference(g, index, shape)
    return scatter_array_fast(g, index, shape)

# ---- convolution ----


def conv_output_size(size: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
                     padding: tuple[int, int]) -> tuple[int, int]:
    """(OH, OW): how many windows of ``kernel`` fit down and across the padded image."""
    return tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(size, kernel, stride, padding))


def padded(x: np.ndarray, padding: tuple[int, int]) -> np.ndarray:
    """x (N, C, H, W) with ``padding`` rows and columns of zeros on each side (a copy), or
    x itself when there is no padding."""
    (ph, pw), (h, w) = padding, x.shape[2:]
    if not ph and not pw:
        return x
    out = np.zeros(x.shape[:2] + (h + 2 * ph, w + 2 * pw), dtype=x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def kernel_offsets(kernel: tuple[int, int], stride: tuple[int, int],
                   out_size: tuple[int, int]) -> Iterator[tuple[int, int, slice, slice]]:
    """For each offset (i, j) in the kernel: i, j, and the rows and columns (slices) of the
    padded image that entry (i, j) of every window reads."""
    (kh, kw), (sh, sw), (oh, ow) = kernel, stride, out_size
    for i in range(kh):
        for j in range(kw):
            yield i, j, slice(i, i + sh * (oh - 1) + 1, sh), slice(j, j + sw * (ow - 1) + 1, sw)


def windows(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """The (kh, kw) windows of an (N, C, H, W) array at ``stride``: a view, nothing copied."""
    (kh, kw), (sh, sw) = kernel, stride
    return sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::sh, ::sw]


def fold_array(g: np.ndarray, size: tuple[int, int], stride: tuple[int, int]) -> np.ndarray:
    """Windows of shape (N, C, OH, OW, kh, kw) added into an (N, C, H, W) image: the place
    each came from (where windows overlap, their entries add up)."""
    image = np.zeros(g.shape[:2] + tuple(size), dtype=g.dtype)
    for i, j, rows, cols in kernel_offsets(g.shape[4:], stride, g.shape[2:4]):
        image[:, :, rows, cols] += g[..., i, j]  # one strided add per offset, not per window
    return image


def conv2d_reference(x: np.ndarray, w: np.ndarray, stride: tuple[int, int],
                     padding: tuple[int, int], bias: np.ndarray | None = None) -> np.ndarray:
    """conv2d as its definition reads: every window of the padded x times every filter,
    ``out[n, o, r, s] = sum over c, i, j of padded(x)[n, c, r*sh + i, s*sw + j] * w[o, c, i, j]``
    (plus ``bias[o]``). The specification of ``conv2d_fast``."""
    out = np.einsum("ncrsij,ocij->nors", windows(padded(x, padding), w.shape[2:], stride), w)
    return out if bias is None else out + bias[:, None, None]


def conv2d_input_grad_reference(g: np.ndarray, w: np.ndarray, size: tuple[int, int],
                                stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """conv2d's gradient for x (N, C, H, W) of ``size``: each output's gradient times the
    filters, ``g[n, o, r, s] * w[o, c, i, j]``, added back into the window it came from, and
    the padding cut off. The specification of ``conv2d_input_grad_fast``."""
    (ph, pw), (h, wd) = padding, size
    shares = np.einsum("nors,ocij->ncrsij", g, w)
    image = fold_array(shares, (h + 2 * ph, wd + 2 * pw), stride)
    return image[:, :, ph:ph + h, pw:pw + wd]


def conv2d_weight_grad_reference(x: np.ndarray, g: np.ndarray, kernel: tuple[int, int],
                                 stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """conv2d's gradient for the filters: every window of the padded x times the gradient
    of the output it made, summed over the batch and the positions. The specification of
    ``conv2d_weight_grad_fast``."""
    return np.einsum("ncrsij,nors->ocij", windows(padded(x, padding), kernel, stride), g)


SHORT_ROW = 8
"""Below this many output columns, the fast twins keep the batch axis last: the rows they
copy are then batch-long rather than a few entries long (numpy copies short rows slowly)."""


def conv2d_fast(x: np.ndarray, w: np.ndarray, stride: tuple[int, int],
                padding: tuple[int, int], bias: np.ndarray | None = None) -> np.ndarray:
    """The twin of ``conv2d_reference`` (equal within float rounding: the sums run in
    another order), as one matrix product: the filters (O, C*kh*kw) times the windows laid
    out as columns (im2col), image by image, or position by position for small images."""
    n, o = x.shape[0], w.shape[0]
    oh, ow = conv_output_size(x.shape[2:], w.shape[2:], stride, padding)
    filters = w.reshape(o, -1)
    if bias is not None:  # the bias as one more filter column, times a row of ones
        filters = np.concatenate([filters, bias[:, None]], axis=1)
    ones = bias is not None
    if ow < SHORT_ROW:
        cols = columns_batch_last(x, w.shape[2:], stride, padding, ones)
        per_position = np.matmul(filters, cols.transpose(1, 0, 2))  # (OH*OW, O, N)
        return np.ascontiguousarray(per_position.transpose(2, 1, 0)).reshape(n, o, oh, ow)
    out = np.matmul(filters, columns(x, w.shape[2:], stride, padding, ones))  # (N, O, OH*OW)
    return out.reshape(n, o, oh, ow)


def conv2d_input_grad_fast(g: np.ndarray, w: np.ndarray, size: tuple[int, int],
                           stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """The twin of ``conv2d_input_grad_reference`` (equal within float rounding): the
    filters transposed times g gives every window's share, which is added back where the
    window came from, one strided add per kernel offset."""
    n, o, oh, ow = g.shape
    c, kh, kw = w.shape[1:]
    (ph, pw), (h, wd) = padding, size
    if ow < SHORT_ROW and stride == (1, 1) and ph < kh and pw < kw:
        # for small images at stride 1: a 'full' convolution of g with the filters
        # flipped and transposed (O and C swapped), whose windows are quicker to gather
        flipped = np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
        return conv2d_fast(g, flipped, (1, 1), (kh - 1 - ph, kw - 1 - pw))
    to_windows = w.reshape(o, -1).T  # (C*kh*kw, O)
    if ow < SHORT_ROW:  # the batch axis last, as in columns_batch_last
        shares = np.matmul(to_windows, by_position(g)).reshape(oh, ow, c, kh, kw, n)
        image = np.zeros((c, h + 2 * ph, wd + 2 * pw, n), dtype=shares.dtype)
        for i, j, rows, cols in kernel_offsets((kh, kw), stride, (oh, ow)):
            image[:, rows, cols] += shares[:, :, :, i, j].transpose(2, 0, 1, 3)
        return np.ascontiguousarray(image[:, ph:ph + h, pw:pw + wd].transpose(3, 0, 1, 2))
    hp, wp = h + 2 * ph, wd + 2 * pw
    if stride[1] == 1 and c * kh * kw > o:  # when the shares outweigh g, it pays to widen
        # g's rows, and add the shares on rows laid end to end: long runs, not OW-long ones
        return _fold_rows(np.matmul(to_windows, widened(g, stride[0] * wp)), (kh, kw),
                          (hp, wp), stride[0])[:, :, ph:ph + h, pw:pw + wd].copy()
    shares = np.matmul(to_windows, g.reshape(n, o, -1)).reshape(n, c, kh, kw, oh, ow)
    image = np.zeros((n, c, hp, wp), dtype=shares.dtype)
    for i, j, rows, cols in kernel_offsets((kh, kw), stride, (oh, ow)):
        image[:, :, rows, cols] += shares[:, :, i, j]
    return np.ascontiguousarray(image[:, :, ph:ph + h, pw:pw + wd]) if ph or pw else image


def widened(g: np.ndarray, row: int) -> np.ndarray:
    """An (N, O, OH, OW) gradient with each output row padded with zeros to ``row``
    entries: (N, O, OH * row)."""
    n, o, oh, ow = g.shape
    wide = np.zeros((n, o, oh, row), dtype=g.dtype)
    wide[..., :ow] = g
    return wide.reshape(n, o, -1)


def _fold_rows(shares: np.ndarray, kernel: tuple[int, int], size: tuple[int, int],
               row_stride: int) -> np.ndarray:
    """``fold`` for windows one column apart, on rows laid end to end: ``shares`` (N,
    C*kh*kw, OH * row_stride * W) holds, for each kernel offset (i, j), the entries that
    window rows put at (r * row_stride + i, s + j) of the (H, W) image, as one run that
    starts at i * W + j (zeros where no window was). Returns (N, C, H, W)."""
    (kh, kw), (h, w) = kernel, size
    n, length = shares.shape[0], shares.shape[2]
    shares = shares.reshape(n, -1, kh, kw, length)
    flat = np.zeros((n, shares.shape[1], (h + row_stride) * w + kw), dtype=shares.dtype)
    for i in range(kh):
        for j in range(kw):
            flat[:, :, i * w + j:i * w + j + length] += shares[:, :, i, j]
    return flat[:, :, :h * w].reshape(n, -1, h, w)


def conv2d_weight_grad_fast(x: np.ndarray, g: np.ndarray, kernel: tuple[int, int],
                            stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """The twin of ``conv2d_weight_grad_reference`` (equal within float rounding): g times
    the windows laid out as columns (im2col), one matrix product per image (or position),
    summed."""
    n, o = g.shape[:2]
    shape = (o, x.shape[1]) + tuple(kernel)
    if g.shape[3] < SHORT_ROW:
        cols = columns_batch_last(x, kernel, stride, padding)  # (C*kh*kw, OH*OW, N)
        return np.matmul(by_position(g), cols.transpose(1, 2, 0)).sum(axis=0).reshape(shape)
    cols = columns(x, kernel, stride, padding)  # (N, C*kh*kw, OH*OW)
    per_window = np.matmul(cols, g.reshape(n, o, -1).transpose(0, 2, 1)).sum(axis=0)
    return np.ascontiguousarray(per_window.T).reshape(shape)


def by_position(g: np.ndarray) -> np.ndarray:
    """An (N, O, OH, OW) gradient as (OH*OW, O, N): one (O, N) matrix per position."""
    return np.ascontiguousarray(g.reshape(g.shape[0], g.shape[1], -1).transpose(2, 1, 0))


def columns(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
            padding: tuple[int, int], ones: bool = False) -> np.ndarray:
    """im2col: the windows of the padded x as columns, (N, C*kh*kw, OH*OW): image n's row
    (c, i, j) holds ``padded(x)[n, c, r*sh + i, s*sw + j]`` at column (r, s). With
    ``ones``, one more row of ones, to add a bias in the same matrix product."""
    n, c = x.shape[:2]
    oh, ow = conv_output_size(x.shape[2:], kernel, stride, padding)
    xp = padded(x, padding)
    sn, sc, sy, sx = xp.strides  # entry (i, j) of window (r, s): a view, then one copy
    view = as_strided(xp, (n, c) + tuple(kernel) + (oh, ow),
                      (sn, sc, sy, sx, sy * stride[0], sx * stride[1]), writeable=False)
    if not ones:
        return view.reshape(n, -1, oh * ow)
    rows = c * kernel[0] * kernel[1]
    cols = np.empty((n, rows + 1, oh * ow), dtype=x.dtype)
    cols[:, :rows].reshape(view.shape)[...] = view
    cols[:, rows] = 1
    return cols


def columns_batch_last(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                       padding: tuple[int, int], ones: bool = False) -> np.ndarray:
    """``columns`` with the batch axis last, (C*kh*kw, OH*OW, N): the same entries, taken
    in one call as whole rows of x's transpose (C*H*W, N), batch-long rows rather than OW
    entries (few, for small images). Padding reads a row of zeros; with ``ones``, one more
    row of ones follows, to add a bias in the same matrix product."""
    n = x.shape[0]
    source = np.empty((x[0].size + 2, n), dtype=x.dtype)
    source[:-2] = x.reshape(n, -1).T
    source[-2], source[-1] = 0, 1  # the padding's zeros; the bias's ones
    oh, ow = conv_output_size(x.shape[2:], kernel, stride, padding)
    rows = column_sources(x.shape[1:], kernel, stride, padding, ones)
    return np.take(source, rows, axis=0).reshape(-1, oh * ow, n)


@functools.lru_cache(maxsize=8)
def column_sources(size: tuple[int, int, int], kernel: tuple[int, int],
                   stride: tuple[int, int], padding: tuple[int, int], ones: bool) -> np.ndarray:
    """For ``columns_batch_last``: the row of x as (C*H*W, N) that entry (c, i, j) of
    window (r, s) reads, in (c, i, j, r, s) order; C*H*W where it reads the padding (a row
    of zeros), and with ``ones`` OH*OW times C*H*W + 1 after (a row of ones). Depends on
    the shapes only, so it is made once per shape (read-only)."""
    c, h, w = size
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    oh, ow = conv_output_size((h, w), kernel, stride, padding)
    channel = np.arange(c)[:, None, None, None, None]
    y = np.arange(kh)[:, None, None, None] + np.arange(oh)[:, None] * sh - ph  # (kh, 1, OH, 1)
    x = np.arange(kw)[:, None, None] + np.arange(ow) * sw - pw  # (kw, 1, OW)
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    rows = np.where(inside, (channel * h + y) * w + x, c * h * w).ravel()
    if ones:
        rows = np.concatenate([rows, np.full(oh * ow, c * h * w + 1)])
    rows.setflags(write=False)
    return rows


def conv2d_on_arrays(x: np.ndarray, w: np.ndarray, stride: tuple[int, int],
                     padding: tuple[int, int], bias: np.ndarray | None = None) -> np.ndarray:
    """conv2d's forward on arrays: ``conv2d_fast``, or ``conv2d_reference`` under
    ``chaingrad.use_reference()``."""
    if reference.only:
        return conv2d_reference(x, w, stride, padding, bias)
    return conv2d_fast(x, w, stride, padding, bias)


def conv2d_input_grad_on_arrays(g: np.ndarray, w: np.ndarray, size: tuple[int, int],
                                stride: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
    """conv2d's gradient for its input on arrays: ``conv2d_input_grad_fast``, or its
    reference under ``chaingrad.use_reference()``."""
    if reference.only:
        return conv2d_input_grad_reference(g, w, tuple(size), stride, padding)
    return conv2d_input_grad_fast(g, w, tuple(size), stride, padding)


def conv2d_weight_grad_on_arrays(x: np.ndarray, g: np.ndarray, kernel: tuple[int, int],
                                 stride: tuple[int, int], padding: tuple[int, int]
                                 ) -> np.ndarray:
    """conv2d's gradient for its filters on arrays: ``conv2d_weight_grad_fast``, or its
    reference under ``chaingrad.use_reference()``."""
    if reference.only:
        return conv2d_weight_grad_reference(x, g, tuple(kernel), stride, padding)
    return conv2d_weight_grad_fast(x, g, tuple(kernel), stride, padding)

# ---- max pooling, and unpooling: its gradient ----


def max_pool2d_reference(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                         picks: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The largest entry of every (kh, kw) window of x (N, C, H, W), (N, C, OH, OW), and
    with ``picks`` where the first of them (row-major in its window, torch's choice among
    ties) sits in x, flattened; else None."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw) = kernel, stride
    every = windows(x, kernel, stride)  # (N, C, OH, OW, kh, kw), a view
    entries = every.reshape(every.shape[:4] + (kh * kw,))
    out = entries.max(axis=-1)
    if not picks:
        return out, None
    i, j = np.divmod(entries.argmax(axis=-1), kw)  # the first largest entry of each window
    image, c_, r, s = np.indices(out.shape, sparse=True)
    rows, cols = r * sh + i, s * sw + j
    return out, ((image * c + c_) * h + rows) * w + cols


@functools.lru_cache(maxsize=8)
def window_positions(shape: tuple[int, ...], kernel: tuple[int, int],
                     stride: tuple[int, int]) -> np.ndarray:
    """Where entry k (row-major) of every (kh, kw) window of an (N, C, H, W) array sits in
    the flattened array: (kh*kw, N*C*OH*OW). Depends on the shapes only, so it is made once
    per shape (read-only)."""
    n, c, h, w = shape
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    in_image = ((np.arange(oh) * (sh * w))[:, None] + np.arange(ow) * sw).ravel()
    corners = ((np.arange(n * c) * (h * w))[:, None] + in_image).ravel()  # top-left entries
    positions = (np.arange(kh)[:, None] * w + np.arange(kw)).reshape(-1, 1) + corners
    positions.setflags(write=False)
    return positions


def max_pool2d_fast(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                     picks: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The twin of ``max_pool2d_reference`` (the same numbers: a maximum is exact):
    every window's entry k read at once as plane k (``window_positions``), the planes'
    maximum, and, with ``picks``, the first of the largest entries found by scanning the
    planes backwards."""
    n, c, h, w = x.shape
    positions = window_positions(x.shape, kernel, stride)
    planes = np.take(x.reshape(-1), positions)  # plane k: entry k of every window
    out = planes.max(axis=0)
    picked = None
    if picks:  # scan the entries backwards: the first largest is the last to take over
        picked = positions[-1]
        for k in range(len(planes) - 2, -1, -1):
            picked = np.where(planes[k] == out, positions[k], picked)
    pooled = (n, c, (h - kernel[0]) // stride[0] + 1, (w - kernel[1]) // stride[1] + 1)
    return out.reshape(pooled), None if picked is None else picked.reshape(pooled)


def max_pool2d_on_arrays(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                         picks: bool) -> tuple[np.ndarray, Any]:
    """Max pooling on arrays, and where each window's first largest entry is:
    ``max_pool2d_fast``, or ``max_pool2d_reference`` under ``chaingrad.use_reference()``."""
    if reference.only:
        return max_pool2d_reference(x, kernel, stride, picks)
    return max_pool2d_fast(x, kernel, stride, picks)


def unpool_on_arrays(g: np.ndarray, picked: np.ndarray, shape: tuple[int, ...],
                 overlap: bool) -> np.ndarray:
    """Zeros of ``shape`` with each window's gradient added at its picked entry."""
    image = np.zeros(shape, dtype=g.dtype)
    if overlap:  # an entry may be picked by several windows: add their gradients, in
        np.add.at(image.reshape(-1), picked.ravel(), np.ravel(g))  # g's dtype, as torch
    else:  # windows do not overlap: every entry is picked at most once
        image.reshape(-1)[picked.ravel()] = np.ravel(g)
    return image


# ---- layer normalisation: torch's native_layer_norm, forward ----


def layer_norm_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, axes: tuple[int, ...],
                         eps: float) -> np.ndarray:
    """(x - mean) * rstd * w + b, the mean and the biased variance var taken over ``axes``
    and rstd = 1 / sqrt(var + eps), as its definition reads (torch's layer_norm). The
    specification of ``layer_norm_fast``."""
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    rstd = 1 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + eps)
    return centred * rstd * w + b


def layer_norm_fast(x: np.ndarray, w: np.ndarray, b: np.ndarray, axes: tuple[int, ...],
                    eps: float) -> np.ndarray:
    """The twin of ``layer_norm_reference`` (equal within float rounding: each row's sums
    by ``np.einsum``, not numpy's pairwise ``mean``), for a C-contiguous float x whose
    ``axes`` are its last ones and w and b of x's dtype: x as rows, in one array, centred,
    then scaled and shifted in place (1.8x faster at 512x192 in float32)."""
    if (x.dtype.kind != "f" or not x.flags.c_contiguous or x.size == 0
            or w.dtype != x.dtype or b.dtype != x.dtype
            or axes != tuple(range(x.ndim - len(axes), x.ndim))):
        return layer_norm_reference(x, w, b, axes, eps)
    rows = x.reshape(-1, w.size)
    out = np.subtract(rows, (np.einsum("ij->i", rows) / w.size)[:, None])
    var = np.einsum("ij,ij->i", out, out) / w.size
    out *= (1 / np.sqrt(var + eps))[:, None]
    out *= w.reshape(-1)
    out += b.reshape(-1)
    return out.reshape(x.shape)


def layer_norm_on_arrays(x: np.ndarray, w: np.ndarray, b: np.ndarray, axes: tuple[int, ...],
                         eps: float, needs: tuple[bool, bool, bool]) -> np.ndarray:
    """layer_norm's forward on arrays (``needs`` is its rule's): ``layer_norm_fast``, or
    ``layer_norm_reference`` under ``chaingrad.use_reference()``."""
    if reference.only:
        return layer_norm_reference(x, w, b, axes, eps)
    return layer_norm_fast(x, w, b, axes, eps)
