"""The per-client CPU-time budget of :mod:`whylab.explorer.runs.ratelimit`, shared on Redis.

Behind a load balancer one reader's requests reach several servers; a budget
kept by each server would give that reader one budget per server. Here the
balance of each client lives in Redis (``whylab:budget:<client>``: its seconds
and when they were counted), so every server admits and charges against the
same one. The arithmetic (refill at ``rate`` up to ``burst_s``, the smallest
charge, the wait until the balance is positive) is :class:`RateLimiter`'s own;
only where the balance is kept differs.

Admitting a run and charging it up front (:meth:`RateLimiter.reserve`) is one
step on Redis too: a Lua script (:data:`_TAKE`) reads the balance, refills it,
refuses when it is spent and otherwise takes the charge, all inside Redis,
which runs a script with nothing else in between. Read first and charged in a
second round trip, two servers would each see the same positive balance and
each admit a run on it. A Lua script rather than ``WATCH``/``MULTI``: the
update is arithmetic on one key of ours, so it needs no retries, and a client
hammering one balance through many servers would make optimistic transactions
retry each other. A key expires once its balance would have refilled
completely, which keeps Redis's memory bounded.

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

# KEYS: the balance. ARGV: now, seconds to take, 1 to take them only while the balance is
# positive (admit a run) or 0 (settle one), rate, burst. Returns {1, balance after} when
# taken, {0, balance} when refused; numbers as text (Redis would truncate them to integers).
# A balance that cannot be read counts as a full one, as RedisRateLimiter._stored does.
_TAKE = """
local now, take, admit = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local rate, burst = tonumber(ARGV[4]), tonumber(ARGV[5])
local stored = redis.call('HMGET', KEYS[1], 'seconds', 'last')
local seconds, last = tonumber(stored[1]), tonumber(stored[2])
local balance = burst
if seconds and last then balance = math.min(burst, seconds + (now - last) * rate) end
if admit and balance <= 0 then return {0, string.format('%.17g', balance)} end
balance = balance - take
local text = string.format('%.17g', balance)
redis.call('HSET', KEYS[1], 'seconds', text, 'last', ARGV[1])
-- Once refilled to the brim the key says nothing: let it go.
redis.call('EXPIRE', KEYS[1], math.max(1, math.floor((burst - balance) / rate) + 1))
return {1, text}
"""


class RedisRateLimiter(RateLimiter):
    """A :class:`RateLimiter` whose balances are kept in Redis, for every server at once."""

    def __init__(self, link: RedisLink, rate: float, burst_s: float, min_charge_s: float = 0.01):
        super().__init__(rate, burst_s, clock=time.time, min_charge_s=min_charge_s)
        self.link = link
        self._take = link.sync.register_script(_TAKE)

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

    def take(self, client: str, seconds: float, admit: bool) -> float:
        if not self.link.usable():
            return super().take(client, seconds, admit)
        try:
            taken, balance = self._take(
                keys=[self._key(client)],
                args=[repr(self._clock()), repr(seconds), int(admit), repr(self.rate),
                      repr(self.burst_s)],
            )  # fmt: skip
        except self.link.errors as error:
            self._fault(error)
            return super().take(client, seconds, admit)
        self.link.worked()
        return 0.0 if taken else self.wait_for(float(balance))

    def _fault(self, error: BaseException) -> None:
        if isinstance(error, self.link.outage_errors):
            self.link.failed(error)
        else:
            log.warning("client budget on %s: %s: %s", self.link.where, type(error).__name__, error)
