"""Filling a page's experiment blocks: parse the reader's parameters, then run an
ordinary experiment (through the client's CPU-time budget and the fragment cache) or
show a timing experiment's latest measurement; or fill a block with a control run
(through the same budget, never from or into a cache)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request
from markupsafe import Markup

import whylab
from whylab.explorer.content.i18n import param_error_message, translate
from whylab.explorer.content.topics import Topic
from whylab.explorer.experiment import Control, Experiment, ParamError
from whylab.explorer.runs.admission import Admission
from whylab.explorer.runs.errors import RateLimited, RunFailure, retry_after_header
from whylab.explorer.runs.result_json import dumps
from whylab.explorer.runs.service import RunAnswer
from whylab.explorer.web.render import ExperimentView
from whylab.explorer.web.request_info import client_of
from whylab.explorer.web.state import ExplorerState


async def _admitted(
    state: ExplorerState,
    request: Request,
    topic: Topic,
    experiment: Experiment,
    start: Callable[[str, Callable[[], Awaitable[None]] | None], Awaitable[RunAnswer]],
) -> RunAnswer:
    """``start(client, admit)`` for this client: charged its expected cost up front
    (``admit``), settled after. See whylab.explorer.runs.admission."""
    client, limiter = client_of(request), state.limiter
    admission = Admission(limiter, client, state.backends.calls)
    expected_s = state.service.costs.expected_s(topic, experiment)
    admit = (lambda: admission.admit(expected_s)) if limiter else None
    try:
        answer = await start(client, admit)
    except BaseException as error:
        await admission.settle_failure(error)
        raise
    await admission.settle(answer.cost_s or None)
    return answer


async def run_for(
    state: ExplorerState,
    request: Request,
    topic: Topic,
    experiment: Experiment,
    params: dict[str, Any],
) -> RunAnswer:
    """Run for this client, through its CPU-time budget. Raises RunFailure (RateLimited
    among them)."""
    return await _admitted(
        state,
        request,
        topic,
        experiment,
        lambda client, admit: state.service.run(
            topic, experiment, params, client=client, admit=admit
        ),
    )


async def control_run_for(
    state: ExplorerState, request: Request, topic: Topic, experiment: Experiment, control: Control
) -> RunAnswer:
    """A control run for this client (never cached), through the same budget as any run."""
    return await _admitted(
        state,
        request,
        topic,
        experiment,
        lambda client, admit: state.service.run_control(
            topic, experiment, control, client=client, admit=admit
        ),
    )


async def rate_limited(state: ExplorerState, request: Request) -> float:
    """Seconds this client must wait before starting a run (0: it may start now)."""
    if state.limiter is None:
        return 0.0
    return await state.backends.calls.call(state.limiter.wait_s, client_of(request))


def new_view(experiment: Experiment, kind: str, raw: dict[str, str]) -> ExperimentView:
    values = {**experiment.defaults(), **raw}
    return ExperimentView(experiment, kind, values)


def failed_view(view: ExperimentView, failure: RunFailure, lang: str) -> tuple[int, float | None]:
    """Say in ``view`` why its run failed; the HTTP status it deserves and a Retry-After."""
    if isinstance(failure, RateLimited):
        seconds = retry_after_header(failure.retry_after_s)
        view.error = translate("rate_limited", lang, seconds=seconds)
    else:
        view.error = failure.message
    return failure.status, failure.retry_after_s


def parse_into(view: ExperimentView, raw: dict[str, str], lang: str) -> dict[str, Any] | None:
    """The block's parameters parsed (and set as its values), or None with its error set."""
    try:
        params = view.experiment.parse_params(raw)
    except ParamError as error:
        view.error = param_error_message(error, view.experiment, lang)
        view.param_errors = {error.param: view.error}
        return None
    view.values = params
    return params


def fragment_key(
    state: ExplorerState, lang: str, topic: Topic, view: ExperimentView, params: dict[str, Any]
):
    """Where a rendered result block is kept, or None for one never kept (timing)."""
    if state.fragments is None or view.experiment.timing:
        return None
    canonical = dumps(params)
    experiment, version = view.experiment.name, whylab.__version__
    return (lang, topic.slug, topic.source_hash, experiment, view.kind, version, canonical)


async def run_view(
    state: ExplorerState,
    request: Request,
    view: ExperimentView,
    topic: Topic,
    raw: dict[str, str],
    lang: str,
) -> tuple[int, float | None]:
    """Parse, run and fill ``view``; returns the HTTP status it deserves and a Retry-After.

    A result block already rendered is taken from the fragment cache as it
    is; one rendered from a cached record is put there for next time.
    """
    params = parse_into(view, raw, lang)
    if params is None:
        return 422, None
    fragments = state.fragments
    key = fragment_key(state, lang, topic, view, params)
    if key is not None and fragments is not None:
        stored = fragments.get(key)
        if stored is not None:
            view.result_html = Markup(stored)
            return 200, None
    try:
        view.record = (await run_for(state, request, topic, view.experiment, params)).record
    except RunFailure as failure:
        return failed_view(view, failure, lang)
    if key is not None and fragments is not None and view.record.cached:
        context = {"lang": lang, "links": state.links, "topic": topic, "view": view}
        # Drawing a block's figures can take ~10 ms: off the event loop, like a page.
        template = state.env.get_template("_result.html")
        block = await asyncio.to_thread(template.render, **context)
        view.result_html = Markup(block)
        fragments.put(key, str(view.result_html))
    return 200, None


async def control_view(
    state: ExplorerState,
    request: Request,
    view: ExperimentView,
    topic: Topic,
    control: Control,
    lang: str,
) -> tuple[int, float | None]:
    """Fill ``view`` with a control run under ``control`` (never from or into a cache);
    returns the HTTP status it deserves and a Retry-After."""
    try:
        answer = await control_run_for(state, request, topic, view.experiment, control)
    except RunFailure as failure:
        return failed_view(view, failure, lang)
    view.record = answer.record
    view.values = answer.record.params
    return 200, None


async def timing_view(
    state: ExplorerState, view: ExperimentView, topic: Topic, raw: dict[str, str], lang: str
) -> int:
    """Fill a timing experiment's view without running it: its latest measurement
    (made on this server, or kept from an earlier start).

    A page never waits on a benchmark; the reader asks for a measurement
    (the form's button) and the :class:`TimingQueue` makes it.
    """
    params = parse_into(view, raw, lang)
    if params is None:
        return 422
    view.measurement = await state.timing.recall(topic, view.experiment, params)
    view.record = view.measurement.record if view.measurement else None
    view.timing_run = state.timing.active(topic, view.experiment, params)
    return 200


async def fill_view(
    state: ExplorerState,
    request: Request,
    view: ExperimentView,
    topic: Topic,
    raw: dict[str, str],
    lang: str,
) -> tuple[int, float | None]:
    """Fill ``view``: run an ordinary experiment, show a timing one's latest measurement.

    Returns the HTTP status the block deserves and a Retry-After (or None).
    """
    if view.experiment.timing:
        return await timing_view(state, view, topic, raw, lang), None
    return await run_view(state, request, view, topic, raw, lang)
