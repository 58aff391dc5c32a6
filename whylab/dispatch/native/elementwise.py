"""The hand-written parts of the elementwise family: composites and bindings whose
Python form is not a plain schema-order call.

The schemas, kernels and names are in ``whylab/dispatch/native_functions.py``;
these functions are referenced from there. They call operators through
``ops`` (``ops.mul(a, b)``), so the dispatcher sees every piece.
"""

from __future__ import annotations

import math

from whylab._tensor.tensor import Tensor
from whylab.dispatch.native._registry import write_out
from whylab.dispatch.operator import ops


def pow(input, exponent):
    """``input ** exponent``; ``input`` may be a Python number when ``exponent`` is a Tensor
    (then the operator is the overload ``pow.Scalar``)."""
    if isinstance(input, Tensor):
        return ops.pow(input, exponent)
    return getattr(ops, "pow.Scalar")(input, exponent)


def rpow(self, other):
    """``other ** self`` for a Python number ``other``: ``pow.Scalar``."""
    return getattr(ops, "pow.Scalar")(other, self)


def floor_divide(input, other):
    """``input / other`` rounded down (``div`` with rounding_mode='floor')."""
    return ops.div(input, other, "floor")


def rtruediv(self, other):
    """``other / self``; PyTorch computes it as ``self.reciprocal() * other``."""
    return ops.mul(ops.reciprocal(self), other)


def invert(self):
    """``~t``: logical not for bool tensors, bitwise not otherwise."""
    if self.dtype.name == "bool":
        return ops.logical_not(self)
    return ops.bitwise_not(self)


def positive(self):
    """``+t`` is ``t`` itself, as in PyTorch."""
    return self


def isnan(input):
    """Where the elements are NaN (a bool tensor; never for integers)."""
    return ops.ne(input, input)


def isinf(input):
    """Where the elements are +inf or -inf."""
    if not input.dtype.is_floating_point:
        return ops.ne(input, input)
    return ops.eq(ops.abs(input), math.inf)


def isfinite(input):
    """Where the elements are neither NaN nor infinite."""
    if not input.dtype.is_floating_point:
        return ops.eq(input, input)
    return ops.logical_not(ops.bitwise_or(isnan(input), isinf(input)))


def where(condition, input=None, other=None, *, out=None):
    """``input`` where ``condition`` holds, else ``other``; ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``, as in torch."""
    if input is None and other is None:
        return ops.nonzero(condition).unbind(1)
    if input is None or other is None:
        raise TypeError("where() takes a condition alone, or a condition, input and other")
    result = ops.where(condition, input, other)
    return result if out is None else write_out("where", result, out)
