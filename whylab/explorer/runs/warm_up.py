"""Start-up work of ``whylab serve``: compute the default results, then fill the page cache.

Without it the first reader of each page after a restart waits for the page
to be rendered (tens of milliseconds, seconds when dozens of first visits
render at once and share one interpreter lock). So once the server is up it:

1. runs every deterministic experiment at its defaults, one at a time, into
   the result cache (a hit when the cache already holds it; timing
   experiments are never run: a page shows their latest measurement);
2. asks the app itself for every page a reader lands on -- the home page,
   every topic page and the not-found page, in each language, at default
   parameters -- through the same ASGI stack a browser's request takes, so
   each is rendered and kept whole exactly as a first visit would keep it.

A page view computes what it needs and nothing more, so step 2 runs nothing
a reader's first visit would not; after step 1 it only reads the result
cache. This runs as a task on the server's event loop: template rendering and
compression happen in threads (as for any page rendered on request), so the
loop keeps answering requests meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from whylab.explorer.content.topics import TopicRegistry
from whylab.explorer.experiment import LANGS
from whylab.explorer.runs.errors import RunFailure
from whylab.explorer.runs.service import ExperimentService

log = logging.getLogger(__name__)

# A path no topic has: the warm-up's request for the not-found page.
NOT_FOUND_PATH = "/{lang}/topics/no-such-topic"


@dataclass
class WarmUp:
    """What the start-up work did; ``done`` is set when it has finished or was cancelled."""

    done: threading.Event = field(default_factory=threading.Event)
    topic_pages: int = 0  # topic pages rendered
    kept: int = 0  # of those, kept whole (every block came from the result cache)
    other_pages: int = 0  # home and not-found pages
    seconds: float = 0.0


def warm_paths(registry: TopicRegistry) -> tuple[list[str], list[str]]:
    """(topic page paths, other page paths) a reader lands on, in each language."""
    topics = [f"/{lang}/topics/{topic.slug}" for lang in LANGS for topic in registry]
    others = [path for lang in LANGS for path in (f"/{lang}/", NOT_FOUND_PATH.format(lang=lang))]
    return topics, others


async def compute_defaults(registry: TopicRegistry, service: ExperimentService) -> None:
    """Compute every deterministic default in the background, one at a time."""
    for topic in registry:
        for experiment in topic.experiments.values():
            if experiment.timing:
                continue
            try:
                await service.run(topic, experiment, experiment.defaults(), client="warm-up")
            except RunFailure:
                continue  # the page will show the failure when someone asks


async def get(app: Any, path: str) -> tuple[int, dict[bytes, bytes]]:
    """GET ``path`` from the ASGI ``app`` in this process, as a gzip-accepting client that
    stays until the answer is complete; returns the status and the response headers."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"warm-up"), (b"accept-encoding", b"gzip")],
        "client": ("warm-up", 0),
        "server": ("warm-up", 80),
    }
    asked = False
    answered = asyncio.Event()
    start: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await answered.wait()  # the client leaves only once it has its answer
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            answered.set()

    await app(scope, receive, send)
    return start.get("status", 0), dict(start.get("headers", []))


async def warm_up(app: Any, registry: TopicRegistry, service: ExperimentService, report: WarmUp):
    """Compute the defaults, then render every landing page once; log one line when done."""
    try:
        await compute_defaults(registry, service)
        if app.state.pages is None:
            return
        started = time.perf_counter()
        topics, others = warm_paths(registry)
        for path in topics:
            _, headers = await get(app, path)
            report.topic_pages += 1
            report.kept += b"etag" in headers  # a kept page is sent with its ETag
        for path in others:
            await get(app, path)
            report.other_pages += 1
        report.seconds = time.perf_counter() - started
        log.info(
            "page cache filled: %d of %d topic pages kept whole, %d home and not-found pages, "
            "in %.1f s",
            report.kept,
            report.topic_pages,
            report.other_pages,
            report.seconds,
        )
    finally:
        report.done.set()
