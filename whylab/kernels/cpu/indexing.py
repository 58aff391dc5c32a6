"""Gathering and scattering in NumPy: advanced indexing (index, index_put_), cat, gather,
scatter_add, index_select, one_hot, tril/triu, nonzero. These all copy."""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.geometry import (
    broadcast_all,
    contiguous_strides,
    elementwise_strides,
    format_shape,
    wrap_dim,
)
from whylab._tensor.tensor import Tensor
from whylab.kernels import views
from whylab.kernels.cpu.common import empty_strided
from whylab.kernels.cpu.common import wrap_contiguous as wrap
from whylab.kernels.cpu.inplace import check_no_internal_overlap, masked_fill_


def check_index_dtypes(indices) -> None:
    for index in indices:
        if index is not None and index.dtype not in (dtypes.int64, dtypes.int32, dtypes.bool_):
            raise IndexError(
                f"index: tensors used as indices must be long, int or bool tensors, got "
                f"{index.dtype.name}"
            )


def numpy_index(self: Tensor, indices) -> tuple:
    """The NumPy index tuple for PyTorch's list of per-dimension index tensors."""
    check_index_dtypes(indices)
    position = 0
    for index in indices:
        if index is None:
            position += 1
            continue
        span = index.ndim if index.dtype is dtypes.bool_ else 1
        if index.dtype is dtypes.bool_:
            mask_shape = self._sizes[position : position + span]
            if tuple(index._sizes) != tuple(mask_shape):
                raise IndexError(
                    f"The shape of the mask {format_shape(index._sizes)} at index {position} does "
                    f"not match the shape of the indexed tensor {format_shape(self._sizes)} at "
                    f"index {position}"
                )
        position += span
    if position > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {position})")
    return tuple(slice(None) if index is None else index._array for index in indices)


def _translate_index_error(error: Exception, self: Tensor):
    message = str(error).replace("axis", "dimension").replace("arrays", "tensors")
    return IndexError(f"index: {message} (indexed tensor shape {format_shape(self._sizes)})")


def index_strides(self, indices, result_shape, mask_counts=()):
    """Strides PyTorch gives an advanced-indexing result (shared with the meta kernel).

    PyTorch computes ``index`` with a TensorIterator over the source "restrided"
    so that the indexed dimensions have stride 0, plus the index tensors; the
    output therefore keeps the source's memory order in the other dimensions.
    A boolean mask of k dimensions counts as k index tensors of its nonzero count.
    """
    entries = []
    counts = iter(mask_counts)
    for index in indices:
        if index is None:
            entries.append(None)
        elif index.dtype is dtypes.bool_:
            count = next(counts)
            entries.extend([((count,), (1,))] * index.ndim)
        else:
            entries.append((index._sizes, index._strides))
    entries += [None] * (self.ndim - len(entries))
    positions = [d for d, entry in enumerate(entries) if entry is not None]
    index_shape = broadcast_all([entries[d][0] for d in positions], "index")
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    if adjacent:
        kept_before = [d for d in range(positions[0])]
        kept_after = [d for d in range(positions[-1] + 1, self.ndim)]
    else:
        kept_before = []
        kept_after = [d for d in range(self.ndim) if d not in positions]
    source_strides = (
        [self._strides[d] for d in kept_before]
        + [0] * len(index_shape)
        + [self._strides[d] for d in kept_after]
    )
    operands = [(tuple(result_shape), tuple(source_strides))]
    for d in positions:
        sizes, strides = entries[d]
        pad = len(index_shape) - len(sizes)
        operands.append(
            (
                (1,) * (len(kept_before) + pad) + tuple(sizes) + (1,) * len(kept_after),
                (0,) * (len(kept_before) + pad) + tuple(strides) + (0,) * len(kept_after),
            )
        )
    return elementwise_strides(tuple(result_shape), operands)


def index(self, indices):
    key = numpy_index(self, indices)
    try:
        out = self._array[key]
    except IndexError as error:
        raise _translate_index_error(error, self) from None
    mask_counts = [
        int(np.count_nonzero(i._array))
        for i in indices
        if i is not None and i.dtype is dtypes.bool_
    ]
    strides = index_strides(self, indices, out.shape, mask_counts)
    if strides == contiguous_strides(out.shape):
        return wrap(np.array(out, copy=True), self.dtype)
    result = empty_strided(out.shape, strides, self.dtype)
    np.copyto(result._array, out)
    return result


def index_put_(self, indices, values, accumulate=False):
    key = numpy_index(self, indices)
    check_no_internal_overlap("index_put_", self)
    source = values._array if isinstance(values, Tensor) else values
    try:
        if accumulate:
            np.add.at(self._array, key, source)
        else:
            self._array[key] = source
    except IndexError as error:
        raise _translate_index_error(error, self) from None
    except ValueError as error:
        raise RuntimeError(
            f"index_put_: shape mismatch: value tensor of shape "
            f"{format_shape(getattr(values, '_sizes', ()))} cannot be broadcast to the indexed "
            f"shape ({error})"
        ) from None
    return self


def cat_result(tensors, dim):
    """The dtype, the concatenation dim and the result shape of ``cat`` (shared with meta)."""
    if len(tensors) == 0:
        raise ValueError("cat(): expected a non-empty list of Tensors")
    dtype = dtypes.result_type(*tensors)
    # PyTorch still skips legacy empty 1-D tensors of shape [0].
    kept = [t for t in tensors if not (t.ndim == 1 and t._sizes[0] == 0)]
    if not kept:
        return dtype, 0, (0,), kept
    reference = kept[0]
    if reference.ndim == 0:
        raise RuntimeError("cat(): zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, reference.ndim, "cat")
    total = 0
    for number, t in enumerate(kept):
        if t.ndim != reference.ndim:
            raise RuntimeError(
                f"cat(): Tensors must have same number of dimensions: got {reference.ndim} and "
                f"{t.ndim}"
            )
        for axis in range(reference.ndim):
            if axis != d and t._sizes[axis] != reference._sizes[axis]:
                raise RuntimeError(
                    f"cat(): Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{reference._sizes[axis]} but got size {t._sizes[axis]} for tensor number "
                    f"{number} in the list."
                )
        total += t._sizes[d]
    shape = reference._sizes[:d] + (total,) + reference._sizes[d + 1 :]
    return dtype, d, shape, kept


def cat(tensors, dim=0):
    dtype, d, shape, kept = cat_result(tensors, dim)
    if not kept:
        return wrap(np.empty((0,), dtype=dtype.numpy), dtype)
    arrays = [t._array for t in kept]
    return wrap(np.concatenate(arrays, axis=d, dtype=dtype.numpy, casting="unsafe"), dtype)


def stack_pieces(tensors, dim):
    """``stack``'s checks, and its inputs each viewed with a new size-1 dimension at
    ``dim``, ready for ``cat`` (shared with meta)."""
    if len(tensors) == 0:
        raise ValueError("stack expects a non-empty TensorList")
    first = tensors[0]
    for entry, t in enumerate(tensors):
        if t._sizes != first._sizes:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first._sizes)} at "
                f"entry 0 and {list(t._sizes)} at entry {entry}"
            )
    d = wrap_dim(dim, first.ndim + 1, "stack")
    return [views.unsqueeze(t, d) for t in tensors], d


def stack(tensors, dim=0):
    pieces, d = stack_pieces(tensors, dim)
    return cat(pieces, d)


def masked_fill_shape(self, mask):
    """The shape of ``masked_fill``'s result: ``self`` broadcast with ``mask`` (shared with
    meta)."""
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}"
        )
    return broadcast_all([self._sizes, mask._sizes], "masked_fill")


def masked_fill(self, mask, value):
    """A row-major copy of ``self`` (broadcast with ``mask``), then ``masked_fill_``, as in
    torch (one node, ``MaskedFillBackward0``)."""
    shape = masked_fill_shape(self, mask)
    out = wrap(np.array(np.broadcast_to(self._array, shape), order="C"), self.dtype)
    return masked_fill_(out, mask, value)


def check_gather(op: str, self, dim, index) -> int:
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")
    d = wrap_dim(dim, self.ndim, op)
    if index.ndim != self.ndim and not (index.ndim <= 1 and self.ndim <= 1):
        raise RuntimeError(
            f"{op}(): Index tensor must have the same number of dimensions as input tensor"
        )
    for axis in range(index.ndim):
        if axis != d and index._sizes[axis] > self._sizes[axis]:
            raise RuntimeError(
                f"{op}(): Size does not match at dimension {axis} expected index "
                f"{format_shape(index._sizes)} to be no larger than self "
                f"{format_shape(self._sizes)} apart from dimension {d}"
            )
    return d


def _check_range(op: str, index: np.ndarray, size: int) -> None:
    if index.size and (index.min() < -size or index.max() >= size):
        bad = index.max() if index.max() >= size else index.min()
        raise RuntimeError(f"{op}(): index {bad} is out of bounds for dimension with size {size}")


def gather(self, dim, index, sparse_grad=False):
    d = check_gather("gather", self, dim, index)
    if self.ndim == 0:
        return wrap(
            self._array.reshape(()).copy()
            if index.ndim == 0
            else np.broadcast_to(self._array, index._sizes).copy(),
            self.dtype,
        )
    _check_range("gather", index._array, self._sizes[d])
    region = tuple(
        slice(None) if axis == d else slice(0, index._sizes[axis]) for axis in range(self.ndim)
    )
    return wrap(np.take_along_axis(self._array[region], index._array, axis=d), self.dtype)


def _scatter_coordinates(dim, index):
    coordinates = list(np.indices(index._sizes, sparse=True))
    coordinates[dim] = index._array
    return tuple(coordinates)


def scatter_add_(self, dim, index, src):
    d = check_gather("scatter_add", self, dim, index)
    check_no_internal_overlap("scatter_add_", self)
    if index.numel() == 0:
        return self
    _check_range("scatter_add", index._array, self._sizes[d] if self.ndim else 1)
    region = tuple(slice(0, size) for size in index._sizes)
    source = src._array[region] if isinstance(src, Tensor) else src
    np.add.at(self._array, _scatter_coordinates(d, index), source)
    return self


def scatter_add(self, dim, index, src):
    result = wrap(self._array.copy(), self.dtype)
    return scatter_add_(result, dim, index, src)


def scatter_(self, dim, index, src):
    d = check_gather("scatter", self, dim, index)
    check_no_internal_overlap("scatter_", self)
    if index.numel() == 0:
        return self
    _check_range("scatter", index._array, self._sizes[d] if self.ndim else 1)
    region = tuple(slice(0, size) for size in index._sizes)
    source = src._array[region] if isinstance(src, Tensor) else src
    self._array[_scatter_coordinates(d, index)] = source
    return self


def scatter(self, dim, index, src):
    result = wrap(self._array.copy(), self.dtype)
    return scatter_(result, dim, index, src)


def check_index_select(self, dim, index) -> int:
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise IndexError("index_select(): Expected dtype int32/int64 for index")
    return wrap_dim(dim, self.ndim, "index_select")


def index_select(self, dim, index):
    d = check_index_select(self, dim, index)
    if self.ndim == 0:
        return wrap(np.broadcast_to(self._array, index._sizes or ()).copy(), self.dtype)
    _check_range("index_select", index._array, self._sizes[d])
    return wrap(np.take(self._array, index._array.reshape(-1), axis=d), self.dtype)


def one_hot(self, num_classes=-1):
    if self.dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    values = self._array
    if values.size and values.min() < 0:
        raise RuntimeError("one_hot: Class values must be non-negative.")
    if num_classes == -1:
        if values.size == 0:
            raise RuntimeError("one_hot: Can not infer total number of classes from empty tensor.")
        num_classes = int(values.max()) + 1
    elif values.size and values.max() >= num_classes:
        raise RuntimeError("one_hot: Class values must be smaller than num_classes.")
    out = np.zeros(self._sizes + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, values[..., None], 1, axis=-1)
    return wrap(out, dtypes.int64)


def _check_matrix(op: str, self):
    if self.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")


def tril(self, diagonal=0):
    _check_matrix("tril", self)
    return wrap(np.tril(self._array, diagonal), self.dtype)


def triu(self, diagonal=0):
    _check_matrix("triu", self)
    return wrap(np.triu(self._array, diagonal), self.dtype)


def nonzero(self):
    coordinates = np.nonzero(self._array) if self.ndim else np.nonzero(self._array.reshape(1))
    if not self.ndim:
        return wrap(np.zeros((len(coordinates[0]), 0), dtype=np.int64), dtypes.int64)
    # one row per dimension, seen transposed: torch's (n, ndim) result has strides (1, n)
    rows = wrap(np.asarray(np.stack(coordinates), dtype=np.int64), dtypes.int64)
    return views.t(rows)


def masked_select(self, mask):
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {mask.dtype.name}")
    try:
        values, selector = np.broadcast_arrays(self._array, mask._array)
    except ValueError:
        from whylab._tensor.geometry import broadcast_shapes

        broadcast_shapes(self._sizes, mask._sizes, "masked_select")
        raise
    return wrap(np.asarray(values[selector], order="C"), self.dtype)
