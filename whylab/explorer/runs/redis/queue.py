"""The shared run queue of a several-machine deployment: RQ on Redis, fair across clients.

With ``whylab serve --redis-url``, a run that is not cached is not computed on
the server: :class:`RemotePool` (the same ``submit`` as the embedded
:class:`~whylab.explorer.runs.workers.WorkerPool`) puts it on a queue in Redis, and
``whylab worker`` processes on any machine (:mod:`whylab.explorer.runs.redis.worker`)
take it, run it under the same limits and send the answer back.

Why RQ. We needed time limits, a way to stop a job, to notice a dead worker,
and a project that is kept up:

* **RQ** is Redis only (we have Redis anyway; nothing else to run), small and
  pure Python, and released every month or two (2.x through 2026, 3.0 now). It
  has a per-job timeout (``job_timeout``, enforced in the worker), commands to
  stop a running job (``send_stop_job_command``), worker heartbeats with a TTL
  and a sweep that fails jobs whose worker died, JSON job payloads, and a
  ``round_robin`` dequeue strategy across queues -- what fair sharing needs.
* **Dramatiq** (Redis or RabbitMQ) redelivers the messages of a dead worker
  after a heartbeat timeout, but its time limit raises an exception in the
  worker thread, which cannot stop code running in C (a NumPy call), and
  stopping a running job needs a third-party add-on.
* **Celery** has hard time limits that kill the pool process and revokes with
  ``terminate=True``, but it brings kombu, billiard and a broker layer whose
  Redis transport redelivers unacknowledged tasks only after a visibility
  timeout (an hour by default); it is the heaviest of the three by far.

What each limit becomes here:

* **time and memory** -- the worker runs each job in its own
  :class:`~whylab.explorer.runs.workers.WorkerPool`, so the limits (and the way a
  killed or overrunning run is told apart) are those of the embedded pool, not
  a second copy. RQ's own job timeout is set above the pool's deadline as a
  backstop.
* **fair queueing** -- each client's runs go to one of ``LANES`` RQ queues, by a
  hash of the client's address, and workers dequeue ``round_robin`` across the
  lanes: a client with ten runs waiting delays another client's run by at most
  one run per worker. Two clients whose addresses hash to the same lane share
  it first come, first served (stochastic fairness queueing, McKenney 1990);
  with 16 lanes, two given clients share one with probability 1/16.
* **bounds** -- a run is refused with 503 when the whole queue holds
  ``max_queue`` runs or the client's lane its share
  (:func:`~whylab.explorer.runs.fair_queue.client_share` of the lanes with runs waiting,
  at most ``max_queue_per_client``; counted across all servers), and the last
  places are kept for a lane with nothing waiting
  (:func:`~whylab.explorer.runs.fair_queue.newcomer_room`), so clients filling the
  queue through any servers leave room for another. The count and the enqueue
  are one optimistic transaction (``WATCH`` on every lane, then RQ's own
  enqueue inside ``MULTI``/``EXEC``; see :meth:`RemotePool._enqueue`), so
  servers enqueueing at once cannot each pass a bound by a run;
  and a run that no worker took within
  ``queue_wait_s`` (all are busy) is answered 503 and dropped.
* **versions** -- the lanes are keyed by :func:`code_version`, one hash of
  every topic's code fingerprint: a server enqueues on the lanes of its own
  code, and a worker listens only on those of its own, so a worker of other
  code never takes (and refuses) a run meant for this one. A run none took
  within ``queue_wait_s`` is answered 503 naming the versions the live workers
  run, and :meth:`RemotePool.describe` counts the live workers by version. Live:
  RQ lists a worker killed with SIGKILL until its key expires (its ``worker_ttl``
  plus a minute, 8 minutes by default), so each worker also refreshes a key of
  its own every ``WORKER_BEAT_S`` (:func:`worker_alive_key`, expiring
  ``WORKER_ALIVE_TTL_S`` after the last beat), and only workers whose key is
  there are counted (:func:`live_workers`).
  (A run is not refused at once when no worker of its version is listed: after
  a Redis restart workers take runs before they are listed again.)
* **a worker killed mid-run** -- while it runs a job, the worker refreshes a
  key that expires ``ALIVE_TTL_S`` after its last heartbeat. The server waits
  for the answer and checks that key: once it has gone with no answer, the
  request ends with :class:`WorkerLost` (503, retry), within ``ALIVE_TTL_S``
  plus a poll of the kill, well inside the run's time limit plus margin.
* **integrity** -- answers carry the checksum of the cache records
  (:func:`~whylab.explorer.runs.cache.record_checksum`); a garbled answer is refused.
* **Redis gone** -- enqueueing or waiting answers :class:`RedisUnavailable`
  (503, ``Retry-After``), logged once by the :class:`RedisLink`.

The per-client CPU-time budget is shared too
(:mod:`whylab.explorer.runs.redis.ratelimit`), and so is a run in flight: a run one
server computes is not computed again for another server's readers, who wait
for its result (:mod:`whylab.explorer.runs.redis.flights`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import whylab
from whylab.explorer.runs.cache import record_checksum
from whylab.explorer.runs.errors import (
    Overloaded,
    RemoteFailure,
    RunFailure,
    WorkerLost,
    WorkerUnavailable,
)
from whylab.explorer.runs.fair_queue import client_share, newcomer_room
from whylab.explorer.runs.redis.link import KEY_PREFIX, RedisLink
from whylab.explorer.runs.workers import (
    DEADLINE_MARGIN_S,
    DEFAULT_QUEUE_WAIT_S,
    Job,
    Outcome,
    PoolStats,
    run_deadline_s,
)

log = logging.getLogger(__name__)

LANES = 16  # servers and workers must agree: a worker listens on every lane of its version
LANE_PREFIX = "whylab-lane-"
VERSION_CHARS = 16  # hex digits of code_version() in a lane's name
ALIVE_TTL_S = 3  # a running job's heartbeat key lives this long after its last refresh
HEARTBEAT_S = 0.5  # how often the worker refreshes it
WORKER_ALIVE_TTL_S = 10  # a worker's own liveness key lives this long after its last beat
WORKER_BEAT_S = 2.0  # how often a worker process refreshes it, busy or idle
POLL_S = 0.5  # how long the server blocks on the answer between checks of the heartbeat
ANSWER_TTL_S = 120  # an answer nobody collected is dropped after this long
# KEYS: the lanes. Their lengths, read in one round trip on the connection that watches them.
_LENGTHS = """
local lengths = {}
for index, key in ipairs(KEYS) do lengths[index] = redis.call('LLEN', key) end
return lengths
"""
ENQUEUE_TRIES = 64  # transactions one enqueue may retry while others change the lanes
JOB_FUNCTION = "whylab.explorer.runs.redis.worker.run_request"
FAILURE_CALLBACK = "whylab.explorer.runs.redis.worker.report_failure"


def code_version(topics: Iterable[Any]) -> str:
    """The version of the code a deployment's runs need: one hash of every topic's fingerprint.

    A server and a worker loaded from the same code give the same version; a
    worker whose copy of any topic, or of a module under one, differs gives
    another, and listens on other lanes.
    """
    parts = sorted((topic.slug, topic.source_hash) for topic in topics)
    text = json.dumps([whylab.__version__, parts])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:VERSION_CHARS]


def lane_of(client: str, version: str) -> str:
    """The RQ queue of ``client``'s runs of code ``version``: the same on every server."""
    digest = hashlib.sha256(client.encode("utf-8", "surrogatepass")).digest()
    return f"{LANE_PREFIX}{version}-{int.from_bytes(digest[:4], 'big') % LANES:02d}"


def lane_names(version: str) -> list[str]:
    """The lanes of runs of code ``version``: only workers of that version listen on them."""
    return [f"{LANE_PREFIX}{version}-{index:02d}" for index in range(LANES)]


def version_of_lane(lane: str) -> str | None:
    """The code version whose runs ``lane`` holds (None for a queue that is not a lane)."""
    if not lane.startswith(LANE_PREFIX):
        return None
    version, _, index = lane[len(LANE_PREFIX) :].rpartition("-")
    return version if version and index.isdigit() else None


def worker_alive_key(name: str) -> str:
    """The key the worker named ``name`` (RQ's name) refreshes while its process lives."""
    return f"{KEY_PREFIX}:worker-alive:{name}"


def live_workers(connection: Any) -> list[Any]:
    """The RQ workers registered now whose process is alive (its liveness key is there)."""
    from rq import Worker

    workers = Worker.all(connection=connection)
    with connection.pipeline(transaction=False) as pipe:
        for worker in workers:
            pipe.exists(worker_alive_key(worker.name))
        alive = pipe.execute()
    return [worker for worker, there in zip(workers, alive, strict=True) if there]


def workers_by_version(connection: Any) -> dict[str, int]:
    """How many live RQ workers listen on the lanes of each code version."""
    counts: dict[str, int] = {}
    for worker in live_workers(connection):
        versions = {version_of_lane(name) for name in worker.queue_names()} - {None}
        for version in versions:
            counts[version] = counts.get(version, 0) + 1
    return counts


# ------------------------------------------------------------ answers, both ways


def encode_answer(job_id: str, answer: dict[str, Any]) -> str:
    """An answer as sent through Redis: its checksum, a newline, its JSON text."""
    text = json.dumps(answer, allow_nan=False)
    return f"{record_checksum(job_id, text)}\n{text}"


def outcome_answer(outcome: Outcome, source_hash: str = "") -> dict[str, Any]:
    """A computed run's answer; ``source_hash`` is the fingerprint of the code that computed it."""
    return {
        "ok": True,
        "source_hash": source_hash,
        "payload": outcome.payload,
        "elapsed_s": outcome.elapsed_s,
        "cpu_s": outcome.cpu_s,
        "machine": outcome.machine,
    }


def failure_answer(failure: RunFailure) -> dict[str, Any]:
    return {
        "ok": False,
        "status": failure.status,
        "message": failure.message,
        "retry_after_s": failure.retry_after_s,
    }


def decode_answer(job_id: str, raw: bytes, source_hash: str | None = None) -> Outcome:
    """The outcome in ``raw``, or the RunFailure it reports (raised).

    With ``source_hash``, a result computed by code of another fingerprint is
    refused (503): it would be cached under this code's key.
    """
    checksum, _, text = raw.decode("utf-8", errors="replace").partition("\n")
    if record_checksum(job_id, text) != checksum:
        raise WorkerUnavailable("the worker's answer arrived damaged")
    try:
        answer = json.loads(text)
        if answer["ok"] and source_hash is not None and answer["source_hash"] != source_hash:
            log.warning("refused a result computed by other code (%s)", answer["source_hash"])
            raise WorkerUnavailable("a worker answered with a result of other code")
        if answer["ok"]:
            return Outcome(
                answer["payload"],
                float(answer["elapsed_s"]),
                float(answer["cpu_s"]),
                str(answer["machine"]),
            )
        failure = RemoteFailure(
            int(answer["status"]), str(answer["message"]), answer["retry_after_s"]
        )
    except (ValueError, KeyError, TypeError):
        raise WorkerUnavailable("the worker's answer could not be read") from None
    raise failure


@dataclass
class _Pending:
    job_id: str
    lane: str
    answer_key: str
    alive_key: str
    source_hash: str
    started: bool = False


class RemotePool:
    """Runs jobs on ``whylab worker`` processes through RQ; use from one asyncio loop."""

    def __init__(
        self,
        link: RedisLink,
        max_queue: int = 16,
        *,
        version: str,
        max_queue_per_client: int | None = None,
        queue_wait_s: float = DEFAULT_QUEUE_WAIT_S,
    ):
        if max_queue < 1:
            raise ValueError("a run queue needs room for at least one job")
        from rq import Queue
        from rq.serializers import JSONSerializer

        self.link = link
        self.version = version  # code_version() of this server's topics: its runs' lanes
        self.max_queue = max_queue
        self.max_queue_per_client = max_queue_per_client or max(1, max_queue // 2)
        self.queue_wait_s = queue_wait_s
        self.stats = PoolStats()
        self._queues = {
            name: Queue(name, connection=link.sync, serializer=JSONSerializer)
            for name in lane_names(version)
        }

    @property
    def worker_pids(self) -> list[int]:
        return []  # the workers are other processes, often on other machines

    async def start(self) -> None:
        await self.link.call(self.link.ping)

    async def close(self) -> None:
        await self.link.aclose()

    def deadline_s(self, job: Job) -> float:
        """The longest :meth:`submit` can take for ``job``, whatever fails underneath."""
        return self.queue_wait_s + run_deadline_s(job.time_limit_s) + 2 * DEADLINE_MARGIN_S

    def describe(self) -> str:
        """One line for the start-up banner: the workers connected, by the code version they run."""
        try:
            counts = workers_by_version(self.link.sync)
        except self.link.errors as error:
            self.link.failed(error)
            return f"runs go to the shared queue on {self.link.where} (not reachable now)"
        ours = counts.pop(self.version, 0)
        others = "".join(f", {n} of version {v}" for v, n in sorted(counts.items()))
        return (
            f"runs go to the shared queue on {self.link.where}, version {self.version} "
            f"({ours} workers of this version connected now{others})"
        )

    def _not_taken(self) -> WorkerUnavailable:
        """The answer to a run none took in time, naming the versions the workers run."""
        counts = workers_by_version(self.link.sync)
        running = ", ".join(f"{v} ({n})" for v, n in sorted(counts.items())) or "none"
        return WorkerUnavailable(
            f"none took this run within {self.queue_wait_s:g} s (this server runs code version "
            f"{self.version}; the live workers run: {running})"
        )

    async def submit(self, job: Job, client: str = "") -> Outcome:
        """Run ``job`` on a remote worker for ``client``; returns its Outcome or raises RunFailure.

        Cancelling the call drops the job if no worker has taken it yet.
        """
        if not self.link.usable():
            raise self.link.unavailable()
        job_id = uuid.uuid4().hex
        lane = lane_of(client, self.version)
        pending = _Pending(
            job_id,
            lane,
            self.link.key("answer", job_id),
            self.link.key("alive", job_id),
            job.source_hash,
        )
        request = {
            "job_id": job_id,
            "topic": job.topic,
            "source_hash": job.source_hash,
            "engine_version": whylab.__version__,
            "experiment": job.experiment,
            "params": job.params,
            "control": job.control,
            "time_limit_s": job.time_limit_s,
            "answer_key": pending.answer_key,
            "alive_key": pending.alive_key,
        }
        try:
            await self.link.call(self._enqueue, request, lane)
        except self.link.errors as error:
            raise self._redis_failure(error) from None
        self.stats.jobs += 1
        try:
            return await self._wait(job, pending)
        except asyncio.CancelledError:
            if not pending.started:
                self.stats.abandoned += 1
                asyncio.get_running_loop().run_in_executor(None, self._cancel, job_id, lane)
            raise
        except self.link.errors as error:
            raise self._redis_failure(error) from None

    def _redis_failure(self, error: BaseException) -> RunFailure:
        """What a Redis error means for the request: Redis is gone, or it refused one command."""
        if isinstance(error, self.link.outage_errors):
            self.link.failed(error)
            return self.link.unavailable()
        log.error("the shared queue refused a command: %s: %s", type(error).__name__, error)
        return WorkerUnavailable(f"the shared queue refused the run ({type(error).__name__})")

    def _enqueue(self, request: dict[str, Any], lane: str) -> None:
        """Put ``request`` on its lane, unless the queue or the lane is full (Overloaded).

        One optimistic transaction: the lanes are watched while counted, and
        RQ's enqueue (the job's record, its id pushed on the lane) runs inside
        ``MULTI``/``EXEC``, which Redis refuses when any lane changed meanwhile
        (another server enqueued, a worker took a run); then the count is
        taken again. Why ``WATCH`` here and not one Lua script as for the
        budget: the enqueue is RQ's own (its record's fields, its registries),
        which a script would have to copy; the retries are bounded
        (``ENQUEUE_TRIES``), past them the run is refused as on a full queue.
        """
        import redis

        lanes = list(self._queues.values())
        keys = [queue.key for queue in lanes]
        retry_after_s = max(1.0, request["time_limit_s"] / 4)
        with self.link.sync.pipeline() as pipe:
            for _ in range(ENQUEUE_TRIES):
                try:
                    pipe.watch(*keys)
                    counted = pipe.eval(_LENGTHS, len(keys), *keys)
                    lengths = dict(zip(self._queues, counted, strict=True))
                    if not self._has_room(lengths, lane):
                        raise Overloaded(retry_after_s=retry_after_s)
                    pipe.multi()
                    self._enqueue_on(pipe, request, lane)
                    pipe.execute()
                    break
                except redis.WatchError:
                    continue  # a lane changed while counted: count again
            else:
                raise Overloaded(retry_after_s=retry_after_s)
        self.link.worked()

    def _has_room(self, lengths: dict[str, int], lane: str) -> bool:
        """Whether the lanes' ``lengths`` leave room for one more run on ``lane``."""
        others = sum(1 for name, length in lengths.items() if length and name != lane)
        share = client_share(self.max_queue, self.max_queue_per_client, others)
        room = self.max_queue - (newcomer_room(self.max_queue) if lengths[lane] else 0)
        return sum(lengths.values()) < room and lengths[lane] < share

    def _enqueue_on(self, pipe: Any, request: dict[str, Any], lane: str) -> None:
        """RQ's enqueue of ``request`` on ``lane``, its commands queued on ``pipe``."""
        from rq import Callback

        time_limit_s = request["time_limit_s"]
        self._queues[lane].enqueue_call(
            JOB_FUNCTION,
            args=(request,),
            job_id=request["job_id"],
            timeout=math.ceil(run_deadline_s(time_limit_s) + DEADLINE_MARGIN_S),
            # The server cancels a run no worker took within queue_wait_s; RQ's ttl drops
            # it too, should that server be gone.
            ttl=math.ceil(self.queue_wait_s + DEADLINE_MARGIN_S),
            result_ttl=0,  # the answer travels on its own key
            failure_ttl=ANSWER_TTL_S,
            on_failure=Callback(FAILURE_CALLBACK),
            description=f"{request['topic']}/{request['experiment']}",
            pipeline=pipe,
        )

    def _cancel(self, job_id: str, lane: str) -> None:
        """Take a run no one waits for off its lane (a worker that took it already runs it)."""
        from rq.exceptions import InvalidJobOperation, NoSuchJobError
        from rq.job import Job as RQJob

        try:
            RQJob.fetch(job_id, connection=self.link.sync).cancel()
        except (NoSuchJobError, InvalidJobOperation):
            # Taken, finished, or expired by RQ's ttl: then its id may still be in the lane.
            self._queues[lane].remove(job_id)
        except self.link.errors as error:
            log.info("could not cancel abandoned run %s: %s", job_id, error)

    async def _wait(self, job: Job, pending: _Pending) -> Outcome:
        loop = asyncio.get_running_loop()
        now = loop.time()
        give_up_at = now + self.deadline_s(job)
        queue_wait_ends = now + self.queue_wait_s
        aio = self.link.aio
        while True:
            reply = await aio.blpop([pending.answer_key], timeout=POLL_S)
            if reply is not None:
                self.link.worked()
                return self._outcome(pending, reply[1])
            alive = await aio.exists(pending.alive_key)
            now = loop.time()
            if alive:
                pending.started = True
            elif pending.started:
                # The heartbeat stopped: an answer sent just before it did still counts.
                last = await aio.lpop(pending.answer_key)
                if last is not None:
                    return self._outcome(pending, last)
                self.stats.killed += 1
                raise WorkerLost()
            elif now > queue_wait_ends:
                await self.link.call(self._cancel, pending.job_id, pending.lane)
                raise await self.link.call(self._not_taken)
            if now > give_up_at:
                log.error("experiment job %s/%s passed its deadline", job.topic, job.experiment)
                raise WorkerUnavailable("the run did not finish in time")

    def _outcome(self, pending: _Pending, raw: bytes) -> Outcome:
        try:
            return decode_answer(pending.job_id, raw, pending.source_hash)
        except RemoteFailure as failure:
            if failure.status == 504:
                self.stats.timeouts += 1
            elif failure.status == 507:
                self.stats.memory_kills += 1
            raise
