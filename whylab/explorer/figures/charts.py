"""Line charts (:class:`~whylab.explorer.experiment.LineChart`) as inline SVG.

Axes with "nice" ticks (or equal scales on both, for shapes in the plane), one path
per series (points the eye cannot tell from the line left out) with markers at some
of its points, or markers alone at every point of a series of discrete samples; each
series of a chart of three or more named in a column right of the plot, with a leader
from its line's end where the label had to move; a legend; and the points the
pointer and the arrow keys read out. Series differ by colour, dash pattern and marker
shape, and carry their names beside them, so the chart reads without colour. Every
SVG carries ``role="img"``, a title and a short description; the page adds the full
data table next to it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from html import escape

from whylab.explorer.experiment import (
    Lang,
    LineChart,
    T,
)
from whylab.explorer.figures.axes import Axis, linear_axis, log_axis
from whylab.explorer.figures.palette import series_classes
from whylab.explorer.figures.pieces import draw_legend, marker_path, marker_points, pack_in_order
from whylab.explorer.figures.text import attr, line_spaces, text_width, wrap_text

POINTS = T("points", "个点")
MAX_READOUT_POINTS = 100  # per series: the points the pointer and arrow keys can read out


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


@dataclass(frozen=True)
class ChartSize:
    """The drawing's own size in pixels, its margins and its text sizes (see explorer.css)."""

    name: str
    width: float
    plot_height: float
    left: float
    right: float
    legend_font: float
    x_ticks: int


# The page shows WIDE on screens wider than a phone and COMPACT on phones, where it
# is drawn at about 0.9 of its size, so its 13 px text stays above 11 px.
WIDE = ChartSize("wide", 640.0, 300.0, 72.0, 20.0, 12.0, 5)
COMPACT = ChartSize("compact", 380.0, 230.0, 60.0, 14.0, 13.0, 4)


LABEL_GAP = 6.0  # between the plot's right edge and the label column
LABEL_SPACING = 2.0  # between two labels, above and below
# A label wraps to lines no wider than this share of the chart's width (a long name
# would otherwise take the plot's room); a word longer than that keeps its line.
LABEL_WIDTH_SHARE = {"wide": 0.24, "compact": 0.28}
LEADER_MIN_SHIFT = 3.0  # a label moved this far from its line's end gets a leader line
# When a label is moved, the label column stands this much further right, so that the
# leaders of labels moved apart from one crowded end fan out instead of running on top
# of each other.
LEADER_ROOM = 14.0
# Series are named at their lines' ends from this many on. Two series differ by a colour
# pair >= 3:1 as well as dash and marker, and the legend names them; from three on no
# palette can keep every pair 3:1 apart, so each line carries its own name. The label
# column costs the plot about 100 px, too much to pay where the legend suffices.
DIRECT_LABELS_FROM = 3


@dataclass
class DirectLabel:
    """A series' name in the label column, wrapped, moved up or down as needed and tied
    to its series' end by a leader where the two stand apart."""

    series: int
    css: str
    lines: list[str]
    spaces: tuple[str, ...]  # after each line, the space it broke at (see line_spaces)
    width: float
    anchor: tuple[float, float] | None = None  # where its leader starts, in pixels
    top: float = 0.0


def direct_labels(
    chart: LineChart, lang: Lang, classes: list[str], size: ChartSize, room: float
) -> list[DirectLabel]:
    """The labels of a chart's series (none below DIRECT_LABELS_FROM), not yet placed: wrapped
    to LABEL_WIDTH_SHARE of the drawing's width, or wider where the stack of wrapped
    labels would be taller than ``room`` (it would then run into the axis below)."""
    if len(chart.series) < DIRECT_LABELS_FROM:
        return []
    shares = (LABEL_WIDTH_SHARE[size.name], 1.6 * LABEL_WIDTH_SHARE[size.name], 1.0)
    measure = partial(text_width, font_size=size.legend_font)
    for share in shares:
        found = []
        for index, (series, css) in enumerate(zip(chart.series, classes, strict=True)):
            name = series.name.get(lang)
            lines = wrap_text(name, share * size.width, measure)
            width = max(map(measure, lines))
            found.append(DirectLabel(index, css, lines, line_spaces(name, lines), width))
        rows = sum(len(label.lines) for label in found)
        if rows * label_line_height(size) + LABEL_SPACING * (len(found) - 1) <= room:
            break
    return found


def label_line_height(size: ChartSize) -> float:
    return size.legend_font + 2


def place_labels(labels: list[DirectLabel], line_height: float, low: float, high: float) -> None:
    """Set each label's ``top``: centred on its anchor's height where it can be, no two
    overlapping (the least total movement that keeps them in their anchors' order), and
    inside ``low``..``high`` as far as the stack fits there: pushed up from ``high``,
    then down from ``low``."""
    placed = sorted((label for label in labels if label.anchor), key=lambda lb: lb.anchor[1])
    if not placed:
        return
    heights = [len(label.lines) * line_height for label in placed]
    wanted = [label.anchor[1] - h / 2 for label, h in zip(placed, heights, strict=True)]
    tops = pack_in_order(wanted, [h + LABEL_SPACING for h in heights[:-1]])
    limit = high
    for index in reversed(range(len(tops))):
        tops[index] = min(tops[index], limit - heights[index])
        limit = tops[index] - LABEL_SPACING
    limit = low
    for index, height in enumerate(heights):
        tops[index] = max(tops[index], limit)
        limit = tops[index] + height + LABEL_SPACING
    for label, top in zip(placed, tops, strict=True):
        label.top = top


def _label_markup(label: DirectLabel, x: float, line_height: float, font_size: float) -> str:
    """A label at ``x`` (the label column), with a leader from its anchor when it was moved
    up or down or its line ends short of the column."""
    assert label.anchor is not None
    ax, ay = label.anchor
    parts = []
    centre = label.top + len(label.lines) * line_height / 2
    if abs(centre - ay) > LEADER_MIN_SHIFT or x - ax > LABEL_GAP + LEADER_MIN_SHIFT:
        parts.append(
            f'<line class="label-leader {label.css}" x1="{ax + 2:.1f}" y1="{ay:.1f}" '
            f'x2="{x - 2:.1f}" y2="{centre:.1f}"/>'
        )
    baseline = label.top + (line_height + font_size * 0.7) / 2
    # between the lines the space each broke at, so the label reads as the series' name
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{baseline + row * line_height:.1f}">{escape(line)}</tspan>{space}'
        for row, (line, space) in enumerate(zip(label.lines, (*label.spaces[:-1], ""), strict=True))
    )
    parts.append(f'<text class="direct-label" data-series="{label.series}">{spans}</text>')
    return "".join(parts)


def render_line_chart(chart: LineChart, lang: Lang, element_id: str, size: ChartSize = WIDE) -> str:
    """The chart as an ``<svg>`` element (a string of markup) drawn at ``size``."""
    width, plot_height = size.width, size.plot_height
    left, top = size.left, 16.0
    bottom = top + plot_height
    classes = series_classes(chart)
    labels = direct_labels(chart, lang, classes, size, room=top + plot_height - 2)
    all_points = [_finite_points(s.x, s.y, chart.log_x, chart.log_y) for s in chart.series]
    xs = [p[0] for pts in all_points for p in pts if p]
    ys = [p[1] for pts in all_points for p in pts if p]
    title = chart.title.get(lang)
    if not xs:
        return (
            f'<svg class="chart {size.name}" viewBox="0 0 {width:.0f} 60" role="img" '
            f'aria-label="{attr(title)}"><text x="20" y="35">{escape(title)}: —</text></svg>'
        )
    y_axis = _y_axis(chart, ys, bottom, top)
    line_height = label_line_height(size)
    # Placed once on the full plot height to learn whether leaders need room (only the
    # heights matter: the x axis waits for the room the labels take), and again below,
    # once the axes are final (equal scales may make the plot shorter).
    _anchor_labels(labels, chart, all_points, lambda x: 0.0, y_axis)
    place_labels(labels, line_height, 2.0, bottom)
    moved = any(label.anchor and _moved(label, line_height) for label in labels)
    leader_room = LEADER_ROOM if moved else 0.0
    widest_label = max((label.width for label in labels), default=0.0)
    right = size.right
    if labels:
        right = max(size.right, LABEL_GAP + leader_room + widest_label + 4)
    if chart.log_x:
        x_axis = log_axis(xs, left, width - right)
    else:
        x_axis = linear_axis(xs, left, width - right, tight=True, target_ticks=size.x_ticks)
    if chart.equal_aspect:
        x_axis, y_axis = equal_scales(x_axis, y_axis)
        bottom = y_axis.pixel_low
    plot_right = x_axis.pixel_high
    parts: list[str] = []

    for value, label in y_axis.ticks:
        py = y_axis.to_pixel(value)
        parts.append(
            f'<line class="grid" x1="{left}" y1="{py:.1f}" x2="{plot_right:.1f}" y2="{py:.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{py + 4:.1f}" text-anchor="end">'
            f"{escape(label)}</text>"
        )
    for value, label in x_axis.ticks:
        px = x_axis.to_pixel(value)
        parts.append(
            f'<line class="tick-mark" x1="{px:.1f}" y1="{bottom:.1f}" x2="{px:.1f}" '
            f'y2="{bottom + 5:.1f}"/>'
            f'<text class="tick" x="{px:.1f}" y="{bottom + 18:.1f}" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
    parts.append(
        f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom:.1f}"/>'
        f'<line class="axis" x1="{left}" y1="{bottom:.1f}" x2="{plot_right:.1f}" '
        f'y2="{bottom:.1f}"/>'
        f'<text class="axis-label" x="{(left + plot_right) / 2:.1f}" y="{bottom + 38:.1f}" '
        f'text-anchor="middle">{escape(chart.x_label.get(lang))}</text>'
        f'<text class="axis-label" transform="translate(16 {(top + bottom) / 2:.1f}) '
        f'rotate(-90)" text-anchor="middle">{escape(chart.y_label.get(lang))}</text>'
    )

    for index, (css, points, series) in enumerate(
        zip(classes, all_points, chart.series, strict=True)
    ):
        pixels = [(x_axis.to_pixel(x), y_axis.to_pixel(y)) for x, y in (p for p in points if p)]
        if series.draw == "points":
            parts.append(marker_path(css, pixels))
            continue
        parts.append(f'<path class="series {css}" d="{_series_path(points, x_axis, y_axis)}"/>')
        if pixels:
            phase = (index + 0.5) / len(chart.series)
            parts.append(marker_path(css, marker_points(pixels, phase)))

    _anchor_labels(labels, chart, all_points, x_axis.to_pixel, y_axis)
    place_labels(labels, line_height, 2.0, bottom)
    column = plot_right + LABEL_GAP + leader_room
    legend_top = bottom + 48
    for label in labels:
        if label.anchor:
            parts.append(_label_markup(label, column, line_height, size.legend_font))
            legend_top = max(legend_top, label.top + len(label.lines) * line_height + 12)
    legend, legend_height = draw_legend(
        [(css, s.name.get(lang)) for css, s in zip(classes, chart.series, strict=True)],
        left,
        legend_top,
        width - left - size.right,
        size.legend_font,
        marker_only={
            css for css, s in zip(classes, chart.series, strict=True) if s.draw == "points"
        },
    )
    height = legend_top + legend_height
    readout = _readout_points(chart, lang, all_points, x_axis, y_axis)
    description = "; ".join(
        f"{s.name.get(lang)}: {sum(1 for p in pts if p)} {POINTS.get(lang)}"
        for s, pts in zip(chart.series, all_points, strict=True)
    )
    return (
        f'<svg class="chart {size.name}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-labelledby="{element_id}-t {element_id}-d" id="{element_id}" tabindex="0" '
        f'data-points="{attr(readout)}">'
        f'<title id="{element_id}-t">{escape(title)}</title>'
        f'<desc id="{element_id}-d">{escape(description)}</desc>'
        f"{''.join(parts)}{legend}</svg>"
    )


def _y_axis(chart: LineChart, ys: list[float], bottom: float, top: float) -> Axis:
    if chart.log_y:
        return log_axis(ys, bottom, top)
    # With equal scales the y axis ends at the data, as the x axis does, so that the
    # shape fills the plot instead of a band rounded out to the next tick.
    return linear_axis(ys, bottom, top, tight=chart.equal_aspect)


def equal_scales(x_axis: Axis, y_axis: Axis) -> tuple[Axis, Axis]:
    """Both axes at the pixels per unit of the tighter one, so one unit of x is drawn as
    long as one unit of y: the x axis is shortened at its right end, the y axis at its
    bottom (the plot keeps its top and left corner, and the drawing below moves up)."""
    x_scale = (x_axis.pixel_high - x_axis.pixel_low) / (x_axis.high - x_axis.low)
    y_scale = (y_axis.pixel_low - y_axis.pixel_high) / (y_axis.high - y_axis.low)
    scale = min(x_scale, y_scale)
    return (
        replace(x_axis, pixel_high=x_axis.pixel_low + scale * (x_axis.high - x_axis.low)),
        replace(y_axis, pixel_low=y_axis.pixel_high + scale * (y_axis.high - y_axis.low)),
    )


def _anchor_labels(
    labels: list[DirectLabel],
    chart: LineChart,
    all_points,
    x_pixel: Callable[[float], float],
    y_axis: Axis,
) -> None:
    """Anchor each label, in pixels, at its line's last point; a series drawn as points
    has no line to end, so its label goes beside its rightmost point (the last of those
    as far right), where the leader to the label column is shortest."""
    for label in labels:
        drawn = [p for p in all_points[label.series] if p]
        if not drawn:
            continue
        if chart.series[label.series].draw == "points":
            _, (x, y) = max(enumerate(drawn), key=lambda item: (item[1][0], item[0]))
        else:
            x, y = drawn[-1]
        label.anchor = (x_pixel(x), y_axis.to_pixel(y))


def _moved(label: DirectLabel, line_height: float) -> bool:
    """Whether a placed label sits far enough from its anchor's height to need a leader."""
    assert label.anchor is not None
    return abs(label.top + len(label.lines) * line_height / 2 - label.anchor[1]) > LEADER_MIN_SHIFT


# A point of a series is left out of its drawn line when the line without it passes
# within this many pixels of it: at the drawing's own scale the eye cannot tell.
PATH_TOLERANCE_PX = 0.25


def _series_path(points, x_axis: Axis, y_axis: Axis) -> str:
    """SVG path data of one series: a run of ``M``/``L`` commands per unbroken stretch,
    each thinned to the points the drawing at this width can show."""
    runs: list[list[tuple[float, float]]] = [[]]
    for point in points:
        if point is None:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append((x_axis.to_pixel(point[0]), y_axis.to_pixel(point[1])))
    commands = []
    for run in runs:
        for index, (px, py) in enumerate(thin_polyline(run, PATH_TOLERANCE_PX)):
            commands.append(f"{'L' if index else 'M'}{px:.1f} {py:.1f}")
    return " ".join(commands)


def thin_polyline(points: list[tuple[float, float]], tolerance: float) -> list[tuple[float, float]]:
    """The points of a polyline that matter at ``tolerance`` (Ramer-Douglas-Peucker): every
    point left out lies within ``tolerance`` of the thinned line; the ends are kept."""
    if len(points) < 3:
        return list(points)
    keep = [False] * len(points)
    keep[0] = keep[-1] = True
    stack = [(0, len(points) - 1)]
    while stack:
        first, last = stack.pop()
        (x0, y0), (x1, y1) = points[first], points[last]
        dx, dy = x1 - x0, y1 - y0
        length_squared = dx * dx + dy * dy
        farthest, distance = -1, tolerance
        for index in range(first + 1, last):
            px, py = points[index]
            # Distance to the segment (not the whole line), so a spike past an end stays.
            t = ((px - x0) * dx + (py - y0) * dy) / length_squared if length_squared else 0.0
            t = min(1.0, max(0.0, t))
            gap = math.hypot(px - x0 - t * dx, py - y0 - t * dy)
            if gap > distance:
                farthest, distance = index, gap
        if farthest >= 0:
            keep[farthest] = True
            stack += [(first, farthest), (farthest, last)]
    return [point for point, kept in zip(points, keep, strict=True) if kept]


def _readout_points(chart: LineChart, lang: Lang, all_points, x_axis: Axis, y_axis: Axis) -> str:
    """JSON for the page script's value readout: the series and axis names once, then
    ``[px, py, series index, x, y]`` per drawn point (evenly thinned past
    MAX_READOUT_POINTS a series, so a long series does not weigh down the page)."""
    found = []
    for index, points in enumerate(all_points):
        drawn = [p for p in points if p]
        stride = max(1, math.ceil(len(drawn) / MAX_READOUT_POINTS))
        for x, y in drawn[::stride]:
            px, py = round(x_axis.to_pixel(x), 1), round(y_axis.to_pixel(y), 1)
            found.append([px, py, index, f"{x:.6g}", f"{y:.6g}"])
    data = {
        "series": [s.name.get(lang) for s in chart.series],
        "x": chart.x_label.get(lang),
        "y": chart.y_label.get(lang),
        "points": found,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
