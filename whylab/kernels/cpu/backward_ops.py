"""NumPy kernels of the fused backward operators (PyTorch's ``threshold_backward``,
``_softmax_backward_data``, ``_log_softmax_backward_data``, ``tanh_backward``,
``sigmoid_backward``).

The backward formulas of relu, softmax, log_softmax, tanh and sigmoid call these
operators instead of chains of small ops: one dispatcher call and one node instead
of three or four, and fewer passes over memory.

``threshold_backward`` deserves a note. Its meaning is PyTorch's:
``grad if self > threshold else 0``, where a NaN in ``self`` lets the gradient
through and a masked position is exactly zero even when the gradient there is
NaN or infinite. The obvious ``np.where(mask, grad, 0)`` is slow on a random mask
(about 180 us for 256x256 float32, branch mispredictions), while ``grad * mask``
takes about 20 us but turns ``inf * 0`` and ``nan * 0`` into NaN (with a NumPy
warning). So the kernel first sums the gradient (a fast vectorised pass): a finite sum
proves every element is finite, and the product is then exact and silent; only
otherwise does it multiply under ``np.errstate`` (about 0.5 us a call, so not on
the common path) and set the masked positions to zero explicitly. Deviation: a
masked position holding a negative gradient becomes -0.0 where PyTorch gives +0.0
(equal as numbers).
"""

from __future__ import annotations

import numpy as np

from whylab._tensor.geometry import wrap_dim
from whylab._tensor.tensor import Tensor
from whylab.kernels import rules
from whylab.kernels.cpu.common import wrap_elementwise
from whylab.kernels.cpu.elementwise import _broadcast_error

# Ufuncs given 0-dim operands return NumPy scalars, hence the np.asarray before a
# result is written to in place.


def _check_tensors(op: str, grad_output, other, other_name: str) -> None:
    if not isinstance(grad_output, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"{op}: grad_output and {other_name} must be tensors")


def threshold_backward(grad_output, self, threshold):
    """``grad_output`` where ``self > threshold`` (NaN counts as above), exactly 0 elsewhere."""
    _check_tensors("threshold_backward", grad_output, self, "self")
    dtype = rules.binary_dtype(grad_output, self)
    grad = grad_output._array
    try:
        passes = np.logical_not(np.less_equal(self._array, threshold))
        if not dtype.is_floating_point or np.isfinite(np.add.reduce(grad, axis=None)):
            # Every gradient is finite, so the product is exact and warns of nothing.
            out = np.asarray(np.multiply(grad, passes, dtype=dtype.numpy))
        else:
            with np.errstate(invalid="ignore"):  # PyTorch does not warn of inf * 0
                out = np.asarray(np.multiply(grad, passes, dtype=dtype.numpy))
            # inf * 0 and nan * 0 are NaN: put the exact zeros back where the mask blocks.
            np.copyto(out, 0, where=np.logical_not(passes))
    except ValueError:
        _broadcast_error("threshold_backward", grad_output, self)
    return wrap_elementwise(out, dtype, (grad_output, self))


def _softmax_axis(op: str, grad_output, output, dim):
    """NumPy's ``axis`` for a softmax dimension (a 0-dim tensor reduces over nothing).

    The gradient must have the output's shape, as in PyTorch.
    """
    _check_tensors(op, grad_output, output, "output")
    if grad_output._sizes != output._sizes:
        raise RuntimeError(
            f"{op}: grad_output of shape {list(grad_output._sizes)} must have the shape of "
            f"output {list(output._sizes)}"
        )
    ndim = len(output._sizes)
    d = wrap_dim(dim, ndim, op)
    return d if ndim else None


def _softmax_backward_data(grad_output, output, dim):
    """``output * (grad - sum(grad * output, dim))``: the gradient of softmax's input."""
    op = "_softmax_backward_data"
    axis = _softmax_axis(op, grad_output, output, dim)
    dtype = rules.binary_dtype(grad_output, output)
    rules.check_floating(op, dtype)
    grad, values = grad_output._array, output._array
    weighted_total = np.sum(np.multiply(grad, values, dtype=dtype.numpy), axis, keepdims=True)
    out = np.asarray(np.subtract(grad, weighted_total, dtype=dtype.numpy))
    np.multiply(out, values, out=out, casting="unsafe")
    return wrap_elementwise(out, dtype, (grad_output, output))


def _log_softmax_backward_data(grad_output, output, dim):
    """``grad - exp(output) * sum(grad, dim)``: the gradient of log_softmax's input."""
    op = "_log_softmax_backward_data"
    axis = _softmax_axis(op, grad_output, output, dim)
    dtype = rules.binary_dtype(grad_output, output)
    rules.check_floating(op, dtype)
    grad = grad_output._array
    out = np.asarray(np.exp(output._array, dtype=dtype.numpy))
    np.multiply(out, np.sum(grad, axis, dtype=dtype.numpy, keepdims=True), out=out)
    np.subtract(grad, out, out=out, casting="unsafe")
    return wrap_elementwise(out, dtype, (grad_output, output))


def tanh_backward(grad_output, output):
    """``grad * (1 - output**2)``: the gradient of tanh's input, from its output."""
    _check_tensors("tanh_backward", grad_output, output, "output")
    dtype = rules.binary_dtype(grad_output, output)
    rules.check_floating("tanh_backward", dtype)
    values = output._array
    try:
        out = np.asarray(np.multiply(values, values, dtype=dtype.numpy))
        np.subtract(1, out, out=out)
        out = np.multiply(grad_output._array, out, dtype=dtype.numpy)
    except ValueError:
        _broadcast_error("tanh_backward", grad_output, output)
    return wrap_elementwise(out, dtype, (grad_output, output))


def sigmoid_backward(grad_output, output):
    """``grad * (1 - output) * output``: the gradient of sigmoid's input, from its output."""
    _check_tensors("sigmoid_backward", grad_output, output, "output")
    dtype = rules.binary_dtype(grad_output, output)
    rules.check_floating("sigmoid_backward", dtype)
    values = output._array
    try:
        out = np.asarray(np.subtract(1, values, dtype=dtype.numpy))
        np.multiply(out, values, out=out)
        out = np.multiply(grad_output._array, out, dtype=dtype.numpy)
    except ValueError:
        _broadcast_error("sigmoid_backward", grad_output, output)
    return wrap_elementwise(out, dtype, (grad_output, output))
