"""Parameter: a tensor that a Module registers as trainable.

A Parameter is an ordinary whylab tensor with one extra meaning: assigning it as an attribute
of a :class:`~whylab.nn.Module` registers it in the module's ``_parameters``, so it shows up in
``parameters()``, ``state_dict()`` and hence in an optimizer. It requires grad by default and
is always a leaf of the autograd graph, so backward accumulates into its ``.grad``.
"""

from __future__ import annotations

import whylab


class Parameter(whylab.Tensor):
    """A trainable tensor; ``Parameter(data)`` shares ``data``'s storage (no copy).

    Args:
        data: the initial values (None gives an empty float tensor).
        requires_grad: whether gradients are recorded for it (default True).
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad: bool = True):
        if data is None:
            data = whylab.empty(0)
        if not isinstance(data, whylab.Tensor):
            raise TypeError(
                f"Parameter expects a whylab Tensor as data, got {type(data).__name__}"
            )
        # A new tensor object of class Parameter over the same storage (as torch does).
        return whylab.Tensor._make_subclass(cls, data.detach(), requires_grad)

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        # Everything happened in __new__; Tensor.__init__ refuses direct construction.
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        copied = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol):
        # Pickled (torch.save of a whole module) as its values and requires_grad, as torch
        # pickles a Parameter: no gradient, no autograd state (a weak reference to its
        # gradient accumulator could not be pickled anyway).
        return (_rebuild_parameter, (self.detach().clone(), self.requires_grad))


def _rebuild_parameter(data, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)
