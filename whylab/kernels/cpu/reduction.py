"""Reduction NumPy kernels: sum, mean, prod, max/min, argmax, var/std, logsumexp, softmax.

``dim`` may be None (reduce everything), an int, or a tuple/list of ints; an
empty tuple also reduces everything, as PyTorch does for ``sum``.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.geometry import wrap_dim, wrap_dims
from whylab._tensor.tensor import Tensor
from whylab.kernels import rules
from whylab.kernels.cpu.common import wrap_contiguous as wrap


def normalize_dims(op: str, dim, ndim: int):
    """The reduced dimensions as a tuple of non-negative ints (None: all)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (wrap_dim(dim, ndim, op),)
    if len(dim) == 0:
        return None
    return wrap_dims(tuple(dim), ndim, op)


def _axis(dims, ndim):
    """NumPy's ``axis`` for our dims; a 0-dim tensor has nothing to reduce over."""
    if ndim == 0:
        return None
    return dims


def _finish(out, dtype):
    # Reductions give row-major results; NumPy may return a scalar for full reductions.
    return Tensor._from_numpy_result(np.asarray(out, dtype=dtype.numpy, order="C"), dtype)


def sum(self, dim=None, keepdim=False, dtype=None):
    ndim = len(self._sizes)
    dims = None if dim is None else normalize_dims("sum", dim, ndim)
    out_dtype = dtype if dtype is not None else rules.reduction_sum_dtype(self.dtype)
    out = np.add.reduce(
        self._array, axis=_axis(dims, ndim), dtype=out_dtype.numpy, keepdims=keepdim
    )
    return _finish(out, out_dtype)


def prod(self, dim=None, keepdim=False, dtype=None):
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    dims = normalize_dims("prod", dim, self.ndim)
    out_dtype = dtype if dtype is not None else rules.reduction_sum_dtype(self.dtype)
    out = np.multiply.reduce(
        self._array, axis=_axis(dims, self.ndim), dtype=out_dtype.numpy, keepdims=keepdim
    )
    return _finish(out, out_dtype)


def mean(self, dim=None, keepdim=False, dtype=None):
    out_dtype = dtype if dtype is not None else self.dtype
    rules.check_floating("mean", out_dtype)
    dims = normalize_dims("mean", dim, self.ndim)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.mean(
            self._array, axis=_axis(dims, self.ndim), keepdims=keepdim, dtype=out_dtype.numpy
        )
    return _finish(out, out_dtype)


def _check_nonempty(op: str, self, dims):
    if self.numel() != 0:
        return
    reduced = range(self.ndim) if dims is None else dims
    if dims is None or any(self._sizes[d] == 0 for d in reduced):
        raise IndexError(
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
            if dims is None
            else f"{op}(): Expected reduction dim {reduced[0]} to have non-zero size."
        )


def amax(self, dim=(), keepdim=False):
    dims = normalize_dims("amax", dim, self.ndim)
    _check_nonempty("amax", self, dims)
    out = np.max(self._array, axis=_axis(dims, self.ndim), keepdims=keepdim)
    return _finish(out, self.dtype)


def amin(self, dim=(), keepdim=False):
    dims = normalize_dims("amin", dim, self.ndim)
    _check_nonempty("amin", self, dims)
    out = np.min(self._array, axis=_axis(dims, self.ndim), keepdims=keepdim)
    return _finish(out, self.dtype)


def _arg_reduce(op: str, numpy_arg, self, dim, keepdim):
    if dim is None:
        _check_nonempty(op, self, None)
        flat = self._array.reshape(-1)
        index = numpy_arg(flat)
        out = np.asarray(index, dtype=np.int64)
        if keepdim:
            out = out.reshape((1,) * self.ndim)
        return wrap(out, dtypes.int64)
    d = wrap_dim(dim, self.ndim, op)
    _check_nonempty(op, self, (d,))
    if self.ndim == 0:
        return wrap(np.asarray(0, dtype=np.int64), dtypes.int64)
    out = numpy_arg(self._array, axis=d, keepdims=keepdim)
    return wrap(np.asarray(out, dtype=np.int64), dtypes.int64)


def argmax(self, dim=None, keepdim=False):
    return _arg_reduce("argmax", np.argmax, self, dim, keepdim)


def argmin(self, dim=None, keepdim=False):
    return _arg_reduce("argmin", np.argmin, self, dim, keepdim)


def max_dim(self, dim, keepdim=False):
    """``max(dim)``: the values and the index of the first maximum along ``dim``."""
    return (amax(self, dim, keepdim), argmax(self, dim, keepdim))


def min_dim(self, dim, keepdim=False):
    return (amin(self, dim, keepdim), argmin(self, dim, keepdim))


def max(self):
    return amax(self, None)


def min(self):
    return amin(self, None)


def var(self, dim=None, correction=1, keepdim=False):
    rules.check_floating("var", self.dtype)
    dims = normalize_dims("var", dim, self.ndim)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = _variance(self._array, _axis(dims, self.ndim), correction, keepdim)
    return _finish(out, self.dtype)


def std(self, dim=None, correction=1, keepdim=False):
    rules.check_floating("std", self.dtype)
    dims = normalize_dims("std", dim, self.ndim)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.sqrt(_variance(self._array, _axis(dims, self.ndim), correction, keepdim))
    return _finish(out, self.dtype)


def _variance(array, axis, correction, keepdim):
    """Variance with divisor ``N - correction``, clamped at 0 like PyTorch (N <= correction
    gives inf or nan, as there)."""
    count = array.size if axis is None else int(np.prod([array.shape[a] for a in axis]))
    mean = np.mean(array, axis=axis, keepdims=True)
    squares = np.sum(np.square(array - mean), axis=axis, keepdims=keepdim)
    divisor = count - correction
    if divisor <= 0:
        return squares / np.asarray(0, dtype=array.dtype)
    return squares / divisor


def logsumexp(self, dim, keepdim=False):
    dtype = rules.float_dtype(self.dtype)
    dims = normalize_dims("logsumexp", dim, self.ndim)
    array = self._array.astype(dtype.numpy, copy=False)
    axis = _axis(dims, self.ndim)
    if array.size == 0:
        out = np.log(np.sum(np.exp(array), axis=axis, keepdims=keepdim))
        return _finish(out, dtype)
    biggest = np.max(array, axis=axis, keepdims=True)
    biggest = np.where(np.isfinite(biggest), biggest, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(array - biggest), axis=axis, keepdims=True)) + biggest
    if not keepdim:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return _finish(out, dtype)


def softmax(self, dim, dtype=None):
    out_dtype = dtype if dtype is not None else self.dtype
    rules.check_floating("softmax", out_dtype)
    d = wrap_dim(dim, self.ndim, "softmax")
    array = self._array.astype(out_dtype.numpy, copy=False)
    if self.ndim == 0:
        return wrap(np.ones((), dtype=out_dtype.numpy), out_dtype)
    shifted = array - np.max(array, axis=d, keepdims=True)
    exps = np.exp(shifted)
    return wrap(exps / np.sum(exps, axis=d, keepdims=True), out_dtype)


def log_softmax(self, dim, dtype=None):
    out_dtype = dtype if dtype is not None else self.dtype
    rules.check_floating("log_softmax", out_dtype)
    ndim = len(self._sizes)
    d = wrap_dim(dim, ndim, "log_softmax")
    array = self._array.astype(out_dtype.numpy, copy=False)
    if ndim == 0:
        return wrap(np.zeros((), dtype=out_dtype.numpy), out_dtype)
    shifted = array - np.max(array, axis=d, keepdims=True)
    out = shifted - np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))
    return wrap(out, out_dtype)
