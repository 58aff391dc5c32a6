"""Resetting ``.grad``: the one implementation behind ``Module.zero_grad`` and
``Optimizer.zero_grad``.

Backward *adds* into ``.grad`` (AccumulateGrad), so a training loop must clear the
gradients between steps. Both ``nn.Module`` and ``optim.Optimizer`` offer that, over
different lists of parameters; they share this function so that neither package has to
import the other.
"""

from __future__ import annotations

from collections.abc import Iterable


def zero_grads(params: Iterable, set_to_none: bool = True) -> None:
    """Reset the ``.grad`` of every tensor in ``params`` that has one.

    With ``set_to_none=True`` (the default, as in torch) each ``.grad`` becomes ``None``,
    which frees its memory and lets the next backward write the gradient instead of adding
    to zeros. With ``False`` the existing gradient tensors are filled with zeros in place;
    a gradient that is itself part of a graph (``create_graph=True``) is detached first.
    """
    for param in params:
        # ``_grad`` is what the ``grad`` property reads and writes, without its calls (and
        # without its warning for a non-leaf: resetting never reads a gradient).
        if param._grad is None:
            continue
        if set_to_none:
            param._grad = None
            continue
        grad = param._grad
        if grad.grad_fn is not None:
            grad = grad.detach()
            param.grad = grad
        grad.requires_grad_(False)
        grad.zero_()
