"""Full backward hooks of a Module: see what flows into and out of it during backward.

Like torch's ``BackwardHook``, the module's tensor inputs and outputs are passed
through identity functions. The one on the outputs sees ``grad_output``; the one
on the inputs sees ``grad_input`` and calls the hooks with both (a hook may
return a replacement for ``grad_input``). When no input requires grad the
hooks run as soon as ``grad_output`` is known, with ``grad_input`` all None.
"""

from __future__ import annotations

import whylab
from whylab.autograd import Function


class _Identity(Function):
    """Returns its tensors unchanged; its backward hands the gradients to a callback."""

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.callback(grads))


class BackwardHookState:
    """The bookkeeping of one call of a module that has full backward hooks."""

    def __init__(self, module):
        self.module = module
        self.grad_output = None
        self.n_inputs = 0

    def wrap_inputs(self, args: tuple) -> tuple:
        positions = [
            i for i, a in enumerate(args) if isinstance(a, whylab.Tensor) and a.requires_grad
        ]
        self.n_inputs = len(positions)
        if not positions or not whylab.is_grad_enabled():
            return args
        wrapped = _Identity.apply(self._on_grad_input, *(args[i] for i in positions))
        args = list(args)
        for i, tensor in zip(positions, wrapped, strict=True):
            args[i] = tensor
        return tuple(args)

    def wrap_outputs(self, output):
        if not whylab.is_grad_enabled():
            return output
        single = isinstance(output, whylab.Tensor)
        tensors = (output,) if single else tuple(output)
        if not any(isinstance(t, whylab.Tensor) and t.requires_grad for t in tensors):
            return output
        wrapped = _Identity.apply(self._on_grad_output, *tensors)
        return wrapped[0] if single else type(output)(wrapped)

    def _on_grad_output(self, grads):
        self.grad_output = grads
        if self.n_inputs == 0:
            self._call_hooks((None,))
        return grads

    def _on_grad_input(self, grads):
        replaced = self._call_hooks(grads)
        return grads if replaced is None else replaced

    def _call_hooks(self, grad_input):
        result = None
        for hook in list(self.module._backward_hooks.values()):
            replaced = hook(self.module, tuple(grad_input), self.grad_output)
            if replaced is not None:
                grad_input = tuple(replaced)
                result = grad_input
        return result
