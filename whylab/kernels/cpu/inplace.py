"""In-place NumPy kernels (``add_``, ``copy_``, ``fill_`` ...): they write through views.

A tensor's ``_array`` views its storage, so ``ufunc(..., out=self._array)``
writes straight into the storage every view shares. The result dtype follows
the out-of-place op and must not narrow the category of ``self``'s dtype.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor.geometry import (
    INTERNAL_OVERLAP_ERROR,
    broadcast_shapes,
    format_shape,
    has_internal_overlap,
)
from whylab._tensor.tensor import Tensor
from whylab.kernels import rules
from whylab.kernels.cpu.elementwise import check_integer_power, scaled_by_alpha


def check_no_internal_overlap(op: str, self: Tensor) -> None:
    """Refuse to write into a tensor whose elements alias each other (an expand).

    Like PyTorch's ``assert_no_internal_overlap``, this catches the case it can
    prove cheaply: a dimension of stride 0 and size above 1. (PyTorch's message
    for an *input* that overlaps the output, "some elements of the input tensor
    and the written-to tensor ...", is a different check.)
    """
    if has_internal_overlap(self._sizes, self._strides):
        raise RuntimeError(f"{op}: {INTERNAL_OVERLAP_ERROR}")


def check_output_shape(op: str, self: Tensor, *operands) -> None:
    """The broadcast shape of the operands must be ``self``'s shape."""
    shape = self._sizes
    for operand in operands:
        if isinstance(operand, Tensor):
            shape = broadcast_shapes(shape, operand._sizes, op)
    if shape != self._sizes:
        raise RuntimeError(
            f"{op}: output with shape {format_shape(self._sizes)} doesn't match the broadcast "
            f"shape {format_shape(shape)}"
        )


def _operand(value):
    return value._array if isinstance(value, Tensor) else value


def _apply(ufunc, op: str, self: Tensor, other, result_dtype) -> Tensor:
    """``self = ufunc(self, other)`` computed in ``result_dtype`` (the out-of-place op's)."""
    # The two checks' calls are skipped where they cannot fail: a result in the target's
    # own dtype always casts, and only a stride of 0 can make elements alias.
    if result_dtype is not self.dtype:
        rules.check_inplace_cast(op, result_dtype, self.dtype)
    if 0 in self._strides:
        check_no_internal_overlap(op, self)
    try:
        ufunc(
            self._array,
            other._array if isinstance(other, Tensor) else other,
            out=self._array,
            dtype=result_dtype.numpy,
            casting="unsafe",
        )
    except ValueError:
        check_output_shape(op, self, other)
        raise
    return self


def add_(self, other, alpha=1):
    dtype = rules.binary_dtype(self, other)
    if alpha != 1:
        other = scaled_by_alpha("add_", dtype, other, alpha)
    return _apply(np.add, "add_", self, other, dtype)


def sub_(self, other, alpha=1):
    dtype = rules.binary_dtype(self, other)
    if alpha != 1:
        other = scaled_by_alpha("sub_", dtype, other, alpha)
    return _apply(np.subtract, "sub_", self, other, dtype)


def mul_(self, other):
    return _apply(np.multiply, "mul_", self, other, rules.binary_dtype(self, other))


def div_(self, other, rounding_mode=None):
    if rounding_mode is not None:
        from whylab.kernels.cpu.elementwise import div

        check_no_internal_overlap("div_", self)

        result = div(self, other, rounding_mode)
        return copy_(self, result)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _apply(np.true_divide, "div_", self, other, rules.true_divide_dtype(self, other))


def pow_(self, exponent):
    dtype = rules.binary_dtype(self, exponent)
    check_integer_power("pow_", dtype, exponent)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _apply(np.power, "pow_", self, exponent, dtype)


def clamp_(self, min=None, max=None):
    from whylab.kernels.cpu.elementwise import clamp

    check_no_internal_overlap("clamp_", self)
    result = clamp(self, min, max)
    rules.check_inplace_cast("clamp_", result.dtype, self.dtype)
    return copy_(self, result)


def copy_(self, src, non_blocking=False):
    check_no_internal_overlap("copy_", self)
    check_output_shape("copy_", self, src)
    if isinstance(src, Tensor) and src.device.type != "cpu":
        src = src.to("cpu") if src.device.type != "meta" else src
        if src.device.type == "meta":
            raise NotImplementedError("copy_: cannot copy out of a meta tensor (it has no data)")
    np.copyto(self._array, _operand(src), casting="unsafe")
    return self


def fill_(self, value):
    """Write ``value`` into every element.

    As in PyTorch, filling with a Python number is allowed on an expanded tensor
    (every aliased element receives the same value, so the result is well
    defined), while filling with a 0-d tensor (PyTorch's ``fill_.Tensor``, which
    ``t[i] = 7`` uses) refuses one.
    """
    if isinstance(value, Tensor):
        if value._sizes:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{len(value._sizes)} dimensions."
            )
        check_no_internal_overlap("fill_", self)
        value = value.item()
    self._array[...] = value
    return self


def zero_(self):
    return fill_(self, 0)


def masked_fill_(self, mask, value):
    if mask.dtype.name != "bool":
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype.name}"
        )
    check_output_shape("masked_fill_", self, mask)
    if isinstance(value, Tensor):
        value = value.item()
    np.copyto(self._array, value, where=mask._array, casting="unsafe")
    return self


def unary_(op: str, out_of_place):
    """The in-place form of a unary kernel (``tanh_``): its result written through ``self``.

    The result dtype is the out-of-place op's (``exp_`` of an int tensor is refused, as
    in torch: a float result cannot be written into an int tensor).
    """

    def kernel(self, *options):
        check_no_internal_overlap(op, self)
        result = out_of_place(self, *options)
        rules.check_inplace_cast(op, result.dtype, self.dtype)
        return copy_(self, result)

    kernel.__name__ = kernel.__qualname__ = op
    return kernel
