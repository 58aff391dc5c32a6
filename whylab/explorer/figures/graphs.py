"""Drawing graph diagrams as inline SVG, for wide screens and for phones.

Scaling a diagram down to a phone's width would take its 11 px text below 11 px,
so a diagram is never drawn below scale 1 (a screen narrower than it scrolls it in
its own box). Instead a diagram wider than :data:`NARROW_GRAPH` allows (340 px: a
390 px phone gives a figure 348) is drawn a second time, laid out for that width
from the same diagram: node text wrapped over lines, each box as tall as its
lines; the columns of a left-to-right diagram closed up to what the boxes leave;
and a left-to-right network whose edges join neighbouring columns (the butterfly)
folded, when wrapping is not enough, into strips of columns stacked one below the
other, each strip starting with the column the one before ended with
(:func:`fold_layers`). :func:`render_graph_figure` sends both drawings, with
distinct ids; the stylesheet shows the narrow one up to 40rem and hides the other
with ``display: none`` (so it is out of the accessibility tree), and the page
draws one data table for both. One drawing for both screens was the other choice;
it would cost desktops their one-line boxes and the butterfly's single row of
stages, so a diagram that fits a phone as it is drawn goes out once and the
others twice.
"""

from __future__ import annotations

from dataclasses import replace
from html import escape

from whylab.explorer.experiment import (
    GraphDiagram,
    Lang,
    T,
)
from whylab.explorer.figures.graph_labels import LabelPlacer
from whylab.explorer.figures.graph_layout import (
    GRAPH_MIN_SCALE,
    LEGEND_GAP,
    LEGEND_MIN_WIDTH,
    MIN_WRAP_WIDTH,
    NARROW_GRAPH,
    WIDE_GRAPH,
    GraphLayout,
    GraphSize,
    _path_data,
    edge_curves,
    layout_graph,
)
from whylab.explorer.figures.palette import group_classes
from whylab.explorer.figures.pieces import draw_legend
from whylab.explorer.figures.text import text_lines

NODES_AND_EDGES = T("{nodes} nodes, {edges} edges", "{nodes} 个节点，{edges} 条边")


Band = tuple[GraphDiagram, GraphLayout]  # one strip of a drawing: its part of the graph, laid out
BAND_GAP = 12.0  # between the strips of a folded drawing


def _draw_band(
    diagram: GraphDiagram, layout: GraphLayout, element_id: str, group_class: dict[str, str]
) -> tuple[str, float, float]:
    """Edges, edge labels and boxes of one laid-out graph, and how far right and down
    they reach."""
    nodes = {n.id: n for n in diagram.nodes}
    parts: list[str] = [
        f'<defs><marker id="{element_id}-arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path class="arrowhead" d="M0 0 L10 5 L0 10 z"/></marker></defs>'
    ]
    right, bottom = 0.0, 0.0
    edges = [edge_curves(layout, index) for index in range(len(layout.chains))]
    for curves in edges:
        for curve in curves:
            right = max(right, *(x for x, _ in curve))
            bottom = max(bottom, *(y for _, y in curve))
        parts.append(
            f'<path class="edge" d="{_path_data(curves)}" marker-end="url(#{element_id}-arrow)"/>'
        )
    # Labels after every edge, so their background boxes cover the lines beneath.
    placer = LabelPlacer([layout.box(n) for n in nodes], edges)
    for index, ((_, label), curves) in enumerate(zip(layout.chains, edges, strict=True)):
        if not label:
            continue
        left, top, width, height = placer.place(index, curves, label)
        right, bottom = max(right, left + width), max(bottom, top + height)
        parts.append(
            f'<g class="edge-label"><rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" '
            f'height="{height:.1f}" rx="3"/><text x="{left + width / 2:.1f}" '
            f'y="{top + height - 4:.1f}" text-anchor="middle">{escape(label)}</text></g>'
        )
    for node_id, node in nodes.items():
        left, top, width, height = layout.box(node_id)
        right, bottom = max(right, left + width), max(bottom, top + height)
        centre = left + width / 2
        text = layout.text[node_id]
        parts.append(
            f'<g class="node {group_class.get(node.group, "")}">'
            f'<rect x="{left:.1f}" y="{top:.1f}" width="{width:.1f}" height="{height}" rx="6"/>'
        )
        label_ys, detail_ys = text.baselines(top)
        parts.append(text_lines("node-label", centre, text.label, label_ys, text.spaces[0]))
        if text.detail:
            css = "node-detail words" if text.detail_is_words else "node-detail"
            parts.append(text_lines(css, centre, text.detail, detail_ys, text.spaces[1]))
        parts.append("</g>")
    return "".join(parts), right, bottom


def _draw_graph(
    diagram: GraphDiagram, bands: list[Band], element_id: str
) -> tuple[str, float, float]:
    """The inside of the ``<svg>`` for ``diagram`` drawn as ``bands`` (one, or the strips
    of a folded drawing, stacked), with one legend; and the width and height it needs."""
    margin = bands[0][1].size.margin
    groups = sorted({n.group for n in diagram.nodes if n.group})
    # from the whole graph: one colour per group
    group_class = group_classes(groups, diagram.group_colours)
    parts, width, top = [], 0.0, 0.0
    for index, (part, layout) in enumerate(bands):
        band_id = element_id if len(bands) == 1 else f"{element_id}-{index}"
        markup, right, bottom = _draw_band(part, layout, band_id, group_class)
        parts.append(
            markup if index == 0 else f'<g transform="translate(0 {top:.1f})">{markup}</g>'
        )
        width = max(width, right + margin)
        top += bottom + BAND_GAP
    bottom = top - BAND_GAP
    legend, legend_height = "", 0.0
    if groups:
        legend_width = max(width - 2 * margin, LEGEND_MIN_WIDTH)
        width = max(width, legend_width + 2 * margin)
        legend, legend_height = draw_legend(
            [(group_class[g], g) for g in groups], margin, bottom + LEGEND_GAP, legend_width
        )
        legend_height += LEGEND_GAP
    return "".join(parts) + legend, width, bottom + legend_height + margin


def fold_layers(diagram: GraphDiagram, count: int) -> list[GraphDiagram] | None:
    """``diagram`` cut into ``count`` strips of consecutive layers, to be drawn one
    below the other, each strip starting with the layer the one before ended with.

    Only a left-to-right diagram whose every node has a pinned layer and whose every
    edge joins neighbouring layers folds (an FFT butterfly): each edge then lies in
    exactly one strip. None when it does not, or has fewer than ``count`` gaps between
    layers.
    """
    layer = {n.id: n.layer for n in diagram.nodes}
    last = max((n.layer or 0) for n in diagram.nodes)
    if (
        diagram.direction != "LR"
        or None in layer.values()
        or count > last
        or any(abs(layer[t] - layer[s]) != 1 for s, t, _ in diagram.edges)  # type: ignore[operator]
    ):
        return None
    cuts = [round(i * last / count) for i in range(count + 1)]
    strips = []
    for low, high in zip(cuts, cuts[1:], strict=False):
        kept = [n for n in diagram.nodes if low <= (n.layer or 0) <= high]
        ids = {n.id for n in kept}
        strips.append(
            GraphDiagram(
                diagram.title,
                [replace(n, layer=(n.layer or 0) - low) for n in kept],
                [e for e in diagram.edges if e[0] in ids and e[1] in ids],
                direction="LR",
                group_colours=diagram.group_colours,
            )
        )
    return strips


MAX_FOLDS = 3


def narrow_layout(
    diagram: GraphDiagram, lang: Lang, size: GraphSize = NARROW_GRAPH
) -> tuple[list[Band], float]:
    """``diagram`` laid out for a drawing at most ``size.max_width`` wide.

    Node text is wrapped to ever narrower lines (each step 0.85 of the last, down
    to :data:`MIN_WRAP_WIDTH`) until the whole drawing, edge labels and legend
    included, fits. When no wrapping does, the same is tried on the diagram
    folded into 2 or 3 strips (:func:`fold_layers`), then with its layers running
    the other way. Returns the first drawing that fits, else the narrowest one
    found, with the width it needs.
    """
    assert size.max_width is not None
    other = "TB" if diagram.direction == "LR" else "LR"
    tries: list[tuple[list[GraphDiagram], str]] = [([diagram], diagram.direction)]
    for count in range(2, MAX_FOLDS + 1):
        strips = fold_layers(diagram, count)
        if strips:
            tries.append((strips, diagram.direction))
    tries.append(([diagram], other))
    best: tuple[float, list[Band]] | None = None
    for parts, direction in tries:
        wrap = size.max_width - 2 * size.margin - 2 * size.node_padding
        while True:
            bands = [(part, layout_graph(part, lang, size, wrap, direction)) for part in parts]
            boxes = max(
                left + width
                for _, layout in bands
                for left, _, width, _ in map(layout.box, layout.box_width)
            )
            if boxes + size.margin > size.max_width and wrap > MIN_WRAP_WIDTH:
                wrap = max(MIN_WRAP_WIDTH, wrap * 0.85)
                continue  # the boxes alone are too wide: no need to draw the edges
            width = _draw_graph(diagram, bands, "fit")[1]
            if width <= size.max_width:
                return bands, width
            if best is None or width < best[0]:
                best = (width, bands)
            if wrap <= MIN_WRAP_WIDTH:
                break
            wrap = max(MIN_WRAP_WIDTH, wrap * 0.85)
    assert best is not None
    return best[1], best[0]


def render_graph(
    diagram: GraphDiagram, lang: Lang, element_id: str, size: GraphSize = WIDE_GRAPH
) -> str:
    """The graph as one ``<svg>`` element, laid out for ``size``."""
    if size.max_width is None:
        bands = [(diagram, layout_graph(diagram, lang, size))]
    else:
        bands = narrow_layout(diagram, lang, size)[0]
    return _graph_svg(diagram, bands, lang, element_id, size.name)


def _graph_svg(
    diagram: GraphDiagram, bands: list[Band], lang: Lang, element_id: str, css: str
) -> str:
    inside, width, height = _draw_graph(diagram, bands, element_id)
    title = diagram.title.get(lang)
    description = NODES_AND_EDGES.get(lang).format(
        nodes=len(diagram.nodes), edges=len(diagram.edges)
    )
    classes = " ".join(["graph", *css.split()])
    # The page never draws a diagram below the scale at which its labels stay readable
    # (GRAPH_MIN_SCALE): a screen too narrow for it scrolls it in its own box.
    return (
        f'<svg class="{classes}" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'style="min-width: {width * GRAPH_MIN_SCALE:.0f}px" '
        f'role="img" aria-labelledby="{element_id}-t {element_id}-d" id="{element_id}">'
        f'<title id="{element_id}-t">{escape(title)}</title>'
        f'<desc id="{element_id}-d">{escape(description)}</desc>{inside}</svg>'
    )


def render_graph_figure(diagram: GraphDiagram, lang: Lang, element_id: str) -> str:
    """The diagram as a page shows it: the wide drawing, and beside it a narrow one for
    phones when the wide one is wider than :data:`NARROW_GRAPH` allows (the stylesheet
    shows one of the two). A diagram that fits a phone as drawn goes out once."""
    wide = [(diagram, layout_graph(diagram, lang, WIDE_GRAPH))]
    wide_width = _draw_graph(diagram, wide, element_id)[1]
    assert NARROW_GRAPH.max_width is not None
    if wide_width <= NARROW_GRAPH.max_width:
        return _graph_svg(diagram, wide, lang, element_id, "")
    narrow = narrow_layout(diagram, lang, NARROW_GRAPH)[0]
    return _graph_svg(diagram, wide, lang, element_id, WIDE_GRAPH.name) + _graph_svg(
        diagram, narrow, lang, f"{element_id}-narrow", NARROW_GRAPH.name
    )
