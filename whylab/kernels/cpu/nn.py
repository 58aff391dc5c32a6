"""NumPy kernels of the neural-network operators PyTorch has as operators of their own:
``gelu`` and ``gelu_backward``, ``mse_loss`` and ``mse_loss_backward``,
``native_layer_norm``.

``torch.nn.functional`` calls these (nodes ``GeluBackward0``, ``MseLossBackward0``,
``NativeLayerNormBackward0``), so whylab's ``nn.functional`` does too; their backward
formulas are in ``whylab/autograd/derivatives.py``.

GELU (Hendrycks and Gimpel, 2016): ``x Φ(x)`` with ``Φ`` the standard normal CDF,
or with ``approximate="tanh"`` ``x (1 + tanh(√(2/π) (x + 0.044715 x³))) / 2``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from whylab._tensor.tensor import Tensor
from whylab.kernels import rules
from whylab.kernels.cpu.common import wrap_contiguous, wrap_elementwise
from whylab.kernels.cpu.elementwise import _broadcast_error
from whylab.kernels.cpu.loss import REDUCTION_MEAN, REDUCTION_NONE, REDUCTION_SUM

GELU_TANH_SCALE = math.sqrt(2.0 / math.pi)
GELU_TANH_CUBIC = 0.044715
APPROXIMATIONS = ("none", "tanh")


def check_gelu(op: str, dtype, approximate) -> None:
    if approximate not in APPROXIMATIONS:
        raise RuntimeError(f"{op}: approximate argument must be either none or tanh.")
    rules.check_floating(op, dtype)


def _gelu_parts(x: np.ndarray, approximate: str):
    """(Φ-like factor, its derivative times x) of ``gelu(x) = x * factor``."""
    if approximate == "tanh":
        inner = GELU_TANH_SCALE * (x + GELU_TANH_CUBIC * x * x * x)
        t = np.tanh(inner)
        factor = 0.5 * (1 + t)
        slope = 0.5 * x * (1 - t * t) * GELU_TANH_SCALE * (1 + 3 * GELU_TANH_CUBIC * x * x)
        return factor, slope
    factor = 0.5 * (1 + special.erf(x / math.sqrt(2.0)))
    slope = x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return factor, slope


def gelu(self, approximate="none"):
    check_gelu("gelu", self.dtype, approximate)
    x = self._array
    factor, _ = _gelu_parts(x, approximate)
    return wrap_elementwise(np.asarray(x * factor, dtype=self.dtype.numpy), self.dtype, (self,))


def gelu_backward(grad_output, self, approximate="none"):
    """``grad_output * gelu'(self)``, where ``gelu'(x) = Φ(x) + x φ(x)`` (or the tanh form's)."""
    dtype = rules.binary_dtype(grad_output, self)
    check_gelu("gelu_backward", dtype, approximate)
    factor, slope = _gelu_parts(self._array, approximate)
    try:
        out = np.multiply(grad_output._array, factor + slope, dtype=dtype.numpy)
    except ValueError:
        _broadcast_error("gelu_backward", grad_output, self)
    return wrap_elementwise(np.asarray(out), dtype, (grad_output, self))


def _mse_difference(op: str, self, target):
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: target must be a tensor")
    dtype = rules.binary_dtype(self, target)
    rules.check_floating(op, dtype)
    try:
        return np.subtract(self._array, target._array, dtype=dtype.numpy), dtype
    except ValueError:
        _broadcast_error(op, self, target)


def check_reduction(op: str, reduction) -> None:
    if reduction not in (REDUCTION_NONE, REDUCTION_MEAN, REDUCTION_SUM):
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")


def mse_loss(self, target, reduction=REDUCTION_MEAN):
    check_reduction("mse_loss", reduction)
    difference, dtype = _mse_difference("mse_loss", self, target)
    squared = np.asarray(difference * difference)
    if reduction == REDUCTION_NONE:
        return wrap_elementwise(squared, dtype, (self, target))
    with np.errstate(invalid="ignore"):  # the mean of nothing is nan, as in torch
        total = squared.mean() if reduction == REDUCTION_MEAN else squared.sum()
    return wrap_contiguous(np.asarray(total, dtype=dtype.numpy), dtype)


def mse_loss_backward(grad_output, self, target, reduction):
    """``grad_output * 2 (self - target)``, divided by the element count for "mean"."""
    check_reduction("mse_loss_backward", reduction)
    difference, dtype = _mse_difference("mse_loss_backward", self, target)
    scale = 2.0 / difference.size if reduction == REDUCTION_MEAN and difference.size else 2.0
    out = np.multiply(grad_output._array, difference * scale, dtype=dtype.numpy)
    return wrap_elementwise(np.asarray(out), dtype, (self, target))


def layer_norm_axes(op: str, input, normalized_shape, weight, bias) -> tuple:
    """The normalized trailing axes, after torch's checks of the shapes."""
    normalized_shape = tuple(normalized_shape)
    count = len(normalized_shape)
    if count == 0:
        raise RuntimeError(f"{op}: Expected normalized_shape to be at least 1-dimensional")
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and tuple(tensor._sizes) != normalized_shape:
            raise RuntimeError(
                f"{op}: Expected {name} to be of same shape as normalized_shape, but got {name} "
                f"of shape {list(tensor._sizes)} and normalized_shape = {list(normalized_shape)}"
            )
    if input.ndim < count or tuple(input._sizes[-count:]) != normalized_shape:
        raise RuntimeError(
            f"{op}: Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input._sizes)}"
        )
    rules.check_floating(op, input.dtype)
    return tuple(range(input.ndim - count, input.ndim))


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(normalized output, mean, 1/sqrt(biased variance + eps)); mean and rstd keep the
    normalized dimensions with size 1, as torch's do."""
    axes = layer_norm_axes("native_layer_norm", input, normalized_shape, weight, bias)
    dtype = input.dtype
    x = input._array
    with np.errstate(invalid="ignore", divide="ignore"):  # empty batches give nan, as in torch
        mean = x.mean(axis=axes, keepdims=True)
        centered = x - mean
        rstd = 1.0 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + eps)
    out = centered * rstd
    if weight is not None:
        out = out * weight._array
    if bias is not None:
        out = out + bias._array
    return (
        wrap_contiguous(np.asarray(out, dtype=dtype.numpy), dtype),
        wrap_contiguous(np.asarray(mean, dtype=dtype.numpy), dtype),
        wrap_contiguous(np.asarray(rstd, dtype=dtype.numpy), dtype),
    )
