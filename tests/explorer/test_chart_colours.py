"""Chart series colours: 3:1 contrast between the series of a chart, one colour per series name.

The colours are the stylesheet's ``--c0``..``--c7`` in the light and the dark
theme; WCAG 2's relative luminance and contrast ratio are computed here from
their definition (WCAG 2.2, "relative luminance"), not taken from the renderer.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whylab.explorer.experiment import LineChart, Series, T
from whylab.explorer.render import STATIC_DIR
from whylab.explorer.svg import series_classes
from whylab.explorer.topics import load_registry

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
            result = experiment.run(**experiment.parse_params({}))
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
