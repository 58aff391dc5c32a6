"""Getting an experiment's result: cache, in-flight sharing, then a worker.

:class:`ExperimentService` is what the web app calls. For a deterministic
experiment it first looks in the on-disk cache; if the same run is already being
computed (another reader pressed the same button a moment ago) it waits for that
run instead of starting a second one; otherwise it hands the job to the worker
pool and stores the answer. Timing experiments skip the cache both ways.

In a deployment on Redis, "already being computed" spans every server: with
:class:`~whylab.explorer.runs.redis.flights.SharedFlights`, a server claims a run
before computing it, and a server that finds it claimed waits for the result
in the shared cache (taking the run over if the claim goes without one). The
cache is called through the back-ends' :class:`~whylab.explorer.runs.store.BlockingCalls`
(on Redis, off the event loop).

:func:`run_locally` runs an experiment in the current process for the CLI and
the static export, through the same JSON round trip, so what they show is
exactly what the server would show.

:meth:`ExperimentService.run_control` makes a *control run*: the experiment with
one of its declared negative controls switched on, at the parameters that control
declares, so a reader can watch the checks it breaks fail. It takes the same
worker pool and admission as any run, and never touches the cache or a run in
flight: its result is not the experiment's.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import whylab
from whylab.explorer.content.controls import control_params
from whylab.explorer.content.topics import Topic
from whylab.explorer.experiment import Control, Experiment, ProgressHook, Result, progress_hook
from whylab.explorer.runs.cache import cache_key
from whylab.explorer.runs.errors import RunFailure, WorkerUnavailable
from whylab.explorer.runs.result_json import dumps, result_from_dict, result_to_dict
from whylab.explorer.runs.store import BlockingCalls, EmbeddedCalls, JobRunner
from whylab.explorer.runs.workers import Job, Outcome

UNSEEN_COST_S = 1.0  # the expected CPU seconds of an experiment no run of which was seen


def format_param(value: Any) -> str:
    """A parameter value as it appears in a URL or on the command line (round-trips exactly)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass
class RunRecord:
    """One experiment run: what was asked, what came out, and how it was obtained."""

    topic: str
    experiment: str
    params: dict[str, Any]
    engine_version: str
    result: Result
    timing: bool
    cached: bool
    elapsed_s: float
    machine: str = ""  # where a remote worker computed it; "" for this machine
    control: str = ""  # the negative control switched on (a control run); "" for a real run

    def to_json(self) -> dict[str, Any]:
        data = {
            "topic": self.topic,
            "experiment": self.experiment,
            "params": self.params,
            "engine_version": self.engine_version,
            "timing": self.timing,
            "cached": self.cached,
            "elapsed_s": self.elapsed_s,
            "passed": self.result.passed,
            "result": result_to_dict(self.result),
        }
        if self.control:
            data["control"] = self.control
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, cached: bool) -> RunRecord:
        return cls(
            topic=data["topic"],
            experiment=data["experiment"],
            params=data["params"],
            engine_version=data["engine_version"],
            result=result_from_dict(data["result"]),
            timing=data["timing"],
            cached=cached,
            elapsed_s=data["elapsed_s"],
        )


class CostEstimates:
    """What each experiment's runs cost lately, on this server (CPU seconds).

    The expected cost of an experiment is the most CPU time any of its last
    ``window`` runs took, whatever their parameters (so a client cannot lower it
    with a few cheap runs before many costly ones); an experiment not run yet is
    expected to cost ``UNSEEN_COST_S`` (at most its time limit). What the rate
    limit charges up front (:mod:`whylab.explorer.runs.admission`).
    """

    def __init__(self, window: int = 16):
        self.window = window
        self._recent: defaultdict[tuple[str, str], deque[float]] = defaultdict(
            lambda: deque(maxlen=self.window)
        )

    def record(self, topic: str, experiment: str, cpu_s: float) -> None:
        self._recent[(topic, experiment)].append(cpu_s)

    def expected_s(self, topic: Topic, experiment: Experiment) -> float:
        recent = self._recent.get((topic.slug, experiment.name))
        return max(recent) if recent else min(UNSEEN_COST_S, experiment.time_limit_s)


@dataclass
class ServiceStats:
    cache_hits: int = 0
    computed: int = 0  # runs that finished in a worker
    shared: int = 0  # requests that joined a run already in flight
    dropped: int = 0  # runs cancelled because every reader waiting for them went away
    joined_elsewhere: int = 0  # runs another server computed while this one waited for it
    taken_over: int = 0  # runs claimed after another server's claim went without a result
    control_runs: int = 0  # runs under a negative control that finished in a worker


@dataclass
class RunAnswer:
    """One caller's answer: the record, and the CPU seconds of work this caller started.

    ``cost_s`` is what the rate limit charges: 0 for a cached record and for a
    caller who joined a run someone else had started.
    """

    record: RunRecord
    cost_s: float


@dataclass
class _Flight:
    task: asyncio.Task[tuple[RunRecord, float]]
    waiters: int = 0


class ExperimentService:
    """Cache -> in-flight run (on any server, with ``flights``) -> worker pool."""

    def __init__(
        self,
        pool: JobRunner,
        cache: Any,  # a ResultCache or a RedisResultCache, or None: no cache
        flights: Any = None,  # a SharedFlights (on Redis), or None
        calls: BlockingCalls | None = None,  # how to call the cache (default: embedded)
    ):
        self.pool = pool
        self.cache = cache
        self.calls = calls or EmbeddedCalls()
        self.flights = flights if cache is not None else None  # a waiter reads the shared cache
        self.stats = ServiceStats()
        self.costs = CostEstimates()
        self._in_flight: dict[str, _Flight] = {}

    @staticmethod
    def _key(topic: Topic, experiment: Experiment, params: dict[str, Any]) -> str:
        return cache_key(topic.slug, topic.source_hash, experiment.name, whylab.__version__, params)

    async def _cached(self, key: str) -> str | None:
        assert self.cache is not None
        return await self.calls.call(self.cache.get, key)

    async def cached_json(
        self, topic: Topic, experiment: Experiment, params: dict[str, Any]
    ) -> str | None:
        """A cached run as JSON text, without rebuilding it into objects (the API's fast path).

        Stored records leave out ``cached``; it is written here as the first key.
        """
        if experiment.timing or self.cache is None:
            return None
        stored = await self._cached(self._key(topic, experiment, params))
        if stored is None:
            return None
        self.stats.cache_hits += 1
        return '{"cached":true,' + stored[1:]

    async def run(
        self,
        topic: Topic,
        experiment: Experiment,
        params: dict[str, Any],
        client: str = "",
        admit: Callable[[], Awaitable[None]] | None = None,
    ) -> RunAnswer:
        """The result of ``experiment`` at already-parsed ``params`` (raises RunFailure).

        ``client`` names the caller for the fair queue; ``admit`` is awaited
        only before a new computation starts (not for a cached result or for
        joining a run in flight) and may refuse it by raising a RunFailure
        (the rate limit does). When every caller
        waiting for a run has gone away (their requests were cancelled), the run
        is cancelled too, which drops it from the queue if it has not started.
        """
        key = self._key(topic, experiment, params)
        if not experiment.timing and self.cache is not None:
            stored = await self._cached(key)
            if stored is not None:
                self.stats.cache_hits += 1
                return RunAnswer(RunRecord.from_json(json.loads(stored), cached=True), 0.0)
        flight = self._in_flight.get(key)
        if flight is None and admit is not None:
            await admit()
            flight = self._in_flight.get(key)  # another reader may have started it meanwhile
        started_here = flight is None
        if flight is None:
            task = asyncio.create_task(self._compute(key, topic, experiment, params, client))
            task.add_done_callback(_retrieve_exception)
            flight = self._in_flight[key] = _Flight(task)
        else:
            self.stats.shared += 1
        flight.waiters += 1
        try:
            # shield: one reader who gives up does not cancel the run others wait for
            record, cpu_s = await asyncio.shield(flight.task)
        except asyncio.CancelledError:
            if flight.waiters == 1 and not flight.task.done():
                flight.task.cancel()
                self.stats.dropped += 1
            raise
        finally:
            flight.waiters -= 1
        return RunAnswer(record, cpu_s if started_here else 0.0)

    async def run_control(
        self,
        topic: Topic,
        experiment: Experiment,
        control: Control,
        client: str = "",
        admit: Callable[[], Awaitable[None]] | None = None,
    ) -> RunAnswer:
        """``experiment`` under its declared negative ``control``: a control run.

        It runs at the parameters the control declares (the defaults overlaid
        with ``control.params``) and no others, on the worker pool for ``client``
        after ``admit`` (as :meth:`run`). Its result is not the experiment's: it
        is never read from or written to the cache and never joined with another
        run. A timing experiment has no control runs (they would take turns in
        the server's one line of measurements; see whylab.explorer.web.routes_controls).
        """
        if experiment.timing:
            raise ValueError(f"{experiment.name} measures time: no control runs")
        if control not in experiment.controls:
            raise ValueError(f"{experiment.name} declares no control {control.name!r}")
        params = control_params(experiment, control)
        if admit is not None:
            await admit()
        job = self._job(topic, experiment, params, control.name)
        outcome = await self.pool.submit(job, client)
        self.stats.control_runs += 1
        record = self._record(topic, experiment, params, outcome, control.name)
        return RunAnswer(record, outcome.cpu_s)

    def _record(
        self,
        topic: Topic,
        experiment: Experiment,
        params: dict[str, Any],
        outcome: Outcome,
        control: str = "",
    ) -> RunRecord:
        """The record of a run the pool just made (its CPU time noted in the cost estimates)."""
        self.costs.record(topic.slug, experiment.name, outcome.cpu_s)
        return RunRecord(
            topic=topic.slug,
            experiment=experiment.name,
            params=params,
            engine_version=whylab.__version__,
            result=result_from_dict(outcome.payload),
            timing=experiment.timing,
            cached=False,
            elapsed_s=outcome.elapsed_s,
            machine=outcome.machine,
            control=control,
        )

    def _job(
        self, topic: Topic, experiment: Experiment, params: dict[str, Any], control: str = ""
    ) -> Job:
        return Job(
            str(topic.folder),
            experiment.name,
            params,
            experiment.time_limit_s,
            topic=topic.slug,
            source_hash=topic.source_hash,
            control=control,
        )

    async def _compute(
        self, key: str, topic: Topic, experiment: Experiment, params: dict[str, Any], client: str
    ) -> tuple[RunRecord, float]:
        try:
            if self.flights is None or experiment.timing:
                return await self._compute_here(key, topic, experiment, params, client)
            return await self._compute_once(key, topic, experiment, params, client)
        finally:
            flight = self._in_flight.get(key)
            if flight is not None and flight.task is asyncio.current_task():
                del self._in_flight[key]

    async def _compute_here(
        self, key: str, topic: Topic, experiment: Experiment, params: dict[str, Any], client: str
    ) -> tuple[RunRecord, float]:
        """Run the job on the pool and store the answer; the record and its CPU seconds."""
        outcome = await self.pool.submit(self._job(topic, experiment, params), client)
        self.stats.computed += 1
        record = self._record(topic, experiment, params, outcome)
        if not experiment.timing and self.cache is not None:
            stored = record.to_json()
            del stored["cached"]  # a property of each answer, not of the result
            text = dumps(stored)
            # off the loop: a write of a large record must not hold up the pages served
            await self.calls.write(self.cache.put, key, topic.slug, experiment.name, text)
        return record, outcome.cpu_s

    async def _compute_once(
        self, key: str, topic: Topic, experiment: Experiment, params: dict[str, Any], client: str
    ) -> tuple[RunRecord, float]:
        """Compute run ``key`` unless another server does; then wait for its result.

        The wait is bounded by what the run may take on that server (the pool's
        deadline) plus the claim's expiry; a claim that goes without a result
        is taken over.
        """
        flights = self.flights
        assert flights is not None
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + self.pool.deadline_s(self._job(topic, experiment, params))
        give_up_at += flights.claim_ttl_s
        waited = False
        while True:
            token = await flights.link.call(flights.claim, key)
            if token is not None:
                if waited:
                    self.stats.taken_over += 1
                return await self._compute_claimed(key, token, topic, experiment, params, client)
            waited = True
            record = await self._wait_elsewhere(key, give_up_at)
            if record is not None:
                self.stats.joined_elsewhere += 1
                return record, 0.0  # the other server's reader is charged for it

    async def _compute_claimed(
        self,
        key: str,
        token: str,
        topic: Topic,
        experiment: Experiment,
        params: dict[str, Any],
        client: str,
    ) -> tuple[RunRecord, float]:
        """Compute the run we hold the claim ``token`` on, renewing it until the run ends."""
        flights = self.flights
        assert flights is not None
        # Its result may have been stored between our cache miss and our claim.
        stored = await self._cached(key)
        if stored is not None:
            await flights.link.call(flights.release, key, token)
            return RunRecord.from_json(json.loads(stored), cached=True), 0.0
        renewing = asyncio.create_task(self._keep_claim(key, token))
        failure: RunFailure | None = None
        try:
            return await self._compute_here(key, topic, experiment, params, client)
        except RunFailure as error:
            failure = error
            raise
        finally:
            renewing.cancel()
            # Released after the result is stored, so a server that finds the claim gone
            # finds the result (or the failure) too.
            await flights.link.call(flights.release, key, token, failure)

    async def _keep_claim(self, key: str, token: str) -> None:
        flights = self.flights
        assert flights is not None
        while True:
            await asyncio.sleep(flights.renew_s)
            await flights.link.call(flights.renew, key, token)

    async def _wait_elsewhere(self, key: str, give_up_at: float) -> RunRecord | None:
        """Another server's record of run ``key``, or None once its claim went without one.

        Raises the failure that server's run ended with, or WorkerUnavailable at ``give_up_at``.
        """
        flights = self.flights
        assert flights is not None
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(flights.poll_s)
            stored = await self._cached(key)
            if stored is not None:
                # Joined, as a reader joins a run in flight on this server: not a cached answer.
                return RunRecord.from_json(json.loads(stored), cached=False)
            claimed, failure = await flights.link.call(flights.state, key)
            if failure is not None:
                raise failure
            if not claimed:
                return None
            if loop.time() > give_up_at:
                raise WorkerUnavailable("the same run on another server did not finish in time")


def _retrieve_exception(task: asyncio.Task) -> None:
    """Mark a failed run's exception as seen even when every waiter went away."""
    if not task.cancelled():
        task.exception()


def run_locally(
    topic: Topic,
    experiment: Experiment,
    params: dict[str, Any],
    progress: ProgressHook | None = None,
) -> RunRecord:
    """Run in this process (CLI, export); the result makes the same JSON round trip."""
    started = time.perf_counter()
    if progress is None:
        result = experiment.run(**params)
    else:
        with progress_hook(progress):
            result = experiment.run(**params)
    elapsed = time.perf_counter() - started
    return RunRecord(
        topic=topic.slug,
        experiment=experiment.name,
        params=params,
        engine_version=whylab.__version__,
        result=result_from_dict(result_to_dict(result)),
        timing=experiment.timing,
        cached=False,
        elapsed_s=elapsed,
    )
