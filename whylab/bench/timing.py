"""Timing one callable: warm-up, autorange and best-of repeats.

A single call of a small function lasts less than the clock's resolution and less than
the noise of the machine, so we time a *batch* of calls and divide. ``autorange`` finds a
batch size whose run lasts at least a budget, the way ``timeit``'s ``autorange`` does.
On a shared machine other work can only add time, never remove it, so the fastest of a
few batches (``best_of``) is the steadiest estimate of what the code itself costs.

``clock`` is any function returning seconds as a float (``time.perf_counter`` by
default); tests pass a fake one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]

DEFAULT_MAX_CALLS = 1 << 20


def clock_deltas(readings: int, clock: Clock = time.perf_counter) -> list[float]:
    """Differences between ``readings`` + 1 back-to-back readings of ``clock``.

    Nothing runs between two readings, so each difference is what one reading costs
    (rounded to the clock's tick): the floor under any single-call measurement.
    """
    if readings < 1:
        raise ValueError(f"clock_deltas: readings must be >= 1, got {readings}")
    values = [clock() for _ in range(readings + 1)]
    return [later - earlier for earlier, later in zip(values[:-1], values[1:], strict=True)]


def warm_up(func: Callable[[], object], calls: int = 1) -> None:
    """Call ``func`` ``calls`` times untimed: first-touch page faults, caches, lazy imports."""
    if calls < 0:
        raise ValueError(f"warm_up: calls must be >= 0, got {calls}")
    for _ in range(calls):
        func()


def time_calls(func: Callable[[], object], calls: int, clock: Clock = time.perf_counter) -> float:
    """Mean seconds per call over one batch of ``calls`` consecutive calls."""
    if calls < 1:
        raise ValueError(f"time_calls: calls must be >= 1, got {calls}")
    start = clock()
    for _ in range(calls):
        func()
    return (clock() - start) / calls


def autorange(
    func: Callable[[], object],
    budget_s: float,
    *,
    max_calls: int = DEFAULT_MAX_CALLS,
    growth: int = 2,
    clock: Clock = time.perf_counter,
) -> tuple[int, float]:
    """Grow the batch size until one batch of calls lasts at least ``budget_s``.

    Starts at one call and multiplies by ``growth`` after every batch that was too short;
    stops at the first batch that lasts ``budget_s`` or more, or once a batch of
    ``max_calls`` has been timed (a function too fast for the budget). Returns the batch
    size and the seconds per call that its last batch measured, so the caller can use that
    batch as its first sample.
    """
    if budget_s < 0:
        raise ValueError(f"autorange: budget_s must be >= 0, got {budget_s}")
    if max_calls < 1:
        raise ValueError(f"autorange: max_calls must be >= 1, got {max_calls}")
    if growth < 2:
        raise ValueError(f"autorange: growth must be >= 2, got {growth}")
    calls = 1
    while True:
        per_call = time_calls(func, calls, clock)
        if per_call * calls >= budget_s or calls >= max_calls:
            return calls, per_call
        calls = min(calls * growth, max_calls)


def best_of(
    func: Callable[[], object], calls: int, repeats: int, clock: Clock = time.perf_counter
) -> float:
    """Seconds per call: the fastest of ``repeats`` batches of ``calls`` calls each."""
    if repeats < 1:
        raise ValueError(f"best_of: repeats must be >= 1, got {repeats}")
    return min(time_calls(func, calls, clock) for _ in range(repeats))


def fastest_per_call(
    func: Callable[[], object],
    budget_s: float,
    repeats: int = 3,
    *,
    max_calls: int = DEFAULT_MAX_CALLS,
    clock: Clock = time.perf_counter,
) -> float:
    """One warm-up call, ``autorange`` to ``budget_s``, then the fastest of ``repeats`` batches.

    The batch that ``autorange`` settled on counts as the first of the ``repeats``.
    """
    if repeats < 1:
        raise ValueError(f"fastest_per_call: repeats must be >= 1, got {repeats}")
    warm_up(func)
    calls, first = autorange(func, budget_s, max_calls=max_calls, clock=clock)
    if repeats == 1:
        return first
    return min(first, best_of(func, calls, repeats - 1, clock))
