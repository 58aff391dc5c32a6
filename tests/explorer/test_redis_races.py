"""Per-client bounds on Redis hold when several servers check them at the same moment.

A real redis-server on loopback; each "server" is its own :class:`RedisLink` (its
own connection pool), and each calls from several threads at once, released
together by a barrier, all for the same client. Checked and counted in separate
round trips, several of them would see the same room and each take it; here the
check and the reservation are one step in Redis, so exactly the bound is admitted.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import pytest
from test_redis_deployment import RedisServer, needs_redis

from whylab.explorer.runs.errors import Overloaded, RateLimited
from whylab.explorer.runs.redis.link import RedisLink
from whylab.explorer.runs.redis.queue import RemotePool, lane_of
from whylab.explorer.runs.redis.ratelimit import RedisRateLimiter

SERVERS = 3  # links to Redis, each with a pool of its own connections
THREADS = 8  # callers on each at once (a server calls Redis on 8 threads: CALL_THREADS)
TRIALS = 8

pytestmark = needs_redis


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis-races"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def links(redis_server):
    with ExitStack() as stack:
        made = [RedisLink(redis_server.url) for _ in range(SERVERS)]
        for link in made:
            stack.callback(link._calls.shutdown, wait=False)
            stack.callback(link.sync.close)
        yield made


def race(attempt) -> list[bool]:
    """``attempt(server, caller)`` from every caller at once; which of them were admitted."""
    callers = SERVERS * THREADS
    start = threading.Barrier(callers)

    def one(index: int) -> bool:
        start.wait(timeout=60)
        return attempt(index % SERVERS, index)

    with ThreadPoolExecutor(max_workers=callers) as threads:
        return list(threads.map(one, range(callers)))


def test_servers_reserving_one_clients_budget_at_once_admit_one_run_on_one_runs_balance(links):
    # A balance of 1 s and runs expected to cost 1.5 s: the first reservation spends it
    # (and more), so every other one asked at the same moment must be refused; the refill,
    # 1 ms of CPU time per second, brings the balance back above zero only after 500 s.
    limiters = [RedisRateLimiter(link, rate=1e-3, burst_s=1.0) for link in links]
    admitted_per_trial, balances = [], []
    for _ in range(TRIALS):
        client = f"10.9.0.{uuid.uuid4().hex[:6]}"

        def reserve(server: int, caller: int, client: str = client) -> bool:
            try:
                limiters[server].reserve(client, 1.5)
            except RateLimited as refused:
                assert refused.retry_after_s > 0
                return False
            return True

        admitted_per_trial.append(sum(race(reserve)))
        balances.append(round(limiters[0].balance(client), 2))
    assert admitted_per_trial == [1] * TRIALS, admitted_per_trial
    # Every admission was charged: the balance is what one run's charge left.
    assert balances == [-0.5] * TRIALS, balances


def test_servers_enqueueing_one_clients_runs_at_once_never_pass_its_share(links, redis_server):
    # One client alone may have 4 runs waiting (max_queue_per_client); no worker listens on
    # this version's lanes, so the runs stay queued while 24 callers try to add theirs.
    bound = 4
    version = f"race{uuid.uuid4().hex[:12]}"
    pools = [
        RemotePool(link, max_queue=64, version=version, max_queue_per_client=bound)
        for link in links
    ]
    client = "10.9.1.1"
    lane = pools[0]._queues[lane_of(client, version)]
    admitted_per_trial, queued_per_trial = [], []
    for _ in range(TRIALS):
        lane.empty()

        def enqueue(server: int, caller: int) -> bool:
            request = {
                "job_id": uuid.uuid4().hex,
                "topic": "tiny-demo",
                "experiment": "sleepy",
                "time_limit_s": 5.0,
            }
            try:
                pools[server]._enqueue(request, lane.name)
            except Overloaded as refused:
                assert refused.status == 503 and refused.retry_after_s >= 1
                return False
            return True

        admitted_per_trial.append(sum(race(enqueue)))
        queued_per_trial.append(redis_server.client.llen(lane.key))
    assert admitted_per_trial == [bound] * TRIALS, admitted_per_trial
    assert queued_per_trial == admitted_per_trial  # each admitted run is on the lane, no more
