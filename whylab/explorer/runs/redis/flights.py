"""Runs in flight shared by every server of a deployment: one server computes, the rest wait.

Within one server, :class:`~whylab.explorer.runs.service.ExperimentService` already
lets a second reader of the same run join the first one's. Behind a load
balancer the second reader may reach another server, which would compute the
run a second time. So before a server computes a deterministic run it *claims*
it in Redis:

* ``whylab:flight:<key>`` -- the claim: ``SET NX`` with a random token and an
  expiry of ``CLAIM_TTL_S``, renewed every ``RENEW_S`` while the run is alive,
  deleted (only by the token's owner) when the run has ended -- after its
  result is in the shared cache, or after a failure;
* ``whylab:flight-failed:<key>`` -- how a run that cannot succeed ended (a 504,
  507 or 500: the same run would fail the same way again), kept for
  ``FAILURE_TTL_S`` so that the servers waiting for it answer that failure too
  instead of each running it again.

A server that finds the run claimed waits for it: every ``POLL_S`` it looks for
the result in the shared cache and checks the claim. When the result is there,
it answers with it (the same record the claiming server answered, so both
readers get the same answer); when the claim has gone without a result --
the claiming server died, or its run ended with a failure worth retrying (a
503) -- it claims the run itself and computes it (a take-over). It waits no
longer than the run could take on the claiming server (the queue wait, the
time limit and the margins of :meth:`deadline_s`) plus ``CLAIM_TTL_S``.

The token makes a release or a renewal by a server whose claim has expired
(it stalled) harmless: it touches only its own claim. While Redis cannot be
reached, a run is computed without a claim (and then fails with the queue's
503 anyway).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from whylab.explorer.runs.errors import RemoteFailure, RunFailure
from whylab.explorer.runs.redis.link import RedisLink

CLAIM_TTL_S = 5.0  # a claim nobody renews (its server died) is gone after this long
RENEW_S = 1.0  # how often the claiming server renews it
POLL_S = 0.2  # how often a waiting server looks for the result
FAILURE_TTL_S = 10  # how long the failure of a claimed run is kept for the servers waiting
# Failures the same run would meet again: told to the waiting servers instead of retried.
LASTING_FAILURES = (500, 504, 507)
NO_CLAIM = ""  # the token when Redis could not be asked: compute without a claim

# KEYS: claim, failure. ARGV: token, ttl in ms. 1 when the run is ours now; a new claim
# makes the failure of an earlier one history.
_CLAIM = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('DEL', KEYS[2])
  return 1
end
return 0
"""

# KEYS: claim. ARGV: token, ttl in ms. 1 when the claim was still ours and is renewed.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# KEYS: claim, failure. ARGV: token, failure JSON ('' for none), failure ttl in s.
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3]) end
return redis.call('DEL', KEYS[1])
"""


class SharedFlights:
    """Claims on runs in a deployment's Redis: who computes each run, and how it ended."""

    def __init__(
        self,
        link: RedisLink,
        claim_ttl_s: float = CLAIM_TTL_S,
        renew_s: float = RENEW_S,
        poll_s: float = POLL_S,
    ):
        if not 0 < renew_s < claim_ttl_s:
            raise ValueError(
                f"a claim must be renewed more often than it expires: renew_s = {renew_s:g}, "
                f"claim_ttl_s = {claim_ttl_s:g}"
            )
        self.link = link
        self.claim_ttl_s = claim_ttl_s
        self.renew_s = renew_s
        self.poll_s = poll_s
        self._claim = link.sync.register_script(_CLAIM)
        self._renew = link.sync.register_script(_RENEW)
        self._release = link.sync.register_script(_RELEASE)

    def _claim_key(self, key: str) -> str:
        return self.link.key("flight", key)

    def _failure_key(self, key: str) -> str:
        return self.link.key("flight-failed", key)

    def claim(self, key: str) -> str | None:
        """A token if this server may compute run ``key`` now; None if another server does.

        :data:`NO_CLAIM` when Redis cannot be asked: compute without a claim.
        """
        if not self.link.usable():
            return NO_CLAIM
        token = uuid.uuid4().hex
        try:
            claimed = self._claim(
                keys=[self._claim_key(key), self._failure_key(key)], args=[token, self._ttl_ms()]
            )
        except self.link.errors as error:
            self._fault(error)
            return NO_CLAIM
        self.link.worked()
        return token if claimed else None

    def renew(self, key: str, token: str) -> bool:
        """Extend our claim on ``key``; False if it is no longer ours (or Redis is away)."""
        if token == NO_CLAIM or not self.link.usable():
            return False
        try:
            renewed = self._renew(keys=[self._claim_key(key)], args=[token, self._ttl_ms()])
        except self.link.errors as error:
            self._fault(error)
            return False
        return bool(renewed)

    def release(self, key: str, token: str, failure: RunFailure | None = None) -> None:
        """Give up our claim on ``key``; a lasting ``failure`` is kept for the servers waiting."""
        if token == NO_CLAIM or not self.link.usable():
            return
        told = ""
        if failure is not None and failure.status in LASTING_FAILURES:
            told = json.dumps(
                {
                    "status": failure.status,
                    "message": failure.message,
                    "retry_after_s": failure.retry_after_s,
                }
            )
        try:
            self._release(
                keys=[self._claim_key(key), self._failure_key(key)],
                args=[token, told, FAILURE_TTL_S],
            )
        except self.link.errors as error:
            self._fault(error)  # the claim expires by itself

    def state(self, key: str) -> tuple[bool, RunFailure | None]:
        """Whether run ``key`` is claimed now, and the failure it ended with, if it did.

        Unclaimed when Redis cannot be asked (the caller then claims the run,
        which it computes without a claim).
        """
        if not self.link.usable():
            return False, None
        try:
            with self.link.sync.pipeline(transaction=False) as pipe:
                pipe.exists(self._claim_key(key))
                pipe.get(self._failure_key(key))
                claimed, told = pipe.execute()
        except self.link.errors as error:
            self._fault(error)
            return False, None
        return bool(claimed), _failure(told)

    def _ttl_ms(self) -> int:
        return max(1, round(self.claim_ttl_s * 1000))

    def _fault(self, error: BaseException) -> None:
        if isinstance(error, self.link.outage_errors):
            self.link.failed(error)


def _failure(told: bytes | None) -> RunFailure | None:
    """The failure a claiming server left, or None (also for one that cannot be read)."""
    if told is None:
        return None
    try:
        data: dict[str, Any] = json.loads(told)
        return RemoteFailure(int(data["status"]), str(data["message"]), data["retry_after_s"])
    except (ValueError, KeyError, TypeError):
        return None
