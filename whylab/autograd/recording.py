"""Recording: the Autograd kernels that build the graph while operators run.

Every differentiable operator gets one kernel for the Autograd dispatch key.
Everything that can be known before a call is worked out once, at
registration, into the operator's :class:`RecordingPlan`: which arguments are
differentiable and where they sit, whether the op is a view or writes in
place, the node class, and (per set of inputs that need a gradient) a
:class:`SavingPlan` saying what to save and where each formula finds it. The
kernel (:func:`make_autograd_kernel`) then only executes the plan:

1. return straight to the next key (``op.redispatch``) unless grad mode is on
   and some tensor argument requires grad — the common "nothing to record"
   path costs one flag read and a scan of the tensor arguments;
2. collect one edge per differentiable input; stop if none leads anywhere;
3. for an in-place op, check the write is allowed (not a leaf that requires
   grad, not an output of a multi-view op) and save what the formulas need
   from *before* the write;
4. run the op below Autograd (``op.hop(keyset)``: ``op.redispatch`` looked up once
   per key set, see whylab/dispatch/operator.py);
5. :meth:`RecordingPlan.record`: create the node (edges, and the shape and dtype
   of each output), make it
   the ``grad_fn`` of the outputs — or, for an in-place op, *rebase* the
   written tensor's history (see :mod:`whylab.autograd.inplace`) — and save
   what the formulas of the inputs that need a gradient ask for (nothing more).

Operators without a formula get a kernel that still records, with a node that
raises "the derivative for 'op' is not implemented" if a backward pass reaches
it; operators whose outputs are never floating point (comparisons, argmax)
record nothing. Composite operators (written in terms of other operators)
need no kernel: their parts record themselves.
"""

from __future__ import annotations

import ast

from whylab._core.keys import DispatchKey
from whylab._tensor.tensor import Tensor
from whylab.autograd import anomaly, grad_mode
from whylab.autograd._ops import ops
from whylab.autograd.graph import (
    ERR_BACKWARD_TWICE,
    SHARED_METADATA,
    Node,
    SavedTensor,
    _engine_state,
    _sequence_counter,
    grad_accumulator,
    gradient_edge,
    share_metadata,
)
from whylab.autograd.inplace import check_inplace, rebase_history
from whylab.autograd.spec import ARGUMENT, GRAD, GRADS, METADATA, RESULT, metadata_of
from whylab.dispatch.tls import local_keys

__all__ = [
    "FormulaNode",
    "RecordingPlan",
    "SavingPlan",
    "make_autograd_kernel",
    "register_autograd_kernels",
]


class _Released:
    """Marks a saved argument dropped after backward (any later use raises)."""

    def __repr__(self) -> str:
        return "<released>"


_RELEASED = _Released()


class _SavedList(tuple):
    """The saved tensors of a list argument (``index``'s ``indices``; None stays None)."""

    __slots__ = ()


_WITHOUT_AUTOGRAD = ~(1 << int(DispatchKey.Autograd))
_new_object = object.__new__

# Where a formula parameter's value comes from, besides a saved slot (0, 1, ...).
_FROM_GRAD, _FROM_GRADS = -1, -2


# ----------------------------------------------------------------------------------
# Nodes
# ----------------------------------------------------------------------------------


class FormulaNode(Node):
    """A node whose backward is an entry of the derivatives table.

    One subclass per node name (``MulBackward0``...) is made on demand, so
    ``type(t.grad_fn).__name__`` reads like PyTorch's. ``_saved`` holds the
    saved values in the slots of ``_saving`` (the :class:`SavingPlan` of this
    call); ``_groups`` lists the differentiable inputs as ``(name, first edge,
    number of edges, is_list)``.
    """

    __slots__ = ("_saved", "_saving", "_groups")

    _spec = None  # the Derivative entry
    _op_name = ""

    def apply(self, grad_outputs):
        """Run the formula of each input whose gradient the running pass needs."""
        sources = self._saving.sources
        saved = self._saved
        next_functions = self.next_functions
        needed_nodes = _engine_state.needed
        recording = grad_mode._state.enabled  # create_graph: formulas' ops record
        calls = []  # (input name, first edge, which edges of a list input are wanted, arguments)
        for name, start, count, is_list in self._groups:
            wanted = None
            if is_list:
                wanted = [
                    _is_wanted(next_functions[i][0], needed_nodes)
                    for i in range(start, start + count)
                ]
                if not any(wanted):
                    continue
            else:
                next_node = next_functions[start][0]
                if next_node is None:
                    continue
                if needed_nodes is not None and next_node not in needed_nodes:
                    continue
            # The formula's arguments. The three common kinds are read here without a
            # call: the gradient, a saved plain value, and a saved tensor that needs no
            # check beyond its version (SavedTensor.unpack's common case: no unpack
            # hook, not released, not an output to re-attach under create_graph).
            arguments = []
            for source in sources[name]:
                if source >= 0:
                    value = saved[source]
                    kind = type(value)
                    if kind is SavedTensor:
                        if (
                            value._unpack_hook is None
                            and value._version_counter.value == value.saved_version
                            and not value._released
                            and not (value.is_output and recording)
                        ):
                            arguments.append(value.data)
                        else:
                            arguments.append(value.unpack(self))
                        continue
                    if kind is not _SavedList and value is not _RELEASED:
                        arguments.append(value)
                        continue
                elif source == _FROM_GRAD and grad_outputs[0] is not None:
                    arguments.append(grad_outputs[0])
                    continue
                arguments.append(self._argument(source, grad_outputs))
            calls.append((name, start, wanted, arguments))
        results = [None] * len(next_functions)
        if not calls:
            return results
        formulas = self._spec.formulas
        # Unless create_graph is on, nothing can be recorded: skip the Autograd key for
        # the formulas' ops (same result, one kernel call less per op). Arguments were
        # unpacked above, outside this switch: unpacking may run user code, such as a
        # checkpoint's recomputation, which must record.
        keep = local_keys.keep
        if not recording:
            local_keys.keep = keep & _WITHOUT_AUTOGRAD
        try:
            for name, start, wanted, arguments in calls:
                gradient = formulas[name](*arguments)
                if wanted is None:
                    results[start] = gradient
                elif gradient is not None:  # a list input: one gradient per tensor
                    for offset, (value, needed) in enumerate(zip(gradient, wanted, strict=True)):
                        if needed:
                            results[start + offset] = value
        finally:
            local_keys.keep = keep
        return results

    def _argument(self, source, grad_outputs):
        """The value of one formula parameter: a gradient, or a saved slot."""
        if source == _FROM_GRAD:
            gradient = grad_outputs[0]
            return gradient if gradient is not None else self._zeros_for_output(0)
        if source == _FROM_GRADS:
            return tuple(
                g if g is not None else self._zeros_for_output(i)
                for i, g in enumerate(grad_outputs)
            )
        value = self._saved[source]
        if type(value) is SavedTensor:
            return value.unpack(self)
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
                slot = object.__getattribute__(self, "_saving").slot_of.get(name[len(prefix) :])
                if slot is not None:
                    return self._argument(slot, ()) if unpack else self._saved[slot]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _zeros_for_output(self, index):
        shape, dtype = self.input_metadata[index]
        return ops.zeros(shape, dtype, None)

    def release_variables(self) -> None:
        saved = self._saved
        for slot in self._saving.variable_slots:
            value = saved[slot]
            if value is None or value is _RELEASED:
                continue
            if type(value) is SavedTensor:
                value.data = None  # SavedTensor.release(), without the call
                value._released = True
            elif type(value) is _SavedList:
                for item in value:
                    if type(item) is SavedTensor:
                        item.release()
            saved[slot] = _RELEASED

    def saved_tensor_items(self):
        items = []
        for name, value in zip(self._saving.names, self._saved, strict=True):
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


def node_class(name: str, spec, op_name: str):
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
                "_op_name": op_name,
                "__module__": "whylab.autograd.derivatives",
            },
        )
        _node_classes[key] = cls
    return cls


# ----------------------------------------------------------------------------------
# Plans
# ----------------------------------------------------------------------------------


class SavingPlan:
    """What to save when a given set of inputs needs gradients, and where formulas find it.

    ``parameters`` lists the saved names (one slot each, as resolved by
    :meth:`Derivative.resolve`), ``positions`` the argument position each slot
    reads (None for an output), and ``sources[input]`` the slot of each
    parameter of that input's formula (``grad``/``grads`` are not saved).
    """

    __slots__ = ("names", "parameters", "positions", "slot_of", "variable_slots", "sources")

    def __init__(self, spec, resolved: dict, needed: tuple, position_of: dict):
        self.names = spec.saved_names(needed)
        self.parameters = tuple(resolved[name] for name in self.names)
        self.positions = tuple(position_of.get(p.argument) for p in self.parameters)
        self.slot_of = {name: slot for slot, name in enumerate(self.names)}
        self.variable_slots = tuple(i for i, p in enumerate(self.parameters) if p.is_variable)
        special = {GRAD: _FROM_GRAD, GRADS: _FROM_GRADS}
        self.sources = {
            input_name: tuple(
                special.get(name, self.slot_of.get(name)) for name in spec.parameters[input_name]
            )
            for input_name in needed
        }

    def save_before_write(self, values, target) -> dict:
        """For an in-place op, save the tensor arguments as they are before the write.

        The written tensor's old value (``self`` in a formula) is saved as a
        copy, as PyTorch does with ``original_self``; shapes and dtypes are read
        before the write too. Deviation: the copy is
        made without recording, so a second derivative does not flow through
        that old value. Returns ``{slot: SavedTensor}``.
        """
        saved = {}
        for slot, parameter in enumerate(self.parameters):
            if parameter.kind == METADATA:  # squeeze_ changes its target's shape
                saved[slot] = metadata_of(parameter.suffix, values[self.positions[slot]])
                continue
            if parameter.kind != ARGUMENT:
                continue
            value = values[self.positions[slot]]
            if not isinstance(value, Tensor):
                continue
            if value is target or value._storage is target._storage:
                with grad_mode.no_grad():
                    value = value.clone()
            saved[slot] = SavedTensor(value)
        return saved

    def save(self, values, outputs, saved_before_write=None) -> list:
        """The saved values, one per slot (what ``save_before_write`` saved is kept)."""
        saved = []
        for slot, parameter in enumerate(self.parameters):
            if saved_before_write and slot in saved_before_write:
                saved.append(saved_before_write[slot])
            elif parameter.kind == ARGUMENT:
                value = values[self.positions[slot]]
                # _saved_argument's common cases, without the call
                if isinstance(value, Tensor):
                    saved.append(SavedTensor(value))
                elif isinstance(value, (list, tuple)):
                    saved.append(_saved_argument(value))
                else:
                    saved.append(value)
            elif parameter.kind == RESULT:
                output = outputs[parameter.index]
                saved.append(SavedTensor(output, is_output=output.grad_fn is not None))
            else:
                value = values[self.positions[slot]]
                if parameter.suffix == "_shape" and isinstance(value, Tensor):
                    saved.append(value._sizes)  # metadata_of's common case, without the call
                else:
                    saved.append(metadata_of(parameter.suffix, value))
        # Only slots holding tensors are overwritten on release; without any, a tuple
        # does (a tuple of numbers leaves the cyclic collector's care, a list never).
        return saved if self.variable_slots else tuple(saved)


def _saved_argument(value):
    """An argument as kept for backward: tensors (also in lists) as SavedTensor."""
    if isinstance(value, Tensor):
        return SavedTensor(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return _SavedList(SavedTensor(item) if isinstance(item, Tensor) else item for item in value)
    return value


def _parse_default(text):
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


class RecordingPlan:
    """How the Autograd kernel of one operator records: everything known before a call.

    Made once per operator, at registration, from its schema and its entry in
    the derivatives table (``spec``; None for an op without formulas, which
    records a :class:`NotImplementedNode`). Arguments are read by position:
    operators are called positionally in schema order (whylab/dispatch/README.md).
    """

    __slots__ = (
        "op_name",
        "spec",
        "resolved",
        "arity",
        "defaults",
        "position_of",
        "inputs",
        "has_list_input",
        "fixed_groups",
        "is_inplace",
        "is_view",
        "node_class",
        "name_positions",
        "records_nothing",
        "refused",
        "_node_classes",
        "saving_plans",
    )

    def __init__(self, op, spec):
        schema = op.schema
        arguments = schema.arguments
        self.op_name = op.name
        self.spec = spec
        self.arity = len(arguments)
        self.defaults = tuple(_parse_default(arg.default) for arg in arguments)
        self.position_of = {arg.name: i for i, arg in enumerate(arguments)}
        if spec is not None:
            self.resolved = spec.resolve(op.name, arguments)
            differentiable = [arg for arg in arguments if arg.name in spec.formulas]
        else:
            self.resolved = {}
            differentiable = [arg for arg in arguments if arg.is_tensor or arg.is_tensor_list]
        # (name, position, is_list) of each differentiable input, in schema order.
        self.inputs = tuple(
            (arg.name, self.position_of[arg.name], arg.is_tensor_list) for arg in differentiable
        )
        self.has_list_input = any(is_list for _, _, is_list in self.inputs)
        self.fixed_groups = tuple((name, i, 1, False) for i, (name, _, _) in enumerate(self.inputs))
        self.is_inplace = schema.is_inplace
        self.is_view = schema.is_view
        static_name = spec is not None and not callable(spec.name)
        self.node_class = node_class(spec.name, spec, op.name) if static_name else None
        self.name_positions = (
            tuple(self.position_of[name] for name in spec.name_parameters) if spec else ()
        )
        self.records_nothing = _records_nothing_predicate(
            tuple(i for i, arg in enumerate(arguments) if arg.is_tensor),
            tuple(i for i, arg in enumerate(arguments) if arg.is_tensor_list),
        )
        # (name, position) of each input that may not require grad
        refused = spec.refused if spec is not None else ()
        self.refused = tuple((name, self.position_of[name]) for name in refused)
        self._node_classes = {}
        self.saving_plans = {}  # needed inputs -> SavingPlan, filled on first use

    def check_refused(self, values) -> None:
        """PyTorch's error for an input without a derivative that requires grad."""
        for name, position in self.refused:
            value = values[position]
            if isinstance(value, Tensor) and value._requires_grad:
                raise RuntimeError(
                    f"The function '{self.op_name}' is not differentiable with respect to "
                    f"argument '{name}'. This input cannot have requires_grad True."
                )

    def bind(self, args, kwargs):
        """Every argument by position: ``args`` itself when the call passed them all."""
        if not kwargs and len(args) == self.arity:
            return args
        values = list(self.defaults)
        values[: len(args)] = args
        for name, value in kwargs.items():
            position = self.position_of.get(name)
            if position is None:
                raise TypeError(f"{self.op_name}() got an unexpected keyword argument {name!r}")
            values[position] = value
        return values

    def collect_edges(self, values):
        """``(edges, groups, needed)``: one edge per differentiable input (list inputs
        give one per tensor), their grouping, and the names of the inputs with an edge."""
        edges, needed = [], []
        if not self.has_list_input:
            for name, position, _ in self.inputs:
                value = values[position]
                # The common cases written out (what gradient_edge does, without a call):
                # a tensor with history (a view's only when no in-place write has made
                # its grad_fn stale), a leaf that requires grad, a plain input.
                if not isinstance(value, Tensor):
                    edge = _NO_EDGE
                elif value.grad_fn is not None:
                    grad_fn = value.grad_fn
                    if value._base is None or grad_fn._view_version in (
                        None,
                        value._version_counter.value,
                    ):
                        edge = (grad_fn, value._output_nr)
                    else:
                        edge = gradient_edge(value)  # regenerates the view's grad_fn
                elif value._requires_grad:
                    edge = (grad_accumulator(value), 0)
                else:
                    edge = _NO_EDGE
                if edge[0] is not None:
                    needed.append(name)
                edges.append(edge)
            return tuple(edges), self.fixed_groups, tuple(needed)
        groups = []
        for name, position, is_list in self.inputs:
            start = len(edges)
            if is_list:
                items = values[position] or ()
                edges.extend(_edge_of(item) for item in items)
                groups.append((name, start, len(items), True))
            else:
                edges.append(_edge_of(values[position]))
                groups.append((name, start, 1, False))
            if any(edge[0] is not None for edge in edges[start:]):
                needed.append(name)
        return tuple(edges), tuple(groups), tuple(needed)

    def saving_for(self, needed: tuple) -> SavingPlan | None:
        """The saving plan when the inputs in ``needed`` need gradients (made once per set)."""
        if self.spec is None:
            return None
        plan = self.saving_plans.get(needed)
        if plan is None:
            plan = SavingPlan(self.spec, self.resolved, needed, self.position_of)
            self.saving_plans[needed] = plan
        return plan

    def outputs_to_record(self, out, values):
        """The op's outputs as a tuple, or None when there is nothing to record: no
        floating-point output, or an out-of-place op handed back an input (``x.to(x.dtype)``)."""
        if isinstance(out, Tensor):
            if not out.dtype.is_floating_point:
                return None
            outputs = (out,)
        else:
            outputs = tuple(out)
            if not any(output.dtype.is_floating_point for output in outputs):
                return None
        if not self.is_inplace:
            for _, position, is_list in self.inputs:
                value = values[position]
                candidates = value if is_list and value is not None else (value,)
                for candidate in candidates:
                    for output in outputs:
                        if output is candidate:
                            return None
        return outputs

    def record(self, out, values, edges, groups, saving, saved_before_write):
        """Record the call that returned ``out``: create its node, make it the history
        of the outputs (or rebase an in-place op's target), then save what the saving
        plan asks for (after ``grad_fn`` is set: a saved output needs it). Returns the
        node, or None when there is nothing to record (:meth:`outputs_to_record`)."""
        if type(out) is Tensor and not self.is_inplace and not self.has_list_input:
            # The common case of outputs_to_record, without the call: one output.
            if not out.dtype.is_floating_point:
                return None
            for _, position, _ in self.inputs:
                if out is values[position]:
                    return None
            outputs = (out,)
        else:
            outputs = self.outputs_to_record(out, values)
            if outputs is None:
                return None
        if len(outputs) == 1:
            shape_and_dtype = (outputs[0]._sizes, outputs[0].dtype)
            metadata = SHARED_METADATA.get(shape_and_dtype) or share_metadata(shape_and_dtype)
        else:
            metadata = tuple((output._sizes, output.dtype) for output in outputs)
        if self.spec is None:
            node = NotImplementedNode(edges, metadata)
            node._op_name = self.op_name
        else:
            cls = self.node_class or self._node_class_for(values)
            # Node.__init__'s slot writes, without the call (this runs for every op).
            node = _new_object(cls)
            node.next_functions = edges
            node.input_metadata = metadata
            node.sequence_nr = next(_sequence_counter)
            node._hooks = None
            node._view_version = None
            node._groups = groups
            node._saving = saving
            node._saved = ()
        if anomaly._state.enabled:
            node._anomaly_trace = anomaly.forward_stack()
        if self.is_inplace:
            rebase_history(out, node)
        else:
            for output_nr, output in enumerate(outputs):
                if output.dtype.is_floating_point:
                    output.grad_fn = node
                    output._output_nr = output_nr
                    output._requires_grad = True
        if self.is_view:
            node._view_version = outputs[0]._version_counter.value
            if not isinstance(out, Tensor):
                node._multi_output_view = True
        if saving is not None and saving.parameters:  # else _saved stays ()
            node._saved = saving.save(values, outputs, saved_before_write)
        return node

    def _node_class_for(self, values):
        """The node class of an op whose node name depends on its arguments (``sum``)."""
        name = self.spec.name(*(values[i] for i in self.name_positions))
        cls = self._node_classes.get(name)
        if cls is None:
            cls = self._node_classes[name] = node_class(name, self.spec, self.op_name)
        return cls


_NO_EDGE = (None, 0)



def _edge_of(value):
    """The edge for one argument: ``gradient_edge`` of a tensor, ``(None, 0)`` otherwise."""
    if not isinstance(value, Tensor):
        return _NO_EDGE
    grad_fn = value.grad_fn
    if grad_fn is not None and value._base is None:
        return (grad_fn, value._output_nr)  # the common case, without a further call
    return gradient_edge(value)


def _records_nothing_predicate(tensor_positions, list_positions):
    """``records_nothing(args, kwargs)``: true when grad mode is off or no tensor
    argument requires grad. The kernel then only hands the call on to the next
    key, so the dispatcher skips the kernel for such calls (``Operator.__call__``)."""
    state = grad_mode._state
    # Most ops take their tensors first, ``(self)`` or ``(self, other)``: their test is
    # written out, which saves a call on every op that records nothing.
    leading = len(tensor_positions) if not list_positions else 0
    if tensor_positions not in ((0,), (0, 1)):
        leading = 0

    def any_requires_grad(args, kwargs) -> bool:
        count = len(args)
        for i in tensor_positions:
            if i < count and isinstance(args[i], Tensor) and args[i]._requires_grad:
                return True
        for i in list_positions:
            if i < count:
                for value in args[i]:
                    if isinstance(value, Tensor) and value._requires_grad:
                        return True
        for value in kwargs.values():
            if isinstance(value, Tensor) and value._requires_grad:
                return True
            if isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, Tensor) and item._requires_grad:
                        return True
        return False

    def records_nothing(args, kwargs) -> bool:
        if not state.enabled:
            return True
        if leading and not kwargs and len(args) >= leading:
            first = args[0]
            if isinstance(first, Tensor) and first._requires_grad:
                return False
            if leading == 1:
                return True
            second = args[1]
            return not (isinstance(second, Tensor) and second._requires_grad)
        return not any_requires_grad(args, kwargs)

    return records_nothing


# ----------------------------------------------------------------------------------
# The kernel
# ----------------------------------------------------------------------------------


def make_autograd_kernel(op, spec):
    """The Autograd-key kernel of ``op``: executes the op's :class:`RecordingPlan`.

    ``spec`` is the op's Derivative entry, or None for an op without formulas
    (it then records a :class:`NotImplementedNode`).
    """
    plan = RecordingPlan(op, spec)
    grad_mode_state = grad_mode._state
    arity = plan.arity
    saving_plans = plan.saving_plans
    redispatch = op.redispatch
    hops = op._hops
    refused = plan.refused

    def autograd_kernel(keyset, *args, **kwargs):
        # The dispatcher enters this kernel only when ``plan.records_nothing`` is
        # false (see Operator.__call__); a call arriving through ``redispatch`` with
        # no input that requires grad finds no edge below and records nothing.
        if not grad_mode_state.enabled:
            return redispatch(keyset, *args, **kwargs)
        values = args if not kwargs and len(args) == arity else plan.bind(args, kwargs)
        if refused:
            plan.check_refused(values)
        edges, groups, needed = plan.collect_edges(values)
        if not needed:
            return redispatch(keyset, *args, **kwargs)
        saving = saving_plans.get(needed) or plan.saving_for(needed)
        saved_before_write = None
        if plan.is_inplace:
            check_inplace(values[0])
            if saving is not None:
                saved_before_write = saving.save_before_write(values, values[0])
        hop = hops.get(keyset) if local_keys.recorder is None else None
        out = (hop or op.hop(keyset))(*args, **kwargs)  # op.redispatch(keyset, ...), cached
        plan.record(out, values, edges, groups, saving, saved_before_write)
        return out

    autograd_kernel.__qualname__ = f"Autograd[{op.name}]"
    autograd_kernel.skip_if = plan.records_nothing
    plan.records_nothing.mode = grad_mode_state  # the switch it reads (see operator.py)
    autograd_kernel.plan = plan
    return autograd_kernel


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
