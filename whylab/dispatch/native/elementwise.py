"""Elementwise operators: arithmetic, comparisons, unary math, clamp, where, in-place forms.

Bindings pass every argument positionally, in schema order (keyword-only in the
schema means keyword-only in the Python API, not in the operator call).
"""

from __future__ import annotations

import math

from whylab._tensor.tensor import Tensor, tensor_method
from whylab.dispatch.native._registry import native
from whylab.kernels import rules
from whylab.kernels.cpu import elementwise as cpu
from whylab.kernels.cpu import inplace as cpu_inplace
from whylab.kernels.meta import elementwise as meta

# ----------------------------------------------------------------- binary arithmetic

_add = native(
    "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", cpu.add, meta.binary("add")
)
_sub = native(
    "sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", cpu.sub, meta.binary("sub")
)
_rsub = native("rsub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", cpu.rsub, meta.rsub)
_mul = native("mul(Tensor self, Tensor other) -> Tensor", cpu.mul, meta.binary("mul"))
_div = native(
    "div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor", cpu.div, meta.div
)
_remainder = native(
    "remainder(Tensor self, Tensor other) -> Tensor", cpu.remainder, meta.binary("remainder")
)
_pow = native("pow(Tensor self, Tensor exponent) -> Tensor", cpu.pow, meta.pow)
# PyTorch's overload pow.Scalar: a Python number raised to a tensor (``2 ** t``).
_pow_scalar = native("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", cpu.pow, meta.pow)
_maximum = native(
    "maximum(Tensor self, Tensor other) -> Tensor", cpu.maximum, meta.binary("maximum")
)
_minimum = native(
    "minimum(Tensor self, Tensor other) -> Tensor", cpu.minimum, meta.binary("minimum")
)

_eq = native("eq(Tensor self, Tensor other) -> Tensor", cpu.eq, meta.comparison("eq"))
_ne = native("ne(Tensor self, Tensor other) -> Tensor", cpu.ne, meta.comparison("ne"))
_lt = native("lt(Tensor self, Tensor other) -> Tensor", cpu.lt, meta.comparison("lt"))
_le = native("le(Tensor self, Tensor other) -> Tensor", cpu.le, meta.comparison("le"))
_gt = native("gt(Tensor self, Tensor other) -> Tensor", cpu.gt, meta.comparison("gt"))
_ge = native("ge(Tensor self, Tensor other) -> Tensor", cpu.ge, meta.comparison("ge"))
_logical_and = native(
    "logical_and(Tensor self, Tensor other) -> Tensor",
    cpu.logical_and,
    meta.comparison("logical_and"),
)
_logical_or = native(
    "logical_or(Tensor self, Tensor other) -> Tensor", cpu.logical_or, meta.comparison("logical_or")
)
_logical_xor = native(
    "logical_xor(Tensor self, Tensor other) -> Tensor",
    cpu.logical_xor,
    meta.comparison("logical_xor"),
)
_bitwise_and = native(
    "bitwise_and(Tensor self, Tensor other) -> Tensor", cpu.bitwise_and, meta.binary("bitwise_and")
)
_bitwise_or = native(
    "bitwise_or(Tensor self, Tensor other) -> Tensor", cpu.bitwise_or, meta.binary("bitwise_or")
)
_bitwise_xor = native(
    "bitwise_xor(Tensor self, Tensor other) -> Tensor", cpu.bitwise_xor, meta.binary("bitwise_xor")
)

# ----------------------------------------------------------------------------- unary


def _unary_float(name):
    return native(f"{name}(Tensor self) -> Tensor", getattr(cpu, name), meta.unary_float(name))


def _unary_same(name):
    return native(f"{name}(Tensor self) -> Tensor", getattr(cpu, name), meta.unary_same(name))


_exp = _unary_float("exp")
_log = _unary_float("log")
_log1p = _unary_float("log1p")
_expm1 = _unary_float("expm1")
_log2 = _unary_float("log2")
_log10 = _unary_float("log10")
_sqrt = _unary_float("sqrt")
_rsqrt = _unary_float("rsqrt")
_reciprocal = _unary_float("reciprocal")
_sin = _unary_float("sin")
_cos = _unary_float("cos")
_tanh = _unary_float("tanh")
_sigmoid = _unary_float("sigmoid")
_erf = _unary_float("erf")
_neg = _unary_same("neg")
_abs = _unary_same("abs")
_sign = _unary_same("sign")
_relu = _unary_same("relu")
_bitwise_not = _unary_same("bitwise_not")
_logical_not = native(
    "logical_not(Tensor self) -> Tensor", cpu.logical_not, meta.unary_bool("logical_not")
)

_clamp = native(
    "clamp(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", cpu.clamp, meta.clamp
)
_where = native(
    "where(Tensor condition, Tensor self, Tensor other) -> Tensor", cpu.where, meta.where
)

# -------------------------------------------------------------------------- in-place

_add_ = native(
    "add_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    cpu_inplace.add_,
    meta.inplace("add_"),
)
_sub_ = native(
    "sub_(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    cpu_inplace.sub_,
    meta.inplace("sub_"),
)
_mul_ = native(
    "mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)", cpu_inplace.mul_, meta.inplace("mul_")
)
_div_ = native(
    "div_(Tensor(a!) self, Tensor other, *, str? rounding_mode=None) -> Tensor(a!)",
    cpu_inplace.div_,
    meta.inplace("div_", rules.true_divide_dtype),
)
_pow_ = native(
    "pow_(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", cpu_inplace.pow_, meta.inplace("pow_")
)
_clamp_ = native(
    "clamp_(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
    cpu_inplace.clamp_,
    meta.clamp_,
)
_copy_ = native(
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    cpu_inplace.copy_,
    meta.copy_,
)
_fill_ = native("fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)", cpu_inplace.fill_, meta.fill_)
_zero_ = native("zero_(Tensor(a!) self) -> Tensor(a!)", cpu_inplace.zero_, meta.zero_)
_masked_fill_ = native(
    "masked_fill_(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
    cpu_inplace.masked_fill_,
    meta.masked_fill_,
)


def _masked_fill_composite(self, mask, value):
    out = self.clone(memory_format="contiguous_format")  # PyTorch's result is row-major
    return _masked_fill_(out, mask, value)


_masked_fill = native(
    "masked_fill(Tensor self, Tensor mask, Scalar value) -> Tensor",
    composite=_masked_fill_composite,
)


# ------------------------------------------------------------------ public functions


def add(input, other, *, alpha=1):
    """``input + alpha * other`` with broadcasting and type promotion."""
    return _add(input, other, alpha)


def sub(input, other, *, alpha=1):
    """``input - alpha * other``."""
    return _sub(input, other, alpha)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    return _rsub(input, other, alpha)


def mul(input, other):
    """Elementwise product."""
    return _mul(input, other)


multiply = mul


def div(input, other, *, rounding_mode=None):
    """True division; ``rounding_mode`` "trunc" or "floor" rounds the quotient."""
    return _div(input, other, rounding_mode)


divide = true_divide = div


def floor_divide(input, other):
    """``input / other`` rounded down (``div`` with rounding_mode='floor')."""
    return _div(input, other, "floor")


def remainder(input, other):
    """Python-style remainder (the sign follows the divisor)."""
    return _remainder(input, other)


def pow(input, exponent):
    """``input ** exponent``; ``input`` may be a Python number when ``exponent`` is a Tensor."""
    return _pow(input, exponent) if isinstance(input, Tensor) else _pow_scalar_base(input, exponent)


def _pow_scalar_base(base, exponent):
    return _pow_scalar(base, exponent)


def maximum(input, other):
    """Elementwise maximum; NaN wins, as in PyTorch."""
    return _maximum(input, other)


def minimum(input, other):
    """Elementwise minimum; NaN wins, as in PyTorch."""
    return _minimum(input, other)


def eq(input, other):
    """``input == other`` elementwise, as a bool tensor."""
    return _eq(input, other)


def ne(input, other):
    """``input != other`` elementwise, as a bool tensor."""
    return _ne(input, other)


def lt(input, other):
    """``input < other`` elementwise, as a bool tensor."""
    return _lt(input, other)


def le(input, other):
    """``input <= other`` elementwise, as a bool tensor."""
    return _le(input, other)


def gt(input, other):
    """``input > other`` elementwise, as a bool tensor."""
    return _gt(input, other)


def ge(input, other):
    """``input >= other`` elementwise, as a bool tensor."""
    return _ge(input, other)


less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne


def logical_and(input, other):
    """Elementwise logical and (nonzero counts as true)."""
    return _logical_and(input, other)


def logical_or(input, other):
    """Elementwise logical or (nonzero counts as true)."""
    return _logical_or(input, other)


def logical_xor(input, other):
    """Elementwise logical exclusive or (nonzero counts as true)."""
    return _logical_xor(input, other)


def logical_not(input):
    """Elementwise logical not, as a bool tensor."""
    return _logical_not(input)


def bitwise_and(input, other):
    """Bitwise and of integer or bool tensors."""
    return _bitwise_and(input, other)


def bitwise_or(input, other):
    """Bitwise or of integer or bool tensors."""
    return _bitwise_or(input, other)


def bitwise_xor(input, other):
    """Bitwise exclusive or of integer or bool tensors."""
    return _bitwise_xor(input, other)


def bitwise_not(input):
    """Bitwise not of an integer or bool tensor."""
    return _bitwise_not(input)


def exp(input):
    """Elementwise e**x (integers become the default float dtype)."""
    return _exp(input)


def log(input):
    """Elementwise natural logarithm (log 0 is -inf, negatives give nan)."""
    return _log(input)


def log1p(input):
    """Elementwise log(1 + x), accurate for small x."""
    return _log1p(input)


def expm1(input):
    """Elementwise e**x - 1, accurate for small x."""
    return _expm1(input)


def log2(input):
    """Elementwise base-2 logarithm."""
    return _log2(input)


def log10(input):
    """Elementwise base-10 logarithm."""
    return _log10(input)


def sqrt(input):
    """Elementwise square root (negatives give nan)."""
    return _sqrt(input)


def rsqrt(input):
    """Elementwise 1 / sqrt(x)."""
    return _rsqrt(input)


def reciprocal(input):
    """Elementwise 1 / x (integers become the default float dtype)."""
    return _reciprocal(input)


def sin(input):
    """Elementwise sine."""
    return _sin(input)


def cos(input):
    """Elementwise cosine."""
    return _cos(input)


def tanh(input):
    """Elementwise hyperbolic tangent."""
    return _tanh(input)


def sigmoid(input):
    """Elementwise logistic function 1 / (1 + e**-x), computed stably."""
    return _sigmoid(input)


def erf(input):
    """Elementwise error function."""
    return _erf(input)


def neg(input):
    """Elementwise negation (not allowed on bool tensors, as in PyTorch)."""
    return _neg(input)


negative = neg


def abs(input):
    """Elementwise absolute value."""
    return _abs(input)


absolute = abs


def sign(input):
    """Elementwise sign: -1, 0 or 1."""
    return _sign(input)


def relu(input):
    """Elementwise max(x, 0)."""
    return _relu(input)


def clamp(input, min=None, max=None):
    """Limit values to [min, max]; either bound may be None, a number or a Tensor."""
    return _clamp(input, min, max)


clip = clamp


def isnan(input):
    """Where the elements are NaN (a bool tensor; never for integers)."""
    return _ne(input, input)


def isinf(input):
    """Where the elements are +inf or -inf."""
    if not input.dtype.is_floating_point:
        return _ne(input, input)
    return _eq(_abs(input), math.inf)


def isfinite(input):
    """Where the elements are neither NaN nor infinite."""
    if not input.dtype.is_floating_point:
        return _eq(input, input)
    return _logical_not(_bitwise_or(isnan(input), isinf(input)))


def where(condition, input, other):
    """Elements of ``input`` where ``condition`` holds, else of ``other``."""
    return _where(condition, input, other)


def masked_fill(input, mask, value):
    """A copy of ``input`` with ``value`` where ``mask`` is true."""
    return _masked_fill(input, mask, value)


# --------------------------------------------------------------------- Tensor methods


@tensor_method("add", "__add__", "__radd__")
def _method_add(self, other, *, alpha=1):
    return _add(self, other, alpha)


@tensor_method("sub", "subtract", "__sub__")
def _method_sub(self, other, *, alpha=1):
    return _sub(self, other, alpha)


@tensor_method("__rsub__")
def _method_rsub(self, other):
    return _rsub(self, other, 1)


@tensor_method("mul", "multiply", "__mul__", "__rmul__")
def _method_mul(self, other):
    return _mul(self, other)


@tensor_method("div", "divide", "true_divide")
def _method_div(self, other, *, rounding_mode=None):
    return _div(self, other, rounding_mode)


@tensor_method("__truediv__")
def _method_truediv(self, other):
    return _div(self, other, None)


@tensor_method("__rtruediv__")
def _method_rtruediv(self, other):
    # PyTorch computes ``other / self`` as ``self.reciprocal() * other``.
    return _mul(_reciprocal(self), other)


@tensor_method("__floordiv__", "floor_divide")
def _method_floordiv(self, other):
    return _div(self, other, "floor")


@tensor_method("__mod__", "remainder")
def _method_mod(self, other):
    return _remainder(self, other)


@tensor_method("pow", "__pow__")
def _method_pow(self, exponent):
    return _pow(self, exponent)


@tensor_method("__rpow__")
def _method_rpow(self, other):
    return _pow_scalar_base(other, self)


@tensor_method("maximum")
def _method_maximum(self, other):
    return _maximum(self, other)


@tensor_method("minimum")
def _method_minimum(self, other):
    return _minimum(self, other)


@tensor_method("eq", "__eq__")
def _method_eq(self, other):
    return _eq(self, other)


@tensor_method("ne", "__ne__")
def _method_ne(self, other):
    return _ne(self, other)


@tensor_method("lt", "__lt__")
def _method_lt(self, other):
    return _lt(self, other)


@tensor_method("le", "__le__")
def _method_le(self, other):
    return _le(self, other)


@tensor_method("gt", "__gt__")
def _method_gt(self, other):
    return _gt(self, other)


@tensor_method("ge", "__ge__")
def _method_ge(self, other):
    return _ge(self, other)


@tensor_method("logical_and")
def _method_logical_and(self, other):
    return _logical_and(self, other)


@tensor_method("logical_or")
def _method_logical_or(self, other):
    return _logical_or(self, other)


@tensor_method("logical_xor")
def _method_logical_xor(self, other):
    return _logical_xor(self, other)


@tensor_method("logical_not")
def _method_logical_not(self):
    return _logical_not(self)


@tensor_method("__and__", "__rand__", "bitwise_and")
def _method_and(self, other):
    return _bitwise_and(self, other)


@tensor_method("__or__", "__ror__", "bitwise_or")
def _method_or(self, other):
    return _bitwise_or(self, other)


@tensor_method("__xor__", "__rxor__", "bitwise_xor")
def _method_xor(self, other):
    return _bitwise_xor(self, other)


@tensor_method("__invert__", "bitwise_not")
def _method_invert(self):
    if self.dtype.name == "bool":
        return _logical_not(self)
    return _bitwise_not(self)


def _unary_method(op, *names):
    def method(self):
        return op(self)

    method.__name__ = method.__qualname__ = names[0]
    tensor_method(*names)(method)


_unary_method(_exp, "exp")
_unary_method(_log, "log")
_unary_method(_log1p, "log1p")
_unary_method(_expm1, "expm1")
_unary_method(_log2, "log2")
_unary_method(_log10, "log10")
_unary_method(_sqrt, "sqrt")
_unary_method(_rsqrt, "rsqrt")
_unary_method(_reciprocal, "reciprocal")
_unary_method(_sin, "sin")
_unary_method(_cos, "cos")
_unary_method(_tanh, "tanh")
_unary_method(_sigmoid, "sigmoid")
_unary_method(_erf, "erf")
_unary_method(_neg, "neg", "negative", "__neg__")
_unary_method(_abs, "abs", "absolute", "__abs__")
tensor_method("isnan")(isnan)
tensor_method("isinf")(isinf)
tensor_method("isfinite")(isfinite)


def _in_place_unary_method(op, name):
    """``t.exp_()`` and friends: the out-of-place result written back with ``copy_``.

    Deviation: PyTorch has a kernel per in-place op (node ``ExpBackward1``...); here
    the write is a ``copy_``, so the graph shows the op and then ``CopyBackwards``
    (the values and gradients are the same).
    """

    def method(self):
        return self.copy_(op(self))

    method.__name__ = method.__qualname__ = name
    tensor_method(name)(method)


for _op, _name in (
    (_exp, "exp_"), (_log, "log_"), (_log1p, "log1p_"), (_expm1, "expm1_"), (_log2, "log2_"),
    (_log10, "log10_"), (_sqrt, "sqrt_"), (_rsqrt, "rsqrt_"), (_reciprocal, "reciprocal_"),
    (_sin, "sin_"), (_cos, "cos_"), (_tanh, "tanh_"), (_sigmoid, "sigmoid_"), (_erf, "erf_"),
    (_neg, "neg_"), (_abs, "abs_"), (_sign, "sign_"), (_relu, "relu_"),
):
    _in_place_unary_method(_op, _name)
del _op, _name
_unary_method(_sign, "sign")
_unary_method(_relu, "relu")


@tensor_method("__pos__")
def _method_pos(self):
    return self


@tensor_method("clamp", "clip")
def _method_clamp(self, min=None, max=None):
    return _clamp(self, min, max)


@tensor_method("where")
def _method_where(self, condition, other):
    return _where(condition, self, other)


@tensor_method("masked_fill")
def _method_masked_fill(self, mask, value):
    return _masked_fill(self, mask, value)


@tensor_method("add_", "__iadd__")
def _method_add_(self, other, *, alpha=1):
    return _add_(self, other, alpha)


@tensor_method("sub_", "subtract_", "__isub__")
def _method_sub_(self, other, *, alpha=1):
    return _sub_(self, other, alpha)


@tensor_method("mul_", "multiply_", "__imul__")
def _method_mul_(self, other):
    return _mul_(self, other)


@tensor_method("div_", "divide_")
def _method_div_(self, other, *, rounding_mode=None):
    return _div_(self, other, rounding_mode)


@tensor_method("__itruediv__")
def _method_itruediv(self, other):
    return _div_(self, other, None)


@tensor_method("pow_", "__ipow__")
def _method_pow_(self, exponent):
    return _pow_(self, exponent)


@tensor_method("clamp_", "clip_")
def _method_clamp_(self, min=None, max=None):
    return _clamp_(self, min, max)


@tensor_method("copy_")
def _method_copy_(self, src, non_blocking=False):
    return _copy_(self, src, non_blocking)


@tensor_method("fill_")
def _method_fill_(self, value):
    return _fill_(self, value)


@tensor_method("zero_")
def _method_zero_(self):
    return _zero_(self)


@tensor_method("masked_fill_")
def _method_masked_fill_(self, mask, value):
    return _masked_fill_(self, mask, value)
