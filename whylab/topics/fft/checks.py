"""The comparisons behind the fft topic's checks, as small functions tests can feed wrong inputs.

Each takes measured values and the claim's independent expectation (a formula,
numpy.fft, a high-precision reference) and returns a :class:`Check`; none of
them computes the value it judges.
"""

from __future__ import annotations

import math

from whylab.explorer.experiment import Check, T, Text
from whylab.topics.shared import growth_exponent


def count_check(check_id: str, name: Text, counted: list[int], formula: list[int],
                sizes: list[int]) -> Check:
    """Pass when every counted operation total equals the formula's."""
    mismatches = [n for n, c, f in zip(sizes, counted, formula, strict=True) if c != f]
    shown = ", ".join(f"n={n}: {c}" for n, c in list(zip(sizes, counted, strict=True))[-2:])
    return Check(
        id=check_id,
        name=name,
        passed=not mismatches,
        measured=shown if not mismatches else T(f"differs at n = {mismatches}",
                                                 f"在 n = {mismatches} 处不同"),
        expected=(T("formula at every n", "每个 n 都与公式相符") if len(sizes) > 1
                  else f"{formula[0]}"),
    )




def exponent_check(check_id: str, name: Text, exponent: float, *,
                   at_least: float | None = None, at_most: float | None = None) -> Check:
    """Pass when a fitted growth exponent lies inside the claimed bounds."""
    passed = (at_least is None or exponent >= at_least) and (at_most is None or exponent <= at_most)
    bounds = [f"≥ {at_least}" if at_least is not None else "",
              f"≤ {at_most}" if at_most is not None else ""]
    return Check(id=check_id, name=name, passed=bool(passed),
                 measured=T(f"exponent {exponent:.2f}", f"指数 {exponent:.2f}"),
                 expected=", ".join(b for b in bounds if b))


def growth_over_range(sizes: list[int], seconds: list[float], model) -> float:
    """How much ``time / model(n)`` grows from the smallest to the largest size.

    Fitted by least squares through every size (log-log), so one noisy timing
    moves it less than a ratio of two endpoints would. 1 means time follows
    the model exactly; an algorithm with a steeper cost gives more than 1.
    """
    normalised = [t / model(n) for n, t in zip(sizes, seconds, strict=True)]
    slope = growth_exponent(sizes, normalised)
    return float(math.exp(slope * math.log(sizes[-1] / sizes[0])))


def n_log_n(n: int) -> float:
    return n * math.log2(n)


def n_to_the_1_5_over_n_log_n(smallest: int, largest: int) -> float:
    """How much n^1.5 / (n log2 n) grows from ``smallest`` to ``largest``."""
    return math.sqrt(largest / smallest) * math.log2(smallest) / math.log2(largest)
