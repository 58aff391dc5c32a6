"""whylab.numerics.symmetric against LAPACK's packed layout, BLAS dspmv/dsymv and NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import blas

from whylab.numerics.symmetric import (
    SYMMETRY_RTOL,
    SymmetricWork,
    pack,
    packed_length,
    sym_gaxpy,
    unpack,
)


def random_symmetric(n: int, seed: int) -> np.ndarray:
    A = np.random.default_rng(seed).standard_normal((n, n))
    return A + A.T


def lapack_index(i: int, j: int, n: int, uplo: str) -> int:
    """LAPACK's documented packed index, 1-based, converted to 0-based.

    'U': AP(i + (j-1)*j/2) = A(i, j) for i <= j; 'L': AP(i + (j-1)*(2n-j)/2) = A(i, j)
    for j <= i (1-based i, j).
    """
    i1, j1 = i + 1, j + 1
    if uplo == "U":
        return i1 + (j1 - 1) * j1 // 2 - 1
    return i1 + (j1 - 1) * (2 * n - j1) // 2 - 1


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_pack_follows_lapacks_documented_index(n, uplo):
    A = random_symmetric(n, seed=n)
    ap = pack(A, uplo)
    assert ap.shape == (packed_length(n),) == (n * (n + 1) // 2,)
    for j in range(n):
        for i in (range(j, n) if uplo == "L" else range(j + 1)):
            assert ap[lapack_index(i, j, n, uplo)] == A[i, j]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**31 - 1), uplo=st.sampled_from("LUlu"))
def test_round_trip_and_product_against_blas_and_numpy(n, seed, uplo):
    A = random_symmetric(n, seed)
    ap = pack(A, uplo)
    assert np.array_equal(unpack(ap, n, uplo), A)
    rng = np.random.default_rng(seed + 1)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    lower = int(uplo.upper() == "L")
    result = sym_gaxpy(ap, x, y, uplo)
    scale = np.max(np.abs(y + A @ x))
    np.testing.assert_allclose(result, y + A @ x, atol=1e-13 * scale)
    np.testing.assert_allclose(result, blas.dspmv(n, 1.0, ap, x, beta=1.0, y=y, lower=lower),
                               atol=1e-13 * scale)
    np.testing.assert_allclose(
        result, blas.dsymv(1.0, np.asfortranarray(A), x, beta=1.0, y=y, lower=lower),
        atol=1e-13 * scale)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("n", [1, 2, 9])
def test_each_entry_loaded_once_and_each_off_diagonal_used_twice(n, uplo):
    A = random_symmetric(n, seed=1)
    ap = pack(A, uplo)
    work = SymmetricWork()
    counted = sym_gaxpy(ap, np.ones(n), uplo=uplo, count=work)
    np.testing.assert_allclose(counted, A.sum(axis=1), atol=1e-12)
    assert np.all(work.loads == 1)
    expected_uses = np.full(packed_length(n), 2)
    expected_uses[[lapack_index(j, j, n, uplo) for j in range(n)]] = 1
    assert np.array_equal(work.uses, expected_uses)
    assert work.multiplies == n * n  # the arithmetic of the full matrix, from half the storage


def test_inputs_are_not_modified():
    A = random_symmetric(5, seed=2)
    ap, x, y = pack(A), np.ones(5), np.full(5, 3.0)
    sym_gaxpy(ap, x, y)
    assert np.array_equal(y, np.full(5, 3.0)) and np.array_equal(ap, pack(A))
    assert np.array_equal(sym_gaxpy(ap, x), sym_gaxpy(ap, x, np.zeros(5)))


def test_empty_matrix():
    assert pack(np.zeros((0, 0))).shape == (0,)
    assert unpack(np.zeros(0), 0).shape == (0, 0)
    assert sym_gaxpy(np.zeros(0), np.zeros(0)).shape == (0,)


def test_pack_accepts_rounding_and_refuses_real_asymmetry():
    A = random_symmetric(6, seed=3)
    A[4, 1] *= 1 + SYMMETRY_RTOL / 10  # rounding-sized difference: accepted
    pack(A)
    A[4, 1] += 1e-6
    with pytest.raises(ValueError,
                       match=r"A: not symmetric: \|A\[1, 4\] - A\[4, 1\]\| = 1e-06 > rtol"):
        pack(A)
    pack(A, rtol=1e-3)  # a stated, looser tolerance
    with pytest.raises(ValueError, match=r"A: expected a square matrix, got shape \(2, 3\)"):
        pack(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"A: entries must be finite, A\[0, 0\] = inf"):
        pack(np.diag([np.inf, 1.0]))


def test_bad_arguments_name_themselves():
    ap = pack(np.eye(3))
    with pytest.raises(ValueError, match=r"uplo: must be 'L' \(lower triangle\) or 'U'"):
        pack(np.eye(3), "X")
    with pytest.raises(ValueError, match=r"uplo: must be 'L'"):
        sym_gaxpy(ap, np.ones(3), uplo=None)
    with pytest.raises(ValueError, match=r"ap: expected n\(n\+1\)/2 = 10 entries for n = 4"):
        sym_gaxpy(ap, np.ones(4))
    with pytest.raises(ValueError, match=r"ap: expected n\(n\+1\)/2 = 6 entries for n = 3"):
        unpack(np.ones(5), 3)
    with pytest.raises(ValueError, match=r"n: the matrix order must be an int >= 0"):
        unpack(ap, -1)
    with pytest.raises(ValueError, match=r"x: expected a vector"):
        sym_gaxpy(ap, np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"y: expected a vector of length n = 3"):
        sym_gaxpy(ap, np.ones(3), np.ones(2))
