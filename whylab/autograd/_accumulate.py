"""How a leaf's ``.grad`` is written: steal, copy or add (PyTorch's AccumulateGrad rules).

* First gradient, grad mode off: if the engine's tensor is seen by nobody else
  (only the engine references it, and no other tensor shares its storage) and
  it has the leaf's layout, it becomes ``.grad`` as is ("steal"). A view
  qualifies when its base is reachable only through it -- the ``t()`` that
  ``TBackward0`` returns, the reshape of a summed broadcast -- as in PyTorch,
  whose rule counts references to the tensor, not to its storage; the stolen
  view then drops its link to the unreachable base.
  Otherwise a copy with the leaf's layout is stored ("copy"), so that a later
  in-place ``+=`` cannot reach a tensor the user or another leaf still holds.
* First gradient under ``create_graph``: a differentiable clone is stored, so
  ``.grad`` carries a graph of its own.
* Later gradients: added in place into ``.grad`` (grad mode off), or out of
  place (``create_graph``: the sum must be differentiable too).
"""

from __future__ import annotations

import sys

from whylab._core import thread_state
from whylab._tensor.geometry import contiguous_strides, is_non_overlapping_and_dense
from whylab.autograd import grad_mode
from whylab.autograd._ops import ops

# References to the gradient while _can_steal looks at it, when nothing else holds
# it: the node's input buffer (a list the engine owns), accumulate_grad's and
# _can_steal's parameters, and getrefcount's own argument. (CPython 3.11 moves
# call arguments into the callee's frame, so they count once.) A user, a hook or
# a second input buffer holding the same tensor adds one and forces a copy; the
# engine tests check both outcomes.
_EXPECTED_REFS = 4
_EXPECTED_STORAGE_REFS = 2
# A view's base, when only the view holds it: the view's _base slot, _can_steal's
# local name and getrefcount's argument. Its storage then has one holder more.
_EXPECTED_BASE_REFS = 3


def obeys_layout_contract(gradient, variable) -> bool:
    """A leaf's grad has the leaf's strides when the leaf is dense, else it is contiguous."""
    strides = variable._strides
    if gradient._strides == strides and strides == contiguous_strides(variable._sizes):
        return True  # both row-major (the common case), so both dense with equal strides
    if gradient._strides == variable._strides and gradient._sizes == variable._sizes:
        if is_non_overlapping_and_dense(variable._sizes, variable._strides):
            return True
    if is_non_overlapping_and_dense(variable._sizes, variable._strides):
        return all(
            size == 1 or g_stride == v_stride
            for size, g_stride, v_stride in zip(
                variable._sizes, gradient._strides, variable._strides, strict=True
            )
        )
    return gradient.is_contiguous()


def _can_steal(gradient, variable) -> bool:
    base = gradient._base
    storage_refs = _EXPECTED_STORAGE_REFS
    if base is not None:
        if base.grad_fn is not None or sys.getrefcount(base) > _EXPECTED_BASE_REFS:
            return False
        storage_refs += 1
    return (
        gradient.grad_fn is None
        and not gradient._requires_grad
        and sys.getrefcount(gradient) <= _EXPECTED_REFS
        and sys.getrefcount(gradient._storage) <= storage_refs
        and obeys_layout_contract(gradient, variable)
    )


def clone_obeying_contract(gradient, variable):
    """A copy of ``gradient`` laid out like ``variable`` (contiguous if the leaf is not dense)."""
    if is_non_overlapping_and_dense(variable._sizes, variable._strides):
        if obeys_layout_contract(gradient, variable):
            return ops.clone(gradient, None)
        result = ops.empty_strided(
            variable._sizes, variable._strides, gradient.dtype, gradient.device
        )
        return ops.copy_(result, gradient, False)
    return ops.clone(gradient, "contiguous_format")


def accumulate_grad(variable, gradient) -> None:
    """Write or add ``gradient`` into ``variable.grad`` following the rules above."""
    if gradient is None:
        return
    trace = thread_state.engine_trace.active  # an open engine_trace() records the mode
    create_graph = grad_mode._state.enabled  # the engine sets grad mode to create_graph
    existing = variable._grad
    if existing is None:
        if create_graph:
            variable._grad = clone_obeying_contract(gradient, variable)
            mode = "copy"
        elif _can_steal(gradient, variable):
            gradient._base = None  # nothing else can reach the base of a stolen view
            variable._grad = gradient
            mode = "steal"
        else:
            variable._grad = clone_obeying_contract(gradient, variable)
            mode = "copy"
    elif create_graph:
        variable._grad = existing + gradient
        mode = "add"
    else:
        existing.add_(gradient)
        mode = "add"
    if trace is not None:
        trace.record("accumulate_grad", node=f"leaf {list(variable._sizes)}", mode=mode)
