"""What the cells of a topic's Jupyter notebook call: run an experiment, show its result.

A topic's notebook (built by :mod:`whylab.explorer.content.ipynb`) runs each experiment
with :func:`run` -- the defaults overlaid with the reader's parameters, checked
against their bounds exactly as the explorer checks them -- and shows the
result with :func:`show`: the checks (passed, failed, not applicable or inconclusive, with
what was measured and expected, and which negative controls make each fail),
the measurements, the figures -- each with its data table collapsed under it,
the page's text alternative of the drawing -- and the tables, in the reader's
language. The figures are the explorer's own SVG drawings
(:mod:`whylab.explorer.figures`), made standalone by giving each one the colours
and strokes of the explorer's stylesheet, scoped to that drawing.

IPython is imported only by :func:`show`, inside a kernel; the rest of whylab
never needs it.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

from markupsafe import escape

from whylab.explorer.experiment import (
    LANGS,
    Experiment,
    GraphDiagram,
    Lang,
    LineChart,
    Result,
)
from whylab.explorer.figures.charts import WIDE, render_line_chart
from whylab.explorer.figures.graphs import render_graph
from whylab.explorer.web.check_summary import MARKS as STATE_MARKS
from whylab.explorer.web.check_summary import CheckSummary
from whylab.explorer.web.render import make_environment
from whylab.explorer.web.static_files import STATIC_DIR

SVG_NAMESPACE = "http://www.w3.org/2000/svg"

# Every figure shown in this kernel gets its own element id, so two drawings in one
# notebook page (the same cell run twice, say) never share an id or a style rule.
_figure_numbers = itertools.count(1)


def run(experiment: Experiment, **params: Any) -> Result:
    """Run ``experiment`` at its defaults overlaid with ``params``.

    A parameter outside its bounds, of the wrong type or unknown raises
    :class:`~whylab.explorer.experiment.ParamError` naming it and the bound it broke.
    """
    return experiment.run(**experiment.parse_params(params))


def _check_lang(lang: str) -> Lang:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    return lang  # type: ignore[return-value]


def show(experiment: Experiment, result: Result, lang: Lang = "en") -> None:
    """Display ``result`` in the notebook: checks and measurements, figures (each with its
    data table), tables."""
    from IPython.display import SVG, display

    lang = _check_lang(lang)
    summary = {
        "text/html": result_html(experiment, result, lang),
        "text/plain": result_text(result, lang),
    }
    display(summary, raw=True)
    for figure in result.figures:
        title = figure.title.get(lang)
        display({"text/html": f"<strong>{escape(title)}</strong>", "text/plain": title}, raw=True)
        element_id = f"whylab-{experiment.name}-figure-{next(_figure_numbers)}"
        display(SVG(standalone_svg(figure, lang, element_id)))
        display({"text/html": figure_table_html(figure, lang), "text/plain": ""}, raw=True)
    if result.tables or result.notes:
        display({"text/html": tables_html(result, lang), "text/plain": ""}, raw=True)


def show_in(lang: Lang) -> Callable[[Experiment, Result], None]:
    """:func:`show` with the language fixed: ``show = show_in("zh")``."""
    return functools.partial(show, lang=_check_lang(lang))


# ---------------------------------------------------------------- checks and measurements


def result_html(experiment: Experiment, result: Result, lang: Lang) -> str:
    """The checks and measurements of ``result`` as HTML (each check carries its id and state)."""
    template = make_environment().get_template("notebook_result.html")
    return template.render(lang=lang, experiment=experiment, result=result, marks=STATE_MARKS)


def tables_html(result: Result, lang: Lang) -> str:
    """The result's tables and notes as HTML."""
    template = make_environment().get_template("notebook_tables.html")
    return template.render(lang=lang, result=result)


def figure_table_html(figure: LineChart | GraphDiagram, lang: Lang) -> str:
    """The figure's data table, collapsed in a ``<details>``: the rows the page's data table
    shows, made by the page's own code (:func:`whylab.explorer.web.render.chart_table`,
    :func:`whylab.explorer.web.render.edge_rows`)."""
    template = make_environment().get_template("notebook_figure_table.html")
    return template.render(lang=lang, figure=figure)


def result_text(result: Result, lang: Lang) -> str:
    """The checks as plain text for frontends that show no HTML: the line they fold behind
    in HTML, then one a line."""
    from whylab.explorer.content.i18n import translate

    summary = CheckSummary.of(result.checks)
    lines = [f"{summary.mark} {summary.sentence(lang)}"] if result.checks else []
    for check in result.checks:
        if check.state == "not_applicable":
            assert check.when_applicable is not None
            values = translate("not_applicable", lang) + translate("colon", lang)
            values += check.when_applicable.get(lang)
        else:
            values = (
                f"{translate('measured', lang)} {check.measured_in(lang)}{translate('comma', lang)}"
                f"{translate('expected', lang)} {check.expected_in(lang)}"
            )
            if check.state == "inconclusive":
                values = translate("inconclusive", lang) + translate("colon", lang) + values
        lines.append(
            f"{STATE_MARKS[check.state]} {check.name.get(lang)}{translate('colon', lang)}{values}"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- figures


def _css_blocks(css: str) -> Iterator[tuple[str, str]]:
    """The top-level rules of a stylesheet as (prelude, body), comments removed."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    depth, start, prelude = 0, 0, ""
    for index, char in enumerate(css):
        if char == "{":
            if depth == 0:
                prelude, start = css[start:index].strip(), index + 1
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                yield prelude, css[start:index].strip()
                start = index + 1


def _scoped(selectors: str, scope: str) -> str:
    return ", ".join(
        scope + selector.strip()[len("svg") :] if selector.strip().startswith("svg") else scope
        for selector in selectors.split(",")
    )


@functools.lru_cache(maxsize=1)
def _figure_rules() -> tuple[tuple[str, str, str], ...]:
    """The explorer stylesheet's rules that draw figures, as (media query or "",
    selectors, declarations): the colour variables of both themes and every rule
    for ``svg`` elements, read once from ``explorer.css``."""
    rules: list[tuple[str, str, str]] = []
    for prelude, body in _css_blocks((STATIC_DIR / "explorer.css").read_text(encoding="utf-8")):
        if prelude == ":root" or all(s.strip().startswith("svg") for s in prelude.split(",")):
            rules.append(("", prelude, body))
        elif prelude.startswith("@media") and "prefers-color-scheme" in prelude:
            rules.extend((prelude, p, b) for p, b in _css_blocks(body) if p == ":root")
    return tuple(rules)


def figure_stylesheet(element_id: str) -> str:
    """The explorer's figure styles, every selector scoped to the drawing ``element_id``.

    Inside a standalone SVG (an ``<img>`` in JupyterLab) ``:root`` is the drawing;
    a notebook that inlines SVG into its page would otherwise let ``:root`` and
    ``svg text`` rules reach the rest of the page, hence the scope.
    """
    scope = f"svg#{element_id}"
    parts = []
    for media, selectors, declarations in _figure_rules():
        rule = f"{_scoped(selectors, scope)} {{ {declarations} }}"
        parts.append(f"{media} {{ {rule} }}" if media else rule)
    # The page paints a surface under its figures; a notebook's own background may be
    # dark or light, so the drawing brings its theme's surface along.
    parts.append(f"{scope} {{ background: var(--surface); }}")
    return "\n".join(parts)


def standalone_svg(figure: LineChart | GraphDiagram, lang: Lang, element_id: str) -> str:
    """``figure`` drawn by the explorer's own SVG code, with its namespace and styles."""
    if isinstance(figure, LineChart):
        markup = render_line_chart(figure, lang, element_id, WIDE)
    elif isinstance(figure, GraphDiagram):
        markup = render_graph(figure, lang, element_id)
    else:
        raise TypeError(f"cannot draw {type(figure).__name__}")
    opening_end = markup.index(">") + 1
    opening = markup[:opening_end].replace("<svg ", f'<svg xmlns="{SVG_NAMESPACE}" ', 1)
    style = f"<style>{figure_stylesheet(element_id)}</style>"
    return opening + style + markup[opening_end:]
