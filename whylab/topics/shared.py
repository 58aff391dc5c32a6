"""Numerical helpers several topics' checks share (one place for each idea).

Topics do not import each other; what more than one of them needs lives here.
"""

from __future__ import annotations

import math

import numpy as np

from whylab.bench import Comparison
from whylab.bench.verdict import DEFAULT_CONFIDENCE, decide, median_interval
from whylab.explorer.experiment import Check, T, Text

AGREEMENT_TOLERANCE = 1e-12  # relative: max |a - b| / max |b|


def relative_error(values, reference) -> float:
    """max |values - reference| / max |reference| (absolute when the reference is all zeros).

    Different shapes, or a non-finite value anywhere in ``values``, count as no
    agreement at all (inf), so a NaN can never pass a tolerance. Complex arrays work.
    """
    values = np.asarray(values)
    reference = np.asarray(reference)
    if values.shape != reference.shape or not np.all(np.isfinite(values)):
        return math.inf
    scale = float(np.max(np.abs(reference), initial=0.0)) or 1.0
    return float(np.max(np.abs(values - reference), initial=0.0)) / scale


def growth_exponent(sizes, seconds) -> float:
    """Slope of a least-squares line through (log n, log time): time ~ n^slope."""
    slope, _ = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope)


def agreement_check(
    check_id: str, name: Text, values, reference, tolerance: float = AGREEMENT_TOLERANCE
) -> Check:
    """Pass when ``values`` equals ``reference`` to a relative error of ``tolerance``."""
    error = relative_error(values, reference)
    return Check(
        id=check_id,
        name=name,
        passed=bool(error <= tolerance),
        measured=T(f"relative max error {error:.1e}", f"最大相对误差 {error:.1e}"),
        expected=f"≤ {tolerance:.0e}",
    )


def error_check(name: Text, error: float, tolerance: float, *, id: str) -> Check:
    """Pass when an already measured relative error is at most ``tolerance``
    (:func:`agreement_check` measures it from the values itself)."""
    return Check(
        id=id,
        name=name,
        passed=bool(error <= tolerance),
        measured=T(f"relative error {error:.1e}", f"相对误差 {error:.1e}"),
        expected=f"≤ {tolerance:.0e}",
    )


def ratio_check(
    check_id: str,
    name: Text,
    ratio: float,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    strict: bool = False,
    number_format: str = ".2f",
) -> Check:
    """Pass when a measured ratio (of errors, of counts) lies on the claimed side of its bound.

    A ratio of times is noisy and is decided by :func:`timing_check` instead.

    Give exactly one bound. The bound is inclusive (shown ``≥ 10×``) unless ``strict``
    (shown ``> 10×``); the measured ratio is shown with ``number_format`` (``1.23×``).
    """
    if (at_least is None) == (at_most is None):
        raise ValueError(
            f"ratio_check needs exactly one of at_least and at_most, got "
            f"at_least={at_least!r}, at_most={at_most!r}"
        )
    if at_least is not None:
        passed = ratio > at_least if strict else ratio >= at_least
    else:
        assert at_most is not None
        passed = ratio < at_most if strict else ratio <= at_most
    bound = _bound_text(at_least, at_most, strict, "×")
    return Check(
        id=check_id,
        name=name,
        passed=bool(passed),
        measured=f"{ratio:{number_format}}×",
        expected=bound,
    )


def _bound_text(at_least: float | None, at_most: float | None, strict: bool, unit: str) -> str:
    shown = []
    if at_least is not None:
        shown.append(f"{'>' if strict else '≥'} {at_least:g}{unit}")
    if at_most is not None:
        shown.append(f"{'<' if strict else '≤'} {at_most:g}{unit}")
    return ", ".join(shown)


def timing_check(
    check_id: str,
    name: Text,
    ratios,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    strict: bool = False,
    number_format: str = ".2f",
    unit: str = "×",
    confidence: float = DEFAULT_CONFIDENCE,
) -> Check:
    """A timing claim decided on the confidence interval of its per-round ratios.

    ``ratios`` are the per-round ratios of interleaved rounds (``comparison.ratios(a, b)``,
    or any one value per independent round: a growth exponent fitted to one round's
    times, say, shown with ``unit=""``). The check passes when the order-statistic
    interval of their median (:func:`whylab.bench.verdict.median_interval`) clears the
    bound given (or lies between both), fails when it lies wholly on the wrong side, and is
    otherwise
    *inconclusive* (``Check.conclusive`` False): shown with the interval, never ✓.
    Too few rounds to reach ``confidence`` (fewer than 6 for 95 %) is inconclusive too.
    """
    interval = median_interval(list(ratios), confidence)
    verdict = decide(interval, at_least=at_least, at_most=at_most, strict=strict)
    f = number_format
    span = f"[{interval.low:{f}}, {interval.high:{f}}]"
    level = f"{math.floor(interval.coverage * 1000) / 10:g}%"
    shown = T(
        f"{interval.median:{f}}{unit} (median of {interval.samples} rounds; "
        f"{level} interval {span})",
        f"{interval.median:{f}}{unit}（{interval.samples} 轮的中位数；{level} 置信区间 {span}）",
    )
    if not interval.reached:
        wanted = f"{confidence:.0%}"
        shown = T(
            shown.en + f"; too few rounds for a {wanted} interval",
            shown.zh + f"；轮数太少，达不到 {wanted} 置信度",
        )
    return Check(
        id=check_id,
        name=name,
        passed=verdict == "passed",
        measured=shown,
        expected=_bound_text(at_least, at_most, strict, unit),
        conclusive=verdict != "inconclusive",
    )


def timing_rows(comparison: Comparison, names: dict, reference: str) -> list[list]:
    """One table row per candidate: label, µs per call and ratio to ``reference``, each as
    median [q1, q3]."""
    rows = []
    for name, label in names.items():
        micros = comparison.quartiles(name)
        shown = f"{micros.median * 1e6:.1f} [{micros.q1 * 1e6:.1f}, {micros.q3 * 1e6:.1f}]"
        rows.append([label, shown, comparison.ratio_quartiles(name, reference).format(".2f")])
    return rows
