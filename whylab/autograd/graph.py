"""The recorded graph: nodes, edges, saved tensors and hooks.

When an operation runs on tensors that require grad (and grad mode is on), its
Autograd kernel creates a **node** — the ``grad_fn`` of the result. A node
knows how to turn the gradient of its outputs into gradients of its inputs,
and where to send each of them:

* ``next_functions`` is a tuple with one **edge** ``(node, input_nr)`` per
  differentiable input of the forward op: the gradient for that input goes to
  input slot ``input_nr`` of ``node``. An input that does not require grad
  gets the edge ``(None, 0)``; no gradient is computed for it.
* a **leaf** tensor that requires grad (one made by the user, not by an op) is
  represented in the graph by an :class:`AccumulateGrad` node, whose job is to
  add the gradient it receives into ``leaf.grad``. The leaf keeps only a weak
  reference to its AccumulateGrad node, so the graph owns it.
* ``input_metadata`` describes, for each gradient a node *receives* (one per
  output of the forward op), the shape and dtype that gradient must have. The
  engine uses it to sum a broadcast gradient back to shape, in one place.
* ``sequence_nr`` increases with every node made; the engine runs the ready
  node with the highest number first, as PyTorch does.

Values a backward formula needs are kept as :class:`SavedTensor` objects,
which remember the tensor's version when saved. If the tensor is later
modified in place, unpacking raises PyTorch's in-place error; after a
backward pass without ``retain_graph`` they are released and unpacking raises
PyTorch's "backward through the graph a second time" error.

A forward *output* saved for its own backward (``exp`` saves ``result``) is
kept as a detached alias of its data, not as the output tensor itself, so the
output tensor → node → saved tensor → output tensor cycle never forms.

Deviation from PyTorch 2.13: the in-place error names the producer by its node
name ("which is output 0 of ReluBackward0"), where PyTorch 2.13 prints the op
name without the suffix ("of Relu").
"""

from __future__ import annotations

import itertools
import sys
import weakref

from whylab._core import thread_state
from whylab._core.keys import DispatchKey
from whylab.autograd import grad_mode
from whylab.autograd._accumulate import accumulate_grad

__all__ = [
    "Node",
    "AccumulateGrad",
    "GraphRoot",
    "SavedTensor",
    "RemovableHandle",
    "saved_tensors_hooks",
    "tensor_type_name",
]

#: Sequence numbers for nodes; AccumulateGrad uses the largest value so a leaf's
#: gradient is written as soon as it is complete (PyTorch does the same).
_sequence_counter = itertools.count()
ACCUMULATE_GRAD_SEQUENCE_NR = sys.maxsize

_TENSOR_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "bool": "BoolTensor",
}

_AUTOGRAD_KEY_BIT = 1 << int(DispatchKey.Autograd)

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


def tensor_type_name(tensor) -> str:
    """PyTorch's legacy type string for a tensor, e.g. ``whylab.FloatTensor``."""
    name = getattr(tensor.dtype, "name", str(tensor.dtype))
    return "whylab." + _TENSOR_TYPE_NAMES.get(name, name + "Tensor")


def _describe(tensor) -> str:
    """``[whylab.FloatTensor [3, 4]]``, the way PyTorch names a tensor in errors."""
    sizes = ", ".join(str(s) for s in tensor._sizes)
    return f"[{tensor_type_name(tensor)} [{sizes}]]"


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_hooks_ref", "_key")

    _next_key = itertools.count()

    def __init__(self, hooks: dict):
        self._hooks_ref = weakref.ref(hooks)
        self._key = next(RemovableHandle._next_key)

    @property
    def id(self) -> int:
        return self._key

    def remove(self) -> None:
        """Unregister the hook (doing nothing if it was already removed)."""
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()
        return False


class _HookDict(dict):
    """A dict that can be weakly referenced, so handles do not keep hooks alive."""

    __slots__ = ("__weakref__",)


def _add_hook(hooks: _HookDict, fn) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class Node:
    """One backward function in the recorded graph (``tensor.grad_fn``).

    Subclasses implement :meth:`apply`, which maps the gradients of the forward
    outputs (one per input slot) to the gradients of the forward inputs (one per
    entry of ``next_functions``; ``None`` where no gradient is needed).
    """

    __slots__ = (
        "next_functions",
        "sequence_nr",
        "input_metadata",
        "_hooks",
        "_view_version",
        "_metadata",
        "_anomaly_trace",
        "_multi_output_view",
        "__weakref__",
    )

    # Only the first five slots are set for every node (this runs once per recorded
    # op); the last three are rare and read with getattr(..., default).
    def __init__(self, next_functions=(), input_metadata=(), sequence_nr=None):
        self.next_functions = next_functions
        self.input_metadata = input_metadata
        self.sequence_nr = next(_sequence_counter) if sequence_nr is None else sequence_nr
        self._hooks = None  # a NodeHooks once any hook is registered
        self._view_version = None  # for a view op's node: the version when the view was made

    # -- identity -----------------------------------------------------------------
    def name(self) -> str:
        """The node's name, e.g. ``MulBackward0`` (as ``grad_fn.name()`` in PyTorch)."""
        return type(self).__name__

    def _sequence_nr(self) -> int:
        """PyTorch's accessor for the sequence number."""
        return self.sequence_nr

    @property
    def metadata(self) -> dict:
        """A free-form dict users may attach information to (PyTorch API)."""
        if getattr(self, "_metadata", None) is None:
            self._metadata = {}
        return self._metadata

    @property
    def anomaly_trace(self) -> str | None:
        """The forward traceback recorded in anomaly mode, or None."""
        return getattr(self, "_anomaly_trace", None)

    @property
    def is_multi_output_view(self) -> bool:
        """True for the node of an op that returned several views of one input."""
        return getattr(self, "_multi_output_view", False)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    # -- computing ------------------------------------------------------------------
    def apply(self, grad_outputs):
        """Gradients for the inputs (a list aligned with ``next_functions``)."""
        raise NotImplementedError

    def __call__(self, *grad_outputs):
        """Run the backward function directly, without the engine (PyTorch allows this)."""
        return _unwrap_single(self.apply(list(grad_outputs)))

    def release_variables(self) -> None:
        """Drop saved tensors after a backward pass (nothing to drop by default)."""

    def saved_tensor_items(self):
        """``(name, SavedTensor)`` pairs, for graph export and memory accounting."""
        return ()

    def should_compute_input_grad(self, index: int) -> bool:
        """Whether the gradient for forward input ``index`` is needed in this pass.

        False when the input does not require grad (no edge), or when the running
        backward pass does not lead from that edge to any requested input
        (``autograd.grad(y, [a])`` does not need the gradient of ``b``).
        """
        next_node = self.next_functions[index][0]
        if next_node is None:
            return False
        needed = _engine_state.needed
        return needed is None or next_node in needed

    # -- hooks ------------------------------------------------------------------
    def _hook_lists(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, fn) -> RemovableHandle:
        """Post hook ``fn(grad_inputs, grad_outputs)`` run after the node computes.

        Following PyTorch's naming, ``grad_inputs`` are the gradients the node
        produced (for the forward inputs) and ``grad_outputs`` the gradients it
        received. A non-None return value replaces ``grad_inputs``.
        """
        return _add_hook(self._hook_lists().dict_for("post"), fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """Pre hook ``fn(grad_outputs)`` run before the node computes.

        A non-None return value replaces ``grad_outputs``.
        """
        return _add_hook(self._hook_lists().dict_for("pre"), fn)

    def _register_tensor_pre_hook(self, output_nr: int, fn) -> RemovableHandle:
        """A hook on the gradient of forward output ``output_nr`` (``Tensor.register_hook``)."""
        return _add_hook(self._hook_lists().dict_for("tensor_pre"), (output_nr, fn))


class NodeHooks:
    """The hooks of one node, by kind; each is None or an ordered dict of hooks.

    ``tensor_pre`` and ``retains_grad`` hold ``(output_nr, fn)`` pairs: they act
    on the gradient of one forward output (``Tensor.register_hook`` and
    ``Tensor.retain_grad``); ``pre`` and ``post`` are the node's own hooks.
    """

    __slots__ = ("pre", "post", "tensor_pre", "retains_grad")

    def __init__(self):
        self.pre = self.post = self.tensor_pre = self.retains_grad = None

    def dict_for(self, kind: str) -> _HookDict:
        hooks = getattr(self, kind)
        if hooks is None:
            hooks = _HookDict()
            setattr(self, kind, hooks)
        return hooks


def _unwrap_single(grads):
    if isinstance(grads, (list, tuple)) and len(grads) == 1:
        return grads[0]
    return tuple(grads) if isinstance(grads, list) else grads


#: The backward pass running now (``needed``, ``create_graph``; set by the engine),
#: documented in whylab/_core/thread_state.py.
_engine_state = thread_state.engine


#: ``((sizes, dtype),)``, the input metadata of a node that receives one gradient (an
#: op's node with one output, AccumulateGrad), shared by all such nodes of one shape
#: and dtype (it is never modified). Why share it: a tuple holding a dtype stays
#: tracked by Python's cyclic garbage collector, and a long graph (backpropagation
#: through time keeps thousands of nodes alive) promotes every tracked object it
#: holds to the oldest generation, whose growth by a quarter triggers a full
#: collection of the whole process. Sharing removes two tracked objects per node
#: (``whylab.bench.calls.tracked_objects_kept`` counts them); with the other cuts of
#: this kind, the BPTT step of benchmarks/bench_small_graphs.py triggers a quarter as
#: many full collections. Bounded by clearing.
SHARED_METADATA: dict = {}
SHARED_METADATA_LIMIT = 4096


def share_metadata(shape_and_dtype) -> tuple:
    """``(shape_and_dtype,)``, made once and kept in :data:`SHARED_METADATA`."""
    if len(SHARED_METADATA) >= SHARED_METADATA_LIMIT:
        SHARED_METADATA.clear()
    metadata = SHARED_METADATA[shape_and_dtype] = (shape_and_dtype,)
    return metadata


class GraphRoot(Node):
    """The first node of a backward pass: it hands the initial gradients to the roots."""

    __slots__ = ("_grads",)

    def __init__(self, roots, grads):
        super().__init__(next_functions=tuple(roots), input_metadata=(), sequence_nr=sys.maxsize)
        self._grads = grads

    def apply(self, grad_outputs):
        return list(self._grads)


class AccumulateGrad(Node):
    """The graph node of a leaf tensor: adds incoming gradients into ``variable.grad``.

    The first gradient is *taken* rather than copied when nothing else can see
    it (PyTorch calls this stealing): the engine made it, it has the leaf's
    layout, and no other object references it. Otherwise it is cloned, so that
    a later in-place accumulation cannot change a tensor the user or another
    leaf still holds. Later gradients are added in place, or out of place when
    ``create_graph`` is on (so the sum itself is differentiable).
    """

    __slots__ = ("variable",)

    def __init__(self, variable):
        # Node.__init__'s slot writes, without the call: a step makes one per leaf.
        self.next_functions = ()
        shape_and_dtype = (variable._sizes, variable.dtype)
        self.input_metadata = SHARED_METADATA.get(shape_and_dtype) or share_metadata(
            shape_and_dtype
        )
        self.sequence_nr = ACCUMULATE_GRAD_SEQUENCE_NR
        self._hooks = None
        self._view_version = None
        self.variable = variable

    def apply(self, grad_outputs):
        accumulate_grad(self.variable, grad_outputs[0])
        return []


def grad_accumulator(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made on first use and held weakly by the leaf."""
    ref = tensor._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._grad_accumulator = weakref.ref(node)
    return node


#: Gives a view whose data changed in place a fresh ``grad_fn``:
#: :func:`whylab.autograd.inplace.regenerate_view_grad_fn`, set when that module loads
#: (it builds the node, so it sits above this module). A view's ``grad_fn`` records
#: its version only in :mod:`whylab.autograd.recording`, which imports that module, so
#: this is set before :func:`gradient_edge` can need it.
view_grad_fn_regenerator = None


def gradient_edge(tensor):
    """The edge a gradient for ``tensor`` must travel: ``(grad_fn, output_nr)`` or
    ``(AccumulateGrad, 0)`` for a leaf that requires grad, else ``(None, 0)``.

    A view whose data changed through an in-place op since its ``grad_fn`` was
    made (on itself, its base or another view) gets a fresh ``grad_fn`` first,
    as in PyTorch: an ``AsStridedBackward0`` reading from the base's history.
    """
    grad_fn = tensor.grad_fn
    if grad_fn is not None and tensor._base is not None:
        version = grad_fn._view_version
        if version is not None and version != tensor._version_counter.value:
            grad_fn = view_grad_fn_regenerator(tensor)
    if grad_fn is not None:
        return (grad_fn, tensor._output_nr)
    if tensor._requires_grad:
        return (grad_accumulator(tensor), 0)
    return (None, 0)


# ----------------------------------------------------------------------------------
# Saved tensors
# ----------------------------------------------------------------------------------


#: This thread's stack of (pack, unpack) hook pairs, documented in
#: whylab/_core/thread_state.py.
_saved_hooks_state = thread_state.saved_tensor_hooks


class saved_tensors_hooks:
    """Context manager: transform every tensor saved for backward inside the block.

    ``pack_hook(tensor)`` is called when a tensor is saved and its return value is
    stored instead; ``unpack_hook(packed)`` is called when the backward pass needs
    the tensor and must return it. This is PyTorch's
    ``torch.autograd.graph.saved_tensors_hooks``; activation checkpointing is
    built on it (see ``whylab.utils.checkpoint``).
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _saved_hooks_state.stack = _saved_hooks_state.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc_info):
        _saved_hooks_state.stack = _saved_hooks_state.stack[:-1]
        return False


def _detached_alias(tensor):
    """A tensor sharing ``tensor``'s storage and version counter, with no history.

    What ``detach()`` returns, built directly (this runs for every saved output).
    """
    return tensor._view_of_parts(tensor._sizes, tensor._strides, tensor._offset)


class SavedTensor:
    """A tensor kept for a backward formula, with the version it had when saved.

    ``is_output`` marks a tensor that is an output of the node saving it. Such a
    tensor is stored as a detached alias (same storage, same version counter,
    no ``grad_fn``); unpacking rebuilds a tensor whose ``grad_fn`` is the node,
    so double backward still flows through it, without a reference cycle.
    """

    __slots__ = (
        "data",
        "saved_version",
        "_version_counter",
        "is_output",
        "output_nr",
        "_unpack_hook",
        "_released",
        "_description",
    )

    def __init__(self, tensor, is_output: bool = False):
        if not tensor._keys & _AUTOGRAD_KEY_BIT:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. To work around you can make a "
                "clone to get a normal tensor and use it in autograd."
            )
        counter = tensor._version_counter
        self._version_counter = counter
        self.saved_version = counter.value
        self.is_output = is_output
        self.output_nr = tensor._output_nr
        self._released = False
        stored = _detached_alias(tensor) if is_output else tensor
        hooks = _saved_hooks_state.stack
        if hooks:
            pack_hook, unpack_hook = hooks[-1]
            self._unpack_hook = unpack_hook
            self._description = (_describe(tensor), tensor._sizes, tensor.dtype)
            self.data = pack_hook(stored)
        else:
            self._unpack_hook = None
            self._description = None
            self.data = stored

    def unpack(self, node=None):
        """The saved tensor, after checking it was not modified or freed since saving.

        For a saved output, ``node`` (the node that saved it) becomes the
        ``grad_fn`` of the returned tensor when grad mode is on, so formulas that
        use ``result`` stay differentiable under ``create_graph=True``.
        """
        if self._released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        data = self.data
        if self._unpack_hook is not None:
            data = self._unpack_hook(data)
        if self._version_counter.value != self.saved_version:
            raise RuntimeError(self._version_error(data, node))
        if not self.is_output:
            return data
        if node is None or not grad_mode._state.enabled:
            return data
        alias = _detached_alias(data)
        alias.grad_fn = node
        alias._output_nr = self.output_nr
        alias._requires_grad = True
        return alias

    def _version_error(self, data, node) -> str:
        # Like PyTorch, name the tensor's *current* producer: after ``y.mul_(2)``
        # that is the MulBackward0 of the in-place op, not the node that saved ``y``.
        current = data.grad_fn if not self.is_output and hasattr(data, "grad_fn") else None
        if self.is_output and node is not None:
            producer = f", which is output {self.output_nr} of {node.name()}"
        elif current is not None:
            producer = f", which is output {data._output_nr} of {current.name()}"
        else:
            producer = ""
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {_describe(data)}{producer}, is at version "
            f"{self._version_counter.value}; expected version {self.saved_version} instead. "
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with whylab.autograd.set_detect_anomaly(True)."
        )

    def release(self) -> None:
        """Forget the tensor (called after a backward pass without ``retain_graph``)."""
        self.data = None
        self._released = True

    @property
    def released(self) -> bool:
        return self._released

    def peek(self):
        """The stored object without checks or hooks (for inspection only); None if freed."""
        return self.data

    def shape_and_dtype(self):
        """``(sizes, dtype)`` of the saved tensor, without unpacking it; None if freed."""
        if self._description is not None:
            return self._description[1], self._description[2]
        if self.data is None:
            return None
        return self.data._sizes, self.data.dtype
