"""Experiments of the band-gaxpy topic: defaults, extremes, the drawn layout, and controls."""

from __future__ import annotations

import math

import numpy as np
import pytest

from whylab.explorer.experiment import ParamError
from whylab.topics.band_gaxpy import experiments as band_topic

BY_NAME = {e.name: e for e in band_topic.EXPERIMENTS}
TIMED = [e for e in band_topic.EXPERIMENTS if e.timing]


def failed(result):
    return [c.id for c in result.checks if c.state != "passed"]


def test_timing_experiments_are_declared_as_timing():
    assert {e.name for e in TIMED} == {"time-growth", "diagonal-vs-dgbmv"}


@pytest.mark.parametrize("n, p, q", [(6, 0, 0), (6, 5, 0), (6, 0, 5), (12, 5, 5), (7, 2, 3)])
def test_band_layout_tables_show_where_each_entry_went(n, p, q):
    result = band_topic.band_layout.run(n=n, p=p, q=q)
    assert result.passed, failed(result)
    matrix, stored = result.tables
    for i, row in enumerate(matrix.rows):
        for j, cell in enumerate(row[1:]):
            inside = -p <= j - i <= q
            assert cell == (f"ab[{q + i - j}]" if inside else "·")
    assert len(stored.rows) == p + q + 1
    corners = sum(row[2:].count("·") for row in stored.rows)
    assert corners == p * (p + 1) // 2 + q * (q + 1) // 2 == result.metrics["corner_slots"]
    assert stored.rows[q][2:] == [f"a{j},{j}" for j in range(n)]  # row q: the main diagonal


@pytest.mark.parametrize("m, n, p, q", [(200, 150, 3, 2), (21, 500, 10, 0), (500, 21, 0, 10),
                                        (21, 21, 10, 10), (100, 100, 0, 0)])
def test_gaxpy_vs_blas_at_extremes(m, n, p, q):
    result = band_topic.gaxpy_vs_blas.run(m=m, n=n, p=p, q=q, seed=2**31 - 1)
    assert result.passed, failed(result)
    counted = dict((row[0].en, row[1]) for row in result.tables[0].rows)
    mask_entries = int(np.count_nonzero(band_topic.band_mask(m, n, p, q)))
    assert counted["operations, column loop"] == 2 * mask_entries


def test_parameters_stay_inside_valid_bandwidths():
    exp = BY_NAME["gaxpy-vs-blas"]
    with pytest.raises(ParamError, match="p: must be <= 10"):
        exp.parse_params({"p": 11})
    with pytest.raises(ParamError, match="m: must be >= 21"):
        exp.parse_params({"m": 20})  # m >= p + q + 1, which SciPy's dgbmv wrapper requires
    layout = BY_NAME["band-layout"]
    with pytest.raises(ParamError, match="q: must be <= 5"):
        layout.parse_params({"q": 6})


def test_band_mask_counts_entries_independently():
    assert int(band_topic.band_mask(5, 5, 1, 1).sum()) == 13  # tridiagonal: 5 + 4 + 4
    assert int(band_topic.band_mask(3, 6, 0, 5).sum()) == 6 + 5 + 4  # upper-triangular 3x6
    assert int(band_topic.band_mask(6, 3, 5, 0).sum()) == 6 + 5 + 4  # lower-triangular 6x3


def test_work_check_rejects_the_dense_count():
    work = band_topic.BandWork()
    work.axpy(10)
    name = band_topic.T("claim", "断言")
    assert band_topic.work_check("w", name, work, 10, 200).passed
    assert not band_topic.work_check("w", name, work, 9, 200).passed


def test_time_growth_shapes_without_asserting_on_time():
    result = band_topic.time_growth.run(max_log2n=14, rounds=1)
    chart = result.figures[0]
    assert chart.log_x and chart.log_y
    assert [len(s.x) for s in chart.series] == [3, len(band_topic.DENSE_SIZES)]
    assert math.isfinite(result.metrics["band_exponent"])
    assert {c.id for c in result.checks} == {"band-time-linear", "dense-time-quadratic"}


@pytest.mark.parametrize("n, w", [("1000", "5"), ("10000", "21"), ("10000", "11")])
def test_the_dgbmv_claim_is_only_made_for_narrow_long_bands(n, w):
    result = band_topic.diagonal_vs_dgbmv.run(n=n, w=w, rounds=3)
    states = {c.id: c.state for c in result.checks}
    assert states["diagonal-at-least-dgbmv-speed"] == "not_applicable"
    assert states["timed-results-agree"] == "passed"
    assert len(result.tables[0].rows) == 5


@pytest.mark.parametrize(("n", "p", "q"), [(6, 0, 0), (6, 4, 4), (12, 4, 0), (12, 0, 4)])
def test_band_refusals_at_extremes_name_the_entry_and_the_bounds(n, p, q):
    result = BY_NAME["band-refusals"].run(n=n, p=p, q=q)
    assert result.passed, failed(result)
    answers = [row[1].en for row in result.tables[0].rows]
    assert f"A[0, {n - 1}] = 9" in answers[0]  # the first offending entry, row by row
    assert f"got {n}" in answers[3] and f"got {n}" in answers[4]
    assert f"got {p + q}" in answers[6]
