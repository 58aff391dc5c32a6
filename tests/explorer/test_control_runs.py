"""The checks fold behind one line, and "Break it": control runs on the fixture topic.

A result leads with its figures; its checks sit behind one ``<summary>`` line that
counts them and that a failed or undecided check opens. A control run is the
experiment under one of its declared negative controls, at that control's
parameters: labelled as such, through the same admission and worker pool as a
run, and kept in no cache.
"""

from __future__ import annotations

import re

import pytest

from whylab.explorer.experiment import Check, Control, T
from whylab.explorer.runs.errors import ExperimentCrashed
from whylab.explorer.runs.workers import Job
from whylab.explorer.web.check_summary import CheckSummary, ControlOutcome

TOPIC = "/{lang}/topics/tiny-demo"
MEAN = "/{lang}/topics/tiny-demo/experiments/mean"
BIASED = "biased-samples"  # the mean experiment's control: it breaks both of its checks
TITLE = {
    "en": "Control run: the samples are shifted by +0.05 — not the real result",
    "zh": "对照运行：样本整体偏移 +0.05——不是真实结果",
}
SUMMARY = re.compile(r'<details class="checks-summary (\w+)"( open)? data-checks-summary>\s*'
                     r'<summary><span class="mark" aria-hidden="true">(.)</span> ([^<]*)</summary>')


def summaries(html: str) -> list[tuple[str, bool, str, str]]:
    """Each result's fold as (state class, open, mark, line), in page order."""
    return [(state, bool(opened), mark, line) for state, opened, mark, line in
            SUMMARY.findall(html)]


def claim(state: str) -> Check:
    text = T("a claim", "一个结论")
    if state == "not_applicable":
        return Check.not_applicable(id="a", name=text, expected="x", why=T("n ≥ 2", "n ≥ 2"))
    if state == "inconclusive":
        return Check(text, False, "m", "x", conclusive=False)
    return Check(text, state == "passed", "m", "x")


@pytest.mark.parametrize(
    "states, en, zh, opened",
    [
        (["passed"] * 8, "8 of 8 checks passed", "8 项验证中 8 项通过", False),
        (["passed"], "1 of 1 check passed", "1 项验证中 1 项通过", False),
        (["passed", "not_applicable"], "1 of 2 checks passed, 1 not applicable",
         "2 项验证中 1 项通过，1 项不适用", False),
        (["failed", "passed", "inconclusive", "not_applicable", "failed"],
         "1 of 5 checks passed, 2 failed, 1 not applicable, 1 inconclusive",
         "5 项验证中 1 项通过，2 项未通过，1 项不适用，1 项无法判定", True),
        (["inconclusive", "passed"], "1 of 2 checks passed, 1 inconclusive",
         "2 项验证中 1 项通过，1 项无法判定", True),
    ],
)
def test_the_summary_line_counts_every_state_and_a_failure_opens_it(states, en, zh, opened):
    summary = CheckSummary.of([claim(state) for state in states])
    assert (summary.sentence("en"), summary.sentence("zh"), summary.open) == (en, zh, opened)
    worst = next(s for s in ("failed", "inconclusive", "passed") if s in states)
    assert summary.state == worst


def test_a_control_outcome_counts_the_declared_checks_that_failed():
    checks = [Check(T("a", "甲"), False, "m", "x", id="a"), Check(T("b", "乙"), True, "m", "x",
                                                                   id="b")]
    control = Control("wrong", T("it is wrong", "它错了"), breaks=("a", "b"))
    outcome = ControlOutcome.of(checks, control)
    assert (outcome.named, outcome.failed) == (2, 1)
    assert "2 of the checks" in outcome.sentence("en") and "1 of them failed" in outcome.sentence(
        "en")
    assert "其中 2 项" in outcome.sentence("zh") and "有 1 项未通过" in outcome.sentence("zh")


def test_the_result_leads_and_the_checks_fold_behind_one_line_on_pages_and_fragments(client):
    for lang, line in (("en", "1 of 1 check passed"), ("zh", "1 项验证中 1 项通过")):
        page = client.get(TOPIC.format(lang=lang)).text
        sine = page[page.index('id="experiment-sine"'):page.index('id="experiment-mean"')]
        assert summaries(sine) == [("passed", False, "✓", line)]
        # The fold, then the measurements and the figures; the checks' list is inside it.
        fold, checks = sine.index("data-checks-summary"), sine.index('<ul class="checks"')
        assert fold < checks < sine.index("</details>", checks) < sine.index('<figure')
        fragment = client.get("/" + lang + "/topics/tiny-demo/experiments/sine/result",
                              params={"amplitude": "2.5"}).text
        assert summaries(fragment) == [("passed", False, "✓", line)]


def test_a_failed_check_opens_the_fold_and_one_not_applicable_does_not(client):
    fragment = client.get(MEAN.format(lang="en") + "/result", params={"bias": "0.5"}).text
    assert summaries(fragment) == [("failed", True, "✗", "0 of 2 checks passed, 2 failed")]
    fragment = client.get(MEAN.format(lang="zh") + "/result", params={"n": "100"}).text
    assert summaries(fragment) == [("passed", False, "✓", "2 项验证中 1 项通过，1 项不适用")]


def test_break_it_is_offered_only_where_a_control_is_declared_and_no_time_is_measured(client):
    page = client.get(TOPIC.format(lang="en")).text
    forms = re.findall(r'action="/en/topics/tiny-demo/experiments/([\w-]+)/control-run"', page)
    assert forms == ["mean"]  # sine and graph declare no control, clock measures time
    mean = page[page.index('id="experiment-mean"'):page.index('id="diagram-graph"')]
    assert f'<option value="{BIASED}">the samples are shifted by +0.05</option>' in mean
    # After the real result, never in place of it.
    assert mean.index('id="experiment-mean-result"') < mean.index('class="break-it"')


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_control_run_shows_its_checks_fail_labelled_and_never_cached(client, lang):
    state = client.app.state
    jobs, runs = state.service.pool.stats.jobs, state.service.stats.control_runs
    fragments = len(state.fragments) if state.fragments is not None else 0
    answer = client.get(
        MEAN.format(lang=lang) + "/control-result",
        # A reader's values do not reach a control run: it runs at the control's parameters.
        params={"control": BIASED, "n": "10", "mean.n": "10", "bias": "0.3"},
    )
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-robots-tag"] == "noindex"
    html = answer.text
    assert TITLE[lang] in html
    assert re.findall(r'<li class="check (\w+)" data-check="([\w-]+)"', html) == [
        ("fail", "mean-is-half"), ("fail", "late-means-within-bound")]
    assert summaries(html)[0][:3] == ("failed", True, "✗")
    assert 'data-declared="2" data-failed="2"' in html
    shown = {"en": "Samples = 2000", "zh": "样本数 = 2000"}[lang]
    assert shown in html and "= 10" not in html  # the defaults, not the reader's n or bias
    assert "permalink" not in html and "json-link" not in html
    assert 'id="experiment-mean-control-figure-1"' in html  # no id shared with the real result
    # It went through the worker pool, and into no cache.
    assert state.service.pool.stats.jobs == jobs + 1
    assert state.service.stats.control_runs == runs + 1
    if state.fragments is not None:
        assert len(state.fragments) == fragments
    real = client.get(MEAN.format(lang=lang) + "/result").text
    assert TITLE[lang] not in real and summaries(real)[0][:3] == ("passed", False, "✓")
    assert 'class="check fail"' not in real


def test_a_control_run_is_cached_nowhere_the_real_run_then_computes_afresh(make_client):
    client = make_client(workers=1)
    state = client.app.state
    assert client.get(MEAN.format(lang="en") + "/control-result",
                      params={"control": BIASED}).status_code == 200
    assert state.service.stats.computed == 0 and state.service.stats.cache_hits == 0
    first = client.get(MEAN.format(lang="en") + "/result").text
    assert "computed in" in first and "result from cache" not in first  # no record was kept
    assert 'class="check fail"' not in first and state.service.stats.computed == 1
    again = client.get(MEAN.format(lang="en") + "/control-result", params={"control": BIASED})
    assert "result from cache" not in again.text and 'class="check fail"' in again.text
    assert state.service.stats.control_runs == 2 and state.service.stats.cache_hits == 0
    page = client.get(TOPIC.format(lang="en")).text
    assert TITLE["en"] not in page and 'data-control="' not in page


def test_a_control_run_is_charged_to_the_readers_budget_like_any_run(make_client):
    client = make_client(workers=1, rate_burst=5.0, rate_per_s=0.001)
    limiter = client.app.state.limiter
    assert client.get(MEAN.format(lang="en") + "/control-result",
                      params={"control": BIASED}).status_code == 200
    spent = limiter.burst_s - limiter.balance("testclient")
    assert spent > 0  # its CPU seconds were charged
    limiter.adjust("testclient", limiter.balance("testclient") + 1.0)  # the budget is spent
    for lang in ("en", "zh"):
        refused = client.get(MEAN.format(lang=lang) + "/control-result",
                             params={"control": BIASED})
        assert refused.status_code == 429 and "retry-after" in refused.headers
        assert TITLE[lang] in refused.text and 'class="run-error"' in refused.text
        assert 'class="check ' not in refused.text
    page = client.get(MEAN.format(lang="en") + "/control-run", params={"control": BIASED})
    assert page.status_code == 429 and "please wait" in page.text


def test_without_the_page_script_break_it_opens_a_page_of_the_control_run(client):
    for lang, back in (("en", "Back to the real result"), ("zh", "回到真实结果")):
        answer = client.get(MEAN.format(lang=lang) + "/control-run", params={"control": BIASED})
        assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
        assert answer.headers["x-robots-tag"] == "noindex"
        html = answer.text
        assert f'<h1 class="control-title" id="experiment-mean-control-title">{TITLE[lang]}</h1>' \
            in html
        assert f'<a href="/{lang}/topics/tiny-demo#experiment-mean">{back}</a>' in html
        assert f'<option value="{BIASED}" selected>' in html  # to run it again, or another
        assert html.count('class="check fail"') == 2
        other = "zh" if lang == "en" else "en"
        assert f'href="/{other}/topics/tiny-demo/experiments/mean/control-run?control={BIASED}"' \
            in html


def test_only_a_declared_control_of_an_experiment_without_timing_runs(client):
    jobs = client.app.state.service.pool.stats.jobs
    for path, query, status in [
        (MEAN, {"control": "no-such-control"}, 404),
        (MEAN, {}, 404),
        ("/{lang}/topics/tiny-demo/experiments/sine", {"control": BIASED}, 404),
        ("/{lang}/topics/tiny-demo/experiments/clock", {"control": BIASED}, 404),
        ("/{lang}/topics/tiny-demo/experiments/nope", {"control": BIASED}, 404),
        (MEAN, [("control", BIASED), ("control", BIASED)], 422),
    ]:
        for leaf in ("control-result", "control-run"):
            answer = client.get(path.format(lang="en") + "/" + leaf, params=query)
            assert answer.status_code == status, (path, query, leaf)
    assert client.get(MEAN.format(lang="zh") + "/control-result",
                      params={"control": "x"}).text.count("这个实验没有这个名字的阴性对照") == 1
    assert client.app.state.service.pool.stats.jobs == jobs  # none of them ran anything


def test_a_worker_refuses_a_control_its_experiment_does_not_declare(client, fixture_registry):
    topic = fixture_registry.get("tiny-demo")
    pool = client.app.state.service.pool
    job = Job(str(topic.folder), "mean", topic.experiments["mean"].defaults(), 10.0,
              control="made-up")
    with pytest.raises(ExperimentCrashed, match="declares no control 'made-up'"):
        client.portal.call(pool.submit, job)


def test_robots_keep_crawlers_off_control_runs(client):
    assert "Disallow: /*/topics/*/experiments/*/control-" in client.get("/robots.txt").text


API_MEAN = "/api/topics/tiny-demo/experiments/mean"


def test_the_json_api_runs_a_declared_control_labelled_counted_and_cached_nowhere(client):
    state = client.app.state
    jobs, runs = state.service.pool.stats.jobs, state.service.stats.control_runs
    answer = client.get(f"{API_MEAN}/controls/{BIASED}")
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-robots-tag"] == "noindex"
    data = answer.json()
    assert data["control"] == BIASED and data["passed"] is False and data["cached"] is False
    assert data["params"]["n"] == 2000  # the declared (default) parameters
    assert data["declared_to_break"] == ["mean-is-half", "late-means-within-bound"]
    # counted from the result's own checks, not copied from the declaration
    failed = [c["id"] for c in data["result"]["checks"] if c["state"] == "failed"]
    assert data["broke"] == data["failed"] == failed == data["declared_to_break"]
    assert state.service.pool.stats.jobs == jobs + 1
    assert state.service.stats.control_runs == runs + 1
    # the real run is untouched by it
    real = client.get(API_MEAN).json()
    assert real["passed"] is True and "control" not in real


def test_the_json_api_refuses_undeclared_controls_timing_ones_and_query_parameters(client):
    jobs = client.app.state.service.pool.stats.jobs
    for path, status in [
        (f"{API_MEAN}/controls/no-such-control", 404),
        (f"/api/topics/tiny-demo/experiments/sine/controls/{BIASED}", 404),
        (f"/api/topics/tiny-demo/experiments/clock/controls/{BIASED}", 404),
        (f"/api/topics/nope/experiments/mean/controls/{BIASED}", 404),
        (f"{API_MEAN}/controls/{BIASED}?n=10", 422),  # no value a reader types reaches it
    ]:
        answer = client.get(path)
        assert answer.status_code == status, (path, answer.text)
        assert answer.headers["cache-control"] == "no-store" and answer.json()["detail"]
    assert client.app.state.service.pool.stats.jobs == jobs  # none of them ran anything


def test_the_topic_description_and_openapi_list_the_runnable_controls(client):
    experiments = {e["name"]: e for e in client.get("/api/topics/tiny-demo").json()["experiments"]}
    (control,) = experiments["mean"]["controls"]
    assert control["name"] == BIASED and control["url"] == f"{API_MEAN}/controls/{BIASED}"
    assert control["label"]["zh"] == "样本整体偏移 +0.05"
    assert experiments["sine"]["controls"] == [] and experiments["clock"]["controls"] == []
    paths = client.get("/openapi.json").json()["paths"]
    operation = paths[f"{API_MEAN}/controls/{{control}}"]["get"]
    assert operation["parameters"][0]["schema"]["enum"] == [BIASED]
    assert "/api/topics/tiny-demo/experiments/sine/controls/{control}" not in paths
