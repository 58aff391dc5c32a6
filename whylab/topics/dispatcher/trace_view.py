"""Turning a recorded dispatcher trace into calls, a diagram and a table.

``whylab.dispatch.trace()`` records a flat list of hops (operator, key, kernel,
depth). Every operator call starts with a hop at the Tracer key; the hops after
it at the same depth are that call going down the keys; hops one level deeper
are other operators called by the kernel running at the time. This module
regroups the hops into calls and draws them as a call tree: one column per
operator call, one row per (depth, key), higher keys above lower ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from whylab.dispatch import TraceEvent
from whylab.explorer.experiment import GraphDiagram, GraphNode, T, Table, Text
from whylab.topics.dispatcher.key_rules import PRIORITY

# Each dispatch key's colour, the same in every diagram (each declares the keys it
# draws): the backends where the arithmetic happens blue (CPU) and teal (Meta),
# Autograd purple, ADInplaceOrView yellow, the tracer's bookkeeping grey.
KEY_COLOURS = {
    "CPU": "blue",
    "Autograd": "purple",
    "ADInplaceOrView": "yellow",
    "Meta": "teal",
    "Tracer": "grey",
}


@dataclass
class Call:
    """One operator call: the indices of its hops, and who called it."""

    op: str
    depth: int
    hops: list[int] = field(default_factory=list)
    parent_hop: int | None = None  # the hop whose kernel made this call
    children: list[int] = field(default_factory=list)  # indices into the call list


def group_calls(events: list[TraceEvent]) -> list[Call]:
    """Regroup trace events into operator calls, in the order they were made.

    A nested call is attributed to the last hop its parent had reached when the
    call began: the kernel running at that moment.
    """
    calls: list[Call] = []
    open_call: dict[int, int] = {}  # depth -> index of the call in progress there
    for index, event in enumerate(events):
        current = open_call.get(event.depth)
        starts_call = (
            event.key == "Tracer" or current is None or calls[current].op != event.op
        )
        if starts_call:
            call = Call(op=event.op, depth=event.depth)
            parent = open_call.get(event.depth - 1)
            if parent is not None:
                call.parent_hop = calls[parent].hops[-1]
                calls[parent].children.append(len(calls))
            open_call[event.depth] = len(calls)
            for deeper in [d for d in open_call if d > event.depth]:
                del open_call[deeper]
            calls.append(call)
        calls[open_call[event.depth]].hops.append(index)
    return calls


def top_level_ops(events: list[TraceEvent], depth: int = 1) -> list[str]:
    """The operators called directly at ``depth`` (1: those a composite at depth 0 called)."""
    return [call.op for call in group_calls(events) if call.depth == depth]


def short_kernel(name: str) -> str:
    """The last two dotted parts of a kernel's name: ``linalg.mm``, ``recording.Autograd[mm]``."""
    return ".".join(name.split(".")[-2:])


def call_columns(calls: list[Call]) -> list[int]:
    """Column of each call in a tidy call tree: a call shares its first child's column,
    every call without children takes the next free column."""
    columns, leaves_so_far = [], 0
    for call in calls:
        columns.append(leaves_so_far)
        if not call.children:
            leaves_so_far += 1
    return columns


def trace_diagram(events: list[TraceEvent], title: Text) -> GraphDiagram:
    """The hops as a graph: nodes are hops, arrows are redispatches and nested calls."""
    calls = group_calls(events)
    rows = sorted({(events[i].depth, PRIORITY.index(events[i].key)) for c in calls
                   for i in c.hops})
    row_of = {row: layer for layer, row in enumerate(rows)}
    columns = call_columns(calls)
    nodes, edges = [], []
    for call, column in zip(calls, columns, strict=True):
        for position, index in enumerate(call.hops):
            event = events[index]
            nodes.append(GraphNode(
                id=f"h{index}", label=f"{event.op} @ {event.key}",
                detail=short_kernel(event.kernel), group=event.key,
                layer=row_of[(event.depth, PRIORITY.index(event.key))], order=column,
            ))
            if position > 0:
                edges.append((f"h{call.hops[position - 1]}", f"h{index}", ""))
        if call.parent_hop is not None:
            edges.append((f"h{call.parent_hop}", f"h{call.hops[0]}", ""))
    drawn = {node.group for node in nodes}
    colours = {key: colour for key, colour in KEY_COLOURS.items() if key in drawn}
    return GraphDiagram(title=title, nodes=nodes, edges=edges, group_colours=colours)


def compact_argument(text: str) -> str:
    """``Tensor[2, 3] float64`` → ``[2,3]``: the arguments column only needs the shapes."""
    return re.sub(r"Tensor\[([^\]]*)\] \w+", lambda m: "[" + m.group(1).replace(" ", "") + "]",
                  text)


def trace_table(events: list[TraceEvent], title: Text) -> Table:
    """Every hop in call order, with the kernel's name (below ``whylab.``). The first
    hop of each call also shows the call's arguments (tensors by their shapes)."""
    first_hops = {call.hops[0] for call in group_calls(events)}
    rows = []
    for i, event in enumerate(events):
        call = event.op
        if i in first_hops:
            call += "(" + ", ".join(compact_argument(a) for a in event.inputs) + ")"
        rows.append([i, event.depth, call, event.key, event.kernel.removeprefix("whylab.")])
    return Table(
        title=title,
        columns=[T("#", "#"), T("depth", "深度"), T("operator call", "算子调用"), T("key", "键"),
                 T("kernel that ran (whylab.…)", "实际运行的 kernel（whylab.…）")],
        rows=rows,
    )
