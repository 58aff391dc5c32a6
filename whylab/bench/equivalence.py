"""Refusing to compare the speed of functions that compute different things.

A benchmark that times a fast function and a slow one is only a comparison if both
give the same answer on the same input: a "speed-up" that skips half the work, reads
a smaller input or rounds to float32 is not a speed-up. ``check_equivalent`` calls
every candidate once, compares each result with the first candidate's (the
reference) and raises :class:`ResultsDiffer` -- naming the candidate, the largest
difference and the tolerance -- when one does not match. ``compare(...,
check_equal=True)`` runs it before timing anything.

Numbers and arrays match when they have the same shape and every element satisfies
``|result - reference| <= atol + rtol * |reference|`` (``numpy.isclose``, with NaN
equal to NaN); anything else must compare equal with ``==``. A callable
``equal(result, reference) -> bool`` replaces that rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

Equal = Callable[[object, object], bool]


class ResultsDiffer(ValueError):
    """Two candidates of a comparison returned different results; nothing was timed."""

    def __init__(self, candidate: str, reference: str, detail: str):
        super().__init__(
            f"compare: candidate {candidate!r} does not return the same result as "
            f"{reference!r} ({detail}); refusing to time functions whose results differ"
        )
        self.candidate = candidate
        self.reference = reference
        self.detail = detail


def largest_difference(result: object, reference: object) -> float:
    """max |result - reference| over the elements (inf when the shapes differ)."""
    values, expected = np.asarray(result), np.asarray(reference)
    if values.shape != expected.shape:
        return math.inf
    if values.size == 0:
        return 0.0
    both_nan = np.isnan(values) & np.isnan(expected)
    difference = np.where(both_nan, 0.0, np.abs(values - expected))
    return float(np.max(difference))


def _numeric(value: object) -> bool:
    kind = np.asarray(value).dtype.kind
    return kind in "biufc"


def results_match(result: object, reference: object, rtol: float, atol: float) -> bool:
    """Whether ``result`` equals ``reference`` within ``atol + rtol * |reference|``."""
    if _numeric(result) and _numeric(reference):
        values, expected = np.asarray(result), np.asarray(reference)
        return values.shape == expected.shape and bool(
            np.all(np.isclose(values, expected, rtol=rtol, atol=atol, equal_nan=True))
        )
    return bool(result == reference)


def check_equivalent(
    candidates: Mapping[str, Callable[[], object]],
    *,
    rtol: float = 1e-7,
    atol: float = 0.0,
    equal: Equal | None = None,
) -> dict[str, object]:
    """Call each candidate once; raise :class:`ResultsDiffer` unless all match the first.

    Returns each candidate's result. ``equal`` (if given) decides a match instead of the
    ``rtol``/``atol`` rule.
    """
    if rtol < 0 or atol < 0:
        raise ValueError(f"check_equivalent: rtol and atol must be >= 0, got {rtol}, {atol}")
    results = {name: func() for name, func in candidates.items()}
    names = list(results)
    if not names:
        return results
    reference_name = names[0]
    reference = results[reference_name]
    for name in names[1:]:
        result = results[name]
        if equal is not None:
            if not equal(result, reference):
                raise ResultsDiffer(name, reference_name, "the equal() test said no")
        elif not results_match(result, reference, rtol, atol):
            if _numeric(result) and _numeric(reference):
                shown = np.shape(result), np.shape(reference)
                if shown[0] != shown[1]:
                    detail = f"shape {shown[0]} against {shown[1]}"
                else:
                    detail = (f"max |difference| {largest_difference(result, reference):.3g} "
                              f"exceeds atol={atol:g} + rtol={rtol:g}·|reference|")
            else:
                detail = f"{result!r:.60} != {reference!r:.60}"
            raise ResultsDiffer(name, reference_name, detail)
    return results
