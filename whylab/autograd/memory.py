"""How much memory the recorded graph keeps alive through saved tensors.

Backward formulas need some forward values (``mul`` keeps both operands,
``exp`` keeps its result); those *saved tensors* are what makes training use
more memory than inference. :func:`saved_tensors_bytes` walks the graph behind
one or more tensors and adds up the bytes of every distinct storage the saved
tensors hold, so a reader can see, for example, how much activation
checkpointing saves.
"""

from __future__ import annotations

from whylab.autograd.graph import AccumulateGrad

__all__ = ["saved_tensors_bytes", "graph_nodes"]


def graph_nodes(*tensors) -> list:
    """Every node reachable from the ``grad_fn`` of ``tensors`` (iteratively, each once)."""
    roots = [t.grad_fn for t in tensors if t.grad_fn is not None]
    seen = set()
    order = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for next_node, _ in reversed(node.next_functions):
            if next_node is not None and next_node not in seen:
                stack.append(next_node)
    return order


def _tensors_held(saved):
    """The tensors one SavedTensor keeps alive (checkpoint handles report the region inputs)."""
    packed = saved.peek()
    if packed is None:
        return []
    held = getattr(packed, "held_tensors", None)
    if held is not None:
        return held()
    return [packed]


def saved_tensors_bytes(*tensors, include_parameters: bool = True) -> int:
    """Bytes of the distinct storages held by saved tensors in the graph behind ``tensors``.

    Each storage counts once however many nodes save it (``x * x`` saves ``x``
    twice but holds it once). With ``include_parameters=False``, storages of
    leaf tensors that require grad (parameters) are left out, leaving the
    activations and the data.
    """
    storages = {}
    for node in graph_nodes(*tensors):
        if isinstance(node, AccumulateGrad):
            continue
        for _, saved in node.saved_tensor_items():
            for tensor in _tensors_held(saved):
                if not include_parameters and tensor.grad_fn is None and tensor._requires_grad:
                    continue
                storage = tensor._storage
                storages[id(storage)] = storage.nbytes()
    return sum(storages.values())
