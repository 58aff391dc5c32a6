"""The operators autograd calls, reached through the dispatcher (never the ``whylab`` facade).

``ops`` is the dispatcher's own namespace (``whylab.ops``): ``define()`` sets each
operator on it, so this module can be imported before the operators are defined and
``ops.zeros`` is the ``zeros`` operator once it is. Operators take their
arguments positionally in schema order: ``ops.zeros(size, dtype, device)``
(see whylab/dispatch/README.md, "Calling convention").
"""

from whylab.dispatch.operator import ops

__all__ = ["ones_like", "ops", "zeros_like"]


def zeros_like(tensor):
    """Zeros with ``tensor``'s shape, dtype and device (the ``zeros`` operator)."""
    return ops.zeros(tensor._sizes, tensor.dtype, tensor.device)


def ones_like(tensor):
    """Ones with ``tensor``'s shape, dtype and device (the ``ones`` operator)."""
    return ops.ones(tensor._sizes, tensor.dtype, tensor.device)
