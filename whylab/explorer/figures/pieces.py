"""The pieces line charts and graph diagrams share: the legend, the markers that tell
series apart without colour (a shape per colour slot, drawn at a thinned subset of a
series' points and in the legend), and packing labels or boxes in order along a line.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from html import escape

from whylab.explorer.figures.text import text_width

LEGEND_SWATCH = 24.0  # a legend's line sample: longer than a period of every dash (21 px at most)


def draw_legend(
    items: list[tuple[str, str]],
    left: float,
    top: float,
    width: float,
    font_size: float = 12,
    marker_only: Collection[str] = (),
) -> tuple[str, float]:
    """Legend rows of (css class, name) starting at ``top``; returns (svg, height used).

    A series' sample shows its dash pattern and, for the ``s0``..``s7`` classes of a
    line chart, its marker shape in the middle of the line; the classes in
    ``marker_only`` (series drawn as points) show the marker alone."""
    parts, x, y, row_height = [], left, top + 14, font_size + 8
    for css_class, name in items:
        item_width = LEGEND_SWATCH + 6 + text_width(name, font_size) + 18
        if x > left and x + item_width > left + width:
            x, y = left, y + row_height
        if css_class not in marker_only:
            parts.append(
                f'<line class="legend-swatch {css_class}" x1="{x:.1f}" y1="{y - 4:.1f}" '
                f'x2="{x + LEGEND_SWATCH:.1f}" y2="{y - 4:.1f}"/>'
            )
        if css_class in SERIES_CLASSES:
            centre = [(x + LEGEND_SWATCH / 2, y - 4)]
            parts.append(marker_path(css_class, centre, "legend-marker"))
        parts.append(
            f'<text class="legend-label" x="{x + LEGEND_SWATCH + 6:.1f}" y="{y:.1f}">'
            f"{escape(name)}</text>"
        )
        x += item_width
    return "".join(parts), (y - top) + 8


# Non-colour cues (WCAG 1.4.1): two lines of one tier are less than 3:1 apart, so every
# colour slot also has its own dash pattern (explorer.css, ``svg .s0``..``svg .s7``)
# and its own marker shape, drawn at a thinned subset of the series' points and in
# the legend; and each series of a chart of three or more is named at its line's end.
# Shapes are path data around the point (0, 0), about 8 px across; a cross and a
# plus are drawn by their stroke alone.
MARKER_SHAPES: dict[str, tuple[str, str]] = {
    "s0": ("circle", "m-3.5 0a3.5 3.5 0 1 0 7 0a3.5 3.5 0 1 0-7 0z"),
    "s1": ("square", "m-3.2-3.2h6.4v6.4h-6.4z"),
    "s2": ("triangle", "m0-4.2l4 7h-8z"),
    "s3": ("diamond", "m0-4.4l4.4 4.4-4.4 4.4-4.4-4.4z"),
    "s4": ("cross", "m-3.4-3.4l6.8 6.8m0-6.8l-6.8 6.8"),
    "s5": ("plus", "m-4.2 0h8.4m-4.2-4.2v8.4"),
    "s6": ("triangle-down", "m0 4.2l4-7h-8z"),
    "s7": ("star", "m0-4.6l1.2 3 3.2.2-2.5 2 .8 3.1-2.7-1.7-2.7 1.7.8-3.1-2.5-2 3.2-.2z"),
}
SERIES_CLASSES = frozenset(MARKER_SHAPES)
MARKERS_AT_EVERY_POINT = 12  # a series of this many points or fewer is marked at each
MARKER_SPACING_PX = 50.0  # otherwise: one marker about this far along the drawn line ...
MAX_MARKERS = 10  # ... and no more than this many a series (a wavy line is long)


def marker_path(css: str, centres: Sequence[tuple[float, float]], kind: str = "marker") -> str:
    """One ``<path>`` holding the marker shape of ``css`` at each centre (pixels)."""
    shape = MARKER_SHAPES[css][1]
    data = "".join(f"M{x:.1f} {y:.1f}{shape}" for x, y in centres)
    return f'<path class="{kind} {css}" d="{data}"/>'


def marker_points(pixels: Sequence[tuple[float, float]], phase: float) -> list[tuple[float, float]]:
    """Where one series gets its markers: every point of a short series; for a longer
    one, the first point past each multiple of the spacing along the drawn line,
    starting ``phase`` (0 to 1) of a spacing in, so that the markers of series drawn
    on top of each other fall in different places."""
    if len(pixels) <= MARKERS_AT_EVERY_POINT:
        return list(pixels)
    steps = [math.dist(a, b) for a, b in itertools.pairwise(pixels)]
    spacing = max(MARKER_SPACING_PX, sum(steps) / MAX_MARKERS)
    chosen, travelled, target = [], 0.0, phase * spacing
    for point, step in zip(pixels, [0.0, *steps], strict=True):
        travelled += step
        if travelled >= target:
            chosen.append(point)
            target = travelled + spacing
    return chosen


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
