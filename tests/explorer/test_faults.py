"""Fault injection on the experiment workers: every slot comes back, every request ends.

Each test breaks the machinery the way a flaky machine or an operator would
(a worker killed while idle or mid-run, the fork server stopped, no file
descriptors left when a replacement starts) and checks that the request in hand
gets an answer (a result, 504 or 503) within the pool's stated deadline, and
that the pool is back at full strength afterwards.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import time
from concurrent.futures import ThreadPoolExecutor

from whylab.explorer.runs import workers
from whylab.explorer.runs.workers import Job

API = "/api/topics/tiny-demo/experiments"
SLACK_S = 15.0  # on top of the pool's own deadline: a loaded test machine is slow


def deadline_for(pool, time_limit_s: float) -> float:
    return pool.deadline_s(Job("", "", {}, time_limit_s)) + SLACK_S


def get_within(client, url: str, seconds: float):
    """GET ``url``; fail the test (instead of hanging it) if no answer comes in ``seconds``."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(client.get, url).result(timeout=seconds)


def wait_dead(pid: int) -> None:
    for _ in range(500):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] == "Z":  # a zombie is dead too
                return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not die")


def recovers(client, url: str, pool, tries: int = 20):
    """The first 200 for ``url`` within ``tries`` attempts (503s mean: retry shortly)."""
    for _ in range(tries):
        response = get_within(client, url, deadline_for(pool, 1.0))
        if response.status_code == 200:
            return response
        assert response.status_code == 503, response.text
        time.sleep(0.2)
    raise AssertionError(f"{url} never answered 200")


def test_a_worker_killed_while_idle_is_replaced(make_client):
    client = make_client(workers=1)
    pool = client.app.state.pool
    (pid,) = pool.worker_pids
    os.kill(pid, signal.SIGKILL)
    wait_dead(pid)
    response = recovers(client, f"{API}/sleepy?seconds=0.02", pool)
    assert response.json()["passed"]
    assert len(pool.worker_pids) == 1 and pool.worker_pids != [pid]


def test_a_stopped_fork_server_is_replaced_and_no_request_hangs(make_client):
    client = make_client(workers=2, spawn_timeout_s=1.0)
    pool = client.app.state.pool
    forkserver = workers._forkserver_pid()
    assert forkserver is not None
    os.kill(forkserver, signal.SIGSTOP)
    try:
        # With the fork server stopped, nobody reaps the killed workers or reports
        # their exit: the pool must find out by itself.
        for pid in pool.worker_pids:
            os.kill(pid, signal.SIGKILL)
            wait_dead(pid)
        first = get_within(client, f"{API}/sleepy?seconds=0.03", deadline_for(pool, 1.0))
        assert first.status_code in (200, 503), first.text
        if first.status_code == 503:
            assert int(first.headers["retry-after"]) >= 1
    finally:
        try:
            os.kill(forkserver, signal.SIGCONT)
        except ProcessLookupError:
            pass
    recovers(client, f"{API}/sleepy?seconds=0.04", pool)
    recovers(client, f"{API}/sleepy?seconds=0.05", pool)
    assert pool.stats.forkserver_restarts >= 1
    assert workers._forkserver_pid() not in (None, forkserver)
    assert len(pool.worker_pids) == 2


def test_a_replacement_that_cannot_start_answers_503_and_the_slot_comes_back(
    make_client, monkeypatch
):
    client = make_client(workers=1)
    pool = client.app.state.pool
    real_pipe = pool._context.Pipe
    failures = {"left": 3}

    def pipe_without_descriptors(*args, **kwargs):
        if failures["left"] > 0:
            failures["left"] -= 1
            raise OSError(errno.EMFILE, "Too many open files")
        return real_pipe(*args, **kwargs)

    monkeypatch.setattr(pool._context, "Pipe", pipe_without_descriptors)
    (pid,) = pool.worker_pids
    os.kill(pid, signal.SIGKILL)
    wait_dead(pid)
    busy = get_within(client, f"{API}/sleepy?seconds=0.02", deadline_for(pool, 1.0))
    assert busy.status_code == 503
    assert "no experiment worker is available" in busy.json()["detail"]
    assert int(busy.headers["retry-after"]) >= 1
    response = recovers(client, f"{API}/sleepy?seconds=0.03", pool)
    assert response.json()["passed"]
    assert len(pool.worker_pids) == 1 and pool.stats.spawn_failures >= 1


def test_running_out_of_file_descriptors_during_a_replacement_is_survived(make_client):
    client = make_client(workers=1)
    pool = client.app.state.pool
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    (pid,) = pool.worker_pids
    highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
    fillers: list[int] = []
    resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 2, hard))
    try:
        while True:  # take every free descriptor number below the limit ...
            try:
                fillers.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                break
        os.close(fillers.pop())  # ... but one: too few for a pipe to a new worker
        os.kill(pid, signal.SIGKILL)
        wait_dead(pid)
        starved = get_within(client, f"{API}/sleepy?seconds=0.02", deadline_for(pool, 1.0))
        assert starved.status_code == 503, starved.text
        assert pool.stats.spawn_failures >= 1
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    response = recovers(client, f"{API}/sleepy?seconds=0.03", pool)
    assert response.json()["passed"]
    assert len(pool.worker_pids) == 1


def test_a_worker_killed_from_outside_mid_run_is_not_called_a_memory_overrun(make_client):
    client = make_client(workers=1)
    pool = client.app.state.pool
    (pid,) = pool.worker_pids
    with ThreadPoolExecutor(max_workers=1) as thread:
        running = thread.submit(client.get, f"{API}/sleepy?seconds=0.9")
        for _ in range(500):
            if pool.stats.jobs:
                break
            time.sleep(0.005)
        os.kill(pid, signal.SIGKILL)
        response = running.result(timeout=deadline_for(pool, 1.0))
    assert response.status_code == 503, response.text
    assert "stopped from outside (SIGKILL)" in response.json()["detail"]
    assert pool.stats.memory_kills == 0 and pool.stats.killed == 1
    assert recovers(client, f"{API}/sleepy?seconds=0.02", pool).json()["passed"]


def test_an_unexpected_error_in_the_machinery_answers_503_and_keeps_the_slot(
    make_client, monkeypatch
):
    client = make_client(workers=1)
    pool = client.app.state.pool
    calls = {"n": 0}
    real_count = workers.oom_kill_count

    def broken_once():
        calls["n"] += 1
        if calls["n"] == 1:
            raise ZeroDivisionError("a bug in the pool")
        return real_count()

    monkeypatch.setattr(workers, "oom_kill_count", broken_once)
    broken = get_within(client, f"{API}/sleepy?seconds=0.02", deadline_for(pool, 1.0))
    assert broken.status_code == 503
    assert recovers(client, f"{API}/sleepy?seconds=0.03", pool).json()["passed"]
    assert len(pool.worker_pids) == 1
