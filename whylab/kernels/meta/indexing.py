"""Meta kernels of the gather/scatter ops. Data-dependent shapes (bool masks, nonzero)
cannot be known without data and raise, as they do on PyTorch's meta device."""

from __future__ import annotations

from whylab._tensor import dtypes
from whylab._tensor.geometry import broadcast_all
from whylab.kernels.cpu import indexing as cpu
from whylab.kernels.meta.common import meta_empty, meta_empty_strided


def _data_dependent(op: str):
    raise NotImplementedError(
        f"{op}: the result shape depends on the data, which meta tensors do not have"
    )


def index(self, indices):
    cpu.check_index_dtypes(indices)
    if any(i is not None and i.dtype is dtypes.bool_ for i in indices):
        _data_dependent("index with a boolean mask")
    positions = [d for d, i in enumerate(indices) if i is not None]
    broadcast = broadcast_all([indices[d]._sizes for d in positions], "index")
    rest_before = [self._sizes[d] for d in range(self.ndim) if d < positions[0]]
    rest_after = [self._sizes[d] for d in range(self.ndim) if d > positions[-1]]
    between = [self._sizes[d] for d in range(positions[0], positions[-1] + 1) if d not in positions]
    adjacent = positions == list(range(positions[0], positions[-1] + 1))
    if adjacent:
        shape = tuple(rest_before) + broadcast + tuple(rest_after)
    else:
        shape = broadcast + tuple(rest_before + between + rest_after)
    return meta_empty_strided(shape, cpu.index_strides(self, indices, shape), self.dtype)


def index_put_(self, indices, values, accumulate=False):
    return self


def cat(tensors, dim=0):
    dtype, _, shape, _ = cpu.cat_result(tensors, dim)
    return meta_empty(shape, dtype)


def stack(tensors, dim=0):
    pieces, d = cpu.stack_pieces(tensors, dim)
    return cat(pieces, d)


def masked_fill(self, mask, value):
    return meta_empty(cpu.masked_fill_shape(self, mask), self.dtype)


def gather(self, dim, index, sparse_grad=False):
    cpu.check_gather("gather", self, dim, index)
    return meta_empty(index._sizes, self.dtype)


def scatter_add(self, dim, index, src):
    cpu.check_gather("scatter_add", self, dim, index)
    return meta_empty(self._sizes, self.dtype)


scatter = scatter_add


def scatter_add_(self, dim, index, src):
    cpu.check_gather("scatter_add", self, dim, index)
    return self


scatter_ = scatter_add_


def index_select(self, dim, index):
    d = cpu.check_index_select(self, dim, index)
    if self.ndim == 0:
        return meta_empty(index._sizes, self.dtype)
    return meta_empty(self._sizes[:d] + (index.numel(),) + self._sizes[d + 1 :], self.dtype)


def one_hot(self, num_classes=-1):
    if num_classes == -1:
        _data_dependent("one_hot without num_classes")
    return meta_empty(self._sizes + (num_classes,), dtypes.int64)


def tril(self, diagonal=0):
    return meta_empty(self._sizes, self.dtype)


triu = tril


def nonzero(self):
    _data_dependent("nonzero")


def masked_select(self, mask):
    _data_dependent("masked_select")
