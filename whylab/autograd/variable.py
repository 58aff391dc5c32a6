"""``autograd.Variable``: the pre-0.4 wrapper, kept so old tutorials run.

In PyTorch today ``Variable(t, requires_grad=True)`` returns a Tensor (one that
shares ``t``'s data, as a new leaf), and every Tensor counts as a Variable for
``isinstance``. whylab does the same.
"""

from __future__ import annotations

from whylab._tensor.tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: ``data`` as a new leaf tensor (shared data).

    ``volatile`` was removed from PyTorch in 0.4 and has no effect here either.
    """

    def __new__(cls, data, requires_grad: bool = False, volatile: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
