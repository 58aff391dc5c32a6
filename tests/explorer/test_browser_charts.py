"""Charts in a real browser: on a 390x844 phone every chart of every topic page fits the
width with its tick labels and series labels at 11 px or more; the two series of a
two-series chart are drawn 3:1 apart in contrast, in the light and the dark theme; any
two series drawn less than 3:1 apart differ in dash pattern and in marker shape; and
in a chart of three or more each series' label at its line's end names it in the
page's language, inside the drawing and clear of the other labels, the ticks, the
axis names and the legend (on the phone and on a wide screen).

Reuses the server and browser fixtures of conftest.py and test_browser.py's phone
viewport. The contrast is computed here from the colours the browser actually drew
with (``getComputedStyle``), by WCAG 2's definition, so a stylesheet that does not
reach the lines fails too; the names come from the JSON API, not from the drawing.
"""

from __future__ import annotations

import itertools
import re

import pytest
from test_browser import PHONE, open_in

from whylab.explorer.figures.charts import DIRECT_LABELS_FROM

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
    const series = [...svg.querySelectorAll('path.series')].map((p) => {
      const css = p.getAttribute('class').split(' ')[1];
      const marker = svg.querySelector('path.marker.' + css);
      // the shape: the first marker's path after the move to its centre
      const shape = marker
        ? marker.getAttribute('d').split('M')[1].replace(/^[-\\d.]+ [-\\d.]+/, '')
        : null;
      return {stroke: getComputedStyle(p).stroke, dash: getComputedStyle(p).strokeDasharray,
              shape: shape};
    });
    const labels = [...svg.querySelectorAll('text.direct-label')].map((t) => {
      const r = t.getBoundingClientRect();
      return {series: Number(t.dataset.series), text: t.textContent,
              size: parseFloat(getComputedStyle(t).fontSize) * scale,
              left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    });
    const texts = [...svg.querySelectorAll('text.tick, text.axis-label, text.legend-label')].map(
      (t) => {
        const r = t.getBoundingClientRect();
        return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
      });
    return {id: svg.id, left: box.left, right: box.right, top: box.top, bottom: box.bottom,
            ticks: ticks, strokes: strokes, series: series, labels: labels, texts: texts,
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


CHART_ID = re.compile(r"^[a-z]+-(?P<name>.+)-figure-(?P<figure>\d+)(?:-compact)?$")


def series_names(page, base_url: str, slug: str, name: str, figure: int, lang: str) -> list[str]:
    """The names of a figure's series in ``lang``, as the JSON API gives them."""
    answer = page.request.get(f"{base_url}/api/topics/{slug}/experiments/{name}")
    assert answer.ok, (slug, name, answer.status)
    figures = answer.json()["result"]["figures"]
    return [s["name"][lang] for s in figures[figure - 1]["series"]]


def overlap(a: dict, b: dict) -> float:
    """Area two boxes share, in square pixels."""
    width = min(a["right"], b["right"]) - max(a["left"], b["left"])
    height = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return max(0.0, width) * max(0.0, height)


def label_problems(chart: dict, names: list[str] | None) -> list[tuple]:
    """What is wrong with a drawn chart's direct labels (``names``: the series' names)."""
    found = []
    labels = chart["labels"]
    if names is not None:
        got = {label["series"]: label["text"] for label in labels}
        if got != (dict(enumerate(names)) if len(names) >= DIRECT_LABELS_FROM else {}):
            found.append(("labels do not name the series", got, names))
    for a, b in itertools.combinations(labels, 2):
        if overlap(a, b) > 1:
            found.append(("labels overlap", a["text"], b["text"], round(overlap(a, b), 1)))
    for a, b in itertools.product(labels, chart.get("texts", [])):
        if overlap(a, b) > 1:  # a tick, an axis name or the legend
            found.append(("label over other text", a["text"], b["text"], round(overlap(a, b), 1)))
    for label in labels:
        inside = (
            label["left"] >= chart["left"] - 0.5
            and label["right"] <= chart["right"] + 0.5
            and label["top"] >= chart["top"] - 0.5
            and label["bottom"] <= chart["bottom"] + 0.5
        )
        if not inside:
            found.append(("label leaves the drawing", label["text"]))
    return found


def cue_problems(chart: dict) -> list[tuple]:
    """Pairs of series drawn less than 3:1 apart that share a dash pattern or a marker."""
    found = []
    for a, b in itertools.combinations(chart["series"], 2):
        ratio = contrast(rgb(a["stroke"]), rgb(b["stroke"]))
        distinct = a["dash"] != b["dash"] and a["shape"] and b["shape"] and a["shape"] != b["shape"]
        if ratio < 3 and not distinct:
            found.append(("series below 3:1 without a second cue", round(ratio, 2), a, b))
    return found


LOW_CONTRAST_SAME_LOOK = {
    "stroke": "rgb(14, 46, 101)",
    "dash": "none",
    "shape": "m-3.5 0a3.5 3.5 0 1 0 7 0a3.5 3.5 0 1 0-7 0z",
}


def test_a_low_contrast_pair_with_one_look_and_overlapping_labels_is_flagged():
    """Negative controls of the checks below, on a made-up drawn chart."""
    twin = {**LOW_CONTRAST_SAME_LOOK, "stroke": "rgb(70, 26, 102)"}  # c0 and c1: 1.3:1
    chart = {"series": [LOW_CONTRAST_SAME_LOOK, twin]}
    assert len(cue_problems(chart)) == 1
    assert (
        len(cue_problems({"series": [LOW_CONTRAST_SAME_LOOK, {**twin, "dash": "7px, 4px"}]})) == 1
    )
    apart = {**twin, "dash": "7px, 4px", "shape": "m-3.2-3.2h6.4v6.4h-6.4z"}
    assert cue_problems({"series": [LOW_CONTRAST_SAME_LOOK, apart]}) == []
    box = {"left": 0, "right": 100, "top": 0, "bottom": 100}
    label = {"series": 0, "text": "a", "left": 50, "right": 90, "top": 10, "bottom": 25}
    crowded = {**box, "labels": [label, {**label, "series": 1, "text": "b", "top": 20}]}
    assert [p[0] for p in label_problems(crowded, None)] == ["labels overlap"]
    tick = {"text": "1000", "left": 80, "right": 99, "top": 20, "bottom": 30}
    on_tick = {**box, "labels": [label], "texts": [tick]}
    assert [p[0] for p in label_problems(on_tick, None)] == ["label over other text"]
    outside = {
        **box,
        "labels": [
            label,
            {**label, "series": 1, "text": "b", "left": 95, "right": 120, "top": 40, "bottom": 55},
        ],
    }
    assert [p[0] for p in label_problems(outside, None)] == ["label leaves the drawing"]
    third = {**label, "series": 2, "text": "c", "top": 60, "bottom": 75}
    english = {
        **box,
        "labels": [label, {**label, "series": 1, "text": "sum", "top": 40, "bottom": 55}, third],
    }
    assert [p[0] for p in label_problems(english, ["a", "合成波", "c"])] == [
        "labels do not name the series"
    ]
    # a chart of two is named by its legend alone: labels at its ends are flagged
    two = {**box, "labels": [label, {**label, "series": 1, "text": "b", "top": 40, "bottom": 55}]}
    assert [p[0] for p in label_problems(two, ["a", "b"])] == ["labels do not name the series"]


@pytest.mark.parametrize(
    ("lang", "scheme", "viewport"),
    [("en", "light", PHONE), ("zh", "dark", PHONE), ("zh", "light", None)],
    ids=["en-light-phone", "zh-dark-phone", "zh-light-wide"],
)
def test_every_chart_fits_reads_without_colour_and_names_its_series(
    browser,  # noqa: F811
    base_url,  # noqa: F811
    registry,  # noqa: F811
    lang,
    scheme,
    viewport,
):
    context, page, problems = open_in(browser, viewport, color_scheme=scheme)
    failures, charts_seen, labelled, low_pairs = [], 0, 0, 0
    try:
        for topic in registry:
            page.goto(f"{base_url}/{lang}/topics/{topic.slug}", timeout=120_000)
            for chart in page.evaluate(MEASURE_CHARTS):
                charts_seen += 1
                where = (topic.slug, chart["id"])
                found = CHART_ID.match(chart["id"])
                assert found, chart["id"]
                names = series_names(
                    page, base_url, topic.slug, found["name"], int(found["figure"]), lang
                )
                failures += [(*where, *p) for p in label_problems(chart, names)]
                failures += [(*where, *p) for p in cue_problems(chart)]
                labelled += len(chart["labels"])
                low_pairs += sum(
                    contrast(rgb(a["stroke"]), rgb(b["stroke"])) < 3
                    for a, b in itertools.combinations(chart["series"], 2)
                )
                if viewport is PHONE:
                    if chart["left"] < 0 or chart["right"] > PHONE["width"]:
                        failures.append((*where, "wider than the phone", chart["right"]))
                    small = [round(size, 1) for size in chart["ticks"] if size < 11]
                    if small:
                        failures.append((*where, "tick labels under 11 px", small[:3]))
                    small = [
                        round(label["size"], 1) for label in chart["labels"] if label["size"] < 11
                    ]
                    if small:
                        failures.append((*where, "series labels under 11 px", small[:3]))
                strokes = [rgb(s) for s in chart["strokes"]]
                if len(strokes) == 2:
                    for a, b in itertools.combinations(strokes, 2):
                        if contrast(a, b) < 3:
                            failures.append((*where, "series below 3:1", round(contrast(a, b), 2)))
            if (
                viewport is PHONE
                and page.evaluate("document.documentElement.scrollWidth") > PHONE["width"]
            ):
                failures.append((topic.slug, "page scrolls sideways"))
    finally:
        context.close()
    assert charts_seen > 10  # the topics draw charts at their defaults
    assert labelled > 30 and low_pairs > 10  # ... and reach the label and the cue checks
    assert failures == []
    assert problems == [], problems
