"""Meta kernels of cumsum, flip, sort and topk: shapes and dtypes only."""

from __future__ import annotations

from whylab._tensor import dtypes
from whylab._tensor.geometry import wrap_dim
from whylab.kernels.cpu import ordering as checks
from whylab.kernels.meta.common import meta_elementwise, meta_empty


def cumsum(self, dim, dtype=None):
    wrap_dim(dim, max(self.ndim, 1))
    return meta_empty(self._sizes, checks.cumsum_dtype(self, dtype))


def flip(self, dims):
    checks.normalize_flip_dims(dims, self.ndim)
    return meta_elementwise("flip", self.dtype, self)


def sort(self, dim=-1, descending=False):
    if self.ndim == 0:
        return meta_empty((), self.dtype), meta_empty((), dtypes.int64)
    wrap_dim(dim, self.ndim)
    return meta_elementwise("sort", self.dtype, self), meta_elementwise("sort", dtypes.int64, self)


def topk(self, k, dim=-1, largest=True, sorted=True):
    checks.check_topk(self, k, dim)
    sizes = list(self._sizes)
    if sizes:
        sizes[wrap_dim(dim, self.ndim)] = k
    return meta_empty(sizes, self.dtype), meta_empty(sizes, dtypes.int64)
