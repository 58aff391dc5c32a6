"""whylab.numerics.banded against NumPy and SciPy's BLAS dgbmv, on random band matrices."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import blas

from whylab.numerics.banded import BandWork, band_gaxpy, check_bandwidths, from_band, to_band


def random_band(m: int, n: int, p: int, q: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    rows, columns = np.indices((m, n))
    A[(rows - columns > p) | (columns - rows > q)] = 0.0
    return A


def entries_in_band(m: int, n: int, p: int, q: int) -> int:
    """Counted from a dense mask: np.tril keeps j - i <= q, np.triu keeps j - i >= -p."""
    return int(np.count_nonzero(np.triu(np.tril(np.ones((m, n)), q), -p)))


@st.composite
def band_shapes(draw):
    m = draw(st.integers(1, 12))
    n = draw(st.integers(1, 12))
    p = draw(st.integers(0, m - 1))
    q = draw(st.integers(0, n - 1))
    return m, n, p, q


@settings(max_examples=150, deadline=None)
@given(shape=band_shapes(), seed=st.integers(0, 2**31 - 1))
def test_layout_round_trip_and_both_orders_against_dense(shape, seed):
    m, n, p, q = shape
    A = random_band(m, n, p, q, seed)
    ab = to_band(A, p, q)
    assert ab.shape == (p + q + 1, n)
    for i in range(m):  # the LAPACK / Golub-Van Loan index map, entry by entry
        for j in range(max(0, i - p), min(n, i + q + 1)):
            assert ab[q + i - j, j] == A[i, j]
    assert np.array_equal(from_band(ab, p, q, m), A)
    rng = np.random.default_rng(seed + 1)
    x, y = rng.standard_normal(n), rng.standard_normal(m)
    for order in ("column", "diagonal"):
        work = BandWork()
        result = band_gaxpy(ab, p, q, x, y, order, count=work)
        np.testing.assert_allclose(result, y + A @ x, rtol=1e-12, atol=1e-12)
        assert work.multiplies == work.additions == entries_in_band(m, n, p, q)
    assert np.array_equal(band_gaxpy(ab, p, q, x, order="diagonal", m=m),
                          band_gaxpy(ab, p, q, x, np.zeros(m), "diagonal"))


@pytest.mark.parametrize("m, n, p, q", [
    (50, 50, 2, 3), (50, 50, 0, 0), (50, 50, 0, 4), (50, 50, 4, 0), (60, 40, 5, 2),
    (40, 60, 2, 5), (21, 21, 10, 10), (7, 30, 3, 3),
])
def test_both_orders_equal_dgbmv(m, n, p, q):
    # SciPy's f2py wrapper of dgbmv (1.17) insists on m >= kl + ku + 1, so every shape here has it.
    A = random_band(m, n, p, q, seed=m * n + p)
    ab = to_band(A, p, q)
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(n), rng.standard_normal(m)
    reference = blas.dgbmv(m, n, p, q, 1.0, np.asfortranarray(ab), x, beta=1.0, y=y)
    for order in ("column", "diagonal"):
        np.testing.assert_allclose(band_gaxpy(ab, p, q, x, y, order), reference,
                                   rtol=1e-13, atol=1e-13)


def test_corner_slots_are_never_read():
    A = random_band(6, 6, 2, 1, seed=0)
    ab = to_band(A, 2, 1)
    assert ab[0, 0] == 0 and ab[-1, -1] == 0 and ab[-2, -1] == 0  # zero-filled corners
    poisoned = ab.copy()
    poisoned[0, 0] = poisoned[-1, -1] = poisoned[-2, -1] = poisoned[-1, -2] = np.nan
    x = np.arange(6.0)
    for order in ("column", "diagonal"):
        np.testing.assert_allclose(band_gaxpy(poisoned, 2, 1, x, order=order), A @ x, rtol=1e-14)
    assert np.array_equal(from_band(poisoned, 2, 1, 6), A)


def test_inputs_are_not_modified_and_c_or_fortran_order_both_work():
    A = random_band(9, 9, 1, 2, seed=4)
    ab, x, y = to_band(A, 1, 2), np.ones(9), np.full(9, 2.0)
    for layout in (ab, np.asfortranarray(ab)):
        for order in ("column", "diagonal"):
            np.testing.assert_allclose(band_gaxpy(layout, 1, 2, x, y, order), y + A @ x)
    assert np.array_equal(y, np.full(9, 2.0)) and np.array_equal(ab, to_band(A, 1, 2))


def test_bad_bandwidths_name_the_argument_and_bound():
    with pytest.raises(ValueError, match=r"p: bandwidth must be >= 0, got -1"):
        check_bandwidths(-1, 0, 4, 4)
    with pytest.raises(ValueError, match=r"q: upper bandwidth must be <= n - 1 = 3"):
        check_bandwidths(0, 4, 4, 4)
    with pytest.raises(ValueError, match=r"p: lower bandwidth must be <= m - 1 = 2"):
        to_band(np.ones((3, 5)), 3, 0)
    with pytest.raises(TypeError, match=r"q: bandwidth must be an int, got float"):
        to_band(np.eye(3), 0, 1.0)
    with pytest.raises(TypeError, match=r"p: bandwidth must be an int, got bool"):
        to_band(np.eye(3), True, 0)


def test_bad_matrices_and_vectors_name_the_argument():
    with pytest.raises(ValueError, match=r"A: entry A\[0, 2\] = 1 lies outside the band"):
        to_band(np.triu(np.ones((3, 3))), 0, 1)
    with pytest.raises(ValueError, match=r"A: entries must be finite, A\[1, 1\] = nan"):
        to_band(np.diag([1.0, np.nan, 2.0]), 0, 0)
    with pytest.raises(ValueError, match=r"A: expected a non-empty 2-D matrix"):
        to_band(np.ones(3), 0, 0)
    ab = to_band(np.eye(4), 1, 1)
    with pytest.raises(ValueError, match=r"ab: must have p \+ q \+ 1 = 4 rows"):
        band_gaxpy(ab, 2, 1, np.ones(4))
    with pytest.raises(ValueError, match=r"x: expected a vector of length 4"):
        band_gaxpy(ab, 1, 1, np.ones(5))
    with pytest.raises(ValueError, match=r"y: expected a vector of length 4"):
        band_gaxpy(ab, 1, 1, np.ones(4), np.ones(3), m=4)
    with pytest.raises(ValueError, match=r"y: expected a vector of length 4"):
        band_gaxpy(ab, 1, 1, np.ones(4), np.ones((4, 1)))
    with pytest.raises(ValueError, match=r"order: must be one of column, diagonal"):
        band_gaxpy(ab, 1, 1, np.ones(4), order="row")
    with pytest.raises(ValueError, match=r"m: the number of rows must be an int >= 1"):
        from_band(ab, 1, 1, 0)
    with pytest.raises(ValueError, match=r"p: lower bandwidth must be <= m - 1 = 0"):
        band_gaxpy(ab, 1, 1, np.ones(4), np.ones(1))


def test_work_is_the_band_not_the_square():
    n, p, q = 1000, 2, 2
    A = random_band(n, n, p, q, seed=5)
    work = BandWork()
    band_gaxpy(to_band(A, p, q), p, q, np.ones(n), order="column", count=work)
    assert work.flops == 2 * entries_in_band(n, n, p, q) == 2 * ((p + q + 1) * n - 6)
    assert work.flops < 2 * n * n / 100
