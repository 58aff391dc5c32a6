"""The hand-written parts of the ordering family: ``sort``/``topk`` (named tuples),
``argsort``, ``flip`` with one int, and the composites ``roll`` (narrow + cat) and
``repeat`` (expand + reshape), whose gradients come from the views they use.

Schemas, kernels and names: ``whylab/dispatch/native_functions.py``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from whylab._tensor.geometry import wrap_dim
from whylab.dispatch.native._registry import numpy_names
from whylab.dispatch.native.factory import from_numpy
from whylab.dispatch.operator import ops

#: What ``sort`` and ``topk`` return (torch.return_types.sort / topk have these fields).
SortResult = namedtuple("SortResult", ["values", "indices"])


def flip(input, dims):
    """A copy with the order of elements reversed along ``dims`` (an int or a sequence)."""
    return ops.flip(input, (dims,) if isinstance(dims, int) else tuple(dims))


def flip_method(self, *dims):
    """``t.flip(0, 1)`` or ``t.flip((0, 1))``."""
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = dims[0]
    return flip(self, dims)


def sort(input, dim=-1, descending=False, stable=False, **numpy_keywords):
    """Sorted values and where they came from, along ``dim`` (stable in every case here)."""
    if numpy_keywords:
        dim = numpy_names("sort", numpy_keywords, dim, -1)
    return SortResult(*ops.sort(input, dim, descending))


def argsort(input, dim=-1, descending=False, stable=False, **numpy_keywords):
    """The indices that sort ``input`` along ``dim``."""
    if numpy_keywords:
        dim = numpy_names("argsort", numpy_keywords, dim, -1)
    return ops.sort(input, dim, descending)[1]


def topk(input, k, dim=-1, largest=True, sorted=True, **numpy_keywords):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""
    if numpy_keywords:
        dim = numpy_names("topk", numpy_keywords, dim, -1)
    return SortResult(*ops.topk(input, int(k), dim, largest, sorted))


def cumsum_(self, dim, *, dtype=None):
    """``cumsum`` written back into ``self``."""
    return self.copy_(self.cumsum(dim, dtype=dtype))


def roll(input, shifts, dims=None):
    """Shift elements along ``dims`` (cyclically); with no dims, along the flattened tensor."""
    if dims is None:
        return roll(ops.reshape(input, (-1,)), shifts, 0).reshape(input._sizes)
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
            tail = ops.narrow(result, dim, size - shift, shift)
            head = ops.narrow(result, dim, 0, size - shift)
            result = ops.cat([tail, head], dim)
    return result


def repeat(self, *sizes):
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
    for repeat_count, size in zip(sizes, padded, strict=True):
        interleaved += [1, size]
        expanded += [repeat_count, size]
        final.append(repeat_count * size)
    interleaved_view = ops.reshape(self, tuple(interleaved))
    return ops.reshape(ops.expand(interleaved_view, tuple(expanded)), tuple(final))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times along ``dim`` (the flattened input without one).

    Composed as ``index_select`` with the repeated element numbers (IndexSelectBackward0).
    Deviation: for an int ``repeats`` torch expands and reshapes instead (its graph shows
    ViewBackward0); the values and gradients are the same. ``repeat_interleave(counts)``
    alone repeats ``0 .. len(counts)-1``.
    """
    if repeats is None:  # torch.repeat_interleave(repeats): the indices, repeated
        counts = np.asarray(input.numpy(), dtype=np.int64)
        return from_numpy(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input, dim = ops.reshape(input, (-1,)), 0
    dim = wrap_dim(dim, input.ndim)
    size = input._sizes[dim]
    counts = repeats.numpy() if hasattr(repeats, "numpy") else repeats
    counts = np.broadcast_to(np.asarray(counts, dtype=np.int64), (size,))
    if (counts < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    index = np.repeat(np.arange(size, dtype=np.int64), counts)
    if output_size is not None and output_size != index.size:
        raise RuntimeError(f"repeat_interleave: output_size {output_size} != {index.size}")
    return ops.index_select(input, dim, from_numpy(index))
