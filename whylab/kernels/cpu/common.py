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

    When every input has exactly row-major strides, PyTorch's rule always gives
    a row-major result (the fast path). Otherwise we compute PyTorch's layout and
    relayout NumPy's result if it differs (NumPy also keeps the inputs' memory
    order, so it rarely does).
    """
    for t in tensors:
        if t._strides != contiguous_strides(t._sizes):
            break
    else:
        if out.flags.c_contiguous:
            return wrap(out, dtype)
        return wrap(np.asarray(out, order="C"), dtype)
    strides = elementwise_strides(out.shape, [(t._sizes, t._strides) for t in tensors])
    if strides == contiguous_strides(out.shape):
        return wrap(np.asarray(out, order="C"), dtype)
    itemsize = out.itemsize
    if tuple(s // itemsize for s in out.strides) == strides and min(out.strides, default=0) >= 0:
        return wrap(out, dtype)
    result = empty_strided(out.shape, strides, dtype)
    np.copyto(result._array, out)
    return result


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
