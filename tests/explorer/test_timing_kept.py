"""Timing measurements outlive a restart, and a fresh server measures its timing defaults."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURE_TOPICS
from fastapi.testclient import TestClient
from test_timing_runs import FRAGMENT, QUEUE, wait_until_finished

from whylab.explorer.runs.timing import measurement_key
from whylab.explorer.web.app import create_app
from whylab.explorer.web.config import ExplorerConfig

PROMPT = "No measurement at these parameters yet"
ASKED = "live measurement on this server at "


def config(cache_dir: Path, topics_dir: Path = FIXTURE_TOPICS, **overrides) -> ExplorerConfig:
    return ExplorerConfig(
        topics_dir=topics_dir, cache_dir=cache_dir, workers=1, memory_limit_mb=1024, **overrides
    )


def label(text: str, start: str) -> str:
    """The run-facts line of a measurement, from ``start`` to the end of its span."""
    at = text.index(start)
    return text[at : text.index("</span>", at)]


def measure(client: TestClient, n: int) -> None:
    queued = client.post(QUEUE, params={"n": str(n)})
    assert queued.status_code == 202, queued.text
    assert wait_until_finished(client, queued.json()["id"])["state"] == "done"


def test_a_measurement_is_shown_again_after_a_restart_without_running(tmp_path):
    with TestClient(create_app(config(tmp_path / "cache"))) as first:
        measure(first, 700)
        shown = label(first.get(FRAGMENT.format(lang="en"), params={"n": "700"}).text, ASKED)
    with TestClient(create_app(config(tmp_path / "cache"))) as second:
        en = second.get(FRAGMENT.format(lang="en"), params={"n": "700"}).text
        zh = second.get(FRAGMENT.format(lang="zh"), params={"n": "700"}).text
        assert label(en, ASKED) == shown  # the same time, machine and seconds
        assert "本服务器上的实时测量" in zh and PROMPT not in en
        assert PROMPT in second.get(FRAGMENT.format(lang="en"), params={"n": "701"}).text
        assert second.app.state.pool.stats.jobs == 0  # shown, not measured again
        # pressing Measure there measures again, and says so
        measure(second, 700)
        again = second.get(FRAGMENT.format(lang="en"), params={"n": "700"}).text
        assert "measured again at" in again and label(again, "live measurement") != shown


def test_a_measurement_of_other_code_is_not_shown(tmp_path, topic_copy):
    with TestClient(create_app(config(tmp_path / "cache", topic_copy))) as first:
        measure(first, 700)
    experiments = topic_copy / "tiny_demo" / "experiments.py"
    experiments.write_text(experiments.read_text() + "\n# the topic's code changed\n")
    with TestClient(create_app(config(tmp_path / "cache", topic_copy))) as second:
        assert PROMPT in second.get(FRAGMENT.format(lang="en"), params={"n": "700"}).text


def test_a_damaged_kept_measurement_is_not_shown_and_breaks_nothing(tmp_path):
    with TestClient(create_app(config(tmp_path / "cache"))) as client:
        state = client.app.state
        topic = state.registry.get("tiny-demo")
        clock = topic.experiments["clock"]
        for n, text in [(700, '{"record": "not a record"'), (701, '{"measured_at": 5}')]:
            key = measurement_key(topic, clock, {"n": n})
            state.timing.store.put(key, topic.slug, clock.name, text)
            page = client.get(FRAGMENT.format(lang="en"), params={"n": str(n)})
            assert page.status_code == 200 and PROMPT in page.text
        measure(client, 700)  # measuring replaces it
        assert ASKED in client.get(FRAGMENT.format(lang="en"), params={"n": "700"}).text


def test_a_fresh_server_measures_its_timing_defaults_in_the_background_once(tmp_path):
    settings = config(tmp_path / "cache", warm_cache=True, measure_timing=True)
    with TestClient(create_app(settings)) as first:
        registry = first.app.state.registry
        timing = [e for t in registry for e in t.experiments.values() if e.timing]
        warm_up = first.app.state.warm_up
        assert warm_up.done.wait(timeout=180), "the start-up work did not finish"
        assert (warm_up.measured, warm_up.measure_failed) == (len(timing), 0)
        # the kept page shows it, made after start-up, in both languages
        en = first.get("/en/topics/tiny-demo").text
        zh = first.get("/zh/topics/tiny-demo").text
        assert "made at its defaults after the server started" in en and PROMPT not in en
        assert "服务器启动后按默认参数自动测量" in zh
    with TestClient(create_app(settings)) as second:
        warm_up = second.app.state.warm_up
        assert warm_up.done.wait(timeout=180), "the start-up work did not finish"
        assert (warm_up.measured, warm_up.measurements_kept) == (0, len(timing))
        assert (
            "made at its defaults after the server started"
            in second.get("/en/topics/tiny-demo").text
        )


def test_without_measure_timing_a_fresh_server_leaves_timing_blocks_to_readers(tmp_path):
    with TestClient(create_app(config(tmp_path / "cache", warm_cache=True))) as client:
        warm_up = client.app.state.warm_up
        assert warm_up.done.wait(timeout=180), "the start-up work did not finish"
        assert (warm_up.measured, client.app.state.timing.idle()) == (0, True)
        assert PROMPT in client.get("/en/topics/tiny-demo").text
