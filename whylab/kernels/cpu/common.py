"""Helpers shared by the NumPy kernels: wrapping results, scalars, views and layouts."""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.device import CPU
from whylab._tensor.geometry import contiguous_strides, elementwise_strides
from whylab._tensor.storage import Storage
from whylab._tensor.tensor import Tensor

wrap = Tensor._from_numpy_result


def wrap_contiguous(array: np.ndarray, dtype=None) -> Tensor:
    """Wrap a result as a row-major tensor (what PyTorch gives for reductions, gathers ...)."""
    return wrap(np.asarray(array, order="C"), dtype)


def empty_strided(sizes, strides, dtype) -> Tensor:
    """A fresh CPU tensor with the given sizes and strides."""
    sizes, strides = tuple(sizes), tuple(strides)
    extent = 1
    for size, stride in zip(sizes, strides, strict=True):
        if size == 0:
            extent = 0
            break
        extent += (size - 1) * stride
    data = np.empty(extent, dtype=dtype.numpy)
    itemsize = dtype.itemsize
    array = np.ndarray(sizes, dtype.numpy, data, 0, tuple(s * itemsize for s in strides))
    return Tensor._make(Storage(data, dtype, CPU), sizes, strides, 0, array)


def wrap_elementwise(out: np.ndarray, dtype, tensors) -> Tensor:
    """Wrap an elementwise result so that its layout is the one PyTorch would give.

    NumPy already keeps the memory order of its inputs; we only check it against
    PyTorch's rule when some input is not contiguous, and relayout on mismatch.
    """
    if out.flags.c_contiguous:
        for t in tensors:
            if not t._array.flags.c_contiguous:
                break
        else:
            return wrap(out, dtype)
    strides = elementwise_strides(out.shape, [(t._sizes, t._strides) for t in tensors])
    if strides == contiguous_strides(out.shape):
        return wrap(np.asarray(out, order="C"), dtype)
    itemsize = out.itemsize
    if tuple(s // itemsize for s in out.strides) == strides and min(out.strides, default=0) >= 0:
        return wrap(out, dtype)
    result = empty_strided(out.shape, strides, dtype)
    np.copyto(result._array, out)
    return result


def scalar_for(value, dtype):
    """A Python number as a NumPy scalar of the computation dtype."""
    return dtype.numpy.type(value)


def to_numpy_dtype(array: np.ndarray, dtype) -> np.ndarray:
    """``array`` converted to ``dtype`` if it is not already of it."""
    if array.dtype != dtype.numpy:
        return array.astype(dtype.numpy)
    return array


def from_python(data, dtype=None) -> Tensor:
    """A new CPU tensor from nested Python data (the work of ``whylab.tensor``)."""
    if dtype is None:
        array = np.array(data)
        if array.dtype.kind == "f":
            array = array.astype(dtypes.get_default_dtype().numpy)
        elif array.dtype.kind in "iu":
            array = array.astype(np.int64)
        elif array.dtype.kind == "O":
            raise TypeError(f"tensor: could not infer dtype of {type(data).__name__}")
    else:
        array = np.array(data, dtype=dtype.numpy)
    return wrap(np.asarray(array, order="C"))
