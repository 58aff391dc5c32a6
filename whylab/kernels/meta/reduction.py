"""Meta kernels of reductions: the reduced shape (kept as 1 with keepdim) and the dtype."""

from __future__ import annotations

from whylab._tensor import dtypes
from whylab._tensor.geometry import wrap_dim
from whylab.kernels import rules
from whylab.kernels.cpu.reduction import normalize_dims
from whylab.kernels.meta.common import meta_empty


def reduced_shape(sizes, dims, keepdim):
    if dims is None:
        dims = range(len(sizes))
    if keepdim:
        return tuple(1 if d in dims else s for d, s in enumerate(sizes))
    return tuple(s for d, s in enumerate(sizes) if d not in dims)


def _reduce(op, self, dim, keepdim, dtype):
    dims = normalize_dims(op, dim, self.ndim)
    return meta_empty(reduced_shape(self._sizes, dims, keepdim), dtype)


def sum(self, dim=None, keepdim=False, dtype=None):
    return _reduce("sum", self, dim, keepdim, dtype or rules.reduction_sum_dtype(self.dtype))


def prod(self, dim=None, keepdim=False, dtype=None):
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return _reduce("prod", self, dim, keepdim, dtype or rules.reduction_sum_dtype(self.dtype))


def mean(self, dim=None, keepdim=False, dtype=None):
    out_dtype = dtype or self.dtype
    rules.check_floating("mean", out_dtype)
    return _reduce("mean", self, dim, keepdim, out_dtype)


def amax(self, dim=(), keepdim=False):
    return _reduce("amax", self, dim, keepdim, self.dtype)


def amin(self, dim=(), keepdim=False):
    return _reduce("amin", self, dim, keepdim, self.dtype)


def max(self):
    return meta_empty((), self.dtype)


def min(self):
    return meta_empty((), self.dtype)


def _arg(op, self, dim, keepdim):
    if dim is None:
        shape = (1,) * self.ndim if keepdim else ()
        return meta_empty(shape, dtypes.int64)
    d = wrap_dim(dim, self.ndim, op)
    return meta_empty(reduced_shape(self._sizes, (d,) if self.ndim else (), keepdim), dtypes.int64)


def argmax(self, dim=None, keepdim=False):
    return _arg("argmax", self, dim, keepdim)


def argmin(self, dim=None, keepdim=False):
    return _arg("argmin", self, dim, keepdim)


def max_dim(self, dim, keepdim=False):
    return (_reduce("max", self, dim, keepdim, self.dtype), _arg("max", self, dim, keepdim))


def min_dim(self, dim, keepdim=False):
    return (_reduce("min", self, dim, keepdim, self.dtype), _arg("min", self, dim, keepdim))


def var(self, dim=None, correction=1, keepdim=False):
    rules.check_floating("var", self.dtype)
    return _reduce("var", self, dim, keepdim, self.dtype)


def std(self, dim=None, correction=1, keepdim=False):
    rules.check_floating("std", self.dtype)
    return _reduce("std", self, dim, keepdim, self.dtype)


def logsumexp(self, dim, keepdim=False):
    return _reduce("logsumexp", self, dim, keepdim, rules.float_dtype(self.dtype))


def softmax(self, dim, dtype=None):
    out_dtype = dtype or self.dtype
    rules.check_floating("softmax", out_dtype)
    wrap_dim(dim, self.ndim, "softmax")
    return meta_empty(self._sizes, out_dtype)


def log_softmax(self, dim, dtype=None):
    out_dtype = dtype or self.dtype
    rules.check_floating("log_softmax", out_dtype)
    wrap_dim(dim, self.ndim, "log_softmax")
    return meta_empty(self._sizes, out_dtype)
