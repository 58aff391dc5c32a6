"""``whylab worker``: take runs from the shared queue on Redis and run them under the usual limits.

One ``whylab worker`` process is one RQ worker (:class:`rq.SimpleWorker`: the
job function runs in this process, which stays up between jobs) that listens
on every lane of its code version (:func:`~whylab.explorer.runs.redis.queue.code_version`)
round robin, and hands
each run to its own one-process :class:`~whylab.explorer.runs.workers.WorkerPool`,
so the time limit, the memory limit and the telling apart of an overrun, a
memory kill and a kill from outside are exactly the embedded server's. Start
as many as the machine has cores for, on as many machines as needed.

A job names a topic by slug and the fingerprint of the code its result depends
on (:mod:`whylab.explorer.content.result_key`: the topic, every whylab module it
imports, the engine, the Python and numeric libraries' versions); the worker
runs it with *its own* copy of the topic and refuses (503, so the reader may
retry on another worker) when its fingerprint differs, because the answer goes
into a cache shared by every server. Since a worker listens only on the lanes
of its own version, that refusal is a last guard: a worker of other code does
not take another version's runs at all. Its answer names the fingerprint it ran
with, and the server refuses an answer of any other.

While a run is in hand the worker refreshes a heartbeat key every
``HEARTBEAT_S`` (it expires ``ALIVE_TTL_S`` later); that is how a server sees
the worker die mid-run. When Redis goes away, the worker says so once, waits
for it to come back and carries on.

``whylab worker --workers N`` (:func:`serve_many`) runs N such workers under
one command, as RQ's own ``rq worker-pool`` does and by its rules: each is a
process of its own (started fresh, ``spawn``), a worker that dies is replaced,
and SIGINT or SIGTERM to the command is passed on to every worker as SIGINT,
which RQ takes as a *warm shutdown*: the run in hand finishes and its answer is
sent, then the worker leaves. A second signal more than a second later is
passed on again, which RQ takes as a *cold shutdown*: RQ stops the job in hand
at once (``SystemExit`` inside it), marks it failed and requeues nothing; its
failure callback (:func:`report_failure`) answers the waiting server with a 503
the reader may retry, and the worker leaves. We do not use ``rq worker-pool``
itself: its workers dequeue in a fixed order, not round robin across the
lanes, and it has no place for each worker's own pool and Redis reconnection.

RQ's worker reconnects by itself when Redis restarts, but does not register
again, so a Redis restarted empty would list no workers; each heartbeat here
checks the worker is listed and registers it again if not.

RQ's own heartbeat comes between jobs only, minutes apart when idle, and RQ
lists a worker killed with SIGKILL until its key expires (8 minutes by
default). So a thread of each worker process refreshes the worker's liveness
key (:func:`~whylab.explorer.runs.redis.queue.worker_alive_key`) every
``WORKER_BEAT_S``, busy or idle; a killed process stops refreshing it, and the
servers stop counting the worker ``WORKER_ALIVE_TTL_S`` later.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from whylab.explorer.content.topics import TopicRegistry, load_registry
from whylab.explorer.runs.errors import (
    ExperimentTimeout,
    OtherVersion,
    RunFailure,
    WorkerUnavailable,
)
from whylab.explorer.runs.redis.link import RedisLink
from whylab.explorer.runs.redis.queue import (
    ALIVE_TTL_S,
    ANSWER_TTL_S,
    HEARTBEAT_S,
    WORKER_ALIVE_TTL_S,
    WORKER_BEAT_S,
    code_version,
    encode_answer,
    failure_answer,
    lane_names,
    outcome_answer,
    worker_alive_key,
)
from whylab.explorer.runs.timing import machine_description
from whylab.explorer.runs.workers import DEADLINE_MARGIN_S, Job, WorkerPool

log = logging.getLogger(__name__)


def send_answer(redis: Any, request: dict[str, Any], answer: dict[str, Any]) -> None:
    """Push ``answer`` for the server waiting on ``request`` (then stop the heartbeat)."""
    with redis.pipeline() as pipe:
        pipe.rpush(request["answer_key"], encode_answer(request["job_id"], answer))
        pipe.expire(request["answer_key"], ANSWER_TTL_S)
        pipe.delete(request["alive_key"])
        pipe.execute()


class Runner:
    """The worker's own pool (on a loop in a thread) and the registry jobs are looked up in."""

    def __init__(self, link: RedisLink, registry: TopicRegistry, memory_limit_mb: int, name: str):
        self.link = link
        self.registry = registry
        self.name = name
        self.machine = machine_description()  # what timing runs report they ran on
        self.pool = WorkerPool(1, memory_limit_mb, max_queue=1, queue_wait_s=DEADLINE_MARGIN_S)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="whylab-worker-pool", daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.pool.start(), self.loop).result()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.pool.close(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)

    @property
    def beat(self) -> str:
        """The heartbeat's value: who runs the job (this process's id first)."""
        return f"{os.getpid()} {self.name}"

    def job_for(self, request: dict[str, Any]) -> Job:
        """The job ``request`` asks for, in this worker's copy of the topic."""
        import whylab

        slug, name = request["topic"], request["experiment"]
        topic = self.registry.get(slug)
        if topic is None or name not in topic.experiments:
            raise OtherVersion(f"topic {slug!r} (it has no experiment {name!r})")
        if topic.source_hash != request["source_hash"]:
            raise OtherVersion(f"topic {slug!r} (its code or the libraries under it differ)")
        if request["engine_version"] != whylab.__version__:
            raise OtherVersion(f"whylab ({whylab.__version__}, not {request['engine_version']})")
        return Job(
            str(topic.folder),
            name,
            request["params"],
            float(request["time_limit_s"]),
            topic=slug,
            source_hash=topic.source_hash,
            control=request.get("control", ""),
        )

    def run(self, request: dict[str, Any]) -> None:
        """Run one request and send its answer; the heartbeat runs until it is sent."""
        redis = self.link.sync
        redis.set(request["alive_key"], self.beat, ex=ALIVE_TTL_S)
        try:
            job = self.job_for(request)
            running = asyncio.run_coroutine_threadsafe(self.pool.submit(job), self.loop)
            try:
                outcome = replace(self._wait(running, request["alive_key"]), machine=self.machine)
                answer = outcome_answer(outcome, job.source_hash)
            finally:
                running.cancel()
        except RunFailure as failure:
            if isinstance(failure, OtherVersion):
                log.warning("refused a run: %s", failure.message)
            answer = failure_answer(failure)
        send_answer(redis, request, answer)

    def _wait(self, running: concurrent.futures.Future, alive_key: str):
        while True:
            try:
                return running.result(timeout=HEARTBEAT_S)
            except concurrent.futures.TimeoutError:
                try:  # set, not expire: a late beat brings the key back
                    self.link.sync.set(alive_key, self.beat, ex=ALIVE_TTL_S)
                except self.link.errors:
                    pass  # Redis is away: the run goes on, its answer is sent if it comes back


def say_alive(link: RedisLink, runner: Runner) -> None:
    """Refresh the liveness key of this process's worker (``runner.name``), if Redis answers."""
    try:
        link.sync.set(worker_alive_key(runner.name), runner.beat, ex=WORKER_ALIVE_TTL_S)
    except link.errors:
        pass  # Redis is away: the worker is counted again at the first beat it hears


def keep_saying_alive(link: RedisLink, runner: Runner, done: threading.Event) -> None:
    """:func:`say_alive` every ``WORKER_BEAT_S`` until ``done`` (or the process dies)."""
    while not done.wait(WORKER_BEAT_S):
        say_alive(link, runner)


_runner: Runner | None = None  # set by serve(): RQ calls the job function in this process


def run_request(request: dict[str, Any]) -> None:
    """The RQ job function (named in the queue by its import path)."""
    if _runner is None:
        raise RuntimeError("whylab run requests are run by `whylab worker` only")
    _runner.run(request)


def report_failure(job: Any, connection: Any, kind: type, value: BaseException, traceback) -> None:
    """RQ's failure callback: the job function itself raised (RQ's timeout backstop, a fault)."""
    from rq.timeouts import JobTimeoutException

    request = job.args[0]
    if issubclass(kind, JobTimeoutException):
        failure: RunFailure = ExperimentTimeout(float(request["time_limit_s"]))
    else:
        failure = WorkerUnavailable(f"the worker failed: {kind.__name__}")
    send_answer(connection, request, failure_answer(failure))


def worker_name(round_: int = 0) -> str:
    """Unique among live workers: the host, this process's id, and how often it reconnected."""
    return f"whylab-worker.{socket.gethostname()}.{os.getpid()}.{round_}"


def serve(
    url: str, registry: TopicRegistry, memory_limit_mb: int, reconnect_s: float = 1.0
) -> None:
    """Work until SIGTERM or Ctrl-C (after the run in hand), riding out Redis outages.

    RQ's worker handles the signals while it works; between its rounds (Redis
    away) a signal ends the wait for Redis instead.
    """
    from rq import Queue, SimpleWorker
    from rq.serializers import JSONSerializer
    from rq.worker import DequeueStrategy

    class Worker(SimpleWorker):
        stop_asked = False

        def request_stop(self, signum, frame):
            self.stop_asked = True
            super().request_stop(signum, frame)

        def heartbeat(self, timeout=None, pipeline=None):
            # RQ rides out a Redis restart by reconnecting, but a Redis restarted empty
            # has forgotten the worker: servers would count no workers. Register again.
            if pipeline is None and not self.connection.sismember(
                self.redis_workers_keys, self.key
            ):
                self.connection.delete(self.key)
                self.register_birth()
                log.warning("registered with Redis again (it no longer listed %s)", self.name)
            super().heartbeat(timeout, pipeline)

    global _runner
    stop = threading.Event()

    def stop_waiting(signum, frame) -> None:
        stop.set()

    def listen() -> None:  # RQ's work() installs its own handlers and leaves them
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, stop_waiting)

    listen()
    version = code_version(registry)  # the lanes of this code's runs, and no others
    log.info("running code version %s", version)
    link = RedisLink(url)
    _runner = Runner(link, registry, memory_limit_mb, worker_name())
    _runner.start()
    done = threading.Event()
    threading.Thread(
        target=keep_saying_alive, args=(link, _runner, done), name="whylab-alive", daemon=True
    ).start()
    rounds = 0
    try:
        while not stop.is_set():
            listen()
            if not link.ping():
                stop.wait(reconnect_s)
                continue
            # A worker that lost Redis may not have unregistered: the next one takes a new name.
            name = _runner.name = worker_name(rounds)
            say_alive(link, _runner)  # alive before RQ lists it, so never listed as dead
            rounds += 1
            queues = [
                Queue(lane, connection=link.sync, serializer=JSONSerializer)
                for lane in lane_names(version)
            ]
            worker = Worker(queues, connection=link.sync, serializer=JSONSerializer, name=name)
            try:
                worker.work(logging_level="WARNING", dequeue_strategy=DequeueStrategy.ROUND_ROBIN)
            except link.errors as error:
                link.failed(error)
            if worker.stop_asked:
                return
            stop.wait(reconnect_s)  # work() gave up: Redis went away; try again shortly
    finally:
        done.set()
        _runner.close()
        _runner = None


# ---------------------------------------------------------------- several workers

RESPAWN_S = 1.0  # a worker that died is replaced after at most this long
COLD_AFTER_S = 1.0  # RQ ignores a second signal within a second of the first


def _work(url: str, topics_dir: str | None, memory_limit_mb: int, log_level: str) -> None:
    """One worker process of :func:`serve_many` (the target of a fresh interpreter)."""
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    registry = load_registry(Path(topics_dir) if topics_dir is not None else None)
    serve(url, registry, memory_limit_mb)


def serve_many(
    count: int,
    url: str,
    topics_dir: Path | None,
    memory_limit_mb: int,
    log_level: str = "warning",
) -> None:
    """Run ``count`` worker processes until SIGINT or SIGTERM, replacing any that dies.

    The first signal stops every worker after its run in hand (RQ's warm
    shutdown); a second one, a second or more later, stops them at once (cold).
    Returns when all have stopped.
    """
    if count < 1:
        raise ValueError(f"--workers must be at least 1, got {count}")
    import rq  # noqa: F401 - missing here is one clear error, not each worker failing in turn

    context = multiprocessing.get_context("spawn")
    arguments = (url, None if topics_dir is None else str(topics_dir), memory_limit_mb, log_level)
    signals: list[float] = []  # when each stop signal came

    def asked_to_stop(signum, frame) -> None:
        signals.append(time.monotonic())

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, asked_to_stop)

    def start() -> multiprocessing.process.BaseProcess:
        # Not daemonic: a daemonic process may not start children (its own pool's).
        process = context.Process(target=_work, args=arguments, name="whylab-worker")
        process.start()
        return process

    workers = [start() for _ in range(count)]
    passed_on = 0  # how many of the signals were passed on to the workers
    last_passed = -float("inf")
    while any(process.is_alive() for process in workers):
        if len(signals) > passed_on and signals[-1] - last_passed >= COLD_AFTER_S:
            for process in workers:
                if process.is_alive() and process.pid is not None:
                    os.kill(process.pid, signal.SIGINT)
            passed_on, last_passed = len(signals), signals[-1]
        if not signals:
            for index, process in enumerate(workers):
                if not process.is_alive():
                    log.warning(
                        "worker process %d stopped (exit code %s); starting another",
                        process.pid,
                        process.exitcode,
                    )
                    workers[index] = start()
        for process in workers:
            process.join(timeout=RESPAWN_S / max(1, len(workers)))
    for process in workers:
        process.join()
