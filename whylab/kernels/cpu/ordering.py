"""Kernels that depend on the order of elements along a dimension: cumsum, flip, sort, topk.

``sort`` is stable (equal elements keep their order, ascending or descending),
which is what torch's CPU sort gives in practice; ``topk`` returns the k
largest (or smallest) in sorted order, ties broken by position.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.geometry import wrap_dim
from whylab.kernels import rules
from whylab.kernels.cpu.common import wrap_contiguous as wrap
from whylab.kernels.cpu.common import wrap_elementwise


def cumsum_dtype(self, dtype):
    return dtype or rules.reduction_sum_dtype(self.dtype)


def cumsum(self, dim, dtype=None):
    axis = wrap_dim(dim, max(self.ndim, 1))
    out_dtype = cumsum_dtype(self, dtype)
    data = self._array if self.ndim else self._array.reshape(1)
    result = np.cumsum(data, axis=axis, dtype=out_dtype.numpy)
    return wrap(result.reshape(self._sizes), out_dtype)


def normalize_flip_dims(dims, ndim):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = tuple(wrap_dim(d, max(ndim, 1)) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"flip: dims has duplicates, original flip dims={list(dims)}")
    return wrapped


def flip(self, dims):
    axes = normalize_flip_dims(dims, self.ndim)
    flipped = np.flip(self._array, axes) if self.ndim else self._array.copy()
    # the input's layout, as torch's flip keeps it (a transposed input gives a transposed result)
    return wrap_elementwise(flipped, self.dtype, (self,))


def _order(values: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable ascending or descending order along ``axis``."""
    if not descending:
        return np.argsort(values, axis=axis, kind="stable")
    if values.dtype == np.bool_:
        values = values.astype(np.int8)
    if np.issubdtype(values.dtype, np.unsignedinteger):
        values = values.astype(np.int64)
    # Negating keeps a stable sort stable; NaN (largest in torch's order) must come first.
    keys = -values
    if np.issubdtype(values.dtype, np.floating):
        keys = np.where(np.isnan(values), -np.inf, keys)
    return np.argsort(keys, axis=axis, kind="stable")


def sort(self, dim=-1, descending=False):
    if self.ndim == 0:
        return wrap(self._array.copy(), self.dtype), wrap(np.zeros((), np.int64), dtypes.int64)
    axis = wrap_dim(dim, self.ndim)
    indices = _order(self._array, axis, descending)
    values = np.take_along_axis(self._array, indices, axis)
    # values and indices in the input's layout, as torch's sort gives them
    return (
        wrap_elementwise(values, self.dtype, (self,)),
        wrap_elementwise(indices.astype(np.int64), dtypes.int64, (self,)),
    )


def check_topk(self, k, dim) -> int:
    size = self._sizes[wrap_dim(dim, self.ndim)] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"topk: k ({k}) must be between 0 and the size of dim {dim} ({size})")
    return size


def topk(self, k, dim=-1, largest=True, sorted=True):
    check_topk(self, k, dim)
    if self.ndim == 0:
        return sort(self)
    axis = wrap_dim(dim, self.ndim)
    indices = np.take(_order(self._array, axis, largest), np.arange(k), axis=axis)
    values = np.take_along_axis(self._array, indices, axis)
    return wrap(values, self.dtype), wrap(indices.astype(np.int64), dtypes.int64)
