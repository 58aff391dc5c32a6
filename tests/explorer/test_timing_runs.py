"""Timing experiments: pages never run them; readers queue them, one at a time, and may cancel."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from whylab.explorer.runs.service import RunAnswer, RunRecord
from whylab.explorer.runs.timing import TimingQueue

PAGE = "/{lang}/topics/tiny-demo"
FRAGMENT = "/{lang}/topics/tiny-demo/experiments/clock/result"
QUEUE = "/api/topics/tiny-demo/experiments/clock/timing-runs"


def wait_until_finished(client, run_id: str, limit_s: float = 60.0) -> dict:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        state = client.get(f"/api/timing-runs/{run_id}").json()
        if state["state"] in {"done", "failed", "cancelled"}:
            return state
        time.sleep(0.05)
    pytest.fail(f"timing run {run_id} did not finish in {limit_s} s")


def test_a_page_does_not_run_its_timing_experiment_but_prompts(make_client):
    client = make_client()
    pool = client.app.state.pool
    for lang, prompt in [("en", "press Measure"), ("zh", "请点击“测量”")]:
        page = client.get(PAGE.format(lang=lang))
        assert page.status_code == 200 and prompt in page.text
        fragment = client.get(FRAGMENT.format(lang=lang), params={"n": "500"})
        assert fragment.status_code == 200 and prompt in fragment.text
        assert "data-timing-runs=" in page.text and 'formaction="/' in page.text
    # The ordinary experiments on the page ran; the timing one did not.
    experiments = {e.name for e in client.app.state.registry.get("tiny-demo").experiments.values()}
    assert "clock" in experiments
    jobs_after_pages = pool.stats.jobs
    client.get(FRAGMENT.format(lang="en"), params={"n": "500"})
    assert pool.stats.jobs == jobs_after_pages


def test_a_queued_run_finishes_and_pages_then_show_when_and_where(make_client):
    client = make_client()
    queued = client.post(QUEUE, params={"n": "700"})
    assert queued.status_code == 202, queued.text
    data = queued.json()
    assert data["state"] in {"queued", "running"} and data["params"] == {"n": 700}
    assert queued.headers["location"] == f"/api/timing-runs/{data['id']}"
    done = wait_until_finished(client, data["id"])
    assert done["state"] == "done" and done["elapsed_s"] >= 0
    en = client.get(FRAGMENT.format(lang="en"), params={"n": "700"}).text
    zh = client.get(PAGE.format(lang="zh"), params={"clock.n": "700"}).text
    assert "live measurement on this server at" in en and " UTC" in en and "× CPU" in en
    assert "本服务器上的实时测量" in zh and "press Measure" not in en
    # Other parameters have no measurement yet.
    assert "press Measure" in client.get(FRAGMENT.format(lang="en"), params={"n": "9"}).text
    # A second run of the same experiment knows how long the last one took.
    again = client.post(QUEUE, params={"n": "701"}).json()
    assert again["expected_s"] == pytest.approx(done["elapsed_s"], abs=0.05)
    wait_until_finished(client, again["id"])


def test_bad_parameters_and_unknown_runs(make_client):
    client = make_client()
    bad = client.post(QUEUE, params={"n": "0"})
    assert bad.status_code == 422 and bad.json()["param"] == "n"
    assert client.post("/api/topics/tiny-demo/experiments/sine/timing-runs").status_code == 404
    assert client.get("/api/timing-runs/nope").status_code == 404
    assert client.delete("/api/timing-runs/nope").status_code == 404


def test_without_javascript_measure_posts_waits_and_redirects_back(make_client):
    client = make_client()
    answer = client.post(
        "/zh/topics/tiny-demo/experiments/clock/measure",
        content="sine.cycles=3&clock.n=600",
        headers={"content-type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    location = answer.headers["location"]
    assert location.startswith("/zh/topics/tiny-demo?") and location.endswith("#experiment-clock")
    assert "clock.n=600" in location and "sine.cycles=3" in location
    page = client.get(location.partition("#")[0]).text
    assert "本服务器上的实时测量" in page
    # A bad value goes back to the page, which shows it next to the field.
    bad = client.post(
        "/en/topics/tiny-demo/experiments/clock/measure",
        content="clock.n=0",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert bad.status_code == 422 and 'id="experiment-clock-n-error"' in bad.text


def test_the_json_api_measures_timing_experiments_through_the_line(make_client):
    client = make_client()
    data = client.get("/api/topics/tiny-demo/experiments/clock", params={"n": "300"}).json()
    assert data["timing"] is True and data["passed"] is True
    # ... and that measurement is what the page now shows.
    assert (
        "live measurement on this server"
        in client.get(PAGE.format(lang="en"), params={"clock.n": "300"}).text
    )


# ---------------------------------------------------------------- the queue on its own


class FakeService:
    """Runs take as long as the test says; records which ran and how many at once."""

    def __init__(self):
        self.started: list[dict] = []
        self.running = 0
        self.most_at_once = 0
        self.release: dict[int, asyncio.Event] = {}

    async def run(self, topic, experiment, params, client=""):
        self.started.append(params)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        gate = self.release.setdefault(params["n"], asyncio.Event())
        await gate.wait()
        self.running -= 1
        from whylab.explorer.experiment import Result

        record = RunRecord(topic.slug, experiment.name, params, "x", Result(), True, False, 0.25)
        return RunAnswer(record, 0.25)


def test_the_line_runs_one_at_a_time_in_order_and_cancels(fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    clock = topic.experiments["clock"]

    async def scenario():
        service = FakeService()
        line = TimingQueue(service)  # type: ignore[arg-type]
        await line.start()
        first = await line.submit(topic, clock, {"n": 1})
        second = await line.submit(topic, clock, {"n": 2})
        third = await line.submit(topic, clock, {"n": 3})
        assert await line.submit(topic, clock, {"n": 2}) is second  # same parameters: joined
        await asyncio.sleep(0.01)
        assert first.state == "running" and line.position(second) == 1
        assert line.position(third) == 2
        line.cancel(third.id)
        assert third.state == "cancelled" and line.position(third) == 0
        # Cancelling the running one throws its result away, but the next waits for it.
        line.cancel(first.id)
        assert first.state == "cancelled"
        await asyncio.sleep(0.01)
        assert second.state == "queued" and service.running == 1
        service.release.setdefault(1, asyncio.Event()).set()
        await asyncio.sleep(0.01)
        assert second.state == "running"
        service.release.setdefault(2, asyncio.Event()).set()
        await asyncio.wait_for(second.finished.wait(), 1)
        assert second.state == "done"
        assert [p["n"] for p in service.started] == [1, 2]  # the cancelled third never ran
        assert service.most_at_once == 1
        assert line.latest(topic, clock, {"n": 1}) is None  # cancelled: not kept
        assert line.latest(topic, clock, {"n": 2}).record.elapsed_s == 0.25
        await line.close()

    # In a thread of its own: Playwright's sync API may hold an event loop in this one.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, scenario()).result()


def test_a_readers_run_goes_ahead_of_waiting_background_runs(fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    clock = topic.experiments["clock"]

    async def scenario():
        service = FakeService()
        line = TimingQueue(service)  # type: ignore[arg-type]
        await line.start()
        running = await line.submit(topic, clock, {"n": 1}, background=True)
        waiting = await line.submit(topic, clock, {"n": 2}, background=True)
        await asyncio.sleep(0.01)
        reader = await line.submit(topic, clock, {"n": 3}, client="reader")
        later = await line.submit(topic, clock, {"n": 4}, client="reader")
        # the background run under way finishes first; then the readers' runs, in order
        assert running.state == "running" and not line.idle()
        assert [line.position(r) for r in (reader, later, waiting)] == [1, 2, 3]
        for n in (1, 3, 4, 2):
            service.release.setdefault(n, asyncio.Event()).set()
            await asyncio.sleep(0.01)
        await asyncio.wait_for(waiting.finished.wait(), 1)
        assert [p["n"] for p in service.started] == [1, 3, 4, 2] and line.idle()
        kinds = [line.latest(topic, clock, {"n": n}).kind for n in (1, 2, 3)]
        assert kinds == ["background", "background", "asked"]
        # A reader who asks for a background run's parameters joins it, and the
        # measurement is then the reader's.
        queued = await line.submit(topic, clock, {"n": 5}, background=True)
        assert await line.submit(topic, clock, {"n": 5}, client="reader") is queued
        service.release.setdefault(5, asyncio.Event()).set()
        await asyncio.wait_for(queued.finished.wait(), 1)
        assert line.latest(topic, clock, {"n": 5}).kind == "asked"
        # Measuring again where a measurement is held says so.
        again = await line.submit(topic, clock, {"n": 3}, client="reader")
        await asyncio.wait_for(again.finished.wait(), 1)
        assert line.latest(topic, clock, {"n": 3}).kind == "again"
        await line.close()

    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, scenario()).result()
