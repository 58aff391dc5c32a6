"""Timing runs are held to every limit ordinary runs are: budget, charging, dropping, owners."""

from __future__ import annotations

import asyncio
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from whylab.explorer.experiment import Result
from whylab.explorer.runs.service import RunAnswer, RunRecord
from whylab.explorer.runs.timing import NotYourRun, TimingCancelled, TimingQueue
from whylab.explorer.runs.workers import WorkerUnavailable

API = "/api/topics/tiny-demo/experiments"
QUEUE = f"{API}/clock/timing-runs"


def test_a_client_out_of_budget_gets_429_from_timing_runs_too(make_client):
    # 0.02 CPU-seconds of budget, refilling at 1 ms per second; each run costs >= 10 ms.
    client = make_client(rate_burst=0.02, rate_per_s=0.001)
    statuses = [client.get(f"{API}/sine?cycles={i + 1}").status_code for i in range(5)]
    assert 429 in statuses, statuses
    measured = client.get(f"{API}/clock", params={"n": "400"})
    assert measured.status_code == 429 and int(measured.headers["retry-after"]) >= 1
    queued = client.post(QUEUE, params={"n": "401"})
    assert queued.status_code == 429 and int(queued.headers["retry-after"]) >= 1
    form = client.post(
        "/en/topics/tiny-demo/experiments/clock/measure",
        content="clock.n=402",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 429
    assert client.app.state.pool.stats.jobs == statuses.count(200)  # none of the three ran


def from_address(server, address: str) -> httpx.Client:
    """A client whose sockets come from ``address`` (in 127.0.0.0/8, to the 127.0.0.1 server)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=server.base, transport=transport, timeout=60)


def test_a_timing_run_is_charged_to_the_client_who_asked(live_server):
    server = live_server(rate_burst=5, rate_per_s=0.001)
    limiter = server.app.state.limiter
    with from_address(server, "127.0.0.2") as first, from_address(server, "127.0.0.3") as other:
        assert first.get(f"{API}/clock", params={"n": "500"}).status_code == 200
        assert limiter.balance("127.0.0.2") < limiter.burst_s - limiter.min_charge_s / 2
        assert limiter.balance("127.0.0.3") == limiter.burst_s  # the other one paid nothing
        assert other.post(QUEUE, params={"n": "501"}).status_code == 202
        deadline = time.monotonic() + 30
        while limiter.balance("127.0.0.3") == limiter.burst_s and time.monotonic() < deadline:
            time.sleep(0.05)
        assert limiter.balance("127.0.0.3") < limiter.burst_s - limiter.min_charge_s / 2


def test_only_the_client_who_queued_a_run_may_cancel_it(live_server):
    server = live_server(workers=1)
    pool = server.app.state.pool
    with from_address(server, "127.0.0.2") as owner, from_address(server, "127.0.0.3") as reader:
        with ThreadPoolExecutor(4) as background:  # hold the one worker: the run stays queued
            # Four runs of 0.8 s (the sleepy limit is 1 s), on the worker or in its line before
            # the timing runs are queued: one such hold ended on a loaded machine before the
            # state was read, and the run had started.
            busy = [background.submit(owner.get, f"{API}/sleepy?seconds=0.8{i}") for i in range(4)]
            deadline = time.monotonic() + 20
            while not (pool.stats.jobs == 1 and pool.queued == 3) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert pool.stats.jobs == 1 and pool.queued == 3
            blocker = owner.post(QUEUE, params={"n": "649"}).json()
            run = owner.post(QUEUE, params={"n": "650"}).json()
            # Each client is told whether the run is its own: the page shows the cancel
            # button to the owner only, also to a reader who asked for the same run.
            joined = reader.post(QUEUE, params={"n": "650"})
            assert joined.status_code == 202 and joined.json()["id"] == run["id"]
            assert run["yours"] is True and joined.json()["yours"] is False
            seen = reader.get(f"/api/timing-runs/{run['id']}").json()
            assert seen["state"] == "queued" and seen["yours"] is False
            refused = reader.delete(f"/api/timing-runs/{run['id']}")
            assert refused.status_code == 403
            assert "only the client who queued" in refused.json()["detail"]
            mine = owner.get(f"/api/timing-runs/{run['id']}").json()
            assert mine["state"] == "queued" and mine["yours"] is True
            cancelled = owner.delete(f"/api/timing-runs/{run['id']}")
            assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
            assert owner.delete(f"/api/timing-runs/{blocker['id']}").status_code == 200
            assert [held.result().status_code for held in busy] == [200] * 4


def test_timing_runs_whose_clients_left_are_dropped_before_they_run(live_server):
    server = live_server(workers=1)
    pool, timing = server.app.state.pool, server.app.state.timing
    with httpx.Client(base_url=server.base, timeout=60) as client, ThreadPoolExecutor(4) as bg:
        # Four runs of 0.6 s hold the one worker for ~2.4 s: the timing runs wait behind.
        busy = [bg.submit(client.get, f"{API}/sleepy?seconds=0.6{i}") for i in range(4)]
        while not (pool.stats.jobs == 1 and pool.queued == 3):
            time.sleep(0.01)
        # One run in the line (waiting for the worker), followed as the page script does.
        first = client.post(QUEUE, params={"n": "500"}).json()
        leavers = []
        for index in range(6):  # six requests that wait for a measurement, then hang up
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=20)
            sock.sendall(f"GET {API}/clock?n={700 + index} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            leavers.append(sock)
        deadline = time.monotonic() + 20
        while len(timing._waiting) < 6 and time.monotonic() < deadline:
            client.get(f"/api/timing-runs/{first['id']}")
            time.sleep(0.02)
        assert len(timing._waiting) == 6
        for sock in leavers:
            sock.close()
        while time.monotonic() < deadline:
            state = client.get(f"/api/timing-runs/{first['id']}").json()["state"]
            if state == "done" and not timing._waiting and timing._current is None:
                break
            time.sleep(0.05)
        for run in busy:
            run.result()
    assert timing.dropped == 6
    assert pool.stats.jobs == 5  # the sleepy runs and the followed one; none of the six


# ---------------------------------------------------------------- the queue on its own


class FailingService:
    """Every run fails as a lost worker does (503 with Retry-After), after a moment."""

    def __init__(self, failure=None):
        self.failure = failure
        self.started = 0
        self.gate = asyncio.Event()

    async def run(self, topic, experiment, params, client=""):
        self.started += 1
        await self.gate.wait()
        if self.failure is not None:
            raise self.failure
        record = RunRecord(topic.slug, experiment.name, params, "x", Result(), True, False, 0.1)
        return RunAnswer(record, 0.1)


def in_thread(scenario):
    # In a thread of its own: Playwright's sync API may hold an event loop in this one.
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, scenario()).result()


def test_a_failed_timing_run_keeps_its_status_and_retry_after(fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    clock = topic.experiments["clock"]
    lost = WorkerUnavailable("the worker went away")
    lost.retry_after_s = 1.0

    async def scenario():
        service = FailingService(lost)
        line = TimingQueue(service)  # type: ignore[arg-type]
        await line.start()
        waiting = asyncio.create_task(line.measure(topic, clock, {"n": 1}, "a"))
        await asyncio.sleep(0.01)
        service.gate.set()
        with pytest.raises(WorkerUnavailable) as failed:
            await waiting
        assert failed.value.status == 503 and failed.value.retry_after_s == 1.0
        run = next(iter(line._runs.values()))
        assert line.describe(run, "a")["status"] == 503 and run.state == "failed"
        await line.close()

    in_thread(scenario)


def test_the_owner_cancelling_answers_its_waiters_409_and_others_cannot(fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    clock = topic.experiments["clock"]

    async def scenario():
        service = FailingService()
        line = TimingQueue(service)  # type: ignore[arg-type]
        await line.start()
        await line.submit(topic, clock, {"n": 1}, "a")  # running, holds the line
        run = await line.submit(topic, clock, {"n": 2}, "a")
        joined = asyncio.create_task(line.measure(topic, clock, {"n": 2}, "b"))
        await asyncio.sleep(0.01)
        with pytest.raises(NotYourRun):
            line.cancel(run.id, "b")  # joining a run does not make it yours
        assert run.state == "queued"
        assert line.describe(run, "a")["yours"] and not line.describe(run, "b")["yours"]
        line.cancel(run.id, "a")
        with pytest.raises(TimingCancelled) as cancelled:
            await joined
        assert cancelled.value.status == 409
        service.gate.set()
        await line.close()

    in_thread(scenario)


def test_a_run_queued_through_the_api_and_never_asked_about_again_is_dropped(fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    clock = topic.experiments["clock"]

    async def scenario():
        service = FailingService()
        line = TimingQueue(service, abandon_s=0.05)  # type: ignore[arg-type]
        await line.start()
        first = await line.submit(topic, clock, {"n": 1}, "a")
        forgotten = await line.submit(topic, clock, {"n": 2}, "a")
        followed = await line.submit(topic, clock, {"n": 3}, "a")
        await asyncio.sleep(0.1)
        line.poll(followed.id)
        service.gate.set()
        await asyncio.wait_for(followed.finished.wait(), 2)
        assert first.state == "done" and followed.state == "done"
        assert forgotten.state == "cancelled" and line.dropped == 1
        assert service.started == 2
        await line.close()

    in_thread(scenario)


def test_the_openapi_description_documents_what_timing_runs_answer(client):
    paths = client.get("/openapi.json").json()["paths"]
    queue = paths["/api/topics/{slug}/experiments/{name}/timing-runs"]["post"]["responses"]
    for status in ("429", "503"):
        assert "Retry-After" in queue[status]["headers"], status
    assert "403" in paths["/api/timing-runs/{run_id}"]["delete"]["responses"]
    # The run's state, with whether the client asking queued it (so may cancel it).
    state = {"$ref": "#/components/schemas/TimingRun"}
    assert queue["202"]["content"]["application/json"]["schema"] == state
    for method in ("get", "delete"):
        answer = paths["/api/timing-runs/{run_id}"][method]["responses"]["200"]
        assert answer["content"]["application/json"]["schema"] == state, method
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["TimingRun"]["properties"]["yours"]["type"] == "boolean"
    assert "yours" in schemas["TimingRun"]["required"]
    measured = paths[f"{API}/clock"]["get"]["responses"]
    ordinary = paths[f"{API}/sine"]["get"]["responses"]
    assert {"429", "500", "503", "504", "409"} <= set(measured)
    assert "500" in ordinary and "409" not in ordinary  # only a measurement can be cancelled
    assert "Retry-After" in measured["503"]["headers"]
