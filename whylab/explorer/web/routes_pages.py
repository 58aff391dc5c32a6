"""The pages: home and its card list, a topic, one result block, an experiment's source,
a topic's notebook download and the wheel its notebook installs, and the redirects from
``/`` and ``/{lang}``.

The pages kept whole (home, cards, topic) are plain Starlette routes: FastAPI's
parameter solving would cost a page-cache hit about a fifth of its time
(benchmarks/profile_page_hit.py); they read their few parameters themselves, through
the same checks (:mod:`whylab.explorer.web.deps`) as the other routes.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

import whylab
from whylab.explorer.content.i18n import translate
from whylab.explorer.content.ipynb import MEDIA_TYPE, has_notebook, notebook_filename, notebook_json
from whylab.explorer.experiment import LANGS
from whylab.explorer.runs.errors import retry_after_header
from whylab.explorer.web.blocks import fill_view, new_view
from whylab.explorer.web.deps import (
    FoundExperiment,
    PageLang,
    State,
    find_experiment,
    page_lang,
    query_problem,
)
from whylab.explorer.web.error_pages import PageNotFound, error_page, html
from whylab.explorer.web.page_cache import all_from_cache, keep_page, kept_page, page_key
from whylab.explorer.web.render import experiment_source, home_context, topic_context
from whylab.explorer.web.request_info import (
    CLIENT_CLOSED_REQUEST,
    ClientGone,
    preferred_lang,
    unless_client_leaves,
)
from whylab.explorer.web.seo import robots_txt, sitemap_xml, source_seo
from whylab.explorer.web.state import ExplorerState
from whylab.explorer.web.wheel import MEDIA_TYPE as WHEEL_MEDIA_TYPE
from whylab.explorer.web.wheel import (
    WheelUnavailable,
    cache_control,
    wheel_filename,
    wheel_link,
)

router = APIRouter()


@router.get("/{lang}/topics/{slug}/experiments/{name}/source", include_in_schema=False)
async def source_page(
    lang: PageLang,
    found: FoundExperiment,
    state: State,
) -> Response:
    source = experiment_source(found[1]) if found is not None else None
    if found is None or source is None:
        raise PageNotFound(lang)
    topic, experiment = found
    links = state.links
    context = {
        "lang": lang,
        "links": links,
        "topic": topic,
        "experiment": experiment,
        "source": source,
        "alternates": {code: links.source(code, topic.slug, experiment.name) for code in LANGS},
        "seo": source_seo(links, lang, topic.slug, experiment),
    }
    return html(state, "source.html", context)


@router.get("/{lang}/topics/{slug}/notebook.ipynb", include_in_schema=False)
def notebook(slug: str, lang: PageLang, state: State) -> Response:
    """The topic as a Jupyter notebook, to download (a plain ``def``: building the
    first one imports the topic's module, which FastAPI runs off the event loop)."""
    topic = state.registry.get(slug)
    if topic is None or not has_notebook(topic):
        raise PageNotFound(lang)
    notebooks = state.notebooks
    if (slug, lang) not in notebooks:
        wheel = wheel_link(state.wheel, state.config.public_url)
        notebooks[(slug, lang)] = notebook_json(topic, lang, wheel)
    disposition = f'attachment; filename="{notebook_filename(topic, lang)}"'
    return Response(
        notebooks[(slug, lang)],
        media_type=MEDIA_TYPE,
        headers={"Content-Disposition": disposition},
    )


@router.get("/downloads/{filename}", include_in_schema=False)
def wheel_download(filename: str, request: Request, state: State) -> Response:
    """The wheel of the whylab this server runs, which its notebooks install (a plain
    ``def``: the first request builds it, for seconds, off the event loop)."""
    if filename != wheel_filename():
        return PlainTextResponse(f"not found: the wheel here is {wheel_filename()}", 404)
    try:
        built = state.wheel.get()
    except WheelUnavailable as error:
        return PlainTextResponse(f"the wheel of whylab cannot be built here: {error}", 503)
    headers = {
        "Cache-Control": cache_control(request.query_params.get("src"), built.source_hash),
        "ETag": f'"{built.source_hash}"',
        "Content-Disposition": f'attachment; filename="{filename}"',
    }
    return Response(built.data, media_type=WHEEL_MEDIA_TYPE, headers=headers)


@router.get("/robots.txt", include_in_schema=False)
async def robots(state: State) -> Response:
    return PlainTextResponse(robots_txt(state.config.public_url))


@router.get("/sitemap.xml", include_in_schema=False)
async def sitemap(state: State) -> Response:
    """Every page in both languages; only with a public URL (a sitemap's URLs are absolute)."""
    if state.links.public_url is None:
        return PlainTextResponse("no sitemap: the server has no public URL (--public-url)", 404)
    body = sitemap_xml(state.links, [topic.slug for topic in state.registry])
    return Response(body, media_type="application/xml")


@router.get("/", include_in_schema=False)
async def root(request: Request) -> RedirectResponse:
    lang = preferred_lang(request.headers.get("accept-language", ""))
    return RedirectResponse(f"/{lang}/", status_code=307, headers={"Vary": "Accept-Language"})


@router.get("/{lang}", include_in_schema=False)
async def lang_root(lang: PageLang) -> Response:
    return RedirectResponse(f"/{lang}/", status_code=308)


async def cards_page(request: Request, template: str, lang: str, q: str, tag: str):
    """The home page or its card list (``template``), kept whole in the page cache.

    The HTML depends only on the language, the search text as it is searched
    (spaces collapsed, cut to length) and the tag filter when the tag exists
    (an unknown tag filters nothing), so those are the key; the topics are
    loaded once per process.
    """
    state: ExplorerState = request.app.state
    query = " ".join(q.split())[: state.config.max_search_chars]
    active_tag = tag if tag in state.tag_keys else ""
    key = (template, lang, query, active_tag, whylab.__version__)
    kept = kept_page(state, request, key)
    if kept is not None:
        return kept
    registry = state.registry
    hits = registry.search_index.search(query, lang, limit=50) if query else None
    context = home_context(registry, lang, state.links, query=query, tag=active_tag, hits=hits)
    text = state.env.get_template(template).render(**context)
    if state.pages is None:
        return HTMLResponse(text)
    return await keep_page(state, request, key, text)


def cards_route(template: str):
    """The endpoint of the home page (``home.html``) or its card list (``_cards.html``)."""

    async def endpoint(request: Request) -> Response:
        lang, query = page_lang(request.path_params["lang"]), request.query_params
        q, tag = query.get("q", ""), query.get("tag", "")
        return await cards_page(request, template, lang, q, tag)

    return endpoint


async def topic_page(request: Request) -> Response:
    state: ExplorerState = request.app.state
    slug = request.path_params["slug"]
    topic = state.registry.get(slug)
    lang = page_lang(request.path_params["lang"])
    if topic is None:
        raise PageNotFound(lang, slug)
    problem = query_problem(state, request, lang)
    if problem is not None:
        return error_page(state, lang, 422, problem)
    raw: dict[str, dict[str, str]] = {}
    page_query: list[tuple[str, str]] = []
    for key, value in request.query_params.items():
        name, dot, param = key.partition(".")
        if not dot or name not in topic.experiments:
            # Not addressed to an experiment of this page (a shared link's utm_source,
            # fbclid, ref=...): ignored, and left out of the page's links and cache key.
            continue
        raw.setdefault(name, {})[param] = value
        page_query.append((key, value))
    placements = topic.placements()
    # Only the timing blocks name the page's key (by their latest measurement); the
    # other views are built when the page is not kept.
    timing_views = {
        p.name: new_view(topic.experiments[p.name], p.kind, raw.get(p.name, {}))
        for p in placements
        if topic.experiments[p.name].timing
    }
    key = await page_key(state, lang, topic, timing_views, raw, page_query)
    kept = kept_page(state, request, key) if key is not None else None
    if kept is not None:
        return kept
    views = {
        p.name: timing_views.get(p.name)
        or new_view(topic.experiments[p.name], p.kind, raw.get(p.name, {}))
        for p in placements
    }
    try:
        runs = [
            fill_view(state, request, view, topic, raw.get(name, {}), lang)
            for name, view in views.items()
        ]
        outcomes = await unless_client_leaves(request, asyncio.gather(*runs))
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    # A bad parameter is the reader's to fix (422); a slow, busy or rate-limited
    # experiment is reported inside its own block and the rest of the page is served.
    status = 422 if any(status == 422 for status, _ in outcomes) else 200
    context = topic_context(topic, lang, state.links, views, page_query, state.registry)
    # Rendering takes tens of milliseconds: off the event loop, so requests answered
    # from memory meanwhile are not held up behind it.
    text = await asyncio.to_thread(state.env.get_template("topic.html").render, **context)
    if key is not None and state.pages is not None and status == 200 and all_from_cache(views):
        return await keep_page(state, request, key, text)
    return HTMLResponse(text, status)


router.add_route("/{lang}/", cards_route("home.html"), methods=["GET"], include_in_schema=False)
router.add_route(
    "/{lang}/cards", cards_route("_cards.html"), methods=["GET"], include_in_schema=False
)
router.add_route("/{lang}/topics/{slug}", topic_page, methods=["GET"], include_in_schema=False)


@router.get("/{lang}/topics/{slug}/experiments/{name}/result", include_in_schema=False)
async def result_fragment(request: Request, lang: str, slug: str, name: str) -> Response:
    state: ExplorerState = request.app.state
    found = find_experiment(state, slug, name)
    if lang not in LANGS or found is None:
        return HTMLResponse(f'<p class="run-error">{translate("not_found", "en")}</p>', 404)
    topic, experiment = found
    kind = next((p.kind for p in topic.placements() if p.name == name), "experiment")
    raw = dict(request.query_params)
    view = new_view(experiment, kind, raw)
    context = {"lang": lang, "links": state.links, "topic": topic, "view": view}
    problem = query_problem(state, request, lang)
    if problem is not None:
        view.error = problem
        return html(state, "_result.html", context, 422)
    try:
        status, retry_after_s = await unless_client_leaves(
            request, fill_view(state, request, view, topic, raw, lang)
        )
    except ClientGone:
        return Response(status_code=CLIENT_CLOSED_REQUEST)
    if view.result_html is not None:
        return HTMLResponse(view.result_html, status)
    headers = None
    if retry_after_s is not None:
        headers = {"Retry-After": retry_after_header(retry_after_s)}
    return html(state, "_result.html", context, status, headers)
