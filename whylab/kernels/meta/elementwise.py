"""Meta kernels of the elementwise ops: shape by broadcasting, dtype by the shared rules.

Deviation: for ``div(..., rounding_mode="floor")`` on inputs with different
layouts, PyTorch's meta kernel picks a different output layout than its CPU
kernel; ours follows the CPU kernel (the same layout rule as every other op).
"""

from __future__ import annotations

from whylab._tensor import dtypes
from whylab._tensor.tensor import Tensor
from whylab.kernels import rules
from whylab.kernels.cpu.inplace import check_output_shape
from whylab.kernels.meta.common import meta_elementwise, meta_empty


def binary(op: str, dtype_rule=rules.binary_dtype):
    """Meta kernel for ``op(self, other, ...)`` whose dtype is ``dtype_rule(self, other)``."""

    def kernel(self, other, *options):
        return meta_elementwise(op, dtype_rule(self, other), self, other)

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def add_sub(op: str):
    """Meta kernel of ``add``/``sub``: the binary rule plus the alpha check."""

    def kernel(self, other, alpha=1):
        dtype = rules.binary_dtype(self, other)
        rules.check_alpha(op, dtype, alpha)
        return meta_elementwise(op, dtype, self, other)

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def _bool_rule(self, other):
    return dtypes.bool_


def comparison(op: str):
    return binary(op, _bool_rule)


def logical(op: str):
    compare = comparison(op)

    def kernel(self, other):
        rules.check_tensor_argument(op, "other", other)
        return compare(self, other)

    return kernel


def div(self, other, rounding_mode=None):
    rule = rules.true_divide_dtype if rounding_mode is None else rules.binary_dtype
    return meta_elementwise("div", rule(self, other), self, other)


def rsub(self, other, alpha=1):
    return meta_elementwise("rsub", rules.binary_dtype(self, other), self, other)


def pow(self, exponent):
    if isinstance(self, Tensor):
        return meta_elementwise("pow", rules.binary_dtype(self, exponent), self, exponent)
    return meta_empty(exponent._sizes, rules.binary_dtype(exponent, self))  # row-major


def unary_float(op: str):
    def kernel(self):
        return meta_elementwise(op, rules.float_dtype(self.dtype), self)

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def unary_same(op: str):
    def kernel(self):
        return meta_elementwise(op, self.dtype, self)

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def unary_bool(op: str):
    def kernel(self):
        return meta_elementwise(op, dtypes.bool_, self)

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def clamp(self, min=None, max=None):
    bounds = [v for v in (min, max) if v is not None]
    return meta_elementwise("clamp", dtypes.result_type(self, *bounds), self, *bounds)


def where(condition, self, other):
    return meta_elementwise("where", dtypes.result_type(self, other), condition, self, other)


def inplace(op: str, dtype_rule=rules.binary_dtype):
    """Meta kernel of an in-place binary op: checks shape and dtype, returns ``self``."""

    def kernel(self, other, *options):
        rules.check_inplace_cast(op, dtype_rule(self, other), self.dtype)
        check_output_shape(op, self, other)
        return self

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def add_sub_(op: str):
    """Meta kernel of ``add_``/``sub_``: the in-place checks plus the alpha check."""

    def kernel(self, other, alpha=1):
        dtype = rules.binary_dtype(self, other)
        rules.check_alpha(op, dtype, alpha)
        rules.check_inplace_cast(op, dtype, self.dtype)
        check_output_shape(op, self, other)
        return self

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def clamp_(self, min=None, max=None):
    bounds = [v for v in (min, max) if v is not None]
    rules.check_inplace_cast("clamp_", dtypes.result_type(self, *bounds), self.dtype)
    check_output_shape("clamp_", self, *bounds)
    return self


def copy_(self, src, non_blocking=False):
    check_output_shape("copy_", self, src)
    return self


def fill_(self, value):
    return self


def zero_(self):
    return self


def masked_fill_(self, mask, value):
    check_output_shape("masked_fill_", self, mask)
    return self


def unary_inplace(op: str, dtype_rule=None):
    """Meta kernel of an in-place unary op: the cast check of its out-of-place result."""

    def kernel(self, *options):
        result = self.dtype if dtype_rule is None else dtype_rule(self.dtype)
        rules.check_inplace_cast(op, result, self.dtype)
        return self

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def clamp_min(self, min):
    return clamp(self, min, None)


def clamp_max(self, max):
    return clamp(self, None, max)


def round(self, decimals=0):  # noqa: A001 - torch's name
    return meta_elementwise("round", self.dtype, self)
