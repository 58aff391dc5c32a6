"""How values read on a page: metric labels and units, yes/no, numeric order and alignment."""

from __future__ import annotations

import pytest

from whylab.explorer.experiment import Metric, Result, T, experiment
from whylab.explorer.web.render import format_value, is_number, metric_rows, natural_key


@experiment(
    name="demo",
    title=T("Demo", "示例"),
    description=T("Metrics only.", "只有测量值。"),
    metrics=[Metric("speedup", T("Speed-up", "加速比"), "×"), Metric("ok", T("Held", "成立"))],
)
def demo():
    return Result()


METRICS = {"n_512": 5, "n_16": 2, "ok": True, "n_4": 1, "speedup": 12.5, "n_256": 4, "n_64": 3}


def test_declared_metrics_come_first_with_labels_and_units_in_the_page_language():
    rows = metric_rows(demo, METRICS, "zh")
    assert [(r.label, r.value, r.unit) for r in rows[:2]] == [
        ("加速比", "12.5", "×"),
        ("成立", "是", ""),
    ]
    assert rows[0].numeric and not rows[1].numeric
    english = metric_rows(demo, METRICS, "en")
    assert [(r.label, r.value) for r in english[:2]] == [("Speed-up", "12.5"), ("Held", "yes")]


def test_undeclared_metrics_keep_their_names_and_sort_numbers_as_numbers():
    rows = metric_rows(demo, METRICS, "en")
    assert [r.label for r in rows[2:]] == ["n_4", "n_16", "n_64", "n_256", "n_512"]
    assert sorted(["stage 10", "stage 2", "Stage 1"], key=natural_key) == [
        "Stage 1",
        "stage 2",
        "stage 10",
    ]


def test_plain_metric_dicts_still_work_without_declarations():
    @experiment(name="plain", title=T("P", "P"), description=T("p", "p"))
    def plain():
        return Result(metrics={"b": 2.0, "a": "text"})

    rows = metric_rows(plain, plain.run().metrics, "zh")
    assert [(r.label, r.value, r.numeric) for r in rows] == [("a", "text", False), ("b", "2", True)]


def test_duplicate_metric_names_are_refused():
    with pytest.raises(ValueError, match="metric names must be unique"):
        experiment(
            name="twice",
            title=T("T", "T"),
            description=T("t", "t"),
            metrics=[Metric("x", T("x", "x")), Metric("x", T("y", "y"))],
        )(lambda: Result())


@pytest.mark.parametrize(
    "value, lang, text",
    [(True, "en", "yes"), (False, "zh", "否"), (3, "zh", "3"), (0.1234567, "en", "0.123457")],
)
def test_values_read_in_the_page_language(value, lang, text):
    assert format_value(value, lang) == text


@pytest.mark.parametrize(
    "value, numeric",
    [
        (3, True),
        (2.5, True),
        ("1e-12", True),
        ("−3", True),
        ("1,024", True),
        (True, False),
        ("mm", False),
        ("3 × 4", False),
    ],
)
def test_numbers_are_told_from_words_for_right_alignment(value, numeric):
    assert is_number(value) is numeric


def test_table_cells_with_numbers_are_right_aligned_and_labelled_for_reflow(client):
    page = client.get("/zh/topics/tiny-demo").text
    assert 'class="num"' in page and "data-label=" in page
    assert 'class="result-table reflow"' in page


def test_a_bool_reads_yes_or_no_after_the_json_round_trip_a_page_sees():
    from whylab.explorer.experiment import Table
    from whylab.explorer.runs.result_json import result_from_dict, result_to_dict

    shown = result_from_dict(
        result_to_dict(Result(tables=[Table(T("t", "表"), [T("a", "甲")], [[False]])],
                              metrics={"ok": True}))
    )
    assert [r.value for r in metric_rows(demo, shown.metrics, "zh")] == ["是"]
    assert format_value(shown.tables[0].rows[0][0], "zh") == "否"
