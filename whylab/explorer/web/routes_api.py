"""The JSON API: topics, search, experiment runs and control runs (``/api/...``, in
/openapi.json).

A control run (``/api/topics/{slug}/experiments/{name}/controls/{control}``) is the
page's "Break it" as data: the experiment under one of its declared negative
controls, at the parameters the control declares (it takes none from the query),
through the same budget and workers as any run, answered ``no-store`` and kept in
no cache; the answer says which checks the control is declared to break and which
of them this run failed, counted from its result.

Registered before the pages: ``/api/topics/x`` must not match ``/{lang}/topics/{slug}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response

from whylab.explorer.content.topics import Topic
from whylab.explorer.experiment import LANGS, Control, Experiment
from whylab.explorer.runs.errors import RunFailure, retry_after_header
from whylab.explorer.runs.service import RunRecord
from whylab.explorer.web.blocks import control_run_for, run_for
from whylab.explorer.web.deps import (
    ApiAnswer,
    FoundExperiment,
    State,
    parse_api_params,
    query_problem,
)
from whylab.explorer.web.render import Links
from whylab.explorer.web.request_info import (
    CLIENT_CLOSED_REQUEST,
    ClientGone,
    client_of,
    unless_client_leaves,
)

router = APIRouter()


def topic_summary(topic: Topic, links: Links) -> dict[str, Any]:
    return {
        "slug": topic.slug,
        "order": topic.order,
        "title": {lang: topic.meta[lang].title for lang in LANGS},
        "question": {lang: topic.meta[lang].question for lang in LANGS},
        "summary": {lang: topic.meta[lang].summary for lang in LANGS},
        "tags": [{"key": t.key, "en": t.text.en, "zh": t.text.zh} for t in topic.tags],
        "url": {lang: links.topic(lang, topic.slug) for lang in LANGS},
    }


def param_schema(experiment: Experiment) -> list[dict[str, Any]]:
    return [
        {
            "name": p.name,
            "kind": p.kind,
            "default": p.parse(p.default),
            "label": {"en": p.label.en, "zh": p.label.zh},
            "unit": p.unit,
            "minimum": p.minimum,
            "maximum": p.maximum,
            "step": p.step,
            "choices": list(p.choices),
            "seed": p.seed,
        }
        for p in experiment.params
    ]


@router.get("/api/topics", tags=["topics"], summary="Every topic, in home-page order")
async def api_topics(state: State) -> list[dict[str, Any]]:
    return [topic_summary(t, state.links) for t in state.registry]


@router.get("/api/topics/{slug}", tags=["topics"], summary="One topic and its experiments")
async def api_topic(slug: str, state: State) -> JSONResponse:
    topic = state.registry.get(slug)
    if topic is None:
        return JSONResponse({"detail": f"no topic {slug[:60]!r}"}, 404)
    data = topic_summary(topic, state.links)
    data["experiments"] = [
        {
            "name": e.name,
            "title": {"en": e.title.en, "zh": e.title.zh},
            "description": {"en": e.description.en, "zh": e.description.zh},
            "timing": e.timing,
            "time_limit_s": e.time_limit_s,
            "params": param_schema(e),
            "url": f"/api/topics/{topic.slug}/experiments/{e.name}",
            "controls": [
                control_summary(topic, e, control)
                for control in e.controls
                if e.runnable_control(control.name) is not None
            ],
        }
        for e in topic.experiments.values()
    ]
    return JSONResponse(data)


def control_summary(topic: Topic, experiment: Experiment, control: Control) -> dict[str, Any]:
    """A runnable control as the topic's description lists it."""
    return {
        "name": control.name,
        "label": {"en": control.label.en, "zh": control.label.zh},
        "breaks": list(control.breaks),
        "params": dict(control.params),
        "url": f"/api/topics/{topic.slug}/experiments/{experiment.name}/controls/{control.name}",
    }


@router.get("/api/search", tags=["search"], summary="Search topics in both languages")
async def api_search(
    state: State,
    q: str = Query("", description="search text (cut to 200 characters)"),
    lang: str = Query("en", pattern="^(en|zh)$", description="language of titles and snippets"),
    limit: int = Query(20, ge=1, le=50),
) -> dict[str, Any]:
    query = " ".join(q.split())[: state.config.max_search_chars]
    hits = state.registry.search_index.search(query, lang, limit=limit) if query else []
    return {
        "query": query,
        "lang": lang,
        "hits": [
            {
                "slug": h.slug,
                "score": h.score,
                "title": h.title,
                "snippet": h.snippet,
                "url": state.links.topic(lang, h.slug),
                # The section that matched best ("" for none) and the link that lands on it.
                "section": h.section,
                "section_title": h.section_title,
                "section_url": state.links.topic(lang, h.slug, anchor=h.section),
            }
            for h in hits
        ],
    }


def api_experiment_params(
    request: Request,
    slug: str,
    name: str,
    found: FoundExperiment,
    state: State,
) -> tuple[Topic, Experiment, dict[str, Any]]:
    """The experiment the path names and its parameters parsed from the query (or 404, 422)."""
    if found is None:
        detail = f"no experiment {slug[:60]}/{name[:60]}"
        raise ApiAnswer(JSONResponse({"detail": detail}, 404))
    problem = query_problem(state, request, None)
    if problem is not None:
        raise ApiAnswer(JSONResponse({"detail": problem}, 422))
    topic, experiment = found
    return topic, experiment, parse_api_params(experiment, dict(request.query_params))


@router.get(
    "/api/topics/{slug}/experiments/{name}",
    tags=["experiments"],
    summary="Run an experiment (query parameters are its parameters)",
)
async def api_experiment(
    request: Request,
    slug: str,
    name: str,
    run: Annotated[tuple[Topic, Experiment, dict[str, Any]], Depends(api_experiment_params)],
    state: State,
) -> Response:
    """Every query parameter is an experiment parameter, e.g. ``?phase=0.5&seed=3``.

    The answer holds the parameters used (defaults filled in), the engine
    version, whether it came from the cache, and the result with its checks.
    """
    topic, experiment, params = run
    cached = await state.service.cached_json(topic, experiment, params)
    if cached is not None:
        return Response(cached, media_type="application/json")
    try:
        if experiment.timing:  # timing runs take their turn in the one line
            measured = state.timing.measure(topic, experiment, params, client_of(request))
            record = (await unless_client_leaves(request, measured)).record
            return JSONResponse(record.to_json())
        answer = await unless_client_leaves(
            request, run_for(state, request, topic, experiment, params)
        )
    except RunFailure as failure:
        return failure_answer(failure)
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    return JSONResponse(answer.record.to_json())


def failure_answer(failure: RunFailure, headers: dict[str, str] | None = None) -> JSONResponse:
    """A failed run as JSON: its message, and its Retry-After where it has one."""
    body: dict[str, Any] = {"detail": failure.message}
    headers = dict(headers or {})
    if failure.retry_after_s is not None:
        body["retry_after_s"] = failure.retry_after_s
        headers["Retry-After"] = retry_after_header(failure.retry_after_s)
    return JSONResponse(body, failure.status, headers=headers or None)


NO_STORE = {"Cache-Control": "no-store"}


def control_run_json(record: RunRecord, control: Control) -> dict[str, Any]:
    """A control run's record, with what its control declares and what this run broke."""
    failed = [c.id for c in record.result.checks if c.state == "failed" and c.id]
    return {
        **record.to_json(),
        "declared_to_break": list(control.breaks),
        "broke": [check_id for check_id in control.breaks if check_id in failed],
        "failed": failed,
    }


@router.get(
    "/api/topics/{slug}/experiments/{name}/controls/{control}",
    tags=["experiments"],
    summary="Run an experiment under one of its declared negative controls",
)
async def api_control_run(
    request: Request, slug: str, name: str, control: str, state: State
) -> Response:
    """The run "Break it" shows on the page: never the experiment's result, never cached.

    It takes no query parameters (a control runs at the parameters it declares).
    """
    topic = state.registry.get(slug)
    experiment = topic.experiments.get(name) if topic is not None else None
    declared = experiment.runnable_control(control) if experiment is not None else None
    if topic is None or experiment is None or declared is None:
        detail = f"no control {slug[:60]}/{name[:60]}/{control[:60]}"
        return JSONResponse({"detail": detail}, 404, headers=NO_STORE)
    problem = query_problem(state, request, None)
    if problem is None and request.query_params:
        problem = "a control run takes no parameters: it runs at the ones its control declares"
    if problem is not None:
        return JSONResponse({"detail": problem}, 422, headers=NO_STORE)
    try:
        answer = await unless_client_leaves(
            request, control_run_for(state, request, topic, experiment, declared)
        )
    except RunFailure as failure:
        return failure_answer(failure, NO_STORE)
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    return JSONResponse(control_run_json(answer.record, declared), headers=NO_STORE)
