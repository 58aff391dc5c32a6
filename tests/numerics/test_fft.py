"""The radix-2 FFTs against numpy.fft and the O(n^2) DFT, plus their algebraic properties."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whylab.numerics.fft import (
    OperationCount,
    bit_reversal_permutation,
    butterfly_stages,
    count_fft_operations,
    dft,
    dft_matrix,
    dft_two_factor,
    fft,
    fft_recursive,
    fft_stages,
    ifft,
    is_power_of_two,
    plan_fft,
)

SIZES = [2**k for k in range(15)]  # 1 .. 16384


def random_complex(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n) + 1j * rng.standard_normal(n)


def tolerance(n):
    """Rounding error of an FFT grows like eps * log2(n) * |x|; |X_k| ~ sqrt(n) here."""
    return 1e-14 * math.sqrt(n) * (math.log2(n) + 1) * 10


@pytest.mark.parametrize("n", SIZES)
def test_iterative_fft_matches_numpy(n):
    x = random_complex(n, seed=n)
    np.testing.assert_allclose(fft(x), np.fft.fft(x), rtol=0, atol=tolerance(n))


@pytest.mark.parametrize("n", SIZES[:13])
def test_recursive_fft_matches_numpy(n):
    x = random_complex(n, seed=n + 1)
    np.testing.assert_allclose(fft_recursive(x), np.fft.fft(x), rtol=0, atol=tolerance(n))


@pytest.mark.parametrize("n", SIZES[:12])
def test_fft_matches_dft(n):
    x = random_complex(n, seed=n + 2)
    reference = dft(x)
    np.testing.assert_allclose(fft(x), reference, rtol=0, atol=tolerance(n))
    np.testing.assert_allclose(reference, np.fft.fft(x), rtol=0, atol=tolerance(n))


@pytest.mark.parametrize("n", [1, 3, 5, 6, 12, 100, 1000])
def test_dft_any_length_matches_numpy(n):
    x = random_complex(n, seed=n + 3)
    np.testing.assert_allclose(dft(x), np.fft.fft(x), rtol=0, atol=1e-12 * n)


def test_dft_blocks_cover_every_row():
    # Larger than one block of rows (2^20 elements / n rows), so several blocks run.
    n = 4096
    x = random_complex(n, seed=7)
    np.testing.assert_allclose(dft(x), np.fft.fft(x), rtol=0, atol=tolerance(n) * 10)


def test_dft_matrix_is_symmetric_and_unitary_up_to_n():
    w = dft_matrix(16)
    np.testing.assert_allclose(w, w.T, atol=1e-15)
    np.testing.assert_allclose(w.conj().T @ w, 16 * np.eye(16), atol=1e-12)


@pytest.mark.parametrize("n", SIZES)
def test_inverse_matches_numpy_and_round_trips(n):
    x = random_complex(n, seed=n + 4)
    np.testing.assert_allclose(ifft(x), np.fft.ifft(x), rtol=0, atol=1e-13)
    np.testing.assert_allclose(ifft(np.fft.fft(x)), x, rtol=0, atol=1e-13)


@settings(max_examples=30, deadline=None)
@given(log2n=st.integers(0, 10), seed=st.integers(0, 2**32 - 1),
       a=st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False),
       b=st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False))
def test_linearity(log2n, seed, a, b):
    n = 2**log2n
    x, y = random_complex(n, seed), random_complex(n, seed + 1)
    scale = 1 + abs(a) + abs(b)
    np.testing.assert_allclose(fft(a * x + b * y), a * fft(x) + b * fft(y),
                               rtol=0, atol=tolerance(n) * scale)


@pytest.mark.parametrize("n", SIZES)
def test_parseval(n):
    x = random_complex(n, seed=n + 5)
    energy_time = np.sum(np.abs(x) ** 2)
    energy_frequency = np.sum(np.abs(fft(x)) ** 2) / n
    assert energy_frequency == pytest.approx(energy_time, rel=1e-12)


@pytest.mark.parametrize("n", SIZES[1:])
def test_real_input_has_conjugate_symmetric_spectrum(n):
    x = np.random.default_rng(n).standard_normal(n)
    spectrum = fft(x)
    k = np.arange(1, n)
    np.testing.assert_allclose(spectrum[k], np.conj(spectrum[n - k]), rtol=0, atol=tolerance(n))
    assert abs(spectrum[0].imag) < 1e-12 * n
    assert abs(spectrum[n // 2].imag) < 1e-12 * n


def test_impulse_and_constant():
    impulse = np.zeros(8)
    impulse[0] = 1
    np.testing.assert_allclose(fft(impulse), np.ones(8), atol=1e-15)
    np.testing.assert_allclose(fft(np.ones(8)), 8 * impulse, atol=1e-14)


def test_input_is_not_modified_and_lists_work():
    x = random_complex(16, seed=1)
    before = x.copy()
    fft(x)
    fft_recursive(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(fft([1, 2, 3, 4]), np.fft.fft([1, 2, 3, 4]), atol=1e-14)


# ---------------------------------------------------------------- structure and counts


def test_bit_reversal_permutation():
    assert bit_reversal_permutation(8).tolist() == [0, 4, 2, 6, 1, 5, 3, 7]
    for n in (1, 2, 16, 1024):
        perm = bit_reversal_permutation(n)
        bits = n.bit_length() - 1
        expected = [int(format(i, f"0{bits}b")[::-1], 2) if bits else 0 for i in range(n)]
        assert perm.tolist() == expected


def test_butterfly_stages_touch_every_position_once_per_stage():
    n = 64
    stages = butterfly_stages(n)
    assert [stage.span for stage in stages] == [2, 4, 8, 16, 32, 64]
    for stage in stages:
        touched = np.concatenate([stage.top, stage.bottom])
        assert sorted(touched.tolist()) == list(range(n))
        assert np.all(stage.bottom - stage.top == stage.span // 2)


@pytest.mark.parametrize("n", [1, 2, 8, 64, 1024])
def test_operation_counts(n):
    expected_butterflies = n // 2 * int(math.log2(n))
    counted = count_fft_operations(n)
    assert counted.butterflies == expected_butterflies
    assert counted.complex_multiplies == expected_butterflies
    assert counted.complex_additions == 2 * expected_butterflies
    assert counted.exponentials == 0  # the plan's twiddles were computed once, before the call
    recursive = OperationCount()
    fft_recursive(np.zeros(n), recursive)
    assert dataclasses.replace(recursive, exponentials=0) == counted
    assert recursive.exponentials == expected_butterflies  # it recomputes its twiddles


def _trivial_twiddles_by_brute_force(n):
    """Twiddles exactly 1 or -i, found by walking every butterfly of every stage by hand."""
    trivial = 0
    span = 2
    while span <= n:
        for _block in range(n // span):
            for k in range(span // 2):
                trivial += k == 0 or 4 * k == span
        span *= 2
    return trivial


@pytest.mark.parametrize("n", [2, 4, 8, 64, 1024])
def test_trivial_twiddles_are_counted_apart(n):
    counted = count_fft_operations(n)
    assert counted.trivial_multiplies == _trivial_twiddles_by_brute_force(n)
    log2n = int(math.log2(n))
    assert counted.nontrivial_multiplies == n // 2 * log2n - 3 * n // 2 + 2
    # 6 real flops per complex multiply, 2 per complex addition: 10 per butterfly.
    assert counted.real_flops(skip_trivial=False) == 5 * n * log2n
    assert counted.real_flops(skip_trivial=True) == 5 * n * log2n - 9 * n + 12


@pytest.mark.parametrize("n", [1, 2, 3, 8, 12, 64])
def test_dft_multiply_count_is_derived_independently(n):
    """The DFT's count equals the products a plain double loop forms, one per (k, j) pair."""
    products = trivial = 0
    for k in range(n):
        for j in range(n):
            products += 1
            trivial += (j * k) % n == 0 or 4 * ((j * k) % n) == n
    counted = OperationCount()
    dft(np.zeros(n), counted)
    assert counted.complex_multiplies == products
    assert counted.trivial_multiplies == trivial
    assert counted.complex_additions == n * (n - 1)
    assert counted.exponentials == n * n
    cached = OperationCount()
    dft(np.zeros(n), cached, matrix=dft_matrix(n))
    assert cached.complex_multiplies == products and cached.exponentials == 0


def test_dft_with_a_precomputed_matrix_and_in_order_sum():
    x = random_complex(256, seed=9)
    np.testing.assert_allclose(dft(x, matrix=dft_matrix(256)), np.fft.fft(x), atol=tolerance(256))
    np.testing.assert_allclose(dft(x, summation="in-order"), np.fft.fft(x), atol=1e-12)
    with pytest.raises(ValueError, match=r"dft: matrix has shape \(4, 4\), the signal needs"):
        dft(x, matrix=dft_matrix(4))
    with pytest.raises(ValueError, match="dft: summation must be 'pairwise' or 'in-order'"):
        dft(x, summation="kahan")


@pytest.mark.parametrize("n", [1, 2, 8, 12, 64, 100, 1024, 4096])
def test_two_factor_dft_matches_numpy(n):
    x = random_complex(n, seed=n + 6)
    np.testing.assert_allclose(dft_two_factor(x), np.fft.fft(x), rtol=0, atol=1e-12 * n)


def test_a_plan_decides_what_fft_computes():
    x = random_complex(16, seed=4)
    plan = plan_fft(16)
    np.testing.assert_array_equal(fft(x, plan=plan), fft(x))
    only_reorder = dataclasses.replace(plan, stages=())
    np.testing.assert_array_equal(fft(x, plan=only_reorder), x[bit_reversal_permutation(16)])
    np.testing.assert_allclose(ifft(np.fft.fft(x), plan=plan), x, atol=1e-14)
    with pytest.raises(ValueError, match="fft: the plan is for length 16, the signal has n=8"):
        fft(x[:8], plan=plan)


def test_in_order_sum_loses_accuracy_faster_than_the_fft():
    """Against a long-double numpy.fft: the running sum's error grows, the FFT's barely."""
    if np.finfo(np.longdouble).eps > 1e-18:
        pytest.skip("long double is no wider than float64 here")

    def error(values, reference):
        return float(np.linalg.norm(values.astype(reference.dtype) - reference)
                     / np.linalg.norm(reference))

    x = random_complex(2048, seed=11)
    reference = np.fft.fft(x.astype(np.clongdouble))
    eps = np.finfo(float).eps
    assert error(fft(x), reference) <= eps * 11
    assert error(dft(x, summation="in-order"), reference) > 2 * error(fft(x), reference)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("func, name", [(fft, "fft"), (fft_recursive, "fft_recursive"),
                                        (ifft, "ifft")])
@pytest.mark.parametrize("n", [3, 6, 12, 1000])
def test_not_power_of_two_names_op_and_length(func, name, n):
    with pytest.raises(ValueError, match=rf"^{name}: length n={n} is not a power of two"):
        func(np.zeros(n))


def test_error_messages():
    with pytest.raises(ValueError, match="fft: length n=0; the transform needs at least one"):
        fft([])
    with pytest.raises(ValueError, match=r"fft: expected a 1-D signal, got shape \(2, 4\)"):
        fft(np.zeros((2, 4)))
    with pytest.raises(TypeError, match="fft: expected an array of numbers"):
        fft(["a", "b"])
    with pytest.raises(ValueError, match="nearest: 8 or 16"):
        fft(np.zeros(12))
    with pytest.raises(ValueError, match="dft: length n=0"):
        dft([])
    with pytest.raises(ValueError, match="count_fft_operations: length n=5"):
        count_fft_operations(5)


def test_is_power_of_two():
    assert [n for n in range(-2, 20) if is_power_of_two(n)] == [1, 2, 4, 8, 16]


def test_fft_stages_end_in_the_transform():
    x = random_complex(16, seed=3)
    snapshots = fft_stages(x)
    assert len(snapshots) == 5  # bit-reversed input + log2(16) stages
    np.testing.assert_array_equal(snapshots[0], x[bit_reversal_permutation(16)])
    np.testing.assert_array_equal(snapshots[-1], fft(x))
    # After stage 2, block b of 4 positions holds the 4-point DFT of x[b], x[b + 4], ...
    # (b read bit-reversed): the blocks are the recursion's sub-transforms.
    after_two = snapshots[2]
    for start in range(0, 16, 4):
        first = bit_reversal_permutation(16)[start]
        np.testing.assert_allclose(after_two[start:start + 4], dft(x[first::4]), atol=1e-14)
