"""Building meta tensors: sizes, strides and dtype, with a storage that holds no data."""

from __future__ import annotations

from whylab._tensor.device import META
from whylab._tensor.geometry import broadcast_shapes, contiguous_strides, elementwise_strides
from whylab._tensor.storage import Storage
from whylab._tensor.tensor import Tensor


def meta_empty_strided(sizes, strides, dtype) -> Tensor:
    sizes, strides = tuple(sizes), tuple(strides)
    extent = 0 if 0 in sizes else 1 + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
    return Tensor._make(Storage(None, dtype, META, extent), sizes, strides, 0, None)


def meta_empty(sizes, dtype) -> Tensor:
    sizes = tuple(sizes)
    return meta_empty_strided(sizes, contiguous_strides(sizes), dtype)


def meta_elementwise(op: str, dtype, *operands) -> Tensor:
    """The meta result of an elementwise op: broadcast shape, PyTorch's layout, ``dtype``."""
    tensors = [t for t in operands if isinstance(t, Tensor)]
    shape = ()
    for t in tensors:
        shape = broadcast_shapes(shape, t._sizes, op)
    strides = elementwise_strides(shape, [(t._sizes, t._strides) for t in tensors])
    return meta_empty_strided(shape, strides, dtype)
