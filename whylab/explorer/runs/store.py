"""The run back-ends, embedded or on Redis, chosen in one place (:func:`open_backends`).

A deployment is either this machine alone (a SQLite result cache, a worker pool of
local processes, an in-memory rate limit) or several servers sharing one Redis (the
result cache, the run queue, the rate limit and the runs in flight all there). The
rest of the explorer sees one interface either way; the one difference it must
respect is how the back-ends' blocking methods are called from the event loop,
which :class:`BlockingCalls` says:

* :class:`EmbeddedCalls`: the SQLite cache and the in-memory rate limit answer in
  microseconds and are called directly; a write of a large record goes to a thread;
* :class:`LinkCalls`: a Redis that stops answering holds a call for up to its socket
  timeout, so every call goes to the link's threads, where it cannot hold up the
  other requests.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from whylab.explorer.runs.cache import ResultCache, default_cache_dir
from whylab.explorer.runs.ratelimit import RateLimiter
from whylab.explorer.runs.workers import Job, Outcome, WorkerPool

Returned = TypeVar("Returned")


class BlockingCalls(Protocol):
    """How the event loop calls a back-end's blocking methods."""

    async def call(self, function: Callable[..., Returned], *args: Any) -> Returned:
        """``function(*args)`` for a quick read or update (a cache lookup, a rate limit)."""
        ...

    async def write(self, function: Callable[..., Returned], *args: Any) -> Returned:
        """``function(*args)`` for a write that may take a while (a large record)."""
        ...


class EmbeddedCalls:
    """Back-ends on this machine: quick calls run here, writes in a thread."""

    async def call(self, function: Callable[..., Returned], *args: Any) -> Returned:
        return function(*args)

    async def write(self, function: Callable[..., Returned], *args: Any) -> Returned:
        return await asyncio.to_thread(function, *args)


class LinkCalls:
    """Back-ends on Redis: every call on the link's threads (see ``RedisLink.call``)."""

    def __init__(self, link: Any):
        self.link = link

    async def call(self, function: Callable[..., Returned], *args: Any) -> Returned:
        return await self.link.call(function, *args)

    async def write(self, function: Callable[..., Returned], *args: Any) -> Returned:
        return await self.link.call(function, *args)


class JobRunner(Protocol):
    """What runs jobs: the embedded ``WorkerPool`` or a deployment's ``RemotePool``."""

    async def submit(self, job: Job, client: str = "") -> Outcome: ...

    def deadline_s(self, job: Job) -> float: ...


class RunSettings(Protocol):
    """The settings :func:`open_backends` reads (an ``ExplorerConfig`` has them all)."""

    redis_url: str | None
    use_cache: bool
    cache_dir: Path | None
    cache_max_mb: float
    workers: int
    memory_limit_mb: int
    max_queue: int
    queue_wait_s: float
    spawn_timeout_s: float
    rate_per_s: float
    rate_burst: float


@dataclass
class Backends:
    """Where runs are computed, results kept, clients' CPU time counted and runs in flight
    known (``flights``: only on Redis, shared by every server), and how to call them."""

    pool: JobRunner
    cache: Any  # ResultCache or RedisResultCache; None with the cache off
    limiter: RateLimiter | None  # None with the rate limit off
    flights: Any  # SharedFlights on Redis; None on one machine
    calls: BlockingCalls


def open_backends(settings: RunSettings, topics: Iterable[Any] = ()) -> Backends:
    """This machine alone, or, with ``redis_url``, the deployment's Redis.

    ``topics`` (the server's registry) give the code version whose lanes a
    deployment's runs go to (:func:`~whylab.explorer.runs.redis.queue.code_version`).
    """
    max_bytes = max(1, math.floor(settings.cache_max_mb * 2**20))
    limited = settings.rate_burst > 0
    if settings.redis_url is not None:
        from whylab.explorer.runs.redis.cache import RedisResultCache
        from whylab.explorer.runs.redis.flights import SharedFlights
        from whylab.explorer.runs.redis.link import RedisLink
        from whylab.explorer.runs.redis.queue import RemotePool, code_version
        from whylab.explorer.runs.redis.ratelimit import RedisRateLimiter

        link = RedisLink(settings.redis_url)
        return Backends(
            pool=RemotePool(
                link,
                settings.max_queue,
                version=code_version(topics),
                queue_wait_s=settings.queue_wait_s,
            ),
            cache=RedisResultCache(link, max_bytes) if settings.use_cache else None,
            limiter=(
                RedisRateLimiter(link, settings.rate_per_s, settings.rate_burst)
                if limited
                else None
            ),
            flights=SharedFlights(link),
            calls=LinkCalls(link),
        )
    cache = (
        ResultCache(settings.cache_dir or default_cache_dir(), max_bytes=max_bytes)
        if settings.use_cache
        else None
    )
    pool = WorkerPool(
        settings.workers,
        settings.memory_limit_mb,
        settings.max_queue,
        queue_wait_s=settings.queue_wait_s,
        spawn_timeout_s=settings.spawn_timeout_s,
    )
    limiter = RateLimiter(settings.rate_per_s, settings.rate_burst) if limited else None
    return Backends(pool=pool, cache=cache, limiter=limiter, flights=None, calls=EmbeddedCalls())
