"""Laying out a graph diagram (:class:`~whylab.explorer.experiment.GraphDiagram`).

Nodes get a layer by longest path from the sources, long edges pass through
invisible routing points, layers are ordered by the barycentre heuristic to
reduce crossings, and each node is centred on its parents where space allows. A
node may pin its layer and its position in the layer (see
:class:`~whylab.explorer.experiment.GraphNode`) when the order itself means
something, as in an FFT butterfly. Each box is as tall as its wrapped lines of
text; edges leave and enter boxes at spread ports, as cubic Bézier curves.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from whylab.explorer.experiment import (
    GraphDiagram,
    GraphNode,
    Lang,
    Text,
    in_language,
)
from whylab.explorer.figures.pieces import pack_in_order
from whylab.explorer.figures.text import line_spaces, monospace_width, text_width, wrap_text

NODE_HEIGHT = 44.0  # a box with one line of label and one of detail, or of label alone
LABEL_FONT = 13.0  # node labels are bold sans-serif, details monospace (see explorer.css)
DETAIL_FONT = 11.0
LABEL_LINE = 16.0  # what each further line of label adds to a box's height
DETAIL_LINE = 14.0  # ... and each further line of detail
NODE_GAP = 24.0  # between neighbouring boxes of one layer
POINT_GAP = 8.0  # after a routing point of a long edge
LEGEND_GAP = 10.0  # between the lowest box of a graph and its legend
LEGEND_MIN_WIDTH = 200.0  # a legend may wrap within no less than this (the drawing widens)
GRAPH_MIN_SCALE = 1.0  # smallest scale a page may draw a diagram at (11 px labels stay 11 px)
MIN_WRAP_WIDTH = 40.0  # the narrowest a node's text is wrapped to


@dataclass(frozen=True)
class GraphSize:
    """One way of drawing a graph: how wide it may get, its margins and its gaps."""

    name: str  # the CSS class of the drawing: "wide" or "narrow"
    max_width: float | None  # None: as wide as the graph needs
    margin: float  # around the drawing
    node_padding: float  # each side of a node's text, inside its box
    layer_gap: dict[str, float]  # between layers (where edges and their labels run), by direction
    min_lr_gap: float  # with a max_width, columns may close up to this to fit it


# WIDE is drawn for desktops, print and notebooks; NARROW for phones, at most 340 px
# wide: a 390 px phone gives a figure 348 px, so the drawing fits at scale 1 and its
# 11 px text stays 11 px.
WIDE_GRAPH = GraphSize("wide", None, 16.0, 12.0, {"TB": 56.0, "LR": 120.0}, 120.0)
NARROW_GRAPH = GraphSize("narrow", 340.0, 6.0, 6.0, {"TB": 56.0, "LR": 120.0}, 40.0)


def _layers(
    node_ids: list[str], edges: list[tuple[str, str]], pinned: dict[str, int]
) -> dict[str, int]:
    """Layer of each node: its pinned layer, else the longest path reaching it.

    Back edges of cycles are ignored; an edge may end in a pinned node on an
    earlier layer (it is then drawn against the flow).
    """
    children: dict[str, list[str]] = {n: [] for n in node_ids}
    for source, target in edges:
        children[source].append(target)
    state: dict[str, int] = {}  # 1 = on the DFS stack, 2 = done
    order: list[str] = []
    forward: set[tuple[str, str]] = set()

    def visit(start: str) -> None:  # iterative DFS: deep graphs must not hit the recursion limit
        stack = [(start, iter(children[start]))]
        state[start] = 1
        while stack:
            node, remaining = stack[-1]
            child = next(remaining, None)
            if child is None:
                state[node] = 2
                order.append(node)
                stack.pop()
            elif state.get(child) is None:
                forward.add((node, child))
                state[child] = 1
                stack.append((child, iter(children[child])))
            elif state[child] == 2:
                forward.add((node, child))  # a cross or forward edge; only back edges are dropped

    for node in node_ids:
        if node not in state:
            visit(node)
    layer = {n: pinned.get(n, 0) for n in node_ids}
    for node in reversed(order):  # reverse post-order is a topological order of the forward edges
        for child in children[node]:
            if (node, child) in forward and child not in pinned:
                layer[child] = max(layer[child], layer[node] + 1)
    return layer


def _order_rows(
    rows: list[list[str]],
    up: dict[str, list[str]],
    down: dict[str, list[str]],
    pinned_order: dict[str, float],
) -> None:
    """Barycentre sweeps: sort each row by the mean position of its neighbours.

    Nodes with a pinned order come first in their row, sorted by it, and never move.
    """

    def settle(row: list[str], keys: dict[str, float]) -> None:
        row.sort(key=lambda n: (0, pinned_order[n]) if n in pinned_order else (1, keys[n]))

    for row in rows:
        settle(row, {n: float(i) for i, n in enumerate(row)})
    for sweep in range(6):
        going_down = sweep % 2 == 0
        sequence = range(1, len(rows)) if going_down else range(len(rows) - 2, -1, -1)
        for r in sequence:
            reference = rows[r - 1] if going_down else rows[r + 1]
            position = {n: i for i, n in enumerate(reference)}
            neighbours = up if going_down else down

            keys = {}
            for current, node in enumerate(rows[r]):
                linked = [position[m] for m in neighbours[node] if m in position]
                keys[node] = sum(linked) / len(linked) if linked else float(current)
            settle(rows[r], keys)


@dataclass
class GraphLayout:
    """Where a diagram's nodes go, in two coordinates.

    ``along`` runs within a layer (x for a top-to-bottom diagram, y for a
    left-to-right one); ``across`` runs from layer to layer. Routing points of
    long edges (ids starting with a NUL character) have a layer and an
    ``along`` position but no box.
    """

    direction: str
    layer: dict[str, int]
    along: dict[str, float]  # centre of each node and routing point within its layer
    layer_start: list[float]  # across: where each layer begins
    layer_size: list[float]  # across: how thick each layer is
    chains: list[tuple[list[str], str]]  # each edge from source to target, through its points
    box_width: dict[str, float]  # real nodes only
    box_height: dict[str, float]
    text: dict[str, NodeText]  # what each box says, in lines
    size: GraphSize = WIDE_GRAPH
    layer_gap: float = 56.0  # across, between one layer and the next
    # (chain index, 0 at its source or 1 at its target) -> offset along the box side
    # where the edge meets it, so edges sharing a side do not all meet at one point
    ports: dict[tuple[int, int], float] = field(default_factory=dict)

    def along_size(self, node: str) -> float:
        if node not in self.box_width:
            return 0.0
        return self.box_height[node] if self.direction == "LR" else self.box_width[node]

    def across_size(self, node: str) -> float:
        if node not in self.box_width:
            return 0.0
        return self.box_width[node] if self.direction == "LR" else self.box_height[node]

    def across_centre(self, node: str) -> float:
        r = self.layer[node]
        return self.layer_start[r] + self.layer_size[r] / 2

    def xy(self, along: float, across: float) -> tuple[float, float]:
        """Layout coordinates to SVG coordinates."""
        return (across, along) if self.direction == "LR" else (along, across)

    def box(self, node: str) -> tuple[float, float, float, float]:
        """(left, top, width, height) of a node's box in SVG coordinates."""
        width, height = self.box_width[node], self.box_height[node]
        centre_x, centre_y = self.xy(self.along[node], self.across_centre(node))
        return centre_x - width / 2, centre_y - height / 2, width, height


def label_width(text: str) -> float:
    return text_width(text, LABEL_FONT, bold=True)


def detail_width(text: str) -> float:
    return monospace_width(text, DETAIL_FONT)


def words_width(text: str) -> float:
    """A detail with words (a :class:`Text`) is drawn in the sans-serif font, which has
    the CJK glyphs a monospace font may lack."""
    return text_width(text, DETAIL_FONT)


@dataclass(frozen=True)
class NodeText:
    """A node's label and detail in the reader's language, as the lines they are drawn in."""

    label: tuple[str, ...]
    detail: tuple[str, ...]  # empty: the node has no detail
    detail_is_words: bool = False  # a Text, drawn in sans-serif; else code, in monospace
    spaces: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # see line_spaces

    @property
    def detail_measure(self) -> Callable[[str], float]:
        return words_width if self.detail_is_words else detail_width

    @classmethod
    def of(cls, node: GraphNode, lang: Lang, wrap_width: float | None = None) -> NodeText:
        """The node's text, on one line each, or wrapped to ``wrap_width`` pixels."""
        label, detail = in_language(node.label, lang), in_language(node.detail, lang)
        words = isinstance(node.detail, Text)
        if wrap_width is None:
            return cls((label,), (detail,) if detail else (), words)
        measure = words_width if words else detail_width
        label_lines = wrap_text(label, wrap_width, label_width)
        detail_lines = wrap_text(detail, wrap_width, measure) if detail else []
        spaces = (line_spaces(label, label_lines), line_spaces(detail, detail_lines))
        return cls(tuple(label_lines), tuple(detail_lines), words, spaces)

    def box_size(self, padding: float) -> tuple[float, float]:
        """(width, height) of the box around these lines, ``padding`` each side."""
        widest = max(
            *(label_width(line) for line in self.label),
            *(self.detail_measure(line) for line in self.detail),
            MIN_WRAP_WIDTH,
        )
        height = NODE_HEIGHT + LABEL_LINE * (len(self.label) - 1)
        height += DETAIL_LINE * max(0, len(self.detail) - 1)
        return widest + 2 * padding, height

    def baselines(self, top: float) -> tuple[list[float], list[float]]:
        """The y of each label line and of each detail line, in a box whose top is ``top``."""
        first = top + (18.0 if self.detail else 27.0)
        label = [first + LABEL_LINE * i for i in range(len(self.label))]
        below = first + LABEL_LINE * len(self.label)
        return label, [below + DETAIL_LINE * i for i in range(len(self.detail))]


def layout_graph(
    diagram: GraphDiagram,
    lang: Lang = "en",
    size: GraphSize = WIDE_GRAPH,
    wrap_width: float | None = None,
    direction: str | None = None,
) -> GraphLayout:
    """Layers, order within layers and positions of every node of ``diagram``.

    The node text reads in ``lang``, wrapped to ``wrap_width`` pixels when one is
    given; ``direction`` overrides the diagram's own ("TB" or "LR").
    """
    direction = direction or diagram.direction
    nodes = {n.id: n for n in diagram.nodes}
    if len(nodes) != len(diagram.nodes):
        raise ValueError(f"graph {diagram.title.en!r}: node ids must be unique")
    for source, target, _ in diagram.edges:
        if source not in nodes or target not in nodes:
            raise ValueError(
                f"graph {diagram.title.en!r}: edge {source}->{target} names a missing node"
            )
    ids = [n.id for n in diagram.nodes]
    pinned_layer = {n.id: n.layer for n in diagram.nodes if n.layer is not None}
    pinned_order = {n.id: n.order for n in diagram.nodes if n.order is not None}
    plain_edges = [(s, t) for s, t, _ in diagram.edges if s != t]
    layer = _layers(ids, plain_edges, pinned_layer)

    # Split edges that skip layers into chains through routing points. An edge
    # between two nodes of one layer (possible only when layers are pinned) has
    # no chain neighbours: it does not pull on the ordering.
    up: dict[str, list[str]] = {n: [] for n in ids}
    down: dict[str, list[str]] = {n: [] for n in ids}
    chains: list[tuple[list[str], str]] = []
    for index, (source, target, label) in enumerate(diagram.edges):
        if source == target:
            continue
        if layer[source] == layer[target]:
            chains.append(([source, target], label))
            continue
        first, last = (source, target) if layer[source] < layer[target] else (target, source)
        chain = [first]
        for row in range(layer[first] + 1, layer[last]):
            point = f"\0{index}:{row}"
            layer[point] = row
            up[point], down[point] = [], []
            chain.append(point)
        chain.append(last)
        for a, b in zip(chain, chain[1:], strict=False):
            down[a].append(b)
            up[b].append(a)
        chains.append((chain if chain[0] == source else chain[::-1], label))

    rows: list[list[str]] = [[] for _ in range(max(layer.values()) + 1)]
    for node in [*ids, *(p for p in layer if p not in nodes)]:
        rows[layer[node]].append(node)
    _order_rows(rows, up, down, pinned_order)

    text = {n: NodeText.of(nodes[n], lang, wrap_width) for n in ids}
    box_sizes = {n: text[n].box_size(size.node_padding) for n in ids}
    layout = GraphLayout(
        direction=direction,
        layer=layer,
        along={},
        layer_start=[],
        layer_size=[],
        chains=chains,
        box_width={n: width for n, (width, _) in box_sizes.items()},
        box_height={n: height for n, (_, height) in box_sizes.items()},
        text=text,
        size=size,
        layer_gap=size.layer_gap[direction],
    )
    along = layout.along

    def distance(a: str, b: str) -> float:
        gap = NODE_GAP if a in nodes else POINT_GAP
        return layout.along_size(a) / 2 + gap + layout.along_size(b) / 2

    # A row holding a pinned node is fixed: pinned nodes at their slots, any
    # unpinned ones after them. Its routing points float between their neighbours.
    pinned_rows = {r for r, row in enumerate(rows) if any(n in pinned_order for n in row)}
    slot = max((layout.along_size(n) for n in pinned_order), default=0.0) + NODE_GAP
    for r, row in enumerate(rows):
        previous = None
        for node in row:
            if r in pinned_rows and node not in nodes:
                linked = [along[m] for m in up[node] if m in along]
                along[node] = sum(linked) / len(linked) if linked else 0.0
                continue
            position = pinned_order[node] * slot if node in pinned_order else -math.inf
            if previous is not None:
                position = max(position, along[previous] + distance(previous, node))
            along[node] = position if math.isfinite(position) else layout.along_size(node) / 2
            previous = node

    # Let the free rows pull towards their neighbours: down the graph each node
    # wants to sit level with its parents, up the graph with its children,
    # always keeping the row's order and spacing.
    for sweep in range(4):
        going_down = sweep % 2 == 0
        neighbours = up if going_down else down
        for r in range(len(rows)) if going_down else reversed(range(len(rows))):
            row = rows[r]
            if not row:  # a pinned layer can leave the layers before it empty
                continue
            if r in pinned_rows:
                for point in (p for p in row if p not in nodes):
                    linked = [along[m] for m in up[point] + down[point]]
                    along[point] = sum(linked) / len(linked)
                continue
            wanted = []
            for node in row:
                linked = [along[m] for m in neighbours[node]]
                wanted.append(sum(linked) / len(linked) if linked else along[node])
            distances = [distance(a, b) for a, b in zip(row, row[1:], strict=False)]
            for node, position in zip(row, pack_in_order(wanted, distances), strict=True):
                along[node] = position
    shift = size.margin - min(along[n] - layout.along_size(n) / 2 for n in along)
    for node in along:
        along[node] += shift

    sizes = [max((layout.across_size(n) for n in row), default=0.0) for row in rows]
    if size.max_width is not None and direction == "LR" and len(rows) > 1:
        # Narrow columns: the gaps between them take what the boxes leave of the width.
        room = size.max_width - 2 * size.margin - sum(sizes)
        layout.layer_gap = min(layout.layer_gap, max(size.min_lr_gap, room / (len(rows) - 1)))
    cursor = size.margin
    for thickness in sizes:
        layout.layer_start.append(cursor)
        layout.layer_size.append(thickness)
        cursor += thickness + layout.layer_gap
    if direction == "LR":  # the boxes of a column share its width: a tidy grid
        for node in ids:
            layout.box_width[node] = layout.layer_size[layer[node]]
    _assign_ports(layout)
    return layout


PORT_STEP = 22.0  # most space between neighbouring edge ends on one side of a box
PORT_SPREAD = 0.5  # ... and the share of the side they may use together


def _assign_ports(layout: GraphLayout) -> None:
    """Spread the edges meeting one side of a box along it, ordered by where they come from.

    Ordering the ends by the position of each edge's next point keeps edges
    from crossing just beside the box, and gives each arrowhead (and the label
    near it) a place of its own.
    """
    sides: dict[tuple[str, int], list[tuple[float, int, int]]] = {}
    for index, (chain, _) in enumerate(layout.chains):
        same_layer = layout.layer[chain[0]] == layout.layer[chain[-1]]
        for end, node, neighbour in ((0, chain[0], chain[1]), (1, chain[-1], chain[-2])):
            side = 1 if same_layer or layout.layer[neighbour] > layout.layer[node] else -1
            sides.setdefault((node, side), []).append((layout.along[neighbour], index, end))
    for (node, _), ends in sides.items():
        ends.sort()
        if len(ends) == 1:
            layout.ports[ends[0][1:]] = 0.0
            continue
        step = min(PORT_STEP, PORT_SPREAD * layout.along_size(node) / (len(ends) - 1))
        for rank, (_, index, end) in enumerate(ends):
            layout.ports[(index, end)] = (rank - (len(ends) - 1) / 2) * step


Curve = tuple[tuple[float, float], ...]  # a cubic Bézier: start, two controls, end


def edge_curves(layout: GraphLayout, index: int) -> list[Curve]:
    """Edge number ``index`` as cubic curves in SVG coordinates, from box side to box side."""
    chain = layout.chains[index][0]
    source, target = chain[0], chain[-1]
    a0 = layout.along[source] + layout.ports[(index, 0)]
    a1 = layout.along[target] + layout.ports[(index, 1)]
    if layout.layer[source] == layout.layer[target]:
        # Within one layer: an arc out into the gap after the layer and back.
        r = layout.layer[source]
        bulge = layout.layer_start[r] + layout.layer_size[r] + layout.layer_gap / 2
        c0 = layout.across_centre(source) + layout.across_size(source) / 2
        c1 = layout.across_centre(target) + layout.across_size(target) / 2
        return [(layout.xy(a0, c0), layout.xy(a0, bulge), layout.xy(a1, bulge), layout.xy(a1, c1))]
    ends = []  # (along, across) where the edge meets each node or routing point
    for position, node in enumerate(chain):
        neighbour = chain[1] if position == 0 else chain[position - 1]
        side = 1 if layout.layer[neighbour] > layout.layer[node] else -1
        along = a0 if position == 0 else a1 if position == len(chain) - 1 else layout.along[node]
        ends.append((along, layout.across_centre(node) + side * layout.across_size(node) / 2))
    curves = []
    for (b0, c0), (b1, c1) in zip(ends, ends[1:], strict=False):
        middle = (c0 + c1) / 2
        curves.append(
            (layout.xy(b0, c0), layout.xy(b0, middle), layout.xy(b1, middle), layout.xy(b1, c1))
        )
    return curves


def curve_point(curve: Curve, t: float) -> tuple[float, float]:
    """The point at parameter ``t`` (0 to 1) of a cubic Bézier curve."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = curve
    s = 1 - t
    a, b, c, d = s * s * s, 3 * s * s * t, 3 * s * t * t, t * t * t
    return a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3


def _path_data(curves: list[Curve]) -> str:
    (x, y) = curves[0][0]
    commands = [f"M{x:.1f} {y:.1f}"]
    for _, (x1, y1), (x2, y2), (x3, y3) in curves:
        commands.append(f"C{x1:.1f} {y1:.1f} {x2:.1f} {y2:.1f} {x3:.1f} {y3:.1f}")
    return " ".join(commands)
