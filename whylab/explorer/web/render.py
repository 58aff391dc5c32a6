"""Turn topics and run records into HTML: the Jinja environment and the page models.

The live server (:mod:`whylab.explorer.web.app`) and the static export
(:mod:`whylab.explorer.web.export`) render the same templates. They differ only in
:class:`Links` -- absolute paths on the server, relative ``index.html`` files in
an export -- and in whether experiment forms can run.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, pass_context, select_autoescape
from markupsafe import Markup, escape

import whylab
from whylab.explorer.content.i18n import LANG_NAMES, bound_messages, other_lang, translate
from whylab.explorer.content.ipynb import has_notebook, notebook_filename
from whylab.explorer.content.prose import HtmlBlock, Placement, block_anchor
from whylab.explorer.content.search import Hit
from whylab.explorer.content.sections import BLOCK_LEVEL, Section
from whylab.explorer.content.topics import Tag, Topic, TopicRegistry
from whylab.explorer.experiment import (
    LANGS,
    Experiment,
    GraphDiagram,
    Lang,
    LineChart,
    Param,
    Text,
    format_number,
    in_language,
)
from whylab.explorer.figures.charts import COMPACT, WIDE, render_line_chart
from whylab.explorer.figures.graphs import render_graph_figure
from whylab.explorer.runs.service import RunRecord, format_param
from whylab.explorer.runs.timing import Measurement, TimingRun
from whylab.explorer.web.check_summary import CheckSummary, ControlOutcome
from whylab.explorer.web.seo import home_seo, topic_seo
from whylab.explorer.web.static_files import fingerprint

PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE_DIR / "templates"
MAX_TABLE_ROWS = 200


class Links:
    """Where things live: server paths, or relative files of a static export.

    ``depth`` is how many folders below the export root the current page sits;
    ``None`` means the live server.
    """

    def __init__(
        self, depth: int | None = None, live_url: str | None = None, public_url: str | None = None
    ):
        self.exported = depth is not None
        self.root = "/" if depth is None else "../" * depth
        self.live_url = live_url.rstrip("/") if live_url else None
        self.public_url = public_url.rstrip("/") if public_url else None

    def canonical(self, lang: Lang, slug: str | None = None, tag: str | None = None) -> str | None:
        """A home (``tag`` filtered) or topic page's address, without query: absolute under
        the public URL; else root-relative on the server, None in an export (see seo)."""
        if self.exported:
            path = f"/{lang}/" + (f"topics/{slug}/" if slug else f"tags/{tag}/" if tag else "")
        elif slug:
            path = f"/{lang}/topics/{quote(slug)}"
        else:
            path = f"/{lang}/" + (f"?{urlencode({'tag': tag})}" if tag else "")
        if self.public_url:
            return self.public_url + path
        return None if self.exported else path

    def site_root(self) -> str:
        """The language chooser (``/``: by Accept-Language on the server, links in an export)."""
        return (self.public_url or "") + "/"

    def home(self, lang: Lang, tag: str | None = None, query: str | None = None) -> str:
        if self.exported:
            return (
                f"{self.root}{lang}/tags/{tag}/index.html"
                if tag
                else f"{self.root}{lang}/index.html"
            )
        params = {k: v for k, v in (("q", query), ("tag", tag)) if v}
        return f"/{lang}/" + (f"?{urlencode(params)}" if params else "")

    def topic(self, lang: Lang, slug: str, query: str = "", anchor: str = "") -> str:
        if self.exported:
            path = f"{self.root}{lang}/topics/{slug}/index.html"
        else:
            path = f"/{lang}/topics/{quote(slug)}" + (f"?{query}" if query else "")
        return path + (f"#{anchor}" if anchor else "")

    def static(self, name: str) -> str:
        if self.exported:
            return f"{self.root}static/{name}"
        return f"/static/{name}?v={fingerprint(name)}"

    def fragment(self, lang: Lang, slug: str, experiment: str) -> str:
        """The result-fragment URL the page script fetches (live server only)."""
        return f"/{lang}/topics/{slug}/experiments/{experiment}/result"

    def control_run(self, lang: Lang, slug: str, experiment: str, leaf: str = "control-run") -> str:
        """A control run's page (``leaf="control-result"``: its fragment; live server only)."""
        return f"/{lang}/topics/{quote(slug)}/experiments/{experiment}/{leaf}"

    def source(self, lang: Lang, slug: str, experiment: str) -> str:
        """The page with an experiment's source code (live server only)."""
        return f"/{lang}/topics/{quote(slug)}/experiments/{experiment}/source"

    def notebook(self, lang: Lang, slug: str) -> str:
        """The topic's Jupyter notebook in ``lang`` (see :mod:`whylab.explorer.content.ipynb`)."""
        if self.exported:
            return f"{self.root}{lang}/topics/{slug}/notebook.ipynb"
        return f"/{lang}/topics/{quote(slug)}/notebook.ipynb"

    def measure(self, lang: Lang, slug: str, experiment: str) -> str:
        """Where the no-JavaScript form posts to measure a timing experiment (live only)."""
        return f"/{lang}/topics/{quote(slug)}/experiments/{experiment}/measure"

    def api_experiment(self, slug: str, experiment: str, query: str = "") -> str:
        """The JSON API URL of a run (live server only)."""
        return f"/api/topics/{slug}/experiments/{experiment}" + (f"?{query}" if query else "")

    def live_topic(self, lang: Lang, slug: str, anchor: str) -> str | None:
        if self.live_url is None:
            return None
        return f"{self.live_url}/{lang}/topics/{slug}#{anchor}"


# ---------------------------------------------------------------- view models


@dataclass
class Card:
    topic: Topic
    snippet: str = ""
    marks: tuple[tuple[int, int], ...] = ()  # matched words in the snippet
    section: str = ""  # the id of the section a search matched best, "" for none
    section_title: str = ""
    section_marks: tuple[tuple[int, int], ...] = ()  # matched words in its title


def highlight(text: str, marks: Iterable[tuple[int, int]]) -> Markup:
    """``text`` escaped, with the (start, end) spans in ``marks`` wrapped in ``<mark>``."""
    pieces, done = [], 0
    for start, end in marks:
        pieces += [escape(text[done:start]), Markup("<mark>"), escape(text[start:end])]
        pieces.append(Markup("</mark>"))
        done = end
    pieces.append(escape(text[done:]))
    return Markup("").join(pieces)


@dataclass
class ExperimentView:
    """One experiment (or diagram) block on a topic page."""

    experiment: Experiment
    kind: str  # "experiment" or "diagram"
    values: dict[str, Any]  # what the form shows: parsed values, or the raw text of a bad one
    record: RunRecord | None = None
    error: str = ""
    param_errors: dict[str, str] = field(default_factory=dict)
    result_html: Markup | None = None  # the result block, when already rendered (or cached)
    measurement: Measurement | None = None  # a timing experiment's latest, on the live server
    timing_run: TimingRun | None = None  # ... and its run now queued or running, if any

    @property
    def anchor(self) -> str:
        return block_anchor(self.kind, self.experiment.name)

    def query(self, prefixed: bool) -> str:
        """The parameters as a query string; ``prefixed`` names them ``experiment.param``."""
        values = self.record.params if self.record else self.values
        prefix = f"{self.experiment.name}." if prefixed else ""
        return urlencode(
            [(f"{prefix}{p.name}", input_value(values[p.name])) for p in self.experiment.params]
        )


def input_value(value: Any) -> str:
    """What a form field shows: a parsed value formatted, or the raw text of a rejected one."""
    return value if isinstance(value, str) else format_param(value)


@dataclass(frozen=True)
class SourceCode:
    """Where an experiment's function lives and its text, as this process loaded it."""

    path: str  # relative to the topics folder, e.g. "fft/experiments.py"
    line: int
    code: str


def experiment_source(experiment: Experiment) -> SourceCode | None:
    """The source of the function that computes ``experiment``'s claims (the running code,
    read back by :mod:`inspect`), or None where Python cannot find it."""
    return _source_of(experiment.run)


@functools.lru_cache(maxsize=256)
def _source_of(function: Any) -> SourceCode | None:
    function = inspect.unwrap(function)
    try:
        lines, first = inspect.getsourcelines(function)
        filename = Path(inspect.getsourcefile(function) or "")
    except (OSError, TypeError):
        return None
    path = f"{filename.parent.name}/{filename.name}"
    return SourceCode(path, first, textwrap.dedent("".join(lines)))


def describe_params(record: RunRecord, experiment: Experiment, lang: Lang) -> str:
    """``Amplitude = 2.0 V, Seed = 3``: the parameters of a run, in declaration order.

    A choice is shown by its label, as the form shows it ("two tones + noise"
    rather than ``tones``).
    """
    parts = []
    for param in experiment.params:
        unit = f" {param.unit}" if param.unit else ""
        raw = record.params[param.name]
        if param.kind == "choice" and param.choice_labels and raw in param.choices:
            value = param.choice_labels[param.choices.index(raw)].get(lang)
        else:
            value = format_param(raw)
        parts.append(f"{param.label.get(lang)} = {value}{unit}")
    return translate("comma", lang).join(parts)


def format_value(value: Any, lang: Lang = "en") -> str:
    """Metrics and table cells: ints as they are, floats as :func:`format_number` writes
    them (for every number on the site alike), True/False as yes/no in ``lang``."""
    if isinstance(value, bool):
        return translate("yes" if value else "no", lang)
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_number(value)
    return str(value)


def is_number(value: Any) -> bool:
    """A table cell that holds a number (right-aligned, so digits line up)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        text = value.strip().replace("−", "-").replace("×", "").replace(",", "")
        try:
            float(text)
        except ValueError:
            return False
        return True
    return False


def natural_key(text: str) -> tuple:
    """Sort key reading runs of digits as numbers: ``n_4 < n_16 < n_256``."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower())
        for part in re.split(r"(\d+)", text)
        if part
    )


@dataclass(frozen=True)
class MetricRow:
    label: str
    value: str
    unit: str
    numeric: bool


def metric_rows(experiment: Experiment, metrics: dict[str, Any], lang: Lang) -> list[MetricRow]:
    """The metrics as a page shows them: declared labels and units first, in declaration
    order; any undeclared metric after them by its code name, numbers sorted as numbers."""
    declared = {m.name: m for m in experiment.metrics}
    names = [m.name for m in experiment.metrics if m.name in metrics]
    names += sorted((n for n in metrics if n not in declared), key=natural_key)
    rows = []
    for name in names:
        metric = declared.get(name)
        value = metrics[name]
        rows.append(
            MetricRow(
                metric.label.get(lang) if metric else name,
                format_value(value, lang),
                metric.unit if metric else "",
                is_number(value),
            )
        )
    return rows


SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
CARD_SENTENCES = 2


def card_summary(summary: str) -> str:
    """The first two sentences of a summary: a home-page card is the question and about
    two sentences, so cards line up however long a topic's summary runs."""
    sentences = [s for s in SENTENCE_END.split(summary.strip()) if s.strip()]
    return " ".join(s.strip() for s in sentences[:CARD_SENTENCES]).replace("。 ", "。")


def chart_table(chart: LineChart, lang: Lang) -> tuple[list[str], list[list[str]], int]:
    """The chart's data as (header, first rows, total rows); one x column when series share x.

    Only the rows shown are formatted: a long series costs nothing beyond them.
    """
    first_x = list(chart.series[0].x) if chart.series else []
    if all(list(s.x) == first_x for s in chart.series):
        header = [chart.x_label.get(lang), *(s.name.get(lang) for s in chart.series)]
        rows = [
            [format_value(float(first_x[i])), *(format_value(float(s.y[i])) for s in chart.series)]
            for i in range(min(len(first_x), MAX_TABLE_ROWS))
        ]
        return header, rows, len(first_x)
    header = [translate("series", lang), chart.x_label.get(lang), chart.y_label.get(lang)]
    points = [(s.name.get(lang), x, y) for s in chart.series for x, y in zip(s.x, s.y, strict=True)]
    rows = [
        [name, format_value(float(x)), format_value(float(y))]
        for name, x, y in points[:MAX_TABLE_ROWS]
    ]
    return header, rows, len(points)


def edge_rows(diagram: GraphDiagram, lang: Lang) -> list[tuple[str, str, str]]:
    """Edges with node labels instead of ids, for the diagram's data table."""
    labels = {node.id: in_language(node.label, lang) for node in diagram.nodes}
    return [(labels.get(s, s), labels.get(t, t), label) for s, t, label in diagram.edges]


# ---------------------------------------------------------------- the Jinja environment


@pass_context
def _t(context, key: str, **values: object) -> str:
    return translate(key, context["lang"], **values)


@pass_context
def _text(context, value: str | Text) -> str:
    return in_language(value, context["lang"])


@pass_context
def _figure_svg(context, figure, element_id: str) -> Markup:
    lang = context["lang"]
    if isinstance(figure, LineChart):
        # Both drawings go out; the stylesheet shows the compact one on phones.
        wide = render_line_chart(figure, lang, element_id, WIDE)
        compact = render_line_chart(figure, lang, f"{element_id}-compact", COMPACT)
        return Markup(wide + compact)
    if isinstance(figure, GraphDiagram):
        return Markup(render_graph_figure(figure, lang, element_id))
    raise TypeError(f"cannot draw {type(figure).__name__}")


def nearest_topic(path: str, registry: TopicRegistry) -> Topic | None:
    """The topic a mistyped address most likely meant: the one whose slug is closest to a
    segment of ``path`` (``/en/topics/fftt`` -> fft), or None when none is close."""
    slugs = [topic.slug for topic in registry]
    for segment in reversed([s for s in path.lower().split("/") if s][-4:]):
        # No slug is longer than 64 characters: a longer segment is no typo of one.
        close = difflib.get_close_matches(segment[:64], slugs, n=1, cutoff=0.75)
        if close:
            return registry.get(close[0])
    return None


def show_bound(param: Param, value: float) -> str:
    """A bound as the range under a field shows it: an angle in radians as a multiple of π
    when it is one (``2π ≈ 6.283185307``), anything else as :meth:`Param.show` does."""
    shown = param.show(value)
    if param.unit != "rad" or value == 0:
        return shown
    for denominator in (1, 2, 3, 4, 6, 8, 12):
        numerator = round(value / math.pi * denominator)
        if numerator and math.isclose(value, numerator * math.pi / denominator, rel_tol=1e-9):
            top = "π" if numerator == 1 else f"{numerator}π"
            multiple = top if denominator == 1 else f"{top}/{denominator}"
            return f"{multiple} ≈ {shown}"
    return shown


def slider_scale(param: Param) -> str:
    """How a float parameter's slider maps its travel: ``log`` over two decades or more
    (0.01 to 100 would leave the first percent of the travel for 0.01 to 1), else ``linear``."""
    assert param.minimum is not None and param.maximum is not None
    if param.minimum > 0 and param.maximum / param.minimum >= 100:
        return "log"
    return "linear"


@pass_context
def _bound_messages(context, param: Param) -> dict[str, str]:
    return bound_messages(param, context["lang"])


@pass_context
def _chart_table(context, chart: LineChart):
    return chart_table(chart, context["lang"])


@pass_context
def _value(context, value: Any) -> str:
    return format_value(value, context["lang"])


@pass_context
def _metric_rows(context, experiment: Experiment, metrics: dict[str, Any]) -> list[MetricRow]:
    return metric_rows(experiment, metrics, context["lang"])


def make_environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        t=_t,
        text=_text,
        figure_svg=_figure_svg,
        chart_table=_chart_table,
        edge_rows=edge_rows,
        LANGS=LANGS,
        LANG_NAMES=LANG_NAMES,
        other_lang=other_lang,
        version=whylab.__version__,
        input_value=input_value,
        highlight=highlight,
        card_summary=card_summary,
        experiment_source=experiment_source,
        has_notebook=has_notebook,
        notebook_filename=notebook_filename,
        value=_value,
        metric_rows=_metric_rows,
        bound_messages=_bound_messages,
        show_bound=show_bound,
        slider_scale=slider_scale,
        format_param=format_param,
        describe_params=describe_params,
        check_summary=CheckSummary.of,
        control_outcome=ControlOutcome.of,
        MAX_TABLE_ROWS=MAX_TABLE_ROWS,
    )
    env.tests["number"] = is_number
    env.tests["linechart"] = lambda f: isinstance(f, LineChart)
    env.tests["graph"] = lambda f: isinstance(f, GraphDiagram)
    env.tests["htmlblock"] = lambda s: isinstance(s, HtmlBlock)
    env.tests["placement"] = lambda s: isinstance(s, Placement)
    return env


# ---------------------------------------------------------------- page contexts


def _alternates(path_for: Any) -> dict[str, str]:
    """The same page in every language (for the switch and ``<link rel=alternate>``)."""
    return {code: path_for(code) for code in LANGS}


def home_context(
    registry: TopicRegistry,
    lang: Lang,
    links: Links,
    query: str = "",
    tag: str = "",
    hits: Iterable[Hit] | None = None,
) -> dict[str, Any]:
    """Everything home.html needs: the cards (all, filtered by tag, or search hits)."""
    tags = registry.tags()
    active_tag: Tag | None = next((t for t in tags if t.key == tag), None)
    if hits is not None:
        cards = [
            Card(
                registry.topics[h.slug], h.snippet, h.marks,
                h.section, h.section_title, h.section_marks,
            )  # fmt: skip
            for h in hits
            if h.slug in registry.topics
        ]
    else:
        cards = [Card(t) for t in registry]
    if active_tag is not None:
        cards = [c for c in cards if active_tag.key in {t.key for t in c.topic.tags}]
    alternates = _alternates(
        lambda code: links.home(
            code, tag=active_tag.key if active_tag else None, query=query or None
        )
    )
    return {
        "lang": lang,
        "links": links,
        "registry": registry,
        "tags": tags,
        "active_tag": active_tag,
        "query": query,
        "cards": cards,
        "searched": hits is not None,
        "alternates": alternates,
        # A search listing is not a page of its own: kept out of the index.
        "seo": home_seo(links, lang, alternates, active_tag and active_tag.key, bool(query)),
    }


@dataclass(frozen=True)
class TocEntry:
    """One line of a topic page's table of contents: a prose heading or a block, with the
    lines nested under it (a section's subsections and blocks)."""

    id: str
    text: str
    children: list[TocEntry] = field(default_factory=list)


def table_of_contents(sections: Iterable[Section]) -> list[TocEntry]:
    """The page's sections as its contents show them: subsections under their section, and
    each experiment or diagram block under the heading it follows."""
    top: list[TocEntry] = []
    section: TocEntry | None = None  # the level-2 heading read last
    latest: TocEntry | None = None  # the heading read last, at any level
    for found in sections:
        entry = TocEntry(found.id, found.title)
        if found.level == BLOCK_LEVEL:
            (latest.children if latest is not None else top).append(entry)
            continue
        latest = entry
        if found.level == 2 or section is None:
            top.append(entry)
            section = entry
        else:
            section.children.append(entry)
    return top


def neighbours(registry: TopicRegistry, topic: Topic) -> tuple[Topic | None, Topic | None]:
    """The topics before and after ``topic`` in home-page order."""
    ordered = list(registry)
    index = next(i for i, t in enumerate(ordered) if t.slug == topic.slug)
    before = ordered[index - 1] if index > 0 else None
    after = ordered[index + 1] if index + 1 < len(ordered) else None
    return before, after


def topic_context(
    topic: Topic,
    lang: Lang,
    links: Links,
    views: dict[str, ExperimentView],
    page_query: list[tuple[str, str]],
    registry: TopicRegistry,
) -> dict[str, Any]:
    query = urlencode(page_query)
    previous_topic, next_topic = neighbours(registry, topic)
    meta = topic.meta[lang]
    alternates = _alternates(lambda code: links.topic(code, topic.slug, query))
    return {
        "toc": table_of_contents(topic.sections(lang)),
        "previous_topic": previous_topic,
        "next_topic": next_topic,
        "lang": lang,
        "links": links,
        "topic": topic,
        "meta": meta,
        "segments": topic.prose[lang].segments,
        "views": views,
        "page_query": page_query,
        "alternates": alternates,
        "seo": topic_seo(links, lang, meta, topic.slug),
    }
