"""Result-dtype rules shared by the CPU, CUDA and Meta kernels.

Keeping them in one place guarantees that a meta tensor predicts exactly the
dtype the real computation produces.
"""

from __future__ import annotations

from whylab._tensor import dtypes
from whylab._tensor.tensor import Tensor


def binary_dtype(self: Tensor, other) -> dtypes.dtype:
    """``torch.result_type(self, other)`` with a fast path for the common cases."""
    if isinstance(other, Tensor):
        if other.dtype is self.dtype:
            return self.dtype
    elif self.dtype.is_floating_point and type(other) in (int, float):
        return self.dtype
    return dtypes.result_type(self, other)


def float_dtype(dtype: dtypes.dtype) -> dtypes.dtype:
    """Ops such as exp, log, sqrt and true division turn integers into the default float."""
    return dtype if dtype.is_floating_point else dtypes.get_default_dtype()


def true_divide_dtype(self: Tensor, other) -> dtypes.dtype:
    """True division gives a float even for integers."""
    return float_dtype(binary_dtype(self, other))


def reduction_sum_dtype(dtype: dtypes.dtype) -> dtypes.dtype:
    """sum and prod accumulate integers and bools in int64."""
    return dtype if dtype.is_floating_point else dtypes.int64


def check_floating(op: str, dtype: dtypes.dtype) -> None:
    """Raise PyTorch's error for ops that need a floating input (mean, var, softmax...)."""
    if not dtype.is_floating_point:
        raise RuntimeError(
            f"{op}(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {dtype.name}"
        )


def check_alpha(op: str, dtype: dtypes.dtype, alpha) -> None:
    """``add``/``sub`` (and ``add_``/``sub_``) with an integral result refuse a float ``alpha``."""
    if not dtype.is_floating_point and isinstance(alpha, float):
        raise RuntimeError(
            f"{op}: For integral input tensors, argument alpha must not be a floating point number."
        )


def check_inplace_cast(op: str, result: dtypes.dtype, target: dtypes.dtype) -> None:
    """An in-place op cannot narrow the category (float result into an int tensor)."""
    if not dtypes.can_cast(result, target):
        raise RuntimeError(
            f"{op}: result type {result.name} can't be cast to the desired output type "
            f"{target.name}"
        )


def check_tensor_argument(op: str, name: str, value) -> None:
    """torch's TypeError for a Python number where an operator takes no wrapped number
    (``logical_and(t, 2.5)``)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(value).__name__}")
