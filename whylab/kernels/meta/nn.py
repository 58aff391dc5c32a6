"""Meta kernels of gelu, mse_loss and native_layer_norm (and their backward operators):
the CPU kernels' checks, and the result's shape, layout and dtype."""

from __future__ import annotations

from whylab.kernels import rules
from whylab.kernels.cpu import nn as cpu
from whylab.kernels.meta.common import meta_elementwise, meta_empty


def gelu(self, approximate="none"):
    cpu.check_gelu("gelu", self.dtype, approximate)
    return meta_elementwise("gelu", self.dtype, self)


def gelu_backward(grad_output, self, approximate="none"):
    dtype = rules.binary_dtype(grad_output, self)
    cpu.check_gelu("gelu_backward", dtype, approximate)
    return meta_elementwise("gelu_backward", dtype, grad_output, self)


def _mse_dtype(op: str, self, target):
    dtype = rules.binary_dtype(self, target)
    rules.check_floating(op, dtype)
    return dtype


def mse_loss(self, target, reduction=cpu.REDUCTION_MEAN):
    cpu.check_reduction("mse_loss", reduction)
    dtype = _mse_dtype("mse_loss", self, target)
    if reduction == cpu.REDUCTION_NONE:
        return meta_elementwise("mse_loss", dtype, self, target)
    meta_elementwise("mse_loss", dtype, self, target)  # the shapes must broadcast
    return meta_empty((), dtype)


def mse_loss_backward(grad_output, self, target, reduction):
    cpu.check_reduction("mse_loss_backward", reduction)
    dtype = _mse_dtype("mse_loss_backward", self, target)
    return meta_elementwise("mse_loss_backward", dtype, self, target)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    axes = cpu.layer_norm_axes("native_layer_norm", input, normalized_shape, weight, bias)
    stats_shape = tuple(1 if d in axes else size for d, size in enumerate(input._sizes))
    dtype = input.dtype
    return meta_empty(input._sizes, dtype), meta_empty(stats_shape, dtype), meta_empty(
        stats_shape, dtype
    )
