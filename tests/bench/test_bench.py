"""Tests of whylab.bench on synthetic callables driven by a fake clock.

Nothing here measures real time: every "call" advances a fake clock by a known cost,
so loop counts, samples and ratios are exact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from whylab.bench import (
    Quartiles,
    autorange,
    best_of,
    compare,
    fastest_per_call,
    format_table,
    format_time,
    interleaved_rounds,
    per_round_ratios,
    quartiles,
    ratio_quartiles,
    round_order,
    time_calls,
    warm_up,
)


class FakeClock:
    """A clock that only moves when a fake workload (or a fake sleep) advances it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.log: list[str] = []

    def __call__(self) -> float:
        return self.now

    def workload(self, name: str, cost_s: float | list[float]):
        """A callable costing ``cost_s`` per call (or the next cost from a list each call)."""
        costs = list(cost_s) if isinstance(cost_s, list) else None

        def call():
            self.log.append(name)
            self.now += costs.pop(0) if costs is not None else cost_s

        return call

    def sleep(self, seconds: float) -> None:
        self.log.append(f"sleep {seconds}")
        self.now += seconds


# ---------------------------------------------------------------- statistics


def test_quartiles_match_numpy_percentile_on_a_small_sample():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    expected = np.percentile(values, [25, 50, 75])
    assert quartiles(values) == pytest.approx(tuple(expected))


@given(st.lists(st.floats(0.001, 1000.0), min_size=1, max_size=30))
def test_quartiles_agree_with_numpy_and_are_ordered(values):
    q = quartiles(values)
    assert q == pytest.approx(tuple(np.percentile(values, [25, 50, 75])), rel=1e-12)
    assert min(values) <= q.q1 <= q.median <= q.q3 <= max(values)


def test_single_value_is_its_own_quartiles():
    assert quartiles([7.0]) == Quartiles(7.0, 7.0, 7.0)


def test_quartiles_of_nothing_is_an_error():
    with pytest.raises(ValueError, match="at least one"):
        quartiles([])


def test_quartiles_format_puts_median_first():
    assert Quartiles(1.0, 2.5, 4.0).format(".1f") == "2.5 [1.0, 4.0]"


def test_ratios_are_taken_round_by_round():
    assert per_round_ratios([2.0, 9.0, 4.0], [1.0, 3.0, 8.0]) == [2.0, 3.0, 0.5]
    # the per-round median differs from the ratio of medians (4/3): pairing matters
    assert ratio_quartiles([2.0, 9.0, 4.0], [1.0, 3.0, 8.0]).median == 2.0


def test_ratios_reject_mismatched_rounds_and_zero_reference():
    with pytest.raises(ValueError, match="2 times but 3 reference"):
        per_round_ratios([1.0, 2.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="> 0"):
        per_round_ratios([1.0], [0.0])


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5e-9, "5.0 ns"), (2.5e-6, "2.50 us"), (0.0125, "12.50 ms"), (3.0, "3.000 s")],
)
def test_format_time_picks_a_unit(seconds, text):
    assert format_time(seconds) == text


def test_format_table_aligns_columns():
    table = format_table(["case", "time"], [["add", "1.5"], ["matmul", "12.25"]])
    assert table.splitlines() == [
        "case     time",
        "-------------",
        "add       1.5",
        "matmul  12.25",
    ]


def test_format_table_rejects_a_short_row():
    with pytest.raises(ValueError, match="row 1 has 1 cells, header has 2"):
        format_table(["a", "b"], [["only one"]])


# ---------------------------------------------------------------- timing one callable


def test_time_calls_is_mean_per_call():
    clock = FakeClock()
    assert time_calls(clock.workload("f", 0.25), 4, clock) == pytest.approx(0.25)
    assert clock.log == ["f"] * 4


def test_warm_up_calls_untimed_and_rejects_negative():
    clock = FakeClock()
    warm_up(clock.workload("f", 1.0), 3)
    assert clock.log == ["f"] * 3
    with pytest.raises(ValueError, match="calls must be >= 0, got -1"):
        warm_up(clock.workload("f", 1.0), -1)


def test_autorange_doubles_until_a_batch_reaches_the_budget():
    clock = FakeClock()
    # 1 ms per call, budget 10 ms: batches of 1, 2, 4, 8 are short; 16 calls = 16 ms is enough
    calls, per_call = autorange(clock.workload("f", 0.001), 0.010, clock=clock)
    assert calls == 16
    assert per_call == pytest.approx(0.001)
    assert len(clock.log) == 1 + 2 + 4 + 8 + 16


def test_autorange_growth_factor_and_exact_budget():
    clock = FakeClock()
    # growth 4: batches 1, 4, 16; 16 calls x 1 s = 16 s >= 16 s budget stops there
    calls, _ = autorange(clock.workload("f", 1.0), 16.0, growth=4, clock=clock)
    assert calls == 16
    assert len(clock.log) == 1 + 4 + 16


def test_autorange_stops_at_max_calls_for_a_too_fast_function():
    clock = FakeClock()
    calls, per_call = autorange(clock.workload("f", 1e-9), 1.0, max_calls=100, clock=clock)
    assert calls == 100  # 1, 2, 4, ..., 64, then capped at 100 and timed once
    assert len(clock.log) == 127 + 100
    assert per_call == pytest.approx(1e-9)


def test_autorange_single_slow_call_is_enough():
    clock = FakeClock()
    assert autorange(clock.workload("f", 2.0), 1.0, clock=clock) == (1, pytest.approx(2.0))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"budget_s": -1.0}, "budget_s must be >= 0"), ({"budget_s": 1.0, "max_calls": 0},
     "max_calls must be >= 1"), ({"budget_s": 1.0, "growth": 1}, "growth must be >= 2")],
)
def test_autorange_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        autorange(lambda: None, **kwargs)


def test_best_of_keeps_the_fastest_batch():
    clock = FakeClock()
    # three batches of two calls: 3+3, 1+1 and 5+1 seconds -> best is 1 s per call
    func = clock.workload("f", [3.0, 3.0, 1.0, 1.0, 5.0, 1.0])
    assert best_of(func, calls=2, repeats=3, clock=clock) == pytest.approx(1.0)


def test_fastest_per_call_counts_the_autorange_batch_as_a_repeat():
    clock = FakeClock()
    # warm-up call, then autorange: batch of 1 call (2 s >= budget), then 2 more batches
    func = clock.workload("f", [9.0, 2.0, 3.0, 0.5])
    assert fastest_per_call(func, budget_s=1.0, repeats=3, clock=clock) == pytest.approx(0.5)
    assert len(clock.log) == 4


# ---------------------------------------------------------------- interleaved rounds


def test_round_order_rotates_and_can_stay_fixed():
    names = ["whylab", "numpy", "torch"]
    assert [round_order(names, i) for i in range(4)] == [
        ["whylab", "numpy", "torch"],
        ["numpy", "torch", "whylab"],
        ["torch", "whylab", "numpy"],
        ["whylab", "numpy", "torch"],
    ]
    assert round_order(names, 2, rotate=False) == names


def test_interleaved_rounds_order_pauses_and_samples():
    clock = FakeClock()
    candidates = {"a": clock.workload("a", 1.0), "b": clock.workload("b", 3.0)}
    times = interleaved_rounds(
        candidates, rounds=3, calls={"a": 2, "b": 1}, pause_s=0.1, clock=clock,
        sleep=clock.sleep,
    )
    assert clock.log == [
        "sleep 0.1", "a", "a", "sleep 0.1", "b",
        "sleep 0.1", "b", "sleep 0.1", "a", "a",
        "sleep 0.1", "a", "a", "sleep 0.1", "b",
    ]
    assert times == {"a": pytest.approx([1.0] * 3), "b": pytest.approx([3.0] * 3)}  # no pauses


def test_interleaved_rounds_without_rotation_or_pause():
    clock = FakeClock()
    candidates = {"a": clock.workload("a", 1.0), "b": clock.workload("b", 1.0)}
    interleaved_rounds(candidates, rounds=2, calls=1, rotate=False, clock=clock,
                       sleep=clock.sleep)
    assert clock.log == ["a", "b", "a", "b"]


def test_interleaved_rounds_rejects_zero_rounds():
    with pytest.raises(ValueError, match="rounds must be >= 1, got 0"):
        interleaved_rounds({"a": lambda: None}, rounds=0, calls=1)


def test_compare_autoranges_each_candidate_and_pairs_ratios_by_round():
    clock = FakeClock()
    # "slow" costs 4x "fast" except in its second round, where it costs 8x
    fast = clock.workload("fast", 0.001)
    slow_costs = [0.004] * (1 + 1 + 2) + [0.004] * 2 + [0.008] * 2 + [0.004] * 2
    slow = clock.workload("slow", slow_costs)
    result = compare({"slow": slow, "fast": fast}, rounds=3, budget_s=0.008, clock=clock,
                     sleep=clock.sleep)
    assert result.calls == {"slow": 2, "fast": 8}
    assert result.ratios("slow", "fast") == pytest.approx([4.0, 8.0, 4.0])
    assert result.ratio_quartiles("slow", "fast").median == pytest.approx(4.0)
    assert result.median("fast") == pytest.approx(0.001)
    assert math.isclose(result.quartiles("slow").q3, 0.006)
