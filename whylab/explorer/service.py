"""Getting an experiment's result: cache, in-flight sharing, then a worker.

:class:`ExperimentService` is what the web app calls. For a deterministic
experiment it first looks in the on-disk cache; if the same run is already being
computed (another reader pressed the same button a moment ago) it waits for that
run instead of starting a second one; otherwise it hands the job to the worker
pool and stores the answer. Timing experiments skip the cache both ways.

:func:`run_locally` runs an experiment in the current process for the CLI and
the static export, through the same JSON round trip, so what they show is
exactly what the server would show.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import whylab
from whylab.explorer.cache import ResultCache, cache_key
from whylab.explorer.experiment import Experiment, ProgressHook, Result, progress_hook
from whylab.explorer.result_json import dumps, result_from_dict, result_to_dict
from whylab.explorer.topics import Topic
from whylab.explorer.workers import Job, WorkerPool


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

    def to_json(self) -> dict[str, Any]:
        return {
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


@dataclass
class ServiceStats:
    cache_hits: int = 0
    computed: int = 0  # runs that finished in a worker
    shared: int = 0  # requests that joined a run already in flight
    dropped: int = 0  # runs cancelled because every reader waiting for them went away


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
    """Cache -> in-flight run -> worker pool, for one registry of topics."""

    def __init__(self, pool: WorkerPool, cache: ResultCache | None):
        self.pool = pool
        self.cache = cache
        self.stats = ServiceStats()
        self._in_flight: dict[str, _Flight] = {}

    @staticmethod
    def _key(topic: Topic, experiment: Experiment, params: dict[str, Any]) -> str:
        return cache_key(topic.slug, topic.source_hash, experiment.name, whylab.__version__, params)

    def cached_json(
        self, topic: Topic, experiment: Experiment, params: dict[str, Any]
    ) -> str | None:
        """A cached run as JSON text, without rebuilding it into objects (the API's fast path).

        Stored records leave out ``cached``; it is written here as the first key.
        """
        if experiment.timing or self.cache is None:
            return None
        stored = self.cache.get(self._key(topic, experiment, params))
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
        admit: Callable[[], None] | None = None,
    ) -> RunAnswer:
        """The result of ``experiment`` at already-parsed ``params`` (raises RunFailure).

        ``client`` names the caller for the fair queue; ``admit`` is called
        only before a new computation starts (not for a cached result or for
        joining a run in flight) and may refuse it by raising a RunFailure
        (the rate limit does). When every caller
        waiting for a run has gone away (their requests were cancelled), the run
        is cancelled too, which drops it from the queue if it has not started.
        """
        key = self._key(topic, experiment, params)
        if not experiment.timing and self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                self.stats.cache_hits += 1
                return RunAnswer(RunRecord.from_json(json.loads(stored), cached=True), 0.0)
        flight = self._in_flight.get(key)
        started_here = flight is None
        if flight is None:
            if admit is not None:
                admit()
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

    async def _compute(
        self, key: str, topic: Topic, experiment: Experiment, params: dict[str, Any], client: str
    ) -> tuple[RunRecord, float]:
        try:
            job = Job(str(topic.folder), experiment.name, params, experiment.time_limit_s)
            outcome = await self.pool.submit(job, client)
            self.stats.computed += 1
            record = RunRecord(
                topic=topic.slug,
                experiment=experiment.name,
                params=params,
                engine_version=whylab.__version__,
                result=result_from_dict(outcome.payload),
                timing=experiment.timing,
                cached=False,
                elapsed_s=outcome.elapsed_s,
            )
            if not experiment.timing and self.cache is not None:
                stored = record.to_json()
                del stored["cached"]  # a property of each answer, not of the result
                self.cache.put(key, topic.slug, experiment.name, dumps(stored))
            return record, outcome.cpu_s
        finally:
            flight = self._in_flight.get(key)
            if flight is not None and flight.task is asyncio.current_task():
                del self._in_flight[key]


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
