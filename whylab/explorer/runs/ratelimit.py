"""A per-client budget of experiment CPU time: what one visitor may make the server compute.

Each client (by IP address, as the server sees it: see
:mod:`whylab.explorer.web.server` on forwarded headers) holds a balance of up to
``burst_s`` CPU-seconds that refills at ``rate`` CPU-seconds per second. A run is
*charged after it ran*, by the CPU seconds its worker spent (at least
``min_charge_s``, the round trip's own cost), so a reader trying a hundred
cheap variations pays little and one asking for the costliest parameters pays
much. A client may start a new run while its balance is above zero; below,
the run is refused (HTTP 429) with the seconds until the balance is back
(``Retry-After``).

Only runs that are computed are charged and limited: a cached result, a page
view and a reader joining a run someone else started cost nothing.

Charged after it ran alone, a run would be admitted on a balance that the runs
already under way will take: ten runs asked at once would all be admitted on
the same positive balance. So a run is charged *up front* what it is expected
to cost (:meth:`RateLimiter.reserve`), and the difference is settled when it
ends (:meth:`RateLimiter.settle`): refunded when it cost less, charged when it
cost more, refunded in full when it was not computed after all.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from whylab.explorer.runs.errors import RateLimited


class RateLimiter:
    def __init__(
        self,
        rate: float,
        burst_s: float,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
        min_charge_s: float = 0.01,
    ):
        if not (math.isfinite(rate) and rate > 0) or not (math.isfinite(burst_s) and burst_s > 0):
            raise ValueError(
                f"a rate limit needs a finite rate > 0 and burst > 0, got {rate} and {burst_s}"
            )
        self.rate = rate
        self.burst_s = burst_s
        self.min_charge_s = min_charge_s
        self._clock = clock
        self._max_clients = max_clients
        self._balances: dict[str, tuple[float, float]] = {}  # client -> (seconds, last refill)
        self._lock = threading.Lock()

    def refilled(self, seconds: float, last: float, now: float) -> float:
        """A balance of ``seconds`` at time ``last``, refilled up to ``burst_s`` by ``now``."""
        return min(self.burst_s, seconds + (now - last) * self.rate)

    def _balance(self, client: str, now: float) -> float:
        seconds, last = self._balances.get(client, (self.burst_s, now))
        return self.refilled(seconds, last, now)

    def balance(self, client: str) -> float:
        """``client``'s balance now, in CPU-seconds (below zero: in debt)."""
        now = self._clock()
        with self._lock:
            return self._balance(client, now)

    def wait_s(self, client: str) -> float:
        """0.0 if ``client`` may start a run now, else the seconds until it may."""
        return self.wait_for(self.balance(client))

    def wait_for(self, balance: float) -> float:
        """0.0 if a balance of ``balance`` admits a run, else the seconds until it would."""
        return 0.0 if balance > 0 else (-balance / self.rate) + 1e-3

    def admit(self, client: str) -> None:
        """Raise :class:`RateLimited` unless ``client`` may start a run now."""
        wait = self.wait_s(client)
        if wait:
            raise RateLimited(wait)

    def charge(self, client: str, cpu_s: float) -> None:
        """Take the cost of a finished run from ``client``'s balance (it may go below zero)."""
        self.adjust(client, self.cost(cpu_s))

    def reserve(self, client: str, expected_s: float) -> float:
        """Admit a run (else raise :class:`RateLimited`) and charge its expected cost now.

        Returns the seconds charged, which :meth:`settle` later corrects. The check
        and the charge are one step (:meth:`take`): runs asked at the same moment
        cannot all pass on the balance the first of them spends.
        """
        reserved = self.cost(expected_s)
        wait = self.take(client, reserved, admit=True)
        if wait:
            raise RateLimited(wait)
        return reserved

    def settle(self, client: str, reserved_s: float, cpu_s: float | None) -> None:
        """Correct a reservation by what the run cost (``None``: nothing, refund it all)."""
        spent = 0.0 if cpu_s is None else self.cost(cpu_s)
        if spent != reserved_s:
            self.adjust(client, spent - reserved_s)

    def adjust(self, client: str, seconds: float) -> None:
        """Take ``seconds`` from ``client``'s balance (negative: give them back)."""
        self.take(client, seconds, admit=False)

    def take(self, client: str, seconds: float, admit: bool) -> float:
        """Take ``seconds`` from ``client``'s balance; with ``admit``, only while it is positive.

        Returns 0.0 when taken, else (refused) the seconds until the balance
        admits a run. The check and the update are one step under the lock.
        """
        now = self._clock()
        with self._lock:
            balance = self._balance(client, now)
            if admit and balance <= 0:
                return self.wait_for(balance)
            self._balances[client] = (balance - seconds, now)
            self._forget_idle(now)
        return 0.0

    def cost(self, cpu_s: float) -> float:
        """What a run of ``cpu_s`` CPU-seconds is charged (at least ``min_charge_s``)."""
        return max(cpu_s, self.min_charge_s)

    def _forget_idle(self, now: float) -> None:
        """Keep memory bounded: drop clients whose balance has refilled completely."""
        if len(self._balances) <= self._max_clients:
            return
        self._balances = {
            client: (seconds, last)
            for client, (seconds, last) in self._balances.items()
            if seconds + (now - last) * self.rate < self.burst_s
        }
