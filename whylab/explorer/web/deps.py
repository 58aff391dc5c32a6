"""The checks every route makes, one place each, as FastAPI dependencies.

* :func:`explorer_state` -- the app's typed state;
* :func:`page_lang` -- the language in the path (another answers the not-found page);
* :func:`path_experiment` / :func:`path_timing_experiment` -- the topic and experiment
  the path names, or None;
* :func:`query_problem` -- why the query string as a whole is refused (too many
  parameters, one given twice), worded for a page or for the JSON API;
* :func:`api_params` -- an experiment's parameters parsed from the query, or a 422.

The plain Starlette routes (the pages kept whole) call the same functions themselves.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse

from whylab.explorer.content.i18n import translate
from whylab.explorer.content.topics import Topic
from whylab.explorer.experiment import LANGS, Experiment, ParamError
from whylab.explorer.web.error_pages import PageNotFound
from whylab.explorer.web.request_info import repeated_param
from whylab.explorer.web.state import ExplorerState


class ApiAnswer(Exception):
    """Answered as it is: a JSON error of the API (a 404, a 422) raised from a dependency."""

    def __init__(self, response: JSONResponse):
        super().__init__(response.status_code)
        self.response = response


def explorer_state(request: Request) -> ExplorerState:
    return request.app.state


State = Annotated[ExplorerState, Depends(explorer_state)]


def page_lang(lang: str) -> str:
    if lang not in LANGS:
        raise PageNotFound("en")
    return lang


PageLang = Annotated[str, Depends(page_lang)]


def find_experiment(state: ExplorerState, slug: str, name: str) -> tuple[Topic, Experiment] | None:
    topic = state.registry.get(slug)
    if topic is None or name not in topic.experiments:
        return None
    return topic, topic.experiments[name]


def path_experiment(slug: str, name: str, state: State) -> tuple[Topic, Experiment] | None:
    return find_experiment(state, slug, name)


FoundExperiment = Annotated[tuple[Topic, Experiment] | None, Depends(path_experiment)]


def path_timing_experiment(found: FoundExperiment) -> tuple[Topic, Experiment] | None:
    return found if found is not None and found[1].timing else None


FoundTimingExperiment = Annotated[tuple[Topic, Experiment] | None, Depends(path_timing_experiment)]


def query_problem(state: ExplorerState, request: Request, lang: str | None) -> str | None:
    """Why the query string as a whole is refused (422); None if it is fine.

    Worded for a page in ``lang``, or for the JSON API when ``lang`` is None.
    """
    limit = state.config.max_query_params
    if len(request.query_params) > limit:
        if lang is None:
            return f"too many parameters (at most {limit})"
        return translate("too_many_params", lang, limit=limit)
    repeated = repeated_param(request)
    if repeated is not None:
        if lang is None:
            return f"{repeated[:40]}: given more than once"
        return translate("param_repeated", lang, name=repeated[:40])
    return None


def parse_api_params(experiment: Experiment, raw: dict[str, str]) -> dict[str, Any]:
    """``experiment``'s parameters from ``raw``, or the API's 422 naming the parameter."""
    try:
        return experiment.parse_params(raw)
    except ParamError as error:
        raise ApiAnswer(JSONResponse({"detail": str(error), "param": error.param}, 422)) from None


async def api_answer(request: Request, error: ApiAnswer) -> JSONResponse:
    return error.response
