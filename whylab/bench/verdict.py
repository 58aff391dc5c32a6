"""Deciding a timing claim from the spread of its own samples: passed, failed or inconclusive.

A claim such as "the DFT is at least 10× slower than the FFT" is decided here from the
per-round ratios of interleaved rounds (:mod:`whylab.bench.rounds`): round ``i`` gives one
ratio ``t_A[i] / t_B[i]``, taken minutes apart from round ``i + 1`` but seconds apart
from its own two timings, so a slow spell that lasts longer than a round cancels in it.

**Which interval, and why.** The interval is the distribution-free *order-statistic*
confidence interval for the median of the per-round ratios (the sign-test interval; e.g.
Hollander, Wolfe & Chicken, *Nonparametric Statistical Methods*, 3rd ed., §3.6): with the
``n`` ratios sorted, ``[r_(k), r_(n+1-k)]`` covers the true median with probability
``1 - 2·P(Binomial(n, 1/2) ≤ k - 1)``, whatever the distribution of the ratios, if the
rounds are independent draws of one distribution. We take the narrowest such interval
whose coverage is at least the confidence asked for. We chose it over the bootstrap because

* timing noise on a shared machine is skewed and heavy-tailed (interruptions only add
  time); the order-statistic interval assumes nothing about that shape, while the
  percentile bootstrap is known to under-cover for the 7 to 30 samples an experiment can
  afford;
* its coverage is exact and computable, so it can be shown beside the interval, and with
  too few rounds (fewer than 6 for 95 %) no interval reaches the coverage -- the verdict
  is then honestly "inconclusive" instead of a bootstrap's confident-looking number;
* it uses no random numbers, so the same samples always give the same verdict, which
  the tests rely on.

**The verdict.** For a claim "ratio ≥ bound" (``at_least``), the check passes when the
whole interval lies at or above the bound, fails when the whole interval lies below it,
and is *inconclusive* otherwise (the interval straddles the bound: this machine, now,
cannot tell). ``at_most`` is the mirror image; ``strict`` turns ``≥``/``≤`` into ``>``/``<``.
With both bounds (a claim "between a and b") it passes when the interval lies inside
both, fails when it lies wholly beyond either, and is inconclusive otherwise.
An inconclusive verdict is no evidence either way and can be rerun.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["passed", "failed", "inconclusive"]

DEFAULT_CONFIDENCE = 0.95


def _binomial_cdf_half(k: int, n: int) -> float:
    """P(Binomial(n, 1/2) ≤ k), exactly (as a float)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / 2**n


def min_rounds(confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The fewest samples whose full range ``[min, max]`` covers the median with ``confidence``."""
    _check_confidence(confidence)
    n = 1
    while 1 - 2 * _binomial_cdf_half(0, n) < confidence:
        n += 1
    return n


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


@dataclass(frozen=True)
class MedianInterval:
    """The median of a sample and an order-statistic confidence interval for it.

    ``coverage`` is the interval's exact coverage probability (at least ``confidence``
    when ``reached``; with too few samples the interval is the whole range and
    ``coverage`` is below what was asked, so ``reached`` is False).
    """

    median: float
    low: float
    high: float
    coverage: float
    confidence: float
    samples: int

    @property
    def reached(self) -> bool:
        return self.coverage >= self.confidence


def median_interval(
    values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> MedianInterval:
    """The median of ``values`` with the narrowest order-statistic interval of ``confidence``."""
    _check_confidence(confidence)
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    if n == 0:
        raise ValueError("median_interval: need at least one value, got none")
    if any(math.isnan(v) for v in ordered):
        raise ValueError("median_interval: a value is NaN")
    middle = n // 2
    median = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    # Largest k (1-based) with coverage 1 - 2 P(B <= k - 1) >= confidence; k = 1 if none.
    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * _binomial_cdf_half(k, n) >= confidence:
        k += 1
    coverage = 1 - 2 * _binomial_cdf_half(k - 1, n)
    return MedianInterval(median, ordered[k - 1], ordered[n - k], coverage, confidence, n)


def decide(
    interval: MedianInterval,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    strict: bool = False,
) -> Verdict:
    """Passed, failed or inconclusive: where ``interval`` lies against the bounds given.

    An interval whose coverage falls short of its confidence (too few samples to reach
    it) decides nothing, whichever side its range lies on: inconclusive.
    """
    if at_least is None and at_most is None:
        raise ValueError("decide needs at_least, at_most or both, got neither")
    if at_least is not None and at_most is not None and at_least > at_most:
        raise ValueError(f"decide: at_least={at_least!r} is above at_most={at_most!r}")
    if not interval.reached:
        return "inconclusive"
    holds, broken = True, False
    if at_least is not None:
        holds &= interval.low > at_least if strict else interval.low >= at_least
        broken |= interval.high <= at_least if strict else interval.high < at_least
    if at_most is not None:
        holds &= interval.high < at_most if strict else interval.high <= at_most
        broken |= interval.low >= at_most if strict else interval.low > at_most
    if holds:
        return "passed"
    return "failed" if broken else "inconclusive"
