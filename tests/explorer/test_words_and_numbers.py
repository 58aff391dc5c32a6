"""How values read on a page: metric labels and units, yes/no, numeric order and alignment,
numbers at a fixed number of significant digits and vectors as lists."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tests.explorer.default_runs import default_record
from whylab.explorer.content.topics import load_registry
from whylab.explorer.experiment import (
    Metric,
    Result,
    T,
    Text,
    experiment,
    format_number,
    format_vector,
    in_language,
    subscript,
)
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
        ("加速比", "12.50", "×"),  # four significant digits, as every number
        ("成立", "是", ""),
    ]
    assert rows[0].numeric and not rows[1].numeric
    english = metric_rows(demo, METRICS, "en")
    assert [(r.label, r.value) for r in english[:2]] == [("Speed-up", "12.50"), ("Held", "yes")]


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
    [(True, "en", "yes"), (False, "zh", "否"), (3, "zh", "3"), (0.1234567, "en", "0.1235")],
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


@pytest.mark.parametrize(
    "value, digits, text",
    [
        (0.5, 3, "0.500"),  # trailing zeros kept: a column reads at one precision
        (0.0456, 3, "0.0456"),
        (0.07, 3, "0.0700"),
        (1.0, 3, "1"),  # a whole number is exact and reads as one
        (-0.0, 3, "0"),
        (808.0, 4, "808"),
        (-3.25, 4, "\u22123.250"),  # the real minus sign
        (12345.678, 3, "12346"),  # the integer part is never cut to zeros
        (123456.7, 3, "1.23e5"),
        (2.5e-7, 2, "2.5e\u22127"),
        (0.99996, 4, "1.000"),  # rounded before the digits are counted
        (math.nan, 3, "NaN"),
        (-math.inf, 3, "\u2212∞"),
    ],
)
def test_numbers_read_at_a_fixed_number_of_significant_digits(value, digits, text):
    assert format_number(value, digits) == text


def test_vectors_read_as_comma_separated_lists_not_numpy_reprs():
    assert format_vector(np.array([0.559, 0.371, 0.07]), 3) == "[0.559, 0.371, 0.0700]"
    assert format_vector(np.array([1.0, 0.0, 0.0]), 3) == "[1, 0, 0]"
    assert format_vector([], 3) == "[]"


NUMPY_REPR = re.compile(r"\[\s*[-−]?\d[\d.e+-]*(\s+[-−]?\d[\d.e+-]*)+\s*\]|array\(")


def test_the_numpy_repr_pattern_catches_what_numpy_writes():
    """Negative control of the sweep below."""
    assert NUMPY_REPR.search(np.array2string(np.array([0.559, 0.371, 0.07]), precision=3))
    assert NUMPY_REPR.search(str(np.array([1.0, 0.0, 0.0])))
    assert not NUMPY_REPR.search(format_vector([0.559, 0.371, 0.07], 3))


@pytest.mark.slow
def test_no_table_cell_of_a_default_run_shows_a_numpy_repr():
    found, cells = [], 0
    for topic in load_registry():
        for shipped in topic.experiments.values():
            for table in default_record(topic, shipped).result.tables:
                for row in table.rows:
                    for cell in row:
                        cells += 1
                        for lang in ("en", "zh"):
                            text = format_value(in_language(cell, lang), lang)
                            if NUMPY_REPR.search(text):
                                found.append((topic.slug, shipped.name, text))
    assert cells > 500  # the sweep reaches the shipped tables
    assert found == []


# ASCII math a reader should not see: a subscript or superscript Unicode can write
# (x_t, e_i, x_{t+1}, x_25, 2^s, n^p, w^(k+1), ||r||^2). Capital and f subscripts
# (g_T, C_f) have no Unicode letter and stay.
ASCII_MATH = re.compile(
    r"(?<![\w])[A-Za-zγ]_(?:[aehijklmnoprstuvx]|\d+|\{[^}]*\})(?![\w])|[\w)|]\^[\w(]"
)
MATH_TOPICS = ("frank-wolfe", "fft")


def reader_texts(topic, shipped) -> list[str]:
    """Every name and value of a default run a reader sees, in both languages: check
    names, measured and expected values, chart titles, axes and series, table titles,
    columns and cells, and the declared controls and metrics."""
    result = default_record(topic, shipped).result
    texts = [c.label for c in shipped.controls]
    texts += [m.label for m in shipped.metrics]
    for check in result.checks:
        texts += [check.name, check.measured, check.expected]
    for figure in result.figures:
        if hasattr(figure, "series"):
            texts += [figure.title, figure.x_label, figure.y_label]
            texts += [s.name for s in figure.series]
    for table in result.tables:
        texts += [table.title, *table.columns, *(cell for row in table.rows for cell in row)]
    return [
        in_language(t, lang) for t in texts if isinstance(t, (str, Text)) for lang in ("en", "zh")
    ]


def test_the_ascii_math_pattern_catches_what_it_should():
    """Negative control of the sweep below."""
    for ascii_math in ("gap g_t", "x_{t+1}", "r·e_i", "x_25", "2^s", "w^(k+1)", "||r||^2"):
        assert ASCII_MATH.search(ascii_math), ascii_math
    for fine in ("gap gₜ", "xₜ₊₁", "2ˢ", "w⁽ᵏ⁺¹⁾", "g_T", "C_f", "gap_tol", "to_band", "x₂₅"):
        assert not ASCII_MATH.search(fine), fine
    assert f"x{subscript(25)}" == "x₂₅"


@pytest.mark.slow
def test_checks_charts_and_tables_write_math_with_unicode_sub_and_superscripts():
    found = []
    for topic in load_registry():
        if topic.slug not in MATH_TOPICS:
            continue
        for shipped in topic.experiments.values():
            found += [
                (topic.slug, shipped.name, text)
                for text in reader_texts(topic, shipped)
                if ASCII_MATH.search(text)
            ]
    assert found == []
