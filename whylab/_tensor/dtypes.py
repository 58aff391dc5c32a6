"""Data types (``whylab.float32`` ...) and PyTorch's type-promotion rules.

Each :class:`dtype` wraps a NumPy dtype and knows its *category* (bool <
integer < floating). Promotion follows ``torch.result_type``:

* between two dtypes, the wider one wins and floating beats integer
  (``promote_types``);
* operands are grouped in three tiers — tensors with dimensions, zero-dim
  tensors, and Python numbers ("wrapped numbers"). A lower tier only changes
  the result when its *category* is higher: ``int64_tensor * 2.5`` is a float,
  but ``float32_tensor + 1.0`` stays float32;
* a Python float counts as the default dtype (float32), a Python int as int64.

The dtypes: bool; uint8, int8, int16, int32, int64; float16, bfloat16, float32,
float64. ``bfloat16`` is NumPy's extension type from the ml_dtypes package (the
one JAX uses). Deviation from PyTorch: no complex, float8 or unsigned types
wider than 8 bits; NumPy arrays of other dtypes are rejected with a TypeError
naming the supported ones. Arithmetic on float16 and bfloat16 runs in NumPy at
that precision (torch's CPU kernels often accumulate in float32, so sums of
many half-precision numbers can differ in the last bits).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np


class dtype:
    """A tensor element type, printed like ``torch.float32`` but as ``whylab.float32``."""

    __slots__ = ("name", "numpy", "itemsize", "category", "rank", "is_floating_point", "is_signed")

    def __init__(self, name: str, numpy_dtype, category: int, rank: int, signed: bool = True):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self.category = category  # 0 bool, 1 integer, 2 floating
        self.rank = rank  # width order within the category (see promote_types)
        self.is_floating_point = category == 2
        self.is_signed = category != 0 and signed

    def __repr__(self) -> str:
        return f"whylab.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


BOOL, INTEGER, FLOATING = 0, 1, 2

bool_ = dtype("bool", np.bool_, BOOL, 0)
uint8 = dtype("uint8", np.uint8, INTEGER, 1, signed=False)
int8 = dtype("int8", np.int8, INTEGER, 1)
int16 = dtype("int16", np.int16, INTEGER, 2)
int32 = dtype("int32", np.int32, INTEGER, 3)
int64 = dtype("int64", np.int64, INTEGER, 4)
float16 = dtype("float16", np.float16, FLOATING, 1)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, FLOATING, 1)
float32 = dtype("float32", np.float32, FLOATING, 2)
float64 = dtype("float64", np.float64, FLOATING, 3)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NUMPY = {d.numpy: d for d in ALL_DTYPES}


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy_dtype(numpy_dtype) -> dtype:
    """The whylab dtype for a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _BY_NUMPY[np.dtype(numpy_dtype)]
    except KeyError:
        supported = ", ".join(d.name for d in ALL_DTYPES)
        raise TypeError(
            f"can't convert NumPy dtype {np.dtype(numpy_dtype)} to a whylab dtype; "
            f"supported: {supported}"
        ) from None


_default_dtype = float32


def get_default_dtype() -> dtype:
    """The dtype of Python floats and of float factories when no dtype is given."""
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    """Change the default floating dtype (float32 or float64)."""
    global _default_dtype
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point dtypes are allowed, got {d}")
    _default_dtype = d


def to_dtype(value) -> dtype:
    """Accept a whylab dtype, a NumPy dtype or a dtype name."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is bool:
        return bool_
    if value is int:
        return int64
    if value is float:
        return float64
    return from_numpy_dtype(value)


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to (``torch.promote_types``).

    bool < integers < floating. Within a category the wider type wins, with
    torch's two exceptions: uint8 with int8 gives int16 (neither holds the other's
    range), and float16 with bfloat16 gives float32.
    """
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.rank == b.rank:  # uint8/int8 or float16/bfloat16
        return int16 if a.category == INTEGER else float32
    return a if a.rank > b.rank else b


def scalar_dtype(value) -> dtype:
    """The dtype a Python number is *treated as* inside type promotion."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return _default_dtype
    raise TypeError(f"expected a Tensor or a Python number, got {type(value).__name__}")


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Merge a tier into the tier above it, as ``combine_categories`` does in PyTorch."""
    if higher is None:
        return lower
    if lower is None or higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> dtype:
    """The dtype an elementwise op computes in, for tensors and Python numbers.

    >>> import whylab
    >>> result_type(whylab.ones(2, dtype=whylab.int64), 2.5)
    whylab.float32
    """
    dim_result = zero_dim_result = wrapped_result = None
    for operand in operands:
        operand_dtype = getattr(operand, "dtype", None)
        if isinstance(operand_dtype, dtype):
            if operand._sizes:
                dim_result = (
                    operand_dtype
                    if dim_result is None
                    else promote_types(dim_result, operand_dtype)
                )
            else:
                zero_dim_result = (
                    operand_dtype
                    if zero_dim_result is None
                    else promote_types(zero_dim_result, operand_dtype)
                )
        else:
            current = scalar_dtype(operand)
            wrapped_result = (
                current if wrapped_result is None else promote_types(wrapped_result, current)
            )
    result = _combine_categories(dim_result, _combine_categories(zero_dim_result, wrapped_result))
    if result is None:
        raise TypeError("result_type: expected at least one operand")
    return result


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether an in-place op may write a ``from_`` result into a ``to`` tensor
    (PyTorch forbids only narrowing the category: float into int, int into bool)."""
    return from_.category <= to.category
