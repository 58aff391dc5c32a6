"""Recording: the Autograd kernels that build the graph while operators run.

Every differentiable operator gets one kernel for the Autograd dispatch key,
made here from its entry in the derivatives table. The kernel:

1. returns straight to the next key (``op.redispatch``) unless grad mode is on
   and some tensor argument requires grad — the common "nothing to record"
   path costs one flag read and a scan of the tensor arguments;
2. for an in-place op, checks the write is allowed (not a leaf that requires
   grad, not an output of a multi-view op) and saves what the formula needs
   from *before* the write;
3. runs the op below Autograd;
4. creates the node: its edges (``next_functions``), the shape and dtype of
   each output (``input_metadata``), and the saved values the formulas of the
   inputs that need a gradient ask for (nothing more);
5. makes the node the ``grad_fn`` of the outputs — or, for an in-place op,
   *rebases* the written tensor's history (see :mod:`whylab.autograd.inplace`).

Operators without a formula get a kernel that still records, with a node that
raises "the derivative for 'op' is not implemented" if a backward pass reaches
it; operators whose outputs are never floating point (comparisons, argmax)
record nothing. Composite operators (written in terms of other operators)
need no kernel: their parts record themselves.
"""

from __future__ import annotations

import ast
import re

from whylab._core.keys import DispatchKey
from whylab._tensor.tensor import Tensor
from whylab.autograd import anomaly, grad_mode
from whylab.autograd.graph import (
    ERR_BACKWARD_TWICE,
    Node,
    SavedTensor,
    _engine_state,
    gradient_edge,
)
from whylab.dispatch.tls import local_keys

__all__ = ["FormulaNode", "make_autograd_kernel", "register_autograd_kernels"]


class _Released:
    """Marks a saved argument dropped after backward (any later use raises)."""

    def __repr__(self) -> str:
        return "<released>"


_RELEASED = _Released()


class _SavedList(tuple):
    """The saved tensors of a list argument (``index``'s ``indices``; None stays None)."""

    __slots__ = ()


_WITHOUT_AUTOGRAD = ~(1 << int(DispatchKey.Autograd))

_RESULT_NAME = re.compile(r"^result(\d*)$")


class FormulaNode(Node):
    """A node whose backward is an entry of the derivatives table.

    One subclass per node name (``MulBackward0``...) is made on demand, so
    ``type(t.grad_fn).__name__`` reads like PyTorch's. ``_saved`` maps the names
    the formulas use to saved values; ``_groups`` lists the differentiable
    inputs as ``(name, first edge, number of edges, is_list)``.
    """

    __slots__ = ("_saved", "_groups")

    _spec = None  # the Derivative entry
    _variable_names = frozenset()  # saved names released after backward
    _op_name = ""

    def apply(self, grad_outputs):
        spec = self._spec
        next_functions = self.next_functions
        needed_nodes = _engine_state.needed
        results = [None] * len(next_functions)
        for name, start, count, is_list in self._groups:
            if is_list:
                wanted = [
                    _is_wanted(next_functions[i][0], needed_nodes)
                    for i in range(start, start + count)
                ]
                if not any(wanted):
                    continue
            elif not _is_wanted(next_functions[start][0], needed_nodes):
                continue
            arguments = [self._argument(p, grad_outputs) for p in spec.parameters[name]]
            if grad_mode._state.enabled:  # create_graph: the formula itself is recorded
                gradient = spec.formulas[name](*arguments)
            else:
                # Nothing can be recorded, so skip the Autograd key for the formula's
                # ops: same result, one kernel call less per op. (Arguments were
                # unpacked above, outside this block: unpacking may run user code.)
                keep = local_keys.keep
                local_keys.keep = keep & _WITHOUT_AUTOGRAD
                try:
                    gradient = spec.formulas[name](*arguments)
                finally:
                    local_keys.keep = keep
            if is_list:
                if gradient is None:
                    continue
                for offset, (value, needed) in enumerate(zip(gradient, wanted, strict=True)):
                    if needed:
                        results[start + offset] = value
            else:
                results[start] = gradient
        return results

    def _argument(self, name, grad_outputs):
        """The value of one formula parameter: a gradient, or something saved."""
        if name == "grad":
            gradient = grad_outputs[0]
            return gradient if gradient is not None else self._zeros_for_output(0)
        value = self._saved.get(name, _RELEASED) if name != "grads" else None
        if type(value) is SavedTensor:
            return value.unpack(self)
        if name == "grads":
            return tuple(
                g if g is not None else self._zeros_for_output(i)
                for i, g in enumerate(grad_outputs)
            )
        if value is _RELEASED:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if type(value) is _SavedList:
            return [item.unpack(self) if type(item) is SavedTensor else item for item in value]
        return value

    def __getattr__(self, name):
        # PyTorch's accessors for saved values: grad_fn._saved_other (unpacked,
        # version-checked) and grad_fn._raw_saved_other (the SavedTensor itself).
        # Only reached for names that are not regular attributes.
        for prefix, unpack in (("_raw_saved_", False), ("_saved_", True)):
            if name.startswith(prefix):
                key = name[len(prefix) :]
                saved = object.__getattribute__(self, "_saved")
                if key in saved:
                    if not unpack:
                        return saved[key]
                    return self._argument(key, ())
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _zeros_for_output(self, index):
        import whylab

        shape, dtype = self.input_metadata[index]
        return whylab.zeros(shape, dtype=dtype)

    def release_variables(self) -> None:
        saved = self._saved
        for name in self._variable_names:
            value = saved.get(name)
            if value is None or value is _RELEASED:
                continue
            if type(value) is SavedTensor:
                value.release()
            elif type(value) is _SavedList:
                for item in value:
                    if type(item) is SavedTensor:
                        item.release()
            saved[name] = _RELEASED

    def saved_tensor_items(self):
        items = []
        for name, value in self._saved.items():
            if type(value) is SavedTensor:
                items.append((name, value))
            elif type(value) is _SavedList:
                items.extend(
                    (f"{name}[{i}]", item)
                    for i, item in enumerate(value)
                    if type(item) is SavedTensor
                )
        return items


def _is_wanted(next_node, needed_nodes) -> bool:
    """Whether a gradient for this edge is needed in the running backward pass."""
    return next_node is not None and (needed_nodes is None or next_node in needed_nodes)


class NotImplementedNode(Node):
    """Recorded for an op without a formula; raises only if backward reaches it."""

    __slots__ = ("_op_name",)

    def apply(self, grad_outputs):
        raise RuntimeError(
            f"the derivative for '{self._op_name}' is not implemented. "
            "Use whylab.autograd.Function to provide one."
        )


_node_classes: dict = {}


def node_class(name: str, spec, variable_names, op_name: str):
    """The FormulaNode subclass called ``name`` for ``spec`` (made once, then cached)."""
    key = (name, id(spec))
    cls = _node_classes.get(key)
    if cls is None:
        cls = type(
            name,
            (FormulaNode,),
            {
                "__slots__": (),
                "_spec": spec,
                "_variable_names": frozenset(variable_names),
                "_op_name": op_name,
                "__module__": "whylab.autograd.derivatives",
            },
        )
        _node_classes[key] = cls
    return cls


def _parse_default(text):
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _check_formula_names(op, spec) -> None:
    """Reject a table entry that names arguments the operator does not have."""
    argument_names = {arg.name for arg in op.schema.arguments}
    for input_name in spec.formulas:
        if input_name not in argument_names:
            raise ValueError(f"derivative of {op.name}: {input_name!r} is not an argument")
    for input_name, parameters in spec.parameters.items():
        for parameter in parameters:
            base = parameter
            for suffix in ("_shapes", "_shape", "_dtype", "_geometry"):
                if parameter.endswith(suffix):
                    base = parameter[: -len(suffix)]
                    break
            if parameter in ("grad", "grads") or _RESULT_NAME.match(parameter):
                continue
            if base not in argument_names:
                raise ValueError(
                    f"derivative of {op.name}, formula for {input_name!r}: "
                    f"unknown name {parameter!r}"
                )


def make_autograd_kernel(op, spec):
    """The Autograd-key kernel of ``op`` that records nodes built from ``spec``.

    ``spec`` is the op's Derivative entry, or None for an op without formulas
    (it then records a :class:`NotImplementedNode`).
    """
    schema = op.schema
    # The bindings pass every argument positionally, keyword-only ones included
    # (see whylab/dispatch/README.md), so positions follow the whole schema.
    positional = list(schema.arguments)
    positional_names = tuple(arg.name for arg in positional)
    defaults = {arg.name: _parse_default(arg.default) for arg in schema.arguments if arg.default}
    tensor_positions = tuple(i for i, arg in enumerate(positional) if arg.is_tensor)
    list_positions = tuple(i for i, arg in enumerate(positional) if arg.is_tensor_list)
    tensor_arg_names = frozenset(
        arg.name for arg in schema.arguments if arg.is_tensor or arg.is_tensor_list
    )
    if spec is not None:
        _check_formula_names(op, spec)
        differentiable = tuple(
            (arg.name, arg.is_tensor_list) for arg in schema.arguments if arg.name in spec.formulas
        )
        variable_names = {
            p
            for params in spec.parameters.values()
            for p in params
            if p in tensor_arg_names or _RESULT_NAME.match(p)
        }
    else:
        differentiable = tuple(
            (arg.name, arg.is_tensor_list)
            for arg in schema.arguments
            if arg.is_tensor or arg.is_tensor_list
        )
        variable_names = set()
    is_inplace = schema.is_inplace
    is_view = schema.is_view
    state = grad_mode._state
    redispatch = op.redispatch

    def any_input_requires_grad(args, kwargs) -> bool:
        """Whether some tensor argument requires grad (the general scan, any schema)."""
        count = len(args)
        for i in tensor_positions:
            if i < count:
                value = args[i]
                if isinstance(value, Tensor) and value._requires_grad:
                    return True
        for i in list_positions:
            if i < count:
                for value in args[i]:
                    if isinstance(value, Tensor) and value._requires_grad:
                        return True
        if kwargs:
            for value in kwargs.values():
                if isinstance(value, Tensor) and value._requires_grad:
                    return True
                if isinstance(value, (list, tuple)):
                    for item in value:
                        if isinstance(item, Tensor) and item._requires_grad:
                            return True
        return False

    node_classes = {}
    saving_plans = {}
    argument_names = frozenset(arg.name for arg in schema.arguments)
    input_names = tuple(name for name, _ in differentiable)
    # Ops whose differentiable inputs are all single tensors (almost all) take a
    # shorter path: fixed edge groups and an inline edge loop.
    has_list_input = any(is_list for _, is_list in differentiable)
    fixed_groups = tuple((name, i, 1, False) for i, name in enumerate(input_names))
    static_name = spec.name if spec is not None and not callable(spec.name) else None

    # Most ops take their tensors first: ``(self)`` or ``(self, other)``. For those the
    # "does anything require grad" test is written inline below, which saves a call on
    # every op that records nothing; keyword arguments still go through the general scan.
    leading_tensors = (
        len(tensor_positions) if not list_positions and tensor_positions in ((0,), (0, 1)) else 0
    )

    def records_nothing(args, kwargs) -> bool:
        """True when this call cannot record: grad mode is off or no input requires grad.

        The kernel then only hands the call on to the next key, so the
        dispatcher skips the kernel for such calls (``Operator.__call__``).
        """
        if not state.enabled:
            return True
        if leading_tensors and not kwargs and len(args) >= leading_tensors:
            first = args[0]
            if isinstance(first, Tensor) and first._requires_grad:
                return False
            if leading_tensors == 1:
                return True
            second = args[1]
            return not (isinstance(second, Tensor) and second._requires_grad)
        return not any_input_requires_grad(args, kwargs)

    def autograd_kernel(keyset, *args, **kwargs):
        if records_nothing(args, kwargs):
            return redispatch(keyset, *args, **kwargs)
        values = dict(defaults)
        values.update(zip(positional_names, args, strict=False))
        if kwargs:
            values.update(kwargs)
        if has_list_input:
            edges, groups, needed = _collect_edges(values, differentiable)
        else:
            edges, needed, groups = [], [], fixed_groups
            for name in input_names:
                value = values[name]
                if isinstance(value, Tensor):
                    grad_fn = value.grad_fn
                    if grad_fn is not None and value._base is None:
                        edge = (grad_fn, value._output_nr)  # the common case, without a call
                    else:
                        edge = gradient_edge(value)
                    if edge[0] is not None:
                        needed.append(name)
                    edges.append(edge)
                else:
                    edges.append((None, 0))
            needed = tuple(needed)
        if not needed:
            return redispatch(keyset, *args, **kwargs)
        saved = {}
        plan = None
        if spec is not None:
            plan = saving_plans.get(needed)
            if plan is None:
                plan = saving_plans[needed] = _saving_plan(spec, needed, argument_names)
        if is_inplace:
            target = values[positional_names[0]]
            from whylab.autograd.inplace import check_inplace

            check_inplace(target)
            if plan:
                _save_inputs_before_write(plan, values, target, saved)
        out = redispatch(keyset, *args, **kwargs)
        single = isinstance(out, Tensor)
        if single:
            if not is_inplace:
                for name in input_names:
                    if values[name] is out:
                        return out  # handed back an input unchanged: nothing to record
            if not out.dtype.is_floating_point:
                return out
            outputs = (out,)
            metadata = ((out._sizes, out.dtype),)
        else:
            outputs = tuple(out)
            if not is_inplace and _returns_an_input(outputs, values, differentiable):
                return out
            if not any(output.dtype.is_floating_point for output in outputs):
                return out
            metadata = tuple((output._sizes, output.dtype) for output in outputs)
        if spec is None:
            node = NotImplementedNode(tuple(edges), metadata)
            node._op_name = op.name
        else:
            name = static_name or spec.node_name(values)
            cls = node_classes.get(name)
            if cls is None:
                cls = node_classes[name] = node_class(name, spec, variable_names, op.name)
            node = cls(tuple(edges), metadata)
            node._groups = groups
            node._saved = saved
        if anomaly._state.enabled:
            node._anomaly_trace = anomaly.forward_stack()
        if is_inplace:
            from whylab.autograd.inplace import rebase_history

            rebase_history(out, node)
        elif single:
            out.grad_fn = node
            out._output_nr = 0
            out._requires_grad = True
        else:
            for output_nr, output in enumerate(outputs):
                if output.dtype.is_floating_point:
                    output.grad_fn = node
                    output._output_nr = output_nr
                    output._requires_grad = True
        if is_view:
            node._view_version = outputs[0]._version_counter.value
            if not single:
                node._multi_output_view = True
        if plan:
            _save_values(plan, values, outputs, saved)
        return out

    autograd_kernel.__qualname__ = f"Autograd[{op.name}]"
    autograd_kernel.skip_if = records_nothing
    return autograd_kernel


def _collect_edges(values, differentiable):
    """Edges of the differentiable inputs, their grouping, and which need a gradient."""
    edges, groups, needed = [], [], []
    for name, is_list in differentiable:
        value = values.get(name)
        start = len(edges)
        if is_list:
            items = value if value is not None else ()
            for item in items:
                edges.append(gradient_edge(item) if isinstance(item, Tensor) else (None, 0))
            groups.append((name, start, len(items), True))
            if any(edge[0] is not None for edge in edges[start:]):
                needed.append(name)
        else:
            if isinstance(value, Tensor):
                grad_fn = value.grad_fn
                if grad_fn is not None and value._base is None:
                    edge = (grad_fn, value._output_nr)  # the common case, without a call
                else:
                    edge = gradient_edge(value)
            else:
                edge = (None, 0)
            edges.append(edge)
            groups.append((name, start, 1, False))
            if edge[0] is not None:
                needed.append(name)
    return edges, tuple(groups), tuple(needed)


def _returns_an_input(outputs, values, differentiable) -> bool:
    """An out-of-place op that hands back one of its inputs (``x.to(x.dtype)``) records nothing."""
    for name, is_list in differentiable:
        value = values.get(name)
        candidates = value if is_list and value is not None else (value,)
        for candidate in candidates:
            for output in outputs:
                if output is candidate:
                    return True
    return False


_SAVE_ARGUMENT, _SAVE_RESULT, _SAVE_METADATA = "argument", "result", "metadata"
_METADATA_SUFFIXES = ("_shapes", "_shape", "_dtype", "_geometry")


def _saving_plan(spec, needed, argument_names) -> tuple:
    """What to save, and how, when the inputs in ``needed`` need gradients.

    Each entry is ``(name, kind, key)``: an argument (key: its name), an output
    (key: its index) or metadata of an argument (key: ``(suffix, argument)``).
    Worked out once per ``needed`` and cached, so recording does no parsing.
    """
    plan = []
    for name in spec.saved_names(needed):
        result_match = _RESULT_NAME.match(name)
        if result_match:
            plan.append((name, _SAVE_RESULT, int(result_match.group(1) or 0)))
        elif name in argument_names:
            plan.append((name, _SAVE_ARGUMENT, name))
        else:
            suffix = next(sfx for sfx in _METADATA_SUFFIXES if name.endswith(sfx))
            plan.append((name, _SAVE_METADATA, (suffix, name[: -len(suffix)])))
    return tuple(plan)


def _save_inputs_before_write(plan, values, target, saved) -> None:
    """For an in-place op, save the inputs the formulas need as they were before the write.

    The written tensor's old value (``self`` in a formula) is saved as a copy,
    as PyTorch does with ``original_self``. Deviation: the copy is made without
    recording, so a second derivative does not flow through that old value.
    """
    from whylab.autograd.grad_mode import no_grad

    for name, kind, key in plan:
        if kind is not _SAVE_ARGUMENT:
            continue
        value = values[key]
        if not isinstance(value, Tensor):
            continue
        if value is target or value._storage is target._storage:
            with no_grad():
                copy = value.clone()
            saved[name] = SavedTensor(copy)
        else:
            saved[name] = SavedTensor(value)


def _save_values(plan, values, outputs, saved) -> None:
    """Save what the plan lists (skipping what an in-place op saved before writing)."""
    for name, kind, key in plan:
        if name in saved:
            continue
        if kind is _SAVE_ARGUMENT:
            value = values[key]
            if isinstance(value, Tensor):
                saved[name] = SavedTensor(value)
            elif isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
                saved[name] = _SavedList(
                    SavedTensor(item) if isinstance(item, Tensor) else item for item in value
                )
            else:
                saved[name] = value
        elif kind is _SAVE_RESULT:
            output = outputs[key]
            saved[name] = SavedTensor(output, is_output=output.grad_fn is not None)
        else:
            saved[name] = _metadata_value(key[0], values[key[1]])


def _metadata_value(suffix, value):
    if suffix == "_shapes":
        return tuple(item._sizes for item in value)
    if not isinstance(value, Tensor):
        return () if suffix == "_shape" else None
    if suffix == "_shape":
        return value._sizes
    if suffix == "_dtype":
        return value.dtype
    return (value._sizes, value._strides, value._offset)


def register_autograd_kernels(table, skip=frozenset()) -> None:
    """Give every operator its Autograd kernel: from ``table`` when it has an entry.

    Operators with a composite kernel are skipped (their parts record), and so
    are operators whose schema returns no tensor and those named in ``skip``
    (non-differentiable: their results never require grad).
    """
    from whylab.dispatch import DispatchKey, all_ops

    by_op = {entry.op: entry for entry in table}
    for op in all_ops():
        if op._composite is not None or int(DispatchKey.Autograd) in op._kernels:
            continue
        if "Tensor" not in op.schema.returns or op.name in skip:
            continue
        if not any(arg.is_tensor or arg.is_tensor_list for arg in op.schema.arguments):
            continue  # factories: nothing to record
        spec = by_op.get(op.name)
        if spec is None and op.schema.is_inplace:
            spec = by_op.get(op.name[:-1])
        op.register(DispatchKey.Autograd, make_autograd_kernel(op, spec))
