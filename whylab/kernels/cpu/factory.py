"""Factory kernels (empty, zeros, arange, rand ...) and copies (clone, _to_copy) in NumPy."""

from __future__ import annotations

import math

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.device import to_device
from whylab._tensor.generator import numpy_generator
from whylab._tensor.geometry import (
    contiguous_strides,
    elementwise_strides,
    is_non_overlapping_and_dense,
)
from whylab.kernels.cpu.common import empty_strided as allocate_strided
from whylab.kernels.cpu.common import wrap


def check_size(op: str, size) -> tuple[int, ...]:
    size = tuple(int(s) for s in size)
    for s in size:
        if s < 0:
            raise RuntimeError(
                f"{op}: Trying to create tensor with negative dimension {s}: {list(size)}"
            )
    return size


def _float(dtype):
    return dtype if dtype is not None else dtypes.get_default_dtype()


def empty(size, dtype=None, device=None):
    size = check_size("empty", size)
    return wrap(np.empty(size, dtype=_float(dtype).numpy))


def empty_strided(size, stride, dtype=None, device=None):
    return allocate_strided(check_size("empty_strided", size), tuple(stride), _float(dtype))


def zeros(size, dtype=None, device=None):
    return wrap(np.zeros(check_size("zeros", size), dtype=_float(dtype).numpy))


def ones(size, dtype=None, device=None):
    return wrap(np.ones(check_size("ones", size), dtype=_float(dtype).numpy))


def full_dtype(fill_value, dtype):
    """``full`` infers its dtype from the fill value when none is given."""
    if dtype is not None:
        return dtype
    return dtypes.scalar_dtype(fill_value)


def full(size, fill_value, dtype=None, device=None):
    dtype = full_dtype(fill_value, dtype)
    return wrap(np.full(check_size("full", size), fill_value, dtype=dtype.numpy))


def arange_dtype(start, end, step, dtype):
    if dtype is not None:
        return dtype
    if any(isinstance(v, float) for v in (start, end, step)):
        return dtypes.get_default_dtype()
    return dtypes.int64


def arange_length(start, end, step) -> int:
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("arange: upper bound and larger bound inconsistent with step sign")
    return max(math.ceil((end - start) / step), 0)


def arange(start, end, step=1, dtype=None, device=None):
    dtype = arange_dtype(start, end, step, dtype)
    length = arange_length(start, end, step)
    values = start + np.arange(length, dtype=np.float64) * step
    if not dtype.is_floating_point and all(isinstance(v, int) for v in (start, end, step)):
        values = start + np.arange(length, dtype=np.int64) * step
    return wrap(values.astype(dtype.numpy))


def linspace(start, end, steps, dtype=None, device=None):
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    dtype = _float(dtype)
    if steps == 1:
        return wrap(np.asarray([start], dtype=np.float64).astype(dtype.numpy))
    # Like PyTorch, the step is rounded to the result dtype (double for integers); the
    # first half is filled from the start and the second from the end so both ends are
    # exact; each multiply-add is rounded once, as the fused operation PyTorch uses does.
    compute = dtype.numpy if dtype.is_floating_point else np.dtype(np.float64)
    step = float((compute.type(end) - compute.type(start)) / compute.type(steps - 1))
    index = np.arange(steps, dtype=np.float64)
    halfway = steps // 2
    values = np.where(
        index < halfway,
        float(compute.type(start)) + step * index,
        float(compute.type(end)) - step * (steps - 1 - index),
    )
    return wrap(values.astype(dtype.numpy))


def eye(n, m=None, dtype=None, device=None):
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"eye: n and m must be non-negative, got n={n}, m={m}")
    return wrap(np.eye(n, n if m is None else m, dtype=_float(dtype).numpy))


def rand(size, generator=None, dtype=None, device=None):
    dtype = _float(dtype)
    values = numpy_generator(generator).random(check_size("rand", size), dtype=np.float64)
    return wrap(values.astype(dtype.numpy))


def randn(size, generator=None, dtype=None, device=None):
    dtype = _float(dtype)
    values = numpy_generator(generator).standard_normal(check_size("randn", size))
    return wrap(values.astype(dtype.numpy))


def randint(low, high, size, generator=None, dtype=None, device=None):
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    dtype = dtype if dtype is not None else dtypes.int64
    values = numpy_generator(generator).integers(low, high, check_size("randint", size))
    return wrap(values.astype(dtype.numpy))


def preserved_strides(self) -> tuple[int, ...]:
    """Strides of ``empty_like(self)``: same layout when dense, else the same dimension order."""
    if is_non_overlapping_and_dense(self._sizes, self._strides):
        return self._strides
    return elementwise_strides(self._sizes, [(self._sizes, self._strides)])


def clone(self, memory_format=None):
    if memory_format == "contiguous_format":
        return wrap(np.array(self._array, order="C"), self.dtype)
    if self._strides == contiguous_strides(self._sizes):  # NumPy's copy keeps the layout
        return wrap(self._array.copy(), self.dtype)
    result = allocate_strided(self._sizes, preserved_strides(self), self.dtype)
    np.copyto(result._array, self._array)
    return result


def _to_copy(self, dtype=None, device=None):
    target = to_device(device) if device is not None else self.device
    dtype = dtype if dtype is not None else self.dtype
    if target.type == "meta":
        from whylab.kernels.meta.common import meta_empty_strided

        return meta_empty_strided(self._sizes, preserved_strides(self), dtype)
    if target.type != "cpu":
        raise RuntimeError(
            f"_to_copy: whylab has no {target.type} backend yet (only cpu and meta tensors exist)"
        )
    if self._strides == contiguous_strides(self._sizes):  # NumPy's copy keeps the layout
        return wrap(self._array.astype(dtype.numpy), dtype)
    result = allocate_strided(self._sizes, preserved_strides(self), dtype)
    np.copyto(result._array, self._array, casting="unsafe")
    return result
