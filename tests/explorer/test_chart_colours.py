"""Chart series colours: 3:1 contrast between the series of a chart, one colour per series name;
where two series of a chart are less than 3:1 apart, a dash pattern and a marker shape
of their own; and each series of a chart of three or more named at its line's end.

The colours are the stylesheet's ``--c0``..``--c7`` in the light and the dark
theme; WCAG 2's relative luminance and contrast ratio are computed here from
their definition (WCAG 2.2, "relative luminance"), not taken from the renderer.
Dash patterns are read from the stylesheet and marker shapes from the drawn
SVG, so a rule or a shape that does not reach the drawing fails too.
"""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.explorer.default_runs import default_record
from whylab.explorer.content.topics import load_registry
from whylab.explorer.experiment import LineChart, Series, T
from whylab.explorer.figures import charts as chart_svg
from whylab.explorer.figures import palette, pieces, text
from whylab.explorer.figures.charts import COMPACT, DIRECT_LABELS_FROM, WIDE, render_line_chart
from whylab.explorer.figures.palette import series_classes
from whylab.explorer.web.static_files import STATIC_DIR

CSS = (STATIC_DIR / "explorer.css").read_text()
DARK_START = CSS.index("prefers-color-scheme: dark")


def _colours(block: str) -> dict[str, str]:
    return dict(re.findall(r"--(c\d|surface): (#[0-9a-fA-F]{6})", block))


THEMES = {"light": _colours(CSS[:DARK_START]), "dark": _colours(CSS[DARK_START:])}


def luminance(hex_colour: str) -> float:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_formula_matches_known_pairs():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # WebAIM's figure


@pytest.mark.parametrize("theme", THEMES)
def test_every_series_colour_stands_out_from_the_chart_background(theme):
    colours = THEMES[theme]
    for slot in range(8):
        assert contrast(colours[f"c{slot}"], colours["surface"]) >= 3, (theme, slot)


def chart(*names: str) -> LineChart:
    series = [Series(T(name, name), [0, 1], [0.0, 1.0]) for name in names]
    return LineChart(T("t", "t"), T("x", "x"), T("y", "y"), series)


def colour_pairs_below_three(classes: list[str], theme: str) -> list[tuple[str, str, float]]:
    colours = THEMES[theme]
    found = []
    for a, b in itertools.combinations(classes, 2):
        ratio = contrast(colours["c" + a[1:]], colours["c" + b[1:]])
        if ratio < 3:
            found.append((a, b, round(ratio, 2)))
    return found


SERIES_NAMES = st.from_regex(r"[A-Za-z0-9 =]{0,10}[a-z]", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(SERIES_NAMES, min_size=2, max_size=2, unique=True))
def test_the_two_series_of_any_two_series_chart_have_three_to_one(names):
    classes = series_classes(chart(*names))
    assert len(set(classes)) == 2
    for theme in THEMES:
        assert colour_pairs_below_three(classes, theme) == []


# ---------------------------------------------------------------- every chart of every topic


@pytest.fixture(scope="module")
def topic_charts() -> dict[str, list[LineChart]]:
    """Every line chart every shipped experiment draws at its defaults (timing ones too)."""
    charts: dict[str, list[LineChart]] = {}
    for topic in load_registry():
        found = charts.setdefault(topic.slug, [])
        for experiment in topic.experiments.values():
            result = default_record(topic, experiment).result
            found += [f for f in result.figures if isinstance(f, LineChart)]
    return charts


@pytest.mark.slow
def test_no_two_series_of_a_chart_have_less_than_three_to_one_where_the_palette_allows(
    topic_charts,
):
    """Two series: their colours 3:1 apart in both themes. Three or more cannot all be
    (3:1 from the background leaves two lightness levels), so there the test asks that
    the series are split between the two tiers as evenly as they can be."""
    problems = []
    for slug, charts in topic_charts.items():
        for figure in charts:
            classes = series_classes(figure)
            names = [s.name.en for s in figure.series]
            assert len(set(classes)) == len(set(names)), (slug, figure.title.en)
            distinct = list(dict.fromkeys(classes))
            if len(distinct) == 2:
                for theme in THEMES:
                    low = colour_pairs_below_three(distinct, theme)
                    if low:
                        problems.append((slug, figure.title.en, theme, low))
            elif len(distinct) > 2:
                dark = sum(1 for c in distinct if int(c[1:]) < 4)
                if abs(2 * dark - len(distinct)) > 1:
                    problems.append((slug, figure.title.en, "tiers", distinct))
    assert problems == []


@pytest.mark.slow
def test_a_series_keeps_its_colour_across_the_charts_of_a_topic(topic_charts):
    problems = []
    for slug, charts in topic_charts.items():
        seen: dict[str, set[str]] = {}
        for figure in charts:
            for series, css in zip(figure.series, series_classes(figure), strict=True):
                seen.setdefault(series.name.en, set()).add(css)
        problems += [(slug, name, sorted(c)) for name, c in seen.items() if len(c) > 1]
    assert problems == []


# ---------------------------------------------------------------- cues beside colour

DASHES = dict(re.findall(r"svg \.(s\d) \{ stroke-dasharray: ([^;]+); \}", CSS))
SVG_NS = "{http://www.w3.org/2000/svg}"


def parse(markup: str) -> ET.Element:
    return ET.fromstring(markup.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def marker_shape(path_data: str) -> str:
    """A marker path's shape: its first marker's commands after the move to its centre."""
    first = re.split(r"(?=M)", path_data.strip())[1]
    return re.sub(r"^M[-\d.]+ [-\d.]+", "", first)


def drawn_series(markup: str, dashes: dict[str, str] = DASHES) -> list[dict[str, str]]:
    """Per series line of a rendered chart: its colour class, dash pattern and marker shape."""
    root = parse(markup)
    markers = {
        p.get("class").split()[1]: marker_shape(p.get("d"))
        for p in root.iter(f"{SVG_NS}path")
        if p.get("class", "").startswith("marker ")
    }
    found = []
    for path in root.iter(f"{SVG_NS}path"):
        kind, _, css = path.get("class", "").partition(" ")
        if kind == "series":
            found.append({"css": css, "dash": dashes.get(css, "none"), "marker": markers.get(css)})
    return found


def pairs_without_other_cues(series: list[dict[str, str]], theme: str) -> list[tuple]:
    """Pairs of series less than 3:1 apart in ``theme`` that do not differ in both
    dash pattern and marker shape (a missing marker differs from nothing)."""
    colours = THEMES[theme]
    found = []
    for a, b in itertools.combinations(series, 2):
        ratio = contrast(colours["c" + a["css"][1:]], colours["c" + b["css"][1:]])
        differ = a["dash"] != b["dash"] and None not in (a["marker"], b["marker"])
        if ratio < 3 and not (differ and a["marker"] != b["marker"]):
            found.append((a["css"], b["css"], round(ratio, 2)))
    return found


def direct_label_texts(markup: str) -> dict[int, str]:
    """Series index -> the text of its direct label (its lines joined, as read aloud)."""
    return {
        int(t.get("data-series")): "".join(t.itertext())
        for t in parse(markup).iter(f"{SVG_NS}text")
        if t.get("class") == "direct-label"
    }


def test_same_dash_and_marker_below_three_to_one_is_flagged():
    """Negative controls of the check below: two series of one tier (less than 2:1
    apart) that share a dash and a marker, or only one of them, are flagged."""
    first = {"css": "s0", "dash": "none", "marker": "o"}
    same = [first, {**first, "css": "s1"}]
    dash_only = [first, {**same[1], "dash": "7 4"}]
    marker_only = [first, {**same[1], "marker": "x"}]
    unmarked = [first, {**same[1], "dash": "7 4", "marker": None}]
    for theme in THEMES:
        for case in (same, dash_only, marker_only, unmarked):
            assert [p[:2] for p in pairs_without_other_cues(case, theme)] == [("s0", "s1")]
    both = [first, {**same[1], "dash": "7 4", "marker": "x"}]
    other_tier = [first, {**first, "css": "s4"}]  # same dash and marker, but 3:1 apart
    for theme in THEMES:
        assert pairs_without_other_cues(both, theme) == []
        assert pairs_without_other_cues(other_tier, theme) == []


def test_a_drawn_chart_with_one_marker_and_dash_for_two_slots_is_flagged(monkeypatch):
    """The check reads real drawings: draw one slot like another of its tier (same
    marker shape, same dash) and a chart holding both is flagged for that pair."""
    figure = chart("a", "b", "c")
    classes = series_classes(figure)
    tiers = [[c for c in classes if palette.series_tier(int(c[1:])) == tier] for tier in (0, 1)]
    first, second = next(group for group in tiers if len(group) == 2)
    assert (
        pairs_without_other_cues(drawn_series(render_line_chart(figure, "en", "t")), "light") == []
    )
    monkeypatch.setitem(pieces.MARKER_SHAPES, second, pieces.MARKER_SHAPES[first])
    dashes = {**DASHES, second: DASHES.get(first, "none")}
    drawn = drawn_series(render_line_chart(figure, "en", "t", WIDE), dashes)
    assert [p[:2] for p in pairs_without_other_cues(drawn, "light")] == [(first, second)]


def test_every_slot_has_its_own_dash_and_marker_shape():
    styles = [
        (DASHES.get(f"s{slot}", "none"), pieces.MARKER_SHAPES[f"s{slot}"][1]) for slot in range(8)
    ]
    assert len({dash for dash, _ in styles}) == 8
    assert len({shape for _, shape in styles}) == 8


def test_a_long_series_gets_a_thinned_subset_of_markers_and_a_short_one_all():
    wave = [(float(x), 50 + 40 * math.sin(x / 8)) for x in range(600)]
    chosen = pieces.marker_points(wave, 0.5)
    assert 2 <= len(chosen) <= pieces.MAX_MARKERS
    assert set(chosen) <= set(wave)
    short = wave[: pieces.MARKERS_AT_EVERY_POINT]
    assert pieces.marker_points(short, 0.5) == short
    other = pieces.marker_points(wave, 0.1)
    assert other != chosen  # series drawn on top of each other get markers in other places


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab 直接求和，（）x._()", min_size=1, max_size=40).filter(
        lambda name: name.strip() == name and "  " not in name  # names as written
    ),
    st.floats(20, 200),
)
def test_wrapped_labels_read_as_the_name_and_fit_where_they_can(name, max_width):
    three = LineChart(
        T("c", "c"), T("x", "x"), T("y", "y"),
        [Series(T(n, n), [0.0, 1.0], [0.0, 1.0]) for n in (name, "b", "c")],
    )
    size = replace(WIDE, width=max_width / chart_svg.LABEL_WIDTH_SHARE["wide"])
    label = chart_svg.direct_labels(three, "en", series_classes(three), size, room=1e9)[0]
    drawn = chart_svg._label_markup(replace(label, anchor=(0.0, 0.0)), 0.0, 14.0, size.legend_font)
    markup = f"<svg >{drawn}</svg>"
    assert direct_label_texts(markup) == {0: name}  # read aloud, the lines are the name
    unbreakable = {piece.strip() for piece in text.break_pieces(name, text.MAX_BREAK_RANK)}
    for line in label.lines:  # a piece no rule can break keeps a line of its own
        assert text.text_width(line, size.legend_font) <= max_width + 1e-9 or line in unbreakable


@pytest.mark.slow
@pytest.mark.parametrize("size", [WIDE, COMPACT], ids=["wide", "compact"])
def test_series_below_three_to_one_differ_in_dash_and_marker_and_are_named_at_their_ends(
    topic_charts, size
):
    problems, low_pairs, multi = [], 0, 0
    for slug, charts in topic_charts.items():
        for number, figure in enumerate(charts):
            for lang in ("en", "zh"):
                markup = render_line_chart(figure, lang, f"c{number}", size)
                drawn = drawn_series(markup)
                for theme in THEMES:
                    found = pairs_without_other_cues(drawn, theme)
                    problems += [(slug, figure.title.en, lang, theme, p) for p in found]
                    low_pairs += len(colour_pairs_below_three([d["css"] for d in drawn], theme))
                names = [s.name.get(lang) for s in figure.series]
                multi += len(names) >= 3
                if len(names) >= DIRECT_LABELS_FROM or direct_label_texts(markup):
                    wanted = dict(enumerate(names)) if len(names) >= DIRECT_LABELS_FROM else {}
                    got = direct_label_texts(markup)
                    if got != wanted:
                        problems.append((slug, figure.title.en, lang, "labels", got, wanted))
    assert multi >= 10 and low_pairs >= 10  # the shipped charts do reach the premise
    assert problems == []
