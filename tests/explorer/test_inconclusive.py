"""The fourth check state, inconclusive: in the audit, the CLI, JSON, notebooks and the page.

A timing claim whose confidence interval straddles its bound is neither a pass nor a
failure (:mod:`whylab.bench.verdict`). Here the samples are fixed, so every outcome is
deterministic: nothing is timed.
"""

from __future__ import annotations

import textwrap

from whylab.cli import EXIT_INCONCLUSIVE, main
from whylab.explorer.content.controls import RERUNS, audit_experiment
from whylab.explorer.experiment import Control, Result, T, control_active, experiment
from whylab.explorer.runs.result_json import result_from_dict, result_to_dict
from whylab.explorer.web.notebook import result_html, result_text
from whylab.topics.shared import timing_check

STRADDLING = [1.8, 2.3, 2.2, 1.9, 2.4, 2.1, 1.7]  # interval [1.7, 2.4] straddles 2
BELOW = [1.1, 1.3, 1.2, 1.5, 1.4, 1.6, 1.2]
ABOVE = [2.1, 2.3, 2.2, 2.5, 2.4, 2.6, 2.2]


def _claim(samples):
    return timing_check("b-slower", T("B is at least 2× slower", "B 至少慢 2 倍"), samples,
                        at_least=2.0)


def _timed(default_samples, runs: list[int] | None = None, *, decided_on_rerun=False):
    controls = [
        Control("b-as-fast", T("B is as fast as A", "B 与 A 一样快"), ("b-slower",)),
        Control("b-noisy", T("B's times are noisy", "B 的耗时噪声很大"), ("b-slower",)),
    ]

    @experiment(name="timed", title=T("t", "t"), description=T("d", "d"), controls=controls)
    def timed():
        if runs is not None:
            runs.append(1)
        samples = default_samples
        if decided_on_rerun and runs is not None and len(runs) > 1:
            samples = ABOVE
        if control_active("b-as-fast"):
            samples = BELOW
        if control_active("b-noisy"):
            samples = STRADDLING
        return Result(checks=[_claim(samples)])

    return timed


def test_inconclusive_at_the_defaults_is_rerun_then_reported_not_a_problem():
    runs: list[int] = []
    audit = audit_experiment("t", _timed(STRADDLING, runs))
    assert audit.inconclusive and "inconclusive on this machine now" in audit.inconclusive[0]
    assert audit.checks[0].state_at_defaults == "inconclusive"
    # the default run was made 1 + RERUNS times; each control once or (noisy) 1 + RERUNS
    assert audit.runs == len(runs) == (1 + RERUNS) + 1 + (1 + RERUNS)
    # a control that leaves the check inconclusive has not broken it
    assert any("control 'b-noisy' must break check 'b-slower', but it was inconclusive" in p
               for p in audit.problems), audit.problems
    assert audit.checks[0].broken_by == ["b-as-fast"]


def test_a_rerun_that_decides_is_the_one_judged():
    runs: list[int] = []
    audit = audit_experiment("t", _timed(STRADDLING, runs, decided_on_rerun=True))
    assert not audit.inconclusive and audit.checks[0].state_at_defaults == "passed"


def test_state_round_trips_through_json_and_shows_in_notebooks():
    result = Result(checks=[_claim(STRADDLING), _claim(ABOVE)])
    back = result_from_dict(result_to_dict(result))
    assert [c.state for c in back.checks] == ["inconclusive", "passed"]
    assert result_to_dict(result)["checks"][0]["state"] == "inconclusive"
    experiment_ = _timed(STRADDLING)
    for lang, words in (("en", "inconclusive on this machine now"), ("zh", "在本机此刻无法判定")):
        text = result_text(back, lang)
        summary, first = text.splitlines()[:2]  # the line the checks fold behind, then each
        assert summary == {"en": "? 1 of 2 checks passed, 1 inconclusive",
                           "zh": "? 2 项验证中 1 项通过，1 项无法判定"}[lang]
        assert first.startswith("? ") and words in first and "[1.70, 2.40]" in first
        assert "✓" not in first
        html = result_html(experiment_, back, lang)
        assert 'data-state="inconclusive"' in html and words in html
        # An undecided check opens the fold: it is never hidden behind the summary line.
        assert '<details class="whylab-checks-summary" data-state="inconclusive" open>' in html


TOPIC = '''
from whylab.explorer.experiment import Control, Result, T, control_active, experiment
from whylab.topics.shared import timing_check


@experiment(
    name="timed",
    title=T("Timed", "计时"),
    description=T("B against A.", "B 对 A。"),
    controls=[Control("b-as-fast", T("B is as fast as A", "B 与 A 一样快"), ("b-slower",))],
)
def timed():
    samples = SAMPLES
    if control_active("b-as-fast"):
        samples = [1.1, 1.3, 1.2, 1.5, 1.4, 1.6, 1.2]
    return Result(checks=[timing_check("b-slower", T("B is at least 2x slower", "B 至少慢 2 倍"),
                                       samples, at_least=2.0)])


EXPERIMENTS = [timed]
'''


def _write_topic(root, samples):
    folder = root / "timed_topic"
    folder.mkdir(parents=True)
    code = TOPIC.replace("SAMPLES", repr(samples))
    (folder / "experiments.py").write_text(code, encoding="utf-8")
    (folder / "meta.toml").write_text(textwrap.dedent("""\
        slug = "timed-topic"
        order = 1
        [en]
        title = "Timed"
        question = "Is B slower?"
        summary = "A timing claim."
        tags = ["Testing"]
        keywords = ["timing"]
        [zh]
        title = "计时"
        question = "B 更慢吗？"
        summary = "一个计时断言。"
        tags = ["测试"]
        keywords = ["计时"]
        """), encoding="utf-8")
    (folder / "en.md").write_text("Timed.\n\n{{ experiment:timed }}\n", encoding="utf-8")
    (folder / "zh.md").write_text("计时。\n\n{{ experiment:timed }}\n", encoding="utf-8")
    return root


def test_cli_exit_codes_and_display(tmp_path, capsys):
    undecided = str(_write_topic(tmp_path / "undecided", STRADDLING))
    assert main(["run", "timed-topic", "timed", "--topics-dir", undecided]) == EXIT_INCONCLUSIVE
    out = capsys.readouterr().out
    assert "inconclusive on this machine now" in out and "✓" not in out
    assert main(["run", "timed-topic", "timed", "--topics-dir", undecided, "--lang", "zh"]) == 3
    assert "在本机此刻无法判定" in capsys.readouterr().out
    assert main(["check", "--topics-dir", undecided]) == EXIT_INCONCLUSIVE
    assert "inconclusive on this machine now" in capsys.readouterr().err
    assert main(["check", "--controls", "--topics-dir", undecided]) == EXIT_INCONCLUSIVE
    captured = capsys.readouterr()
    assert "every check passed" not in captured.out and "rerun it" in captured.err

    decided = str(_write_topic(tmp_path / "decided", ABOVE))
    assert main(["check", "--controls", "--topics-dir", decided]) == 0


def test_page_shows_inconclusive_with_its_interval(tmp_path, make_client):
    # (not marked timing=True, which would wait for the reader to press Measure: the
    # samples are fixed, and the state is drawn the same way either way)
    client = make_client(topics_dir=_write_topic(tmp_path / "topics", STRADDLING), workers=1)
    for lang, words in (("en", "inconclusive on this machine now"), ("zh", "在本机此刻无法判定")):
        page = client.get(f"/{lang}/topics/timed-topic/experiments/timed/result").text
        assert 'class="check inconclusive" data-check="b-slower"' in page
        assert words in page and "[1.70, 2.40]" in page
