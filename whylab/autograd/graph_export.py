"""Export the recorded graph as JSON (for the explorer) or DOT (for Graphviz).

:func:`to_json` returns plain data::

    {
      "roots":  ["n0"],                         # grad_fn of each given tensor
      "nodes":  [{"id": "n0", "name": "MulBackward0", "kind": "function",
                  "sequence_nr": 12,
                  "inputs": [{"shape": [3], "dtype": "float32"}],   # gradients it receives
                  "saved": [{"name": "other", "shape": [3], "dtype": "float32",
                             "is_output": false, "released": false}],
                  "hooks": {"pre": 0, "post": 0, "tensor": 0, "retains_grad": 0}},
                 {"id": "n1", "name": "AccumulateGrad", "kind": "leaf",
                  "variable": {"shape": [3], "dtype": "float32", "has_grad": false}, ...}],
      "edges":  [{"source": "n0", "target": "n1", "input_nr": 0, "index": 0}]
    }

An edge goes the way gradients flow: from a node to one of its
``next_functions``. ``index`` is the position in the source's
``next_functions`` (which forward input it stands for); ``input_nr`` is the
input slot of the target that receives the gradient. ``kind`` is ``"function"``
(a derivatives-table node), ``"leaf"`` (AccumulateGrad), ``"custom"``
(an ``autograd.Function``), ``"copy_slices"`` (an in-place write through a
view), ``"view"`` (a view's regenerated ``AsStridedBackward0``) or ``"other"``.
Node ids are ``n0, n1, ...`` in the order of an iterative depth-first walk
from the roots, so the same graph always exports the same way.
"""

from __future__ import annotations

from whylab.autograd.function import BackwardCFunction
from whylab.autograd.graph import AccumulateGrad
from whylab.autograd.inplace import AsStridedBackward0, CopySlices
from whylab.autograd.memory import graph_nodes
from whylab.autograd.recording import FormulaNode

__all__ = ["to_json", "to_dot"]


def _dtype_name(dtype) -> str | None:
    return None if dtype is None else getattr(dtype, "name", str(dtype))


def _kind(node) -> str:
    if isinstance(node, AccumulateGrad):
        return "leaf"
    if isinstance(node, FormulaNode):
        return "function"
    if isinstance(node, BackwardCFunction):
        return "custom"
    if isinstance(node, CopySlices):
        return "copy_slices"
    if isinstance(node, AsStridedBackward0):
        return "view"
    return "other"


def _saved_entries(node) -> list:
    entries = []
    for name, saved in node.saved_tensor_items():
        described = saved.shape_and_dtype()
        entries.append(
            {
                "name": name,
                "shape": None if described is None else list(described[0]),
                "dtype": None if described is None else _dtype_name(described[1]),
                "is_output": saved.is_output,
                "released": saved.released,
            }
        )
    return entries


def _hook_counts(node) -> dict:
    hooks = node._hooks

    def count(kind):
        found = getattr(hooks, kind) if hooks is not None else None
        return len(found) if found else 0

    tensor_hooks = count("tensor_pre")
    if isinstance(node, AccumulateGrad) and node.variable._hooks:
        tensor_hooks += len(node.variable._hooks)
    return {
        "pre": count("pre"),
        "post": count("post"),
        "tensor": tensor_hooks,
        "retains_grad": count("retains_grad"),
    }


def to_json(tensors) -> dict:
    """The graph behind ``tensors`` (one tensor or a sequence) as plain data (see module doc)."""
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors]
    nodes = graph_nodes(*tensors)
    ids = {node: f"n{i}" for i, node in enumerate(nodes)}
    node_entries, edge_entries = [], []
    for node in nodes:
        entry = {
            "id": ids[node],
            "name": node.name(),
            "kind": _kind(node),
            "sequence_nr": node.sequence_nr if not isinstance(node, AccumulateGrad) else None,
            "inputs": [
                {"shape": list(shape), "dtype": _dtype_name(dtype)}
                for shape, dtype in node.input_metadata
            ],
            "saved": _saved_entries(node),
            "hooks": _hook_counts(node),
        }
        if isinstance(node, AccumulateGrad):
            variable = node.variable
            entry["variable"] = {
                "shape": list(variable._sizes),
                "dtype": _dtype_name(variable.dtype),
                "has_grad": variable.grad is not None,
            }
        node_entries.append(entry)
        for index, (next_node, input_nr) in enumerate(node.next_functions):
            if next_node is not None:
                edge_entries.append(
                    {
                        "source": ids[node],
                        "target": ids[next_node],
                        "input_nr": input_nr,
                        "index": index,
                    }
                )
    roots = [ids[t.grad_fn] for t in tensors if t.grad_fn is not None]
    return {"roots": roots, "nodes": node_entries, "edges": edge_entries}


def _dot_label(lines) -> str:
    """Join label lines with DOT's line break, escaping what DOT treats specially."""
    escaped = [line.replace("\\", "\\\\").replace('"', '\\"') for line in lines]
    return "\\n".join(escaped)


def to_dot(tensors) -> str:
    """The graph behind ``tensors`` in Graphviz DOT: leaves as boxes, saved shapes in labels."""
    graph = to_json(tensors)
    lines = ["digraph autograd {", '  node [fontname="monospace", fontsize=10];']
    for node in graph["nodes"]:
        if node["kind"] == "leaf":
            variable = node["variable"]
            label = _dot_label(["AccumulateGrad", f"{variable['shape']} {variable['dtype']}"])
            style = 'shape=box, style=filled, fillcolor="#dde8ff"'
        else:
            saved = [
                f"{item['name']}: {item['shape']}" + (" (freed)" if item["released"] else "")
                for item in node["saved"]
            ]
            label = _dot_label([node["name"], *saved])
            style = "shape=ellipse"
        lines.append(f'  {node["id"]} [label="{label}", {style}];')
    for edge in graph["edges"]:
        lines.append(f'  {edge["source"]} -> {edge["target"]} [label="{edge["input_nr"]}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
