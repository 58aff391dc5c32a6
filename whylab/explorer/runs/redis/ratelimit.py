"""The per-client CPU-time budget of :mod:`whylab.explorer.runs.ratelimit`, shared on Redis.

Behind a load balancer one reader's requests reach several servers; a budget
kept by each server would give that reader one budget per server. Here the
balance of each client lives in Redis (``whylab:budget:<client>``: its seconds
and when they were counted), so every server admits and charges against the
same one. The arithmetic (refill at ``rate`` up to ``burst_s``, the smallest
charge, the wait until the balance is positive) is :class:`RateLimiter`'s own;
only where the balance is kept differs. A charge is an optimistic transaction
(``WATCH``), so two servers charging one client at once both count. A key
expires once its balance would have refilled completely, which keeps Redis's
memory bounded.

The clock is wall time (``time.time``), the one clock the servers share; keep
their clocks in sync (NTP). While Redis cannot be reached, each server falls
back on a budget of its own, in memory.
"""

from __future__ import annotations

import logging
import time

from whylab.explorer.runs.ratelimit import RateLimiter
from whylab.explorer.runs.redis.link import RedisLink

log = logging.getLogger(__name__)


class RedisRateLimiter(RateLimiter):
    """A :class:`RateLimiter` whose balances are kept in Redis, for every server at once."""

    def __init__(self, link: RedisLink, rate: float, burst_s: float, min_charge_s: float = 0.01):
        super().__init__(rate, burst_s, clock=time.time, min_charge_s=min_charge_s)
        self.link = link

    def _key(self, client: str) -> str:
        return self.link.key("budget", client)

    def balance(self, client: str) -> float:
        if not self.link.usable():
            return super().balance(client)
        try:
            seconds, last = self.link.sync.hmget(self._key(client), "seconds", "last")
        except self.link.errors as error:
            self._fault(error)
            return super().balance(client)
        self.link.worked()
        return self._stored(seconds, last, self._clock())

    def _stored(self, seconds: bytes | None, last: bytes | None, now: float) -> float:
        """The balance Redis holds, refilled to ``now``; a full one if none (or unreadable)."""
        try:
            return self.refilled(float(seconds), float(last), now)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return self.burst_s

    def adjust(self, client: str, seconds: float) -> None:
        if not self.link.usable():
            super().adjust(client, seconds)
            return
        import redis

        key = self._key(client)
        try:
            with self.link.sync.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(key)
                        stored, last = pipe.hmget(key, "seconds", "last")
                        now = self._clock()
                        balance = self._stored(stored, last, now) - seconds
                        pipe.multi()
                        pipe.hset(key, mapping={"seconds": repr(balance), "last": repr(now)})
                        # Once refilled to the brim the key says nothing: let it go.
                        pipe.expire(key, max(1, int((self.burst_s - balance) / self.rate) + 1))
                        pipe.execute()
                        break
                    except redis.WatchError:
                        continue  # another server charged this client meanwhile: count again
        except self.link.errors as error:
            self._fault(error)
            super().adjust(client, seconds)
            return
        self.link.worked()

    def _fault(self, error: BaseException) -> None:
        if isinstance(error, self.link.outage_errors):
            self.link.failed(error)
        else:
            log.warning("client budget on %s: %s: %s", self.link.where, type(error).__name__, error)
