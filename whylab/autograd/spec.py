"""``Derivative``: one entry of the derivatives table, and the rules for its parameter names.

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
  ``<arg>_shapes`` — the shapes of the tensors in a list argument;
  ``<arg>_geometry`` — sizes, strides and storage offset of a tensor argument.

This module is the one place these rules live: :meth:`Derivative.resolve`
reads every parameter name against the operator's schema once, at
registration, and :func:`metadata_of` computes what a ``<arg>_<suffix>`` name
saves.

A formula for a list argument (``cat``'s ``tensors``) returns a list with one
gradient per tensor. A formula may return None when the gradient is zero.
Formulas are written with whylab's own differentiable operations, so running
them while grad mode is on (``create_graph=True``) records them too, which is
how gradients of gradients work.
"""

from __future__ import annotations

import inspect
import re
from typing import NamedTuple

from whylab._tensor.tensor import Tensor

__all__ = ["REFUSES_GRAD", "Derivative", "Parameter", "metadata_of"]

#: What a formula parameter refers to (``Parameter.kind``).
GRAD, GRADS, RESULT, ARGUMENT, METADATA = "grad", "grads", "result", "argument", "metadata"

_RESULT_NAME = re.compile(r"^result(\d*)$")
#: Longest first: ``tensors_shapes`` must not read as ``tensors_shape`` + "s".
METADATA_SUFFIXES = ("_shapes", "_shape", "_dtype", "_geometry")


class Parameter(NamedTuple):
    """One formula parameter, resolved against the schema.

    ``kind`` is one of ``grad``, ``grads``, ``result`` (``index``: which
    output), ``argument`` (``argument``: its name) or ``metadata``
    (``argument`` and ``suffix``: ``self_shape`` is ``self`` + ``_shape``).
    ``is_variable`` marks what holds a tensor and is released after backward.
    """

    name: str
    kind: str
    index: int = 0
    argument: str | None = None
    suffix: str | None = None
    is_variable: bool = False


def _resolve_name(op_name: str, name: str, arguments: dict) -> Parameter:
    """What ``name`` means for an operator whose schema arguments are ``arguments``
    (name -> is a tensor or tensor list). Argument names win over the other rules."""
    if name == GRAD or name == GRADS:
        return Parameter(name, name)
    if name in arguments:
        return Parameter(name, ARGUMENT, argument=name, is_variable=arguments[name])
    match = _RESULT_NAME.match(name)
    if match:
        return Parameter(name, RESULT, index=int(match.group(1) or 0), is_variable=True)
    for suffix in METADATA_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in arguments:
            return Parameter(name, METADATA, argument=name[: -len(suffix)], suffix=suffix)
    raise ValueError(f"derivative of {op_name}: unknown name {name!r}")


def metadata_of(suffix: str, value):
    """What a ``<arg><suffix>`` parameter saves of the argument's ``value``."""
    if suffix == "_shapes":
        return tuple(item._sizes for item in value)
    if not isinstance(value, Tensor):
        return () if suffix == "_shape" else None
    if suffix == "_shape":
        return value._sizes
    if suffix == "_dtype":
        return value.dtype
    return (value._sizes, value._strides, value._offset)


class _RefusesGrad:
    def __repr__(self) -> str:
        return "REFUSES_GRAD"


#: In place of a formula: the input may not require grad; the forward pass raises
#: PyTorch's error when it does (``nll_loss_forward``'s ``weight``).
REFUSES_GRAD = _RefusesGrad()


class Derivative:
    """The backward formulas of one operator (see the module docstring).

    ``refused`` names the inputs given ``REFUSES_GRAD`` instead of a formula.
    """

    __slots__ = ("op", "name", "formulas", "refused", "parameters", "name_parameters")

    def __init__(self, op: str, name, /, **formulas):
        self.refused = tuple(key for key, value in formulas.items() if value is REFUSES_GRAD)
        formulas = {key: value for key, value in formulas.items() if value is not REFUSES_GRAD}
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

    def resolve(self, op_name: str, schema_arguments) -> dict:
        """Read every parameter name against an operator's schema; raise on unknown names.

        ``schema_arguments`` are the operator's schema arguments (an in-place
        operator resolves its out-of-place form's entry against its own
        schema). Returns a dict from each parameter name a formula uses to its
        :class:`Parameter`. Runs once per operator, at registration.
        """
        arguments = {arg.name: arg.is_tensor or arg.is_tensor_list for arg in schema_arguments}
        for input_name in (*self.formulas, *self.refused):
            if input_name not in arguments:
                raise ValueError(f"derivative of {op_name}: {input_name!r} is not an argument")
        resolved = {}
        for input_name, names in self.parameters.items():
            for name in names:
                if name not in resolved:
                    try:
                        resolved[name] = _resolve_name(op_name, name, arguments)
                    except ValueError:
                        raise ValueError(
                            f"derivative of {op_name}, formula for {input_name!r}: "
                            f"unknown name {name!r}"
                        ) from None
        for name in self.name_parameters:
            if name not in arguments:
                raise ValueError(f"derivative of {op_name}: node name reads unknown {name!r}")
        return resolved

    def saved_names(self, needed_inputs: tuple) -> tuple:
        """What the forward pass must save when ``needed_inputs`` need gradients."""
        names = []
        for input_name in needed_inputs:
            for parameter in self.parameters[input_name]:
                if parameter not in (GRAD, GRADS) and parameter not in names:
                    names.append(parameter)
        return tuple(names)

    def __repr__(self) -> str:
        return f"Derivative({self.op!r}, inputs={list(self.formulas)})"
