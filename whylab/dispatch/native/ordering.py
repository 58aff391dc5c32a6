"""Order-dependent operators: cumsum, flip, sort, topk; composites argsort, roll, repeat.

``sort`` and ``topk`` return ``(values, indices)`` named tuples, as torch's
``return_types`` do. ``roll`` (narrow + cat) and ``repeat`` (expand + reshape)
are composites, so their gradients come from the views they use.
"""

from __future__ import annotations

from collections import namedtuple

from whylab._tensor.geometry import wrap_dim
from whylab._tensor.tensor import tensor_method
from whylab.dispatch.native._registry import native
from whylab.dispatch.native.indexing import _cat
from whylab.dispatch.native.shape import _expand, _narrow, _reshape
from whylab.kernels.cpu import ordering as cpu
from whylab.kernels.meta import ordering as meta

#: What ``sort`` and ``topk`` return (torch.return_types.sort / topk have these fields).
SortResult = namedtuple("SortResult", ["values", "indices"])

_cumsum = native(
    "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", cpu.cumsum, meta.cumsum
)
_flip = native("flip(Tensor self, int[] dims) -> Tensor", cpu.flip, meta.flip)
_sort = native(
    "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
    cpu.sort,
    meta.sort,
)
_topk = native(
    "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) "
    "-> (Tensor values, Tensor indices)",
    cpu.topk,
    meta.topk,
)


def cumsum(input, dim, *, dtype=None):
    """Running sums along ``dim``; integers accumulate in int64."""
    from whylab._tensor.dtypes import to_dtype

    return _cumsum(input, dim, None if dtype is None else to_dtype(dtype))


def flip(input, dims):
    """A copy with the order of elements reversed along ``dims``."""
    return _flip(input, (dims,) if isinstance(dims, int) else tuple(dims))


def sort(input, dim=-1, descending=False, stable=False):
    """Sorted values and where they came from, along ``dim`` (stable in every case here)."""
    return SortResult(*_sort(input, dim, descending))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``."""
    return _sort(input, dim, descending)[1]


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    return SortResult(*_topk(input, int(k), dim, largest, sorted))


def roll(input, shifts, dims=None):
    """Shift elements along ``dims`` (cyclically); with no dims, along the flattened tensor."""
    if dims is None:
        return roll(_reshape(input, (-1,)), shifts, 0).reshape(input._sizes)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts and dims must align, got {len(shifts)} and {len(dims)}")
    result = input
    for shift, dim in zip(shifts, dims, strict=True):
        dim = wrap_dim(dim, input.ndim)
        size = result._sizes[dim]
        if size == 0:
            continue
        shift %= size
        if shift:
            tail = _narrow(result, dim, size - shift, shift)
            head = _narrow(result, dim, 0, size - shift)
            result = _cat([tail, head], dim)
    return result


def _repeat_method(self, *sizes):
    """Tile the tensor: ``repeat(2, 1)`` stacks two copies along dim 0."""
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    if len(sizes) < self.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    padded = (1,) * (len(sizes) - self.ndim) + tuple(self._sizes)
    interleaved, expanded, final = [], [], []
    for repeat, size in zip(sizes, padded, strict=True):
        interleaved += [1, size]
        expanded += [repeat, size]
        final.append(repeat * size)
    return _reshape(_expand(_reshape(self, tuple(interleaved)), tuple(expanded)), tuple(final))


tensor_method("cumsum")(cumsum)
tensor_method("flip")(flip)
tensor_method("sort")(sort)
tensor_method("argsort")(argsort)
tensor_method("topk")(topk)
tensor_method("roll")(roll)
tensor_method("repeat")(_repeat_method)


@tensor_method("cumsum_")
def _cumsum_(self, dim, *, dtype=None):
    return self.copy_(cumsum(self, dim, dtype=dtype))
