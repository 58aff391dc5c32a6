"""The run-failure family: every way a run can end without a result, each with the HTTP
status to answer and, for those worth retrying, the seconds to wait (``Retry-After``).

The embedded worker pool raises the process failures (time, memory, crash, a kill
from outside, a full queue, no worker); the rate limit raises :class:`RateLimited`;
the Redis deployment (:mod:`whylab.explorer.runs.redis`) adds Redis out of reach, a
worker lost mid-run, a failure answered by a remote worker and a worker with another
version of a topic. All are subclasses of :class:`RunFailure`, so the web layer
answers every one the same way.
"""

from __future__ import annotations

import math


class RunFailure(Exception):
    """An experiment run that produced no result; ``status`` is the HTTP status to answer."""

    status = 500
    retry_after_s: float | None = None  # set for failures worth retrying (503)

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class ExperimentTimeout(RunFailure):
    status = 504

    def __init__(self, limit_s: float):
        super().__init__(f"the experiment ran past its time limit of {limit_s:g} s and was stopped")
        self.limit_s = limit_s


class ExperimentMemoryError(RunFailure):
    status = 507

    def __init__(self, limit_mb: int):
        super().__init__(
            f"the experiment exceeded the memory limit of {limit_mb} MiB and was stopped"
        )
        self.limit_mb = limit_mb


class ExperimentCrashed(RunFailure):
    status = 500


class ExperimentKilled(RunFailure):
    """The worker was killed by a signal from outside (an operator, a supervisor), not by us."""

    status = 503

    def __init__(self, signal_name: str):
        super().__init__(
            f"the experiment worker was stopped from outside ({signal_name}) while running; "
            "please retry"
        )
        self.retry_after_s = 1.0


class Overloaded(RunFailure):
    status = 503

    def __init__(self, retry_after_s: float):
        super().__init__("the server is busy running other experiments; please retry shortly")
        self.retry_after_s = retry_after_s


class WorkerUnavailable(RunFailure):
    """No worker process could be started or reached for this job; the slot retries later."""

    status = 503

    def __init__(self, reason: str):
        super().__init__(f"no experiment worker is available right now ({reason}); please retry")
        self.retry_after_s = 1.0


class RateLimited(RunFailure):
    status = 429

    def __init__(self, retry_after_s: float):
        super().__init__(
            "this client has used its share of experiment time; "
            f"please retry in {retry_after_header(retry_after_s)} s"
        )
        self.retry_after_s = retry_after_s


def retry_after_header(seconds: float) -> str:
    """``Retry-After`` takes whole seconds; never advise 0."""
    return str(max(1, math.ceil(seconds)))


# ---------------------------------------------------------------- the Redis deployment

REDIS_RETRY_S = 5.0  # after a failure, Redis is not tried again for this long


class RedisUnavailable(RunFailure):
    """Redis (the shared queue and cache) cannot be reached; answered 503 with Retry-After."""

    status = 503

    def __init__(self, retry_after_s: float = REDIS_RETRY_S, refused_credentials: bool = False):
        if refused_credentials:
            message = (
                "the shared experiment queue refuses this server's credentials "
                "(its operator must fix the Redis password); please retry later"
            )
        else:
            message = "the shared experiment queue cannot be reached now; please retry shortly"
        super().__init__(message)
        self.retry_after_s = retry_after_s


class WorkerLost(RunFailure):
    """The worker running this request stopped sending heartbeats before it answered."""

    status = 503

    def __init__(self):
        super().__init__(
            "the experiment worker running this request stopped answering before it finished "
            "(its process or machine went away); please retry"
        )
        self.retry_after_s = 1.0


class RemoteFailure(RunFailure):
    """A run a remote worker answered with a failure: its status, message and retry advice."""

    def __init__(self, status: int, message: str, retry_after_s: float | None):
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


class OtherVersion(RunFailure):
    """This worker's copy of a topic is not the one the server asked for."""

    status = 503

    def __init__(self, what: str):
        super().__init__(f"an experiment worker runs another version of {what}; please retry")
        self.retry_after_s = 1.0
