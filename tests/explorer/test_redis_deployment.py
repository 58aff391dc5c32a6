"""A several-machine deployment on loopback: a real redis-server, two servers, remote workers.

The servers are the explorer on uvicorn in threads (``conftest.serving``, with
whylab's server settings) configured with ``redis_url``; the workers are real
``whylab worker`` subprocesses. Clients are told apart by ``X-Forwarded-For``
from a trusted proxy (127.0.0.1), as behind a load balancer.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

import whylab
from whylab.cli import main
from whylab.explorer.runs.cache import record_checksum
from whylab.explorer.runs.errors import WorkerLost, WorkerUnavailable
from whylab.explorer.runs.redis.queue import (
    ALIVE_TTL_S,
    WORKER_ALIVE_TTL_S,
    decode_answer,
    encode_answer,
    lane_names,
    lane_of,
    live_workers,
    outcome_answer,
    workers_by_version,
)
from whylab.explorer.runs.workers import Outcome

REPO = Path(__file__).resolve().parents[2]
FIXTURE_TOPICS = Path(__file__).resolve().parent / "fixture_topics"
API = "/api/topics/tiny-demo/experiments"
SLACK_S = 15.0  # a loaded test machine is slow; the bounds below are the code's, plus this

needs_redis = pytest.mark.skipif(
    shutil.which("redis-server") is None,
    reason="redis-server is not installed (Debian package redis-server; .ci/run installs it)",
)
redis = pytest.importorskip("redis", reason="the redis extra is not installed")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A throwaway redis-server on a free loopback port, without persistence."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = _free_port()
        self.process: subprocess.Popen | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(500):
            try:
                if self.client.ping():
                    return
            except redis.exceptions.ConnectionError:
                time.sleep(0.01)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


def start_whylab(argv: list[str], log_path: Path, **env: str) -> subprocess.Popen:
    """``python -m whylab.cli ARGV`` from this checkout, in a session of its own, logged."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "whylab.cli", *argv],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


class Fleet:
    """``whylab worker`` subprocesses against one Redis."""

    def __init__(self, url: str, logs: Path):
        self.url = url
        self.logs = logs
        self.processes: list[subprocess.Popen] = []

    def alive(self) -> list[subprocess.Popen]:
        return [p for p in self.processes if p.poll() is None]

    def ensure(self, count: int, client) -> None:
        """Exactly ``count`` workers running, registered with RQ and saying they are alive."""
        for extra in self.alive()[count:]:
            self.stop(extra)
        while len(self.alive()) < count:
            self.processes.append(
                start_whylab(
                    ["worker", "--redis-url", self.url, "--topics-dir", str(FIXTURE_TOPICS),
                     "--memory-limit-mb", "1024", "--log-level", "warning"],
                    self.logs / f"worker-{len(self.processes)}.log",
                )  # fmt: skip
            )
        # a worker registers once its pool is up: its fork server compiles the numba
        # kernels first (up to ~40 s with a cold numba cache on a loaded machine)
        deadline = time.monotonic() + 120
        while len(live_workers(client)) < count:
            assert time.monotonic() < deadline, "the workers did not register with RQ"
            time.sleep(0.05)

    def stop(self, process: subprocess.Popen) -> None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        _kill_group(process)

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                self.stop(process)
            _kill_group(process)


def _kill_group(process: subprocess.Popen) -> None:
    """Also stop what a worker left behind (its fork server and experiment processes)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, module_live_server) -> Iterator[dict]:
    """Redis, two servers (A and B) and a fleet of workers, shared by this module's tests."""
    folder = tmp_path_factory.mktemp("redis")
    server = RedisServer(folder)
    server.start()
    fleet = Fleet(server.url, folder)
    with ExitStack() as stack:
        stack.callback(server.stop)
        stack.callback(fleet.close)
        settings = {"redis_url": server.url, "trusted_proxies": ("127.0.0.1",)}
        a, b = module_live_server(**settings), module_live_server(**settings)
        yield {"redis": server, "fleet": fleet, "a": a, "b": b}


def get(live, path: str, client: str = "10.0.0.1", timeout: float = 60.0) -> httpx.Response:
    return httpx.get(live.base + path, headers={"X-Forwarded-For": client}, timeout=timeout)


def result_keys(client) -> set[bytes]:
    return set(client.scan_iter("whylab:result:*"))


# ------------------------------------------------------------ without a Redis server


def test_a_bad_redis_url_is_one_line_and_exit_code_2(capsys):
    for argv in (
        ["serve", "--redis-url", "http://localhost:6379"],
        ["serve", "--redis-url", "redis://"],
        ["serve", "--redis-url", "redis://host:99999/0"],
        ["worker", "--redis-url", "redis://host/zero"],
    ):
        with pytest.raises(SystemExit) as stopped:
            main(argv)
        assert stopped.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--redis-url" in err, err


def test_a_bad_url_in_the_environment_is_refused_too(capsys, monkeypatch):
    monkeypatch.setenv("WHYLAB_REDIS_URL", "localhost:6379")
    with pytest.raises(SystemExit) as stopped:
        main(["serve"])
    assert stopped.value.code == 2
    assert "redis://" in capsys.readouterr().err


def test_a_worker_needs_a_redis_url(capsys, monkeypatch):
    monkeypatch.delenv("WHYLAB_REDIS_URL", raising=False)
    assert main(["worker"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--redis-url" in err


def test_answers_are_checked_and_lanes_are_the_same_everywhere():
    outcome = Outcome({"x": 1}, 0.5, 0.4, "a worker's CPU")
    text = encode_answer("job1", outcome_answer(outcome))
    assert decode_answer("job1", text.encode()) == outcome
    with pytest.raises(WorkerUnavailable):  # moved to another job
        decode_answer("job2", text.encode())
    with pytest.raises(WorkerUnavailable):  # one digit changed
        decode_answer("job1", text.replace("0.5", "0.6").encode())
    # An answer computed by code of another fingerprint is refused, never cached as this one's.
    signed = encode_answer("job1", outcome_answer(outcome, "a" * 16))
    assert decode_answer("job1", signed.encode(), "a" * 16) == outcome
    with pytest.raises(WorkerUnavailable, match="result of other code"):
        decode_answer("job1", signed.encode(), "b" * 16)
    assert lane_of("10.0.0.1", "v1") == lane_of("10.0.0.1", "v1") in lane_names("v1")
    assert len({lane_of(f"10.0.0.{i}", "v1") for i in range(64)}) > 1
    # Runs of other code go to other lanes, and each lane says whose runs it holds.
    from whylab.explorer.runs.redis.queue import version_of_lane

    assert set(lane_names("v1")).isdisjoint(lane_names("v2"))
    assert {version_of_lane(lane) for lane in lane_names("ab12")} == {"ab12"}
    assert version_of_lane("default") is None


@needs_redis
def test_a_wrong_password_is_reported_as_such_not_as_an_outage(tmp_path, caplog):
    from whylab.explorer.runs.redis.link import RedisLink

    port = _free_port()
    guarded = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp_path), "--requirepass", "right"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        right = redis.Redis(host="127.0.0.1", port=port, password="right", socket_timeout=5)
        for _ in range(500):
            try:
                if right.ping():
                    break
            except redis.exceptions.ConnectionError:
                time.sleep(0.01)
        link = RedisLink(f"redis://:wrong@127.0.0.1:{port}/0")
        with caplog.at_level(logging.WARNING, logger="whylab.explorer.runs.redis.link"):
            assert link.ping() is False
        assert "refuses the credentials" in caplog.text and "cannot be reached" not in caplog.text
        assert "wrong" not in caplog.text  # the password itself is never logged
        refusal = link.unavailable()
        assert refusal.status == 503 and "credentials" in refusal.message
        link.sync.close()
    finally:
        guarded.terminate()
        guarded.wait(timeout=10)


# ------------------------------------------------------------ the deployment


@needs_redis
def test_a_run_computed_for_one_server_is_served_by_the_other_from_the_shared_cache(deployment):
    deployment["fleet"].ensure(1, deployment["redis"].client)
    first = get(deployment["a"], f"{API}/mean?n=321&seed=4")
    assert first.status_code == 200, first.text
    assert first.json()["cached"] is False
    second = get(deployment["b"], f"{API}/mean?n=321&seed=4")
    assert second.status_code == 200
    assert second.json()["cached"] is True
    computed, cached = first.json(), second.json()
    del computed["cached"], cached["cached"]
    assert cached == computed
    assert len(result_keys(deployment["redis"].client)) >= 1


@needs_redis
def test_runs_from_two_clients_are_served_in_turn(deployment):
    redis_client = deployment["redis"].client
    deployment["fleet"].ensure(1, redis_client)  # one worker: the order of runs is the order taken
    # bob's lane comes after alice's in the workers' list, so a worker that served the
    # lanes in a fixed order (or one line for all) would take all of alice's runs first
    version = deployment["a"].app.state.pool.version
    alice = next(
        f"10.0.0.{i}" for i in range(1, 255)
        if lane_of(f"10.0.0.{i}", version) != lane_names(version)[-1]
    )  # fmt: skip
    bob = next(
        f"10.0.1.{i}" for i in range(1, 255)
        if lane_of(f"10.0.1.{i}", version) > lane_of(alice, version)
    )  # fmt: skip
    finished: list[str] = []
    lock = threading.Lock()

    def run(name: str, client: str, seconds: float) -> int:
        response = get(deployment["a"], f"{API}/sleepy?seconds={seconds}", client=client)
        with lock:
            finished.append(name)
        return response.status_code

    with ThreadPoolExecutor(max_workers=4) as threads:
        # 0.8 s each (the sleepy limit is 1 s): bob's request must reach the lane while
        # a1 runs; a 0.3 s run ended first once on a loaded machine (a1, a2, b1, a3).
        runs = [threads.submit(run, f"a{i}", alice, 0.8 + i / 100) for i in (1, 2, 3)]
        # alice's first run is in the worker and her other two wait in her lane ...
        lane = f"rq:queue:{lane_of(alice, version)}"
        deadline = time.monotonic() + 30
        while not (redis_client.llen(lane) == 2 and any(redis_client.scan_iter("whylab:alive:*"))):
            assert time.monotonic() < deadline, "alice's runs were not queued"
            time.sleep(0.01)
        # ... when bob asks for one run: it is taken next, not after all of hers.
        runs.append(threads.submit(run, "b1", bob, 0.3))
        assert [r.result(timeout=60) for r in runs] == [200] * 4
    # first come, first served would finish bob's run last; in turn it is second
    assert finished[1] == "b1", finished


@needs_redis
def test_two_hostile_clients_on_server_a_leave_a_reader_on_server_b_its_runs(deployment):
    redis_client = deployment["redis"].client
    deployment["fleet"].ensure(1, redis_client)
    version = deployment["a"].app.state.pool.version
    lanes: dict[str, str] = {}
    for index in range(1, 255):  # three clients on three lanes
        lanes.setdefault(lane_of(f"10.0.5.{index}", version), f"10.0.5.{index}")
    hostile_a, hostile_b, reader = list(lanes.values())[:3]

    def push(client: str, index: int) -> int:
        url = f"{API}/sleepy?seconds=0.3{index:02d}"  # distinct: no sharing, no cache
        return get(deployment["a"], url, client=client).status_code

    def hostile_lanes() -> list[int]:
        return [redis_client.llen(f"rq:queue:{lane_of(c, version)}") for c in hostile]

    hostile = (hostile_a, hostile_b)
    with ThreadPoolExecutor(max_workers=24) as threads:
        pushed = [
            threads.submit(push, client, 10 * n + i)
            for n, client in enumerate(hostile)
            for i in range(10)
        ]
        # The reader comes once the queue has turned a hostile run away (a lane at its
        # share: 16 // 3 = 5 of the 16 places) while both hostile lanes still hold runs.
        # (Waiting for both lanes at 5 raced the worker: it takes a 0.3 s run while the
        # last pushes arrive, so the sum peaked at 9 once on a loaded machine.)
        deadline = time.monotonic() + 30
        while not (
            any(f.done() and f.result() == 503 for f in pushed) and all(hostile_lanes())
        ):
            assert time.monotonic() < deadline, f"no hostile run was refused: {hostile_lanes()}"
            time.sleep(0.02)
        mine = [
            get(deployment["b"], f"{API}/sine?seed={i + 731}", client=reader).status_code
            for i in range(3)
        ]
        statuses = [future.result(timeout=120) for future in pushed]
    assert mine == [200, 200, 200], mine
    assert set(statuses) <= {200, 503}, statuses  # a hostile run ran or was turned away


@needs_redis
def test_a_worker_killed_mid_run_ends_that_request_with_a_clear_error_and_the_next_run_works(
    deployment,
):
    redis_client = deployment["redis"].client
    fleet = deployment["fleet"]
    fleet.ensure(2, redis_client)
    with ThreadPoolExecutor(max_workers=1) as thread:
        pending = thread.submit(get, deployment["a"], f"{API}/sleepy?seconds=0.95", "10.0.2.1")
        deadline = time.monotonic() + 30
        while True:
            beats = [redis_client.get(key) for key in redis_client.scan_iter("whylab:alive:*")]
            beats = [beat for beat in beats if beat]
            if beats:
                break
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.005)
        pid = int(beats[0].split()[0])
        os.kill(pid, signal.SIGKILL)
        # time limit 1 s; the heartbeat outlives the worker by ALIVE_TTL_S; plus the slack
        response = pending.result(timeout=1.0 + ALIVE_TTL_S + SLACK_S)
    assert response.status_code == 503, response.text
    assert response.json()["detail"] == WorkerLost().message
    assert response.headers["Retry-After"] == "1"
    assert any(p.pid == pid and p.poll() is not None for p in fleet.processes)
    after = get(deployment["a"], f"{API}/sleepy?seconds=0.05", client="10.0.2.1")
    assert after.status_code == 200, after.text
    assert after.json()["passed"]


@needs_redis
def test_a_remote_worker_enforces_the_time_and_memory_limits(deployment):
    deployment["fleet"].ensure(1, deployment["redis"].client)  # workers: --memory-limit-mb 1024
    a = deployment["a"]
    overran = get(a, f"{API}/sleepy?seconds=5", client="10.0.4.1")
    assert overran.status_code == 504, overran.text
    assert "time limit of 1 s" in overran.json()["detail"]
    hog = get(a, f"{API}/hog?megabytes=3000", client="10.0.4.1")
    assert hog.status_code == 507, hog.text
    assert "1024 MiB" in hog.json()["detail"]
    assert get(a, f"{API}/hog?megabytes=8", client="10.0.4.1").status_code == 200


@needs_redis
def test_a_clients_cpu_time_budget_is_shared_by_the_servers(deployment):
    deployment["fleet"].ensure(1, deployment["redis"].client)
    a, b = deployment["a"], deployment["b"]
    limiters = [a.app.state.limiter, b.app.state.limiter]
    saved = [(limiter.rate, limiter.burst_s) for limiter in limiters]
    for limiter in limiters:  # one run's smallest charge (0.01 s) empties this budget
        limiter.rate, limiter.burst_s = 1e-4, 0.005
    try:
        assert get(a, f"{API}/mean?n=401", client="10.0.5.1").status_code == 200
        refused = get(b, f"{API}/mean?n=402", client="10.0.5.1")  # the other server
        other = get(b, f"{API}/mean?n=403", client="10.0.5.2")
    finally:
        for limiter, (rate, burst) in zip(limiters, saved, strict=True):
            limiter.rate, limiter.burst_s = rate, burst
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["Retry-After"]) >= 1
    assert other.status_code == 200
    assert get(b, f"{API}/mean?n=401", client="10.0.5.1").json()["cached"]  # cached: free


@needs_redis
def test_a_corrupted_record_in_redis_is_dropped_and_recomputed(deployment, caplog):
    redis_client = deployment["redis"].client
    deployment["fleet"].ensure(1, redis_client)
    before = result_keys(redis_client)
    first = get(deployment["a"], f"{API}/mean?n=222&seed=9")
    assert first.status_code == 200 and first.json()["cached"] is False
    (key,) = result_keys(redis_client) - before
    record = redis_client.hget(key, "record").decode()
    digit = next(i for i, ch in enumerate(record) if ch.isdigit())
    flipped = record[:digit] + str((int(record[digit]) + 1) % 10) + record[digit + 1 :]
    redis_client.hset(key, "record", flipped)
    with caplog.at_level(logging.WARNING, logger="whylab.explorer.runs.redis.cache"):
        again = get(deployment["b"], f"{API}/mean?n=222&seed=9")
    assert again.status_code == 200
    assert again.json()["cached"] is False  # recomputed, not served as it was
    assert "failed its checksum" in caplog.text
    stored, checksum = (v.decode() for v in redis_client.hmget(key, "record", "checksum"))
    assert checksum == record_checksum(key.decode().removeprefix("whylab:result:"), stored)
    assert json.loads(stored)["result"] == json.loads(record)["result"]  # a good record is back
    assert get(deployment["a"], f"{API}/mean?n=222&seed=9").json()["cached"] is True


@needs_redis
def test_when_no_worker_takes_a_run_it_ends_with_503_after_the_queue_wait_and_is_dropped(
    deployment,
):
    redis_client, a = deployment["redis"].client, deployment["a"]
    fleet = deployment["fleet"]
    fleet.ensure(1, redis_client)
    pool = a.app.state.pool
    (worker,) = fleet.alive()
    os.kill(worker.pid, signal.SIGSTOP)  # registered for its version, but takes nothing
    pool.queue_wait_s, waited = 1.0, pool.queue_wait_s
    try:
        response = get(a, f"{API}/sleepy?seconds=0.06", client="10.0.3.1", timeout=SLACK_S)
    finally:
        pool.queue_wait_s = waited
        os.kill(worker.pid, signal.SIGCONT)
    assert response.status_code == 503, response.text
    assert "none took this run within 1 s" in response.json()["detail"]
    assert "Retry-After" in response.headers
    assert redis_client.llen(f"rq:queue:{lane_of('10.0.3.1', pool.version)}") == 0


@needs_redis
def test_a_worker_of_other_code_takes_none_of_the_runs_and_the_servers_name_its_version(
    deployment, tmp_path
):
    # The attack of issue #26 (6): one of three workers runs other code. Before runs were
    # queued by version, it took a run, refused it (503) and took the next within 1 ms.
    redis_client, a = deployment["redis"].client, deployment["a"]
    fleet = deployment["fleet"]
    fleet.ensure(2, redis_client)
    stale_topics = tmp_path / "topics"
    shutil.copytree(FIXTURE_TOPICS, stale_topics, ignore=shutil.ignore_patterns("__pycache__"))
    with open(stale_topics / "tiny_demo" / "experiments.py", "a") as source:
        source.write("\n# the same experiments, edited: another version of the code\n")
    stale = start_whylab(
        ["worker", "--redis-url", fleet.url, "--topics-dir", str(stale_topics),
         "--memory-limit-mb", "1024", "--log-level", "warning"],
        tmp_path / "stale-worker.log",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(live_workers(redis_client)) < 3:
            assert time.monotonic() < deadline, "the stale worker did not register with RQ"
            time.sleep(0.05)

        def run(index: int) -> int:
            url = f"{API}/sleepy?seconds=0.05{index:02d}"  # distinct: no sharing, no cache
            return get(a, url, client=f"10.0.7.{index % 6}").status_code

        with ThreadPoolExecutor(max_workers=6) as threads:
            statuses = list(threads.map(run, range(30)))
        refused = statuses.count(503)
        logging.getLogger(__name__).warning("30 runs, one stale worker of 3: %d 503", refused)
        assert statuses == [200] * 30, f"{refused} of 30 runs answered 503: {statuses}"
        assert "refused a run" not in (tmp_path / "stale-worker.log").read_text()

        # The server says which versions the connected workers run.
        from whylab.explorer.content.topics import load_registry
        from whylab.explorer.runs.redis.queue import code_version

        stale_version = code_version(load_registry(stale_topics))
        pool = a.app.state.pool
        assert stale_version != pool.version
        banner = pool.describe()
        assert f"version {pool.version} (" in banner, banner
        assert f"1 of version {stale_version}" in banner, banner
        # With only the stale worker left, a run none takes says which code the workers run.
        fleet.ensure(0, redis_client)
        pool.queue_wait_s, waited = 1.0, pool.queue_wait_s
        try:
            response = get(a, f"{API}/sleepy?seconds=0.0601", client="10.0.7.9", timeout=SLACK_S)
        finally:
            pool.queue_wait_s = waited
        assert response.status_code == 503, response.text
        assert f"{stale_version} (1)" in response.json()["detail"], response.json()
    finally:
        fleet.stop(stale)


def test_a_worker_refuses_a_run_of_another_version_of_a_topic(fixture_registry):
    from whylab.explorer.runs.errors import OtherVersion
    from whylab.explorer.runs.redis.link import RedisLink
    from whylab.explorer.runs.redis.worker import Runner

    topic = fixture_registry.get("tiny-demo")
    runner = Runner(RedisLink("redis://127.0.0.1:1/0"), fixture_registry, 0, "test")
    request = {
        "topic": "tiny-demo",
        "experiment": "mean",
        "params": {},
        "time_limit_s": 1.0,
        "source_hash": topic.source_hash,
        "engine_version": whylab.__version__,
    }
    assert runner.job_for(request).folder == str(topic.folder)
    # A control run's control travels with the request (none: a real run).
    assert runner.job_for(request).control == ""
    assert runner.job_for({**request, "control": "biased-samples"}).control == "biased-samples"
    for change in (
        {"source_hash": "0" * 16},
        {"engine_version": "0.0.0"},
        {"experiment": "nope"},
        {"topic": "nope"},
    ):
        with pytest.raises(OtherVersion) as refused:
            runner.job_for({**request, **change})
        assert refused.value.status == 503


@needs_redis
def test_when_rq_stops_a_job_itself_the_server_gets_a_timeout_answer(deployment):
    """RQ's own job timeout is the backstop behind the pool's; its callback still answers."""
    from rq.timeouts import JobTimeoutException

    from whylab.explorer.runs.errors import RemoteFailure
    from whylab.explorer.runs.redis.worker import report_failure

    redis_client = deployment["redis"].client
    request = {
        "job_id": "backstop",
        "answer_key": "whylab:answer:backstop",
        "alive_key": "whylab:alive:backstop",
        "time_limit_s": 1.0,
    }
    redis_client.set(request["alive_key"], "1 test", ex=60)

    class FakeJob:
        args = (request,)

    report_failure(FakeJob(), redis_client, JobTimeoutException, JobTimeoutException(), None)
    (raw,) = redis_client.lrange(request["answer_key"], 0, -1)
    with pytest.raises(RemoteFailure) as failure:
        decode_answer("backstop", raw)
    assert failure.value.status == 504
    assert not redis_client.exists(request["alive_key"])


# ------------------------------------------------------------ runs in flight across servers


def _jobs_enqueued(deployment) -> int:
    return sum(deployment[name].app.state.pool.stats.jobs for name in ("a", "b"))


@needs_redis
def test_a_run_asked_of_two_servers_at_once_is_computed_once_and_both_get_its_answer(
    deployment,
):
    redis_client = deployment["redis"].client
    deployment["fleet"].ensure(2, redis_client)  # two workers: a second job would run at once
    a, b = deployment["a"], deployment["b"]
    jobs_before = _jobs_enqueued(deployment)
    joined_before = sum(s.app.state.service.stats.joined_elsewhere for s in (a, b))
    path = f"{API}/sleepy?seconds=0.6"
    with ThreadPoolExecutor(max_workers=2) as threads:
        asked = [threads.submit(get, a, path, "10.0.6.1"), threads.submit(get, b, path, "10.0.6.2")]
        first, second = (answer.result(timeout=60) for answer in asked)
    assert first.status_code == second.status_code == 200, (first.text, second.text)
    # Neither came from the cache: the two requests overlapped, and one waited for the other.
    assert first.json()["cached"] is second.json()["cached"] is False
    assert first.json() == second.json()
    assert _jobs_enqueued(deployment) - jobs_before == 1
    assert sum(s.app.state.service.stats.joined_elsewhere for s in (a, b)) == joined_before + 1
    assert not any(redis_client.scan_iter("whylab:flight:*"))  # the claim was released


@needs_redis
def test_a_lasting_failure_of_a_claimed_run_is_the_answer_of_the_servers_waiting_for_it(
    deployment,
):
    deployment["fleet"].ensure(2, deployment["redis"].client)
    a, b = deployment["a"], deployment["b"]
    jobs_before = _jobs_enqueued(deployment)
    path = f"{API}/sleepy?seconds=1.4"  # past its 1 s limit: 504
    with ThreadPoolExecutor(max_workers=2) as threads:
        asked = [threads.submit(get, a, path, "10.0.6.3"), threads.submit(get, b, path, "10.0.6.4")]
        first, second = (answer.result(timeout=60) for answer in asked)
    assert first.status_code == second.status_code == 504, (first.text, second.text)
    assert first.json()["detail"] == second.json()["detail"]
    assert _jobs_enqueued(deployment) - jobs_before == 1


@needs_redis
def test_when_the_server_computing_a_run_dies_a_server_waiting_for_it_takes_it_over(
    deployment, tmp_path
):
    from whylab.explorer.runs.redis.flights import CLAIM_TTL_S

    redis_client = deployment["redis"].client
    deployment["fleet"].ensure(2, redis_client)
    b = deployment["b"]
    port = _free_port()
    claimer = start_whylab(
        ["serve", "--redis-url", deployment["redis"].url, "--port", str(port),
         "--topics-dir", str(FIXTURE_TOPICS), "--no-warm", "--log-level", "warning"],
        tmp_path / "claimer.log",
        WHYLAB_CACHE_DIR=str(tmp_path),
    )  # fmt: skip
    try:
        claimer_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(claimer_url + "/api/topics", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert claimer.poll() is None and time.monotonic() < deadline, "no claimer server"
            time.sleep(0.1)
        taken_over = b.app.state.service.stats.taken_over
        path = f"{API}/sleepy?seconds=0.7"
        with ThreadPoolExecutor(max_workers=2) as threads:
            threads.submit(httpx.get, claimer_url + path, timeout=60)  # its answer never comes
            deadline = time.monotonic() + 30
            while not any(redis_client.scan_iter("whylab:flight:*")):
                assert time.monotonic() < deadline, "the claimer never claimed the run"
                time.sleep(0.005)
            waiting = threads.submit(get, b, path, "10.0.7.1")
            while not b.app.state.service._in_flight:  # B is waiting for the claimer's run
                assert time.monotonic() < deadline and not waiting.done(), waiting
                time.sleep(0.005)
            os.killpg(claimer.pid, signal.SIGKILL)
            claimer.wait(timeout=10)
            # the claim expires, B claims the run and computes it (1 s limit), plus the slack
            response = waiting.result(timeout=CLAIM_TTL_S + 1.0 + SLACK_S)
    finally:
        _kill_group(claimer)
        claimer.wait(timeout=10)
    assert response.status_code == 200, response.text
    assert response.json()["passed"] and response.json()["cached"] is False
    assert b.app.state.service.stats.taken_over == taken_over + 1


@needs_redis
def test_a_claim_is_touched_only_by_its_owner_and_a_new_claim_forgets_an_old_failure(
    deployment,
):
    from whylab.explorer.runs.errors import ExperimentTimeout
    from whylab.explorer.runs.redis.flights import SharedFlights
    from whylab.explorer.runs.redis.link import RedisLink

    link = RedisLink(deployment["redis"].url)
    flights = SharedFlights(link, claim_ttl_s=0.3, renew_s=0.1)
    try:
        mine = flights.claim("k1")
        assert mine and flights.claim("k1") is None  # taken: the second asker waits
        time.sleep(0.4)  # never renewed: it expired (its server died)
        assert flights.state("k1") == (False, None)
        theirs = flights.claim("k1")
        assert theirs and theirs != mine
        assert not flights.renew("k1", mine)  # a stalled first owner cannot extend it ...
        flights.release("k1", mine, ExperimentTimeout(1.0))  # ... nor release it
        assert flights.state("k1") == (True, None)
        flights.release("k1", theirs, ExperimentTimeout(1.0))
        claimed, failure = flights.state("k1")
        assert not claimed and failure is not None and failure.status == 504
        again = flights.claim("k1")  # a new run of it: the old failure is history
        assert again and flights.state("k1") == (True, None)
        flights.release("k1", again)
        assert flights.state("k1") == (False, None)
    finally:
        link.sync.close()


# ------------------------------------------------------------ Redis off the event loop


@needs_redis
def test_a_redis_that_stops_answering_holds_up_runs_only_not_other_requests(
    tmp_path, live_server
):
    """SIGSTOP: connections are accepted but never answered, so each call waits its timeout."""
    from whylab.explorer.runs.redis.link import SOCKET_TIMEOUT_S

    server = RedisServer(tmp_path)
    server.start()
    try:
        live = live_server(redis_url=server.url, trusted_proxies=("127.0.0.1",))
        assert get(live, "/api/topics").status_code == 200
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            with ThreadPoolExecutor(max_workers=1) as thread:
                started = time.monotonic()
                run = thread.submit(get, live, f"{API}/sleepy?seconds=0.07", "10.0.8.1")
                time.sleep(0.3)  # the run is on its way to the silent Redis
                asked = time.monotonic()
                topics = get(live, "/api/topics", timeout=60)
                answered_in = time.monotonic() - asked
                run_still_waiting = not run.done()
                stalled = run.result(timeout=SOCKET_TIMEOUT_S * 3 + SLACK_S)
                run_took = time.monotonic() - started
            # Redis is known to be down now: a topic page renders at once, its runs refused.
            asked = time.monotonic()
            page = get(live, "/en/topics/tiny-demo", timeout=60)
            page_in = time.monotonic() - asked
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
    finally:
        server.stop()
    assert topics.status_code == 200 and topics.json()
    assert run_still_waiting, "the topic list was answered only after the stalled run"
    assert answered_in < SOCKET_TIMEOUT_S / 2, answered_in
    assert stalled.status_code == 503, stalled.text
    assert "Retry-After" in stalled.headers
    assert run_took >= SOCKET_TIMEOUT_S * 0.9  # the run itself did wait for the timeout
    assert page.status_code == 200
    assert page_in < SOCKET_TIMEOUT_S / 2, page_in


# ------------------------------------------------------------ whylab worker --workers N


def test_a_bad_number_of_workers_is_one_line_and_exit_code_2(capsys):
    for bad in ("0", "-1", "257", "two", "1.5"):
        with pytest.raises(SystemExit) as stopped:
            main(["worker", "--redis-url", "redis://127.0.0.1:1/0", "--workers", bad])
        assert stopped.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--workers" in err, err


def _beats(client) -> set[bytes]:
    return {beat for key in client.scan_iter("whylab:alive:*") if (beat := client.get(key))}


def _parent_of(pid: int) -> int | None:
    try:  # /proc/PID/stat: "pid (name) state ppid ..."; the name may hold spaces
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _registered_children(client, parent: int) -> set[str]:
    """The names of the RQ workers that are child processes of ``parent``.

    (A worker SIGKILLed by an earlier test stays registered until its key expires.)
    """
    from rq import Worker

    return {w.name for w in Worker.all(connection=client) if _parent_of(w.pid) == parent}


@needs_redis
def test_a_worker_killed_with_sigkill_is_no_longer_counted_once_its_beat_stops(deployment):
    # Issue #26: RQ lists a killed worker until its key expires (8 minutes by default), so
    # the banner and the "which versions the workers run" answer counted dead workers.
    from rq import Worker

    redis_client, fleet = deployment["redis"].client, deployment["fleet"]
    pool = deployment["a"].app.state.pool
    fleet.ensure(2, redis_client)

    def ours() -> int:
        return workers_by_version(redis_client).get(pool.version, 0)

    deadline = time.monotonic() + WORKER_ALIVE_TTL_S + SLACK_S  # a worker killed earlier
    while ours() != 2:
        assert time.monotonic() < deadline, workers_by_version(redis_client)
        time.sleep(0.2)
    assert "(2 workers of this version connected now" in pool.describe()
    victim = fleet.alive()[0]
    (name,) = [w.name for w in Worker.all(connection=redis_client) if w.pid == victim.pid]
    _kill_group(victim)  # SIGKILL: the worker cannot unregister
    victim.wait(timeout=30)
    deadline = time.monotonic() + WORKER_ALIVE_TTL_S + SLACK_S
    while "(1 workers of this version connected now" not in (banner := pool.describe()):
        assert time.monotonic() < deadline, banner
        time.sleep(0.2)
    # RQ lists the dead worker still: only its own beat tells it from a live one.
    assert name in {w.name for w in Worker.all(connection=redis_client)}
    assert ours() == 1


@needs_redis
def test_one_worker_command_runs_n_worker_processes_and_sigterm_stops_them_after_their_runs(
    deployment, tmp_path
):
    from rq import Worker

    redis_client = deployment["redis"].client
    deployment["fleet"].ensure(0, redis_client)
    a = deployment["a"]
    command = start_whylab(
        ["worker", "--workers", "2", "--redis-url", deployment["redis"].url,
         "--topics-dir", str(FIXTURE_TOPICS), "--memory-limit-mb", "1024", "--log-level",
         "warning"],
        tmp_path / "workers.log",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120  # each worker's fork server compiles the kernels first
        while len(names := _registered_children(redis_client, command.pid)) < 2:
            assert command.poll() is None and time.monotonic() < deadline, "no workers"
            time.sleep(0.05)
        with ThreadPoolExecutor(max_workers=2) as threads:
            # two runs at once: each worker process takes one
            runs = [
                threads.submit(get, a, f"{API}/sleepy?seconds={s}", f"10.0.9.{i}")
                for i, s in ((1, 0.51), (2, 0.52))
            ]
            seen: set[bytes] = set()
            while len(seen) < 2 and not all(run.done() for run in runs):
                seen |= _beats(redis_client)
                time.sleep(0.005)
            assert [run.result(timeout=60).status_code for run in runs] == [200, 200]
        pids = {int(beat.split()[0]) for beat in seen}
        assert len(pids) == 2, seen  # two processes ran them, at the same time

        with ThreadPoolExecutor(max_workers=1) as thread:
            in_hand = thread.submit(get, a, f"{API}/sleepy?seconds=0.53", "10.0.9.3")
            while not _beats(redis_client):
                assert not in_hand.done() and time.monotonic() < deadline, in_hand
                time.sleep(0.005)
            command.send_signal(signal.SIGTERM)
            answer = in_hand.result(timeout=60)
        assert command.wait(timeout=60) == 0
    finally:
        _kill_group(command)
        command.wait(timeout=10)
    # RQ's warm shutdown: the run in hand finished and was answered before the workers left
    assert answer.status_code == 200, answer.text
    assert answer.json()["passed"]
    assert not names & {w.name for w in Worker.all(connection=redis_client)}  # unregistered
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# ------------------------------------------------------------ last: Redis restarted empty


@needs_redis
def test_redis_stopped_mid_service_degrades_to_503_and_recovers(deployment, caplog):
    """Last in this module: it restarts Redis empty."""
    server, a = deployment["redis"], deployment["a"]
    deployment["fleet"].ensure(1, server.client)
    a.app.state.pool.link.retry_s = 0.5  # retry Redis soon after a failure (default 5 s)
    server.stop()
    with caplog.at_level(logging.WARNING, logger="whylab.explorer.runs.redis.link"):
        for seconds in (0.01, 0.02, 0.03):
            response = get(a, f"{API}/sleepy?seconds={seconds}", timeout=SLACK_S)
            assert response.status_code == 503, response.text
            assert int(response.headers["Retry-After"]) >= 1
            time.sleep(0.6)
        page = get(a, "/en/topics/tiny-demo", timeout=60)
        assert page.status_code == 200
    outages = [r for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(outages) == 1, [r.getMessage() for r in outages]

    server.start()  # empty, on the same port: workers reconnect, runs work again
    deadline = time.monotonic() + 60
    with caplog.at_level(logging.WARNING, logger="whylab.explorer.runs.redis.link"):
        while True:
            response = get(a, f"{API}/sleepy?seconds=0.04", timeout=60)
            if response.status_code == 200:
                break
            assert response.status_code == 503, response.text
            assert time.monotonic() < deadline, "runs did not come back after Redis did"
            time.sleep(0.3)
    assert "reachable again" in caplog.text


@needs_redis
def test_after_a_redis_restart_under_load_no_run_fails_once_it_answers(deployment):
    """Also last: Redis restarts empty while two servers take runs; workers register again."""
    from rq import Worker

    server, a, b = deployment["redis"], deployment["a"], deployment["b"]
    deployment["fleet"].ensure(1, server.client)
    answers: list[tuple[float, int]] = []
    stop = threading.Event()

    def load() -> None:
        for index in range(400):  # bounded in count and, below, in time
            if stop.is_set():
                return
            live = (a, b)[index % 2]
            response = get(live, f"{API}/mean?n={1000 + index}&seed=5", timeout=60)
            answers.append((time.monotonic(), response.status_code))

    with ThreadPoolExecutor(max_workers=2) as threads:
        loads = [threads.submit(load) for _ in range(2)]
        time.sleep(1.0)
        server.stop()
        time.sleep(1.0)
        server.start()  # empty, on the same port
        back_at = time.monotonic()  # start() returns once it answers PING
        deadline = back_at + 30
        while Worker.count(connection=server.client) < 1:
            assert time.monotonic() < deadline, "the worker did not register again"
            time.sleep(0.05)
        time.sleep(4.0)  # runs keep coming through both servers
        stop.set()
        for future in loads:
            future.result(timeout=120)
    after = [status for at, status in answers if at > back_at + 1.0]
    assert len(after) >= 5 and set(after) == {200}, after
    assert "1 workers of this version connected" in a.app.state.pool.describe()


@needs_redis
def test_a_measurement_made_through_one_server_is_shown_by_the_other(deployment):
    deployment["fleet"].ensure(1, deployment["redis"].client)
    a, b = deployment["a"], deployment["b"]
    fragment = "/en/topics/tiny-demo/experiments/clock/result?n=777"
    assert "No measurement at these parameters yet" in get(a, fragment).text
    queued = httpx.post(
        a.base + "/api/topics/tiny-demo/experiments/clock/timing-runs?n=777",
        headers={"X-Forwarded-For": "10.0.6.1"},
        timeout=60,
    )
    assert queued.status_code == 202, queued.text
    run, deadline = f"/api/timing-runs/{queued.json()['id']}", time.monotonic() + 60
    while (state := get(a, run).json())["state"] in {"queued", "running"}:
        assert time.monotonic() < deadline, "the measurement did not finish"
        time.sleep(0.05)
    assert state["state"] == "done", state
    shown_by_a = get(a, fragment).text
    label = shown_by_a[shown_by_a.index("live measurement") :].split("</span>")[0]
    assert label in get(b, fragment).text  # read from the shared store: the same one
