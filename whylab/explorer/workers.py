"""Run experiments in separate worker processes with hard limits.

The web server never runs topic code in its own process. A :class:`WorkerPool`
keeps ``size`` worker processes (started by ``forkserver`` on Linux, so a
replacement starts in a fraction of a second), each connected by a pipe:

* **time** -- the server waits at most the experiment's ``time_limit_s`` for an
  answer; a worker that overruns is killed and replaced, and the caller gets
  :class:`ExperimentTimeout`.
* **memory** -- each worker lowers its own address-space limit
  (``RLIMIT_AS``) before running anything, so a memory hog fails with
  ``MemoryError`` (or dies); either way the worker is replaced and the caller
  gets :class:`ExperimentMemoryError`.
* **load** -- jobs wait in a bounded queue; when it is full :meth:`submit`
  raises :class:`Overloaded` at once instead of letting requests pile up.

A job names a topic folder and an experiment *that the server looked up in its
registry*; parameters arrive already parsed, so nothing a visitor typed is ever
imported or evaluated.
"""

from __future__ import annotations

import asyncio
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


class RunFailure(Exception):
    """An experiment run that produced no result; ``status`` is the HTTP status to answer."""

    status = 500

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


class Overloaded(RunFailure):
    status = 503

    def __init__(self, retry_after_s: float):
        super().__init__("the server is busy running other experiments; please retry shortly")
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Job:
    folder: str  # topic folder, from the registry
    experiment: str  # experiment name, from the registry
    params: dict[str, Any]  # already parsed and bounded
    time_limit_s: float


# ---------------------------------------------------------------- the worker process


def _limit_memory(limit_mb: int) -> None:
    if limit_mb > 0:
        import resource

        limit = limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def worker_main(conn: Connection, memory_limit_mb: int) -> None:
    """Loop of a worker process: receive a job, run it, send back JSON-ready data."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    _limit_memory(memory_limit_mb)
    from whylab.explorer.serialization import result_to_dict
    from whylab.explorer.topics import import_experiments

    while True:
        try:
            job: Job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            experiment = import_experiments(Path(job.folder))[job.experiment]
            started = time.perf_counter()
            result = experiment.run(**job.params)
            payload = result_to_dict(result)
            conn.send(("ok", payload, time.perf_counter() - started))
        except MemoryError:
            conn.send(("memory", "", 0.0))
            return  # the heap may be fragmented or half-filled: let the server start a fresh worker
        except Exception as error:  # the experiment's own bug: report it, keep the worker
            conn.send(("error", f"{type(error).__name__}: {error}", 0.0))


# ---------------------------------------------------------------- the server side


@dataclass
class PoolStats:
    jobs: int = 0  # jobs handed to a worker
    timeouts: int = 0
    memory_kills: int = 0
    crashes: int = 0
    replacements: int = 0  # workers started after the first ``size``


@dataclass
class _Worker:
    process: Any = None
    conn: Connection | None = None
    pids: list[int] = field(default_factory=list)


def _context() -> multiprocessing.context.BaseContext:
    if sys.platform.startswith("linux"):
        context = multiprocessing.get_context("forkserver")
        # Modules imported once in the fork server are shared by every worker it forks.
        context.set_forkserver_preload(["numpy", "whylab.explorer.topics"])
        return context
    return multiprocessing.get_context("spawn")


class WorkerPool:
    """``size`` worker processes fed from a bounded queue; use from one asyncio loop."""

    def __init__(self, size: int = 2, memory_limit_mb: int = 2048, max_queue: int = 16):
        if size < 1:
            raise ValueError("a worker pool needs at least one worker")
        self.size = size
        self.memory_limit_mb = memory_limit_mb
        self.max_queue = max_queue
        self.stats = PoolStats()
        self._context = _context()
        self._queue: asyncio.Queue[tuple[Job, asyncio.Future]] | None = None
        self._workers = [_Worker() for _ in range(size)]
        self._tasks: list[asyncio.Task] = []
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix="whylab-recv")
        self._started = 0

    async def start(self) -> None:
        self._queue = asyncio.Queue(maxsize=self.max_queue)
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(None, self._spawn, w) for w in self._workers))
        self._tasks = [asyncio.create_task(self._serve(w)) for w in self._workers]

    @property
    def worker_pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process is not None]

    @property
    def queued(self) -> int:
        return self._queue.qsize() if self._queue else 0

    async def submit(self, job: Job) -> tuple[dict[str, Any], float]:
        """Run ``job``; returns (result data, seconds the experiment took) or raises RunFailure."""
        if self._queue is None:
            raise RuntimeError("WorkerPool.start() was not called")
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        try:
            self._queue.put_nowait((job, future))
        except asyncio.QueueFull:
            raise Overloaded(retry_after_s=max(1.0, job.time_limit_s / 4)) from None
        return await future

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for worker in self._workers:
            self._stop(worker)
        self._threads.shutdown(wait=False, cancel_futures=True)

    # -- internals

    def _spawn(self, worker: _Worker) -> None:
        parent_end, child_end = self._context.Pipe()
        process = self._context.Process(
            target=worker_main,
            args=(child_end, self.memory_limit_mb),
            daemon=True,
            name="whylab-experiment-worker",
        )
        process.start()
        child_end.close()  # so the parent sees EOF when the worker dies
        worker.process, worker.conn = process, parent_end
        self._started += 1
        if self._started > self.size:
            self.stats.replacements += 1

    def _stop(self, worker: _Worker) -> None:
        if worker.process is not None and worker.process.is_alive():
            os.kill(worker.process.pid, signal.SIGKILL)
        if worker.process is not None:
            worker.process.join(timeout=5)
        worker.process = None

    async def _replace(self, worker: _Worker, pending_recv: asyncio.Future | None) -> None:
        self._stop(worker)
        if pending_recv is not None:  # the reader thread gets EOF now that the worker is gone
            await asyncio.gather(pending_recv, return_exceptions=True)
        if worker.conn is not None:
            worker.conn.close()
        await asyncio.get_running_loop().run_in_executor(None, self._spawn, worker)

    async def _serve(self, worker: _Worker) -> None:
        assert self._queue is not None
        while True:
            job, future = await self._queue.get()
            if future.done():  # the caller went away
                continue
            try:
                outcome = await self._run(worker, job)
            except RunFailure as failure:
                if not future.done():
                    future.set_exception(failure)
            else:
                if not future.done():
                    future.set_result(outcome)

    async def _run(self, worker: _Worker, job: Job) -> tuple[dict[str, Any], float]:
        loop = asyncio.get_running_loop()
        if worker.process is None or not worker.process.is_alive():
            await self._replace(worker, None)
        assert worker.conn is not None
        self.stats.jobs += 1
        worker.conn.send(job)
        receiving = loop.run_in_executor(self._threads, worker.conn.recv)
        try:
            kind, payload, elapsed = await asyncio.wait_for(
                asyncio.shield(receiving), timeout=job.time_limit_s
            )
        except TimeoutError:
            self.stats.timeouts += 1
            await self._replace(worker, receiving)
            raise ExperimentTimeout(job.time_limit_s) from None
        except (EOFError, OSError):
            worker.process.join(timeout=5)
            exit_code = worker.process.exitcode
            await self._replace(worker, None)
            if exit_code == -signal.SIGKILL:  # most likely the kernel's out-of-memory killer
                self.stats.memory_kills += 1
                raise ExperimentMemoryError(self.memory_limit_mb) from None
            self.stats.crashes += 1
            raise ExperimentCrashed(f"the experiment worker died (exit code {exit_code})") from None
        if kind == "memory":
            self.stats.memory_kills += 1
            await self._replace(worker, None)
            raise ExperimentMemoryError(self.memory_limit_mb)
        if kind == "error":
            raise ExperimentCrashed(f"the experiment failed: {payload}")
        return payload, elapsed
