"""Meta kernels of the fused backward operators: the result's shape, layout and dtype."""

from __future__ import annotations

from whylab.kernels import rules
from whylab.kernels.cpu.backward_ops import _softmax_axis
from whylab.kernels.meta.common import meta_elementwise


def threshold_backward(grad_output, self, threshold):
    dtype = rules.binary_dtype(grad_output, self)
    return meta_elementwise("threshold_backward", dtype, grad_output, self)


def _softmax_like(op: str):
    def kernel(grad_output, output, dim):
        _softmax_axis(op, grad_output, output, dim)
        dtype = rules.binary_dtype(grad_output, output)
        rules.check_floating(op, dtype)
        return meta_elementwise(op, dtype, grad_output, output)

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


def _activation_backward(op: str):
    def kernel(grad_output, output):
        dtype = rules.binary_dtype(grad_output, output)
        rules.check_floating(op, dtype)
        return meta_elementwise(op, dtype, grad_output, output)

    kernel.__name__ = kernel.__qualname__ = f"{op}_meta"
    return kernel


_softmax_backward_data = _softmax_like("_softmax_backward_data")
_log_softmax_backward_data = _softmax_like("_log_softmax_backward_data")
tanh_backward = _activation_backward("tanh_backward")
sigmoid_backward = _activation_backward("sigmoid_backward")
