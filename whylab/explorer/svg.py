"""Draw experiment figures as inline SVG on the server.

Two figure types exist (see :mod:`whylab.explorer.experiment`):

* :class:`LineChart` -- axes with "nice" ticks (1-2-5 steps, or decades on a
  log axis), one path per series, markers on short series, a legend;
* :class:`GraphDiagram` -- a layered drawing of a directed graph: nodes get a
  row by longest path from the sources, long edges pass through invisible
  helper points, rows are ordered by the barycentre heuristic to reduce
  crossings, and each node is centred over its parents where space allows.

Colours come from CSS classes (``s0``..``s7``, ``g0``..``g7``), so the page's
light and dark themes apply. Series also differ by dash pattern, so the chart
reads without colour. Every SVG carries ``role="img"``, a title and a short
description; the page adds the full data table next to it.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from whylab.explorer.experiment import GraphDiagram, Lang, LineChart, T

POINTS = T("points", "个点")
NODES_AND_EDGES = T("{nodes} nodes, {edges} edges", "{nodes} 个节点，{edges} 条边")

PALETTE_SIZE = 8


def text_width(text: str, font_size: float) -> float:
    """Rough rendered width: wide (CJK) characters count double."""
    units = sum(2.0 if unicodedata.east_asian_width(ch) in "WF" else 1.0 for ch in text)
    return units * font_size * 0.58


def _attr(value: str) -> str:
    return escape(value, quote=True)


def format_number(value: float, step: float | None = None) -> str:
    """Short tick label, with as many decimals as the tick step needs and a real minus sign."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e5 or magnitude < 1e-3:
        text = f"{value:.3g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")
    elif step is not None and step > 0:
        decimals = max(0, -math.floor(math.log10(step) + 1e-9))
        text = f"{value:.{decimals}f}"
    else:
        text = f"{value:.4g}"
    return text.replace("-", "\u2212")


# ---------------------------------------------------------------- scales


def nice_step(span: float, target_ticks: int = 5) -> float:
    """A step of 1, 2 or 5 times a power of ten giving about ``target_ticks`` ticks."""
    raw = span / max(1, target_ticks)
    power = 10.0 ** math.floor(math.log10(raw))
    for multiple in (1.0, 2.0, 5.0, 10.0):
        if raw <= multiple * power * 1.0000001:
            return multiple * power
    return 10.0 * power


@dataclass(frozen=True)
class Axis:
    """Maps data values to pixels along one axis; knows its ticks."""

    low: float  # in data units (for a log axis: the value, not its logarithm)
    high: float
    pixel_low: float
    pixel_high: float
    log: bool
    ticks: tuple[tuple[float, str], ...]

    def to_pixel(self, value: float) -> float:
        if self.log:
            lo, hi, v = math.log10(self.low), math.log10(self.high), math.log10(value)
        else:
            lo, hi, v = self.low, self.high, value
        return self.pixel_low + (v - lo) / (hi - lo) * (self.pixel_high - self.pixel_low)


def linear_axis(
    values: Sequence[float], pixel_low: float, pixel_high: float, tight: bool = False
) -> Axis:
    """A linear axis; ``tight`` keeps the data's own ends instead of rounding out to a tick."""
    low, high = min(values), max(values)
    if low == high:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    step = nice_step(high - low)
    first = math.ceil(low / step - 1e-9) if tight else math.floor(low / step + 1e-9)
    last = math.floor(high / step + 1e-9) if tight else math.ceil(high / step - 1e-9)
    if not tight:
        low, high = first * step, last * step
    ticks = tuple((i * step, format_number(i * step, step)) for i in range(first, last + 1))
    return Axis(low, high, pixel_low, pixel_high, False, ticks)


def _decade_label(exponent: int) -> str:
    if -2 <= exponent <= 3:
        return format_number(10.0**exponent)
    return f"1e{exponent}".replace("-", "\u2212")


def log_axis(values: Sequence[float], pixel_low: float, pixel_high: float) -> Axis:
    low_exp = math.floor(math.log10(min(values)) + 1e-9)
    high_exp = math.ceil(math.log10(max(values)) - 1e-9)
    if high_exp == low_exp:
        high_exp += 1
    decades = high_exp - low_exp
    ticks: list[tuple[float, str]] = []
    if decades <= 2:  # few decades: also tick 2x and 5x
        for exponent in range(low_exp, high_exp + 1):
            for multiple in (1, 2, 5):
                value = multiple * 10.0**exponent
                if value <= 10.0**high_exp * 1.0000001:
                    label = _decade_label(exponent) if multiple == 1 else format_number(value)
                    ticks.append((value, label))
    else:
        stride = max(1, math.ceil(decades / 8))
        for exponent in range(low_exp, high_exp + 1, stride):
            ticks.append((10.0**exponent, _decade_label(exponent)))
    return Axis(10.0**low_exp, 10.0**high_exp, pixel_low, pixel_high, True, tuple(ticks))


# ---------------------------------------------------------------- legend


def _legend(
    items: list[tuple[str, str]], left: float, top: float, width: float
) -> tuple[str, float]:
    """Legend rows of (css class, name) starting at ``top``; returns (svg, height used)."""
    parts, x, y, row_height = [], left, top + 14, 20.0
    for css_class, name in items:
        item_width = 30 + text_width(name, 12) + 18
        if x > left and x + item_width > left + width:
            x, y = left, y + row_height
        parts.append(
            f'<line class="legend-swatch {css_class}" x1="{x:.1f}" y1="{y - 4:.1f}" '
            f'x2="{x + 24:.1f}" y2="{y - 4:.1f}"/>'
            f'<text class="legend-label" x="{x + 30:.1f}" y="{y:.1f}">{escape(name)}</text>'
        )
        x += item_width
    return "".join(parts), (y - top) + 8


# ---------------------------------------------------------------- line charts


def _finite_points(xs, ys, log_x: bool, log_y: bool) -> list[tuple[float, float] | None]:
    """Points, with ``None`` where the line must break (missing or not drawable on a log axis)."""
    points: list[tuple[float, float] | None] = []
    for x, y in zip(xs, ys, strict=True):
        x, y = float(x), float(y)
        ok = (
            math.isfinite(x)
            and math.isfinite(y)
            and not (log_x and x <= 0)
            and not (log_y and y <= 0)
        )
        points.append((x, y) if ok else None)
    return points


def render_line_chart(chart: LineChart, lang: Lang, element_id: str) -> str:
    """The chart as an ``<svg>`` element (a string of markup)."""
    width, plot_height = 640.0, 300.0
    left, right, top = 72.0, 20.0, 16.0
    all_points = [_finite_points(s.x, s.y, chart.log_x, chart.log_y) for s in chart.series]
    xs = [p[0] for pts in all_points for p in pts if p]
    ys = [p[1] for pts in all_points for p in pts if p]
    title = chart.title.get(lang)
    if not xs:
        return (
            f'<svg class="chart" viewBox="0 0 {width:.0f} 60" role="img" '
            f'aria-label="{_attr(title)}"><text x="20" y="35">{escape(title)}: —</text></svg>'
        )
    if chart.log_x:
        x_axis = log_axis(xs, left, width - right)
    else:
        x_axis = linear_axis(xs, left, width - right, tight=True)
    y_axis = (log_axis if chart.log_y else linear_axis)(ys, top + plot_height, top)
    bottom = top + plot_height
    parts: list[str] = []

    for value, label in y_axis.ticks:
        py = y_axis.to_pixel(value)
        parts.append(
            f'<line class="grid" x1="{left}" y1="{py:.1f}" x2="{width - right}" y2="{py:.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{py + 4:.1f}" text-anchor="end">'
            f"{escape(label)}</text>"
        )
    for value, label in x_axis.ticks:
        px = x_axis.to_pixel(value)
        parts.append(
            f'<line class="tick-mark" x1="{px:.1f}" y1="{bottom}" x2="{px:.1f}" y2="{bottom + 5}"/>'
            f'<text class="tick" x="{px:.1f}" y="{bottom + 18}" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
    parts.append(
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}"/>'
        f'<line class="axis" x1="{left}" y1="{bottom}" x2="{width - right}" y2="{bottom}"/>'
        f'<text class="axis-label" x="{(left + width - right) / 2:.1f}" y="{bottom + 38}" '
        f'text-anchor="middle">{escape(chart.x_label.get(lang))}</text>'
        f'<text class="axis-label" transform="translate(16 {(top + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{escape(chart.y_label.get(lang))}</text>'
    )

    for index, points in enumerate(all_points):
        css = f"s{index % PALETTE_SIZE}"
        commands, pen_down = [], False
        for point in points:
            if point is None:
                pen_down = False
                continue
            px, py = x_axis.to_pixel(point[0]), y_axis.to_pixel(point[1])
            commands.append(f"{'L' if pen_down else 'M'}{px:.1f} {py:.1f}")
            pen_down = True
        parts.append(f'<path class="series {css}" d="{" ".join(commands)}"/>')
        drawn = [p for p in points if p]
        if len(drawn) <= 40:
            parts.extend(
                f'<circle class="marker {css}" cx="{x_axis.to_pixel(x):.1f}" '
                f'cy="{y_axis.to_pixel(y):.1f}" r="3"/>'
                for x, y in drawn
            )

    legend, legend_height = _legend(
        [(f"s{i % PALETTE_SIZE}", s.name.get(lang)) for i, s in enumerate(chart.series)],
        left,
        bottom + 48,
        width - left - right,
    )
    height = bottom + 48 + legend_height
    description = "; ".join(
        f"{s.name.get(lang)}: {sum(1 for p in pts if p)} {POINTS.get(lang)}"
        for s, pts in zip(chart.series, all_points, strict=True)
    )
    return (
        f'<svg class="chart" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-labelledby="{element_id}-t {element_id}-d" id="{element_id}">'
        f'<title id="{element_id}-t">{escape(title)}</title>'
        f'<desc id="{element_id}-d">{escape(description)}</desc>'
        f"{''.join(parts)}{legend}</svg>"
    )


# ---------------------------------------------------------------- graph diagrams

NODE_HEIGHT = 44.0
ROW_GAP = 56.0
NODE_GAP = 24.0
MARGIN = 16.0


def _layers(node_ids: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Row of each node: the longest path reaching it (back edges of cycles ignored)."""
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
    layer = {n: 0 for n in node_ids}
    for node in reversed(order):  # reverse post-order is a topological order of the forward edges
        for child in children[node]:
            if (node, child) in forward:
                layer[child] = max(layer[child], layer[node] + 1)
    return layer


def _order_rows(
    rows: list[list[str]], up: dict[str, list[str]], down: dict[str, list[str]]
) -> None:
    """Barycentre sweeps: sort each row by the mean position of its neighbours."""
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
            rows[r].sort(key=keys.__getitem__)


def pack_in_order(wanted: list[float], distances: list[float]) -> list[float]:
    """Positions closest to ``wanted`` (least squares) that keep the order and spacing.

    Position ``i + 1`` must be at least ``distances[i]`` right of position ``i``.
    Subtracting each node's minimal offset turns this into a monotone regression,
    solved by pooling adjacent violators: neighbouring nodes that want to overlap
    move as one block, placed at the mean of what its members want.
    """
    offsets = [0.0]
    for distance in distances:
        offsets.append(offsets[-1] + distance)
    blocks: list[list[float]] = []  # [sum of targets, count]
    for target in (w - o for w, o in zip(wanted, offsets, strict=True)):
        blocks.append([target, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    positions: list[float] = []
    for total, count in blocks:
        positions.extend([total / count] * int(count))
    return [p + o for p, o in zip(positions, offsets, strict=True)]


def render_graph(diagram: GraphDiagram, lang: Lang, element_id: str) -> str:
    """The graph as an ``<svg>`` element, laid out top to bottom."""
    nodes = {n.id: n for n in diagram.nodes}
    if len(nodes) != len(diagram.nodes):
        raise ValueError(f"graph {diagram.title.en!r}: node ids must be unique")
    for source, target, _ in diagram.edges:
        if source not in nodes or target not in nodes:
            raise ValueError(
                f"graph {diagram.title.en!r}: edge {source}->{target} names a missing node"
            )
    ids = [n.id for n in diagram.nodes]
    plain_edges = [(s, t) for s, t, _ in diagram.edges if s != t]
    layer = _layers(ids, plain_edges)

    # Split edges that skip rows into chains through helper points.
    up: dict[str, list[str]] = {n: [] for n in ids}
    down: dict[str, list[str]] = {n: [] for n in ids}
    chains: list[tuple[list[str], str]] = []
    for index, (source, target, label) in enumerate(diagram.edges):
        if source == target:
            continue
        top_node, bottom_node = (
            (source, target) if layer[source] < layer[target] else (target, source)
        )
        chain = [top_node]
        for row in range(layer[top_node] + 1, layer[bottom_node]):
            helper = f"\0{index}:{row}"
            layer[helper] = row
            up[helper], down[helper] = [], []
            chain.append(helper)
        chain.append(bottom_node)
        for a, b in zip(chain, chain[1:], strict=False):
            down[a].append(b)
            up[b].append(a)
        chains.append((chain if chain[0] == source else chain[::-1], label))

    rows: list[list[str]] = [[] for _ in range(max(layer.values()) + 1)]
    for node in [*ids, *(h for h in layer if h not in nodes)]:
        rows[layer[node]].append(node)
    _order_rows(rows, up, down)

    def node_width(node: str) -> float:
        if node not in nodes:
            return 0.0
        n = nodes[node]
        return max(text_width(n.label, 13), text_width(n.detail, 11), 40.0) + 20

    def gap_after(node: str) -> float:
        return NODE_GAP if node in nodes else 8.0

    # Start with each row packed from the left, then let rows pull towards their
    # neighbours: down the graph each node wants to sit over its parents, up the
    # graph over its children, always keeping the row's order and spacing.
    x: dict[str, float] = {}
    for row in rows:
        cursor = 0.0
        for node in row:
            x[node] = cursor + node_width(node) / 2
            cursor += node_width(node) + gap_after(node)
    for sweep in range(4):
        neighbours = up if sweep % 2 == 0 else down
        for row in rows if sweep % 2 == 0 else reversed(rows):
            wanted = []
            for node in row:
                linked = [x[m] for m in neighbours[node]]
                wanted.append(sum(linked) / len(linked) if linked else x[node])
            distances = [
                node_width(a) / 2 + gap_after(a) + node_width(b) / 2
                for a, b in zip(row, row[1:], strict=False)
            ]
            for node, position in zip(row, pack_in_order(wanted, distances), strict=True):
                x[node] = position
    shift = MARGIN - min(x[n] - node_width(n) / 2 for n in x)
    for node in x:
        x[node] += shift
    width = max(x[n] + node_width(n) / 2 for n in x) + MARGIN

    def y_of(node: str) -> float:
        return MARGIN + layer[node] * (NODE_HEIGHT + ROW_GAP)

    groups = sorted({n.group for n in diagram.nodes if n.group})
    group_class = {g: f"g{i % PALETTE_SIZE}" for i, g in enumerate(groups)}
    parts: list[str] = [
        f'<defs><marker id="{element_id}-arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path class="arrowhead" d="M0 0 L10 5 L0 10 z"/></marker></defs>'
    ]
    for chain, label in chains:
        points = []
        for position, node in enumerate(chain):
            top_y = y_of(node)
            if node not in nodes:
                points.append((x[node], top_y + NODE_HEIGHT / 2))
            elif position == 0:
                below = layer[chain[1]] > layer[node]
                points.append((x[node], top_y + (NODE_HEIGHT if below else 0)))
            else:
                above = layer[chain[position - 1]] < layer[node]
                points.append((x[node], top_y + (0 if above else NODE_HEIGHT)))
        commands = [f"M{points[0][0]:.1f} {points[0][1]:.1f}"]
        for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
            middle = (y0 + y1) / 2
            commands.append(f"C{x0:.1f} {middle:.1f} {x1:.1f} {middle:.1f} {x1:.1f} {y1:.1f}")
        parts.append(
            f'<path class="edge" d="{" ".join(commands)}" marker-end="url(#{element_id}-arrow)"/>'
        )
        if label:
            # Near the head of the first segment: edges that cross mid-way keep their
            # labels apart, and each label sits by the node it feeds.
            (x0, y0), (x1, y1) = points[0], points[1]
            label_x, label_y = x0 + 0.72 * (x1 - x0), y0 + 0.72 * (y1 - y0)
            parts.append(
                f'<text class="edge-label" x="{label_x:.1f}" y="{label_y:.1f}" '
                f'text-anchor="middle">{escape(label)}</text>'
            )
    for node_id, node in nodes.items():
        w = node_width(node_id)
        left, top = x[node_id] - w / 2, y_of(node_id)
        label_y = top + (18 if node.detail else 27)
        parts.append(
            f'<g class="node {group_class.get(node.group, "")}">'
            f'<rect x="{left:.1f}" y="{top:.1f}" width="{w:.1f}" height="{NODE_HEIGHT}" rx="6"/>'
            f'<text class="node-label" x="{x[node_id]:.1f}" y="{label_y:.1f}" '
            f'text-anchor="middle">{escape(node.label)}</text>'
        )
        if node.detail:
            parts.append(
                f'<text class="node-detail" x="{x[node_id]:.1f}" y="{top + 34:.1f}" '
                f'text-anchor="middle">{escape(node.detail)}</text>'
            )
        parts.append("</g>")

    body_height = MARGIN + len(rows) * (NODE_HEIGHT + ROW_GAP) - ROW_GAP
    legend, legend_height = "", 0.0
    if groups:
        legend, legend_height = _legend(
            [(group_class[g], g) for g in groups], MARGIN, body_height, max(width - 2 * MARGIN, 200)
        )
    height = body_height + legend_height + MARGIN
    title = diagram.title.get(lang)
    description = NODES_AND_EDGES.get(lang).format(nodes=len(nodes), edges=len(diagram.edges))
    return (
        f'<svg class="graph" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'role="img" aria-labelledby="{element_id}-t {element_id}-d" id="{element_id}">'
        f'<title id="{element_id}-t">{escape(title)}</title>'
        f'<desc id="{element_id}-d">{escape(description)}</desc>{"".join(parts)}{legend}</svg>'
    )
