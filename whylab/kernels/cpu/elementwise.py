"""Elementwise NumPy kernels with PyTorch's broadcasting, promotion and layout.

Each kernel computes in the dtype given by ``whylab.kernels.rules`` (NumPy's own
promotion differs for Python floats with integer tensors and for true division
of integers), and translates NumPy's broadcast errors into PyTorch's wording.

Floating-point warnings: PyTorch never warns about overflow or division by zero.
Ops that commonly meet them here (division, pow, exp, log, sqrt ...) silence
NumPy's warnings; entering ``np.errstate`` costs about 0.5 us, so the ops that
only warn on special inputs (``sin(inf)``, ``tanh``, ``sigmoid``) do not, and
may print a NumPy RuntimeWarning where PyTorch is silent (a deviation).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from whylab._tensor import dtypes
from whylab._tensor.geometry import broadcast_shapes, contiguous_strides
from whylab._tensor.tensor import Tensor
from whylab.kernels import rules
from whylab.kernels.cpu.common import wrap, wrap_elementwise


def _shape_of(value):
    return value._sizes if isinstance(value, Tensor) else ()


def _broadcast_error(op: str, *operands):
    """Raise PyTorch's broadcast error for ``operands`` (called after NumPy refused)."""
    shape = ()
    for operand in operands:
        shape = broadcast_shapes(shape, _shape_of(operand), op)
    raise RuntimeError(f"{op}: operands could not be broadcast together")


def _binary(ufunc, op: str, self: Tensor, other, dtype):
    """Apply a NumPy ufunc to two operands and wrap the result as ``dtype``."""
    if isinstance(other, Tensor):
        b = other._array
        tensors = (self, other)
    else:
        b = other
        tensors = (self,)
    try:
        out = ufunc(self._array, b)
        if out.dtype != dtype.numpy:
            out = ufunc(self._array, b, dtype=dtype.numpy)
    except ValueError:
        _broadcast_error(op, self, other)
    if (
        out.flags.c_contiguous
        and self._strides == contiguous_strides(self._sizes)
        and (b is other or other._strides == contiguous_strides(other._sizes))
    ):
        return wrap(out, dtype)  # wrap_elementwise's first case, without the call
    return wrap_elementwise(out, dtype, tensors)


def scaled_by_alpha(op: str, dtype, other, alpha):
    """``alpha * other`` for ``add``/``sub`` and their in-place forms: torch's alpha rule,
    in one place.

    ``dtype`` is the operation's result dtype: an integral one refuses a floating
    ``alpha``, as torch does (:func:`whylab.kernels.rules.check_alpha`, which the
    meta kernels call too). A tensor ``other`` is scaled in its own dtype's
    promotion with a Python number (an int64 tensor times 0.5 gives float64 values,
    which the caller then computes with in ``dtype``).
    """
    rules.check_alpha(op, dtype, alpha)
    if isinstance(other, Tensor):
        product = other._array * alpha
        return wrap(product) if other._sizes else product
    return other * alpha


def add(self, other, alpha=1):
    dtype = rules.binary_dtype(self, other)
    if alpha != 1:
        other = scaled_by_alpha("add", dtype, other, alpha)
    return _binary(np.add, "add", self, other, dtype)


def sub(self, other, alpha=1):
    dtype = rules.binary_dtype(self, other)
    if dtype is dtypes.bool_:
        raise RuntimeError(
            "sub: Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if alpha != 1:
        other = scaled_by_alpha("sub", dtype, other, alpha)
    return _binary(np.subtract, "sub", self, other, dtype)


def rsub(self, other, alpha=1):
    """``other - alpha * self`` (what ``2 - t`` calls)."""
    dtype = rules.binary_dtype(self, other)
    scaled_self = self if alpha == 1 else wrap(self._array * alpha)
    if isinstance(other, Tensor):
        return sub(other, scaled_self)
    out = np.subtract(other, scaled_self._array, dtype=dtype.numpy)
    return wrap_elementwise(out, dtype, (self,))


def mul(self, other):
    return _binary(np.multiply, "mul", self, other, rules.binary_dtype(self, other))


def div(self, other, rounding_mode=None):
    if rounding_mode is None:
        dtype = rules.true_divide_dtype(self, other)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _binary(np.true_divide, "div", self, other, dtype)
    dtype = rules.binary_dtype(self, other)
    if rounding_mode == "floor":
        if not dtype.is_floating_point and _has_zero(other):
            raise RuntimeError("ZeroDivisionError")
        with np.errstate(divide="ignore", invalid="ignore"):
            return _binary(np.floor_divide, "div", self, other, dtype)
    if rounding_mode == "trunc":
        if not dtype.is_floating_point:
            return _integer_trunc_divide(self, other, dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            quotient = _binary(np.true_divide, "div", self, other, dtype)
        np.trunc(quotient._array, out=quotient._array)
        return quotient
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def _has_zero(value) -> bool:
    array = value._array if isinstance(value, Tensor) else np.asarray(value)
    return bool(np.any(array == 0))


def _integer_trunc_divide(self, other, dtype):
    """Integer division rounding toward zero (NumPy's floor_divide rounds down)."""
    if _has_zero(other):
        raise RuntimeError("ZeroDivisionError")
    a = self._array
    b = other._array if isinstance(other, Tensor) else other
    floor = _binary(np.floor_divide, "div", self, other, dtype)
    rounded_down = (np.remainder(a, b) != 0) & ((a < 0) != (np.asarray(b) < 0))
    floor._array[...] += rounded_down
    return floor


def remainder(self, other):
    dtype = rules.binary_dtype(self, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _binary(np.remainder, "remainder", self, other, dtype)


def pow(self, exponent):
    if isinstance(self, Tensor):
        dtype = rules.binary_dtype(self, exponent)
        check_integer_power("pow", dtype, exponent)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _binary(np.power, "pow", self, exponent, dtype)
    # pow(Scalar self, Tensor exponent), reached through ``2 ** t``: row-major, as torch's
    dtype = rules.binary_dtype(exponent, self)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.power(self, exponent._array, dtype=dtype.numpy)
    return wrap(np.ascontiguousarray(out), dtype)


def check_integer_power(op: str, dtype, exponent) -> None:
    """Integers to negative integer powers are refused (by ``pow`` and ``pow_``), as torch."""
    if dtype.is_floating_point:
        return
    if isinstance(exponent, Tensor):
        negative = not exponent.dtype.is_floating_point and bool(np.any(exponent._array < 0))
    else:
        negative = isinstance(exponent, int) and exponent < 0
    if negative:
        raise RuntimeError(f"{op}: Integers to negative integer powers are not allowed.")


def maximum(self, other):
    return _binary(np.maximum, "maximum", self, other, rules.binary_dtype(self, other))


def minimum(self, other):
    return _binary(np.minimum, "minimum", self, other, rules.binary_dtype(self, other))


def _bool_result(ufunc, op):
    """A broadcasting binary kernel whose result is bool (comparisons, logical ops)."""

    def kernel(self, other):
        return _binary(ufunc, op, self, other, dtypes.bool_)

    kernel.__name__ = kernel.__qualname__ = op
    return kernel


eq = _bool_result(np.equal, "eq")
ne = _bool_result(np.not_equal, "ne")
lt = _bool_result(np.less, "lt")
le = _bool_result(np.less_equal, "le")
gt = _bool_result(np.greater, "gt")
ge = _bool_result(np.greater_equal, "ge")


def _logical(ufunc, op):
    """A logical kernel: a bool result, and unlike comparisons no Python number as ``other``."""
    compare = _bool_result(ufunc, op)

    def kernel(self, other):
        rules.check_tensor_argument(op, "other", other)
        return compare(self, other)

    kernel.__name__ = kernel.__qualname__ = op
    return kernel


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


def _bitwise(ufunc, op):
    def bitwise(self, other):
        dtype = rules.binary_dtype(self, other)
        if dtype.is_floating_point:
            raise RuntimeError(f"{op}: not implemented for '{dtype.name}' tensors")
        return _binary(ufunc, op, self, other, dtype)

    bitwise.__name__ = bitwise.__qualname__ = op
    return bitwise


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


def bitwise_not(self):
    if self.dtype.is_floating_point:
        raise RuntimeError(f"bitwise_not: not implemented for '{self.dtype.name}' tensors")
    return wrap_elementwise(np.invert(self._array), self.dtype, (self,))


def logical_not(self):
    return wrap_elementwise(np.logical_not(self._array), dtypes.bool_, (self,))


# ----------------------------------------------------------------------------- unary


def _unary_float(ufunc, op, quiet=True):
    """A kernel for ops that always produce floats (exp of an int tensor is float32).

    ``quiet`` silences NumPy's floating-point warnings (see the module docstring).
    """

    def compute(self, dtype):
        if self.dtype is dtype:
            return ufunc(self._array)
        return ufunc(self._array, dtype=dtype.numpy)

    def kernel(self):
        dtype = rules.float_dtype(self.dtype)
        if quiet:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                out = compute(self, dtype)
        else:
            out = compute(self, dtype)
        return wrap_elementwise(out, dtype, (self,))

    kernel.__name__ = kernel.__qualname__ = op
    return kernel


exp = _unary_float(np.exp, "exp")
log = _unary_float(np.log, "log")
log1p = _unary_float(np.log1p, "log1p")
expm1 = _unary_float(np.expm1, "expm1")
log2 = _unary_float(np.log2, "log2")
log10 = _unary_float(np.log10, "log10")
sqrt = _unary_float(np.sqrt, "sqrt")
sin = _unary_float(np.sin, "sin", quiet=False)
cos = _unary_float(np.cos, "cos", quiet=False)
tanh = _unary_float(np.tanh, "tanh", quiet=False)
sigmoid = _unary_float(special.expit, "sigmoid", quiet=False)
erf = _unary_float(special.erf, "erf", quiet=False)


def _reciprocal_sqrt(array, dtype=None):
    return np.reciprocal(np.sqrt(array, dtype=dtype))


rsqrt = _unary_float(_reciprocal_sqrt, "rsqrt")
reciprocal = _unary_float(np.reciprocal, "reciprocal")


def neg(self):
    if self.dtype is dtypes.bool_:
        raise RuntimeError(
            "neg: Negation, the `-` operator, on a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return wrap_elementwise(np.negative(self._array), self.dtype, (self,))


def abs(self):
    if self.dtype is dtypes.bool_:
        return wrap_elementwise(self._array.copy(), self.dtype, (self,))
    return wrap_elementwise(np.abs(self._array), self.dtype, (self,))


def sign(self):
    if self.dtype is dtypes.bool_:
        return wrap_elementwise(self._array.copy(), self.dtype, (self,))
    return wrap_elementwise(np.sign(self._array), self.dtype, (self,))


def _zero_of(numpy_dtype) -> np.ndarray:
    """A read-only 0-d zero of ``numpy_dtype``, made once per dtype.

    ``np.maximum(a, zero)`` with a 0-d array of a's own dtype skips the
    conversion of a Python ``0`` on every call (0.3 us instead of 0.6 us on 4x4).
    """
    zero = _ZEROS.get(numpy_dtype)
    if zero is None:
        zero = np.zeros((), numpy_dtype)
        zero.setflags(write=False)
        _ZEROS[numpy_dtype] = zero
    return zero


_ZEROS: dict = {}


def relu(self):
    if self.dtype is dtypes.bool_:
        raise RuntimeError("relu: not implemented for 'bool' tensors")
    array = self._array
    return wrap_elementwise(np.maximum(array, _zero_of(array.dtype)), self.dtype, (self,))


def clamp(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    dtype = dtypes.result_type(self, *(v for v in (min, max) if v is not None))
    tensors = [self] + [v for v in (min, max) if isinstance(v, Tensor)]
    low = min._array if isinstance(min, Tensor) else min
    high = max._array if isinstance(max, Tensor) else max
    try:
        array = self._array if self.dtype is dtype else self._array.astype(dtype.numpy)
        if low is None:
            out = np.minimum(array, high)
        elif high is None:
            out = np.maximum(array, low)
        else:
            out = np.minimum(np.maximum(array, low), high)
        out = out.astype(dtype.numpy, copy=False)
    except ValueError:
        _broadcast_error("clamp", self, *(v for v in (min, max) if v is not None))
    return wrap_elementwise(out, dtype, tensors)


def where(condition, self, other):
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name}"
        )
    dtype = (
        rules.binary_dtype(self, other)
        if isinstance(self, Tensor)
        else (
            dtypes.result_type(other, self)
            if isinstance(other, Tensor)
            else dtypes.result_type(self, other)
        )
    )
    a = self._array if isinstance(self, Tensor) else self
    b = other._array if isinstance(other, Tensor) else other
    try:
        out = np.where(condition._array, a, b).astype(dtype.numpy, copy=False)
    except ValueError:
        _broadcast_error("where", condition, self, other)
    tensors = [t for t in (condition, self, other) if isinstance(t, Tensor)]
    return wrap_elementwise(out, dtype, tensors)


# -- rounding: integer tensors come back as they are (already whole numbers), as in torch
def _rounding(ufunc, op):
    def kernel(self):
        if self.dtype is dtypes.bool_:
            raise NotImplementedError(f"{op}: not implemented for 'Bool'")
        if not self.dtype.is_floating_point:
            return wrap_elementwise(self._array.copy(), self.dtype, (self,))
        return wrap_elementwise(ufunc(self._array), self.dtype, (self,))

    kernel.__name__ = kernel.__qualname__ = op
    return kernel


ceil = _rounding(np.ceil, "ceil")
floor = _rounding(np.floor, "floor")
trunc = _rounding(np.trunc, "trunc")


def round(self, decimals=0):  # noqa: A001 - torch's name
    """Round half to even (NumPy's ``rint``, torch's rule), at ``decimals`` digits."""
    if not self.dtype.is_floating_point:
        if decimals == 0 and self.dtype is not dtypes.bool_:
            return wrap_elementwise(self._array.copy(), self.dtype, (self,))
        raise NotImplementedError(f"round: not implemented for '{self.dtype.name}' tensors")
    if decimals == 0:
        return wrap_elementwise(np.rint(self._array), self.dtype, (self,))
    return wrap_elementwise(np.round(self._array, decimals), self.dtype, (self,))


def frac(self):
    """``self - trunc(self)``: the fractional part, with the sign of ``self``."""
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"frac: not implemented for '{self.dtype.name}' tensors")
    array = self._array
    return wrap_elementwise(array - np.trunc(array), self.dtype, (self,))


def clamp_min(self, min):
    return clamp(self, min, None)


def clamp_max(self, max):
    return clamp(self, None, max)
