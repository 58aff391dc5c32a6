"""The operators autograd calls, reached through the dispatcher (never the ``whylab`` facade).

``ops.zeros`` is the ``zeros`` operator, looked up by name when used (so this
module can be imported before the operators are defined). Operators take their
arguments positionally in schema order: ``ops.zeros(size, dtype, device)``
(see whylab/dispatch/README.md, "Calling convention").
"""

from whylab.dispatch.operator import OpNamespace

__all__ = ["ops"]

ops = OpNamespace()
