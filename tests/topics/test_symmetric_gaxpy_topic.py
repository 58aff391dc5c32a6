"""Experiments of the symmetric-gaxpy topic: defaults, extremes, the index map, and controls."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import blas

from whylab.explorer.experiment import ParamError
from whylab.numerics.symmetric import SymmetricWork, pack, packed_length
from whylab.topics.symmetric_gaxpy import experiments as sym_topic

BY_NAME = {e.name: e for e in sym_topic.EXPERIMENTS}
TIMED = [e for e in sym_topic.EXPERIMENTS if e.timing]


def failed(result):
    return [c.id for c in result.checks if c.state != "passed"]


def test_timing_experiment_is_declared_as_timing():
    assert [e.name for e in TIMED] == ["memory-not-time"]


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("n", [1, 2, 6])
def test_lapack_formula_is_what_dspmv_reads(n, uplo):
    """The experiments' independent index formula, confirmed by BLAS itself.

    With ap[k] = k, dspmv applied to the unit vector e_j returns column j of the matrix
    dspmv sees, i.e. the packed index of every A[i, j].
    """
    ap = np.arange(packed_length(n), dtype=float)
    lower = int(uplo == "L")
    columns = [blas.dspmv(n, 1.0, ap, np.eye(n)[j], lower=lower) for j in range(n)]
    assert np.array_equal(np.column_stack(columns), sym_topic.lapack_index_map(n, uplo))


@pytest.mark.parametrize("n", [2, 5, 8])
def test_index_map_tables_bracket_only_the_mirrored_entries(n):
    result = sym_topic.packed_index_map.run(n=n)
    assert result.passed, failed(result)
    for table, uplo in zip(result.tables, ("L", "U"), strict=True):
        expected = sym_topic.lapack_index_map(n, uplo)
        for i, row in enumerate(table.rows):
            for j, cell in enumerate(row[1:]):
                stored = i >= j if uplo == "L" else i <= j
                assert cell == (f"{expected[i, j]}" if stored else f"({expected[i, j]})")


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("n", [3, 4, 600])
def test_packed_gaxpy_at_extremes(n, uplo):
    result = sym_topic.packed_gaxpy_vs_blas.run(n=n, uplo=uplo, seed=2**31 - 1)
    assert result.passed, failed(result)
    assert result.metrics["multiplies"] == n * n


def test_parameters_are_bounded():
    exp = BY_NAME["packed-gaxpy-vs-blas"]
    with pytest.raises(ParamError, match="n: must be <= 600"):
        exp.parse_params({"n": 601})
    with pytest.raises(ParamError, match="uplo: must be one of L, U"):
        exp.parse_params({"uplo": "X"})


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_numpy_loop_is_right_when_mirrored_and_triangular_when_not(uplo):
    n = 7
    A = sym_topic.random_symmetric(n, seed=3)
    ap, x, y = pack(A, uplo), np.arange(1.0, n + 1), np.ones(n)
    work = SymmetricWork()
    np.testing.assert_allclose(sym_topic.numpy_packed_gaxpy(ap, x, y, uplo, True, work),
                               y + A @ x, rtol=1e-13)
    assert work.multiplies == n * n and set(work.loads.tolist()) == {1}
    triangle = np.tril(A) if uplo == "L" else np.triu(A)
    np.testing.assert_allclose(sym_topic.numpy_packed_gaxpy(ap, x, y, uplo, False, work),
                               y + triangle @ x, rtol=1e-13)
    assert work.multiplies == packed_length(n)


def test_full_storage_loop_loads_off_diagonals_twice():
    n = 5
    A = sym_topic.random_symmetric(n, seed=4)
    work = SymmetricWork()
    result = sym_topic.full_storage_gaxpy(A, sym_topic.lapack_index_map(n, "L"), np.ones(n),
                                          np.zeros(n), work)
    np.testing.assert_allclose(result, A.sum(axis=1), rtol=1e-13)
    assert sorted(set(work.loads.tolist())) == [1, 2] and work.loads.sum() == n * n


def test_memory_not_time_reports_without_asserting_on_time():
    result = sym_topic.memory_not_time.run(n="500", rounds=3)
    by_id = {c.id: c for c in result.checks}
    assert set(by_id) == {"packed-saves-memory", "packed-loop-beats-dense", "full-storage-faster",
                          "sym-gaxpy-near-dspmv"}
    assert by_id["packed-saves-memory"].passed  # bytes, not time
    assert by_id["full-storage-faster"].state == "not_applicable"  # claimed for n >= 2000 only
    assert by_id["packed-loop-beats-dense"].state == "not_applicable"
    assert result.metrics["packed_over_full_bytes"] == pytest.approx(501 / 1000)
    assert len(result.tables[0].rows) == 4
