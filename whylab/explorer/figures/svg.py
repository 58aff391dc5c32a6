"""Draw experiment figures as inline SVG on the server.

Two figure types exist (see :mod:`whylab.explorer.experiment`):

* :class:`LineChart` -- axes with "nice" ticks (1-2-5 steps, or decades on a
  log axis), one path per series with markers at some of its points, each
  series of a chart of three or more named at its line's end, a legend;
* :class:`GraphDiagram` -- a layered drawing of a directed graph, top to
  bottom or left to right: nodes get a layer by longest path from the sources,
  long edges pass through invisible routing points, layers are ordered by the
  barycentre heuristic to reduce crossings, and each node is centred on its
  parents where space allows. A node may pin its layer and its position in
  the layer (see :class:`~whylab.explorer.experiment.GraphNode`) when the
  order itself means something, as in an FFT butterfly.

Graphs on phones. Scaling a diagram down to a phone's width would take its
11 px text below 11 px, so a diagram is never drawn below scale 1 (a screen
narrower than it scrolls it in its own box). Instead a diagram wider than
:data:`NARROW_GRAPH` allows (340 px: a 390 px phone gives a figure 348) is
drawn a second time, laid out for that width from the same diagram: node
text wrapped over lines, at spaces first, then dots and brackets, then
underscores and CamelCase humps (:func:`wrap_text`), each box as tall as its
lines; the columns of a left-to-right diagram closed up to what the boxes
leave; and a left-to-right network whose edges join neighbouring columns (the
butterfly) folded, when wrapping is not enough, into strips of columns
stacked one below the other, each strip starting with the column the one
before ended with (:func:`fold_layers`). :func:`render_graph_figure` sends
both drawings, with distinct ids; the stylesheet shows the narrow one up to
40rem and hides the other with ``display: none`` (so it is out of the
accessibility tree), and the page draws one data table for both. One
drawing for both screens was the other choice; it would cost desktops their
one-line boxes and the butterfly's single row of stages, so a diagram that
fits a phone as it is drawn goes out once and the others twice.

Colours come from CSS classes (``s0``..``s7``, ``g0``..``g7``), so the page's
light and dark themes apply. Series also differ by dash pattern and marker
shape, and carry their names beside them, so the chart reads without colour.
Every SVG carries ``role="img"``, a title and a short description; the page
adds the full data table next to it.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from html import escape

from whylab.explorer.experiment import (
    GraphDiagram,
    GraphNode,
    Lang,
    LineChart,
    T,
    Text,
    in_language,
)

POINTS = T("points", "个点")
MAX_READOUT_POINTS = 100  # per series: the points the pointer and arrow keys can read out
NODES_AND_EDGES = T("{nodes} nodes, {edges} edges", "{nodes} 个节点，{edges} 条边")

PALETTE_SIZE = 8
BOLD_WIDTH_FACTOR = 1.1

# Colour slots (CSS classes g0..g7) of the groups the topics draw, fixed so that a
# dispatch key or a kind of node has the same colour in every diagram, whichever
# other groups it shares the diagram with. Any other group gets a slot from a
# hash of its name (see group_slot).
GROUP_SLOTS: dict[str, int] = {
    "CPU": 0,  # blue: the backend, where the arithmetic happens
    "Autograd": 3,  # purple
    "ADInplaceOrView": 4,  # yellow
    "Meta": 5,  # teal: the other backend
    "Tracer": 7,  # grey: bookkeeping
    "grad_fn": 0,
    "AccumulateGrad": 2,  # green: where gradients come to rest
    "Storage": 7,
    "is_contiguous() → True": 2,
    "is_contiguous() → False": 1,  # orange
}


NARROW_CHARACTERS = frozenset("ijlt.,:;!|'\"()[]{} ")
BROAD_CHARACTERS = frozenset("MWmw@%")
OPERATOR_CHARACTERS = frozenset("+−=<>×÷±~")


def _character_width(ch: str) -> float:
    """Approximate advance of one character, in ems, for a sans-serif font."""
    if unicodedata.east_asian_width(ch) in "WF":
        return 1.0
    if unicodedata.decomposition(ch).startswith(("<super>", "<sub>")):
        return 0.42
    if ch in NARROW_CHARACTERS:
        return 0.35
    if ch in BROAD_CHARACTERS:
        return 0.95
    if ch in OPERATOR_CHARACTERS:
        return 0.84
    if ch.isupper():
        return 0.68
    if ch.isdigit():
        return 0.64
    return 0.6


def text_width(text: str, font_size: float, *, bold: bool = False) -> float:
    """Rough rendered width: by character class (CJK, sub/superscripts, W, i, ...).

    Bold (weight 600, as node labels are drawn) runs about a tenth wider.
    """
    width = sum(_character_width(ch) for ch in text) * font_size
    return width * BOLD_WIDTH_FACTOR if bold else width


def monospace_width(text: str, font_size: float) -> float:
    """Rendered width in a monospace font: 0.6 em a character, 1 em for CJK."""
    return sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.6 for ch in text) * font_size


def _attr(value: str) -> str:
    return escape(value, quote=True)


MINUS = "\u2212"  # the real minus sign, in every tick label


def tick_labels(values: Sequence[float], step: float | None = None) -> list[str]:
    """Labels for the ticks of one axis, all in one style.

    One notation for the whole axis: powers of ten (``1e5``, ``2e5``, ``1e−4``)
    when any tick is at least 1e5 or below 1e-3 in size, plain decimals
    otherwise; on a linear axis (``step`` given) every label has the decimals the
    step needs (0.5, 1.0, 1.5), on a log axis each its own (0.01, 0.1, 1, 10); and
    the minus sign is U+2212 everywhere.
    """
    sizes = [abs(v) for v in values if v != 0]
    scientific = bool(sizes) and (max(sizes) >= 1e5 or min(sizes) < 1e-3)
    decimals = None
    if step is not None and step > 0 and not scientific:
        decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    labels = []
    for value in values:
        if value == 0:
            text = "0"
        elif scientific:
            exponent = math.floor(math.log10(abs(value)) + 1e-9)
            mantissa = float(f"{value / 10.0**exponent:.3g}")
            head = "1" if mantissa == 1 else "-1" if mantissa == -1 else f"{mantissa:g}"
            text = f"{head}e{exponent}"
        elif decimals is not None:
            text = f"{value:.{decimals}f}"
        else:
            text = f"{value:.6g}"
        labels.append(text.replace("-", MINUS))
    return labels


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
    values: Sequence[float],
    pixel_low: float,
    pixel_high: float,
    tight: bool = False,
    target_ticks: int = 5,
) -> Axis:
    """A linear axis; ``tight`` keeps the data's own ends instead of rounding out to a tick."""
    low, high = min(values), max(values)
    if low == high:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    step = nice_step(high - low, target_ticks)
    first = math.ceil(low / step - 1e-9) if tight else math.floor(low / step + 1e-9)
    last = math.floor(high / step + 1e-9) if tight else math.ceil(high / step - 1e-9)
    if not tight:
        low, high = first * step, last * step
    values = [i * step for i in range(first, last + 1)]
    ticks = tuple(zip(values, tick_labels(values, step), strict=True))
    return Axis(low, high, pixel_low, pixel_high, False, ticks)


def log_axis(values: Sequence[float], pixel_low: float, pixel_high: float) -> Axis:
    """A log axis that ends at the data (2048, not 10⁴), with ticks at decades (and 2x, 5x
    when the data span two decades or less) inside it."""
    low, high = min(values), max(values)
    if high <= low * 1.0000001:
        low, high = low / 2, high * 2
    low_exp = math.floor(math.log10(low) + 1e-9)
    high_exp = math.ceil(math.log10(high) - 1e-9)
    decades = high_exp - low_exp
    values: list[float] = []
    if decades <= 2:  # few decades: also tick 2x and 5x
        for exponent in range(low_exp, high_exp + 1):
            for multiple in (1, 2, 5):
                value = multiple * 10.0**exponent
                if low * 0.9999999 <= value <= high * 1.0000001:
                    values.append(value)
    else:
        stride = max(1, math.ceil(decades / 8))
        for exponent in range(low_exp, high_exp + 1, stride):
            if low * 0.9999999 <= 10.0**exponent <= high * 1.0000001:
                values.append(10.0**exponent)
    ticks = zip(values, tick_labels(values), strict=True)
    return Axis(low, high, pixel_low, pixel_high, True, tuple(ticks))


# ---------------------------------------------------------------- legend


LEGEND_SWATCH = 24.0  # a legend's line sample: longer than a period of every dash (21 px at most)


def _legend(
    items: list[tuple[str, str]], left: float, top: float, width: float, font_size: float = 12
) -> tuple[str, float]:
    """Legend rows of (css class, name) starting at ``top``; returns (svg, height used).

    A series' sample shows its dash pattern and, for the ``s0``..``s7`` classes of a
    line chart, its marker shape in the middle of the line."""
    parts, x, y, row_height = [], left, top + 14, font_size + 8
    for css_class, name in items:
        item_width = LEGEND_SWATCH + 6 + text_width(name, font_size) + 18
        if x > left and x + item_width > left + width:
            x, y = left, y + row_height
        parts.append(
            f'<line class="legend-swatch {css_class}" x1="{x:.1f}" y1="{y - 4:.1f}" '
            f'x2="{x + LEGEND_SWATCH:.1f}" y2="{y - 4:.1f}"/>'
        )
        if css_class in SERIES_CLASSES:
            centre = [(x + LEGEND_SWATCH / 2, y - 4)]
            parts.append(_marker_path(css_class, centre, "legend-marker"))
        parts.append(
            f'<text class="legend-label" x="{x + LEGEND_SWATCH + 6:.1f}" y="{y:.1f}">'
            f"{escape(name)}</text>"
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


# Series colours (CSS classes s0..s7) come in two tiers of lightness, four hues each:
# s0-s3 dark in the light theme (dim in the dark one), s4-s7 mid (bright). Every line
# has 3:1 contrast with the chart's background, and a line of one tier has 3:1 with
# a line of the other; two lines of one tier do not (WCAG's 3:1 leaves room for only
# two lightness levels beside a background), so a chart of two series takes one from
# each tier, and a chart of more tells same-tier lines apart by hue and dash.
TIER_SIZE = PALETTE_SIZE // 2
# Series drawn in several charts of a topic, beside different partners: their slots are
# fixed so that the tier rule never has to move them (any other name: from its hash).
SERIES_SLOTS: dict[str, int] = {
    "numpy.fft.fft": 5,  # fft: teal beside this page's FFT in every timing chart
    "radix-2 FFT (this page)": 2,
}


def series_tier(slot: int) -> int:
    return slot // TIER_SIZE


def series_classes(chart: LineChart) -> list[str]:
    """CSS class per series, from its English name: one name, one colour and dash in
    every chart of a topic where it can (two series of one chart never share one, the
    two series of a two-series chart are of different tiers, and a chart of more
    splits its series between the tiers as evenly as it can; where that moves a
    name to the other tier, it keeps its hue when that slot is free)."""
    names = list(dict.fromkeys(s.name.en for s in chart.series))
    # Fixed slots first, then by name, so the colours depend on which series a chart
    # holds, not on their order in the legend.
    names.sort(key=lambda name: (name not in SERIES_SLOTS, name))
    slots: dict[str, int] = {}
    for name in names:
        slot = SERIES_SLOTS.get(name, group_slot(name))
        tiers = [series_tier(taken) for taken in slots.values()]
        if tiers and name not in SERIES_SLOTS:
            wanted = 0 if tiers.count(0) < tiers.count(1) else 1
            if tiers.count(0) != tiers.count(1) and series_tier(slot) != wanted:
                slot = (slot + TIER_SIZE) % PALETTE_SIZE  # the same hue, in the other tier
        order = [slot] + [
            candidate
            for candidate in range(PALETTE_SIZE)
            if series_tier(candidate) == series_tier(slot) and candidate != slot
        ]
        order += [c for c in range(PALETTE_SIZE) if c not in order]
        slots[name] = next(c for c in order if c not in slots.values())
    return [f"s{slots[s.name.en]}" for s in chart.series]


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


def _marker_path(css: str, centres: Sequence[tuple[float, float]], kind: str = "marker") -> str:
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


# ---------------------------------------------------------------- direct labels

LABEL_GAP = 6.0  # between a line's last point and its label
LABEL_SPACING = 2.0  # between two labels, above and below
# A label wraps to lines no wider than this share of the chart's width (a long name
# would otherwise take the plot's room); a word longer than that keeps its line.
LABEL_WIDTH_SHARE = {"wide": 0.24, "compact": 0.28}
LEADER_MIN_SHIFT = 3.0  # a label moved this far from its line's end gets a leader line
# Series are named at their lines' ends from this many on. Two series differ by a colour
# pair >= 3:1 as well as dash and marker, and the legend names them; from three on no
# palette can keep every pair 3:1 apart, so each line carries its own name. The label
# column costs the plot about 100 px, too much to pay where the legend suffices.
DIRECT_LABELS_FROM = 3


@dataclass
class DirectLabel:
    """A series' name beside its line's last point, wrapped, moved up or down as needed."""

    series: int
    css: str
    lines: list[str]
    spaces: tuple[str, ...]  # after each line, the space it broke at (see line_spaces)
    width: float
    anchor: tuple[float, float] | None = None  # the last point, in pixels
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
    assert label.anchor is not None
    ax, ay = label.anchor
    parts = []
    centre = label.top + len(label.lines) * line_height / 2
    if abs(centre - ay) > LEADER_MIN_SHIFT:
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
    classes = series_classes(chart)
    labels = direct_labels(chart, lang, classes, size, room=top + plot_height - 2)
    widest_label = max((label.width for label in labels), default=0.0)
    right = max(size.right, LABEL_GAP + widest_label + 4) if labels else size.right
    all_points = [_finite_points(s.x, s.y, chart.log_x, chart.log_y) for s in chart.series]
    xs = [p[0] for pts in all_points for p in pts if p]
    ys = [p[1] for pts in all_points for p in pts if p]
    title = chart.title.get(lang)
    if not xs:
        return (
            f'<svg class="chart {size.name}" viewBox="0 0 {width:.0f} 60" role="img" '
            f'aria-label="{_attr(title)}"><text x="20" y="35">{escape(title)}: —</text></svg>'
        )
    if chart.log_x:
        x_axis = log_axis(xs, left, width - right)
    else:
        x_axis = linear_axis(xs, left, width - right, tight=True, target_ticks=size.x_ticks)
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

    for index, (css, points) in enumerate(zip(classes, all_points, strict=True)):
        parts.append(f'<path class="series {css}" d="{_series_path(points, x_axis, y_axis)}"/>')
        pixels = [(x_axis.to_pixel(x), y_axis.to_pixel(y)) for x, y in (p for p in points if p)]
        if pixels:
            phase = (index + 0.5) / len(chart.series)
            parts.append(_marker_path(css, marker_points(pixels, phase)))
            if labels:
                labels[index].anchor = pixels[-1]

    line_height = label_line_height(size)
    place_labels(labels, line_height, 2.0, bottom)
    legend_top = bottom + 48
    for label in labels:
        if label.anchor:
            x = min(label.anchor[0] + LABEL_GAP, width - 2 - label.width)
            parts.append(_label_markup(label, x, line_height, size.legend_font))
            legend_top = max(legend_top, label.top + len(label.lines) * line_height + 12)
    legend, legend_height = _legend(
        [(css, s.name.get(lang)) for css, s in zip(classes, chart.series, strict=True)],
        left,
        legend_top,
        width - left - size.right,
        size.legend_font,
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
        f'data-points="{_attr(readout)}">'
        f'<title id="{element_id}-t">{escape(title)}</title>'
        f'<desc id="{element_id}-d">{escape(description)}</desc>'
        f"{''.join(parts)}{legend}</svg>"
    )


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


# ---------------------------------------------------------------- graph diagrams

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


# ------------------------- text wrapped to a width (node text, series labels)

# Where a line of node text may break, from the best place to the worst (a line
# breaks at a worse place only when the better ones leave it too wide):
# 0: a space outside brackets ("matmul @ | Autograd");
# 1: after a dot (not a decimal point) or before an opening bracket or the sign of a
#    complex number's imaginary part, outside brackets ("recording. | Autograd[mm]",
#    "-4 | +9.66i"), and between two CJK characters;
# 2: after an underscore or between the humps of a CamelCase name, outside brackets;
# 3 and up: any of these inside brackets, one level further per bracket depth.
OPENING, CLOSING = "([{", ")]}"
NO_BREAK_BEFORE_CJK = frozenset("，。、：；）」』")


def _is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def _break_rank(text: str, index: int, depth: int) -> int | None:
    """How bad a break between ``text[index]`` and the character after it is (None: none)."""
    ch, after = text[index], text[index + 1]
    if _is_wide(ch) and _is_wide(after) and after not in NO_BREAK_BEFORE_CJK:
        rank = 1
    elif ch == " ":
        rank = 0
    elif (ch == "." and not after.isdigit()) or ch == ",":
        rank = 1
    elif ch.isalnum() and after in "[(+−-" and text[index + 1 : index + 3] != "()":
        rank = 1
    elif ch == "_" or (ch.islower() and after.isupper()):
        rank = 2
    else:
        return None
    return rank if depth == 0 else 2 + depth


def break_pieces(text: str, worst: int) -> list[str]:
    """``text`` cut wherever a line may break at rank ``worst`` or better; the pieces
    join back into ``text``."""
    pieces, current, depth = [], "", 0
    for index, ch in enumerate(text):
        current += ch
        depth += (ch in OPENING) - (ch in CLOSING)
        if index + 1 < len(text):
            rank = _break_rank(text, index, max(depth, 0))
            if rank is not None and rank <= worst:
                pieces.append(current)
                current = ""
    return [*pieces, current]


MAX_BREAK_RANK = 8


def wrap_text(
    text: str, width: float, measure: Callable[[str], float], worst: int = 0
) -> list[str]:
    """``text`` in lines no wider than ``width`` (as ``measure`` counts them).

    Lines break at the best places first (see :func:`break_pieces`); a line
    still too wide is broken again at the next rank. A piece no rank can break
    gets a line of its own (the box around it grows to hold it). Spaces at a
    break are dropped.
    """
    lines, line = [], ""
    for piece in break_pieces(text, worst):
        if line.strip() and measure((line + piece).rstrip()) > width:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
    lines.append(line.rstrip())
    if worst >= MAX_BREAK_RANK:
        return lines
    return [
        part
        for line in lines
        for part in (
            wrap_text(line, width, measure, worst + 1) if measure(line) > width else [line]
        )
    ]


def line_spaces(text: str, lines: Sequence[str]) -> tuple[str, ...]:
    """After each line of ``text`` wrapped into ``lines``: the space it broke at, or ``""``
    where it broke between two characters (so the lines with these rejoin into ``text``)."""
    spaces, position = [], 0
    for line in lines:
        position = text.index(line, position) + len(line)
        spaces.append(" " if text[position : position + 1] == " " else "")
    return tuple(spaces)


def _text_lines(css: str, x: float, lines: Sequence[str], ys: Sequence[float], spaces) -> str:
    """One ``<text>`` element for ``lines`` (a ``<tspan>`` each, when more than one), so
    the element reads as the unwrapped text: between the lines stands the space each
    broke at, or nothing."""
    if len(lines) == 1:
        return f'<text class="{css}" x="{x:.1f}" y="{ys[0]:.1f}" text-anchor="middle">' + (
            f"{escape(lines[0])}</text>"
        )
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{y:.1f}">{escape(line)}</tspan>{space}'
        for line, y, space in zip(lines, ys, (*spaces[:-1], ""), strict=True)
    )
    return f'<text class="{css}" text-anchor="middle">{spans}</text>'


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


def group_slot(group: str) -> int:
    """The colour slot of a group: fixed for known groups, else from a hash of the name.

    A name ending in a number ("stage 2") takes the slot after "stage 1", so
    numbered groups get different colours (up to the palette's size).
    """
    if group in GROUP_SLOTS:
        return GROUP_SLOTS[group]
    numbered = re.fullmatch(r"(.*?)(\d+)", group)
    stem, number = (numbered.group(1), int(numbered.group(2))) if numbered else (group, 0)
    return (zlib.crc32(stem.encode()) + number) % PALETTE_SIZE


def group_classes(groups: Sequence[str]) -> dict[str, str]:
    """CSS class per group: its own slot, unless a group before it in ``groups`` took it.

    Two groups of one diagram never share a colour: the later one moves on to
    the next free slot (while one is free).
    """
    classes: dict[str, str] = {}
    taken: set[int] = set()
    for group in groups:
        slot = group_slot(group)
        for step in range(PALETTE_SIZE):
            if (slot + step) % PALETTE_SIZE not in taken:
                slot = (slot + step) % PALETTE_SIZE
                break
        taken.add(slot)
        classes[group] = f"g{slot}"
    return classes


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


EDGE_LABEL_FONT = 11.0
LABEL_HEIGHT = 15.0
LABEL_PADDING = 3.0  # each side of the text, inside the label's background box
NODE_CLEARANCE = 8.0  # labels keep this far from boxes (and the arrowheads beside them)
LABEL_CENTRE_RADIUS = 10.0  # another edge this close to a label's centre makes it ambiguous
# Where along its edge a label may sit (Bézier parameter), best first: near the
# head, so it sits by the node it feeds, then gradually further away.
LABEL_POSITIONS = (0.72, 0.8, 0.64, 0.86, 0.56, 0.48, 0.4, 0.3, 0.92, 0.2)
GRID_CELL = 24.0
SAMPLE_SPACING = 5.0  # between points sampled along edges to find them near a label

Box = tuple[float, float, float, float]  # left, top, width, height


def _overlap(a: Box, b: Box) -> float:
    """Area shared by two boxes."""
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def _sample(curves: list[Curve]) -> list[tuple[float, float]]:
    """Points along an edge, a few pixels apart."""
    points = []
    for curve in curves:
        hull = sum(math.dist(a, b) for a, b in zip(curve, curve[1:], strict=False))
        steps = max(4, math.ceil(hull / SAMPLE_SPACING))
        points.extend(curve_point(curve, i / steps) for i in range(steps + 1))
    return points


def _grown(box: Box, margin: float) -> Box:
    x, y, w, h = box
    return x - margin, y - margin, w + 2 * margin, h + 2 * margin


def _cells(left: float, top: float, right: float, bottom: float) -> Iterator[tuple[int, int]]:
    """The cells of a :data:`GRID_CELL` grid that a rectangle touches."""
    for i in range(math.floor(left / GRID_CELL), math.floor(right / GRID_CELL) + 1):
        for j in range(math.floor(top / GRID_CELL), math.floor(bottom / GRID_CELL) + 1):
            yield i, j


class LabelPlacer:
    """Chooses where each edge label goes, so labels stay readable where edges meet.

    Every label tries the positions of :data:`LABEL_POSITIONS` along its own
    edge and takes the best: first one that covers no node and no label placed
    before it; then one where no other edge passes close to the label's centre
    (a line through the middle of a label makes it unclear which edge the
    label belongs to; one clipping a corner does not); then the one nearest
    the edge's head. Boxes already taken and points sampled along every edge
    are kept in grids, so each test looks only at what is nearby.
    """

    def __init__(self, node_boxes: list[Box], edges: list[list[Curve]]):
        self.taken: list[Box] = []
        self.taken_grid: dict[tuple[int, int], list[int]] = {}
        for box in node_boxes:
            self._reserve(_grown(box, NODE_CLEARANCE))
        self.edge_grid: dict[tuple[int, int], list[tuple[float, float, int]]] = {}
        for index, curves in enumerate(edges):
            for x, y in _sample(curves):
                cell = (math.floor(x / GRID_CELL), math.floor(y / GRID_CELL))
                self.edge_grid.setdefault(cell, []).append((x, y, index))

    def _reserve(self, box: Box) -> None:
        left, top, width, height = box
        for cell in _cells(left, top, left + width, top + height):
            self.taken_grid.setdefault(cell, []).append(len(self.taken))
        self.taken.append(box)

    def _covered(self, box: Box) -> float:
        """Area of ``box`` that overlaps nodes and labels already placed."""
        left, top, width, height = box
        nearby = {
            index
            for cell in _cells(left, top, left + width, top + height)
            for index in self.taken_grid.get(cell, ())
        }
        return sum(_overlap(box, self.taken[index]) for index in nearby)

    def _edges_near(self, x: float, y: float, own: int) -> int:
        """How many other edges pass within :data:`LABEL_CENTRE_RADIUS` of (x, y)."""
        reach = LABEL_CENTRE_RADIUS
        near = set()
        for cell in _cells(x - reach, y - reach, x + reach, y + reach):
            for px, py, index in self.edge_grid.get(cell, ()):
                if index != own and (px - x) ** 2 + (py - y) ** 2 <= reach * reach:
                    near.add(index)
        return len(near)

    def place(self, edge: int, curves: list[Curve], label: str) -> Box:
        """The box of ``label`` on edge number ``edge`` (drawn as ``curves``); reserves it."""
        width = text_width(label, EDGE_LABEL_FONT) + 2 * LABEL_PADDING
        best: tuple[float, int, int] | None = None
        chosen: Box = (0.0, 0.0, width, LABEL_HEIGHT)
        for rank, t in enumerate(LABEL_POSITIONS):
            x, y = curve_point(curves[0], t)
            box = (x - width / 2, y - LABEL_HEIGHT / 2, width, LABEL_HEIGHT)
            score = (self._covered(box), self._edges_near(x, y, edge), rank)
            if best is None or score < best:
                best, chosen = score, box
            if score[:2] == (0, 0):
                break  # nothing better than the most preferred clear spot
        self._reserve(chosen)
        return chosen


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
        parts.append(_text_lines("node-label", centre, text.label, label_ys, text.spaces[0]))
        if text.detail:
            css = "node-detail words" if text.detail_is_words else "node-detail"
            parts.append(_text_lines(css, centre, text.detail, detail_ys, text.spaces[1]))
        parts.append("</g>")
    return "".join(parts), right, bottom


def _draw_graph(
    diagram: GraphDiagram, bands: list[Band], element_id: str
) -> tuple[str, float, float]:
    """The inside of the ``<svg>`` for ``diagram`` drawn as ``bands`` (one, or the strips
    of a folded drawing, stacked), with one legend; and the width and height it needs."""
    margin = bands[0][1].size.margin
    groups = sorted({n.group for n in diagram.nodes if n.group})
    group_class = group_classes(groups)  # from the whole graph: one colour per group
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
        legend, legend_height = _legend(
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
