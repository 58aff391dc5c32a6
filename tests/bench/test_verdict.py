"""Timing verdicts: the order-statistic interval of the median and the three outcomes.

No real time is measured: the intervals are checked against exact binomial sums from
SciPy, and the verdicts are driven by fixed samples and by interleaved rounds timed with
a fake clock whose per-call costs are chosen.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from tests.bench.test_bench import FakeClock
from whylab.bench import interleaved_rounds, per_round_ratios
from whylab.bench.verdict import decide, median_interval, min_rounds
from whylab.explorer.experiment import Result, T
from whylab.topics.shared import timing_check

NAME = T("a timing claim", "一个计时断言")


def test_too_few_rounds_never_decide():
    assert min_rounds(0.95) == 6 and min_rounds(0.9) == 5
    five = median_interval([3.0, 3.1, 3.2, 3.3, 3.4])
    assert not five.reached and five.coverage == pytest.approx(1 - 2 / 32)
    # even a range wholly above the bound decides nothing with 5 samples at 95 %
    assert decide(five, at_least=1.0) == "inconclusive"


@given(st.integers(min_value=6, max_value=80))
def test_interval_coverage_is_the_exact_binomial_one(n):
    values = list(np.linspace(1.0, 2.0, n))
    interval = median_interval(values)
    low_rank = values.index(interval.low) + 1  # 1-based rank of the lower end
    assert values[n - low_rank] == interval.high  # symmetric order statistics
    expected = 1 - 2 * stats.binom.cdf(low_rank - 1, n, 0.5)
    assert interval.coverage == pytest.approx(expected)
    assert interval.coverage >= 0.95
    # the next narrower interval would not reach 95 %
    if low_rank + 1 <= (n + 1) // 2:
        assert 1 - 2 * stats.binom.cdf(low_rank, n, 0.5) < 0.95
    assert interval.median == pytest.approx(np.median(values))


@pytest.mark.parametrize(
    "samples, bounds, verdict",
    [
        ([2.1, 2.3, 2.2, 2.5, 2.4, 2.6, 2.2], {"at_least": 2.0}, "passed"),
        ([1.1, 1.3, 1.2, 1.5, 1.4, 1.6, 1.2], {"at_least": 2.0}, "failed"),
        ([1.8, 2.3, 2.2, 1.9, 2.4, 2.1, 1.7], {"at_least": 2.0}, "inconclusive"),
        ([0.8, 0.9, 0.85, 0.95, 0.9, 0.7, 0.8], {"at_most": 1.0}, "passed"),
        ([1.1, 1.2, 1.15, 1.05, 1.3, 1.2, 1.1], {"at_most": 1.0}, "failed"),
        ([0.9, 1.1, 0.95, 1.05, 1.0, 0.98, 1.02], {"at_most": 1.0}, "inconclusive"),
        ([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], {"at_least": 2.0}, "passed"),
        ([2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], {"at_least": 2.0, "strict": True}, "failed"),
        ([1.9, 2.0, 2.1, 2.0, 1.95, 2.05, 2.0], {"at_least": 1.5, "at_most": 2.7}, "passed"),
        ([3.0, 3.1, 2.9, 3.2, 3.0, 3.3, 2.95], {"at_least": 1.5, "at_most": 2.7}, "failed"),
        ([2.5, 2.9, 2.6, 2.8, 2.7, 3.0, 2.4], {"at_least": 1.5, "at_most": 2.7}, "inconclusive"),
    ],
)
def test_three_outcomes_from_fixed_samples(samples, bounds, verdict):
    assert decide(median_interval(samples), **bounds) == verdict
    check = timing_check("claim", NAME, samples, **bounds)
    assert check.state == verdict
    assert check.passed == (verdict == "passed")
    assert check.conclusive == (verdict != "inconclusive")


def _rounds_with_costs(a_costs, b_costs):
    """Per-round ratios B / A of interleaved rounds timed with a fake clock."""
    clock = FakeClock()
    times = interleaved_rounds(
        {"A": clock.workload("A", list(a_costs)), "B": clock.workload("B", list(b_costs))},
        rounds=len(a_costs), calls=1, clock=clock,
    )
    return per_round_ratios(times["B"], times["A"])


def test_three_outcomes_with_a_controlled_clock():
    steady_a = [1e-3] * 9
    # B costs 3x A in every round: the interval is [3, 3], which clears "≥ 2".
    clear = timing_check("b-slower", NAME, _rounds_with_costs(steady_a, [3e-3] * 9), at_least=2)
    assert clear.state == "passed"
    # B costs 1.5x A: wholly below 2.
    below = timing_check("b-slower", NAME, _rounds_with_costs(steady_a, [1.5e-3] * 9), at_least=2)
    assert below.state == "failed"
    # A noisy machine: slow spells land on B in some rounds and on A in others, so the
    # per-round ratios straddle 2 and the claim cannot be decided.
    noisy_b = [3e-3, 1.5e-3, 3e-3, 1.5e-3, 2.2e-3, 1.8e-3, 3e-3, 1.5e-3, 2.1e-3]
    straddles = timing_check("b-slower", NAME, _rounds_with_costs(steady_a, noisy_b), at_least=2)
    assert straddles.state == "inconclusive" and not straddles.passed
    # Shown with its interval, in both languages, never as a pass of the run...
    assert "interval [1.50, 3.00]" in straddles.measured_in("en")
    assert "置信区间 [1.50, 3.00]" in straddles.measured_in("zh")
    result = Result(checks=[clear, straddles])
    assert result.passed and result.inconclusive == [straddles]
    # ...and a failed check still fails the run.
    assert not Result(checks=[clear, straddles, below]).passed


def test_an_inconclusive_check_cannot_pass_or_be_not_applicable():
    from whylab.explorer.experiment import Check

    with pytest.raises(ValueError, match="cannot pass"):
        Check(NAME, True, "1×", "≥ 2×", id="c", conclusive=False)
    with pytest.raises(ValueError, match="either not applicable or inconclusive"):
        Check(NAME, False, "1×", "≥ 2×", id="c", conclusive=False, applicable=False,
              when_applicable=T("a", "a"))


def test_bounds_are_checked():
    interval = median_interval([1.0] * 7)
    with pytest.raises(ValueError, match="neither"):
        decide(interval)
    with pytest.raises(ValueError, match="above"):
        decide(interval, at_least=2.0, at_most=1.0)
    with pytest.raises(ValueError, match="NaN"):
        median_interval([1.0, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        median_interval([1.0], confidence=1.0)
