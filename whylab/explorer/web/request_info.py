"""What the routes read from a request: the preferred language, the accepted encoding,
If-None-Match, the client, a repeated query parameter, and whether the client has left."""

from __future__ import annotations

import asyncio

from fastapi import Request

from whylab.explorer.experiment import LANGS

# nginx's code for "the client closed the connection first"; nobody reads it, logs do.
CLIENT_CLOSED_REQUEST = 499


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


def client_of(request: Request) -> str:
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
