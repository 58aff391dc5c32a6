"""In-place operations in the graph: the checks, and rebasing a tensor's history.

After ``y.mul_(2)`` the tensor ``y`` holds new values, so its ``grad_fn`` must
become the node of ``mul_``, whose edge for ``self`` leads to ``y``'s *old*
``grad_fn``. That is all for a tensor that is not a view.

A **view** is harder: writing ``y[:, 1].mul_(2)`` changes ``y`` too. As in
PyTorch, the history of the *base* is rebased onto a :class:`CopySlices`
node. In backward it receives the gradient for the whole base, cuts out the
part the view covers, runs the in-place op's node on it, and puts that node's
gradient for the view's old values back in place; the base's old history gets
the result. The view itself gets a fresh ``AsStridedBackward0`` node reading
from the base's new history. Other views of the same base notice the change
through the shared version counter and regenerate their ``grad_fn`` the same
way the next time they are used (see ``graph.gradient_edge``).

Errors follow PyTorch: a leaf that requires grad, or a view of one, cannot be
written in place while grad mode is on; neither can one output of an op that
returns several views.

Deviations from PyTorch:

* A view made under ``no_grad`` of a tensor that requires grad, then written
  in place with grad mode on, raises in PyTorch; here the write is recorded
  like any other write through a view (gradients flow to the base).
* A view's stale ``grad_fn`` is replaced when the view is next *used* by a
  recorded op (see ``graph.gradient_edge``); reading ``view.grad_fn`` in
  between shows the old node, where PyTorch regenerates it on access.
"""

from __future__ import annotations

import numpy as np

from whylab._tensor.geometry import INTERNAL_OVERLAP_ERROR, has_internal_overlap
from whylab._tensor.tensor import Tensor
from whylab.autograd import graph
from whylab.autograd._ops import ops
from whylab.autograd._strided import source_element_index
from whylab.autograd.graph import Node, _engine_state, gradient_edge

__all__ = ["check_inplace", "rebase_history", "CopySlices", "regenerate_view_grad_fn"]


def check_inplace(tensor) -> None:
    """Raise PyTorch's error when ``tensor`` may not be written in place under grad mode."""
    if not tensor._requires_grad:
        return
    if tensor.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    base = tensor._base
    if base is not None:
        if base.grad_fn is None and base._requires_grad:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
        if tensor.grad_fn.is_multi_output_view:
            name = tensor.grad_fn.name()
            raise RuntimeError(
                f"Output {tensor._output_nr} of {name} is a view and is being modified inplace. "
                "This view is the output of a function that returns multiple views. Such functions "
                "do not allow the output views to be modified inplace. You should replace the "
                "inplace operation by an out-of-place one."
            )


def rebase_history(tensor, node) -> None:
    """Make ``node`` (the in-place op's node) the new history of ``tensor``."""
    base = tensor._base
    if base is None:
        _move_retain_grad_hook(tensor, node)
        tensor.grad_fn = node
        tensor._output_nr = 0
        tensor._requires_grad = True
        return
    copy_slices = CopySlices(base, tensor, node)
    _move_retain_grad_hook(base, copy_slices)
    base.grad_fn = copy_slices
    base._output_nr = 0
    base._requires_grad = True
    regenerate_view_grad_fn(tensor)


def _move_retain_grad_hook(tensor, new_node) -> None:
    """A tensor that retains its grad keeps doing so after its history changes."""
    if not tensor._retains_grad:
        return
    old = tensor.grad_fn
    if old is None or old._hooks is None or not old._hooks.retains_grad:
        return
    hook = old._hooks.retains_grad.pop(tensor._output_nr, None)
    if hook is not None:
        new_node._hook_lists().dict_for("retains_grad")[0] = (0, hook[1])


def _geometry(tensor):
    return (tensor._sizes, tensor._strides, tensor._offset)


def _index_tensor(array):
    return Tensor._from_numpy_result(np.ascontiguousarray(array, dtype=np.int64))


class CopySlices(Node):
    """The base's new history after an in-place write through one of its views."""

    __slots__ = ("fn", "_base_geometry", "_view_geometry", "_base_dtype")

    def __init__(self, base, view, fn):
        next_functions = (gradient_edge(base),) + tuple(fn.next_functions[1:])
        super().__init__(next_functions, ((base._sizes, base.dtype),))
        self.fn = fn
        self._base_geometry = _geometry(base)
        self._view_geometry = _geometry(view)
        self._base_dtype = base.dtype

    def apply(self, grad_outputs):
        # as in torch: the gradient of the view's old values cannot be cut out of a
        # view whose elements alias each other (zero_ on an expanded view)
        if has_internal_overlap(*self._view_geometry[:2]):
            raise RuntimeError(INTERNAL_OVERLAP_ERROR)
        grad = grad_outputs[0]
        base_sizes = self._base_geometry[0]
        view_sizes = self._view_geometry[0]
        index = source_element_index(self._base_geometry, self._view_geometry)
        index_tensor = _index_tensor(index)
        flat = grad.reshape(-1)
        grad_slice = flat.index_select(0, index_tensor).reshape(view_sizes)
        # The in-place node's first edge (the view's old history) is not part of the
        # graph the engine walks, so it must not be filtered by the pass's "needed"
        # set; gradients it computes for edges this node does not need are dropped.
        needed = _engine_state.needed
        _engine_state.needed = None
        try:
            fn_grads = self.fn.apply([grad_slice])
        finally:
            _engine_state.needed = needed
        results = [None] * len(self.next_functions)
        if self.should_compute_input_grad(0):
            numel = flat._sizes[0]
            in_view = np.zeros(numel, dtype=bool)
            in_view[index] = True
            mask = Tensor._from_numpy_result(in_view)
            view_grad = fn_grads[0]
            if view_grad is None:
                base_grad = flat.masked_fill(mask, 0.0)
            else:
                placed = ops.zeros((numel,), grad.dtype, grad.device).scatter_add(
                    0, index_tensor, view_grad.reshape(-1)
                )
                base_grad = ops.where(mask, placed, flat)
            results[0] = base_grad.reshape(base_sizes)
        for i in range(1, len(results)):
            if self.should_compute_input_grad(i):
                results[i] = fn_grads[i]
        return results

    def release_variables(self) -> None:
        self.fn.release_variables()

    def saved_tensor_items(self):
        return self.fn.saved_tensor_items()


class AsStridedBackward0(Node):
    """The ``grad_fn`` of a view re-derived from its base: scatter the gradient back.

    Also the node of the ``as_strided`` operator. Elements the view shows more
    than once receive the sum of their gradients.
    """

    __slots__ = ("_source_geometry", "_view_geometry")

    def __init__(self, next_functions, input_metadata, source_geometry, view_geometry):
        super().__init__(next_functions, input_metadata)
        self._source_geometry = source_geometry
        self._view_geometry = view_geometry

    def apply(self, grad_outputs):
        from whylab.autograd.derivatives import as_strided_backward

        if not self.should_compute_input_grad(0):
            return [None]
        return [as_strided_backward(grad_outputs[0], self._source_geometry, self._view_geometry)]


def regenerate_view_grad_fn(view):
    """Give ``view`` a fresh ``AsStridedBackward0`` reading from its base's history."""
    base = view._base
    edge = gradient_edge(base)
    if edge[0] is None:
        view.grad_fn = None
        view._requires_grad = False
        return None
    node = AsStridedBackward0(
        (edge,), ((view._sizes, view.dtype),), _geometry(base), _geometry(view)
    )
    node._view_version = view._version_counter.value
    view.grad_fn = node
    view._output_nr = 0
    view._requires_grad = True
    return node


graph.view_grad_fn_regenerator = regenerate_view_grad_fn
