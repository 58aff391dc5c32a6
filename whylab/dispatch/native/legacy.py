"""The legacy ways of making and converting tensors that old tutorials use.

* ``whylab.Tensor([1, 2])`` (a float tensor of the data) and ``whylab.Tensor(2, 3)`` (an
  uninitialised one of that size), like ``torch.Tensor``;
* ``FloatTensor``, ``DoubleTensor``, ``LongTensor``, ``IntTensor``, ``BoolTensor``:
  constructors of one dtype, and ``isinstance`` tests of the dtype;
* ``Tensor.type()``, which names the legacy type ("whylab.FloatTensor"), and
  ``Tensor.type(dtype)``, which converts;
* ``Tensor.index_add_`` / ``index_add``: ``self[..., index[i], ...] += alpha * source[..., i,
  ...]``, composed of ``index_put_`` with accumulation (so repeated indices add up).
"""

from __future__ import annotations

from whylab._tensor import dtypes
from whylab._tensor.dtypes import get_default_dtype, to_dtype
from whylab._tensor.tensor import Tensor, set_legacy_constructor
from whylab.dispatch.native.factory import empty, tensor


def _construct(dtype, args):
    if not args:  # Tensor() is an empty 1-D tensor
        return empty(0, dtype=dtype)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, Tensor):
            return data.to(dtype)
        return tensor(data, dtype=dtype)
    return empty(*args, dtype=dtype)


def _legacy_tensor(*args, **kwargs):
    """``Tensor(data)`` or ``Tensor(*size)`` in the default floating dtype."""
    if kwargs:
        raise TypeError(f"Tensor() got unexpected keyword arguments {sorted(kwargs)}")
    return _construct(get_default_dtype(), args)


set_legacy_constructor(_legacy_tensor)


class _TypedMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype


class _TypedTensor(metaclass=_TypedMeta):
    dtype = dtypes.float32

    def __new__(cls, *args):
        return _construct(cls.dtype, args)


class FloatTensor(_TypedTensor):
    dtype = dtypes.float32


class DoubleTensor(_TypedTensor):
    dtype = dtypes.float64


class LongTensor(_TypedTensor):
    dtype = dtypes.int64


class IntTensor(_TypedTensor):
    dtype = dtypes.int32


class BoolTensor(_TypedTensor):
    dtype = dtypes.bool_


LEGACY_TYPES = (FloatTensor, DoubleTensor, LongTensor, IntTensor, BoolTensor)
_TYPE_NAME = {cls.dtype: f"whylab.{cls.__name__}" for cls in LEGACY_TYPES}
_BY_TYPE_NAME = {}
for _cls in LEGACY_TYPES:
    _BY_TYPE_NAME[f"whylab.{_cls.__name__}"] = _cls.dtype
    _BY_TYPE_NAME[f"torch.{_cls.__name__}"] = _cls.dtype


def type_method(self, dtype=None, non_blocking: bool = False):
    """Without an argument, the legacy type name; with a dtype (or its name), a conversion."""
    if dtype is None:
        return _TYPE_NAME.get(self.dtype, f"whylab.{self.dtype.name}")
    if isinstance(dtype, str) and dtype in _BY_TYPE_NAME:
        dtype = _BY_TYPE_NAME[dtype]
    elif isinstance(dtype, type) and issubclass(dtype, _TypedTensor):
        dtype = dtype.dtype
    return self.to(to_dtype(dtype))


def index_add(input, dim: int, index, source, *, alpha=1):
    """Out of place ``index_add_``."""
    return input.clone().index_add_(dim, index, source, alpha=alpha)


def index_add_(self, dim: int, index, source, *, alpha=1):
    if index.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    dim = dim % max(self.ndim, 1)
    if self.ndim and source.ndim and source.shape[dim] != index.numel():
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim) ({source.shape[dim]})"
        )
    values = source if alpha == 1 else source * alpha
    if dim:
        # index_put_ indexes the leading dimension: bring ``dim`` to the front and back.
        self.movedim(dim, 0).index_put_((index,), values.movedim(dim, 0), accumulate=True)
        return self
    return self.index_put_((index,), values, accumulate=True)
