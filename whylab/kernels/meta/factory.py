"""Meta kernels of the factories and copies: a shape and a dtype, no data."""

from __future__ import annotations

from whylab._tensor import dtypes
from whylab._tensor.device import to_device
from whylab.kernels.cpu import factory as cpu
from whylab.kernels.meta.common import meta_empty, meta_empty_strided


def _float(dtype):
    return dtype if dtype is not None else dtypes.get_default_dtype()


def empty(size, dtype=None, device=None):
    return meta_empty(cpu.check_size("empty", size), _float(dtype))


zeros = ones = empty


def empty_strided(size, stride, dtype=None, device=None):
    return meta_empty_strided(cpu.check_size("empty_strided", size), stride, _float(dtype))


def full(size, fill_value, dtype=None, device=None):
    return meta_empty(cpu.check_size("full", size), cpu.full_dtype(fill_value, dtype))


def arange(start, end, step=1, dtype=None, device=None):
    dtype = cpu.arange_dtype(start, end, step, dtype)
    return meta_empty((cpu.arange_length(start, end, step),), dtype)


def linspace(start, end, steps, dtype=None, device=None):
    return meta_empty((steps,), _float(dtype))


def eye(n, m=None, dtype=None, device=None):
    return meta_empty((n, n if m is None else m), _float(dtype))


def rand(size, generator=None, dtype=None, device=None):
    return meta_empty(cpu.check_size("rand", size), _float(dtype))


randn = rand


def randint(low, high, size, generator=None, dtype=None, device=None):
    return meta_empty(cpu.check_size("randint", size), dtype or dtypes.int64)


def clone(self, memory_format=None):
    if memory_format == "contiguous_format":
        return meta_empty(self._sizes, self.dtype)
    return meta_empty_strided(self._sizes, cpu.preserved_strides(self), self.dtype)


def _to_copy(self, dtype=None, device=None):
    target = to_device(device) if device is not None else self.device
    if target.type != "meta":
        raise NotImplementedError(
            f"_to_copy: Cannot copy out of meta tensor; no data! (to {target.type})"
        )
    return meta_empty_strided(self._sizes, cpu.preserved_strides(self), dtype or self.dtype)
