"""Admission by a client's share: hostile clients leave room and budget for everyone else.

Three clients, as an attacker would try it: two push as many runs as they can
at once, a third (a reader) asks for a few. On one server the clients are
three loopback addresses (127.0.0.2, .3, .4 to a server on 127.0.0.1); the
Redis deployment's version is in ``test_redis_deployment.py``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from loop_helpers import run_async

from whylab.explorer.runs.fair_queue import FairQueue, _Entry, client_share
from whylab.explorer.runs.ratelimit import RateLimited, RateLimiter
from whylab.explorer.runs.workers import Job

API = "/api/topics/tiny-demo/experiments"


def entry(client: str, loop) -> _Entry:
    return _Entry(Job("folder", "x", {}, 1.0), loop.create_future(), client, 0.0)


@pytest.mark.parametrize("hostile", [1, 2, 3, 5, 9])
def test_however_many_clients_push_a_newcomer_finds_a_place(hostile):
    async def scenario():
        loop = asyncio.get_running_loop()
        queue = FairQueue(max_size=16, max_per_client=8)
        for _ in range(20):  # each hostile client pushes in turn until refused
            for index in range(hostile):
                queue.put(entry(f"hostile-{index}", loop))
        return queue.put(entry("reader", loop)), len(queue)

    admitted, size = run_async(scenario)
    assert admitted, size


def test_a_clients_share_shrinks_as_others_wait():
    assert [client_share(16, 8, others) for others in range(5)] == [8, 5, 4, 3, 2]
    assert client_share(16, 8, 100) == 1


def test_runs_asked_at_once_are_charged_up_front_and_settled_after():
    now = [0.0]
    limiter = RateLimiter(rate=0.001, burst_s=5.0, clock=lambda: now[0])
    admitted = 0
    for _ in range(10):  # ten 3 s runs at once: the balance pays for two
        try:
            limiter.reserve("a", 3.0)
            admitted += 1
        except RateLimited:
            pass
    assert admitted == 2 and limiter.balance("a") == pytest.approx(-1.0)
    limiter.settle("a", 3.0, 0.5)  # the first cost less: refunded
    assert limiter.balance("a") == pytest.approx(1.5)
    limiter.settle("a", 3.0, None)  # the second was not computed: refunded in full
    assert limiter.balance("a") == pytest.approx(4.5)


def from_address(base: str, address: str) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=base, transport=transport, timeout=60)


def hammer(get, stop: threading.Event, tag: str, limit: int = 60) -> list[int]:
    """One hostile thread: distinct runs back to back, again at once when refused."""
    statuses = []
    for index in range(limit):  # bounded in count; ``stop`` bounds it in time
        if stop.is_set():
            break
        statuses.append(get(f"{API}/sleepy?seconds=0.2{tag}{index:03d}").status_code)
        if statuses[-1] == 503:
            time.sleep(0.02)
    return statuses


def test_two_hostile_clients_leave_a_third_its_runs_on_one_server(live_server):
    server = live_server(workers=1, rate_burst=0, queue_wait_s=30)
    hostile = [from_address(server.base, f"127.0.0.{n}") for n in (2, 3)]
    reader = from_address(server.base, "127.0.0.4")
    stop = threading.Event()
    try:
        with ThreadPoolExecutor(20) as threads:
            pushed = [
                threads.submit(hammer, client.get, stop, f"{n}{t}")
                for n, client in enumerate(hostile)
                for t in range(10)
            ]
            deadline = time.monotonic() + 30
            while server.app.state.pool.queued < 12 and time.monotonic() < deadline:
                time.sleep(0.02)  # until the hostile runs fill the queue
            mine = [reader.get(f"{API}/sine?seed={i + 1}").status_code for i in range(3)]
            stop.set()
            statuses = [status for future in pushed for status in future.result()]
    finally:
        for client in (*hostile, reader):
            client.close()
    assert mine == [200, 200, 200], mine
    assert statuses.count(503) >= 1, statuses  # the hostile clients were held to their share


def test_one_client_cannot_start_ten_costly_runs_at_once(live_server):
    # burst 2.5 CPU-seconds; sleepy's runs are expected to cost 1 s each before any is seen
    server = live_server(workers=1, rate_burst=2.5, rate_per_s=0.001)
    with from_address(server.base, "127.0.0.5") as client, ThreadPoolExecutor(10) as threads:
        answers = list(threads.map(lambda i: client.get(f"{API}/sleepy?seconds=0.3{i}"), range(10)))
    statuses = [answer.status_code for answer in answers]
    assert statuses.count(200) <= 3 and statuses.count(429) >= 7, statuses
