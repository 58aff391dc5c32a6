"""Start-up work of ``whylab serve``: compute the default results, then fill the page cache.

Without it the first reader of each page after a restart waits for the page
to be rendered (tens of milliseconds, seconds when dozens of first visits
render at once and share one interpreter lock). So once the server is up it:

1. runs every deterministic experiment at its defaults, one at a time, into
   the result cache (a hit when the cache already holds it; timing
   experiments are not run here: a page shows their latest measurement);
2. asks the app itself for every page a reader lands on -- the home page,
   every topic page and the not-found page, in each language, at default
   parameters -- through the same ASGI stack a browser's request takes, so
   each is rendered and kept whole exactly as a first visit would keep it;
3. with ``measure``, measures every timing experiment at its defaults that
   has no kept measurement (:meth:`TimingQueue.recall`) -- one at a time,
   through the server's single line of timing runs as background runs, so a
   reader's Measure goes ahead of them and no page waits for one -- and renders
   that topic's pages again, so they show the measurement.

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
from whylab.explorer.runs.timing import TimingQueue

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
    measured: int = 0  # timing experiments measured at their defaults
    measure_failed: int = 0  # ... whose measurement failed
    measurements_kept: int = 0  # ... not measured: a kept measurement was there


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


# While the line holds a reader's run, the background measurements wait this long between
# looks at it (their runs go behind readers' anyway; this keeps them from piling up).
IDLE_POLL_S = 0.5


async def measure_defaults(
    app: Any, registry: TopicRegistry, timing: TimingQueue, report: WarmUp
) -> None:
    """Measure each timing experiment at its defaults where nothing is kept, one at a time
    while the line is otherwise idle; then render the topic's landing pages again."""
    for topic in registry:
        measured = False
        for experiment in topic.experiments.values():
            if not experiment.timing:
                continue
            defaults = experiment.defaults()
            if await timing.recall(topic, experiment, defaults) is not None:
                report.measurements_kept += 1
                continue
            while not timing.idle():
                await asyncio.sleep(IDLE_POLL_S)
            try:
                await timing.measure(topic, experiment, defaults, background=True)
            except RunFailure:
                report.measure_failed += 1  # the block keeps its prompt
                continue
            report.measured += 1
            measured = True
        if measured and app.state.pages is not None:
            for lang in LANGS:
                await get(app, f"/{lang}/topics/{topic.slug}")


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


async def warm_up(
    app: Any,
    registry: TopicRegistry,
    service: ExperimentService,
    report: WarmUp,
    timing: TimingQueue | None = None,
):
    """Compute the defaults, render every landing page once, then (given ``timing``)
    measure the timing defaults; log one line after the pages and one after measuring."""
    try:
        await compute_defaults(registry, service)
        if app.state.pages is not None:
            await fill_pages(app, registry, report)
        if timing is not None:
            started = time.perf_counter()
            await measure_defaults(app, registry, timing, report)
            log.info(
                "timing experiments at their defaults: %d measured, %d failed, %d already kept, "
                "in %.1f s",
                report.measured,
                report.measure_failed,
                report.measurements_kept,
                time.perf_counter() - started,
            )
    finally:
        report.done.set()


async def fill_pages(app: Any, registry: TopicRegistry, report: WarmUp) -> None:
    """Render every landing page once through the app, so each is kept whole."""
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
