"""Fair sharing of the experiment workers: per-client queues, CPU-second charging, dropped jobs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from loop_helpers import run_async

from whylab.explorer.content.topics import load_registry
from whylab.explorer.runs.errors import Overloaded, RateLimited
from whylab.explorer.runs.fair_queue import FairQueue, _Entry
from whylab.explorer.runs.ratelimit import RateLimiter
from whylab.explorer.runs.service import ExperimentService
from whylab.explorer.runs.workers import Job, WorkerPool

FIXTURE_TOPICS = Path(__file__).resolve().parent / "fixture_topics"


def entry(client: str, name: str, loop: asyncio.AbstractEventLoop) -> _Entry:
    return _Entry(Job("folder", name, {}, 1.0), loop.create_future(), client, 0.0)


def test_the_queue_serves_clients_in_turn_not_first_come_first_served():
    async def scenario():
        loop = asyncio.get_running_loop()
        queue = FairQueue(max_size=10, max_per_client=5)
        for name in ("a1", "a2", "a3"):
            assert queue.put(entry("alice", name, loop))
        assert queue.put(entry("bob", "b1", loop))
        assert queue.put(entry("carol", "c1", loop))
        return [(await queue.get()).job.experiment for _ in range(5)]

    assert run_async(scenario) == ["a1", "b1", "c1", "a2", "a3"]


def test_one_client_cannot_fill_the_whole_queue():
    async def scenario():
        loop = asyncio.get_running_loop()
        queue = FairQueue(max_size=4, max_per_client=2)
        results = [queue.put(entry("alice", f"a{i}", loop)) for i in range(3)]
        results.append(queue.put(entry("bob", "b1", loop)))
        return results, len(queue)

    assert run_async(scenario) == ([True, True, False, True], 3)


def test_a_discarded_entry_gives_back_its_place():
    async def scenario():
        loop = asyncio.get_running_loop()
        queue = FairQueue(max_size=2, max_per_client=2)
        first, second = entry("alice", "a1", loop), entry("alice", "a2", loop)
        assert queue.put(first) and queue.put(second)
        assert not queue.put(entry("alice", "a3", loop))
        queue.discard(first)
        assert queue.put(entry("alice", "a3", loop))
        return [(await queue.get()).job.experiment for _ in range(2)]

    assert run_async(scenario) == ["a2", "a3"]


def test_a_light_client_is_not_stuck_behind_a_heavy_one():
    """Alice queues four slow runs, then Bob one trivial run: Bob's ends before Alice's last."""
    folder = str(FIXTURE_TOPICS / "tiny_demo")

    async def scenario():
        pool = WorkerPool(size=1, memory_limit_mb=1024, max_queue=8, max_queue_per_client=6)
        await pool.start()
        finished: list[str] = []

        async def run(client: str, label: str, seconds: float):
            await pool.submit(Job(folder, "sleepy", {"seconds": seconds}, 5.0), client)
            finished.append(label)

        try:
            alice = [asyncio.create_task(run("alice", f"a{i}", 0.3 + i / 100)) for i in range(4)]
            await asyncio.sleep(0.05)  # Alice's runs are queued first
            bob = asyncio.create_task(run("bob", "b", 0.01))
            await asyncio.gather(*alice, bob)
        finally:
            await pool.close()
        return finished

    finished = run_async(scenario)
    assert finished.index("b") <= 2, finished  # after at most Alice's first two, not all four


def test_a_run_whose_readers_all_left_is_dropped_before_it_starts():
    registry = load_registry(FIXTURE_TOPICS)
    topic = registry.get("tiny-demo")
    sleepy = topic.experiments["sleepy"]

    async def scenario():
        pool = WorkerPool(size=1, memory_limit_mb=1024, max_queue=4)
        await pool.start()
        service = ExperimentService(pool, cache=None)
        try:
            busy = asyncio.create_task(service.run(topic, sleepy, {"seconds": 0.5}, client="a"))
            await asyncio.sleep(0.1)
            readers = [
                asyncio.create_task(service.run(topic, sleepy, {"seconds": 0.2}, client=c))
                for c in ("b", "c")
            ]
            await asyncio.sleep(0.05)
            assert pool.queued == 1 and service.stats.shared == 1
            readers[0].cancel()
            await asyncio.sleep(0.01)
            assert pool.queued == 1  # one reader still waits: the run stays
            readers[1].cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            await asyncio.sleep(0.01)
            queued_after = pool.queued
            await busy
        finally:
            await pool.close()
        return queued_after, pool.stats, service.stats

    queued_after, pool_stats, service_stats = run_async(scenario)
    assert queued_after == 0
    assert pool_stats.abandoned == 1 and service_stats.dropped == 1
    assert pool_stats.jobs == 1  # only the first run ever reached the worker


def test_a_full_queue_is_overloaded_at_once():
    folder = str(FIXTURE_TOPICS / "tiny_demo")

    async def scenario():
        pool = WorkerPool(size=1, memory_limit_mb=1024, max_queue=1)
        await pool.start()
        try:
            job = Job(folder, "sleepy", {"seconds": 0.3}, 5.0)
            running = asyncio.create_task(pool.submit(job, "a"))
            await asyncio.sleep(0.1)
            waiting = asyncio.create_task(pool.submit(job, "b"))
            await asyncio.sleep(0.01)
            with pytest.raises(Overloaded):
                await pool.submit(job, "c")
            await asyncio.gather(running, waiting)
        finally:
            await pool.close()

    run_async(scenario)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_rate_limit_charges_cpu_seconds_not_requests():
    clock = Clock()
    limiter = RateLimiter(rate=0.5, burst_s=2.0, clock=clock)
    for _ in range(150):  # 150 cheap runs of 10 ms each: 1.5 s of the 2 s budget
        limiter.admit("cheap")
        limiter.charge("cheap", 0.002)
    limiter.admit("cheap")
    limiter.admit("costly")
    limiter.charge("costly", 5.0)  # one run of 5 CPU-seconds: 3 s in debt
    with pytest.raises(RateLimited) as refused:
        limiter.admit("costly")
    assert refused.value.retry_after_s == pytest.approx(6.0, abs=0.01)  # 3 s of debt at 0.5/s
    clock.now += 6.01
    limiter.admit("costly")
    limiter.admit("someone-else")  # other clients are untouched


def test_the_rate_limit_refuses_nonsense_settings():
    for rate, burst in ((0, 1), (float("nan"), 1), (1, float("inf")), (1, 0)):
        with pytest.raises(ValueError):
            RateLimiter(rate, burst)
