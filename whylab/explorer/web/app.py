"""The explorer web app: server-rendered pages, HTML fragments and a JSON API.

Pages (all complete without JavaScript):

* ``/`` redirects to ``/en/`` or ``/zh/`` by ``Accept-Language``;
* ``/{lang}/`` home: the invitation, search (``?q=``), tag filter (``?tag=``), cards;
* ``/{lang}/topics/{slug}`` a topic; experiment parameters travel in the query
  string as ``experiment.param=value``, so every result has a permalink;
* ``/{lang}/topics/{slug}/experiments/{name}/result`` one result as an HTML
  fragment (what the page script swaps in), ``/{lang}/cards`` the card list.

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
"""

from __future__ import annotations

import asyncio
import json
import math
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import FastAPI, Query, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from markupsafe import Markup
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Match

import whylab
from whylab.explorer.content.i18n import param_error_message, translate
from whylab.explorer.content.ipynb import MEDIA_TYPE, has_notebook, notebook_filename, notebook_json
from whylab.explorer.content.topics import Topic, TopicRegistry, load_registry
from whylab.explorer.experiment import LANGS, Experiment, ParamError
from whylab.explorer.runs.cache import DEFAULT_MAX_BYTES, ResultCache, default_cache_dir
from whylab.explorer.runs.ratelimit import RateLimited, RateLimiter, retry_after_header
from whylab.explorer.runs.result_json import dumps
from whylab.explorer.runs.service import ExperimentService, RunAnswer, blocking_call
from whylab.explorer.runs.timing import TimingQueue
from whylab.explorer.runs.warm_up import WarmUp, warm_up
from whylab.explorer.runs.workers import (
    DEFAULT_QUEUE_WAIT_S,
    DEFAULT_SPAWN_TIMEOUT_S,
    Overloaded,
    RunFailure,
    WorkerPool,
)
from whylab.explorer.web.fragment_cache import ENCODINGS, FragmentCache, page_encodings
from whylab.explorer.web.openapi import describe_api
from whylab.explorer.web.render import (
    STATIC_DIR,
    ExperimentView,
    Links,
    experiment_source,
    home_context,
    make_environment,
    topic_context,
)

# nginx's code for "the client closed the connection first"; nobody reads it, logs do.
CLIENT_CLOSED_REQUEST = 499

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


@dataclass
class ExplorerConfig:
    """Everything the app can be told; the defaults are what ``whylab serve`` uses."""

    topics_dir: Path | None = None  # None: the topics shipped with whylab
    cache_dir: Path | None = None  # None: default_cache_dir()
    use_cache: bool = True
    cache_max_mb: float = DEFAULT_MAX_BYTES / 2**20  # least recently used records go first
    workers: int = 2
    memory_limit_mb: int = 2048  # per worker process; 0 = no limit
    max_queue: int = 16
    queue_wait_s: float = DEFAULT_QUEUE_WAIT_S  # a job waiting longer is answered 503
    spawn_timeout_s: float = DEFAULT_SPAWN_TIMEOUT_S
    # Experiment CPU-seconds per second per client, sustained ...
    rate_per_s: float = 0.5
    rate_burst: float = 20.0  # ... and in a burst (CPU-seconds); 0 turns the rate limit off
    # The HTTP server (whylab.explorer.web.server): proxies whose X-Forwarded-For is believed
    # (none by default: every client is who the socket says), and connection limits.
    trusted_proxies: tuple[str, ...] = ()
    header_timeout_s: float = 10.0
    keep_alive_s: int = 5
    max_connections: int = 256
    max_query_bytes: int = 4096
    max_query_params: int = 64
    max_search_chars: int = 200
    # At start-up, compute every default in the background, then fill the page cache
    # with every landing page (whylab.explorer.runs.warm_up).
    warm_cache: bool = False
    # Rendered result blocks kept in memory (deterministic, cached results only);
    # 0 entries turns this off. Off too when the result cache is.
    fragment_cache_entries: int = 256
    fragment_cache_chars: int = 16_000_000
    # Whole topic pages whose every block came from the cache (body + gzip), in memory.
    page_cache_entries: int = 128
    page_cache_bytes: int = 64_000_000
    # A several-machine deployment: the result cache and the run queue on this Redis
    # (redis://host:port/db), runs done by `whylab worker` processes; None: embedded.
    redis_url: str | None = None


class GuardMiddleware:
    """Reject oversized URLs before routing, answer HEAD as GET, add security headers."""

    def __init__(self, app, max_query_bytes: int, max_path_bytes: int = 512):
        self.app = app
        self.max_query_bytes = max_query_bytes
        self.max_path_bytes = max_path_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw_path = scope.get("raw_path", b"") or scope["path"].encode()
        if (
            len(scope.get("query_string", b"")) > self.max_query_bytes
            or len(raw_path) > self.max_path_bytes
        ):
            detail = f"URL too long (query limit {self.max_query_bytes} bytes)"
            await _send_json(send, 414, detail)
            return
        if b"%2f" in raw_path.lower() or b"%5c" in raw_path.lower():
            # The server decodes %2F to "/" before routing; a slash or backslash in a
            # name is never one of ours, so it is not found rather than re-routed.
            await _send_json(send, 404, "no such path (an encoded / or \\ is not allowed)")
            return

        head = scope["method"] == "HEAD"
        if head:  # answer HEAD like GET, without the body (link checkers, curl -I)
            scope = {**scope, "method": "GET"}

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            elif head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _send_json(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def preferred_lang(accept_language: str) -> str:
    """``zh`` or ``en`` from an ``Accept-Language`` header (highest q first; default en)."""
    choices = []
    for position, part in enumerate(accept_language.split(",")[:20]):
        tag, _, rest = part.strip().partition(";")
        weight = 1.0
        if rest.strip().startswith("q="):
            try:
                weight = float(rest.strip()[2:])
            except ValueError:
                weight = 0.0
        choices.append((-weight, position, tag.strip().lower()))
    for _, _, tag in sorted(choices):
        for lang in LANGS:
            if tag == lang or tag.startswith(lang + "-"):
                return lang
    return "en"


def accepted_encoding(request: Request) -> str:
    """``gzip`` when the client accepts it (as the gzip middleware decides), else ``identity``."""
    return "gzip" if "gzip" in request.headers.get("accept-encoding", "") else "identity"


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (or is ``*``); weak tags compare
    by their opaque part, as RFC 9110 says If-None-Match does."""
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def repeated_param(request: Request) -> str | None:
    """The first query parameter given more than once, or None."""
    seen: set[str] = set()
    for key, _ in request.query_params.multi_items():
        if key in seen:
            return key
        seen.add(key)
    return None


class ClientGone(Exception):
    """The client closed the connection before its answer was ready."""


async def _disconnected(request: Request) -> None:
    """Return once the client has gone (the ASGI server says ``http.disconnect``)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def unless_client_leaves(request: Request, work):
    """Await ``work``; if the client disconnects first, cancel it and raise ClientGone."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    raise ClientGone


def create_app(
    config: ExplorerConfig | None = None, registry: TopicRegistry | None = None
) -> FastAPI:
    """Build the app; topics load (and every formula converts) now, workers start with it."""
    config = config or ExplorerConfig()
    registry = registry or load_registry(config.topics_dir)
    cache, pool, limiter, flights = _runs_cache_and_budget(config)
    service = ExperimentService(pool, cache, flights)
    timing = TimingQueue(service)
    fragments = (
        FragmentCache(config.fragment_cache_entries, config.fragment_cache_chars)
        if cache is not None and config.fragment_cache_entries > 0
        else None
    )
    pages = (
        FragmentCache(config.page_cache_entries, config.page_cache_bytes)
        if cache is not None and config.page_cache_entries > 0
        else None
    )
    env = make_environment()
    links = Links()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await pool.start()
        await timing.start()
        warming = None
        if config.warm_cache:
            warming = asyncio.create_task(warm_up(app, registry, service, app.state.warm_up))
        try:
            yield
        finally:
            if warming is not None:
                warming.cancel()
                await asyncio.gather(warming, return_exceptions=True)
            await timing.close()
            await pool.close()
            if cache is not None:
                cache.close()

    app = FastAPI(
        title="whylab explorer",
        version=whylab.__version__,
        description="Topics, search and experiment runs of the whylab explorer.",
        docs_url=None,  # Swagger UI and ReDoc load from CDNs; the schema is at /openapi.json
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.registry = registry
    app.state.service = service
    app.state.pool = pool
    app.state.cache = cache
    app.state.limiter = limiter
    app.state.config = config
    app.state.fragments = fragments
    app.state.pages = pages
    app.state.timing = timing
    app.state.warm_up = WarmUp()  # what the start-up work did (config.warm_cache)
    # Pages are 56-120 KB of HTML and compress to about a quarter. Inside the guard,
    # so a HEAD answer gives the compressed length of its GET.
    # Level 1: a 190 KB page packs to 45 KB in about 2.5 ms; level 9 takes 3.5x as long for 36 KB.
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=1)
    app.add_middleware(GuardMiddleware, max_query_bytes=config.max_query_bytes)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    # ------------------------------------------------------------ helpers

    def html(
        template: str, context: dict[str, Any], status: int = 200, headers=None
    ) -> HTMLResponse:
        return HTMLResponse(env.get_template(template).render(**context), status, headers=headers)

    def error_page(
        lang: str, status: int, message: str, headers=None, title_key: str = "error_title"
    ) -> HTMLResponse:
        context = {
            "lang": lang,
            "links": links,
            "title": translate(title_key, lang),
            "message": message,
            "alternates": {code: links.home(code) for code in LANGS},
        }
        return html("error.html", context, status, headers)

    def not_found(lang: str) -> HTMLResponse:
        """The not-found page: the same text for every path in one language, so it is kept
        (as text; the middleware compresses it) in the page cache."""
        key = ("not-found", lang, whylab.__version__)
        stored = pages.get(key) if pages is not None else None
        if isinstance(stored, str):
            return HTMLResponse(stored, 404)
        response = error_page(lang, 404, translate("not_found", lang), title_key="not_found_title")
        if pages is not None:
            pages.put(key, bytes(response.body).decode())
        return response

    async def run_for(
        request: Request, topic: Topic, experiment: Experiment, params: dict[str, Any]
    ) -> RunAnswer:
        """Run for this client: admitted by its CPU-time balance and charged after.

        Raises RunFailure (RateLimited among them).
        """
        client = _client(request)
        admit = (lambda: blocking_call(limiter, limiter.admit, client)) if limiter else None
        answer = await service.run(topic, experiment, params, client=client, admit=admit)
        if limiter is not None and answer.cost_s:
            await blocking_call(limiter, limiter.charge, client, answer.cost_s)
        return answer

    async def rate_limited(request: Request) -> float:
        """Seconds this client must wait before starting a run (0: it may start now)."""
        if limiter is None:
            return 0.0
        return await blocking_call(limiter, limiter.wait_s, _client(request))

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

    def lookup(slug: str, name: str) -> tuple[Topic, Experiment] | None:
        topic = registry.get(slug)
        if topic is None or name not in topic.experiments:
            return None
        return topic, topic.experiments[name]

    def too_many(request: Request) -> bool:
        return len(request.query_params) > config.max_query_params

    def query_problem(request: Request, lang: str | None) -> str | None:
        """Why the query string as a whole is refused (422); None if it is fine.

        Worded for a page in ``lang``, or for the JSON API when ``lang`` is None.
        """
        if too_many(request):
            if lang is None:
                return f"too many parameters (at most {config.max_query_params})"
            return translate("too_many_params", lang, limit=config.max_query_params)
        repeated = repeated_param(request)
        if repeated is not None:
            if lang is None:
                return f"{repeated[:40]}: given more than once"
            return translate("param_repeated", lang, name=repeated[:40])
        return None

    def fragment_key(lang: str, topic: Topic, view: ExperimentView, params: dict[str, Any]):
        """Where a rendered result block is kept, or None for one never kept (timing)."""
        if fragments is None or view.experiment.timing:
            return None
        canonical = dumps(params)
        experiment, version = view.experiment.name, whylab.__version__
        return (lang, topic.slug, topic.source_hash, experiment, view.kind, version, canonical)

    async def run_view(
        request: Request, view: ExperimentView, topic: Topic, raw: dict[str, str], lang: str
    ) -> tuple[int, float | None]:
        """Parse, run and fill ``view``; returns the HTTP status it deserves and a Retry-After.

        A result block already rendered is taken from the fragment cache as it
        is; one rendered from a cached record is put there for next time.
        """
        try:
            params = view.experiment.parse_params(raw)
        except ParamError as error:
            view.error = param_error_message(error, view.experiment, lang)
            view.param_errors = {error.param: view.error}
            return 422, None
        view.values = params
        key = fragment_key(lang, topic, view, params)
        if key is not None and fragments is not None:
            stored = fragments.get(key)
            if stored is not None:
                view.result_html = Markup(stored)
                return 200, None
        try:
            view.record = (await run_for(request, topic, view.experiment, params)).record
        except RateLimited as failure:
            view.error = translate(
                "rate_limited", lang, seconds=retry_after_header(failure.retry_after_s)
            )
            return failure.status, failure.retry_after_s
        except RunFailure as failure:
            view.error = failure.message
            return failure.status, failure.retry_after_s
        if key is not None and fragments is not None and view.record.cached:
            context = {"lang": lang, "links": links, "topic": topic, "view": view}
            # Drawing a block's figures can take ~10 ms: off the event loop, like a page.
            block = await asyncio.to_thread(env.get_template("_result.html").render, **context)
            view.result_html = Markup(block)
            fragments.put(key, str(view.result_html))
        return 200, None

    def timing_view(view: ExperimentView, topic: Topic, raw: dict[str, str], lang: str) -> int:
        """Fill a timing experiment's view without running it: its latest measurement.

        A page never waits on a benchmark; the reader asks for a measurement
        (the form's button) and the :class:`TimingQueue` makes it.
        """
        try:
            params = view.experiment.parse_params(raw)
        except ParamError as error:
            view.error = param_error_message(error, view.experiment, lang)
            view.param_errors = {error.param: view.error}
            return 422
        view.values = params
        view.measurement = timing.latest(topic, view.experiment, params)
        view.record = view.measurement.record if view.measurement else None
        view.timing_run = timing.active(topic, view.experiment, params)
        return 200

    async def fill_view(
        request: Request, view: ExperimentView, topic: Topic, raw: dict[str, str], lang: str
    ) -> tuple[int, float | None]:
        """Fill ``view``: run an ordinary experiment, show a timing one's latest measurement.

        Returns the HTTP status the block deserves and a Retry-After (or None).
        """
        if view.experiment.timing:
            return timing_view(view, topic, raw, lang), None
        return await run_view(request, view, topic, raw, lang)

    def new_view(experiment: Experiment, kind: str, raw: dict[str, str]) -> ExperimentView:
        values = {**experiment.defaults(), **raw}
        return ExperimentView(experiment, kind, values)

    # ------------------------------------------------------------ JSON API
    # (registered before the pages: /api/topics/x must not match /{lang}/topics/{slug})

    def topic_summary(topic: Topic) -> dict[str, Any]:
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

    @app.get("/api/topics", tags=["topics"], summary="Every topic, in home-page order")
    async def api_topics() -> list[dict[str, Any]]:
        return [topic_summary(t) for t in registry]

    @app.get("/api/topics/{slug}", tags=["topics"], summary="One topic and its experiments")
    async def api_topic(slug: str) -> JSONResponse:
        topic = registry.get(slug)
        if topic is None:
            return JSONResponse({"detail": f"no topic {slug[:60]!r}"}, 404)
        data = topic_summary(topic)
        data["experiments"] = [
            {
                "name": e.name,
                "title": {"en": e.title.en, "zh": e.title.zh},
                "description": {"en": e.description.en, "zh": e.description.zh},
                "timing": e.timing,
                "time_limit_s": e.time_limit_s,
                "params": param_schema(e),
                "url": f"/api/topics/{topic.slug}/experiments/{e.name}",
            }
            for e in topic.experiments.values()
        ]
        return JSONResponse(data)

    @app.get("/api/search", tags=["search"], summary="Search topics in both languages")
    async def api_search(
        q: str = Query("", description="search text (cut to 200 characters)"),
        lang: str = Query("en", pattern="^(en|zh)$", description="language of titles and snippets"),
        limit: int = Query(20, ge=1, le=50),
    ) -> dict[str, Any]:
        query = " ".join(q.split())[: config.max_search_chars]
        hits = registry.search_index.search(query, lang, limit=limit) if query else []
        return {
            "query": query,
            "lang": lang,
            "hits": [
                {
                    "slug": h.slug,
                    "score": h.score,
                    "title": h.title,
                    "snippet": h.snippet,
                    "url": links.topic(lang, h.slug),
                }
                for h in hits
            ],
        }

    @app.get(
        "/api/topics/{slug}/experiments/{name}",
        tags=["experiments"],
        summary="Run an experiment (query parameters are its parameters)",
    )
    async def api_experiment(request: Request, slug: str, name: str) -> Response:
        """Every query parameter is an experiment parameter, e.g. ``?phase=0.5&seed=3``.

        The answer holds the parameters used (defaults filled in), the engine
        version, whether it came from the cache, and the result with its checks.
        """
        found = lookup(slug, name)
        if found is None:
            return JSONResponse({"detail": f"no experiment {slug[:60]}/{name[:60]}"}, 404)
        topic, experiment = found
        problem = query_problem(request, None)
        if problem is not None:
            return JSONResponse({"detail": problem}, 422)
        try:
            params = experiment.parse_params(dict(request.query_params))
        except ParamError as error:
            return JSONResponse({"detail": str(error), "param": error.param}, 422)
        cached = await service.cached_json(topic, experiment, params)
        if cached is not None:
            return Response(cached, media_type="application/json")
        try:
            if experiment.timing:  # timing runs take their turn in the one line
                record = (await timing.measure(topic, experiment, params)).record
                return JSONResponse(record.to_json())
            answer = await unless_client_leaves(
                request, run_for(request, topic, experiment, params)
            )
        except RunFailure as failure:
            body: dict[str, Any] = {"detail": failure.message}
            headers = None
            if failure.retry_after_s is not None:
                body["retry_after_s"] = failure.retry_after_s
                headers = {"Retry-After": retry_after_header(failure.retry_after_s)}
            return JSONResponse(body, failure.status, headers=headers)
        except ClientGone:
            return Response(status_code=CLIENT_CLOSED_REQUEST)
        return JSONResponse(answer.record.to_json())

    # ------------------------------------------------------------ timing runs
    # One line for the whole server (see whylab.explorer.runs.timing): the page script
    # queues a run, polls its state and may cancel it; without JavaScript the
    # form's "Measure" button posts to /measure, which waits and redirects back.

    def timing_lookup(slug: str, name: str) -> tuple[Topic, Experiment] | None:
        found = lookup(slug, name)
        return found if found is not None and found[1].timing else None

    @app.post(
        "/api/topics/{slug}/experiments/{name}/timing-runs",
        tags=["experiments"],
        summary="Queue a run of a timing experiment (query parameters are its parameters)",
        status_code=202,
    )
    async def api_queue_timing(request: Request, slug: str, name: str) -> JSONResponse:
        found = timing_lookup(slug, name)
        if found is None:
            return JSONResponse({"detail": f"no timing experiment {slug[:60]}/{name[:60]}"}, 404)
        topic, experiment = found
        wait = await rate_limited(request)
        if wait:
            return rate_limited_json(wait)
        try:
            params = experiment.parse_params(dict(request.query_params))
            run = timing.submit(topic, experiment, params)
        except ParamError as error:
            return JSONResponse({"detail": str(error), "param": error.param}, 422)
        except Overloaded as failure:
            return overloaded_json(failure)
        location = f"/api/timing-runs/{run.id}"
        return JSONResponse(timing.describe(run), 202, headers={"Location": location})

    @app.get("/api/timing-runs/{run_id}", tags=["experiments"], summary="A timing run's state")
    async def api_timing_run(run_id: str) -> JSONResponse:
        run = timing.get(run_id)
        if run is None:
            return JSONResponse({"detail": "no such timing run"}, 404)
        return JSONResponse(timing.describe(run))

    @app.delete("/api/timing-runs/{run_id}", tags=["experiments"], summary="Cancel a timing run")
    async def api_cancel_timing_run(run_id: str) -> JSONResponse:
        run = timing.cancel(run_id)
        if run is None:
            return JSONResponse({"detail": "no such timing run"}, 404)
        return JSONResponse(timing.describe(run))

    @app.get("/{lang}/topics/{slug}/experiments/{name}/source", include_in_schema=False)
    async def source_page(lang: str, slug: str, name: str) -> Response:
        found = lookup(slug, name)
        source = experiment_source(found[1]) if found is not None else None
        if lang not in LANGS or found is None or source is None:
            return not_found(lang if lang in LANGS else "en")
        topic, experiment = found
        context = {
            "lang": lang,
            "links": links,
            "topic": topic,
            "experiment": experiment,
            "source": source,
            "alternates": {code: links.source(code, topic.slug, experiment.name) for code in LANGS},
        }
        return html("source.html", context)

    notebooks: dict[tuple[str, str], str] = {}  # (slug, lang) -> .ipynb text, built once

    @app.get("/{lang}/topics/{slug}/notebook.ipynb", include_in_schema=False)
    def notebook(lang: str, slug: str) -> Response:
        """The topic as a Jupyter notebook, to download (a plain ``def``: building the
        first one imports the topic's module, which FastAPI runs off the event loop)."""
        topic = registry.get(slug)
        if lang not in LANGS:
            return not_found("en")
        if topic is None or not has_notebook(topic):
            return not_found(lang)
        if (slug, lang) not in notebooks:
            notebooks[(slug, lang)] = notebook_json(topic, lang)
        disposition = f'attachment; filename="{notebook_filename(topic, lang)}"'
        return Response(
            notebooks[(slug, lang)],
            media_type=MEDIA_TYPE,
            headers={"Content-Disposition": disposition},
        )

    @app.post("/{lang}/topics/{slug}/experiments/{name}/measure", include_in_schema=False)
    async def measure_without_script(request: Request, lang: str, slug: str, name: str):
        found = timing_lookup(slug, name)
        if lang not in LANGS or found is None:
            return not_found(lang if lang in LANGS else "en")
        topic, experiment = found
        body = (await request.body())[: config.max_query_bytes].decode("utf-8", "replace")
        fields = parse_qsl(body)[: config.max_query_params]
        back = links.topic(lang, topic.slug, urlencode(fields), f"experiment-{experiment.name}")
        prefix = experiment.name + "."
        raw = {k[len(prefix) :]: v for k, v in fields if k.startswith(prefix)}
        wait = await rate_limited(request)
        if wait:
            message = translate("rate_limited", lang, seconds=retry_after_header(wait))
            return error_page(lang, 429, message, {"Retry-After": retry_after_header(wait)})
        try:
            params = experiment.parse_params(raw)
        except ParamError:
            return RedirectResponse(back, status_code=303)  # the page shows the field error
        try:
            await timing.measure(topic, experiment, params)
        except RunFailure as failure:
            return error_page(lang, failure.status, failure.message)
        return RedirectResponse(back, status_code=303)

    # ------------------------------------------------------------ pages

    @app.get("/", include_in_schema=False)
    async def root(request: Request) -> RedirectResponse:
        lang = preferred_lang(request.headers.get("accept-language", ""))
        return RedirectResponse(f"/{lang}/", status_code=307, headers={"Vary": "Accept-Language"})

    @app.get("/{lang}", include_in_schema=False)
    async def lang_root(lang: str) -> Response:
        if lang not in LANGS:
            return not_found("en")
        return RedirectResponse(f"/{lang}/", status_code=308)

    tag_keys = {tag.key for tag in registry.tags()}

    async def cards_page(request: Request, template: str, lang: str, q: str, tag: str):
        """The home page or its card list (``template``), kept whole in the page cache.

        The HTML depends only on the language, the search text as it is searched
        (spaces collapsed, cut to length) and the tag filter when the tag exists
        (an unknown tag filters nothing), so those are the key; the topics are
        loaded once per process.
        """
        query = " ".join(q.split())[: config.max_search_chars]
        active_tag = tag if tag in tag_keys else ""
        key = (template, lang, query, active_tag, whylab.__version__)
        kept = kept_page(request, key)
        if kept is not None:
            return kept
        hits = registry.search_index.search(query, lang, limit=50) if query else None
        context = home_context(registry, lang, links, query=query, tag=active_tag, hits=hits)
        text = env.get_template(template).render(**context)
        if pages is None:
            return HTMLResponse(text)
        return await keep_page(request, key, text)

    # The pages that are kept whole are plain Starlette routes: FastAPI's parameter
    # solving would cost a page-cache hit about a fifth of its time
    # (benchmarks/profile_page_hit.py); they read their few parameters themselves.

    def cards_route(template: str):
        """The endpoint of the home page (``home.html``) or its card list (``_cards.html``)."""

        async def endpoint(request: Request) -> Response:
            lang, query = request.path_params["lang"], request.query_params
            if lang not in LANGS:
                return not_found("en")
            q, tag = query.get("q", ""), query.get("tag", "")
            return await cards_page(request, template, lang, q, tag)

        return endpoint

    async def topic_page(request: Request) -> Response:
        lang, slug = request.path_params["lang"], request.path_params["slug"]
        topic = registry.get(slug)
        if lang not in LANGS:
            return not_found("en")
        if topic is None:
            return not_found(lang)
        problem = query_problem(request, lang)
        if problem is not None:
            return error_page(lang, 422, problem)
        raw: dict[str, dict[str, str]] = {}
        for key, value in request.query_params.items():
            name, dot, param = key.partition(".")
            if not dot or name not in topic.experiments:
                message = translate("page_param_unknown", lang, name=key[:40])
                return error_page(lang, 422, message)
            raw.setdefault(name, {})[param] = value
        placements = topic.placements()
        # Only the timing blocks name the page's key (by their latest measurement); the
        # other views are built when the page is not kept.
        timing_views = {
            p.name: new_view(topic.experiments[p.name], p.kind, raw.get(p.name, {}))
            for p in placements
            if topic.experiments[p.name].timing
        }
        page_query = [(k, v) for k, v in request.query_params.items()]
        key = page_key(lang, topic, timing_views, raw, page_query)
        kept = kept_page(request, key) if key is not None else None
        if kept is not None:
            return kept
        views = {
            p.name: timing_views.get(p.name)
            or new_view(topic.experiments[p.name], p.kind, raw.get(p.name, {}))
            for p in placements
        }
        try:
            runs = [
                fill_view(request, view, topic, raw.get(name, {}), lang)
                for name, view in views.items()
            ]
            outcomes = await unless_client_leaves(request, asyncio.gather(*runs))
        except ClientGone:
            return Response(status_code=CLIENT_CLOSED_REQUEST)
        # A bad parameter is the reader's to fix (422); a slow, busy or rate-limited
        # experiment is reported inside its own block and the rest of the page is served.
        status = 422 if any(status == 422 for status, _ in outcomes) else 200
        context = topic_context(topic, lang, links, views, page_query, registry)
        # Rendering takes tens of milliseconds: off the event loop, so requests answered
        # from memory meanwhile are not held up behind it.
        text = await asyncio.to_thread(env.get_template("topic.html").render, **context)
        if key is not None and pages is not None and status == 200 and all_from_cache(views):
            return await keep_page(request, key, text)
        return HTMLResponse(text, status)

    app.add_route("/{lang}/", cards_route("home.html"), methods=["GET"], include_in_schema=False)
    app.add_route(
        "/{lang}/cards", cards_route("_cards.html"), methods=["GET"], include_in_schema=False
    )
    app.add_route("/{lang}/topics/{slug}", topic_page, methods=["GET"], include_in_schema=False)

    def page_key(
        lang: str,
        topic: Topic,
        timing_views: dict[str, ExperimentView],
        raw: dict[str, dict[str, str]],
        page_query: list[tuple[str, str]],
    ):
        """Where a whole topic page is kept, or None for one not kept now.

        The page is the same for the same language, topic source, code version and
        query string, once its ordinary results are cached; its timing blocks show
        the latest measurement, so the key names each one's time. A page with a
        timing run queued or running (its progress changes) is never kept.
        ``timing_views`` are the page's timing blocks, filled here.
        """
        if pages is None:
            return None
        measured = []
        for name, view in timing_views.items():
            if timing_view(view, topic, raw.get(name, {}), lang) != 200:
                return None
            if view.timing_run is not None:
                return None
            measurement = view.measurement
            measured.append(
                (name, measurement.measured_at.isoformat(), measurement.machine)
                if measurement is not None
                else (name, None, None)
            )
        return (lang, topic.slug, topic.source_hash, whylab.__version__, tuple(page_query)) + (
            tuple(measured),
        )

    def all_from_cache(views: dict[str, ExperimentView]) -> bool:
        """Every block a timing block (keyed by its measurement) or served from the result
        or fragment cache, so that rendering the page again would give the same text."""

        def from_cache(view: ExperimentView) -> bool:
            if view.experiment.timing:
                return True
            if view.error:
                return False
            if view.record is None:
                return view.result_html is not None  # a stored block
            return view.record.cached

        return all(from_cache(view) for view in views.values())

    def kept_page(request: Request, key) -> Response | None:
        """The whole page kept under ``key``, in the encoding this client takes, or None."""
        if pages is None:
            return None
        encoding = accepted_encoding(request)
        stored = pages.get_with_digest((key, encoding))
        if stored is None or not isinstance(stored[0], bytes):
            return None
        body, digest = stored
        return page_response(request, body, encoding, digest)

    async def keep_page(request: Request, key, text: str) -> Response:
        """Keep a rendered page in both encodings (compressed off the event loop) and send it."""
        bodies = await asyncio.to_thread(page_encodings, text)
        digests = {name: pages.put((key, name), bodies[name]) for name in ENCODINGS}
        encoding = accepted_encoding(request)
        return page_response(request, bodies[encoding], encoding, digests[encoding])

    def page_response(
        request: Request, body: bytes, encoding: str, digest: bytes | None
    ) -> Response:
        """A kept page in ``encoding`` (gzip for clients that accept it, as the middleware
        would choose; the middleware passes an encoded body through as it is).

        Its ETag is the SHA-256 the page cache checks the body by; a client that
        sends it back in ``If-None-Match`` gets 304 and no body. ``no-cache``
        makes browsers ask each time, since a page changes when a timing
        measurement arrives.
        """
        headers = {"Vary": "Accept-Encoding", "Cache-Control": "no-cache"}
        if digest is not None:
            etag = f'"{digest.hex()}"'
            headers["ETag"] = etag
            if etag_matches(request.headers.get("if-none-match", ""), etag):
                return Response(status_code=304, headers=headers)
        if encoding != "identity":
            headers["Content-Encoding"] = encoding
        return Response(body, 200, headers=headers, media_type="text/html")

    @app.get("/{lang}/topics/{slug}/experiments/{name}/result", include_in_schema=False)
    async def result_fragment(request: Request, lang: str, slug: str, name: str) -> Response:
        found = lookup(slug, name)
        if lang not in LANGS or found is None:
            return HTMLResponse(f'<p class="run-error">{translate("not_found", "en")}</p>', 404)
        topic, experiment = found
        kind = next((p.kind for p in topic.placements() if p.name == name), "experiment")
        raw = dict(request.query_params)
        view = new_view(experiment, kind, raw)
        context = {"lang": lang, "links": links, "topic": topic, "view": view}
        problem = query_problem(request, lang)
        if problem is not None:
            view.error = problem
            return html("_result.html", context, 422)
        try:
            status, retry_after_s = await unless_client_leaves(
                request, fill_view(request, view, topic, raw, lang)
            )
        except ClientGone:
            return Response(status_code=CLIENT_CLOSED_REQUEST)
        if view.result_html is not None:
            return HTMLResponse(view.result_html, status)
        headers = None
        if retry_after_s is not None:
            headers = {"Retry-After": retry_after_header(retry_after_s)}
        return html("_result.html", context, status, headers)

    def openapi() -> dict[str, Any]:
        """FastAPI's description, completed with every experiment's parameters and answers."""
        if app.openapi_schema is None:
            base = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = describe_api(base, registry)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    def allowed_methods(request: Request) -> str:
        """Every method some route serves at this path (Starlette's 405 names only the
        first route that matched, so GET and DELETE on one path would read "GET")."""
        methods: set[str] = set()
        for route in app.routes:
            match, _ = route.matches({**request.scope, "method": "GET"})
            if match != Match.NONE and getattr(route, "methods", None):
                methods |= set(route.methods)
        # Starlette's own routes list HEAD and FastAPI's do not; named the same way for all.
        methods.discard("HEAD")
        return ", ".join(sorted(methods))

    # ------------------------------------------------------------ errors

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        headers = getattr(error, "headers", None)  # 405 carries Allow
        if error.status_code == 405:
            headers = {**(headers or {}), "Allow": allowed_methods(request)}
        if request.url.path.startswith("/api/") or request.url.path.startswith("/static/"):
            return JSONResponse({"detail": error.detail}, error.status_code, headers=headers)
        lang = "zh" if request.url.path.startswith("/zh/") else "en"
        if error.status_code == 404:
            return not_found(lang)
        return error_page(lang, error.status_code, str(error.detail), headers)

    return app


def _runs_cache_and_budget(config: ExplorerConfig):
    """Where runs are computed, results kept, clients' CPU time counted and runs in flight known.

    On this machine alone, or, with ``redis_url``, on the deployment's Redis for
    every server at once (the last item, the shared runs in flight, is None alone).
    """
    max_bytes = max(1, math.floor(config.cache_max_mb * 2**20))
    limited = config.rate_burst > 0
    if config.redis_url is not None:
        from whylab.explorer.runs.redis.cache import RedisResultCache
        from whylab.explorer.runs.redis.flights import SharedFlights
        from whylab.explorer.runs.redis.link import RedisLink
        from whylab.explorer.runs.redis.queue import RemotePool
        from whylab.explorer.runs.redis.ratelimit import RedisRateLimiter

        link = RedisLink(config.redis_url)
        cache = RedisResultCache(link, max_bytes) if config.use_cache else None
        pool = RemotePool(link, config.max_queue, queue_wait_s=config.queue_wait_s)
        limiter = RedisRateLimiter(link, config.rate_per_s, config.rate_burst) if limited else None
        return cache, pool, limiter, SharedFlights(link)
    cache = (
        ResultCache(config.cache_dir or default_cache_dir(), max_bytes=max_bytes)
        if config.use_cache
        else None
    )
    pool = WorkerPool(
        config.workers,
        config.memory_limit_mb,
        config.max_queue,
        queue_wait_s=config.queue_wait_s,
        spawn_timeout_s=config.spawn_timeout_s,
    )
    limiter = RateLimiter(config.rate_per_s, config.rate_burst) if limited else None
    return cache, pool, limiter, None
