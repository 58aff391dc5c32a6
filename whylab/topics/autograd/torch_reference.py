"""What PyTorch records for each expression on the page: the graph check's reference.

These lists were written by running each expression once under torch 2.13.0
(CPU, float64, the same shapes as :mod:`whylab.topics.autograd.expressions`)
and walking ``loss.grad_fn.next_functions``; ``AccumulateGrad`` nodes are
left out. ``PRODUCT_SAVES`` lists, for every ``MmBackward0``, ``AddmmBackward0``
and ``MulBackward0`` node, the ``_saved_*`` attributes that hold a tensor, sorted
within each node and across nodes. tests/topics/test_autograd_topic.py
rebuilds both from torch live and compares, so the lists cannot drift from
PyTorch unnoticed; they are never derived from whylab's own graph.
"""

from __future__ import annotations

TORCH_VERSION = "2.13.0"

RECORDED_NODES: dict[str, list[str]] = {
    "tanh-affine": ["AddBackward0", "MmBackward0", "SumBackward0", "TanhBackward0"],
    "softmax-ce": ["LogSoftmaxBackward0", "MmBackward0", "NllLossBackward0"],
    "linear-ce": ["AddmmBackward0", "LogSoftmaxBackward0", "NllLossBackward0", "TBackward0"],
    "fan-out": ["AddBackward0", "MulBackward0", "SumBackward0"],
    "diff-squares": ["AddBackward0", "MulBackward0", "SubBackward0", "SumBackward0"],
    "mlp": ["AddBackward0", "AddBackward0", "LogSoftmaxBackward0", "MmBackward0",
            "MmBackward0", "NllLossBackward0", "ReluBackward0"],
}

PRODUCT_SAVES: dict[str, list[tuple[str, list[str]]]] = {
    "tanh-affine": [("MmBackward0", ["self"])],  # only w requires grad: dW = xᵀ dY needs x
    "softmax-ce": [("MmBackward0", ["self"])],
    "linear-ce": [("AddmmBackward0", ["mat1"])],  # F.linear on 2-D input: addmm(b, x, Wᵀ)
    "fan-out": [("MulBackward0", ["other", "self"])],
    "diff-squares": [("MulBackward0", ["other", "self"])],
    "mlp": [("MmBackward0", ["mat2", "self"]), ("MmBackward0", ["self"])],
}
