"""The autograd methods of ``Tensor``: backward, hooks, retain_grad, is_inference.

They are attached to :class:`whylab.Tensor` when ``whylab.autograd`` is
imported; each is a thin front for the engine and graph modules.

Deviation from PyTorch: reading ``.grad`` of a non-leaf that does not retain
its grad returns None silently (PyTorch also warns).
"""

from __future__ import annotations

import weakref

from whylab._core.keys import DispatchKey
from whylab._tensor.tensor import Tensor
from whylab.autograd import engine
from whylab.autograd.graph import _add_hook, _HookDict


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves.

    See :func:`whylab.autograd.backward`; ``gradient`` may be omitted only for
    a tensor with one element.
    """
    engine.backward(
        self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs
    )


def register_hook(self, hook):
    """Call ``hook(grad)`` each time the gradient for this tensor is computed.

    The hook may return a tensor to use instead of ``grad``. Returns a handle
    whose ``remove()`` unregisters it. For a leaf the hook runs before the
    gradient is accumulated into ``.grad``.
    """
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        if self._hooks is None:
            self._hooks = _HookDict()
        return _add_hook(self._hooks, hook)
    return self.grad_fn._register_tensor_pre_hook(self._output_nr, hook)


def _make_retain_grad_hook(tensor):
    tensor_ref = weakref.ref(tensor)

    def retain_grad_hook(grad):
        target = tensor_ref()
        if target is None:
            return
        if target.grad is None:
            target.grad = grad.clone()
        else:
            target.grad = target.grad + grad

    return retain_grad_hook


def retain_grad(self) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward (leaves always keep it)."""
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return
    hooks = self.grad_fn._hook_lists().dict_for("retains_grad")
    hooks[self._output_nr] = (self._output_nr, _make_retain_grad_hook(self))
    self._retains_grad = True


def retains_grad(self) -> bool:
    """True for a non-leaf tensor on which ``retain_grad()`` was called."""
    return self._retains_grad


def is_inference(self) -> bool:
    """True for a tensor made inside ``inference_mode`` (it lacks the autograd keys)."""
    return not (self._keys & (1 << int(DispatchKey.Autograd)))


def attach() -> None:
    """Attach the methods above to :class:`Tensor`."""
    Tensor.backward = backward
    Tensor.register_hook = register_hook
    Tensor.retain_grad = retain_grad
    Tensor.retains_grad = property(retains_grad)
    Tensor.is_inference = is_inference
