"""A per-client token bucket: how many experiment runs one visitor may ask for.

Each client (by IP address) has a bucket holding up to ``burst`` tokens that
refills at ``rate`` tokens per second. A request that runs an experiment takes a
token; with the bucket empty the request is refused (HTTP 429) and told how many
seconds until a token is back (``Retry-After``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable


class RateLimiter:
    def __init__(
        self,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
    ):
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._max_clients = max_clients
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, last refill)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """Take a token for ``client``: 0.0 if allowed, else the seconds to wait."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                self._forget_idle(now)
                return 0.0
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def _forget_idle(self, now: float) -> None:
        """Keep memory bounded: drop clients whose bucket has refilled completely."""
        if len(self._buckets) <= self._max_clients:
            return
        full_after = self.burst / self.rate
        self._buckets = {
            client: state for client, state in self._buckets.items() if now - state[1] < full_after
        }


def retry_after_header(seconds: float) -> str:
    """``Retry-After`` takes whole seconds; never advise 0."""
    return str(max(1, math.ceil(seconds)))
