"""The backward engine: runs a recorded graph from its roots to its leaves.

One backward pass (``tensor.backward()``, :func:`backward`, :func:`grad`) goes
through the same steps as PyTorch's ``Engine::execute``:

1. **Dependencies.** An iterative walk from the roots counts, for every node,
   how many edges point at it. A node may run only when all of them have
   delivered their gradient. (Iterative, not recursive: a 100,000-node chain
   must not hit Python's recursion limit.)
2. **Which nodes are needed.** ``grad(y, [a])`` and ``backward(inputs=[a])``
   only need the nodes on a path from the roots to ``a``; the others are never
   run, and formulas skip the gradients nobody will use.
3. **Execution.** A ready queue (a heap) holds the nodes whose dependencies
   reached zero; the one with the highest sequence number — the most recently
   recorded — runs first. A node's incoming gradients wait in its **input
   buffer**, which sums contributions arriving over several edges (fan-out).
   Each result is checked against the shape and dtype its receiver expects; a
   broadcast gradient is summed back to the input's shape *here*, in one place,
   instead of in every formula.
4. **Cleanup.** Unless ``retain_graph`` is set, each node releases its saved
   tensors after it runs, so memory is returned as the pass proceeds.

Hooks run around each node in PyTorch's order: tensor hooks
(``Tensor.register_hook``), then ``retain_grad`` hooks, then node pre hooks,
then the node, then node post hooks. (A gradient captured for ``grad(...,
inputs)`` is taken after the tensor hooks of its node have run; PyTorch skips
them for captures of nodes it also executes.)

:func:`engine_trace` records what the engine does (dependency counts, the
order nodes ran, input-buffer sums, AccumulateGrad writes) for teaching.
"""

from __future__ import annotations

import heapq
import warnings
from contextlib import contextmanager

from whylab._core import thread_state
from whylab._tensor.tensor import Tensor
from whylab.autograd import anomaly, grad_mode
from whylab.autograd._broadcast import is_expandable_to, sum_to_size
from whylab.autograd._ops import ones_like, ops, zeros_like
from whylab.autograd.graph import (
    AccumulateGrad,
    GraphRoot,
    Node,
    _engine_state,
    gradient_edge,
)

__all__ = ["backward", "grad", "engine_trace", "EngineTrace"]


# ----------------------------------------------------------------------------------
# Tracing (optional, for the explorer)
# ----------------------------------------------------------------------------------


class EngineTrace:
    """What one or more backward passes did, as plain data.

    ``events`` is a list of dicts, in order, each with a ``kind``:

    * ``"dependencies"``: ``counts`` maps node labels to their dependency count;
    * ``"execute"``: a node ran (``node``, ``sequence_nr``);
    * ``"buffer_add"``: a second (or later) gradient was summed into input slot
      ``input_nr`` of ``node``'s input buffer;
    * ``"hooks"``: ``node`` has hooks (tensor, ``retain_grad`` or node hooks), which
      run before it (``whylab.capture`` refuses a step whose backward runs hooks);
    * ``"accumulate_grad"``: a leaf's ``.grad`` was written; ``mode`` is
      ``"steal"`` (the engine's tensor was taken as is), ``"copy"`` (cloned
      because something else may see it) or ``"add"`` (added to an existing grad).

    Node labels are ``"<name>#<sequence_nr>"`` (AccumulateGrad: ``"AccumulateGrad(<shape>)#k"``
    with ``k`` counting leaves in order of first appearance).
    """

    def __init__(self):
        self.events = []
        self._leaf_labels = {}

    def label(self, node) -> str:
        if isinstance(node, AccumulateGrad):
            key = id(node)
            if key not in self._leaf_labels:
                self._leaf_labels[key] = len(self._leaf_labels)
            shape = list(node.variable._sizes)
            return f"AccumulateGrad({shape})#{self._leaf_labels[key]}"
        if isinstance(node, GraphRoot):
            return "GraphRoot"
        return f"{node.name()}#{node.sequence_nr}"

    def execution_order(self) -> list:
        """Labels of the nodes in the order they ran."""
        return [event["node"] for event in self.events if event["kind"] == "execute"]

    def record(self, kind: str, **fields) -> None:
        fields["kind"] = kind
        self.events.append(fields)


@contextmanager
def engine_trace():
    """Record the engine's steps for every backward pass this thread runs inside the block.

    >>> import whylab
    >>> a = whylab.ones(2, requires_grad=True)
    >>> with whylab.autograd.engine_trace() as trace:
    ...     (a * a).sum().backward()
    >>> trace.execution_order()[0]
    'GraphRoot'
    """
    state = thread_state.engine_trace
    previous = state.active
    trace = EngineTrace()
    state.active = trace
    try:
        yield trace
    finally:
        state.active = previous


def current_trace() -> EngineTrace | None:
    """The trace this thread records now, or None (used by AccumulateGrad)."""
    return thread_state.engine_trace.active


# ----------------------------------------------------------------------------------
# Public entry points
# ----------------------------------------------------------------------------------


def _as_tuple(value):
    if value is None:
        return None
    if type(value) is tuple:
        return value
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


def _size_repr(sizes) -> str:
    return f"whylab.Size({list(sizes)})"


def _make_grads(outputs, grad_outputs, create_graph):
    """The initial gradients: given ones checked against their outputs, or implicit ones."""
    grads = []
    for index, (output, given) in enumerate(zip(outputs, grad_outputs, strict=True)):
        if given is None:
            if output._requires_grad:
                if output.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not output.dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{output.dtype}"
                    )
                given = ones_like(output)
            grads.append(given)
            continue
        if not isinstance(given, Tensor):
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(given).__name__}"
            )
        if given._sizes != output._sizes:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{index}] has a shape of "
                f"{_size_repr(given._sizes)} and output[{index}] has a shape of "
                f"{_size_repr(output._sizes)}."
            )
        if given.dtype.is_floating_point != output.dtype.is_floating_point:
            raise RuntimeError(
                f"For output {index}: expected a gradient of dtype {output.dtype}, "
                f"got {given.dtype}"
            )
        grads.append(given)
    return grads


def _root_edges(outputs):
    edges = []
    for index, output in enumerate(outputs):
        if not output._requires_grad:
            raise RuntimeError(
                f"element {index} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(gradient_edge(output))
    return edges


def backward(
    tensors,
    grad_tensors=None,
    retain_graph=None,
    create_graph: bool = False,
    inputs=None,
) -> None:
    """Compute the gradient of ``tensors`` w.r.t. graph leaves and add it into ``.grad``.

    ``grad_tensors`` gives the gradient of each tensor (needed unless it has one
    element). ``retain_graph`` (default: ``create_graph``) keeps saved tensors
    for another pass. ``create_graph`` records the backward pass itself, so the
    resulting ``.grad`` can be differentiated again. ``inputs`` restricts
    accumulation to the given tensors (leaves or not).
    """
    # One tensor and no explicit gradient or inputs (``loss.backward()``) need no conversion.
    outputs = (tensors,) if isinstance(tensors, Tensor) else _as_tuple(tensors)
    if grad_tensors is None:
        given = (None,) * len(outputs)
    else:
        given = (
            (grad_tensors,) if isinstance(grad_tensors, Tensor) else _as_tuple(grad_tensors)
        ) or (None,) * len(outputs)
    if len(given) != len(outputs):
        raise RuntimeError(f"grad_tensors has {len(given)} elements but tensors has {len(outputs)}")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, given, create_graph)
    roots = _root_edges(outputs)
    input_tensors = None if inputs is None else _as_tuple(inputs)
    if input_tensors is not None and len(input_tensors) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(
        roots,
        grads,
        keep_graph=retain_graph,
        create_graph=create_graph,
        inputs=input_tensors,
        accumulate=True,
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    allow_unused=None,
    materialize_grads: bool = False,
):
    """Return the gradients of ``outputs`` w.r.t. ``inputs`` without touching ``.grad``.

    ``allow_unused`` (default False) lets an input the outputs do not depend on
    get ``None`` instead of raising; ``materialize_grads=True`` returns zeros for
    such inputs instead of ``None``.
    """
    output_tensors = _as_tuple(outputs)
    input_tensors = _as_tuple(inputs)
    given = _as_tuple(grad_outputs) or (None,) * len(output_tensors)
    if len(given) != len(output_tensors):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(given)} for "
            f"{len(output_tensors)} outputs"
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True"
        )
    for tensor in input_tensors:
        if not tensor.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(output_tensors, given, create_graph)
    roots = _root_edges(output_tensors)
    results = run_backward(
        roots,
        grads,
        keep_graph=retain_graph,
        create_graph=create_graph,
        inputs=input_tensors,
        accumulate=False,
    )
    final = []
    for index, (tensor, result) in enumerate(zip(input_tensors, results, strict=True)):
        if result is None:
            if materialize_grads:
                result = zeros_like(tensor)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been used "
                    "in the graph. Set allow_unused=True if this is the desired behavior."
                )
        final.append(result)
    return tuple(final)


# ----------------------------------------------------------------------------------
# The pass itself
# ----------------------------------------------------------------------------------


def _compute_dependencies(root) -> dict:
    """For every node reachable from ``root``: how many edges point at it."""
    dependencies = {}
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            dependencies[next_node] = dependencies.get(next_node, 0) + 1
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return dependencies


def _topological_order(root, dependencies) -> list:
    """Nodes reachable from ``root``, each after every node that points at it."""
    remaining = dict(dependencies)
    order = []
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            remaining[next_node] -= 1
            if remaining[next_node] == 0:
                stack.append(next_node)
    return order


def _needed_nodes(root, dependencies, targets) -> tuple[set, set]:
    """Which nodes must receive gradients, and which must run, to reach ``targets``.

    A node must *run* when one of its next nodes must receive a gradient; it
    must *receive* one when it runs or is itself a target.
    """
    receive, run = set(), set()
    for node in reversed(_topological_order(root, dependencies)):
        if any(n is not None and n in receive for n, _ in node.next_functions):
            run.add(node)
            receive.add(node)
        elif node in targets:
            receive.add(node)
    return receive, run


def run_backward(roots, grads, keep_graph, create_graph, inputs=None, accumulate=True):
    """Run one backward pass from ``roots`` (edges) seeded with ``grads``.

    With ``inputs`` given and ``accumulate`` False (``autograd.grad``), the
    gradients arriving at those inputs are captured and returned instead of
    being accumulated. With ``accumulate`` True and ``inputs`` given
    (``backward(inputs=...)``), only those inputs' ``.grad`` are written.
    """
    root = GraphRoot(roots, grads)
    dependencies = _compute_dependencies(root)
    trace = thread_state.engine_trace.active
    if trace is not None:
        trace.record(
            "dependencies",
            counts={trace.label(node): count for node, count in dependencies.items()},
        )

    captures = {}
    extra_runs = set()
    receive = run = None
    if inputs is not None:
        targets = set()
        for index, tensor in enumerate(inputs):
            node, input_nr = gradient_edge(tensor)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.add(node)
            if accumulate and isinstance(node, AccumulateGrad):
                extra_runs.add(node)  # let the leaf's AccumulateGrad write .grad
            else:
                captures.setdefault(node, []).append((input_nr, index, tensor))
        receive, run = _needed_nodes(root, dependencies, targets)
        run |= extra_runs & receive
        run.add(root)
        receive.add(root)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    previous_needed = _engine_state.needed
    previous_create_graph = _engine_state.create_graph
    previous_grad_mode = grad_mode._state.enabled
    _engine_state.needed = receive
    _engine_state.create_graph = create_graph
    # Formulas are recorded only under create_graph (grad mode is the switch).
    grad_mode._state.enabled = create_graph
    try:
        _execute(root, dependencies, receive, run, captures, captured, keep_graph, accumulate)
    finally:
        grad_mode._state.enabled = previous_grad_mode
        _engine_state.needed = previous_needed
        _engine_state.create_graph = previous_create_graph
    return captured


#: Node's own release_variables, which has nothing to drop (AccumulateGrad, GraphRoot).
_RELEASES_NOTHING = Node.release_variables


def _execute(root, dependencies, receive, run, captures, captured, keep_graph, accumulate):
    """Pop ready nodes from the heap, run them, route their outputs."""
    trace = thread_state.engine_trace.active
    checks_anomalies = anomaly._state.enabled
    buffers = {}
    # Heap entries: (-sequence_nr, tie-breaker, node); the tie-breaker keeps pushes
    # with equal sequence numbers (several AccumulateGrad nodes) in a stable order.
    ready = [(-root.sequence_nr, 0, root)]
    pushes = 1
    while ready:
        node = heapq.heappop(ready)[2]
        inputs = buffers.pop(node, None)
        # A buffer is made when the first gradient for a node arrives: without one,
        # every consumer returned None.
        arrived = inputs is not None
        if not arrived:
            inputs = [None] * len(node.input_metadata)
        if node is not root:
            if node._hooks is not None or (type(node) is AccumulateGrad and node.variable._hooks):
                if trace is not None:
                    trace.record("hooks", node=trace.label(node))
                inputs = _call_tensor_pre_hooks(node, inputs)
            if captures and node in captures:
                for input_nr, index, tensor in captures[node]:
                    captured[index] = inputs[input_nr]
                    if accumulate:
                        _accumulate_into_non_leaf(tensor, inputs[input_nr])
        if run is not None and node not in run:
            continue
        if trace is not None:
            trace.record("execute", node=trace.label(node), sequence_nr=node.sequence_nr)
        if node._hooks is None and not checks_anomalies:
            # The common case, without a further call: no node hooks, no anomaly checks.
            if arrived or node is root:
                outputs = node.apply(inputs)
            else:  # nothing arrived: pass "no gradient" on
                outputs = [None] * len(node.next_functions)
        else:
            outputs = _call_function(node, inputs, node is root)
        if not keep_graph and type(node).release_variables is not _RELEASES_NOTHING:
            node.release_variables()
        next_functions = node.next_functions
        for index, output in enumerate(outputs):
            next_node, input_nr = next_functions[index]
            if next_node is None:
                continue
            if receive is not None and next_node not in receive:
                continue
            if output is not None:
                expected = next_node.input_metadata[input_nr]
                if output._sizes != expected[0] or output.dtype is not expected[1]:
                    output = _validate_output(node, index, output, expected)
                buffer = buffers.get(next_node)
                if buffer is None:
                    buffer = [None] * len(next_node.input_metadata)
                    buffers[next_node] = buffer
                if buffer[input_nr] is None:
                    buffer[input_nr] = output
                else:
                    buffer[input_nr] = buffer[input_nr] + output
                    if trace is not None:
                        trace.record("buffer_add", node=trace.label(next_node), input_nr=input_nr)
            remaining = dependencies[next_node] - 1
            dependencies[next_node] = remaining
            if remaining == 0:
                heapq.heappush(ready, (-next_node.sequence_nr, pushes, next_node))
                pushes += 1
        # Drop this frame's references to the gradients just routed, so that the
        # input buffers own them alone (AccumulateGrad may then steal them).
        output = outputs = None


def _call_tensor_pre_hooks(node, inputs):
    """Run ``Tensor.register_hook`` hooks, then ``retain_grad`` hooks, on the node's inputs."""
    if isinstance(node, AccumulateGrad):
        hooks = node.variable._hooks
        if hooks:
            grad_value = inputs[0]
            if grad_value is not None:
                for fn in tuple(hooks.values()):
                    result = fn(grad_value)
                    if result is not None:
                        grad_value = result
                inputs[0] = grad_value
        return inputs
    tensor_hooks = node._hooks.tensor_pre
    if tensor_hooks:
        for output_nr, fn in tuple(tensor_hooks.values()):
            if inputs[output_nr] is None:
                continue
            result = fn(inputs[output_nr])
            if result is not None:
                inputs[output_nr] = result
    retains = node._hooks.retains_grad
    if retains:
        for output_nr, fn in tuple(retains.values()):
            if inputs[output_nr] is not None:
                fn(inputs[output_nr])
    return inputs


def _call_function(node, inputs, is_root: bool):
    """Node pre hooks, the node itself, anomaly checks, node post hooks."""
    hooks = node._hooks
    if hooks is not None and hooks.pre:
        for fn in tuple(hooks.pre.values()):
            result = fn(tuple(inputs))
            if result is not None:
                inputs = list(result)
    if not is_root and not any(value is not None for value in inputs):
        # Nothing arrived (e.g. every consumer returned None): pass "no gradient" on.
        return [None] * len(node.next_functions)
    if anomaly._state.enabled:
        outputs = _apply_with_anomaly_checks(node, inputs)
    else:
        outputs = node.apply(inputs)
    if hooks is not None and hooks.post:
        for fn in tuple(hooks.post.values()):
            result = fn(tuple(outputs), tuple(inputs))
            if result is not None:
                outputs = list(result)
    return outputs


def _apply_with_anomaly_checks(node, inputs):
    try:
        outputs = node.apply(inputs)
    except Exception:
        trace_text = node.anomaly_trace
        if trace_text:
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused "
                f"the error:\n{trace_text}",
                stacklevel=2,
            )
        raise
    if anomaly.is_anomaly_check_nan_enabled():
        for index, output in enumerate(outputs):
            if output is not None and anomaly.has_nan(output):
                message = f"Function '{node.name()}' returned nan values in its {index}th output."
                if node.anomaly_trace:
                    message += (
                        "\nTraceback of the forward call that created this node:\n"
                        + node.anomaly_trace
                    )
                raise RuntimeError(message)
    return outputs


def _validate_output(node, index, gradient, metadata):
    """Check a gradient against what its receiver expects; sum broadcast dims away.

    This is the one place where a gradient for a broadcast input (``a + b`` with
    ``b`` of shape ``[4]`` and ``a`` of shape ``[3, 4]``) is reduced to the
    input's shape, as in PyTorch's ``validate_outputs``.
    """
    shape, dtype = metadata
    sizes = gradient._sizes
    if sizes != shape:
        if not is_expandable_to(shape, sizes):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(sizes)} but expected shape compatible with {list(shape)}"
            )
        gradient = sum_to_size(gradient, shape)
    if gradient.dtype is not dtype:
        gradient = ops._to_copy(gradient, dtype, None)
    return gradient


def _accumulate_into_non_leaf(tensor, gradient) -> None:
    """``backward(inputs=[t])`` with a non-leaf ``t``: ``t.grad`` gets the gradient."""
    if gradient is None:
        return
    if tensor._grad is None:
        tensor.grad = gradient if grad_mode.is_grad_enabled() else gradient.detach().clone()
    else:
        tensor.grad = tensor._grad + gradient
