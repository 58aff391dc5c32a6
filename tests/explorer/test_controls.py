"""Negative controls: the third check state, the audit of controls, its CLI and its page."""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest

from whylab.cli import main
from whylab.explorer.content.controls import audit_experiment
from whylab.explorer.experiment import (
    Check,
    Control,
    Param,
    Result,
    T,
    control_active,
    experiment,
    switched_on,
)
from whylab.explorer.runs.result_json import result_from_dict, result_to_dict

FIXTURE_TOPICS = Path(__file__).resolve().parent / "fixture_topics"


def _claim(check_id: str, holds: bool) -> Check:
    return Check(T(check_id, check_id + "（中）"), holds, str(holds), "True", id=check_id)


def _squares(controls, *, raise_under: str = "", never_ask: bool = False):
    """A small experiment: the sum of the first n odd numbers is n², and n² ≥ 0."""

    @experiment(
        name="squares",
        title=T("Odd numbers", "奇数"),
        description=T("Sums of odd numbers.", "奇数之和。"),
        params=[Param("n", "int", 10, T("n", "n"), minimum=0, maximum=100)],
        controls=controls,
    )
    def run(n):
        odd = [2 * k + 1 for k in range(n)]
        if not never_ask and control_active("even-numbers"):
            odd = [2 * k for k in range(n)]
        if raise_under and control_active(raise_under):
            raise RuntimeError("sabotage went too far")
        if n == 0:
            positive = Check.not_applicable(
                id="sum-positive",
                name=T("sum is positive", "和为正"),
                expected="> 0",
                why=T("needs n ≥ 1", "需要 n ≥ 1"),
            )
        else:
            positive = _claim("sum-positive", sum(odd) > 0)
        return Result(checks=[_claim("sum-is-square", sum(odd) == n * n), positive])

    return run


EVEN = Control("even-numbers", T("even numbers are summed", "求和的是偶数"), ("sum-is-square",))


def test_not_applicable_is_a_third_state_that_is_no_evidence():
    na = Check.not_applicable(
        id="x", name=T("claim", "断言"), expected="> 0", why=T("needs n ≥ 1", "需要 n ≥ 1")
    )
    assert na.state == "not_applicable" and not na.passed and not na.applicable
    assert Result(checks=[_claim("a", True), na]).passed  # it does not count as a failure...
    assert _claim("a", True).state == "passed" and _claim("a", False).state == "failed"
    with pytest.raises(ValueError, match="which parameters would make it applicable"):
        Check(T("c", "c"), False, "", "", id="c", applicable=False)
    with pytest.raises(ValueError, match="cannot pass"):
        Check(T("c", "c"), True, "", "", id="c", applicable=False, when_applicable=T("a", "a"))
    with pytest.raises(ValueError, match="slug"):
        Check(T("c", "c"), True, "", "", id="Not A Slug")


def test_a_vacuous_check_is_reported_not_applicable():
    result = _squares([EVEN]).run(n=0)
    assert [c.state for c in result.checks] == ["passed", "not_applicable"]
    # ...and the audit refuses defaults at which a check is not applicable.
    run = _squares([EVEN])
    at_zero = (Param("n", "int", 0, T("n", "n"), minimum=0, maximum=9),)
    vacuous = dataclasses.replace(run, params=at_zero)
    problems = audit_experiment("t", vacuous).problems
    assert any("'sum-positive' is not applicable at the defaults" in p for p in problems)


def test_checks_round_trip_with_id_state_and_premise():
    na = Check.not_applicable(
        id="late", name=T("late", "后期"), expected="≤ 4", why=T("needs n ≥ 1000", "需要 n ≥ 1000")
    )
    back = result_from_dict(result_to_dict(Result(checks=[_claim("early", False), na])))
    assert [(c.id, c.state) for c in back.checks] == [
        ("early", "failed"),
        ("late", "not_applicable"),
    ]
    assert back.checks[1].when_applicable == T("needs n ≥ 1000", "需要 n ≥ 1000")
    old_record = {"name": {"en": "a", "zh": "甲"}, "passed": True, "measured": "1", "expected": "1"}
    assert result_from_dict({**result_to_dict(Result()), "checks": [old_record]}).checks[0].id == ""


def test_control_active_only_inside_switched_on():
    assert not control_active("even-numbers")
    with switched_on("even-numbers") as asked:
        assert control_active("even-numbers") and not control_active("other")
    assert asked == {"even-numbers", "other"} and not control_active("even-numbers")


def test_audit_passes_when_every_check_is_falsified():
    both = Control("n-plus-one", T("n+1 terms are summed", "多加了一项"), ("sum-is-square",))
    negative = Control(
        "negated", T("the odd numbers are negated", "奇数取了相反数"), ("sum-positive",)
    )

    @experiment(
        name="ok",
        title=T("t", "t"),
        description=T("d", "d"),
        params=[Param("n", "int", 5, T("n", "n"), minimum=1, maximum=9)],
        controls=[both, negative],
    )
    def fine(n):
        terms = n + 1 if control_active("n-plus-one") else n
        odd = [2 * k + 1 for k in range(terms)]
        if control_active("negated"):
            odd = [-v for v in odd]
        return Result(
            checks=[
                _claim("sum-is-square", sum(odd) == n * n),
                _claim("sum-positive", sum(odd) > 0),
            ]
        )

    audit = audit_experiment("t", fine)
    assert audit.ok, audit.problems
    assert {c.id: c.broken_by for c in audit.checks} == {
        "sum-is-square": ["n-plus-one"],
        "sum-positive": ["negated"],
    }
    assert {c.id: c.also_broken_by for c in audit.checks}["sum-is-square"] == ["negated"]


@pytest.mark.parametrize(
    "controls, options, expected",
    [
        ([EVEN], {}, "check 'sum-positive' is unfalsified"),
        (
            [Control("noop", T("nothing changes", "什么都不变"), ("sum-positive",))],
            {},
            "control 'noop' made no check fail",
        ),
        (
            [Control("even-numbers", T("even", "偶数"), ("sum-is-square", "sum-positive"))],
            {},
            "control 'even-numbers' must break check 'sum-positive', but it was passed",
        ),
        ([Control("even-numbers", T("e", "e"), ("no-such-check",))], {}, "unknown check"),
        ([EVEN], {"never_ask": True}, "'even-numbers' was never consulted"),
        (
            [EVEN, Control("boom", T("b", "b"), ("sum-positive",))],
            {"raise_under": "boom"},
            "raised under control 'boom': RuntimeError",
        ),
    ],
)
def test_audit_names_every_kind_of_untrustworthy_check(controls, options, expected):
    problems = audit_experiment("t", _squares(controls, **options)).problems
    assert any(expected in p for p in problems), problems


def test_audit_flags_missing_and_duplicate_ids():
    @experiment(name="ids", title=T("t", "t"), description=T("d", "d"))
    def ids():
        return Result(
            checks=[Check(T("no id", "无 id"), True, "", ""), _claim("a", True), _claim("a", True)]
        )

    problems = audit_experiment("t", ids).problems
    assert any("has no id" in p for p in problems) and any(
        "share the id 'a'" in p for p in problems
    )


def test_controls_validate_their_declaration():
    with pytest.raises(ValueError, match="must name the checks"):
        Control("x", T("x", "x"), ())
    with pytest.raises(ValueError, match="slug"):
        Control("Bad Name", T("x", "x"), ("a",))
    with pytest.raises(ValueError, match="unknown parameters"):
        _squares([Control("x", T("x", "x"), ("a",), params={"m": 3})])
    with pytest.raises(ValueError, match="unique"):
        _squares([EVEN, EVEN])


def test_control_params_override_the_defaults():
    seen = []

    @experiment(
        name="p",
        title=T("t", "t"),
        description=T("d", "d"),
        params=[Param("n", "int", 1, T("n", "n"), minimum=1, maximum=99)],
        controls=[Control("big", T("big n", "大 n"), ("small",), params={"n": 50})],
    )
    def p(n):
        seen.append((n, control_active("big")))
        return Result(checks=[_claim("small", n < 10)])

    assert audit_experiment("t", p).ok
    assert seen == [(1, False), (50, True)]


CONTROLLED_TOPIC = """
from whylab.explorer.experiment import Check, Control, Result, T, control_active, experiment


@experiment(
    name="doubling",
    title=T("Doubling", "加倍"),
    description=T("2 + 2 is 4.", "2 + 2 等于 4。"),
    controls=[Control("off-by-one", T("one is added", "多加了 1"), ("four",))],
)
def doubling():
    value = 2 + 2 + (1 if control_active("off-by-one") else 0)
    four = Check(T("2 + 2 = 4", "2 + 2 = 4"), value == 4, str(value), "4", id="four")
    return Result(checks=[four])


EXPERIMENTS = [doubling]
"""


def _write_topic(root, experiments_py: str):
    folder = root / "controlled"
    folder.mkdir(parents=True)
    (folder / "experiments.py").write_text(textwrap.dedent(experiments_py), encoding="utf-8")
    (folder / "meta.toml").write_text(
        textwrap.dedent(
            """\
            slug = "controlled"
            order = 1
            [en]
            title = "Controlled"
            question = "Can every claim fail?"
            summary = "A topic whose every check has a negative control."
            tags = ["Testing"]
            keywords = ["controls"]
            [zh]
            title = "对照"
            question = "每个断言都能失败吗？"
            summary = "每个验证都有阴性对照的主题。"
            tags = ["测试"]
            keywords = ["对照"]
            """
        ),
        encoding="utf-8",
    )
    (folder / "en.md").write_text("Doubling.\n\n{{ experiment:doubling }}\n", encoding="utf-8")
    (folder / "zh.md").write_text("加倍。\n\n{{ experiment:doubling }}\n", encoding="utf-8")


def test_cli_check_controls_exit_codes(tmp_path, capsys):
    _write_topic(tmp_path / "good", CONTROLLED_TOPIC)
    assert main(["check", "--controls", "--topics-dir", str(tmp_path / "good")]) == 0
    out = capsys.readouterr().out
    assert "off-by-one" in out and "every check passed at its defaults" in out

    sabotaged = CONTROLLED_TOPIC.replace('(1 if control_active("off-by-one") else 0)', "0")
    sabotaged = sabotaged.replace(
        "value = 2 + 2 + 0", 'control_active("off-by-one")\n    value = 4'
    )
    _write_topic(tmp_path / "bad", sabotaged)
    assert main(["check", "--controls", "--topics-dir", str(tmp_path / "bad")]) == 1
    err = capsys.readouterr().err
    assert "made no check fail" in err and "unfalsified" in err


def test_fixture_topic_fails_the_audit_where_checks_lack_controls(capsys):
    assert main(["check", "--controls", "--topics-dir", str(FIXTURE_TOPICS)]) == 1
    err = capsys.readouterr().err
    assert "tiny-demo/sine: check 'Parseval: energy is kept' has no id" in err
    assert "tiny-demo/mean" not in err  # mean's checks all have ids and controls


@pytest.mark.parametrize(
    "lang, na_text, fails_if",
    [
        ("en", "not applicable at these parameters", "the samples are shifted by +0.05"),
        ("zh", "在这组参数下不适用", "样本整体偏移 +0.05"),
    ],
)
def test_page_shows_not_applicable_and_what_would_fail(client, lang, na_text, fails_if):
    page = client.get(f"/{lang}/topics/tiny-demo?mean.n=500").text
    assert 'class="check na" data-check="late-means-within-bound"' in page
    assert na_text in page
    assert ("needs n ≥ 1000 samples" if lang == "en" else "需要 n ≥ 1000 个样本") in page
    # Under the check itself (the label is also an option of the block's "Break it").
    assert re.search(rf'class="check-controls">.*?<li>{re.escape(fails_if)}</li>', page, re.S)
    full = client.get(f"/{lang}/topics/tiny-demo").text
    assert 'class="check pass" data-check="late-means-within-bound"' in full
