"""Charts on a 390x844 phone in a real browser: every chart of every topic page fits the
width with its tick labels at 11 px or more, and the two series of a two-series chart
are drawn 3:1 apart in contrast, in the light and the dark theme.

Reuses the server and browser fixtures of conftest.py and test_browser.py's phone
viewport. The contrast is computed here from the colours the browser actually drew
with (``getComputedStyle``), by WCAG 2's definition, so a stylesheet that does not
reach the lines fails too.
"""

from __future__ import annotations

import itertools
import re

import pytest
from test_browser import PHONE, open_in

pytestmark = pytest.mark.browser

MEASURE_CHARTS = """() => [...document.querySelectorAll('svg.chart')]
  .filter((svg) => svg.getBoundingClientRect().width > 0)
  .map((svg) => {
    const box = svg.getBoundingClientRect();
    const scale = box.width / svg.viewBox.baseVal.width;
    const ticks = [...svg.querySelectorAll('text.tick')].map(
      (t) => parseFloat(getComputedStyle(t).fontSize) * scale);
    const strokes = [...new Set([...svg.querySelectorAll('path.series')].map(
      (p) => getComputedStyle(p).stroke))];
    return {id: svg.id, left: box.left, right: box.right, ticks: ticks, strokes: strokes,
            scrollWidth: document.documentElement.scrollWidth};
  })"""


def rgb(text: str) -> tuple[int, int, int]:
    found = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, [\d.]+)?\)", text)
    assert found, f"not a colour: {text}"
    return tuple(int(v) for v in found.groups())  # type: ignore[return-value]


def luminance(colour: tuple[int, int, int]) -> float:
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        for c in (v / 255 for v in colour)
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_of_black_on_white_is_21():
    assert contrast(rgb("rgb(0, 0, 0)"), rgb("rgb(255, 255, 255)")) == pytest.approx(21)


@pytest.mark.parametrize(("lang", "scheme"), [("en", "light"), ("zh", "dark")])
def test_every_chart_fits_a_phone_with_readable_ticks_and_distinct_pairs(
    browser,  # noqa: F811
    base_url,  # noqa: F811
    registry,  # noqa: F811
    lang,
    scheme,
):
    context, page, problems = open_in(browser, PHONE, color_scheme=scheme)
    failures, charts_seen = [], 0
    try:
        for topic in registry:
            page.goto(f"{base_url}/{lang}/topics/{topic.slug}", timeout=120_000)
            for chart in page.evaluate(MEASURE_CHARTS):
                charts_seen += 1
                where = (topic.slug, chart["id"])
                if chart["left"] < 0 or chart["right"] > PHONE["width"]:
                    failures.append((*where, "wider than the phone", chart["right"]))
                small = [round(size, 1) for size in chart["ticks"] if size < 11]
                if small:
                    failures.append((*where, "tick labels under 11 px", small[:3]))
                strokes = [rgb(s) for s in chart["strokes"]]
                if len(strokes) == 2:
                    for a, b in itertools.combinations(strokes, 2):
                        if contrast(a, b) < 3:
                            failures.append((*where, "series below 3:1", round(contrast(a, b), 2)))
            if page.evaluate("document.documentElement.scrollWidth") > PHONE["width"]:
                failures.append((topic.slug, "page scrolls sideways"))
    finally:
        context.close()
    assert charts_seen > 10  # the topics draw charts at their defaults
    assert failures == []
    assert problems == [], problems
