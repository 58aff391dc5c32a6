"""Automatic differentiation, built the way PyTorch's autograd is built.

Modules, in the order a reader may want them:

* :mod:`~whylab.autograd.grad_mode` — ``no_grad``, ``enable_grad``, ``inference_mode``;
* :mod:`~whylab.autograd.graph` — nodes, edges, AccumulateGrad, saved tensors, hooks;
* :mod:`~whylab.autograd.derivatives` — the one table of backward formulas;
* :mod:`~whylab.autograd.recording` — the Autograd kernels that record the graph;
* :mod:`~whylab.autograd.inplace` — in-place ops and views in the graph (CopySlices);
* :mod:`~whylab.autograd.engine` — the backward pass (dependencies, ready queue,
  input buffers), ``backward``, ``grad``, ``engine_trace``;
* :mod:`~whylab.autograd.function` — ``autograd.Function`` for custom backward code;
* :mod:`~whylab.autograd.grad_reset` — ``zero_grads``, behind both ``zero_grad`` methods;
* :mod:`~whylab.autograd.gradcheck`, :mod:`~whylab.autograd.anomaly`,
  :mod:`~whylab.autograd.graph_export`, :mod:`~whylab.autograd.memory` — tools.
"""

from whylab.autograd import graph, graph_export  # noqa: F401
from whylab.autograd.anomaly import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from whylab.autograd.engine import EngineTrace, backward, engine_trace, grad
from whylab.autograd.function import Function, FunctionCtx
from whylab.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from whylab.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from whylab.autograd.memory import saved_tensors_bytes
from whylab.autograd.variable import Variable

__all__ = [
    "backward",
    "grad",
    "Function",
    "FunctionCtx",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "engine_trace",
    "EngineTrace",
    "saved_tensors_bytes",
    "graph",
    "graph_export",
    "Variable",
]


def _install() -> None:
    """Register the Autograd kernels on every operator and attach the Tensor methods.

    Called by ``whylab/__init__.py`` after the native operators are defined.
    """
    from whylab.autograd import tensor_methods
    from whylab.autograd.derivatives import DERIVATIVES, NOT_DIFFERENTIABLE
    from whylab.autograd.recording import register_autograd_kernels

    register_autograd_kernels(DERIVATIVES, skip=NOT_DIFFERENTIABLE)
    tensor_methods.attach()
