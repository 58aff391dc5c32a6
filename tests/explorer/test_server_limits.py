"""Running experiments safely: time and memory limits, overload, rate limit, cache, sharing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

API = "/api/topics/tiny-demo/experiments"


def get_many(client, urls):
    with ThreadPoolExecutor(max_workers=len(urls)) as threads:
        return list(threads.map(client.get, urls))


def test_a_run_past_its_time_limit_is_stopped_and_the_worker_replaced(make_client):
    client = make_client(workers=1)
    pool = client.app.state.pool
    before = list(pool.worker_pids)
    response = client.get(f"{API}/sleepy?seconds=5")
    assert response.status_code == 504
    assert response.json()["detail"] == (
        "the experiment ran past its time limit of 1 s and was stopped"
    )
    assert pool.stats.timeouts == 1
    assert pool.worker_pids and pool.worker_pids != before  # killed and replaced
    after = client.get(f"{API}/sleepy?seconds=0.05")
    assert after.status_code == 200 and after.json()["passed"]


def test_the_timeout_shows_as_a_clear_message_in_the_page_fragment(make_client):
    client = make_client(workers=1)
    response = client.get("/zh/topics/tiny-demo/experiments/sleepy/result?seconds=4")
    assert response.status_code == 504
    assert "time limit of 1 s" in response.text and 'role="alert"' in response.text


def test_a_memory_hog_is_stopped_and_the_next_run_works(make_client):
    client = make_client(workers=1, memory_limit_mb=512)
    response = client.get(f"{API}/hog?megabytes=3000")
    assert response.status_code == 507
    assert "memory limit of 512 MiB" in response.json()["detail"]
    assert client.app.state.pool.stats.memory_kills == 1
    again = client.get(f"{API}/hog?megabytes=8")
    assert again.status_code == 200 and again.json()["passed"]


def test_a_full_queue_answers_503_with_retry_after(make_client):
    client = make_client(workers=1, max_queue=1, rate_burst=0)
    urls = [f"{API}/sleepy?seconds=0.{6 + i}" for i in range(4)]  # distinct: no sharing
    responses = get_many(client, urls)
    statuses = sorted(r.status_code for r in responses)
    assert 503 in statuses and 200 in statuses, statuses
    busy = next(r for r in responses if r.status_code == 503)
    assert int(busy.headers["retry-after"]) >= 1
    assert "busy" in busy.json()["detail"]


def test_a_client_out_of_cpu_time_gets_429_but_cached_reads_and_pages_are_not_limited(
    make_client,
):
    # 0.02 CPU-seconds of budget, refilling at 1 ms per second; each run costs >= 10 ms.
    client = make_client(rate_burst=0.02, rate_per_s=0.001)
    statuses = [client.get(f"{API}/sine?cycles={i + 1}").status_code for i in range(5)]
    assert statuses[0] == 200 and 429 in statuses, statuses
    limited = client.get(f"{API}/sine?cycles=9")
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) >= 1
    assert "share of experiment time" in limited.json()["detail"]
    again = client.get(f"{API}/sine?cycles=1")  # computed before: a cached read costs nothing
    assert again.status_code == 200 and again.json()["cached"] is True
    fragment = client.get("/en/topics/tiny-demo/experiments/sine/result?cycles=11")
    assert fragment.status_code == 429 and "please wait" in fragment.text
    assert int(fragment.headers["retry-after"]) >= 1
    page = client.get("/en/topics/tiny-demo?sine.cycles=12")
    assert page.status_code == 200  # the page is served; the run's block says to wait
    assert "please wait" in page.text
    assert client.get("/en/").status_code == 200


def test_identical_runs_are_computed_once_then_served_from_cache(make_client):
    client = make_client()
    pool, service = client.app.state.pool, client.app.state.service
    first = client.get(f"{API}/sine?amplitude=2.5&seed=4")
    second = client.get(f"{API}/sine?seed=4&amplitude=2.50")  # same canonical parameters
    assert first.status_code == second.status_code == 200
    assert first.json()["cached"] is False and second.json()["cached"] is True
    assert second.json() == {**first.json(), "cached": True}  # the same record, marked cached
    assert pool.stats.jobs == 1 and service.stats.cache_hits == 1


def test_the_cache_survives_a_restart(make_client):
    make_client().get(f"{API}/sine?cycles=3")
    restarted = make_client()
    response = restarted.get(f"{API}/sine?cycles=3")
    assert response.json()["cached"] is True
    assert restarted.app.state.pool.stats.jobs == 0


def test_concurrent_identical_requests_share_one_run(make_client):
    client = make_client()
    pool, service = client.app.state.pool, client.app.state.service
    responses = get_many(client, [f"{API}/sleepy?seconds=0.5"] * 4)
    assert [r.status_code for r in responses] == [200] * 4
    assert pool.stats.jobs == 1
    assert service.stats.shared + service.stats.cache_hits == 3
    assert len({r.json()["elapsed_s"] for r in responses}) == 1


def test_timing_experiments_are_never_cached(make_client):
    client = make_client()
    runs = [client.get(f"{API}/clock?n=500").json() for _ in range(2)]
    assert [r["cached"] for r in runs] == [False, False]
    assert all(r["timing"] for r in runs)
    assert client.app.state.pool.stats.jobs == 2
    page = client.get("/en/topics/tiny-demo/experiments/clock/result?n=500")
    assert "live measurement on this server, measured again at" in page.text  # the second


def test_an_experiment_that_raises_reports_its_error_and_keeps_serving(make_client, topic_copy):
    experiments = topic_copy / "tiny_demo" / "experiments.py"
    text = experiments.read_text(encoding="utf-8")
    experiments.write_text(
        text.replace(
            "def hog(megabytes):\n",
            "def hog(megabytes):\n    if megabytes == 7:\n"
            "        raise RuntimeError('seven is unlucky')\n",
        ),
        encoding="utf-8",
    )
    client = make_client(topics_dir=topic_copy, workers=1)
    response = client.get(f"{API}/hog?megabytes=7")
    assert response.status_code == 500
    assert "RuntimeError: seven is unlucky" in response.json()["detail"]
    assert client.get(f"{API}/hog?megabytes=2").status_code == 200


def test_a_run_costs_the_cpu_time_of_the_processes_it_starts_too():
    """A compiler or a compiled program an experiment runs is CPU time its client pays."""
    import subprocess
    import sys

    from whylab.explorer.runs.workers import cpu_seconds

    before = cpu_seconds()
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)
    assert cpu_seconds() - before >= 0.3


def test_a_worker_lowers_only_its_soft_address_space_limit():
    """The hard limit stays, so an experiment can give a child process limits of its own;
    the soft limit still stops a memory hog in the worker itself."""
    import os
    import resource

    from whylab.explorer.runs.workers import _limit_memory

    hard_before = resource.getrlimit(resource.RLIMIT_AS)[1]
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: this process's address space plus 256 MB, then a 1 GB hog
        try:
            status = open("/proc/self/status").read()
            size_mb = int(status.split("VmSize:")[1].split()[0]) // 1024
            _limit_memory(size_mb + 256)
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            try:
                hog = bytearray(1024 * 2**20)
                outcome = f"allocated {len(hog)}"
            except MemoryError:
                outcome = "MemoryError"
            os.write(writer, f"{soft - (size_mb + 256) * 2**20} {hard} {outcome}".encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as answer:
        soft_excess, hard, outcome = answer.read().split(" ", 2)
    os.waitpid(pid, 0)
    assert int(soft_excess) == 0 and int(hard) == hard_before
    assert outcome == "MemoryError"
