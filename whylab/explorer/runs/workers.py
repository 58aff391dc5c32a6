"""Run experiments in separate worker processes with hard limits.

The web server never runs topic code in its own process. A :class:`WorkerPool`
keeps ``size`` worker processes (started by ``forkserver`` on Linux, so a
replacement starts in a fraction of a second), each connected by a pipe:

* **time** -- the server waits at most the experiment's ``time_limit_s`` for an
  answer; a worker that overruns is killed and replaced, and the caller gets
  :class:`ExperimentTimeout`.
* **memory** -- each worker lowers its own soft address-space limit
  (``RLIMIT_AS``) before running anything, so a memory hog fails with
  ``MemoryError``; the hard limit stays where it was, so an experiment may give
  a child process limits of its own (a sanitized program reserves terabytes of
  address space and touches megabytes; the rust-vs-cpp topic bounds its
  children's resident memory instead); the worker is replaced and the caller gets
  :class:`ExperimentMemoryError`. A worker killed by a signal is a memory
  overrun only when the kernel's out-of-memory killer says so (its cgroup's
  ``oom_kill`` count went up); otherwise it was stopped from outside
  (:class:`ExperimentKilled`).
* **load** -- jobs wait in a bounded :class:`FairQueue`, one line per client
  served in turn, so one busy client cannot starve another; when the queue
  (or the client's share of it) is full :meth:`WorkerPool.submit` raises
  :class:`Overloaded` at once instead of letting requests pile up.
* **faults** -- a slot never dies: a worker that cannot be started (no file
  descriptors left, a wedged fork server) answers the job in hand with
  :class:`WorkerUnavailable` and the slot tries again with the next job; a
  fork server that does not answer within ``spawn_timeout_s`` is killed, and
  multiprocessing starts a fresh one (which gets ``FORKSERVER_START_S`` more to
  come up, and is not killed for being slow). Every :meth:`submit` ends -- with a
  result, a 504 or a 503 -- within :meth:`WorkerPool.deadline_s`.
* **compiling** -- the fork server compiles the numba kernels before it forks
  any worker (:mod:`whylab.numerics.kernel_warmup`), so no run pays the compile.

A job names a topic folder and an experiment *that the server looked up in its
registry*; parameters arrive already parsed, so nothing a visitor typed is ever
imported or evaluated.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from whylab.explorer.runs.errors import (
    ExperimentCrashed,
    ExperimentKilled,
    ExperimentMemoryError,
    ExperimentTimeout,
    Overloaded,
    RunFailure,
    WorkerUnavailable,
)
from whylab.explorer.runs.fair_queue import FairQueue, _Entry

log = logging.getLogger(__name__)

# How long a fork server may take to hand over a new worker before it counts as wedged.
DEFAULT_SPAWN_TIMEOUT_S = 10.0
# Extra time allowed for a start while the fork server is new. Before it forks its first
# worker it imports numpy and the explorer (several seconds on a loaded machine) and
# compiles the numba kernels (whylab.numerics.warmed_kernels: 2-6 s with numba's disk
# cache, 37.7 s measured cold on this loaded 2-core machine). The warm-up is inside the
# allowance, not after the fork server's ready signal: no job is sent to a worker before
# it exists, so the compile delays the first start (and a start after a fork server
# restart) but can never count against a job's time limit; and the allowance is long
# enough that a cold compile is not taken for a wedged fork server (which would be
# killed, and its successor would compile again). A new fork server is never killed for
# being slow.
FORKSERVER_IMPORT_S = 30.0
KERNEL_WARM_S = 90.0
FORKSERVER_START_S = FORKSERVER_IMPORT_S + KERNEL_WARM_S
# A job that waited this long for a free worker is answered 503 instead of started.
DEFAULT_QUEUE_WAIT_S = 30.0
# Slack for the machinery (replacing a worker, the pipe round trip) on top of the limits.
DEADLINE_MARGIN_S = 2.0


@dataclass(frozen=True)
class Job:
    folder: str  # topic folder, from the registry
    experiment: str  # experiment name, from the registry
    params: dict[str, Any]  # already parsed and bounded
    time_limit_s: float
    # Which topic, and which version of its experiments.py: what a worker on another
    # machine (whylab.explorer.runs.redis.worker) finds its own copy of the topic by.
    topic: str = ""
    source_hash: str = ""
    # A control run: the negative control the worker switches on (one the experiment
    # declares; see whylab.explorer.content.controls.control_params); "" for a real run.
    control: str = ""


@dataclass(frozen=True)
class Outcome:
    """What a worker sends back for a finished run."""

    payload: dict[str, Any]  # the result, JSON-ready
    elapsed_s: float  # wall-clock seconds the experiment took
    cpu_s: float  # CPU seconds the worker spent on it (what the rate limit charges)
    machine: str = ""  # where it ran, when that is not this machine (a remote worker)


# ---------------------------------------------------------------- the worker process


def _limit_memory(limit_mb: int) -> None:
    if limit_mb > 0:
        import resource

        limit = limit_mb * 1024 * 1024
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))  # soft only: hard stays


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that ended (a compiler, a compiled
    program an experiment ran): what a run costs its client."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def worker_main(conn: Connection, memory_limit_mb: int) -> None:
    """Loop of a worker process: receive a job, run it, send back JSON-ready data."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    _limit_memory(memory_limit_mb)
    from whylab.explorer.content.topics import import_experiments
    from whylab.explorer.experiment import switched_on
    from whylab.explorer.runs.result_json import result_to_dict

    while True:
        try:
            job: Job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            experiment = import_experiments(Path(job.folder))[job.experiment]
            if job.control and job.control not in {c.name for c in experiment.controls}:
                raise ValueError(f"{job.experiment} declares no control {job.control!r}")
            started, cpu_started = time.perf_counter(), cpu_seconds()
            with switched_on(job.control or None):
                result = experiment.run(**job.params)
            payload = result_to_dict(result)
            elapsed, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
            conn.send(("ok", payload, elapsed, cpu))
        except MemoryError:
            conn.send(("memory", "", 0.0, 0.0))
            return  # the heap may be fragmented or half-filled: let the server start a fresh worker
        except Exception as error:  # the experiment's own bug: report it, keep the worker
            conn.send(("error", f"{type(error).__name__}: {error}", 0.0, 0.0))


def oom_kill_count() -> int | None:
    """How many processes the kernel's OOM killer has killed in this cgroup (v2), if readable."""
    try:
        with open("/proc/self/cgroup", encoding="ascii") as lines:
            unified = next(line for line in lines if line.startswith("0:"))
        relative = unified.split(":", 2)[2].strip()
        with open(f"/sys/fs/cgroup{relative}/memory.events", encoding="ascii") as events:
            for line in events:
                name, _, value = line.partition(" ")
                if name == "oom_kill":
                    return int(value)
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return None


# ---------------------------------------------------------------- the server side


@dataclass
class PoolStats:
    jobs: int = 0  # jobs handed to a worker
    timeouts: int = 0
    memory_kills: int = 0
    killed: int = 0  # workers stopped by a signal from outside
    crashes: int = 0
    replacements: int = 0  # workers started after the first ``size``
    spawn_failures: int = 0  # worker starts that raised or hung
    forkserver_restarts: int = 0
    abandoned: int = 0  # queued jobs dropped because their caller went away


@dataclass
class _Worker:
    process: Any = None
    conn: Connection | None = None
    pids: list[int] = field(default_factory=list)


def run_deadline_s(time_limit_s: float, spawn_timeout_s: float = DEFAULT_SPAWN_TIMEOUT_S) -> float:
    """The longest a run takes once out of the queue: its limit, starting workers, the margin."""
    starting = 2 * spawn_timeout_s + FORKSERVER_START_S
    return time_limit_s + starting + DEADLINE_MARGIN_S


def _context() -> multiprocessing.context.BaseContext:
    if sys.platform.startswith("linux"):
        context = multiprocessing.get_context("forkserver")
        # Modules imported once in the fork server are shared by every worker it forks;
        # the last one compiles the numba kernels, so no worker compiles them again.
        context.set_forkserver_preload(
            ["numpy", "whylab.explorer.content.topics", "whylab.numerics.warmed_kernels"]
        )
        return context
    return multiprocessing.get_context("spawn")


def _forkserver_pid() -> int | None:
    """The pid of multiprocessing's fork server, if one was started by this process."""
    from multiprocessing import forkserver

    return getattr(forkserver._forkserver, "_forkserver_pid", None)


def _kill(process: Any) -> None:
    """SIGKILL ``process`` unless it is known to have exited.

    When the fork server itself is gone, the exit status of its children is
    lost (``exitcode`` reads 255) although they may still run, so those are
    killed by pid too.
    """
    if process is None or process.pid is None:
        return
    if process.exitcode not in (None, 255):
        return
    try:
        os.kill(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class WorkerPool:
    """``size`` worker processes fed from a fair, bounded queue; use from one asyncio loop."""

    def __init__(
        self,
        size: int = 2,
        memory_limit_mb: int = 2048,
        max_queue: int = 16,
        *,
        max_queue_per_client: int | None = None,
        queue_wait_s: float = DEFAULT_QUEUE_WAIT_S,
        spawn_timeout_s: float = DEFAULT_SPAWN_TIMEOUT_S,
    ):
        if size < 1:
            raise ValueError("a worker pool needs at least one worker")
        if max_queue < 1:
            raise ValueError("a worker pool needs a queue of at least one job")
        self.size = size
        self.memory_limit_mb = memory_limit_mb
        self.max_queue = max_queue
        self.max_queue_per_client = max_queue_per_client or max(1, max_queue // 2)
        self.queue_wait_s = queue_wait_s
        self.spawn_timeout_s = spawn_timeout_s
        self._known_forkserver: int | None = None  # the one that last started a worker
        self._forkserver_killed_at = -math.inf
        self.stats = PoolStats()
        self._context = _context()
        self._queue: FairQueue | None = None
        self._workers = [_Worker() for _ in range(size)]
        self._tasks: list[asyncio.Task] = []
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix="whylab-recv")
        # Starting and stopping workers can block (a wedged fork server); never on the loop.
        # A start hung on a wedged fork server holds its thread until that server is killed.
        self._spawner = ThreadPoolExecutor(max_workers=2 * size, thread_name_prefix="whylab-spawn")
        self._started = 0

    async def start(self) -> None:
        self._queue = FairQueue(self.max_queue, self.max_queue_per_client)
        starts = await asyncio.gather(
            *(self._ensure_worker(w) for w in self._workers), return_exceptions=True
        )
        for failure in starts:
            if isinstance(failure, WorkerUnavailable):  # that slot retries with its first job
                log.warning("experiment worker not started: %s", failure.message)
            elif isinstance(failure, BaseException):
                raise failure
        self._tasks = [asyncio.create_task(self._serve(w)) for w in self._workers]

    @property
    def worker_pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process is not None]

    @property
    def queued(self) -> int:
        return len(self._queue) if self._queue else 0

    def deadline_s(self, job: Job) -> float:
        """The longest :meth:`submit` can take for ``job``, whatever fails underneath."""
        return self.queue_wait_s + run_deadline_s(job.time_limit_s, self.spawn_timeout_s)

    async def submit(self, job: Job, client: str = "") -> Outcome:
        """Run ``job`` for ``client``; returns its :class:`Outcome` or raises RunFailure.

        Cancelling the call (the client went away) drops the job if it is still
        queued; a job already running finishes in its worker, within its limit.
        """
        if self._queue is None:
            raise RuntimeError("WorkerPool.start() was not called")
        loop = asyncio.get_running_loop()
        entry = _Entry(job, loop.create_future(), client, loop.time())
        if not self._queue.put(entry):
            raise Overloaded(retry_after_s=max(1.0, job.time_limit_s / 4))
        try:
            return await asyncio.wait_for(asyncio.shield(entry.future), self.deadline_s(job))
        except TimeoutError:
            log.error("experiment job %s/%s passed its deadline", job.folder, job.experiment)
            raise WorkerUnavailable("the run did not finish in time") from None
        except asyncio.CancelledError:
            if not entry.started:
                self.stats.abandoned += 1
            raise
        finally:
            if not entry.future.done():
                entry.future.cancel()
            self._queue.discard(entry)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for worker in self._workers:
            self._stop(worker)
        self._threads.shutdown(wait=False, cancel_futures=True)
        self._spawner.shutdown(wait=False, cancel_futures=True)

    # -- starting and stopping workers

    def _start_process(self) -> tuple[Any, Connection]:
        parent_end, child_end = self._context.Pipe()
        try:
            process = self._context.Process(
                target=worker_main,
                args=(child_end, self.memory_limit_mb),
                daemon=True,
                name="whylab-experiment-worker",
            )
            process.start()
        except BaseException:
            parent_end.close()
            raise
        finally:
            child_end.close()  # so the parent sees EOF when the worker dies
        return process, parent_end

    def _stop(self, worker: _Worker) -> None:
        _kill(worker.process)
        if worker.conn is not None:
            worker.conn.close()
        worker.process, worker.conn = None, None

    async def _ensure_worker(self, worker: _Worker) -> None:
        """Give ``worker`` a live process, or raise WorkerUnavailable (the slot stays usable)."""
        if worker.process is not None and worker.process.is_alive():
            return
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._spawner, self._stop, worker)
        for attempt in range(2):
            young = self._forkserver_is_young()
            timeout = self.spawn_timeout_s + (FORKSERVER_START_S if young else 0.0)
            starting = loop.run_in_executor(self._spawner, self._start_process)
            try:
                process, conn = await asyncio.wait_for(asyncio.shield(starting), timeout)
            except TimeoutError:
                self.stats.spawn_failures += 1
                starting.add_done_callback(_kill_late_start)
                # A hung start blocks one spawner thread until the fork server dies; the
                # restart runs on another thread so it cannot queue behind it.
                if attempt == 0 and not young and await asyncio.to_thread(self._restart_forkserver):
                    continue
                raise WorkerUnavailable("the worker starter did not answer") from None
            except (OSError, EOFError, ValueError) as error:
                self.stats.spawn_failures += 1
                log.warning("could not start an experiment worker: %s", error)
                lost_forkserver = isinstance(error, EOFError)
                if (
                    attempt == 0
                    and lost_forkserver
                    and await asyncio.to_thread(self._restart_forkserver)
                ):
                    continue
                raise WorkerUnavailable(f"could not start a worker: {error}") from None
            worker.process, worker.conn = process, conn
            self._known_forkserver = _forkserver_pid()
            self._started += 1
            if self._started > self.size:
                self.stats.replacements += 1
            return

    def _forkserver_is_young(self) -> bool:
        """Whether the fork server may still be starting: none yet, a new one, or just killed."""
        pid = _forkserver_pid()
        recently_killed = time.monotonic() - self._forkserver_killed_at < FORKSERVER_START_S
        return pid is None or pid != self._known_forkserver or recently_killed

    def _restart_forkserver(self) -> bool:
        """Kill a wedged fork server so the next start launches a new one; False if none."""
        pid = _forkserver_pid()
        if pid is None:
            return False
        log.warning("the fork server (pid %d) did not answer; killing it", pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        # Wait until it is dead but leave it unreaped: multiprocessing reaps it itself
        # (``ensure_running`` calls waitpid) and then launches a new fork server.
        for _ in range(200):
            try:
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    break
            except ChildProcessError:
                break
            time.sleep(0.01)
        self._forkserver_killed_at = time.monotonic()
        self.stats.forkserver_restarts += 1
        return True

    # -- serving jobs

    async def _serve(self, worker: _Worker) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while True:
            entry = await self._queue.get()
            if entry.future.done():  # the caller went away
                continue
            entry.started = True
            try:
                if loop.time() - entry.enqueued > self.queue_wait_s:
                    raise Overloaded(retry_after_s=max(1.0, entry.job.time_limit_s / 4))
                outcome = await self._run(worker, entry.job)
            except RunFailure as failure:
                if not entry.future.done():
                    entry.future.set_exception(failure)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a fault of the machinery: the slot must survive it
                log.exception("experiment worker fault")
                self.stats.crashes += 1
                await self._renew(worker)
                if not entry.future.done():
                    entry.future.set_exception(WorkerUnavailable(type(error).__name__))
            else:
                if not entry.future.done():
                    entry.future.set_result(outcome)

    async def _run(self, worker: _Worker, job: Job) -> Outcome:
        loop = asyncio.get_running_loop()
        await self._ensure_worker(worker)
        assert worker.conn is not None and worker.process is not None
        self.stats.jobs += 1
        ooms_before = oom_kill_count()
        try:
            worker.conn.send(job)
        except (OSError, ValueError):  # the worker died while idle (BrokenPipeError is an OSError)
            await self._renew(worker)
            self.stats.crashes += 1
            raise WorkerUnavailable("the worker had died while idle") from None
        receiving = loop.run_in_executor(self._threads, worker.conn.recv)
        try:
            kind, payload, elapsed, cpu = await asyncio.wait_for(
                asyncio.shield(receiving), timeout=job.time_limit_s
            )
        except TimeoutError:
            self.stats.timeouts += 1
            await self._discard_after(worker, receiving)
            raise ExperimentTimeout(job.time_limit_s) from None
        except (EOFError, OSError):
            process = worker.process
            exit_code = await loop.run_in_executor(self._spawner, _exit_code, process)
            await self._renew(worker)
            raise self._death_failure(exit_code, ooms_before) from None
        if kind == "memory":
            self.stats.memory_kills += 1
            await self._renew(worker)
            raise ExperimentMemoryError(self.memory_limit_mb)
        if kind == "error":
            raise ExperimentCrashed(f"the experiment failed: {payload}")
        return Outcome(payload, elapsed, cpu)

    async def _discard_after(self, worker: _Worker, receiving: asyncio.Future) -> None:
        """Kill a worker whose reply is pending; its reader thread gets EOF and returns."""
        _kill(worker.process)
        await asyncio.gather(receiving, return_exceptions=True)
        await self._renew(worker)

    async def _renew(self, worker: _Worker) -> None:
        """Stop ``worker`` and start its replacement now; if that fails, the next job retries."""
        await asyncio.get_running_loop().run_in_executor(self._spawner, self._stop, worker)
        try:
            await self._ensure_worker(worker)
        except WorkerUnavailable:
            pass

    def _death_failure(self, exit_code: int | None, ooms_before: int | None) -> RunFailure:
        """Why a worker died mid-run: the OOM killer, a signal from outside, or a crash."""
        if exit_code is not None and exit_code < 0:
            ooms_after = oom_kill_count()
            if ooms_before is not None and ooms_after is not None and ooms_after > ooms_before:
                self.stats.memory_kills += 1
                return ExperimentMemoryError(self.memory_limit_mb)
            self.stats.killed += 1
            try:
                name = signal.Signals(-exit_code).name
            except ValueError:
                name = f"signal {-exit_code}"
            return ExperimentKilled(name)
        self.stats.crashes += 1
        return ExperimentCrashed(f"the experiment worker died (exit code {exit_code})")


def _exit_code(process: Any, wait_s: float = 2.0) -> int | None:
    """A dead worker's exit code, waiting briefly for the fork server to report it."""
    process.join(timeout=wait_s)
    code = process.exitcode
    return None if code == 255 else code


def _kill_late_start(starting: asyncio.Future) -> None:
    """A worker that started after we gave up on it is nobody's: stop it."""
    if not starting.cancelled() and starting.exception() is None:
        process, conn = starting.result()
        _kill(process)
        conn.close()
