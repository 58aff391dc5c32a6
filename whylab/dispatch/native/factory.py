"""The hand-written parts of the factory family: the factories (their sizes come as
``*size``: ``zeros(2, 3)``), ``tensor``/``as_tensor``/``from_numpy``, the ``*_like`` and
``new_*`` forms, and the conversions (``to``, ``float`` ...) over ``_to_copy``.

Schemas, kernels and names: ``whylab/dispatch/native_functions.py``. Factories have no
tensor argument: the dispatcher picks the backend from ``device``.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor import dtypes
from whylab._tensor.device import CPU, CUDA_NOT_COMPILED, to_device
from whylab._tensor.dtypes import to_dtype
from whylab._tensor.geometry import contiguous_strides
from whylab._tensor.storage import Storage
from whylab._tensor.tensor import Tensor
from whylab.dispatch.operator import ops
from whylab.kernels.cpu import common as cpu_common


def contiguous_composite(self):
    """``contiguous``: ``self`` when already row-major, else a row-major ``clone``."""
    if self.is_contiguous():
        return self
    return ops.clone(self, "contiguous_format")


# ---------------------------------------------------------------- argument helpers


def _size_arg(size, keyword=None) -> tuple[int, ...]:
    """Factories accept ``zeros(2, 3)``, ``zeros((2, 3))`` and ``zeros(size=(2, 3))``."""
    if keyword is not None:
        if size:
            raise TypeError("size given both positionally and as size=")
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    if len(size) == 1 and isinstance(size[0], Tensor):
        size = size[0].tolist()
    return tuple(int(s) for s in size)


def _dtype_arg(dtype):
    return None if dtype is None else to_dtype(dtype)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---------------------------------------------------------------- public factories


def empty(*shape, size=None, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of the given size."""
    t = ops.empty(_size_arg(shape, size), _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor with explicit strides."""
    t = ops.empty_strided(tuple(size), tuple(stride), _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def zeros(*shape, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros of the given size."""
    t = ops.zeros(_size_arg(shape, size), _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def ones(*shape, size=None, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of the given size."""
    t = ops.ones(_size_arg(shape, size), _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of ``fill_value``; the dtype follows the value when not given."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    t = ops.full(_size_arg((size,)), fill_value, _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """``arange(end)`` or ``arange(start, end, step)``: values in [start, end)."""
    if end is None:
        start, end = 0, start
    t = ops.arange(start, end, step, _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    t = ops.linspace(start, end, int(steps), _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """An ``n`` x ``m`` identity matrix (``m`` defaults to ``n``)."""
    return _finish(ops.eye(int(n), m, _dtype_arg(dtype), to_device(device)), requires_grad)


def rand(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1). Values differ from PyTorch's for the same seed (NumPy PCG64)."""
    t = ops.rand(_size_arg(shape, size), generator, _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def randn(*shape, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples. Values differ from PyTorch's for the same seed (NumPy PCG64)."""
    t = ops.randn(_size_arg(shape, size), generator, _dtype_arg(dtype), to_device(device))
    return _finish(t, requires_grad)


def randint(
    low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False
):
    """Integers in [low, high); ``randint(high, size)`` starts at 0."""
    if size is None:
        low, high, size = 0, low, high
    t = ops.randint(
        int(low), int(high), tuple(size), generator, _dtype_arg(dtype), to_device(device)
    )
    return _finish(t, requires_grad)


def _like(factory, input, *args, dtype=None, device=None, requires_grad=False, **kwargs):
    dtype = input.dtype if dtype is None else dtype
    device = input.device if device is None else device
    return factory(
        input._sizes, *args, dtype=dtype, device=device, requires_grad=requires_grad, **kwargs
    )


def empty_like(input, *, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor with the size of ``input``."""
    return _like(empty, input, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False):
    """Zeros with the size (and by default dtype and device) of ``input``."""
    return _like(zeros, input, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False):
    """Ones with the size (and by default dtype and device) of ``input``."""
    return _like(ones, input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``fill_value`` with the size (and by default dtype and device) of ``input``."""
    return _like(full, input, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1) with the size of ``input``."""
    return _like(
        rand, input, dtype=dtype, device=device, requires_grad=requires_grad, generator=generator
    )


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples with the size of ``input``."""
    return _like(
        randn, input, dtype=dtype, device=device, requires_grad=requires_grad, generator=generator
    )


def randint_like(input, low, high=None, *, dtype=None, device=None, requires_grad=False):
    """Random integers in [low, high) with the size of ``input``."""
    if high is None:
        low, high = 0, low
    dtype = input.dtype if dtype is None else dtype
    device = input.device if device is None else device
    return randint(low, high, input._sizes, dtype=dtype, device=device, requires_grad=requires_grad)


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays or tensors)."""
    dtype = _dtype_arg(dtype)
    if isinstance(data, Tensor):
        result = data.detach().to(dtype=dtype or data.dtype).clone()
    elif isinstance(data, (np.ndarray, np.generic)):
        array = np.array(data, dtype=None if dtype is None else dtype.numpy, copy=True)
        if dtype is None:
            array = array.astype(dtypes.from_numpy_dtype(array.dtype).numpy, copy=False)
        result = cpu_common.wrap(np.asarray(array, order="C"))
    else:
        result = cpu_common.from_python(data, dtype)
    if device is not None and to_device(device).type != "cpu":
        result = ops._to_copy(result, None, to_device(device))
    return _finish(result, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a NumPy array or tensor when it can."""
    dtype = _dtype_arg(dtype)
    if isinstance(data, Tensor):
        return data if dtype in (None, data.dtype) else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtype.numpy):
        if device is None or to_device(device).type == "cpu":
            return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``: writes to either show in both."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__})")
    dtype = dtypes.from_numpy_dtype(array.dtype)
    if array.flags.c_contiguous:
        # The common case, without the stride checks below: a row-major array is its own
        # flat buffer (reshape(-1) is then a view, never a copy).
        storage = Storage.of(array.reshape(-1), dtype, CPU, array.size)
        shape = array.shape
        return Tensor._make(storage, shape, contiguous_strides(shape), 0, array)
    if any(s < 0 for s in array.strides):
        raise ValueError(
            "from_numpy: At least one stride in the given numpy array is negative, and tensors "
            "with negative strides are not currently supported. (You can probably work around "
            "this by making a copy of your array  with array.copy().)"
        )
    itemsize = array.itemsize
    if any(s % itemsize for s in array.strides):
        raise ValueError(
            "from_numpy: given numpy array strides not a multiple of the element "
            "byte size. Copy the numpy array to reallocate the memory."
        )
    strides = tuple(s // itemsize for s in array.strides)
    extent = (
        0
        if array.size == 0
        else 1 + sum((n - 1) * s for n, s in zip(array.shape, strides, strict=True))
    )
    flat = np.lib.stride_tricks.as_strided(array, shape=(extent,), strides=(itemsize,))
    storage = Storage(flat, dtype, CPU)
    return Tensor._make(storage, array.shape, strides, 0, array)


# -------------------------------------------------------------------- Tensor methods


def contiguous_method(self, memory_format=None):
    """``self`` if already contiguous, otherwise a row-major copy."""
    if self.is_contiguous():
        return self
    return ops.contiguous(self)


def _parse_to_args(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    copy = kwargs.pop("copy", False)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, dtypes.dtype):
            dtype = arg
        elif arg is not None:
            device = arg
    return _dtype_arg(dtype), (None if device is None else to_device(device)), copy


def to_method(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(other)``: ``self`` when nothing changes, else a copy."""
    dtype, device, copy = _parse_to_args(args, dict(kwargs))
    same_dtype = dtype is None or dtype is self.dtype
    same_device = device is None or device == self.device
    if same_dtype and same_device and not copy:
        return self
    return ops._to_copy(self, dtype, device)


def conversion(dtype, name):
    """``t.float()`` and friends: ``t.to(dtype)``."""

    def convert(self):
        return to_method(self, dtype)

    convert.__name__ = name
    convert.__qualname__ = f"Tensor.{name}"
    return convert


to_float = conversion(dtypes.float32, "float")
to_double = conversion(dtypes.float64, "double")
to_long = conversion(dtypes.int64, "long")
to_int = conversion(dtypes.int32, "int")
to_bool = conversion(dtypes.bool_, "bool")
to_half = conversion(dtypes.float16, "half")
to_bfloat16 = conversion(dtypes.bfloat16, "bfloat16")
to_short = conversion(dtypes.int16, "short")
to_char = conversion(dtypes.int8, "char")
to_byte = conversion(dtypes.uint8, "byte")


def cpu_method(self):
    return to_method(self, "cpu")


def cuda_method(self, device=None, non_blocking=False):
    """Copy to a CUDA device: raises, as torch does on a machine without one."""
    raise AssertionError(CUDA_NOT_COMPILED)


def type_as_method(self, other):
    return to_method(self, other.dtype)


def new_zeros_method(self, *size, dtype=None, device=None, requires_grad=False):
    return zeros(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_ones_method(self, *size, dtype=None, device=None, requires_grad=False):
    return ones(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_empty_method(self, *size, dtype=None, device=None, requires_grad=False):
    return empty(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_full_method(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(
        size,
        fill_value,
        dtype=dtype or self.dtype,
        device=device or self.device,
        requires_grad=requires_grad,
    )


def new_tensor_method(self, data, *, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
