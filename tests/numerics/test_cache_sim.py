"""The cache simulator: a hand-checked trace, an independent reference, CS:APP's table."""

from __future__ import annotations

import pytest

from whylab.numerics.loops import LOOP_ORDERS, access_trace, simulate_matmul
from whylab.numerics.loops.reference import loop_trace, reference_misses

# Bryant & O'Hallaron, CS:APP 3rd ed. §6.6.2: misses per inner-loop iteration for
# n x n doubles with 32-byte lines when a matrix row does not fit in the cache.
CSAPP = {
    "ijk": {"A": 0.25, "B": 1.0, "C": 0.0}, "jik": {"A": 0.25, "B": 1.0, "C": 0.0},
    "jki": {"A": 1.0, "B": 0.0, "C": 1.0}, "kji": {"A": 1.0, "B": 0.0, "C": 1.0},
    "kij": {"A": 0.0, "B": 0.25, "C": 0.25}, "ikj": {"A": 0.0, "B": 0.25, "C": 0.25},
}


def test_trace_of_ijk_for_n_2_by_hand():
    expected = [
        ("C", 0, 0), ("A", 0, 0), ("B", 0, 0), ("A", 0, 1), ("B", 1, 0), ("C", 0, 0),
        ("C", 0, 1), ("A", 0, 0), ("B", 0, 1), ("A", 0, 1), ("B", 1, 1), ("C", 0, 1),
        ("C", 1, 0),
    ]
    assert access_trace(2, "ijk", 13) == expected


def test_trace_of_kij_keeps_a_in_a_register():
    # kij: r = A[i, k]; for j: C[i, j] += r * B[k, j]  (C read and written)
    assert access_trace(2, "kij", 7) == [
        ("A", 0, 0), ("B", 0, 0), ("C", 0, 0), ("C", 0, 0), ("B", 0, 1), ("C", 0, 1),
        ("C", 0, 1)]


@pytest.mark.parametrize("order", LOOP_ORDERS)
def test_trace_matches_the_reference_loops(order):
    assert access_trace(5, order, 10_000) == list(loop_trace(5, order))


def test_misses_for_a_one_line_cache_by_hand():
    # n = 2, 16-byte lines: every matrix row is one line. A one-line cache misses
    # whenever the line changes. ijk touches, for i = 0:
    #   C0 A0 B0 A0 B1 C0 | C0 A0 B0 A0 B1 C0   -> 11 misses (the C0 after C0 hits)
    # and the same with A1, C1 for i = 1: A 8, B 8, C 6 misses in all.
    stats = simulate_matmul(2, "ijk", 16, 16, 1)
    assert stats.misses == {"A": 8, "B": 8, "C": 6}
    # a cache that holds everything misses once per line: compulsory misses only
    assert simulate_matmul(2, "ijk", 16, 1024, 64).misses == {"A": 2, "B": 2, "C": 2}


@pytest.mark.parametrize("order", LOOP_ORDERS)
@pytest.mark.parametrize(("n", "line", "cache", "ways"),
                         [(1, 8, 8, 1), (3, 16, 64, 2), (8, 32, 256, 2), (12, 64, 1024, 4),
                          (10, 8, 64, 8), (9, 32, 96, 3)])
def test_simulator_equals_plain_python_lru(order, n, line, cache, ways):
    assert simulate_matmul(n, order, line, cache, ways).misses == reference_misses(
        n, order, line, cache, ways)


@pytest.mark.parametrize("order", LOOP_ORDERS)
def test_csapp_table_reproduced_when_a_row_does_not_fit(order):
    n = 100  # a row is 800 bytes; the cache holds 512
    stats = simulate_matmul(n, order, 32, 512, 4)
    for array, book in CSAPP[order].items():
        # the book counts inner-loop accesses only; the register load (and the
        # store of C's sum) happen once per middle iteration: at most 2/n more
        assert book <= stats.per_iteration[array] <= book + 2 / n, array


@pytest.mark.parametrize("order", LOOP_ORDERS)
def test_every_order_misses_one_per_line_once_the_inner_loops_fit(order):
    n = 100  # the two inner loops touch at most 2n + n/4 lines; the cache holds 512
    stats = simulate_matmul(n, order, 32, 16384, 8)
    assert abs(stats.total_per_iteration - 0.25) <= 2 / n


def test_blocking_reduces_misses_without_changing_the_accesses_in_the_loop():
    plain = simulate_matmul(100, "ikj", 32, 4096, 4)
    blocked = simulate_matmul(100, "ikj", 32, 4096, 4, block=20)
    assert blocked.total_misses < plain.total_misses / 2
    assert blocked.iterations == plain.iterations
    assert simulate_matmul(8, "ikj", 32, 256, 2, block=8).misses == simulate_matmul(
        8, "ikj", 32, 256, 2).misses  # one block is the plain loop


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"order": "ikk"}, "order must be one of"),
        ({"n": 0}, "n must be >= 1"),
        ({"line_bytes": 12}, "line_bytes must be a multiple of 8"),
        ({"cache_bytes": 1000}, "cache_bytes must be a multiple of ways x line_bytes = 128"),
        ({"ways": 0}, "ways must be >= 1"),
        ({"block": 3}, "block must divide n = 8"),
        ({"block": 16}, "block must be <= 8"),
        ({"block": 0}, "block must be >= 1"),
    ],
)
def test_bad_geometry_names_the_argument(kwargs, message):
    args = {"n": 8, "order": "ijk", "line_bytes": 32, "cache_bytes": 512, "ways": 4} | kwargs
    with pytest.raises(ValueError, match=message):
        simulate_matmul(**args)
