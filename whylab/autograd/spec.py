"""``Derivative``: one entry of the derivatives table.

An entry names an operator, the node its backward runs as, and one formula per
differentiable input — like an entry of PyTorch's ``derivatives.yaml``::

    Derivative("mul", "MulBackward0",
               self=lambda grad, other: grad * other,
               other=lambda grad, self: grad * self)

A formula's *parameter names* say what it needs, and so what the forward pass
must save (PyTorch's code generator reads the formula text for the same
purpose). The names a formula may use:

* ``grad`` — the gradient of the (first) output; ``grads`` — the gradients of
  all outputs, as a tuple, zeros where none arrived;
* ``result`` — the output (``result1``, ``result2``... for further outputs);
* any argument name of the operator (``self``, ``other``, ``dim``...);
* ``<arg>_shape`` / ``<arg>_dtype`` — the shape or dtype of a tensor argument,
  saved instead of the tensor when that is all the formula needs;
  ``<arg>_shapes`` — the shapes of the tensors in a list argument.

A formula for a list argument (``cat``'s ``tensors``) returns a list with one
gradient per tensor. A formula may return None when the gradient is zero.
Formulas are written with whylab's own differentiable operations, so running
them while grad mode is on (``create_graph=True``) records them too, which is
how gradients of gradients work.
"""

from __future__ import annotations

import inspect

__all__ = ["Derivative"]

#: Parameter names that are not saved from the forward call.
GRADIENT_PARAMETERS = ("grad", "grads")


class Derivative:
    """The backward formulas of one operator (see the module docstring)."""

    __slots__ = ("op", "name", "formulas", "parameters", "name_parameters", "_saved_cache")

    def __init__(self, op: str, name, /, **formulas):
        if not formulas:
            raise ValueError(f"Derivative({op!r}) needs at least one formula")
        self.op = op
        self.name = name
        self.formulas = formulas
        self.parameters = {
            input_name: tuple(inspect.signature(fn).parameters)
            for input_name, fn in formulas.items()
        }
        self.name_parameters = tuple(inspect.signature(name).parameters) if callable(name) else ()
        self._saved_cache = {}

    def node_name(self, values: dict) -> str:
        """The node's class name for this call (some ops pick a variant by argument)."""
        if callable(self.name):
            return self.name(*(values[p] for p in self.name_parameters))
        return self.name

    def saved_names(self, needed_inputs: tuple) -> tuple:
        """What the forward pass must save when ``needed_inputs`` need gradients."""
        cached = self._saved_cache.get(needed_inputs)
        if cached is None:
            names = []
            for input_name in needed_inputs:
                for parameter in self.parameters[input_name]:
                    if parameter not in GRADIENT_PARAMETERS and parameter not in names:
                        names.append(parameter)
            cached = tuple(names)
            self._saved_cache[needed_inputs] = cached
        return cached

    def __repr__(self) -> str:
        return f"Derivative({self.op!r}, inputs={list(self.formulas)})"
