"""The connection to Redis in a several-machine deployment, and what happens when it goes away.

Only ``whylab serve --redis-url`` and ``whylab worker`` use this module (the
embedded default needs no Redis and never imports the ``redis`` package).
:class:`RedisLink` holds one blocking client (for the quick calls: a cache
read, an enqueue, a charge) and one asyncio client (for waiting on an answer
without holding a thread), both with short connect and read timeouts, so a
Redis that is down or unreachable is noticed in seconds rather than hanging a
request.

A server calls the blocking client through :meth:`RedisLink.call`, on a few
threads of the link's own, never on the event loop: a Redis that stops
answering (a stopped process, a host gone from the network) holds such a call
for up to ``SOCKET_TIMEOUT_S``, and on the loop that would hold every other
request -- pages, search, static files -- for as long. Why threads and not
``redis.asyncio`` for these calls: the cache, the rate limit and the queue keep
one blocking implementation each (Lua scripts, a ``WATCH`` transaction, RQ,
which is blocking only), shared with ``whylab worker`` and the start-up banner,
which have no event loop; an asyncio copy of each would be a second
implementation of the same logic. The threads are the link's own so that calls
stuck on a silent Redis cannot use up the loop's default executor, which other
work (writing large cache records, joining processes) needs.

When a call fails for want of Redis, :meth:`RedisLink.failed` logs it once and
Redis is left alone for ``retry_s`` seconds: runs answer 503 with
``Retry-After`` (:class:`RedisUnavailable`) and results are kept in this
server's memory meanwhile. The first call that works again logs that Redis is
back.

After Redis restarts, every pooled connection is a dead socket. Both clients
retry a command that fails with a connection error once, on a fresh
connection (redis-py's ``Retry``), so a stale connection costs a reconnect,
not a failed run and another back-off; and while Redis is left alone, one of
the link's threads pings it every ``PROBE_S``, ending the back-off as soon as
it answers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit

from whylab.explorer.runs.errors import REDIS_RETRY_S, RedisUnavailable

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2.0  # a Redis host that does not answer at all
SOCKET_TIMEOUT_S = 5.0  # one command (the blocking waits ask for less than this)
KEY_PREFIX = "whylab"
SCHEMES = ("redis", "rediss", "unix")
CALL_THREADS = 8  # blocking Redis calls of one server at once (each ends within its timeout)
PROBE_S = 0.25  # while Redis is left alone, how often it is pinged to see it back

Returned = TypeVar("Returned")


def check_redis_url(url: str) -> str:
    """``url`` if it names a Redis server (``redis://host:port/db``, ``rediss://``, ``unix://``).

    Raises ValueError saying what is wrong. Only the form is checked here, not
    whether the server answers.
    """
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise ValueError(f"{url!r} is not a Redis URL ({error})") from None
    if parts.scheme not in SCHEMES:
        raise ValueError(
            f"{url!r} is not a Redis URL: it must start with redis://, rediss:// or unix://"
        )
    if parts.scheme == "unix":
        if not parts.path:
            raise ValueError(f"{url!r} names no socket path")
        return text
    if not parts.hostname:
        raise ValueError(f"{url!r} names no host")
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"{url!r}: the port must be between 1 and 65535")
    database = parts.path.lstrip("/")
    if database and not (database.isascii() and database.isdigit()):
        raise ValueError(f"{url!r}: the database must be a number, got {database!r}")
    return text


def redacted(url: str) -> str:
    """``url`` without its password, for logs and the start-up banner."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:***@" if parts.username else "***@"
    return parts._replace(netloc=user + netloc).geturl()


class RedisLink:
    """A blocking and an asyncio Redis client for one URL, and whether Redis is up."""

    def __init__(self, url: str, retry_s: float = REDIS_RETRY_S):
        import redis
        import redis.asyncio
        import redis.asyncio.retry
        import redis.backoff
        import redis.retry

        self.url = check_redis_url(url)
        self.where = redacted(self.url)
        self.retry_s = retry_s
        options: dict[str, Any] = {
            "socket_connect_timeout": CONNECT_TIMEOUT_S,
            "socket_timeout": SOCKET_TIMEOUT_S,
            "health_check_interval": 30,
            # A dead pooled socket (Redis restarted): once more, on a new connection.
            # Not on a timeout: a Redis that does not answer would hold each call twice as long.
            "retry_on_error": [redis.exceptions.ConnectionError],
        }
        self.sync = redis.Redis.from_url(
            self.url, retry=redis.retry.Retry(redis.backoff.NoBackoff(), 1), **options
        )
        self.aio = redis.asyncio.Redis.from_url(
            self.url, retry=redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 1), **options
        )
        # What "Redis is not there" looks like; any other RedisError is a fault of one call.
        self.outage_errors: tuple[type[BaseException], ...] = (
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
            OSError,
        )
        self.errors: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError)
        self._lock = threading.Lock()
        self._down = False
        self._retry_at = 0.0
        self._probing = False
        self._closed = threading.Event()
        self.refused_credentials = False  # the last failure was Redis refusing our password
        self._calls = ThreadPoolExecutor(CALL_THREADS, thread_name_prefix="whylab-redis")

    async def call(self, function: Callable[..., Returned], *args: Any, **kwargs: Any) -> Returned:
        """``function(*args, **kwargs)`` on the link's threads, so the event loop never waits.

        For any blocking call that may talk to Redis (it returns or raises
        what ``function`` does).
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._calls, functools.partial(function, *args, **kwargs)
        )

    def key(self, *parts: str) -> str:
        return ":".join((KEY_PREFIX, *parts))

    def usable(self) -> bool:
        """False while Redis is being left alone after a failure."""
        return time.monotonic() >= self._retry_at

    @property
    def down(self) -> bool:
        return self._down

    def unavailable(self) -> RedisUnavailable:
        """The failure a run gets while Redis is away, saying why."""
        return RedisUnavailable(self.retry_s, self.refused_credentials)

    def failed(self, error: BaseException) -> None:
        """A call failed for want of Redis: log it (once per outage) and back off."""
        import redis

        refused = isinstance(error, redis.exceptions.AuthenticationError) or (
            isinstance(error, redis.exceptions.ResponseError)
            and str(error).startswith(("NOAUTH", "WRONGPASS"))
        )
        with self._lock:
            self.refused_credentials = refused
            self._retry_at = time.monotonic() + self.retry_s
            probe, self._probing = not self._probing, True
            if probe:
                try:
                    self._calls.submit(self._probe_until_back)
                except RuntimeError:  # closed
                    self._probing = False
            if self._down:
                return
            self._down = True
        if refused:
            log.error(
                "redis at %s refuses the credentials in the URL (%s: %s): runs answer 503 "
                "until the password in --redis-url (or WHYLAB_REDIS_URL) is right",
                self.where,
                type(error).__name__,
                error,
            )
            return
        log.warning(
            "redis at %s cannot be reached (%s: %s): runs answer 503 and results stay in "
            "this server's memory until it is back",
            self.where,
            type(error).__name__,
            error,
        )

    def _probe_until_back(self) -> None:
        """Ping every PROBE_S during the back-off; if Redis answers, end the back-off at once.

        Bounded by the back-off (so no thread outlives it; the next failure
        starts another probe).
        """
        while not self._closed.wait(PROBE_S) and time.monotonic() < self._retry_at:
            try:
                self.sync.ping()
            except self.errors:
                continue
            with self._lock:
                self._retry_at, self._probing = 0.0, False
            self.worked()
            return
        with self._lock:
            self._probing = False

    def worked(self) -> None:
        """A call went through: if Redis was down, say (once) that it is back."""
        if not self._down:
            return
        with self._lock:
            if not self._down:
                return
            self._down = False
        log.warning("redis at %s is reachable again", self.where)

    def ping(self) -> bool:
        """Whether Redis answers now (recorded like any other call)."""
        try:
            self.sync.ping()
        except self.errors as error:
            self.failed(error)
            return False
        self.worked()
        return True

    async def aclose(self) -> None:
        self._closed.set()
        await self.aio.aclose()
        self._calls.shutdown(wait=False, cancel_futures=True)
        self.sync.close()
