"""The explorer web app: server-rendered pages, HTML fragments and a JSON API.

Pages (all complete without JavaScript):

* ``/`` redirects to ``/en/`` or ``/zh/`` by ``Accept-Language``;
* ``/{lang}/`` home: the invitation, search (``?q=``), tag filter (``?tag=``), cards;
* ``/{lang}/topics/{slug}`` a topic; experiment parameters travel in the query
  string as ``experiment.param=value``, so every result has a permalink;
* ``/{lang}/topics/{slug}/experiments/{name}/result`` one result as an HTML
  fragment (what the page script swaps in), ``/{lang}/cards`` the card list;
* ``/{lang}/topics/{slug}/notebook.ipynb`` the topic as a notebook, and
  ``/downloads/whylab-<version>-py3-none-any.whl`` the wheel of this whylab that
  its first cell installs (:mod:`~whylab.explorer.web.wheel`).

JSON (described at ``/openapi.json``; the Swagger UI is off because it loads from
a CDN): ``/api/topics``, ``/api/topics/{slug}``, ``/api/search``,
``/api/topics/{slug}/experiments/{name}``.

Guards: parameters are parsed by their declared type (422 naming the bound; a
parameter given twice is a 422 too); experiments run in worker processes with
time and memory limits (504, 507); a full queue answers 503 and a client over
its share of experiment CPU time 429, both with ``Retry-After``; cached results
and pages are never rate limited; a run whose readers all went away is dropped
from the queue; over-long URLs get 414, an encoded ``/`` in the path 404, and
search text is cut to a fixed length. The HTTP server's own limits (forwarded
headers, header timeout, connection cap) are in :mod:`whylab.explorer.web.server`.

The app is put together here from its parts: the typed state
(:mod:`~whylab.explorer.web.state`), the routers (``routes_api``, ``routes_timing``,
``routes_pages``, ``routes_controls``), the guard (:mod:`~whylab.explorer.web.guard`) and the
error pages.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware

import whylab
from whylab.explorer.content.topics import TopicRegistry
from whylab.explorer.runs.warm_up import warm_up
from whylab.explorer.web import routes_api, routes_controls, routes_pages, routes_timing
from whylab.explorer.web.config import ExplorerConfig
from whylab.explorer.web.deps import ApiAnswer, api_answer
from whylab.explorer.web.error_pages import PageNotFound, http_error, page_not_found
from whylab.explorer.web.guard import GuardMiddleware
from whylab.explorer.web.openapi import describe_api
from whylab.explorer.web.seo import NoIndexMiddleware
from whylab.explorer.web.state import ExplorerState, build_state
from whylab.explorer.web.static_files import STATIC_DIR, FingerprintedStaticFiles


def create_app(
    config: ExplorerConfig | None = None, registry: TopicRegistry | None = None
) -> FastAPI:
    """Build the app; topics load (and every formula converts) now, workers start with it."""
    state = build_state(config or ExplorerConfig(), registry)
    app = FastAPI(
        title="whylab explorer",
        version=whylab.__version__,
        description="Topics, search and experiment runs of the whylab explorer.",
        docs_url=None,  # Swagger UI and ReDoc load from CDNs; the schema is at /openapi.json
        redoc_url=None,
        lifespan=_lifespan(state),
    )
    app.state = state  # type: ignore[assignment]  # typed: what every route reads
    # Pages are 56-120 KB of HTML and compress to about a quarter. Inside the guard,
    # so a HEAD answer gives the compressed length of its GET.
    # Level 1: a 190 KB page packs to 45 KB in about 2.5 ms; level 9 takes 3.5x as long for 36 KB.
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=1)
    app.add_middleware(GuardMiddleware, max_query_bytes=state.config.max_query_bytes)
    app.add_middleware(NoIndexMiddleware)  # outermost: the guard's own answers are marked too
    app.mount("/static", FingerprintedStaticFiles(directory=STATIC_DIR), name="static")
    # The JSON API first: /api/topics/x must not match /{lang}/topics/{slug}.
    for router in (routes_api.router, routes_timing.router, routes_pages.router):
        app.include_router(router)
    app.include_router(routes_timing.page_router)
    app.include_router(routes_controls.router)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(PageNotFound, page_not_found)
    app.add_exception_handler(ApiAnswer, api_answer)

    def openapi() -> dict[str, Any]:
        """FastAPI's description, completed with every experiment's parameters and answers."""
        if app.openapi_schema is None:
            base = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = describe_api(base, state.registry)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _lifespan(state: ExplorerState):
    """Start the workers and the timing line with the app (and the warm-up when asked);
    stop them, and close the cache, when it stops."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await state.pool.start()
        await state.timing.start()
        warming = None
        if state.config.warm_cache:
            timing = state.timing if state.config.measure_timing else None
            warming = asyncio.create_task(
                warm_up(app, state.registry, state.service, state.warm_up, timing)
            )
        try:
            yield
        finally:
            if warming is not None:
                warming.cancel()
                await asyncio.gather(warming, return_exceptions=True)
            await state.timing.close()
            await state.pool.close()
            if state.cache is not None:
                state.cache.close()

    return lifespan
