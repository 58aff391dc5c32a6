"""Timing runs: one line for the whole server (see :mod:`whylab.explorer.runs.timing`).

The page script queues a run, polls its state and may cancel it (its state says
whether the client asking queued it, ``yours``: the cancel button is shown to
that client only, the one the server lets cancel it); without JavaScript the
form's "Measure" button posts to ``/measure``, which waits and redirects back.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from whylab.explorer.content.i18n import translate
from whylab.explorer.experiment import ParamError
from whylab.explorer.runs.errors import Overloaded, RateLimited, RunFailure, retry_after_header
from whylab.explorer.runs.timing import NotYourRun
from whylab.explorer.web.blocks import rate_limited
from whylab.explorer.web.deps import FoundTimingExperiment, PageLang, State, parse_api_params
from whylab.explorer.web.error_pages import PageNotFound, error_page
from whylab.explorer.web.request_info import (
    CLIENT_CLOSED_REQUEST,
    ClientGone,
    client_of,
    unless_client_leaves,
)

router = APIRouter()
page_router = APIRouter()  # the form's fallback: a page route, registered among the pages


def rate_limited_json(wait: float) -> JSONResponse:
    return JSONResponse(
        {"detail": "rate limit exceeded", "retry_after_s": wait},
        429,
        headers={"Retry-After": retry_after_header(wait)},
    )


def overloaded_json(failure: Overloaded) -> JSONResponse:
    return JSONResponse(
        {"detail": failure.message},
        503,
        headers={"Retry-After": retry_after_header(failure.retry_after_s)},
    )


@router.post(
    "/api/topics/{slug}/experiments/{name}/timing-runs",
    tags=["experiments"],
    summary="Queue a run of a timing experiment (query parameters are its parameters)",
    status_code=202,
)
async def api_queue_timing(
    request: Request,
    slug: str,
    name: str,
    found: FoundTimingExperiment,
    state: State,
) -> JSONResponse:
    if found is None:
        return JSONResponse({"detail": f"no timing experiment {slug[:60]}/{name[:60]}"}, 404)
    topic, experiment = found
    wait = await rate_limited(state, request)
    if wait:
        return rate_limited_json(wait)
    params = parse_api_params(experiment, dict(request.query_params))
    try:
        run = await state.timing.submit(topic, experiment, params, client_of(request))
    except Overloaded as failure:
        return overloaded_json(failure)
    except RateLimited as failure:
        return rate_limited_json(failure.retry_after_s)
    location = f"/api/timing-runs/{run.id}"
    described = state.timing.describe(run, client_of(request))
    return JSONResponse(described, 202, headers={"Location": location})


@router.get("/api/timing-runs/{run_id}", tags=["experiments"], summary="A timing run's state")
async def api_timing_run(request: Request, run_id: str, state: State) -> JSONResponse:
    run = state.timing.poll(run_id)
    if run is None:
        return JSONResponse({"detail": "no such timing run"}, 404)
    return JSONResponse(state.timing.describe(run, client_of(request)))


@router.delete("/api/timing-runs/{run_id}", tags=["experiments"], summary="Cancel a timing run")
async def api_cancel_timing_run(request: Request, run_id: str, state: State) -> JSONResponse:
    try:
        run = state.timing.cancel(run_id, client_of(request))
    except NotYourRun as refused:
        return JSONResponse({"detail": refused.message}, refused.status)
    if run is None:
        return JSONResponse({"detail": "no such timing run"}, 404)
    return JSONResponse(state.timing.describe(run, client_of(request)))


@page_router.post("/{lang}/topics/{slug}/experiments/{name}/measure", include_in_schema=False)
async def measure_without_script(
    request: Request,
    lang: PageLang,
    found: FoundTimingExperiment,
    state: State,
):
    if found is None:
        raise PageNotFound(lang)
    topic, experiment = found
    config = state.config
    body = (await request.body())[: config.max_query_bytes].decode("utf-8", "replace")
    fields = parse_qsl(body)[: config.max_query_params]
    back = state.links.topic(lang, topic.slug, urlencode(fields), f"experiment-{experiment.name}")
    prefix = experiment.name + "."
    raw = {k[len(prefix) :]: v for k, v in fields if k.startswith(prefix)}
    wait = await rate_limited(state, request)
    if wait:
        message = translate("rate_limited", lang, seconds=retry_after_header(wait))
        return error_page(state, lang, 429, message, {"Retry-After": retry_after_header(wait)})
    try:
        params = experiment.parse_params(raw)
    except ParamError:
        return RedirectResponse(back, status_code=303)  # the page shows the field error
    try:
        await unless_client_leaves(
            request, state.timing.measure(topic, experiment, params, client_of(request))
        )
    except RunFailure as failure:
        retry = failure.retry_after_s
        headers = None if retry is None else {"Retry-After": retry_after_header(retry)}
        return error_page(state, lang, failure.status, failure.message, headers)
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    return RedirectResponse(back, status_code=303)
