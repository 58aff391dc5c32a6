"""Admitting a run by its client's budget: charged what it should cost up front, settled after.

The rate limit (:mod:`whylab.explorer.runs.ratelimit`) charges each client the CPU
seconds its runs take. Checked before a run and charged only after it, the
budget admits every run asked at the same moment on the same positive
balance. Here a run is charged its *expected* cost when it is admitted
(:meth:`Admission.admit`) and the difference is settled when it ends
(:meth:`Admission.settle`).

The expected cost of a run is :class:`~whylab.explorer.runs.service.CostEstimates`'
(the most any of the experiment's recent runs took here). A run that fails
after using its time or memory (504, 507) keeps what it was charged, and so
does a run whose client went away before its answer (else leaving just before
the end would make every run free); any other failure, and a run that was not
computed after all (another reader's run was joined), is refunded.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from whylab.explorer.runs.errors import RunFailure

if TYPE_CHECKING:
    from whylab.explorer.runs.ratelimit import RateLimiter
    from whylab.explorer.runs.redis.ratelimit import RedisRateLimiter
    from whylab.explorer.runs.store import BlockingCalls

SPENT_ON_FAILURE = frozenset({504, 507})  # the run used its time or memory limit


class Admission:
    """One run's reservation against ``client``'s budget (no limiter: admits everything);
    the limiter's methods are called through the back-ends' ``calls`` (on Redis, off the
    event loop)."""

    def __init__(self, limiter: RateLimiter | RedisRateLimiter | None, client: str,
                 calls: BlockingCalls):
        self.limiter = limiter
        self.client = client
        self.calls = calls
        self.reserved_s = 0.0

    async def admit(self, expected_s: float) -> None:
        """Charge ``expected_s`` now, or raise RateLimited (429) when the balance is spent."""
        if self.limiter is not None:
            limiter = self.limiter
            self.reserved_s = await self.calls.call(limiter.reserve, self.client, expected_s)

    async def settle(self, cpu_s: float | None) -> None:
        """The run cost ``cpu_s`` (``None``: it was not computed for this client)."""
        if self.limiter is None or not self.reserved_s:
            return
        reserved, self.reserved_s = self.reserved_s, 0.0
        limiter = self.limiter
        await self.calls.call(limiter.settle, self.client, reserved, cpu_s)

    async def settle_failure(self, error: BaseException) -> None:
        """A run that ended in ``error``: the charge stands when it spent its limit or its
        client left; else it is refunded."""
        spent = isinstance(error, RunFailure) and error.status in SPENT_ON_FAILURE
        if spent or isinstance(error, asyncio.CancelledError):
            self.reserved_s = 0.0  # what it was charged stands
        else:
            await self.settle(None)
