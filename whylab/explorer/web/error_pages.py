"""Error pages: the page in the reader's language, the kept not-found page, the JSON
answer on /api and /static, and the handler that chooses between them."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

import whylab
from whylab.explorer.content.i18n import translate
from whylab.explorer.experiment import LANGS
from whylab.explorer.web.render import nearest_topic
from whylab.explorer.web.seo import error_page_seo
from whylab.explorer.web.state import ExplorerState


class PageNotFound(Exception):
    """Answered with the not-found page in ``lang`` (a path naming no language: English);
    ``path`` is what was asked for (a mistyped topic's slug gets a "did you mean")."""

    def __init__(self, lang: str = "en", path: str = ""):
        super().__init__(lang)
        self.lang = lang
        self.path = path


def html(
    state: ExplorerState, template: str, context: dict[str, Any], status: int = 200, headers=None
) -> HTMLResponse:
    text = state.env.get_template(template).render(**context)
    return HTMLResponse(text, status, headers=headers)


def error_page(
    state: ExplorerState,
    lang: str,
    status: int,
    message: str,
    headers=None,
    title_key: str = "error_title",
    **extra: Any,
) -> HTMLResponse:
    links = state.links
    title = translate(title_key, lang)
    context = {
        "lang": lang,
        "links": links,
        "title": title,
        "message": message,
        "alternates": {code: links.home(code) for code in LANGS},
        "seo": error_page_seo(lang, title),
        **extra,
    }
    return html(state, "error.html", context, status, headers)


def not_found(state: ExplorerState, lang: str, path: str = "") -> HTMLResponse:
    """The not-found page, with the search box and every topic. Where ``path`` looks
    like a topic's slug mistyped, it names that topic ("did you mean"); otherwise it is
    the same text for every path in one language, so it is kept (as text; the
    middleware compresses it) in the page cache."""
    message = translate("not_found", lang)
    topics = list(state.registry)
    suggestion = nearest_topic(path, state.registry)
    if suggestion is not None:
        return error_page(state, lang, 404, message, title_key="not_found_title",
                          topics=topics, suggestion=suggestion)
    pages = state.pages
    key = ("not-found", lang, whylab.__version__)
    stored = pages.get(key) if pages is not None else None
    if isinstance(stored, str):
        return HTMLResponse(stored, 404)
    response = error_page(state, lang, 404, message, title_key="not_found_title",
                          topics=topics)
    if pages is not None:
        pages.put(key, bytes(response.body).decode())
    return response


def _every_route(routes):
    """The routes one by one, those of included routers too (FastAPI keeps an included
    router as one entry of ``app.routes``; ours are included without a prefix)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from _every_route(included.routes)
        else:
            yield route


def allowed_methods(request: Request) -> str:
    """Every method some route serves at this path (Starlette's 405 names only the
    first route that matched, so GET and DELETE on one path would read "GET")."""
    methods: set[str] = set()
    for route in _every_route(request.app.routes):
        match, _ = route.matches({**request.scope, "method": "GET"})
        if match != Match.NONE and getattr(route, "methods", None):
            methods |= set(route.methods)
    # GuardMiddleware answers HEAD wherever GET is served (RFC 9110 9.3.2).
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


async def http_error(request: Request, error: StarletteHTTPException) -> Response:
    headers = getattr(error, "headers", None)  # 405 carries Allow
    if error.status_code == 405:
        headers = {**(headers or {}), "Allow": allowed_methods(request)}
    if request.url.path.startswith("/api/") or request.url.path.startswith("/static/"):
        return JSONResponse({"detail": error.detail}, error.status_code, headers=headers)
    lang = "zh" if request.url.path.startswith("/zh/") else "en"
    state = request.app.state
    if error.status_code == 404:
        return not_found(state, lang, request.url.path)
    return error_page(state, lang, error.status_code, str(error.detail), headers)


async def page_not_found(request: Request, error: PageNotFound) -> Response:
    return not_found(request.app.state, error.lang, error.path)
