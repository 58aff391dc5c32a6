"""Run one backward pass and keep what the engine recorded and did, for drawing and checking.

:func:`trace_backward` exports the recorded graph with
:func:`whylab.autograd.graph_export.to_json`, runs the backward pass inside
:func:`whylab.autograd.engine_trace`, and joins the two by node: the trace names
nodes ``"MmBackward0#3"`` while the export numbers them ``n0, n1, ...``, so both
are looked up from the same node objects. Nothing here computes a gradient
itself; it only reads what the engine did (or, for the ``eager-engine``
control, what :func:`whylab.topics.autograd.sabotage.eager_backward` did).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import whylab
from whylab.autograd.graph import AccumulateGrad
from whylab.autograd.graph_export import to_json
from whylab.autograd.memory import graph_nodes
from whylab.explorer.experiment import GraphDiagram, GraphNode, T, Table, Text
from whylab.topics.autograd.sabotage import eager_backward


@dataclass
class BackwardTrace:
    """The graph behind one output and what one backward pass over it did."""

    graph: dict  # to_json before the pass
    leaf_names: dict[str, str]  # export id of each AccumulateGrad node -> the leaf's name
    dependencies: dict[str, int]  # export id -> the engine's dependency count
    executed: list[str]  # export ids in the order the engine ran them (GraphRoot left out)
    buffer_sums: Counter = field(default_factory=Counter)  # export id -> gradients summed
    grad_writes: dict[str, list[str]] = field(default_factory=dict)  # leaf id -> steal/copy/add
    saved_after: int = 0  # saved tensors not yet released after the pass

    @property
    def nodes(self) -> list[dict]:
        return self.graph["nodes"]

    @property
    def edges(self) -> list[dict]:
        return self.graph["edges"]

    def node(self, node_id: str) -> dict:
        return next(n for n in self.nodes if n["id"] == node_id)

    def saved_before(self) -> int:
        return held_saved_tensors(self.graph)

    def in_degrees(self) -> Counter:
        """Edges pointing at each node in the exported graph; the root gets one from GraphRoot."""
        degrees = Counter(edge["target"] for edge in self.edges)
        for root in self.graph["roots"]:
            degrees[root] += 1
        return degrees


def trace_backward(output: whylab.Tensor, leaves: dict[str, whylab.Tensor],
                   grad_output: whylab.Tensor | None = None,
                   retain_graph: bool = False, eager: bool = False) -> BackwardTrace:
    """Export the graph behind ``output``, run ``output.backward()``, return what happened.

    With ``eager`` the pass is run by the naive :func:`eager_backward` instead
    of the engine (a negative control).
    """
    graph = to_json(output)
    node_objects = graph_nodes(output)
    ids = {node: entry["id"] for node, entry in zip(node_objects, graph["nodes"], strict=True)}
    names_by_tensor = {id(tensor): name for name, tensor in leaves.items()}
    leaf_names = {
        ids[node]: names_by_tensor.get(id(node.variable), "?")
        for node in node_objects
        if isinstance(node, AccumulateGrad)
    }
    with whylab.autograd.engine_trace() as trace:
        if eager:
            eager_backward(output, whylab.ones_like(output) if grad_output is None
                           else grad_output)
        else:
            output.backward(grad_output, retain_graph=retain_graph)
    by_label = {trace.label(node): ids[node] for node in node_objects}

    result = BackwardTrace(graph=graph, leaf_names=leaf_names, dependencies={}, executed=[])
    last_executed = None
    for event in trace.events:
        kind = event["kind"]
        if kind == "dependencies":
            result.dependencies = {by_label[label]: count for label, count in
                                   event["counts"].items()}
        elif kind == "execute" and event["node"] in by_label:
            last_executed = by_label[event["node"]]
            result.executed.append(last_executed)
        elif kind == "buffer_add":
            result.buffer_sums[by_label[event["node"]]] += 1
        elif kind == "accumulate_grad" and last_executed is not None:
            # AccumulateGrad writes .grad while it runs, right after its "execute" event.
            result.grad_writes.setdefault(last_executed, []).append(event["mode"])
    result.saved_after = held_saved_tensors(to_json(output))
    return result


def held_saved_tensors(graph: dict) -> int:
    """Saved tensors in an exported graph that have not been released."""
    return sum(not item["released"] for node in graph["nodes"] for item in node["saved"])


# ---------------------------------------------------------------- consistency of the pass


def runs_in_dependency_order(trace: BackwardTrace) -> bool:
    """True when every node ran exactly once, and after every node that feeds it a gradient."""
    position = {node_id: i for i, node_id in enumerate(trace.executed)}
    if len(position) != len(trace.executed) or set(position) != {n["id"] for n in trace.nodes}:
        return False
    return all(position[e["source"]] < position[e["target"]] for e in trace.edges)


def dependency_mismatches(trace: BackwardTrace) -> list[str]:
    """Nodes whose engine dependency count differs from the edges pointing at them."""
    degrees = trace.in_degrees()
    return sorted(node_id for node_id in {n["id"] for n in trace.nodes}
                  if trace.dependencies.get(node_id, 0) != degrees[node_id])


PRODUCT_NODES = ("MmBackward0", "AddmmBackward0", "MulBackward0")
# Backward nodes blue; AccumulateGrad, where gradients come to rest, green.
NODE_COLOURS = {"grad_fn": "blue", "AccumulateGrad": "green"}


def product_saves(trace: BackwardTrace) -> list[tuple[str, list[str]]]:
    """The names of the tensors each product node saved, sorted (compare: torch_reference)."""
    return sorted((entry["name"], sorted(item["name"] for item in entry["saved"]))
                  for entry in trace.nodes if entry["name"] in PRODUCT_NODES)


# ---------------------------------------------------------------- drawing


def _shape(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def node_detail(trace: BackwardTrace, entry: dict) -> str:
    """One line under a node: the leaf's name and shape, or the tensors the node saved."""
    if entry["kind"] == "leaf":
        return f"{trace.leaf_names[entry['id']]} {_shape(entry['variable']['shape'])}"
    # Named as PyTorch exposes them on a node (grad_fn._saved_self), so every language reads it.
    saved = [f"_saved_{item['name']} {_shape(item['shape'])}" for item in entry["saved"]]
    return ", ".join(saved)


def diagram(trace: BackwardTrace, title: Text) -> GraphDiagram:
    """The recorded graph, drawn the way gradients flow; edges carry the gradient's shape."""
    nodes = [
        GraphNode(id=entry["id"], label=entry["name"], detail=node_detail(trace, entry),
                  group="AccumulateGrad" if entry["kind"] == "leaf" else "grad_fn")
        for entry in trace.nodes
    ]
    # Parallel edges (x * x sends two gradients to x's node) are drawn once, labelled "×2".
    parallel = Counter((edge["source"], edge["target"], edge["input_nr"]) for edge in trace.edges)
    edges = []
    for (source, target, input_nr), count in parallel.items():
        label = _shape(trace.node(target)["inputs"][input_nr]["shape"])
        edges.append((source, target, label if count == 1 else f"{label} ×{count}"))
    return GraphDiagram(title=title, nodes=nodes, edges=edges, group_colours=NODE_COLOURS)


GRAD_WRITE_WORDS = {"steal": T("steal", "直接接管"), "copy": T("copy", "复制"),
                    "add": T("add", "累加")}


def _grad_writes_text(modes: list[str]) -> Text | str:
    """How AccumulateGrad wrote .grad on each pass ("steal, add"), or a dash for none."""
    if not modes:
        return "–"
    words = [GRAD_WRITE_WORDS.get(mode, T(mode, mode)) for mode in modes]
    return T(", ".join(w.en for w in words), "，".join(w.zh for w in words))


def execution_table(trace: BackwardTrace) -> Table:
    """The backward pass step by step: dependency count, buffer sums, .grad writes."""
    rows = []
    for step, node_id in enumerate(trace.executed, start=1):
        entry = trace.node(node_id)
        name = entry["name"]
        if entry["kind"] == "leaf":
            name = f"{name} ({trace.leaf_names[node_id]})"
        rows.append([step, name, trace.dependencies.get(node_id, 0),
                     trace.buffer_sums[node_id] + 1,
                     _grad_writes_text(trace.grad_writes.get(node_id, []))])
    return Table(
        title=T("The backward pass as the engine ran it", "引擎实际执行的反向传播"),
        columns=[T("step", "步骤"), T("node", "节点"), T("dependency count", "依赖计数"),
                 T("gradients summed in its input buffer", "输入缓冲区累加的梯度个数"),
                 T(".grad write", ".grad 写入方式")],
        rows=rows,
    )
