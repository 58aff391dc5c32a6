"""Timing experiments on the live server: on request, one at a time, the latest kept.

A page never waits on a benchmark. A timing experiment (``timing=True``)
measures wall-clock time, so its result is only meaningful when nothing else
measures at the same moment and only for the machine it ran on. The
:class:`TimingQueue` therefore

* runs timing experiments only when a reader asks (never while a page renders);
* runs them **one at a time**, in the order asked, through the ordinary
  :class:`~whylab.explorer.runs.service.ExperimentService` (so the worker pool's time
  and memory limits apply);
* keeps the **latest measurement** of each (experiment, parameters), with when
  and on what machine it was made and the CPU time it took, for pages to show:
  in memory, and in the result cache (SQLite on disk, or the deployment's
  Redis) under a key of the topic's code version, so a restarted server shows
  what it measured before (:meth:`TimingQueue.recall`) and never a measurement
  of other code; a store that fails is read as holding nothing;
* takes **background** runs (the start-up measurements of
  :mod:`whylab.explorer.runs.warm_up`) last: a reader's new run goes ahead of
  any background run still waiting, and a background run costs no client's budget;
* reports each run's state (queued with its place in line, running for how
  long against how long the last run took) and lets whoever queued it
  **cancel** it (nobody else: :class:`NotYourRun`).

Timing runs are held to the same limits as any other run: a new run is
admitted by its client's CPU-time budget (the same 429 as ordinary runs), its
CPU seconds are charged to that client, and a failure keeps its own status
and ``Retry-After`` (a lost worker is 503, an overrun 504). A run nobody waits
for any more is dropped before it starts: a run asked for by a waiting request
(:meth:`TimingQueue.measure`) once every such request has gone, a run queued
through the API once its state has not been asked for ``abandon_s``.

Cancelling a queued run removes it from the line. A run already in a worker
cannot be interrupted from here: its result is thrown away, and the next run
still waits for it to finish, so two measurements never overlap.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import platform
import secrets
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import whylab
from whylab.explorer.content.topics import Topic
from whylab.explorer.experiment import Experiment
from whylab.explorer.runs.admission import Admission
from whylab.explorer.runs.cache import cache_key
from whylab.explorer.runs.errors import Overloaded, RunFailure
from whylab.explorer.runs.result_json import dumps
from whylab.explorer.runs.service import ExperimentService, RunRecord
from whylab.explorer.runs.store import BlockingCalls, EmbeddedCalls

if TYPE_CHECKING:
    from whylab.explorer.runs.ratelimit import RateLimiter
    from whylab.explorer.runs.redis.ratelimit import RedisRateLimiter

RunState = Literal["queued", "running", "done", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})
# How long "the store holds no measurement here" is believed before it is asked again
# (another server of a deployment may have measured meanwhile).
RECHECK_S = 30.0
KEEP_WAIT_S = 5.0  # how long closing waits for measurements still being written

log = logging.getLogger(__name__)


def machine_description() -> str:
    """The machine measurements are made on: CPU model and logical CPU count."""
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    model = model or platform.processor() or platform.machine() or "unknown CPU"
    return f"{model}, {os.cpu_count() or 1} × CPU"


@dataclass
class Measurement:
    """A finished timing run: the record, when it finished (UTC), where it ran, the CPU
    seconds it took (None where the worker did not say) and whether a reader asked for it
    (False: a background run at start-up)."""

    record: RunRecord
    measured_at: datetime
    machine: str
    cpu_s: float | None = None
    asked_by_reader: bool = True
    again: bool = False  # it replaced one this server held at these parameters

    @property
    def when(self) -> str:
        return self.measured_at.strftime("%Y-%m-%d %H:%M UTC")

    @property
    def kind(self) -> Literal["asked", "again", "background"]:
        """How it came about: a reader asked, asked again, or the server made it at start-up."""
        if not self.asked_by_reader:
            return "background"
        return "again" if self.again else "asked"

    def to_text(self) -> str:
        """The measurement as it is kept in the result cache (JSON)."""
        return dumps(
            {
                "record": self.record.to_json(),
                "measured_at": self.measured_at.isoformat(),
                "machine": self.machine,
                "cpu_s": self.cpu_s,
                "asked_by_reader": self.asked_by_reader,
                "again": self.again,
            }
        )

    @classmethod
    def from_text(cls, text: str) -> Measurement | None:
        """A kept measurement read back; None for text that is not one (it is remeasured)."""
        try:
            data = json.loads(text)
            measured_at = datetime.fromisoformat(data["measured_at"])
            cpu_s = data["cpu_s"]
            return cls(
                RunRecord.from_json(data["record"], cached=False),
                measured_at if measured_at.tzinfo else measured_at.replace(tzinfo=UTC),
                str(data["machine"]),
                float(cpu_s) if cpu_s is not None else None,
                bool(data["asked_by_reader"]),
                bool(data["again"]),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def measurement_key(topic: Topic, experiment: Experiment, params: dict[str, Any]) -> str:
    """Where a measurement is kept in the result cache: the topic's code version and the
    whylab version are part of it, so a measurement of other code is never shown. (The
    service keeps no timing result, and the prefix keeps the two apart anyway.)"""
    name = f"timing:{experiment.name}"
    return cache_key(topic.slug, topic.source_hash, name, whylab.__version__, params)


@dataclass
class TimingRun:
    """One requested timing run and what has become of it."""

    id: str
    topic: Topic
    experiment: Experiment
    params: dict[str, Any]
    state: RunState = "queued"
    queued_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    finished_at: float | None = None
    message: str = ""  # why it failed
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    owner: str = ""  # the client who queued it: charged for it, the only one who may cancel it
    failure: RunFailure | None = None  # what it failed with, status and Retry-After included
    waiters: int = 0  # requests waiting for it (measure)
    asked_at: float = field(default_factory=time.monotonic)  # when its state was last asked
    admission: Admission | None = None  # its owner's reservation, settled when it ends
    background: bool = False  # a start-up run no reader has asked for (yet)

    @property
    def key(self) -> tuple[str, str, str]:
        return _key(self.topic, self.experiment, self.params)


def _key(topic: Topic, experiment: Experiment, params: dict[str, Any]) -> tuple[str, str, str]:
    return (topic.slug, experiment.name, dumps(params))


class NotYourRun(RunFailure):
    """A client asked to cancel a timing run someone else queued."""

    status = 403

    def __init__(self):
        super().__init__("only the client who queued a timing run may cancel it")


class TimingCancelled(RunFailure):
    """The run a request waited for was cancelled by whoever queued it."""

    status = 409

    def __init__(self):
        super().__init__("the measurement was cancelled")


class TimingQueue:
    """The server's single line of timing runs; use from one asyncio loop."""

    def __init__(
        self,
        service: ExperimentService,
        max_waiting: int = 16,
        keep: int = 256,
        limiter: RateLimiter | RedisRateLimiter | None = None,
        abandon_s: float = 15.0,
        calls: BlockingCalls | None = None,  # how to call the limiter (default: embedded)
        store: Any = None,  # where measurements are kept: a result cache, or None (memory only)
    ):
        self.service = service
        self.store = store
        self.calls = calls or EmbeddedCalls()
        self.max_waiting = max_waiting
        self.keep = keep  # finished runs and measurements remembered (oldest dropped)
        self.limiter = limiter
        self.abandon_s = abandon_s  # a queued run whose state nobody asked for this long goes
        self.dropped = 0  # runs dropped because nobody waited for them
        self._settling: set[asyncio.Task] = set()  # refunds under way
        self.machine = machine_description()
        self._waiting: deque[TimingRun] = deque()
        self._runs: OrderedDict[str, TimingRun] = OrderedDict()
        self._latest: OrderedDict[tuple[str, str, str], Measurement] = OrderedDict()
        self._absent: OrderedDict[tuple[str, str, str], float] = OrderedDict()  # store said none
        self._keeping: set[asyncio.Task] = set()  # measurements being written to the store
        self._last_duration: dict[tuple[str, str], float] = {}
        self._current: TimingRun | None = None
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    # -- what pages and the API ask

    def latest(
        self, topic: Topic, experiment: Experiment, params: dict[str, Any]
    ) -> Measurement | None:
        """The latest measurement at exactly these parameters that this server holds in
        memory (made here, or read back by :meth:`recall`)."""
        return self._latest.get(_key(topic, experiment, params))

    async def recall(
        self, topic: Topic, experiment: Experiment, params: dict[str, Any]
    ) -> Measurement | None:
        """The latest measurement at these parameters: in memory, else kept in the store
        (by an earlier start of this server, or by another server of the deployment)."""
        key = _key(topic, experiment, params)
        found = self._latest.get(key)
        if found is not None or self.store is None:
            return found
        looked = self._absent.get(key)
        if looked is not None and time.monotonic() - looked < RECHECK_S:
            return None
        text = await self.calls.call(self.store.get, measurement_key(topic, experiment, params))
        kept = Measurement.from_text(text) if text is not None else None
        found = self._latest.get(key)  # measured here while the store was asked?
        if found is not None:
            return found
        if kept is None:
            self._remember(self._absent, key, time.monotonic())
            return None
        self._remember(self._latest, key, kept)
        return kept

    def idle(self) -> bool:
        """Nothing running and nothing waiting in the line."""
        return self._current is None and not self._waiting

    def active(
        self, topic: Topic, experiment: Experiment, params: dict[str, Any]
    ) -> TimingRun | None:
        """The queued or running run at these parameters, if any."""
        key = _key(topic, experiment, params)
        current = self._current
        if current is not None and current.key == key and current.state == "running":
            return current
        return next((run for run in self._waiting if run.key == key), None)

    def get(self, run_id: str) -> TimingRun | None:
        return self._runs.get(run_id)

    def poll(self, run_id: str) -> TimingRun | None:
        """A run's state asked for (the page script polls): someone still waits for it."""
        run = self._runs.get(run_id)
        if run is not None:
            run.asked_at = time.monotonic()
        return run

    def position(self, run: TimingRun) -> int:
        """How many runs go before ``run`` (0 when it is running or next)."""
        if run.state != "queued":
            return 0
        ahead = 1 if self._current is not None else 0
        for other in self._waiting:
            if other is run:
                break
            ahead += 1
        return ahead

    def expected_s(self, run: TimingRun) -> float | None:
        """Seconds the last run of this experiment spent running here (any parameters)."""
        return self._last_duration.get((run.topic.slug, run.experiment.name))

    def describe(self, run: TimingRun, client: str) -> dict[str, Any]:
        """A run's state as JSON-ready data, as ``client`` asks for it (what the page script
        polls); ``yours``: ``client`` queued it, so may cancel it (the page shows the button
        to that client only)."""
        now = time.monotonic()
        elapsed = 0.0
        if run.started_at is not None:
            elapsed = (run.finished_at or now) - run.started_at
        return {
            "id": run.id,
            "topic": run.topic.slug,
            "experiment": run.experiment.name,
            "params": run.params,
            "state": run.state,
            "position": self.position(run),
            "elapsed_s": round(elapsed, 3),
            "expected_s": self.expected_s(run),
            "message": run.message,
            "status": run.failure.status if run.failure is not None else None,
            "yours": run.owner == client,
        }

    # -- what readers do

    async def submit(
        self,
        topic: Topic,
        experiment: Experiment,
        params: dict[str, Any],
        client: str = "",
        followed: bool = True,
        background: bool = False,
    ) -> TimingRun:
        """Queue a run for ``client`` (or join the one queued or running at these parameters).

        Joining costs nothing; a new run must be admitted by ``client``'s budget
        (raises RateLimited) and room in the line (raises Overloaded).
        ``followed``: the caller will poll its state (the API), rather than wait.
        ``background``: a start-up run, charged to nobody and queued behind readers' runs.
        """
        if not experiment.timing:
            raise ValueError(f"experiment {experiment.name!r} is not a timing experiment")
        existing = self.active(topic, experiment, params)
        admission = Admission(None if background else self.limiter, client, self.calls)
        if existing is None and self.limiter is not None and not background:
            await admission.admit(self.service.costs.expected_s(topic, experiment))
            existing = self.active(topic, experiment, params)  # queued meanwhile?
        if existing is not None:
            await admission.settle(None)  # joined: nothing to pay
        asked_at = time.monotonic() if followed else -math.inf
        if existing is not None:
            existing.asked_at = max(existing.asked_at, asked_at)
            existing.background = existing.background and background  # a reader asks too
            return existing
        if len(self._waiting) >= self.max_waiting:
            await admission.settle(None)
            raise Overloaded(retry_after_s=max(1.0, experiment.time_limit_s / 4))
        run = TimingRun(
            secrets.token_urlsafe(9),
            topic,
            experiment,
            params,
            owner=client,
            asked_at=asked_at,
            background=background,
        )
        run.admission = admission
        self._remember(self._runs, run.id, run)
        # A reader's run goes ahead of the background runs still waiting.
        place = len(self._waiting)
        if not background:
            place = next((i for i, r in enumerate(self._waiting) if r.background), place)
        self._waiting.insert(place, run)
        self._wake.set()
        return run

    def cancel(self, run_id: str, client: str = "") -> TimingRun | None:
        """``client`` cancels its run; a finished run stays as it was. None: no such id.

        Raises :class:`NotYourRun` when someone else queued it.
        """
        run = self._runs.get(run_id)
        if run is not None and run.owner != client:
            raise NotYourRun()
        if run is None or run.state in FINISHED:
            return run
        self._cancel(run)
        return run

    def _cancel(self, run: TimingRun) -> None:
        if run.state == "queued":
            self._waiting.remove(run)
            self._refund(run)  # it never ran
        self._finish(run, "cancelled")

    def _refund(self, run: TimingRun) -> None:
        if run.admission is not None:
            refund = asyncio.get_running_loop().create_task(run.admission.settle(None))
            self._settling.add(refund)
            refund.add_done_callback(self._settling.discard)

    async def measure(
        self,
        topic: Topic,
        experiment: Experiment,
        params: dict[str, Any],
        client: str = "",
        background: bool = False,
    ) -> Measurement:
        """Queue a run and wait for it (the no-JavaScript form, the JSON API and, with
        ``background``, the start-up measurements).

        Raises the run's own failure (status and Retry-After as an ordinary
        run's). A request cancelled while waiting (its client left) drops the
        run if it was the last one waiting and the run has not started.
        """
        run = await self.submit(
            topic, experiment, params, client, followed=False, background=background
        )
        run.waiters += 1
        try:
            await run.finished.wait()
        finally:
            run.waiters -= 1
            if run.state == "queued" and not self._wanted(run):
                self.dropped += 1
                self._cancel(run)
        if run.state == "done":
            measurement = self.latest(topic, experiment, params)
            assert measurement is not None
            return measurement
        if run.state == "cancelled":
            raise TimingCancelled()
        raise run.failure or RunFailure(run.message)

    def _wanted(self, run: TimingRun) -> bool:
        """Whether anybody still waits for ``run``: a request, or a recent look at its state."""
        return run.waiters > 0 or time.monotonic() - run.asked_at < self.abandon_s

    # -- the line itself

    async def start(self) -> None:
        self._task = asyncio.create_task(self._drain())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._keeping:  # let the writes under way finish, for a few seconds at most
            await asyncio.wait(list(self._keeping), timeout=KEEP_WAIT_S)

    async def _drain(self) -> None:
        while True:
            while not self._waiting:
                self._wake.clear()
                await self._wake.wait()
            run = self._waiting.popleft()
            if not self._wanted(run):
                self.dropped += 1
                self._refund(run)
                self._finish(run, "cancelled")
                continue
            self._current = run
            run.state = "running"
            run.started_at = time.monotonic()
            try:
                answer = await self.service.run(
                    run.topic, run.experiment, run.params, client=run.owner
                )
                record = answer.record
                if run.admission is not None:
                    await run.admission.settle(answer.cost_s or None)
            except RunFailure as failure:
                if run.admission is not None:
                    await run.admission.settle_failure(failure)
                if run.state == "running":
                    run.message = failure.message
                    run.failure = failure
                    self._finish(run, "failed")
            else:
                # Wall time in the line, as the progress shown to readers counts it.
                took = time.monotonic() - (run.started_at or time.monotonic())
                self._last_duration[(run.topic.slug, run.experiment.name)] = took
                if run.state == "running":  # not cancelled meanwhile
                    machine = record.machine or self.machine  # a remote worker says where
                    measurement = Measurement(
                        record,
                        datetime.now(UTC),
                        machine,
                        cpu_s=answer.cost_s or None,
                        asked_by_reader=not run.background,
                        again=run.key in self._latest,
                    )
                    self._remember(self._latest, run.key, measurement)
                    self._absent.pop(run.key, None)
                    self._keep(run, measurement)
                    self._finish(run, "done")
            finally:
                self._current = None

    def _keep(self, run: TimingRun, measurement: Measurement) -> None:
        """Write ``measurement`` to the store in the background (the next run need not wait);
        a store that fails keeps it in memory only (the cache logs its own faults)."""
        if self.store is None:
            return
        key = measurement_key(run.topic, run.experiment, run.params)
        text = measurement.to_text()
        write = self.calls.write(self.store.put, key, run.topic.slug, run.experiment.name, text)
        task = asyncio.get_running_loop().create_task(write)
        self._keeping.add(task)
        task.add_done_callback(self._kept)

    def _kept(self, task: asyncio.Task) -> None:
        self._keeping.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("timing: a measurement was not kept: %s", task.exception())

    def _finish(self, run: TimingRun, state: RunState) -> None:
        run.state = state
        run.finished_at = time.monotonic()
        run.finished.set()

    def _remember(self, store: OrderedDict, key: Any, value: Any) -> None:
        store[key] = value
        store.move_to_end(key)
        while len(store) > self.keep:
            store.popitem(last=False)
