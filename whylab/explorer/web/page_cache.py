"""Whole topic and home pages kept in memory (body + gzip), with their ETags.

A page is kept only when rendering it again would give the same text: every
ordinary block came from the result or fragment cache, and each timing block is
named in the key by its latest measurement.
"""

from __future__ import annotations

import asyncio

from fastapi import Request
from fastapi.responses import Response

import whylab
from whylab.explorer.content.topics import Topic
from whylab.explorer.web.blocks import timing_view
from whylab.explorer.web.fragment_cache import ENCODINGS, page_encodings
from whylab.explorer.web.render import ExperimentView
from whylab.explorer.web.request_info import accepted_encoding, etag_matches
from whylab.explorer.web.state import ExplorerState


async def page_key(
    state: ExplorerState,
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
    if state.pages is None:
        return None
    measured = []
    for name, view in timing_views.items():
        if await timing_view(state, view, topic, raw.get(name, {}), lang) != 200:
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


def kept_page(state: ExplorerState, request: Request, key) -> Response | None:
    """The whole page kept under ``key``, in the encoding this client takes, or None."""
    if state.pages is None:
        return None
    encoding = accepted_encoding(request)
    stored = state.pages.get_with_digest((key, encoding))
    if stored is None or not isinstance(stored[0], bytes):
        return None
    body, digest = stored
    return page_response(request, body, encoding, digest)


async def keep_page(state: ExplorerState, request: Request, key, text: str) -> Response:
    """Keep a rendered page in both encodings (compressed off the event loop) and send it."""
    bodies = await asyncio.to_thread(page_encodings, text)
    digests = {name: state.pages.put((key, name), bodies[name]) for name in ENCODINGS}
    encoding = accepted_encoding(request)
    return page_response(request, bodies[encoding], encoding, digests[encoding])


def page_response(request: Request, body: bytes, encoding: str, digest: bytes | None) -> Response:
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
