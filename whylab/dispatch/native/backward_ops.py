"""Fused backward operators, as in PyTorch: ``threshold_backward`` (relu),
``_softmax_backward_data``, ``_log_softmax_backward_data``, ``tanh_backward`` and
``sigmoid_backward``.

They exist for the backward formulas in ``whylab/autograd/derivatives.py``: each
replaces a chain of three or four small operators with one call and one kernel
(see ``whylab/kernels/cpu/backward_ops.py``). They are ordinary operators with
their own derivative entries, so a backward pass that uses them can itself be
differentiated. Reach them as ``whylab.ops.threshold_backward`` and so on (like
``torch.ops.aten.threshold_backward``); there are no public bindings.
"""

from __future__ import annotations

from whylab.dispatch.native._registry import native
from whylab.kernels.cpu import backward_ops as cpu
from whylab.kernels.meta import backward_ops as meta

_threshold_backward = native(
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    cpu.threshold_backward,
    meta.threshold_backward,
)
_softmax_backward_data = native(
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
    cpu._softmax_backward_data,
    meta._softmax_backward_data,
)
_log_softmax_backward_data = native(
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
    cpu._log_softmax_backward_data,
    meta._log_softmax_backward_data,
)
_tanh_backward = native(
    "tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
    cpu.tanh_backward,
    meta.tanh_backward,
)
_sigmoid_backward = native(
    "sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
    cpu.sigmoid_backward,
    meta.sigmoid_backward,
)
