"""Summing a broadcast gradient back to its input's shape (PyTorch's ``at::sum_to``).

The engine calls this for every gradient whose shape differs from what its
receiver expects, and ``expand``'s formula uses it too: one function for both.
"""

from __future__ import annotations

from whylab.autograd._ops import ops

__all__ = ["is_expandable_to", "sum_to_size"]


def is_expandable_to(shape, sizes) -> bool:
    """Whether a tensor of ``shape`` broadcasts to ``sizes``."""
    leading = len(sizes) - len(shape)
    if leading < 0:
        return False
    for want, have in zip(shape, sizes[leading:], strict=True):
        if want != have and want != 1:
            return False
    return True


def sum_to_size(grad, shape):
    """Sum ``grad`` over the dimensions that broadcasting added or expanded to reach ``shape``.

    ``shape`` must be expandable to ``grad``'s shape (see :func:`is_expandable_to`).
    """
    sizes = grad._sizes
    if tuple(sizes) == tuple(shape):
        return grad
    leading = len(sizes) - len(shape)
    expanded = [
        leading + i for i, want in enumerate(shape) if want == 1 and sizes[leading + i] != 1
    ]
    if not expanded:  # only dimensions added in front (a bias): the sum has the shape already
        return ops.sum(grad, tuple(range(leading)), False, None)
    grad = ops.sum(grad, tuple(range(leading)) + tuple(expanded), True, None)
    return ops.reshape(grad, tuple(shape))
