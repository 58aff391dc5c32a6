"""Tests of whylab.bench's adaptive stop, result checks, back-to-back order and clock deltas.

As in test_bench.py, every "call" advances a fake clock by a known cost, so block sizes,
stopping points and samples are exact; nothing here depends on real wall-clock speed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.bench.test_bench import FakeClock
from whylab.bench import (
    Quartiles,
    ResultsDiffer,
    adaptive_autorange,
    back_to_back,
    check_equivalent,
    clock_deltas,
    compare,
    interleaved_rounds,
    largest_difference,
    meets_threshold,
    relative_iqr,
    results_match,
)

# ---------------------------------------------------------------- noise figure


def test_relative_iqr_is_iqr_over_median_and_matches_numpy():
    values = [1.0, 2.0, 2.0, 3.0, 10.0]
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    assert relative_iqr(values) == pytest.approx((q3 - q1) / median)
    assert Quartiles(1.0, 2.0, 4.0).iqr == 3.0
    assert Quartiles(0.0, 0.0, 1.0).relative_iqr == math.inf


def test_meets_threshold_needs_enough_blocks_and_small_noise():
    steady = [1.0, 1.0, 1.0, 1.0]
    assert meets_threshold(steady, 0.1)
    assert not meets_threshold(steady[:3], 0.1)  # three blocks are too few
    # quartiles 1.0 and 1.25 around a median of 1.0: IQR/median = 0.25, not < 0.25
    assert not meets_threshold([1.0, 1.0, 1.0, 2.0], 0.25)
    assert meets_threshold([1.0, 1.0, 1.0, 2.0], 0.26)


# ---------------------------------------------------------------- adaptive_autorange


def test_adaptive_autorange_stops_once_the_noise_is_small():
    clock = FakeClock()
    # autorange: 1 call (1 ms) >= 1 ms block; then blocks of 1 call costing:
    blocks = [0.001, 0.002, 0.001, 0.003] + [0.001] * 20
    run = adaptive_autorange(clock.workload("f", [0.001] + blocks), threshold=0.1,
                             block_s=0.001, min_run_time=0.0, clock=clock)
    assert run.calls == 1
    assert run.stopped == "converged"
    # the first prefix of the blocks whose IQR/median (by numpy.percentile) is < 0.1
    first = next(n for n in range(4, len(blocks) + 1)
                 if np.subtract(*np.percentile(blocks[:n], [75, 25]))
                 / np.median(blocks[:n]) < 0.1)
    assert first == 9
    assert run.samples == pytest.approx(blocks[:first])
    assert run.noise < 0.1
    assert not meets_threshold(run.samples[:-1], 0.1)


def test_adaptive_autorange_waits_for_min_run_time():
    clock = FakeClock()
    run = adaptive_autorange(clock.workload("f", 0.001), threshold=0.1, block_s=0.001,
                             min_run_time=0.010, clock=clock)
    assert run.stopped == "converged"
    assert len(run.samples) == 10  # four steady blocks would do, but only 10 ms make 10 ms


def test_adaptive_autorange_gives_up_at_max_run_time():
    clock = FakeClock()
    # alternating 1 ms and 3 ms: IQR/median never falls below 0.1
    costs = [0.001] + [0.001, 0.003] * 50
    run = adaptive_autorange(clock.workload("f", costs), threshold=0.1, block_s=0.001,
                             min_run_time=0.0, max_run_time=0.02, clock=clock)
    assert run.stopped == "max_run_time"
    assert sum(run.samples) > 0.02
    assert sum(run.samples[:-1]) <= 0.02
    assert run.noise >= 0.1


def test_adaptive_autorange_uses_autorange_block_size():
    clock = FakeClock()
    run = adaptive_autorange(clock.workload("f", 0.0001), block_s=0.001, min_run_time=0.0,
                             clock=clock)
    assert run.calls == 16  # 1, 2, 4, 8 calls of 0.1 ms are short of 1 ms; 16 are enough
    assert run.samples == pytest.approx([0.0001] * 4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"threshold": 0.0}, "threshold must be > 0"),
     ({"threshold": math.inf}, "threshold must be > 0 and finite"),
     ({"block_s": 0.0}, "block_s must be > 0"),
     ({"min_run_time": -1.0}, "min_run_time must be >= 0"),
     ({"min_run_time": 2.0, "max_run_time": 1.0}, r"max_run_time must be >= min_run_time"),
     ({"min_blocks": 1}, "min_blocks must be >= 2")],
)
def test_adaptive_autorange_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        adaptive_autorange(lambda: None, **kwargs)


# ---------------------------------------------------------------- equivalent results


def test_results_match_uses_numpy_isclose_with_the_reference_scale():
    reference = np.array([1.0, 1000.0])
    assert results_match(reference * (1 + 1e-9), reference, rtol=1e-7, atol=0.0)
    assert not results_match(reference + [0.0, 1e-3], reference, rtol=1e-7, atol=0.0)
    assert results_match(reference + [0.0, 1e-3], reference, rtol=1e-7, atol=1e-3)
    assert not results_match(np.ones(3), np.ones(4), rtol=1.0, atol=1.0)  # shapes differ
    assert results_match(np.array([np.nan]), np.array([np.nan]), rtol=0.0, atol=0.0)
    assert results_match("abc", "abc", rtol=0.0, atol=0.0)
    assert not results_match("abc", "abd", rtol=0.0, atol=0.0)


def test_largest_difference():
    assert largest_difference([1.0, 2.5], [1.0, 2.0]) == 0.5
    assert largest_difference([1.0], [1.0, 2.0]) == math.inf
    assert largest_difference([np.nan, 1.0], [np.nan, 1.0]) == 0.0


def test_check_equivalent_returns_every_result():
    results = check_equivalent({"a": lambda: 2.0, "b": lambda: 2.0 + 1e-12})
    assert results == {"a": 2.0, "b": pytest.approx(2.0)}


def test_check_equivalent_names_the_candidate_that_differs():
    with pytest.raises(ResultsDiffer) as caught:
        check_equivalent({"ref": lambda: np.arange(4.0), "fast": lambda: np.arange(4.0) * 1.5},
                         rtol=1e-9)
    error = caught.value
    assert (error.candidate, error.reference) == ("fast", "ref")
    assert "max |difference| 1.5" in str(error) and "rtol=1e-09" in str(error)
    assert "refusing to time" in str(error)


def test_check_equivalent_reports_shapes_and_custom_rules():
    with pytest.raises(ResultsDiffer, match=r"shape \(2,\) against \(4,\)"):
        check_equivalent({"ref": lambda: np.zeros(4), "half": lambda: np.zeros(2)})
    with pytest.raises(ResultsDiffer, match="equal\\(\\) test said no"):
        check_equivalent({"a": lambda: [1, 2], "b": lambda: [2, 1]},
                         equal=lambda r, ref: r == ref)
    check_equivalent({"a": lambda: [1, 2], "b": lambda: [2, 1]},
                     equal=lambda r, ref: sorted(r) == sorted(ref))
    with pytest.raises(ValueError, match="rtol and atol must be >= 0"):
        check_equivalent({"a": lambda: 1.0}, rtol=-1.0)


def test_compare_with_check_equal_refuses_before_timing():
    clock = FakeClock()
    right = clock.workload("right", 0.002)
    wrong = clock.workload("wrong", 0.001)  # returns None: not the reference's result

    def reference():
        right()
        return 1.0

    with pytest.raises(ResultsDiffer, match="'wrong'"):
        compare({"ref": reference, "wrong": wrong}, rounds=3, budget_s=0.01,
                check_equal=True, clock=clock, sleep=clock.sleep)
    assert clock.log == ["right", "wrong"]  # one call each, then nothing was timed


def test_compare_with_check_equal_counts_the_check_as_a_warm_up_call():
    clock = FakeClock()
    a, b = clock.workload("a", 1.0), clock.workload("b", 1.0)
    result = compare({"a": a, "b": b}, rounds=1, budget_s=1.0, warmup=2, check_equal=True,
                     clock=clock, sleep=clock.sleep)
    # check: a, b; one more warm-up each; autorange one call each; one round of one call each
    assert clock.log == ["a", "b", "a", "a", "b", "b", "a", "b"]
    assert result.calls == {"a": 1, "b": 1}


def test_compare_check_equal_accepts_a_custom_rule():
    clock = FakeClock()
    a, b = clock.workload("a", 1.0), clock.workload("b", 1.0)
    with pytest.raises(ResultsDiffer):
        compare({"a": a, "b": b}, rounds=1, budget_s=1.0, check_equal=lambda r, ref: False,
                clock=clock, sleep=clock.sleep)


# ---------------------------------------------------------------- back to back vs interleaved


def test_back_to_back_times_each_candidate_in_one_block():
    clock = FakeClock()
    turns = []
    candidates = {"a": clock.workload("a", 1.0), "b": clock.workload("b", 2.0)}
    times = back_to_back(candidates, samples=2, calls=1, on_turn=turns.append, clock=clock)
    assert clock.log == ["a", "a", "b", "b"]
    assert turns == ["a", "b"]
    assert times == {"a": pytest.approx([1.0, 1.0]), "b": pytest.approx([2.0, 2.0])}
    with pytest.raises(ValueError, match="samples must be >= 1, got 0"):
        back_to_back(candidates, samples=0, calls=1)


def test_on_turn_sees_the_disturbance_land_on_one_candidate_only_back_to_back():
    """A slow spell switched on for candidate a's turns: interleaving spreads it, blocks don't."""
    clock = FakeClock()
    state = {"slow": False}

    def workload(name):
        def call():
            clock.log.append(name)
            clock.now += 2.0 if state["slow"] else 1.0
        return call

    candidates = {"a": workload("a"), "b": workload("b")}
    # back to back, slow during all of a's block: a looks twice as slow as b
    sequential = back_to_back(candidates, samples=3, calls=1, clock=clock,
                              on_turn=lambda name: state.update(slow=name == "a"))
    assert sequential == {"a": pytest.approx([2.0] * 3), "b": pytest.approx([1.0] * 3)}
    # interleaved, slow spell on for a whole round at a time: both see it equally
    turns = []

    def every_other_round(name):
        turns.append(name)
        state.update(slow=(len(turns) - 1) // 2 % 2 == 0)

    rounds = interleaved_rounds(candidates, rounds=4, calls=1, on_turn=every_other_round,
                                clock=clock, sleep=clock.sleep)
    ratios = [x / y for x, y in zip(rounds["a"], rounds["b"], strict=True)]
    assert ratios == pytest.approx([1.0] * 4)
    assert turns == ["a", "b", "b", "a", "a", "b", "b", "a"]


# ---------------------------------------------------------------- clock deltas


def test_clock_deltas_are_differences_of_consecutive_readings():
    readings = iter([0.0, 1.0, 3.0, 6.0])
    assert clock_deltas(3, clock=lambda: next(readings)) == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="readings must be >= 1, got 0"):
        clock_deltas(0)
