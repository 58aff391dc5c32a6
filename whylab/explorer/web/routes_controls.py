"""Control runs ("Break it"): an experiment run under one of its declared negative controls.

``/{lang}/topics/{slug}/experiments/{name}/control-result?control=<control>`` is the
fragment the page script puts under a block's "Break it" form;
``.../control-run?control=<control>`` is the same run on a page of its own, where the
form leads without the script. Either runs the experiment with that control
switched on, at the parameters the control declares and no others: every other
query key is ignored, so no value a reader types reaches a control run, and a run
is as bounded as the controls audit's (``whylab check --controls``). It goes
through the client's CPU-time budget and the worker pool like any run
(:func:`whylab.explorer.web.blocks.control_run_for`), and its answer is labelled
as a control run, sent ``Cache-Control: no-store`` and kept nowhere: not in the
result cache, the fragment cache or the page cache.

A timing experiment has no control runs. Each would take a turn in the server's
one line of measurements (:mod:`whylab.explorer.runs.timing`), holding up the
readers' own measurements for as long as its time limit; and under a control a
timing check may come out inconclusive rather than failed on a loaded machine
(the audit reruns such a run up to three times), so one run could not be relied
on to show the claim fail.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import escape

from whylab.explorer.content.i18n import translate
from whylab.explorer.content.topics import Topic
from whylab.explorer.experiment import LANGS, Control, Experiment
from whylab.explorer.runs.errors import retry_after_header
from whylab.explorer.web.blocks import control_view, new_view
from whylab.explorer.web.deps import find_experiment, query_problem
from whylab.explorer.web.error_pages import PageNotFound, error_page, html
from whylab.explorer.web.render import ExperimentView
from whylab.explorer.web.request_info import (
    CLIENT_CLOSED_REQUEST,
    ClientGone,
    unless_client_leaves,
)
from whylab.explorer.web.state import ExplorerState

router = APIRouter()

NO_STORE = {"Cache-Control": "no-store"}


def declared_control(experiment: Experiment, request: Request) -> Control | None:
    """The control the query names, if ``experiment`` declares it (a timing one: none)."""
    return experiment.runnable_control(request.query_params.get("control", ""))


def block_view(topic: Topic, experiment: Experiment) -> ExperimentView:
    kind = next((p.kind for p in topic.placements() if p.name == experiment.name), "experiment")
    return new_view(experiment, kind, {})


async def run_into(
    request: Request, view: ExperimentView, topic: Topic, control: Control, lang: str
) -> tuple[int, dict[str, str]] | None:
    """Run ``view``'s experiment under ``control``: the status and headers to answer with,
    or None when the reader went away."""
    state: ExplorerState = request.app.state
    try:
        status, retry_after_s = await unless_client_leaves(
            request, control_view(state, request, view, topic, control, lang)
        )
    except ClientGone:
        return None
    headers = dict(NO_STORE)
    if retry_after_s is not None:
        headers["Retry-After"] = retry_after_header(retry_after_s)
    return status, headers


def _fragment_error(lang: str, key: str, status: int, message: str = "") -> HTMLResponse:
    text = message or translate(key, lang)
    return HTMLResponse(f'<p class="run-error" role="alert">{escape(text)}</p>', status, NO_STORE)


@router.get("/{lang}/topics/{slug}/experiments/{name}/control-result", include_in_schema=False)
async def control_fragment(request: Request, lang: str, slug: str, name: str) -> Response:
    state: ExplorerState = request.app.state
    found = find_experiment(state, slug, name)
    if lang not in LANGS or found is None:
        return _fragment_error(lang if lang in LANGS else "en", "not_found", 404)
    topic, experiment = found
    problem = query_problem(state, request, lang)
    if problem is not None:
        return _fragment_error(lang, "", 422, problem)
    control = declared_control(experiment, request)
    if control is None:
        return _fragment_error(lang, "no_such_control", 404)
    view = block_view(topic, experiment)
    answer = await run_into(request, view, topic, control, lang)
    if answer is None:
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    status, headers = answer
    context = {
        "lang": lang,
        "links": state.links,
        "topic": topic,
        "view": view,
        "control": control,
        "heading": "h3",
    }
    return html(state, "_control_result.html", context, status, headers)


@router.get("/{lang}/topics/{slug}/experiments/{name}/control-run", include_in_schema=False)
async def control_page(request: Request, lang: str, slug: str, name: str) -> Response:
    state: ExplorerState = request.app.state
    found = find_experiment(state, slug, name)
    if lang not in LANGS or found is None:
        raise PageNotFound(lang if lang in LANGS else "en")
    topic, experiment = found
    problem = query_problem(state, request, lang)
    if problem is not None:
        return error_page(state, lang, 422, problem, NO_STORE)
    control = declared_control(experiment, request)
    if control is None:
        return error_page(state, lang, 404, translate("no_such_control", lang), NO_STORE)
    view = block_view(topic, experiment)
    answer = await run_into(request, view, topic, control, lang)
    if answer is None:
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    status, headers = answer
    links = state.links
    def page_in(code: str) -> str:
        return f"{links.control_run(code, topic.slug, experiment.name)}?control={control.name}"

    context = {
        "lang": lang,
        "links": links,
        "topic": topic,
        "view": view,
        "control": control,
        "alternates": {code: page_in(code) for code in LANGS},
    }
    return html(state, "control_run.html", context, status, headers)
